"""T2T's github_function_docstring against a local server holding the 100 CSV files laid out as
Kubeflow's bucket (`kubeflow-examples/t2t-code-search/raw_data/func-doc-pairs-000NN-of-00100.csv`,
two columns, no header, quoted where a field holds a comma or a quote)."""
import csv
import importlib
import io
import os

import pytest
import tensorflow as tf

import corpus_testing

from t2t.core import errors, registry, t2t_import_alias
from t2t.core.modes import ModeKeys
from t2t.encoders import text_encoder
from t2t.evaluation import metrics
from t2t.problems import function_docstring

BUCKET_PATH = "kubeflow-examples/t2t-code-search/raw_data"
QUOTED = ('split a string, keep "quotes"', "def split ( s ) : return s . split ( ',' )")


def _pairs(shard):
    """Shard 7 also holds a row needing quotes; every shard one or two plain rows."""
    pairs = [("return the sum of a and b number %d" % shard,
              "def add%d ( a , b ) : return a + b" % shard)]
    if shard % 3 == 0:
        pairs.append(("open the file %d" % shard, "def open%d ( path ) : return open ( path )"
                      % shard))
    if shard == 7:
        pairs.append(QUOTED)
    return pairs


def _csv(pairs):
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(pairs)
    return out.getvalue()


def _name(shard):
    return "func-doc-pairs-%05d-of-00100.csv" % shard


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("code_search")
    for shard in range(100):
        corpus_testing.write_file(root / BUCKET_PATH / _name(shard), _csv(_pairs(shard)))
    with corpus_testing.serve_tree(root) as httpd:
        yield httpd


@pytest.fixture
def local(server, monkeypatch):
    monkeypatch.setattr(function_docstring.GithubFunctionDocstring, "base_url",
                        server.url + "/" + BUCKET_PATH)
    del server.requests[:]
    return server


def test_t2t_names_files_and_settings():
    problem = registry.problem("github_function_docstring")
    assert type(problem) is function_docstring.GithubFunctionDocstring
    assert problem.base_url == "gs://kubeflow-examples/t2t-code-search/raw_data"
    files = problem.pair_files_list
    assert len(files) == problem.NUM_SHARDS == 100
    assert files[0] == ["gs://kubeflow-examples/t2t-code-search/raw_data/"
                        "func-doc-pairs-00000-of-00100.csv", ("func-doc-pairs-00000-of-00100.csv",)]
    assert files[99][1] == ("func-doc-pairs-00099-of-00100.csv",)
    assert (problem.approx_vocab_size, problem.max_samples_for_vocab) == (8192, 350000)
    assert not problem.is_generate_per_split and problem.has_inputs
    assert problem.vocab_filename == "vocab.github_function_docstring.8192.subwords"
    assert problem.eval_metrics() == [metrics.Metrics.ACC]
    t2t_import_alias.uninstall()
    assert t2t_import_alias.install()
    try:
        module = importlib.import_module("tensor2tensor.data_generators.function_docstring")
        assert module is function_docstring
    finally:
        t2t_import_alias.uninstall()


def test_downloads_every_csv_and_writes_records_and_vocab(local, tmp_path):
    data_dir, tmp_dir = tmp_path / "data", tmp_path / "tmp"
    # A file already in tmp_dir is used, not downloaded (as T2T's maybe_download).
    corpus_testing.write_file(tmp_dir / _name(0), _csv([("placed by hand", "def mine ( ) :")]))
    problem = registry.problem("github_function_docstring")
    problem.generate_data(str(data_dir), str(tmp_dir))
    assert sorted(local.requests) == ["/%s/%s" % (BUCKET_PATH, _name(i)) for i in range(1, 100)]
    assert sorted(os.listdir(tmp_dir)) == [_name(i) for i in range(100)]

    encoder = text_encoder.SubwordTextEncoder(
        str(data_dir / "vocab.github_function_docstring.8192.subwords"))
    train = problem.training_filepaths(str(data_dir), 100, True)
    dev = problem.dev_filepaths(str(data_dir), 1, True)
    assert all(os.path.isfile(path) for path in train + dev)
    assert os.path.basename(train[0]) == "github_function_docstring-train-00000-of-00100"
    assert os.path.basename(dev[0]) == "github_function_docstring-dev-00000-of-00001"
    examples = corpus_testing.read_examples(train + dev)
    assert all(set(ex) == {"inputs", "targets", "embed_code"} and ex["embed_code"] == [0]
               and ex["inputs"][-1] == ex["targets"][-1] == text_encoder.EOS_ID
               for ex in examples)
    pairs = sorted((encoder.decode(ex["inputs"][:-1]), encoder.decode(ex["targets"][:-1]))
                   for ex in examples)
    expected = [("placed by hand", "def mine ( ) :")] + [
        pair for shard in range(1, 100) for pair in _pairs(shard)]
    assert pairs == sorted(expected) and QUOTED in pairs
    # The samples are spread over the training shards and the dev shard.
    assert corpus_testing.read_examples(dev) and len(examples) == len(expected)


def test_embed_code_outside_training_and_bad_rows(tmp_path):
    problem = registry.problem("github_function_docstring")
    hparams = registry.hparams("transformer_tiny")

    def example():
        return {"inputs": tf.constant([5, 6, 1], tf.int64),
                "targets": tf.constant([7, 1], tf.int64),
                "embed_code": tf.constant([1], tf.int64)}

    assert problem.preprocess_example(example(), ModeKeys.TRAIN, hparams)[
        "embed_code"].numpy().tolist() == [1]
    for mode in (ModeKeys.EVAL, ModeKeys.PREDICT):
        assert problem.preprocess_example(example(), mode, hparams)[
            "embed_code"].numpy().tolist() == [0]
    bad = tmp_path / "func-doc-pairs-00003-of-00100.csv"
    bad.write_text('"a doc","def f ( ) :"\n\n"one","two","three"\n')
    with pytest.raises(errors.UserError, match=r"00100.csv line 3: 3 comma-separated columns, "
                                               r"expected 2"):
        list(function_docstring._csv_pairs(str(bad)))
