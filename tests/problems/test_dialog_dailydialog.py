"""dialog_dailydialog16k against a local server holding an `ijcnlp_dailydialog.zip` laid out
as the real one (`ijcnlp_dailydialog/dialogues_text.txt`, a dialog a line, each utterance
ended by `__eou__`, beside the act/emotion files and the split zips)."""
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import dialog_dailydialog

DIALOGS = ("Hi , Tom ! __eou__ Hello , Ann . __eou__ Hi again ! __eou__\n"
           "How's it going ? __eou__ Fine , thanks . __eou__\n"
           "Bye . __eou__ See you ! __eou__\n"
           "Alone . __eou__\n")
MEMBERS = {"ijcnlp_dailydialog/dialogues_text.txt": DIALOGS,
           "ijcnlp_dailydialog/dialogues_act.txt": "1 2 1\n",
           "ijcnlp_dailydialog/train.zip": b"PK\x05\x06" + b"\x00" * 18}
URL = dialog_dailydialog.DialogDailydialog16k.URL


@pytest.fixture
def problem(tmp_path_factory, monkeypatch):
    root = tmp_path_factory.mktemp("dailydialog_server")
    corpus_testing.write_zip(corpus_testing.served_path(root, URL), MEMBERS)
    cls = dialog_dailydialog.DialogDailydialog16k
    # One dialog of each hundred to train, one to dev, the rest to test.
    monkeypatch.setattr(cls, "dataset_split", {"train": 1, "val": 1, "test": 98})
    with corpus_testing.serve_tree(root) as server:
        monkeypatch.setattr(cls, "URL", corpus_testing.local_url(server.url, URL))
        p = registry.problem("dialog_dailydialog16k")
        p.server = server
        yield p


def _decoded(problem, data_dir, split, shards=1):
    encoder = text_encoder.TokenTextEncoder(os.path.join(data_dir, "vocab.chatbot.16384"),
                                            replace_oov="<unk>")
    paths = {"train": problem.training_filepaths, "dev": problem.dev_filepaths,
             "test": problem.test_filepaths}[split](data_dir, shards, shuffled=True)
    return sorted((encoder.decode(ex["inputs"]), encoder.decode(ex["targets"]))
                  for ex in corpus_testing.read_examples(paths))


def test_t2t_names():
    p = registry.problem("dialog_dailydialog16k")
    assert type(p) is dialog_dailydialog.DialogDailydialog16k
    assert URL == "http://yanran.li/files/ijcnlp_dailydialog.zip"
    assert (p.ZIPPED_DATA, p.RAW_DATA) == ("ijcnlp_dailydialog.zip", "ijcnlp_dailydialog")
    assert (p.vocab_filename, p.targeted_vocab_size) == ("vocab.chatbot.16384", 2**14)


def test_generate_data_downloads_once_and_writes_the_pairs(problem, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem.generate_data(data_dir, tmp_dir)
    assert problem.server.requests == ["/files/ijcnlp_dailydialog.zip"]
    assert os.path.isfile(os.path.join(tmp_dir, "ijcnlp_dailydialog.zip"))
    assert sorted(n for n in os.listdir(data_dir) if not n.startswith(".")) == [
        "devSource.txt", "devTarget.txt",
        "dialog_dailydialog16k-dev-00000-of-00001",
        "dialog_dailydialog16k-test-00000-of-00001",
        "dialog_dailydialog16k-train-00000-of-00001",
        "testSource.txt", "testTarget.txt", "trainSource.txt", "trainTarget.txt",
        "vocab.chatbot.16384"]

    def read(name):
        with open(os.path.join(data_dir, name)) as f:
            return f.read()

    # T2T's cleaning: lower case, commas dropped, "?!." spaced, "'s" split off.
    assert read("trainSource.txt") == "hi  tom  !  \n hello  ann  .  \n"
    assert read("trainTarget.txt") == " hello  ann  .  \n hi again  !  \n"
    assert (read("devSource.txt"), read("devTarget.txt")) == (
        "how 's it going  ?  \n", " fine  thanks  .  \n")
    assert (read("testSource.txt"), read("testTarget.txt")) == (
        "bye  .  \n", " see you  !  \n")  # "alone" (one utterance) has no pair
    # The training dialog's words only, most common first (ties in order of appearance).
    assert read("vocab.chatbot.16384") == "<pad>\n<EOS>\nhi\n!\ntom\nhello\nann\n.\nagain\n<unk>"

    assert _decoded(problem, data_dir, "train") == [
        ("hello ann . <EOS>", "hi again ! <EOS>"), ("hi tom ! <EOS>", "hello ann . <EOS>")]
    assert _decoded(problem, data_dir, "dev") == [
        ("<unk> <unk> <unk> <unk> <unk> <EOS>", "<unk> <unk> . <EOS>")]
    assert _decoded(problem, data_dir, "test") == [("<unk> . <EOS>", "<unk> <unk> ! <EOS>")]

    # Everything is in data_dir now: a second run neither downloads nor re-extracts.
    os.remove(os.path.join(tmp_dir, "ijcnlp_dailydialog.zip"))
    problem.generate_data(data_dir, tmp_dir)
    assert len(problem.server.requests) == 1
