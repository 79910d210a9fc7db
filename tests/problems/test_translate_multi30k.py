"""translate_ende_multi30k on a slice of the real Multi30k files (../shared/data/multi30k).

The slice (the first 300 training pairs, 30 of val and of test_2016_flickr, gzipped again)
stands in for the six files; a subclass pins the slice's sha256 the way the problem pins the
real files'. Checked: the records hold exactly the slice's sentences, every training sentence
comes back byte for byte through the vocabulary, the test set is written as text, a
download dropped half way resumes with a Range request, a corrupt file is refused, and a
model trains a few steps and decodes the test text with beam search.
"""
import gzip
import hashlib
import http.server
import os
import re

import pytest
import tensorflow as tf

import http_testing

from t2t.core import download, registry
from t2t.core import errors
from t2t.core.modes import ModeKeys
from t2t.problems import problem
from t2t.problems import translate_multi30k

# shared/ sits beside the repository (in CI too); a worktree finds it under /work.
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = next((path for path in (os.environ.get("T2T_MULTI30K_DIR", ""),
                                 os.path.join(_REPO, "..", "shared", "data", "multi30k"),
                                 "/work/shared/data/multi30k")
               if path and os.path.isfile(os.path.join(path, "train.en.gz"))), "")
SLICE_LINES = {"train": 300, "val": 30, "test_2016_flickr": 30}
SLICE_SHA256 = {}  # filled by the `slice_dir` fixture

pytestmark = pytest.mark.skipif(not os.path.isfile(os.path.join(SHARED, "train.en.gz")),
                                reason="the shared Multi30k files are not on this machine")


@registry.register_problem
class TranslateEndeMulti30kSlice(translate_multi30k.TranslateEndeMulti30k):
    """The problem on the slice: its checksums, a tiny vocabulary, two training shards."""

    download_retries = 0
    download_backoff_seconds = 0.01

    @property
    def approx_vocab_size(self):
        return 2**9

    @property
    def source_checksums(self):
        return SLICE_SHA256

    @property
    def dataset_splits(self):
        return [{"split": problem.DatasetSplit.TRAIN, "shards": 2},
                {"split": problem.DatasetSplit.EVAL, "shards": 1},
                {"split": problem.DatasetSplit.TEST, "shards": 1}]


def _raw_lines(name):
    with gzip.open(os.path.join(SHARED, name), "rb") as handle:
        return handle.read().decode("utf-8").split("\n")[:-1]


@pytest.fixture(scope="module")
def slice_dir(tmp_path_factory):
    """A folder holding the six sliced files (gzip with mtime 0: the same bytes every run)."""
    root = tmp_path_factory.mktemp("multi30k_slice")
    for name in translate_multi30k.MULTI30K_SHA256:
        prefix = name.split(".")[0]
        lines = _raw_lines(name)[:SLICE_LINES[prefix]]
        data = gzip.compress("".join(line + "\n" for line in lines).encode("utf-8"), mtime=0)
        (root / name).write_bytes(data)
        SLICE_SHA256[name] = hashlib.sha256(data).hexdigest()
    return root


@pytest.fixture(scope="module")
def generated(slice_dir, tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp("multi30k_data"))
    before = sorted(os.listdir(slice_dir))
    registry.problem("translate_ende_multi30k_slice").generate_data(data_dir, str(slice_dir))
    assert sorted(os.listdir(slice_dir)) == before  # files in tmp_dir are read in place
    return data_dir


def _records(path_pattern):
    pairs = []
    for path in sorted(tf.io.gfile.glob(path_pattern)):
        for record in tf.compat.v1.io.tf_record_iterator(path):
            feature = tf.train.Example.FromString(record).features.feature
            pairs.append((list(feature["inputs"].int64_list.value),
                          list(feature["targets"].int64_list.value)))
    return pairs


# ----------------------------------------------------------------------------- text
def test_normalize_sentence_is_nfc_and_keeps_compatibility_characters():
    assert translate_multi30k.normalize_sentence("Ein Ma\u0308dchen. ") == "Ein M\u00e4dchen."
    # NFC keeps the no-break space, the superscript and the ligature that NFKC would fold.
    assert translate_multi30k.normalize_sentence("Nummer\xa028, 5\u00b2 \ufb01") == \
        "Nummer\xa028, 5\u00b2 \ufb01"


def test_real_files_are_nfc_and_pinned():
    for name, sha256 in translate_multi30k.MULTI30K_SHA256.items():
        assert translate_multi30k.file_sha256(os.path.join(SHARED, name)) == sha256
    assert translate_multi30k.MULTI30K_BASE_URL.startswith(
        "https://raw.githubusercontent.com/multi30k/dataset/" +
        translate_multi30k.MULTI30K_COMMIT)


def test_parallel_sentences_refuses_files_of_different_lengths(tmp_path):
    (tmp_path / "a.en").write_text("one\ntwo\n")
    (tmp_path / "a.de").write_text("eins\n")
    with pytest.raises(errors.UserError, match="a.en has more lines than .*a.de"):
        list(translate_multi30k.parallel_sentences(str(tmp_path / "a.en"),
                                                   str(tmp_path / "a.de")))


# ----------------------------------------------------------------------------- datagen
def test_files_vocabulary_and_exact_round_trip(generated):
    name = "translate_ende_multi30k_slice"
    files = sorted(os.listdir(generated))
    assert "vocab.%s.512.subwords" % name in files
    assert ["%s-train-0000%d-of-00002" % (name, i) for i in range(2)] == \
        [f for f in files if "-train-" in f and not f.startswith(".")]
    p = registry.problem(name)
    encoder = p.feature_encoders(generated)["inputs"]
    assert isinstance(encoder, translate_multi30k.NormalizingSubwordTextEncoder)
    assert 300 < encoder.vocab_size < 900
    for split, prefix in (("train", "train"), ("dev", "val"), ("test", "test_2016_flickr")):
        english = _raw_lines(prefix + ".en.gz")[:SLICE_LINES[prefix]]
        german = _raw_lines(prefix + ".de.gz")[:SLICE_LINES[prefix]]
        expected = sorted(zip([s.strip() for s in english], [s.strip() for s in german]))
        stored = sorted((encoder.decode(i[:-1]), encoder.decode(t[:-1]))
                        for i, t in _records(os.path.join(generated, "%s-%s-*" % (name, split))))
        assert stored == expected, split
    # Every training sentence, byte for byte, through the vocabulary (the raw lines are NFC).
    for line in _raw_lines("train.en.gz")[:300] + _raw_lines("train.de.gz")[:300]:
        sentence = line.strip()
        ids = encoder.encode(sentence)
        assert encoder.decode(ids).encode("utf-8") == sentence.encode("utf-8")
        assert encoder.encode(line) == ids  # spaces around a line are not part of it
    # A decomposed umlaut gets the ids of the composed one.
    assert encoder.encode("Ein Ma\u0308dchen") == encoder.encode("Ein M\u00e4dchen")


def test_test_set_is_written_as_text(generated):
    for lang in ("en", "de"):
        path = os.path.join(generated, "translate_ende_multi30k_slice.test_2016_flickr." + lang)
        lines = open(path, encoding="utf-8").read().split("\n")
        assert lines[-1] == "" and len(lines) == 31
        assert lines[:-1] == [s.strip() for s in _raw_lines("test_2016_flickr.%s.gz" % lang)[:30]]


def test_rev_problem_reads_german_as_inputs(generated):
    forward = registry.problem("translate_ende_multi30k_slice")
    reverse = registry.problem("translate_ende_multi30k_slice_rev")
    encoder = forward.feature_encoders(generated)["inputs"]
    dataset = reverse.dataset(ModeKeys.EVAL, generated, shuffle_files=False)
    example = next(iter(dataset))
    source = encoder.decode(example["inputs"].numpy()[:-1])
    target = encoder.decode(example["targets"].numpy()[:-1])
    pairs = dict(zip(_raw_lines("val.de.gz")[:30], _raw_lines("val.en.gz")[:30]))
    assert pairs[source] == target


def test_missing_tmp_dir_is_a_user_error(tmp_path):
    p = registry.problem("translate_ende_multi30k_slice")
    with pytest.raises(errors.UserError, match="pass --tmp_dir"):
        p.split_files(None, problem.DatasetSplit.TRAIN)


# ----------------------------------------------------------------------------- download
class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves `server.files`; `server.drops[path]` answers that many GETs with half a body."""

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802  (http.server's name)
        name = self.path.rsplit("/", 1)[-1]
        self.server.requests.append((name, self.headers.get("Range")))
        body = self.server.files.get(name)
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        requested = re.match(r"bytes=(\d+)-$", self.headers.get("Range") or "")
        start = int(requested.group(1)) if requested else 0
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(body) - 1,
                                                                  len(body)))
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        if self.server.drops.get(name, 0) > 0:
            self.server.drops[name] -= 1
            self.wfile.write(body[start:start + (len(body) - start) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body[start:])


@pytest.fixture
def server():
    # The real files (a dropped body must be longer than one 64 KB read to leave bytes).
    files = {name: open(os.path.join(SHARED, name), "rb").read()
             for name in translate_multi30k.MULTI30K_SHA256}
    with http_testing.local_http_server(_Handler, files=files, drops={},
                                        requests=[]) as httpd:
        yield httpd


def _problem_at(server, commit="c0ffee"):
    p = registry.problem("translate_ende_multi30k")
    p.download_retries, p.download_backoff_seconds = 0, 0.01
    p.base_url = server.url + "/multi30k/dataset/%s/data/task1/raw/" % commit
    return p


def test_download_interrupted_then_resumed(server, tmp_path):
    tmp_dir = str(tmp_path / "tmp")
    server.drops["train.de.gz"] = 1
    p = _problem_at(server)
    with pytest.raises(download.DownloadError, match="rerun to resume"):
        p.split_files(tmp_dir, problem.DatasetSplit.TRAIN)
    partial = os.path.join(tmp_dir, "train.de.gz.incomplete")
    half = os.path.getsize(partial)
    assert 0 < half < len(server.files["train.de.gz"])
    assert not os.path.exists(os.path.join(tmp_dir, "train.de.gz"))
    # The rerun asks only for the missing bytes, and the file is whole and checked.
    paths = p.split_files(tmp_dir, problem.DatasetSplit.TRAIN)
    assert ("train.de.gz", "bytes=%d-" % half) in server.requests
    for path in paths:
        assert open(path, "rb").read() == server.files[os.path.basename(path)]
    count = len(server.requests)
    assert p.split_files(tmp_dir, problem.DatasetSplit.TRAIN) == paths
    assert len(server.requests) == count  # present and checked: no network


def test_corrupt_download_and_corrupt_tmp_file_are_refused(server, tmp_path):
    tmp_dir = tmp_path / "tmp"
    server.files["val.en.gz"] = b"\x00" + server.files["val.en.gz"][1:]
    p = _problem_at(server)
    with pytest.raises(download.DownloadError, match="val.en.gz from .* has sha256 .*removed"):
        p.split_files(str(tmp_dir), problem.DatasetSplit.EVAL)
    assert not (tmp_dir / "val.en.gz").exists()
    (tmp_dir / "val.de.gz").write_bytes(b"not the file")
    (tmp_dir / "val.en.gz").write_bytes(b"nor this")
    with pytest.raises(download.DownloadError, match="val.en.gz has sha256 .*delete it"):
        p.split_files(str(tmp_dir), problem.DatasetSplit.EVAL)


# ----------------------------------------------------------------------------- train, decode
TINY = ("hidden_size=32,filter_size=64,num_heads=2,num_hidden_layers=1,batch_size=512,"
        "learning_rate_warmup_steps=10")


def test_a_few_training_steps_then_a_beam_decode_of_the_test_text(generated, tmp_path):
    from t2t.decoding import decoding, predictor
    from t2t.evaluation import bleu_hook
    from t2t.training import runner, trainer_lib

    # Whichever backend this TensorFlow has (Estimator on 2.15, native on 2.16+).
    name = "translate_ende_multi30k_slice"
    model_dir = str(tmp_path / "train")
    job = runner.TrainingJob(
        model_name="transformer", hparams_set="transformer_multi30k", output_dir=model_dir,
        problem_name=name, data_dir=generated, hparams_overrides=TINY, train_steps=8,
        run_config={"random_seed": 1, "save_summary_steps": 0, "log_step_count_steps": 1000},
        experiment={"schedule": "train"})
    runner.run(runner.prepare(job))
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-8")

    hparams = trainer_lib.create_hparams("transformer_multi30k", TINY, data_dir=generated,
                                         problem_name=name)
    model = predictor.create_predictor(   # an Estimator or a CheckpointPredictor
        "transformer", hparams, model_dir, decode_hparams=decoding.decode_hparams("beam_size=4"),
        random_seed=1)

    source = tmp_path / "test.en"
    english = open(os.path.join(generated, name + ".test_2016_flickr.en")).read().split("\n")
    source.write_text("\n".join(english[:6]) + "\n", encoding="utf-8")
    target = tmp_path / "test.de.decodes"
    decodes = decoding.decode_from_file(model, str(source), hparams,
                                        decoding.decode_hparams("beam_size=4,alpha=0.6"),
                                        decode_to_file=str(target))
    assert len(decodes) == 6
    assert target.read_text(encoding="utf-8") == "".join(d + "\n" for d in decodes)
    encoder = hparams.problem.feature_encoders(generated)["targets"]
    for decode in decodes:  # detokenized text: no ids, no EOS marker, no escapes
        assert "<EOS>" not in decode and "\\" not in decode and "_" not in decode
        assert encoder.decode(encoder.encode(decode)) == decode
    references = open(os.path.join(generated, name + ".test_2016_flickr.de")).read()
    score, signature = bleu_hook.sacrebleu_corpus_score(decodes, references.split("\n")[:6])
    assert 0.0 <= score <= 100.0 and "tok:13a" in signature
