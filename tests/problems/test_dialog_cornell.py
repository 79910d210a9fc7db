"""dialog_cornell32k against a local server holding a `cornell_movie_dialogs_corpus.zip` laid
out as the real one (`cornell movie-dialogs corpus/movie_lines.txt` and
`movie_conversations.txt`, ` +++$+++ `-separated fields, Latin-1 bytes, a `__MACOSX/`)."""
import os

import pytest

import corpus_testing

from t2t.core import errors, registry
from t2t.problems import dialog_cornell

FOLDER = "cornell movie-dialogs corpus/"
LINES = (b"L1045 +++$+++ u0 +++$+++ m0 +++$+++ BIANCA +++$+++ They do not!\n"
         b"L1044 +++$+++ u2 +++$+++ m0 +++$+++ CAMERON +++$+++ They do to!\n"
         b"L985 +++$+++ u0 +++$+++ m0 +++$+++ BIANCA +++$+++ I hope so.\n"
         b"L984 +++$+++ u2 +++$+++ m0 +++$+++ CAMERON +++$+++ She okay?\n"
         b"L925 +++$+++ u0 +++$+++ m0 +++$+++ BIANCA +++$+++ Let's go caf\xe9.\n"
         b"L924 +++$+++ u2 +++$+++ m0 +++$+++ CAMERON +++$+++ Wow\n")
CONVERSATIONS = ("u0 +++$+++ u2 +++$+++ m0 +++$+++ ['L924', 'L925', 'L1044']\n"
                 "u0 +++$+++ u2 +++$+++ m0 +++$+++ ['L1044', 'L1045']\n"
                 "u0 +++$+++ u2 +++$+++ m0 +++$+++ ['L984', 'L985']\n")
MEMBERS = {FOLDER + "movie_lines.txt": LINES,
           FOLDER + "movie_conversations.txt": CONVERSATIONS,
           FOLDER + "README.txt": "Cornell Movie-Dialogs Corpus\n",
           "__MACOSX/" + FOLDER + "._movie_lines.txt": b"\x00\x05\x16\x07"}
URL = dialog_cornell.DialogCornell32k.URL


@pytest.fixture
def problem(tmp_path_factory, monkeypatch):
    root = tmp_path_factory.mktemp("cornell_server")
    corpus_testing.write_zip(corpus_testing.served_path(root, URL), MEMBERS)
    cls = dialog_cornell.DialogCornell32k
    monkeypatch.setattr(cls, "dataset_split", {"train": 1, "val": 1, "test": 98})
    with corpus_testing.serve_tree(root) as server:
        monkeypatch.setattr(cls, "URL", corpus_testing.local_url(server.url, URL))
        p = registry.problem("dialog_cornell32k")
        p.server = server
        yield p


def _read(path):
    with open(path) as handle:
        return handle.read()


def test_t2t_names():
    p = registry.problem("dialog_cornell32k")
    assert type(p) is dialog_cornell.DialogCornell32k
    assert URL == "http://www.cs.cornell.edu/~cristian/data/cornell_movie_dialogs_corpus.zip"
    assert (p.ZIPPED_DATA, p.RAW_DATA) == ("cornell_movie_dialogs_corpus.zip",
                                           "cornell movie-dialogs corpus")
    assert (p.vocab_filename, p.targeted_vocab_size) == ("vocab.chatbot.32768", 2**15)


def test_generate_data_pairs_vocab_and_records(problem, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem.generate_data(data_dir, tmp_dir)
    assert problem.server.requests == ["/~cristian/data/cornell_movie_dialogs_corpus.zip"]
    assert sorted(n for n in os.listdir(data_dir) if not n.startswith(".")) == [
        "devSource.txt", "devTarget.txt", "dialog_cornell32k-dev-00000-of-00001",
        "dialog_cornell32k-test-00000-of-00001", "dialog_cornell32k-train-00000-of-00001",
        "testSource.txt", "testTarget.txt", "trainSource.txt", "trainTarget.txt",
        "vocab.chatbot.32768"]
    files = {name: _read(os.path.join(data_dir, name)) for name in os.listdir(data_dir)
             if name.endswith(".txt")}
    assert files == {
        "trainSource.txt": "wow\nlet 's go caf . \n",
        "trainTarget.txt": "let 's go caf . \nthey do to ! \n",
        "devSource.txt": "", "devTarget.txt": "",  # the pair whose target is L1045 is left out
        "testSource.txt": "she okay ? \n", "testTarget.txt": "i hope so . \n"}
    # The training sources' words only.
    assert _read(os.path.join(data_dir, "vocab.chatbot.32768")) == \
        "<pad>\n<EOS>\nwow\nlet\n's\ngo\ncaf\n.\n<unk>"
    train = corpus_testing.read_examples(problem.training_filepaths(data_dir, 1, True))
    assert sorted((ex["inputs"], ex["targets"]) for ex in train) == [
        ([2, 1], [3, 4, 5, 6, 7, 1]), ([3, 4, 5, 6, 7, 1], [8, 8, 8, 8, 1])]
    assert corpus_testing.read_examples(problem.dev_filepaths(data_dir, 1, True)) == []
    assert corpus_testing.read_examples(problem.test_filepaths(data_dir, 1, True)) == [
        {"inputs": [8, 8, 8, 1], "targets": [8, 8, 8, 7, 1]}]


def test_a_conversation_naming_a_missing_line_is_named(tmp_path):
    raw = tmp_path / "tmp" / "cornell movie-dialogs corpus"
    corpus_testing.write_file(raw / "movie_lines.txt", LINES)
    corpus_testing.write_file(raw / "movie_conversations.txt",
                              "u0 +++$+++ u2 +++$+++ m0 +++$+++ ['L924', 'L7']\n")
    p = registry.problem("dialog_cornell32k")
    with pytest.raises(errors.UserError, match="names line L7, which movie_lines.txt"):
        p.preprocess_data(str(tmp_path / "data"), str(tmp_path / "tmp"))
    corpus_testing.write_file(raw / "movie_conversations.txt", "u0 +++$+++ ['L924']\n")
    with pytest.raises(errors.UserError, match="line 1: 2 fields separated by"):
        p.preprocess_data(str(tmp_path / "data"), str(tmp_path / "tmp"))
