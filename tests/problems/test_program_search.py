"""program_search_algolisp against a local server holding metaset3.*.jsonl.gz files laid out
as the real ones (one AlgoLisp JSON object a line, gzipped; Dropbox paths with ?dl=1)."""
import gzip
import json
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.problems import program_search, spaces

TRAIN, EVAL, TEST = spaces.DatasetSplit.TRAIN, spaces.DatasetSplit.EVAL, spaces.DatasetSplit.TEST
RECORDS = {
    TRAIN: [{"text": ["given", "a", "number", "a", ",", "compute", "a", "+", "1"],
             "short_tree": ["invoke1", ["lambda1", ["+", "arg1", "1"]], "a"],
             "args": {"a": "int"}, "return_type": "int", "nodes": ["+"],
             "tests": [{"input": {"a": 1}, "output": 2}], "funcs": [], "tags": []},
            {"text": ["reverse", "the", "array", "b"], "short_tree": ["reverse", "b"],
             "args": {"b": "int[]"}, "return_type": "int[]", "tests": []}],
    EVAL: [{"text": ["the", "length", "of", "s"], "short_tree": ["len", "s"],
            "args": {"s": "string"}, "return_type": "int", "tests": []}],
    TEST: [{"text": ["twice", "x"], "short_tree": ["*", "x", "2"], "args": {"x": "int"},
            "return_type": "int", "tests": []}],
}
EXPECTED = {
    TRAIN: [{"inputs": "given a number a , compute a + 1",
             "targets": "[ invoke1 [ lambda1 [ + arg1 1 ] ] a ]"},
            {"inputs": "reverse the array b", "targets": "[ reverse b ]"}],
    EVAL: [{"inputs": "the length of s", "targets": "[ len s ]"}],
    TEST: [{"inputs": "twice x", "targets": "[ * x 2 ]"}],
}
URLS = {TRAIN: "https://www.dropbox.com/s/qhun6kml9yb2ui9/metaset3.train.jsonl.gz?dl=1",
        EVAL: "https://www.dropbox.com/s/aajkw83j2ps8bzx/metaset3.dev.jsonl.gz?dl=1",
        TEST: "https://www.dropbox.com/s/f1x9ybkjpf371cp/metaset3.test.jsonl.gz?dl=1"}


def _gz(path, records):
    corpus_testing.write_file(path, gzip.compress(
        "".join(json.dumps(r) + "\n" for r in records).encode("utf-8")))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("algolisp")
    for split, url in URLS.items():
        _gz(corpus_testing.served_path(root, url), RECORDS[split])
    with corpus_testing.serve_tree(root) as httpd:
        yield httpd


@pytest.fixture
def local(server):
    problem = registry.problem("program_search_algolisp")
    problem.DATA_URLS = {split: corpus_testing.local_url(server.url, url)
                         for split, url in URLS.items()}
    del server.requests[:]
    return problem, server


def test_t2t_names_and_urls():
    problem = registry.problem("program_search_algolisp")
    assert type(problem) is program_search.ProgramSearchAlgolisp
    assert problem.DATA_URLS == URLS and problem.is_generate_per_split
    assert problem.vocab_filename == "vocab.program_search_algolisp.32768.subwords"
    assert problem._extract_filename_from_url(URLS[EVAL]) == "metaset3.dev.jsonl.gz"


def test_downloads_each_split_and_flattens_the_programs(local, tmp_path):
    problem, server = local
    for split in (TRAIN, EVAL, TEST):
        assert list(problem.generate_samples(None, str(tmp_path), split)) == EXPECTED[split]
    assert server.requests == [corpus_testing.local_url("", URLS[s]) for s in (TRAIN, EVAL, TEST)]
    assert sorted(os.listdir(str(tmp_path))) == [
        "metaset3.dev.jsonl.gz", "metaset3.test.jsonl.gz", "metaset3.train.jsonl.gz"]


corpus_testing.register_user_subclass(program_search.ProgramSearchAlgolisp,
                                      "program_search_algolisp_tiny", train_shards=1)


def test_generate_data_and_a_preplaced_file(local, tmp_path):
    problem, server = local
    _gz(tmp_path / "tmp" / "metaset3.dev.jsonl.gz", RECORDS[TEST])
    assert list(problem.generate_samples(None, str(tmp_path / "tmp"), EVAL)) == EXPECTED[TEST]
    assert server.requests == []
    tiny = registry.problem("program_search_algolisp_tiny")
    tiny.DATA_URLS = problem.DATA_URLS
    data_dir = str(tmp_path / "data")
    tiny.generate_data(data_dir, str(tmp_path / "tmp2"))
    encoder = tiny.get_feature_encoders(data_dir)["targets"]
    rows = corpus_testing.read_examples(tiny.training_filepaths(data_dir, 1, True))
    assert sorted(encoder.decode(r["targets"][:-1]) for r in rows) == sorted(
        e["targets"] for e in EXPECTED[TRAIN])


def test_an_unknown_split_names_the_known_ones(tmp_path):
    with pytest.raises(ValueError, match=r"no data for split 'valid'; the splits are eval, test, "
                                         r"train"):
        registry.problem("program_search_algolisp").maybe_download_dataset(str(tmp_path),
                                                                           "valid")
