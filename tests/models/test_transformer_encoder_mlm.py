"""transformer_encoder_mlm: masked-only loss, pooler, next-sentence loss, encode_ids = body."""
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2, rewriter_config_pb2

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.model import model_hparams
from t2t.models import transformer_encoder_mlm

VOCAB = 20
TRAIN, EVAL = ModeKeys.TRAIN, ModeKeys.EVAL
_v1 = tf.compat.v1


def session(graph):
    rewrites = rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True)
    return _v1.Session(graph=graph, config=config_pb2.ConfigProto(
        graph_options=config_pb2.GraphOptions(rewrite_options=rewrites)))


def tiny_hparams():
    hparams = registry.hparams("transformer_encoder_mlm_tiny")
    hparams.hidden_size = 16
    hparams.filter_size = 32
    hparams.num_heads = 2
    hparams.num_hidden_layers = 2
    hparams.problem_hparams = model_hparams.test_problem_hparams(VOCAB, VOCAB)
    return hparams


def batch():
    ids = np.array([[2, 7, 4, 9, 3, 11, 12, 3], [2, 8, 8, 3, 4, 3, 0, 0]], np.int32)
    targets = np.zeros_like(ids)
    targets[0, 2], targets[1, 4] = 10, 13
    types = np.array([[0, 0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 0, 1, 1, 0, 0]], np.int32)
    return {"inputs": ids[:, :, None, None], "targets": targets[:, :, None, None],
            "input_type_ids": types, "next_sentence_label": np.array([[0], [1]], np.int32)}


def test_registered_names():
    assert registry.model("transformer_encoder_mlm") is \
        transformer_encoder_mlm.TransformerEncoderMlm
    base = registry.hparams("transformer_encoder_mlm_base")
    assert (base.hidden_size, base.num_hidden_layers, base.num_heads) == (768, 12, 12)
    assert registry.hparams("transformer_encoder_mlm_tiny").hidden_size == 128
    # The classification encoder keeps its behaviour: no type embedding, no pooler.
    assert registry.model("transformer_encoder").__name__ == "TransformerEncoder"


def test_loss_counts_masked_positions_only_and_encode_ids_equals_body():
    features = batch()
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(1)
        model = transformer_encoder_mlm.TransformerEncoderMlm(tiny_hparams(), EVAL)
        logits, losses = model({k: tf.constant(v) for k, v in features.items()})
        body_outputs = model.encoder_outputs
        ids = features["inputs"][:, :, 0, 0]
        direct = model.encode_ids(tf.constant(ids), tf.constant((ids != 0).astype(np.int32)),
                                  tf.constant(features["input_type_ids"]))
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            values = sess.run({"logits": logits, "losses": losses, "body": body_outputs,
                               "direct": direct})
    logits = values["logits"][:, :, 0, 0, :]
    assert logits.shape == (2, 8, VOCAB)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = features["targets"][:, :, 0, 0]
    masked = targets != 0
    expected = -log_probs[masked, targets[masked]].mean()
    np.testing.assert_allclose(values["losses"]["training"], expected, rtol=1e-5)
    assert values["losses"]["next_sentence"] > 0
    assert set(values["direct"]) == {"sequence_output", "pooled_output", "encoder_outputs"}
    for key in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(values["direct"][key], values["body"][key], atol=1e-6)
    assert len(values["direct"]["encoder_outputs"]) == 2
    np.testing.assert_array_equal(values["direct"]["encoder_outputs"][-1],
                                  values["direct"]["sequence_output"])
    pooled = values["direct"]["pooled_output"]
    assert pooled.shape == (2, 16) and np.abs(pooled).max() <= 1.0  # tanh


def test_padding_and_type_ids_matter_as_they_should():
    graph = tf.Graph()
    with graph.as_default():
        model = transformer_encoder_mlm.TransformerEncoderMlm(tiny_hparams(), EVAL)
        ids = tf.constant([[2, 7, 3, 9, 3, 0, 0]] * 3)
        mask = tf.constant([[1, 1, 1, 1, 1, 0, 0]] * 3)
        types = tf.constant([[0, 0, 0, 1, 1, 0, 0], [0, 0, 0, 1, 1, 1, 1],
                             [0, 0, 0, 0, 0, 0, 0]])
        out = model.encode_ids(ids, mask, types)
        longer = model.encode_ids(ids[:, :5], mask[:, :5], types[:, :5])
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            out, longer = sess.run([out, longer])
    seq = out["sequence_output"]
    # Type ids at padding positions change nothing; on real tokens they do.
    np.testing.assert_allclose(seq[0, :5], seq[1, :5], atol=1e-6)
    assert np.abs(seq[0, :5] - seq[2, :5]).max() > 1e-3
    # Padding is invisible: the same as the unpadded sequence.
    np.testing.assert_allclose(seq[0, :5], longer["sequence_output"][0], atol=1e-5)
    np.testing.assert_allclose(out["pooled_output"][0], longer["pooled_output"][0], atol=1e-5)


def test_training_lowers_the_masked_lm_loss():
    features = batch()
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(2)
        hparams = tiny_hparams()
        hparams.learning_rate_warmup_steps = 10
        model = transformer_encoder_mlm.TransformerEncoderMlm(hparams, TRAIN)
        _, losses = model({k: tf.constant(v) for k, v in features.items()})
        loss = losses["training"] + losses["next_sentence"]
        train_op = model.optimize(loss)
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            first = sess.run(losses["training"])
            for _ in range(60):
                sess.run(train_op)
            last = sess.run(losses["training"])
    assert last < 0.5 * first
