"""Pretrain -> export -> load and fine-tune: the TF Hub walk-through, end to end.

One module fixture runs docs/tfhub.md's commands on a small corpus: datagen for
masked_lm_tmpdir, t2t-trainer (then resumed), t2t-exporter --export_as_tfhub, and
hub_finetune.py, which uses the export as TF Hub's text API page shows in a fresh Python
process where importing t2t is blocked. The tests check what each step left behind.
"""
import json
import os
import random
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2

from t2t.core import errors, registry
from t2t.core.modes import ModeKeys
from t2t.hub import encoder as encoder_lib
from t2t.hub import export as hub_export
from t2t.models import transformer_encoder_mlm
from t2t.problems import masked_lm
from t2t.training import trainer_lib

BIN = os.path.dirname(sys.executable)
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hub_finetune.py")
PROBLEM, MODEL, HPARAMS_SET = "masked_lm_tmpdir", "transformer_encoder_mlm", \
    "transformer_encoder_mlm_tiny"
TINY = ("hidden_size=32,filter_size=64,num_heads=2,batch_size=512,"
        "learning_rate_warmup_steps=100,learning_rate_constant=0.3")
SEQ_LENGTH = 32
PACK_LENGTH = 12
WORDS = "the a cat dog sat ran on under mat table big small blue quickly slowly".split()
PAIRS = [["the big cat sat on the small mat under the table quickly .", "a dog ran ."],
         ["a dog ran .", "the small blue cat ran quickly under a big table on the mat ."],
         ["the cat sat on a mat under the big blue table .",
          "a small dog ran slowly on the mat under the table ."]]
TIMEOUT = 600


def _sentence(rng, red=None):
    words = [rng.choice(WORDS) for _ in range(rng.randint(4, 10))]
    if red:
        words.insert(rng.randrange(len(words) + 1), "red")
    return " ".join(words) + " ."


def _write_corpus(folder, rng):
    os.makedirs(folder)
    for name, count in (("train.txt", 300), ("dev.txt", 40)):
        with open(os.path.join(folder, name), "w") as f:
            for i in range(count):
                f.write(_sentence(rng, red=rng.random() < 0.3) + "\n")
                if i % 10 == 9:
                    f.write("\n")


def _labelled(rng, count):
    """Sentences with or without "red" (label 1 / 0), balanced."""
    return [[_sentence(rng, red=bool(i % 2)), i % 2] for i in range(count)]


def _run(args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert result.returncode == 0, "%s failed:\n%s" % (args[0], result.stderr[-3000:])
    return result


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub")
    rng = random.Random(0)
    tmp_dir, data_dir, output_dir = (str(root / name) for name in ("text", "data", "train"))
    _write_corpus(tmp_dir, rng)
    random.seed(1)
    registry.problem(PROBLEM).generate_data(data_dir, tmp_dir)
    common = ["--problem=" + PROBLEM, "--model=" + MODEL, "--hparams_set=" + HPARAMS_SET,
              "--data_dir=" + data_dir, "--output_dir=" + output_dir]
    train = [os.path.join(BIN, "t2t-trainer")] + common + [
        "--hparams=" + TINY, "--eval_steps=3", "--local_eval_frequency=1000",
        "--random_seed=1"]
    first = _run(train + ["--train_steps=100"])
    resumed = _run(train + ["--train_steps=250"])
    # What exports killed part way left: an earlier version's folder and ours.
    for leftover in ("hub.incomplete-4242/encoder", ".hub.x1y2.incomplete/preprocessor"):
        os.makedirs(os.path.join(output_dir, "export", leftover, "variables"))
    exported = _run([os.path.join(BIN, "t2t-exporter")] + common + [
        "--export_as_tfhub", "--default_seq_length=%d" % SEQ_LENGTH])
    data = {"train": _labelled(rng, 200), "test": _labelled(rng, 100), "pairs": PAIRS,
            "seq_length": PACK_LENGTH, "learning_rate": 1e-3, "epochs": 10}
    data_path, results_path = str(root / "data.json"), str(root / "results.json")
    with open(data_path, "w") as f:
        json.dump(data, f)
    export_dir = os.path.join(output_dir, "export", "hub")
    _run([sys.executable, SCRIPT, export_dir, data_path, results_path])
    with open(results_path) as f:
        results = json.load(f)
    return {"data_dir": data_dir, "output_dir": output_dir, "export_dir": export_dir,
            "first": first, "resumed": resumed, "exported": exported, "results": results}


def _hparams(pipeline):
    return trainer_lib.create_hparams(
        HPARAMS_SET, data_dir=pipeline["data_dir"], problem_name=PROBLEM,
        hparams_path=os.path.join(pipeline["output_dir"], "hparams.json"))


# ----------------------------------------------------------------------------- training
def test_trainer_checkpoints_resumes_and_reports_masked_token_metrics(pipeline):
    assert tf.io.gfile.exists(os.path.join(pipeline["output_dir"], "model.ckpt-100.index"))
    assert tf.io.gfile.exists(os.path.join(pipeline["output_dir"], "model.ckpt-250.index"))
    assert "resuming at global step 100" in pipeline["resumed"].stderr
    metrics = {}
    for run, step in (("first", 100), ("resumed", 250)):
        line = re.search(r"Evaluation of model.ckpt-%d at global step \d+: (.*)" % step,
                         pipeline[run].stderr)
        assert line, pipeline[run].stderr[-2000:]
        metrics[run] = dict(re.findall(r"(\S+) (-?[0-9.]+)", line.group(1)))
    # Masked-token accuracy and log-likelihood (only masked positions count): well above
    # a uniform guess over the vocabulary after 250 steps.
    vocab_size = registry.problem(PROBLEM).feature_encoders(
        pipeline["data_dir"])["inputs"].vocab_size
    for run in ("first", "resumed"):
        assert 0.0 <= float(metrics[run]["metrics-%s/targets/accuracy" % PROBLEM]) <= 1.0
        assert float(metrics[run]["loss"]) > 0
    log_likelihood = float(metrics["resumed"]["metrics-%s/targets/neg_log_perplexity" % PROBLEM])
    assert log_likelihood > -np.log(vocab_size) + 0.5


# ----------------------------------------------------------------------------- export
def test_exporter_writes_three_reusable_savedmodels(pipeline):
    export_dir = pipeline["export_dir"]
    assert pipeline["exported"].stdout.strip().splitlines()[-1] == export_dir
    # Nothing left over, also of the exports killed part way (made in the fixture).
    assert sorted(os.listdir(os.path.dirname(export_dir))) == ["hub"]
    assert "unsupported characters" not in pipeline["exported"].stderr
    for part in ("preprocessor", "encoder", "embedding"):
        assert tf.io.gfile.exists(os.path.join(export_dir, part, "saved_model.pb"))
    vocab_asset = os.listdir(os.path.join(export_dir, "preprocessor", "assets"))
    assert vocab_asset == ["vocab.%s.8192.subwords" % PROBLEM]


def test_seed_page_usage_runs_without_t2t(pipeline):
    results = pipeline["results"]
    assert results["t2t_imported"] is False
    assert results["tensorflow_text_imported"] is False
    inputs = results["encoder_inputs"]
    assert sorted(inputs) == ["input_mask", "input_type_ids", "input_word_ids"]
    assert np.array(inputs["input_word_ids"]).shape == (3, SEQ_LENGTH)
    assert [row[0] for row in inputs["input_word_ids"]] == [masked_lm.CLS_ID] * 3
    assert results["default_equals_pooled"] is True
    assert results["default_shape"] == [3, 32]
    assert results["sequence_shape"] == [3, SEQ_LENGTH, 32]
    assert results["num_encoder_outputs"] == 2
    assert results["last_encoder_output_is_sequence_output"] is True
    assert results["num_variables"] == results["num_trainable_variables"] > 20
    assert results["regularization_losses"] == 0
    # Dropout only with training=True.
    assert results["inference_max_difference"] == 0.0
    assert results["inference_equals_default_call"] is True
    assert results["training_max_difference"] > 1e-3
    assert results["special_tokens"] == {
        "vocab_size": results["special_tokens"]["vocab_size"], "start_of_sequence_id": 2,
        "end_of_segment_id": 3, "padding_id": 0, "mask_id": 4}
    # The text-embedding SavedModel: strings -> pooled_output of the same encoder.
    assert np.array(results["embedding"]).shape == (3, 32)
    assert results["embedding_max_difference_to_encoder"] < 1e-6
    assert results["embedding_keras_shape"] == [3, 32]


def test_tokenize_and_bert_pack_inputs_truncate_long_pairs(pipeline):
    results = pipeline["results"]
    vocab = registry.problem(PROBLEM).feature_encoders(pipeline["data_dir"])["inputs"]
    assert results["tokens_are_ragged"] and results["tokens_dtype"] == "int32"
    premises = [vocab.encode(p) for p, _ in PAIRS]
    hypotheses = [vocab.encode(h) for _, h in PAIRS]
    assert results["tokenized_premises"] == premises
    assert results["tokenized_hypotheses"] == hypotheses
    assert all(len(p) + len(h) + 3 > PACK_LENGTH for p, h in zip(premises, hypotheses))
    packed = results["packed"]
    for row, (premise, hypothesis) in enumerate(zip(premises, hypotheses)):
        words = packed["input_word_ids"][row]
        assert len(words) == PACK_LENGTH and packed["input_mask"][row] == [1] * PACK_LENGTH
        # [CLS] A' [SEP] B' [SEP]: prefixes sharing the budget of 12 - 3 round-robin.
        keep_a, keep_b = masked_lm.round_robin_lengths([len(premise), len(hypothesis)], 9)
        assert words == ([2] + premise[:keep_a] + [3] + hypothesis[:keep_b] + [3])
        assert packed["input_type_ids"][row] == [0] * (keep_a + 2) + [1] * (keep_b + 1)
    # Row 0: a short hypothesis leaves its share to the premise.
    assert masked_lm.round_robin_lengths([len(premises[0]), len(hypotheses[0])], 9)[1] == \
        len(hypotheses[0])
    single = results["packed_single"]
    for row, premise in enumerate(premises):
        kept = min(len(premise), PACK_LENGTH - 2)
        assert single["input_word_ids"][row] == ([2] + premise[:kept] + [3] +
                                                 [0] * (PACK_LENGTH - kept - 2))
        assert single["input_type_ids"][row] == [0] * PACK_LENGTH
    assert results["keras_packed_equal"] is True


def test_fine_tuning_the_encoder_beats_the_frozen_encoder(pipeline):
    fine_tuned, frozen = pipeline["results"]["fine_tuned"], pipeline["results"]["frozen"]
    assert fine_tuned["trainable_weights"] == fine_tuned["weights"] > 20
    assert frozen["trainable_weights"] == 0
    assert fine_tuned["encoder_weight_change"] > 1e-3
    assert frozen["encoder_weight_change"] == 0.0
    assert fine_tuned["accuracy"] >= 0.85
    assert fine_tuned["accuracy"] > frozen["accuracy"] + 0.1, (fine_tuned, frozen)


def test_encoder_equals_the_t2t_model_on_the_same_ids(pipeline):
    preprocessor = tf.saved_model.load(os.path.join(pipeline["export_dir"], "preprocessor"))
    encoder = tf.saved_model.load(os.path.join(pipeline["export_dir"], "encoder"))
    inputs = preprocessor(tf.constant([p for pair in PAIRS for p in pair]))
    inputs = {k: v.numpy() for k, v in inputs.items()}
    exported = encoder(inputs, training=False)
    hparams = _hparams(pipeline)
    graph = tf.Graph()
    with graph.as_default():
        model = transformer_encoder_mlm.TransformerEncoderMlm(hparams,
                                                              ModeKeys.EVAL)
        outputs = model.encode_ids(*[tf.constant(inputs[k]) for k in encoder_lib.INPUT_NAMES])
        saver = tf.compat.v1.train.Saver(tf.compat.v1.global_variables())
        rewrites = rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True)
        config = config_pb2.ConfigProto(graph_options=config_pb2.GraphOptions(
            rewrite_options=rewrites))
        with tf.compat.v1.Session(graph=graph, config=config) as sess:
            saver.restore(sess, tf.train.latest_checkpoint(pipeline["output_dir"]))
            reference = sess.run(outputs)
    for key in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(exported[key].numpy(), reference[key], atol=1e-5)
    for got, want in zip(exported["encoder_outputs"], reference["encoder_outputs"]):
        np.testing.assert_allclose(got.numpy(), want, atol=1e-5)


def test_export_errors_are_one_line_user_errors(pipeline, tmp_path):
    hparams = _hparams(pipeline)
    checkpoint = pipeline["output_dir"]
    with pytest.raises(errors.UserError, match="model transformer has none"):
        hub_export.export_tfhub("transformer", hparams, checkpoint, str(tmp_path / "a"))
    with pytest.raises(errors.UserError, match="no checkpoint"):
        hub_export.export_tfhub(MODEL, hparams, str(tmp_path), str(tmp_path / "b"))
    hparams.hidden_size = 48
    with pytest.raises(errors.UserError, match="has shape .* but the hparams give"):
        hub_export.export_tfhub(MODEL, hparams, checkpoint, str(tmp_path / "c"))
    assert not os.listdir(str(tmp_path))
