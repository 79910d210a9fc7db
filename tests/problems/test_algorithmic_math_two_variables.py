"""algorithmic_math_two_variables against a local server holding an archive laid out as the
real one (symbolic_math_train.txt at its root)."""
import functools
import os

import pytest

import corpus_testing
import http_testing

from t2t.core import download
from t2t.core import registry
from t2t.problems import algorithmic_math_two_variables as mlu

LINES = ["y=691,x=-999,y*x:-690309", "y=210,x=-995,y+x:-785", "x=-995,y=210,x*x:990025",
         "x=3,y=-4,x-y:7"] * 6  # 24 lines over 11 shards: the dev shard (last) gets 2
ARCHIVE = "mathematical_language_understanding_train.tar.gz"


class _AgentRecordingHandler(http_testing.QuietFileHandler):
    def do_GET(self):  # noqa: N802  (http.server's name)
        self.server.requests.append((self.path, self.headers.get("User-Agent")))
        super().do_GET()


@pytest.fixture
def server(tmp_path, monkeypatch):
    root = tmp_path / "served"
    corpus_testing.write_tgz(corpus_testing.served_path(root, mlu._URL),
                             {mlu.TRAIN_FILENAME: "".join(line + "\n" for line in LINES)})
    handler = functools.partial(_AgentRecordingHandler, directory=str(root))
    with http_testing.local_http_server(handler, requests=[]) as httpd:
        monkeypatch.setattr(mlu.AlgorithmicMathTwoVariables, "url",
                            corpus_testing.local_url(httpd.url, mlu._URL))
        yield httpd


def _encode(text):
    return [b + 2 for b in text.encode("utf-8")] + [1]


def _all_records(data_dir):
    paths = sorted(os.path.join(data_dir, n) for n in os.listdir(data_dir)
                   if n.startswith("algorithmic_math_two_variables-"))
    return paths, corpus_testing.read_examples(paths)


def test_downloads_once_with_a_browser_agent_and_writes_every_line(server, tmp_path):
    tmp_dir, data_dir = str(tmp_path / "tmp"), str(tmp_path / "data")
    p = registry.problem("algorithmic_math_two_variables")
    p.generate_data(data_dir, tmp_dir)
    assert server.requests == [("/" + ARCHIVE, mlu._HEADERS["User-Agent"])]
    assert os.path.exists(os.path.join(tmp_dir, ARCHIVE))
    paths, records = _all_records(data_dir)
    assert [os.path.basename(path) for path in paths] == (
        ["algorithmic_math_two_variables-dev-00000-of-00001"] +
        ["algorithmic_math_two_variables-train-%05d-of-00010" % i for i in range(10)])
    expected = sorted((_encode(line.split(":")[0]), _encode(line.split(":")[1]))
                      for line in LINES)
    assert sorted((r["inputs"], r["targets"]) for r in records) == expected
    assert len(corpus_testing.read_examples(paths[:1])) == 2
    # A second run finds the archive and does not ask again.
    list(p.generate_samples(data_dir, tmp_dir, "train"))
    assert len(server.requests) == 1


def test_first_sample_and_character_vocab(server, tmp_path):
    p = mlu.AlgorithmicMathTwoVariables()
    first = next(iter(p.generate_samples(str(tmp_path / "d"), str(tmp_path / "t"), "train")))
    assert first == {"inputs": "y=691,x=-999,y*x", "targets": "-690309"}
    encoder = p.get_or_create_vocab(None, None)
    assert encoder.encode("x") == [ord("x") + 2] and encoder.vocab_size == 258


def test_an_extracted_file_in_tmp_dir_is_used_without_a_download(tmp_path, monkeypatch):
    monkeypatch.setattr(mlu.AlgorithmicMathTwoVariables, "url", "http://127.0.0.1:9/none")
    tmp_dir = tmp_path / "tmp"
    corpus_testing.write_file(tmp_dir / mlu.TRAIN_FILENAME, "x=1,y=2,x+y:3\n\ny=0,x=5,x*y:0\n")
    samples = list(mlu.AlgorithmicMathTwoVariables().generate_samples(
        str(tmp_path / "data"), str(tmp_dir), "train"))
    assert samples == [{"inputs": "x=1,y=2,x+y", "targets": "3"},
                       {"inputs": "y=0,x=5,x*y", "targets": "0"}]


def test_a_bad_line_or_an_archive_without_the_file_is_a_one_line_error(tmp_path):
    tmp_dir = tmp_path / "tmp"
    corpus_testing.write_file(tmp_dir / mlu.TRAIN_FILENAME, "x=1,y=2,x+y:3\nno colon here\n")
    with pytest.raises(ValueError, match="line 2 is 'no colon here', not 'problem:answer'"):
        list(mlu.AlgorithmicMathTwoVariables().generate_samples(
            str(tmp_path / "data"), str(tmp_dir), "train"))
    other = tmp_path / "other"
    corpus_testing.write_tgz(other / ARCHIVE, {"README": "nothing"})
    with pytest.raises(download.DownloadError, match="holds no symbolic_math_train.txt"):
        mlu._download_mlu_data(str(other), str(tmp_path / "data"))
