"""dialog_personachat16k against a local server holding a `convai2_fix_723.tgz` laid out as
parl.ai's (the ConvAI2 text files at its top; a turn a line, `<n> <utterance>\\t<reply>`,
`n` from 1 in each dialog, `__SILENCE__` where the first speaker says nothing)."""
import os

import pytest

import corpus_testing

from t2t.core import errors, registry
from t2t.problems import dialog_personachat

TRAIN = ("1 hi , how are you ?\ti am fine .\n"
         "2 what do you do ?\ti teach .\n"
         "1 __SILENCE__\thello !\n"          # a dialog opened by silence is left out
         "2 hey .\tbye .\n"
         "1 Good morning!\tMorning.\n"
         "2 Nice day?\tYes!\n"
         "3 __SILENCE__\tok\n"               # and the rest of a dialog from a silence on
         "4 still here\tyes\n")
VALID = "1 Valid one.\tValid two.\n"
MEMBERS = {"train_none_original_no_cands.txt": TRAIN,
           "valid_none_original_no_cands.txt": VALID,
           "train_self_original.txt": "1 your persona: i like cats.\n"}
URL = dialog_personachat.DialogPersonachat16k.URL


@pytest.fixture
def problem(tmp_path_factory, monkeypatch):
    root = tmp_path_factory.mktemp("convai2_server")
    corpus_testing.write_tgz(corpus_testing.served_path(root, URL), MEMBERS)
    cls = dialog_personachat.DialogPersonachat16k
    monkeypatch.setattr(cls, "dataset_split", {"train": 1, "val": 1, "test": 98})
    with corpus_testing.serve_tree(root) as server:
        monkeypatch.setattr(cls, "URL", corpus_testing.local_url(server.url, URL))
        p = registry.problem("dialog_personachat16k")
        p.server = server
        yield p


def _read(path):
    with open(path) as handle:
        return handle.read()


def test_t2t_names():
    p = registry.problem("dialog_personachat16k")
    assert type(p) is dialog_personachat.DialogPersonachat16k
    assert URL == "http://parl.ai/downloads/convai2/convai2_fix_723.tgz"
    assert (p.ZIPPED_DATA, p.RAW_DATA) == ("convai2.tar.gz", "ConvAI2")
    assert (p.vocab_filename, p.targeted_vocab_size) == ("vocab.chatbot.16384", 2**14)


def test_generate_data_pairs_vocab_and_records(problem, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem.generate_data(data_dir, tmp_dir)
    assert problem.server.requests == ["/downloads/convai2/convai2_fix_723.tgz"]
    # Saved as T2T's convai2.tar.gz, extracted into ConvAI2/.
    assert os.path.isfile(os.path.join(tmp_dir, "convai2.tar.gz"))
    assert os.path.isfile(os.path.join(tmp_dir, "ConvAI2", "valid_none_original_no_cands.txt"))
    assert sorted(n for n in os.listdir(data_dir) if not n.startswith(".")) == [
        "devSource.txt", "devTarget.txt", "dialog_personachat16k-dev-00000-of-00001",
        "dialog_personachat16k-test-00000-of-00001",
        "dialog_personachat16k-train-00000-of-00001", "testSource.txt", "testTarget.txt",
        "trainSource.txt", "trainTarget.txt", "vocab.chatbot.16384"]
    files = {name: _read(os.path.join(data_dir, name)) for name in os.listdir(data_dir)
             if name.endswith(".txt")}
    assert files == {
        "trainSource.txt": "hi  how are you  ? \ni am fine  . \nwhat do you do  ? \n",
        "trainTarget.txt": "i am fine  . \nwhat do you do  ? \ni teach  . \n",
        "devSource.txt": "good morning ! \nmorning . \nnice day ? \n",
        "devTarget.txt": "morning . \nnice day ? \nyes ! \n",
        # The last dialog is kept (T2T's was lost).
        "testSource.txt": "valid one . \n", "testTarget.txt": "valid two . \n"}
    assert _read(os.path.join(data_dir, "vocab.chatbot.16384")) == (
        "<pad>\n<EOS>\nyou\n?\ni\n.\ndo\nhi\nhow\nare\nam\nfine\nwhat\nteach\n<unk>")
    train = corpus_testing.read_examples(problem.training_filepaths(data_dir, 1, True))
    assert sorted((ex["inputs"], ex["targets"]) for ex in train) == [
        ([4, 10, 11, 5, 1], [12, 6, 2, 6, 3, 1]), ([7, 8, 9, 2, 3, 1], [4, 10, 11, 5, 1]),
        ([12, 6, 2, 6, 3, 1], [4, 13, 5, 1])]
    assert corpus_testing.read_examples(problem.test_filepaths(data_dir, 1, True)) == [
        {"inputs": [14, 14, 5, 1], "targets": [14, 14, 5, 1]}]


def test_a_turn_without_a_tab_is_named(tmp_path):
    raw = tmp_path / "tmp" / "ConvAI2"
    corpus_testing.write_file(raw / "train_none_original_no_cands.txt", "1 hi there\n")
    corpus_testing.write_file(raw / "valid_none_original_no_cands.txt", "")
    with pytest.raises(errors.UserError, match="line 1 has no tab between utterance and reply"):
        registry.problem("dialog_personachat16k").preprocess_data(
            str(tmp_path / "data"), str(tmp_path / "tmp"))
