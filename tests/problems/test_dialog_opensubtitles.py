"""dialog_opensubtitles64k<year> against a local server holding an OPUS `en.tar.gz` laid out
as the real one (`OpenSubtitles<year>/xml/en/<year>/<id>/<n>.xml(.gz)`, a sentence an
`<s id>` element, a word a `<w id>` line)."""
import gzip
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.problems import dialog_opensubtitles


def _xml(*sentences):
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<document id="1">']
    for n, words in enumerate(sentences, 1):
        lines += ['  <s id="%d">' % n, '    <time id="T%dS" value="00:00:0%d,000" />' % (n, n)]
        lines += ['    <w id="%d.%d">%s</w>' % (n, i, w) for i, w in enumerate(words.split(), 1)]
        lines += ["  </s>"]
    return "\n".join(lines + ["</document>"]) + "\n"


FIRST = _xml("Hello , John .", "I don't know !", "Really ?")
SECOND = _xml("Yes .", "No .")
MEMBERS = {"OpenSubtitles/xml/en/2000/100/1.xml.gz": gzip.compress(SECOND.encode()),
           "OpenSubtitles/xml/en/1999/5/2.xml": FIRST,
           "OpenSubtitles/README": "<s id=\"1\"> not a subtitle file\n"}
URL = "http://opus.nlpl.eu/download.php?f=OpenSubtitles/en.tar.gz"
YEARS = (2009, 2011, 2012, 2013, 2016, 2018)


@pytest.fixture
def problem(tmp_path_factory, monkeypatch):
    root = tmp_path_factory.mktemp("opus_server")
    corpus_testing.write_tgz(corpus_testing.served_path(root, URL), MEMBERS)
    cls = dialog_opensubtitles.DialogOpensubtitles64k2009
    monkeypatch.setattr(cls, "dataset_split", {"train": 1, "val": 1, "test": 98})
    with corpus_testing.serve_tree(root) as server:
        monkeypatch.setattr(cls, "URL", corpus_testing.local_url(server.url, URL))
        p = registry.problem("dialog_opensubtitles64k2009")
        p.server = server
        yield p


def _read(path):
    with open(path) as handle:
        return handle.read()


def test_t2t_names_and_releases():
    for year in YEARS:
        p = registry.problem("dialog_opensubtitles64k%d" % year)
        assert type(p).__name__ == "DialogOpensubtitles64k%d" % year
        assert type(p) is getattr(dialog_opensubtitles, type(p).__name__)
        assert p.dataset_version == year and p.vocab_filename == "vocab.chatbot.65536"
        suffix = "" if year == 2009 else str(year)
        assert p.URL == "http://opus.nlpl.eu/download.php?f=OpenSubtitles%s/en.tar.gz" % suffix
        assert (p.ZIPPED_DATA, p.RAW_DATA) == ("en.tar.gz", "OpenSubtitles" + suffix)
        assert p.raw_data_dir("/tmp/x") == "/tmp/x/raw_data_%d" % year
    p = registry.problem("dialog_opensubtitles64k2009")
    assert p.clean_line(" I don't know, Bob\\'s !") == " i do n't know bob 's  ! "


def test_generate_data_pairs_vocab_and_records(problem, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem.generate_data(data_dir, tmp_dir)
    assert problem.server.requests == ["/download.php?f=OpenSubtitles/en.tar.gz"]
    assert os.path.isfile(os.path.join(tmp_dir, "raw_data_2009", "en.tar.gz"))
    assert sorted(n for n in os.listdir(data_dir) if not n.startswith(".")) == [
        "devSource.txt", "devTarget.txt", "dialog_opensubtitles64k2009-dev-00000-of-00001",
        "dialog_opensubtitles64k2009-test-00000-of-00001",
        "dialog_opensubtitles64k2009-train-00000-of-00001", "testSource.txt",
        "testTarget.txt", "trainSource.txt", "trainTarget.txt", "vocab.chatbot.65536"]
    files = {name: _read(os.path.join(data_dir, name)) for name in os.listdir(data_dir)
             if name.endswith(".txt")}
    # Files in path order (1999/ before 2000/); every sentence pair, the last one too.
    assert files == {
        "trainSource.txt": " hello  john  . \n i do n't know  ! \n",
        "trainTarget.txt": " i do n't know  ! \n really  ? \n",
        "devSource.txt": " yes  . \n", "devTarget.txt": " no  . \n",
        "testSource.txt": "", "testTarget.txt": ""}
    assert _read(os.path.join(data_dir, "vocab.chatbot.65536")) == (
        "<pad>\n<EOS>\nhello\njohn\n.\ni\ndo\nn't\nknow\n!\nreally\n?\n<unk>")
    train = corpus_testing.read_examples(problem.training_filepaths(data_dir, 1, True))
    assert sorted((ex["inputs"], ex["targets"]) for ex in train) == [
        ([2, 3, 4, 1], [5, 6, 7, 8, 9, 1]), ([5, 6, 7, 8, 9, 1], [10, 11, 1])]
    assert corpus_testing.read_examples(problem.dev_filepaths(data_dir, 1, True)) == [
        {"inputs": [12, 4, 1], "targets": [12, 4, 1]}]


def test_a_release_archive_in_tmp_dir_is_not_downloaded(problem, tmp_path):
    tmp_dir = tmp_path / "tmp"
    corpus_testing.write_tgz(tmp_dir / "raw_data_2018" / "en.tar.gz",
                             {"OpenSubtitles2018/xml/en/2017/1/1.xml": SECOND})
    p = registry.problem("dialog_opensubtitles64k2018")
    data_dir = str(tmp_path / "data")
    p.preprocess_data(data_dir, str(tmp_dir))
    assert problem.server.requests == []
    assert _read(os.path.join(data_dir, "trainSource.txt")) == " yes  . \n"
    assert _read(os.path.join(data_dir, "trainTarget.txt")) == " no  . \n"
