"""transformer_span: outputs, the loss, codepoint hashing learns, warm start."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import errors, registry
from t2t.core.hparam import HParams
from t2t.core.modes import ModeKeys
from t2t.models import transformer_span

B, L = 4, 16
_v1 = tf.compat.v1


def problem_hparams():
    return HParams(loss_multiplier=1.0, batch_size_multiplier=1, stop_at_eos=False,
                   modality={}, vocab_size={"inputs": 0x110000}, vocabulary={},
                   input_space_id=0, target_space_id=0, was_reversed=False, was_copy=False,
                   input_is_codepoints=True)


def features(seed=0):
    rng = np.random.RandomState(seed)
    ids = rng.randint(0x600, 0x6ff, size=(B, L))
    mask = np.ones((B, L), dtype=np.int32)
    mask[:, 12:] = 0
    ids[mask == 0] = 0
    segments = np.zeros((B, L), dtype=np.int32)
    segments[:, 4:12] = 1
    # The answer: the position holding codepoint 0x6ff, put somewhere in the document.
    starts = rng.randint(4, 12, size=B)
    ids[np.arange(B), starts] = 0x6ff
    return {"inputs": tf.constant(ids.reshape(B, L, 1, 1), tf.int32),
            "input_mask": tf.constant(mask), "segment_ids": tf.constant(segments),
            "start_position": tf.constant(starts, tf.int32),
            "end_position": tf.constant(starts, tf.int32),
            "answer_type": tf.constant([3] * B, tf.int32)}


def build(name=None, mode=ModeKeys.TRAIN):
    hparams = registry.hparams("transformer_span_test")
    kwargs = {"name": name} if name else {}
    return transformer_span.TransformerSpan(hparams, mode, problem_hparams(), **kwargs)


def test_outputs_and_loss_are_the_mean_of_three_cross_entropies():
    with tf.Graph().as_default():
        feats = features()
        outputs, losses = build()(feats)
        with _v1.Session() as session:
            session.run(_v1.global_variables_initializer())
            out, loss, labels = session.run((outputs, losses["training"], feats))
    assert out["start_logits"].shape == (B, L) and out["answer_type_logits"].shape == (B, 5)
    assert (out["start_logits"][:, 12:] <= -9000).all()   # padding never wins

    def xent(logits, label):
        logits = logits - logits.max(-1, keepdims=True)
        log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        return -log_probs[np.arange(len(label)), label].mean()

    expected = (xent(out["start_logits"], labels["start_position"]) +
                xent(out["end_logits"], labels["end_position"]) +
                xent(out["answer_type_logits"], labels["answer_type"])) / 3
    assert loss == pytest.approx(expected, rel=1e-4)


def test_codepoint_model_learns_a_marked_position():
    with tf.Graph().as_default():
        _v1.set_random_seed(1)
        feats = features()
        _, losses = build()(feats)
        train = _v1.train.AdamOptimizer(0.01).minimize(losses["training"])
        with _v1.Session() as session:
            session.run(_v1.global_variables_initializer())
            first = session.run(losses["training"])
            for _ in range(60):
                session.run(train)
            last = session.run(losses["training"])
    assert last < 0.2 * first


def test_predict_has_no_loss():
    with tf.Graph().as_default():
        feats = features()
        for name in ("start_position", "end_position", "answer_type"):
            feats.pop(name)
        outputs, losses = build(mode=ModeKeys.PREDICT)(feats)
        assert set(outputs) == {"start_logits", "end_logits", "answer_type_logits"}
        with _v1.Session() as session:
            assert session.run(losses["training"]) == 0.0


def _save_pretrained(path):
    with tf.Graph().as_default():
        build(name="pretrained_encoder")(features())
        with _v1.Session() as session:
            session.run(_v1.global_variables_initializer())
            values = {v.name.split("/", 1)[1]: session.run(v)
                      for v in _v1.trainable_variables()}
            _v1.train.Saver().save(session, path)
    return values


def test_warm_start_maps_variables_below_the_top_scope(tmp_path):
    checkpoint = str(tmp_path / "pretrained" / "model.ckpt")
    pretrained = _save_pretrained(checkpoint)
    with tf.Graph().as_default():
        model = build()
        model(features())
        hparams = registry.hparams("transformer_span_test")
        mapping = transformer_span.warm_start_encoder(checkpoint, hparams, model.name)
        assert any("/body/encoder/layer_0/" in name for name in mapping)
        with _v1.Session() as session:
            session.run(_v1.global_variables_initializer())
            for var in _v1.trainable_variables():
                key = var.name.split("/", 1)[1]
                np.testing.assert_array_equal(session.run(var), pretrained[key])


def test_warm_start_without_any_match_is_a_user_error(tmp_path):
    checkpoint = str(tmp_path / "other" / "model.ckpt")
    with tf.Graph().as_default():
        _v1.get_variable("lstm_seq2seq/body/encoder/kernel", [3, 7])
        with _v1.Session() as session:
            session.run(_v1.global_variables_initializer())
            _v1.train.Saver().save(session, checkpoint)
    with tf.Graph().as_default():
        model = build()
        model(features())
        with pytest.raises(errors.UserError, match="no variable matches"):
            transformer_span.warm_start_encoder(checkpoint, registry.hparams(
                "transformer_span_test"), model.name)
        with pytest.raises(errors.UserError, match="not a readable checkpoint"):
            transformer_span.warm_start_encoder(str(tmp_path / "none"), registry.hparams(
                "transformer_span_test"), model.name)
