"""The tydiqa / tydiqa_codepoints problems: download, datagen, records, reading."""
import hashlib
import http.server
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import http_testing

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.data import generator_utils
from t2t.problems import tydiqa
from t2t.tydiqa import data

import tydiqa_testing


@registry.register_problem
class TydiqaCodepointsTestSmall(tydiqa.TydiqaCodepoints):
    max_seq_length = 48
    doc_stride = 6
    max_question_length = 8
    include_unknowns = 0.5
    num_train_shards = 2
    num_processes = 2


@registry.register_problem
class TydiqaTestSmall(tydiqa.Tydiqa):
    max_seq_length = 48
    doc_stride = 6
    max_question_length = 8
    approx_vocab_size = 300
    num_train_shards = 1
    num_processes = 1


def write_sources(tmp_dir):
    os.makedirs(tmp_dir, exist_ok=True)
    tydiqa_testing.write_jsonl_gz(os.path.join(tmp_dir, tydiqa.TRAIN_FILENAME),
                                  tydiqa_testing.multilingual_lines(annotators=1))
    tydiqa_testing.write_jsonl_gz(os.path.join(tmp_dir, tydiqa.DEV_FILENAME),
                                  tydiqa_testing.multilingual_lines(annotators=3))
    return tmp_dir


def generate(problem_name, root, seed=5):
    tmp_dir = write_sources(str(root / "tmp"))
    data_dir = str(root / "data")
    random.seed(seed)
    registry.problem(problem_name).generate_data(data_dir, tmp_dir)
    return data_dir


def digest(data_dir):
    return {name: hashlib.sha256(open(os.path.join(data_dir, name), "rb").read()).hexdigest()
            for name in sorted(os.listdir(data_dir))}


@pytest.fixture(scope="module")
def codepoint_data(tmp_path_factory):
    return generate("tydiqa_codepoints_test_small", tmp_path_factory.mktemp("cp"))


def test_datagen_writes_records_examples_and_summary(codepoint_data):
    names = sorted(name for name in os.listdir(codepoint_data) if not name.startswith("."))
    prefix = "tydiqa_codepoints_test_small"
    shards = [prefix + "-train-00000-of-00002", prefix + "-train-00001-of-00002",
              prefix + "-dev-00000-of-00001"]
    assert names == sorted(shards + [prefix + ".dev-examples.jsonl", prefix + ".summary.json"])
    # Each shard has its record (count and checksum), checked before training reads it.
    hidden = sorted(name for name in os.listdir(codepoint_data) if name.startswith("."))
    assert hidden == sorted("." + shard + ".shard.json" for shard in shards)
    examples = [json.loads(line) for line in
                open(os.path.join(codepoint_data, prefix + ".dev-examples.jsonl"))]
    lines = tydiqa_testing.multilingual_lines()
    assert [e["example_id"] for e in examples] == [line["example_id"] for line in lines]
    assert examples[-1]["skipped"] == "minimal_answer_mismatch"
    summary = json.load(open(os.path.join(codepoint_data, prefix + ".summary.json")))
    assert summary["dev"]["examples"] == 11 and summary["dev"]["used"] == 10
    assert summary["dev"]["skipped"] == {"minimal_answer_mismatch": 1}
    assert summary["train"]["skipped"] == {"minimal_answer_mismatch": 1}


def test_dev_records_map_back_to_the_answer_bytes(codepoint_data):
    problem = registry.problem("tydiqa_codepoints_test_small")
    pattern = os.path.join(codepoint_data, "tydiqa_codepoints_test_small-dev*0001")
    spec = problem.example_reading_spec()[0]
    docs = {line["example_id"]: line["document_plaintext"].encode()
            for line in tydiqa_testing.multilingual_lines()}
    answered = set()
    for record in generator_utils.tfrecord_iterator(tf.io.gfile.glob(pattern),
                                                    example_spec=spec):
        example_id = int(record["example_id"])  # 64-bit, exact
        kind, text = tydiqa_testing.EXPECTED[example_id]
        if record["answer_type"] == data.AnswerType.UNKNOWN:
            continue
        start, end = int(record["start_position"]), int(record["end_position"])
        span = docs[example_id][record["byte_start"][start]:record["byte_end"][end]]
        assert span.decode() == text and data.AnswerType(record["answer_type"]).name == kind
        answered.add(example_id)
    assert len(answered) == 9


def test_same_seed_gives_byte_identical_records(codepoint_data, tmp_path):
    again = generate("tydiqa_codepoints_test_small", tmp_path)
    assert digest(again) == digest(codepoint_data)


def test_datasets_for_the_model(codepoint_data):
    problem = registry.problem("tydiqa_codepoints_test_small")
    train = next(iter(problem.dataset(ModeKeys.TRAIN, codepoint_data)))
    assert "example_id" not in train and "byte_start" not in train
    assert train["inputs"].shape == [48]
    assert train["targets"].numpy().tolist() == [int(train["start_position"]),
                                                 int(train["end_position"]),
                                                 int(train["answer_type"])]
    predict = next(iter(problem.dataset(ModeKeys.PREDICT, codepoint_data)))
    assert "targets" not in predict and predict["byte_start"].shape == [48]
    hparams = registry.hparams("transformer_span_test")
    hparams.data_dir = codepoint_data
    features, labels = next(iter(problem.input_fn(ModeKeys.EVAL, hparams)))
    assert features["inputs"].shape == [32, 48, 1, 1] or features["inputs"].shape[1:] == \
        [48, 1, 1]
    assert labels.shape[1:] == [3, 1, 1] and labels.dtype == tf.int32
    p_hparams = problem.get_hparams()
    assert p_hparams.input_is_codepoints and p_hparams.modality == {}


def test_subword_problem_builds_its_vocab(tmp_path):
    data_dir = generate("tydiqa_test_small", tmp_path)
    problem = registry.problem("tydiqa_test_small")
    vocab = os.path.join(data_dir, problem.vocab_filename)
    encoder = problem.feature_encoders(data_dir)["inputs"]
    assert encoder.encode_without_tokenizing("[CLS]") == [2]
    assert encoder.encode_without_tokenizing("[ContextId=44]") == [5 + 44]
    hparams = registry.hparams("transformer_span_test")
    hparams.data_dir = data_dir
    assert problem.get_hparams(hparams).vocab_size["inputs"] == encoder.vocab_size
    records = generator_utils.tfrecord_iterator(
        [os.path.join(data_dir, "tydiqa_test_small-dev-00000-of-00001")],
        example_spec=problem.example_reading_spec()[0])
    first = next(iter(records))
    assert first["inputs"][0] == 2 and first["inputs"][1] == 4   # [CLS] [Q]
    assert os.path.exists(vocab)


class _Files(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802
        self.server.requests.append(self.path)
        body = self.server.files.get(self.path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")


def test_downloads_missing_sources_from_their_urls(tmp_path, monkeypatch):
    sources = write_sources(str(tmp_path / "sources"))
    files = {"/v1.0/" + name: open(os.path.join(sources, name), "rb").read()
             for name in (tydiqa.TRAIN_FILENAME, tydiqa.DEV_FILENAME)}
    with http_testing.local_http_server(_Files, requests=[], files=files) as httpd:
        url = httpd.url + "/v1.0/"
        problem = registry.problem("tydiqa_codepoints_test_small")
        monkeypatch.setattr(problem, "train_url", url + tydiqa.TRAIN_FILENAME)
        monkeypatch.setattr(problem, "dev_url", url + tydiqa.DEV_FILENAME)
        tmp_dir = str(tmp_path / "tmp")
        random.seed(5)
        problem.generate_data(str(tmp_path / "data"), tmp_dir)
        assert sorted(httpd.requests) == sorted(httpd.files)
        for name in (tydiqa.TRAIN_FILENAME, tydiqa.DEV_FILENAME):
            assert open(os.path.join(tmp_dir, name), "rb").read() == \
                httpd.files["/v1.0/" + name]
        problem.source_files(tmp_dir)   # present now: no second request
        assert len(httpd.requests) == 2


def test_codepoint_encoder_names_special_ids():
    encoder = tydiqa.CodepointTextEncoder()
    ids = [data.CLS_CODEPOINT, data.Q_CODEPOINT] + encoder.encode("ไทย") + [
        data.SEP_CODEPOINT, data.CANDIDATE_MARKER_BASE + 2, 0, 0]
    assert encoder.decode(ids) == "[CLS][Q]ไทย[SEP][ContextId=2]"
    assert np.array_equal(encoder.encode("a"), [97])


# ------------------------------------------------------------ offline, damaged files
def run_datagen(capsys, *args):
    """t2t-datagen in this process: (exit code, stderr lines)."""
    from absl import flags
    from absl.testing import flagsaver
    from t2t.bin import cli, t2t_datagen
    with flagsaver.flagsaver():
        flags.FLAGS.unparse_flags()
        with pytest.raises(SystemExit) as info:
            cli.run_main(t2t_datagen.main, "t2t-datagen", argv=["t2t-datagen"] + list(args))
    return info.value.code, capsys.readouterr().err.strip().splitlines()


def _error_lines(lines):
    return [line for line in lines if "error" in line]


def test_offline_without_sources_says_at_once_which_files_to_put_where(tmp_path, capsys,
                                                                      monkeypatch):
    from t2t.core import download

    def no_retries(seconds):
        raise AssertionError("retried a download that cannot succeed")
    monkeypatch.setattr(download.time, "sleep", no_retries)
    # Nothing listens on port 9 of this machine: what an offline machine answers.
    unreachable = "http://127.0.0.1:9/tydiqa/v1.0/"
    monkeypatch.setattr(TydiqaCodepointsTestSmall, "train_url",
                        unreachable + tydiqa.TRAIN_FILENAME)
    monkeypatch.setattr(TydiqaCodepointsTestSmall, "dev_url", unreachable + tydiqa.DEV_FILENAME)
    tmp_dir = str(tmp_path / "tmp")
    code, lines = run_datagen(capsys, "--problem=tydiqa_codepoints_test_small",
                              "--data_dir=%s" % (tmp_path / "data"), "--tmp_dir=" + tmp_dir)
    assert code == 2 and len(_error_lines(lines)) == 1, lines
    assert lines[-1].startswith(
        "t2t-datagen: error: tydiqa_codepoints_test_small: tydiqa-v1.0-train.jsonl.gz is not "
        "in --tmp_dir=%s and %s cannot be downloaded (connection failed" % (
            tmp_dir, unreachable + tydiqa.TRAIN_FILENAME))
    assert ("put tydiqa-v1.0-train.jsonl.gz and tydiqa-v1.0-dev.jsonl.gz there (from %s and "
            "%s)" % (unreachable + tydiqa.TRAIN_FILENAME, unreachable + tydiqa.DEV_FILENAME)
            ) in lines[-1]
    assert lines[-1].endswith("t2t-tydi-synthetic --tmp_dir=%s" % tmp_dir)
    assert not os.path.exists(os.path.join(str(tmp_path / "data"), "tydiqa_codepoints_test_"
                                           "small-dev-00000-of-00001"))


def test_truncated_source_is_one_line_naming_the_file(tmp_path, capsys):
    tmp_dir = write_sources(str(tmp_path / "tmp"))
    train = os.path.join(tmp_dir, tydiqa.TRAIN_FILENAME)
    content = open(train, "rb").read()
    open(train, "wb").write(content[:len(content) * 2 // 3])
    code, lines = run_datagen(capsys, "--problem=tydiqa_codepoints_test_small",
                              "--data_dir=%s" % (tmp_path / "data"), "--tmp_dir=" + tmp_dir)
    assert code == 2 and len(_error_lines(lines)) == 1, lines
    assert lines[-1].startswith("t2t-datagen: error: %s is truncated or damaged (" % train)
    assert lines[-1].endswith("delete it and download or copy it again")


def test_synthetic_sample_command_writes_what_datagen_reads(tmp_path):
    # Its own process: the program parses absl flags, which other in-process runs share.
    tmp_dir = str(tmp_path / "sample")
    result = subprocess.run(
        [sys.executable, "-m", "t2t.bin.t2t_tydi_synthetic", "--tmp_dir=" + tmp_dir,
         "--num_train=30", "--num_dev=7"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "wrote 30 train and 7 dev examples" in result.stdout
    train, dev = (os.path.join(tmp_dir, name) for name in (tydiqa.TRAIN_FILENAME,
                                                          tydiqa.DEV_FILENAME))
    assert len(list(data.read_examples(train))) == 30
    assert [len(e.annotations) for e in data.read_examples(dev)] == [3] * 7
    problem = registry.problem("tydiqa_codepoints_test_small")
    random.seed(1)
    problem.generate_data(str(tmp_path / "data"), tmp_dir)
    summary = json.load(open(problem.summary_path(str(tmp_path / "data"))))
    assert summary["dev"]["examples"] == 7
