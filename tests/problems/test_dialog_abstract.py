"""DialogAbstract, T2T's base of the chatbot problems, through a tiny subclass over a zip
served from 127.0.0.1 (`talk/talk.txt`, a dialog a line, utterances separated by `|`)."""
import os

import pytest

import corpus_testing

from t2t.core import errors, registry
from t2t.evaluation import metrics
from t2t.problems import dialog_abstract, spaces

URL = "http://example.com/files/talk.zip"
TALK = "".join("Line %d a.|Line %d b!|Line %d c?\n" % (n, n, n) for n in range(1, 13))


@registry.register_problem("dialog_talk_tiny")
class DialogTalkTiny(dialog_abstract.DialogAbstract):
    URL = URL
    ZIPPED_DATA = "talk.zip"
    RAW_DATA = "talk"

    @property
    def targeted_vocab_size(self):
        return 6

    def dialogs(self, raw_data):
        with open(os.path.join(raw_data, "talk.txt")) as handle:
            for line in handle:
                utterances = [self.clean_line(u.lower()) for u in line.strip().split("|")]
                yield dialog_abstract.consecutive_pairs(utterances), utterances


@pytest.fixture
def problem(tmp_path_factory, monkeypatch):
    root = tmp_path_factory.mktemp("talk_server")
    corpus_testing.write_zip(corpus_testing.served_path(root, URL), {"talk/talk.txt": TALK})
    with corpus_testing.serve_tree(root) as server:
        monkeypatch.setattr(DialogTalkTiny, "URL", corpus_testing.local_url(server.url, URL))
        p = registry.problem("dialog_talk_tiny")
        p.server = server
        yield p


def _lines(path):
    with open(path) as handle:
        return handle.read().splitlines()


def test_t2t_properties_and_helpers():
    p = registry.problem("dialog_talk_tiny")
    assert (p.vocab_type, p.is_generate_per_split, p.oov_token) == ("tokens", True, "<unk>")
    assert p.vocab_file == p.vocab_filename == "vocab.chatbot.6"
    assert (p.input_space_id, p.target_space_id) == (spaces.SpaceID.EN_TOK,) * 2
    assert p.targeted_dataset_size == 0 and p.use_subword_tokenizer is False
    assert p.dataset_split == {"train": 80, "val": 10, "test": 10}
    assert [(s["split"], s["shards"]) for s in p.dataset_splits] == [
        ("train", 1), ("eval", 1), ("test", 1)]
    assert p.eval_metrics() == [metrics.Metrics.ACC, metrics.Metrics.ACC_TOP5,
                                metrics.Metrics.ACC_PER_SEQ,
                                metrics.Metrics.NEG_LOG_PERPLEXITY, metrics.Metrics.APPROX_BLEU]
    assert dialog_abstract.DialogAbstract().targeted_vocab_size == 2**14
    # Dialogs 1-80 of each hundred train, 81-90 dev, 91-100 test.
    assert [p.split_mode(n) for n in (1, 80, 81, 90, 91, 100, 101, 181, 200)] == [
        "train", "train", "dev", "dev", "test", "test", "train", "dev", "test"]
    assert dialog_abstract.consecutive_pairs(["a", "b", "c"]) == [("a", "b"), ("b", "c")]
    assert dialog_abstract.consecutive_pairs(["a"]) == []
    assert p.clean_line("don't go there!") == "do n't go there ! "
    assert p.clean_line("i'm 'so' done, ok.") == "i 'm so' done ok . "
    assert p.clean_line("it's 5 o'clock") == "it 's 5 o 'clock"
    with pytest.raises(errors.UserError, match="needs tmp_dir"):
        p.preprocess_data("/nonexistent/data", None)


def test_files_vocab_limit_and_records(problem, tmp_path, monkeypatch):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    monkeypatch.setattr(DialogTalkTiny, "dataset_split", {"train": 1, "val": 1, "test": 1})
    problem.generate_data(data_dir, tmp_dir)
    assert problem.server.requests == ["/files/talk.zip"]
    # Dialogs 1-12: 1 train, 2 dev, 3-12 test (the turn is 100 long).
    assert _lines(os.path.join(data_dir, "trainSource.txt")) == ["line 1 a . ", "line 1 b ! "]
    assert _lines(os.path.join(data_dir, "trainTarget.txt")) == ["line 1 b ! ", "line 1 c ? "]
    assert len(_lines(os.path.join(data_dir, "testSource.txt"))) == 20
    # <pad>, <EOS>, the 6 - 3 most common training words, <unk> (no final newline).
    with open(os.path.join(data_dir, "vocab.chatbot.6")) as handle:
        assert handle.read() == "<pad>\n<EOS>\nline\n1\na\n<unk>"
    problem.get_feature_encoders(data_dir)
    hp = problem.get_hparams()
    assert hp.vocab_size == {"inputs": 6, "targets": 6}
    examples = corpus_testing.read_examples(problem.training_filepaths(data_dir, 1, True))
    assert sorted((ex["inputs"], ex["targets"]) for ex in examples) == [
        ([2, 3, 4, 5, 1], [2, 3, 5, 5, 1]), ([2, 3, 5, 5, 1], [2, 3, 5, 5, 1])]

    # targeted_dataset_size caps the pairs written, in corpus order.
    monkeypatch.setattr(DialogTalkTiny, "targeted_dataset_size", 3)
    small = str(tmp_path / "small")
    problem.preprocess_data(small, tmp_dir)
    assert len(problem.server.requests) == 1  # the archive is downloaded and extracted once
    assert _lines(os.path.join(small, "devSource.txt")) == ["line 2 a . "]
    assert _lines(os.path.join(small, "testSource.txt")) == []


def test_an_extracted_folder_in_tmp_dir_is_used(problem, tmp_path):
    tmp_dir = tmp_path / "tmp"
    corpus_testing.write_file(tmp_dir / "talk" / "talk.txt", "Hi.|Yo.\n")
    data_dir = str(tmp_path / "data")
    problem.preprocess_data(data_dir, str(tmp_dir))
    assert problem.server.requests == []
    assert _lines(os.path.join(data_dir, "trainSource.txt")) == ["hi . "]
    assert _lines(os.path.join(data_dir, "trainTarget.txt")) == ["yo . "]
