"""LSTM seq2seq models: lengths, padding, attention, training and errors."""
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.layers.modality_type import ModalityType
from t2t.model import model_hparams
from t2t.models import lstm

from t2t_model_testing import (PREDICT, TRAIN, batch_features, copy_examples, mean_first,
    mean_last, pad_ids, session, train_losses)

_v1 = tf.compat.v1

MODELS = [
    ("lstm_seq2seq", "lstm_seq2seq"),
    ("lstm_seq2seq_attention", "lstm_luong_attention"),
    ("lstm_seq2seq_attention", "lstm_bahdanau_attention_multi"),
    ("lstm_seq2seq_bidirectional_encoder", "lstm_seq2seq"),
    ("lstm_seq2seq_attention_bidirectional_encoder", "lstm_bahdanau_attention"),
]


def shrink(hp, hidden=16):
    hp.hidden_size = hidden
    hp.num_hidden_layers = 1
    if "attention_layer_size" in hp:
        hp.attention_layer_size = hidden
    return hp


def run(fetches):
    with session() as sess:
        sess.run(_v1.global_variables_initializer())
        return sess.run(fetches)


# ------------------------------------------------------------------ lengths
@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=7), min_size=1,
                max_size=4))
def test_lengths_from_ids_is_last_nonzero_position_plus_one(rows):
    width = max(len(r) for r in rows)
    ids = np.array([r + [0] * (width - len(r)) for r in rows], dtype=np.int32)
    expected = [max([i + 1 for i, v in enumerate(r) if v != 0], default=0) for r in ids]
    assert lstm.lengths_from_ids(tf.constant(ids)).numpy().tolist() == expected
    four_d = tf.constant(ids[:, :, None, None])
    assert lstm.lengths_from_ids(four_d).numpy().tolist() == expected


def test_length_from_embedding_counts_nonzero_vectors():
    emb = tf.constant([[[[1.0, 0.0]], [[0.0, 2.0]], [[0.0, 0.0]]],
                       [[[3.0, 3.0]], [[0.0, 0.0]], [[0.0, 0.0]]]])
    assert lstm.length_from_embedding(emb).numpy().tolist() == [2, 1]


# ------------------------------------------------------------------ hparams
def test_hparams_sets_have_t2t_values():
    hp = registry.hparams("lstm_seq2seq")
    assert (hp.batch_size, hp.hidden_size, hp.num_hidden_layers) == (1024, 128, 2)
    assert (hp.initializer, hp.initializer_gain, hp.weight_decay) == (
        "uniform_unit_scaling", 1.0, 0.0)
    assert hp.daisy_chain_variables is False
    attention = registry.hparams("lstm_attention")
    assert attention.attention_mechanism == "bahdanau"
    assert (attention.attention_layer_size, attention.output_attention,
            attention.num_heads) == (128, True, 1)
    assert registry.hparams("lstm_seq2seq_attention") == attention
    assert registry.hparams("lstm_luong_attention").attention_mechanism == "luong"
    assert registry.hparams("lstm_luong_attention_multi").num_heads == 4
    assert registry.hparams("lstm_bahdanau_attention_multi").num_heads == 4


# ------------------------------------------------------------------ models
@pytest.mark.parametrize("model_name,hparams_set", MODELS)
def test_model_builds_and_padding_changes_nothing(model_name, hparams_set):
    """Logits have T2T's shape, and extra padding leaves every real position's logits."""
    examples = copy_examples(np.random.RandomState(0), 3, 4)
    tight = batch_features(examples)
    loose = batch_features(examples, tight["inputs"].shape[1] + 3,
                           tight["targets"].shape[1] + 2)
    with tf.Graph().as_default():
        model = registry.model(model_name)(shrink(registry.hparams(hparams_set)), TRAIN,
                                           model_hparams.test_problem_hparams(4, 4))
        model.set_mode(ModeKeys.EVAL)  # no dropout: compare exactly
        tight_logits, losses = model({k: tf.constant(v) for k, v in tight.items()})
        loose_logits, _ = model({k: tf.constant(v) for k, v in loose.items()})
        assert tight_logits.shape.as_list() == [3, tight["targets"].shape[1], 1, 1, 4]
        tight_v, loose_v, loss_v = run([tight_logits, loose_logits, losses["training"]])
    assert np.isfinite(loss_v)
    for i, (_, targets) in enumerate(examples):
        np.testing.assert_allclose(tight_v[i, :len(targets)], loose_v[i, :len(targets)],
                                   atol=1e-5)


def test_decoder_only_lstm_and_encoder_classifier():
    feats = batch_features(copy_examples(np.random.RandomState(1), 2, 5))
    with tf.Graph().as_default():
        model = registry.model("lstm_seq2seq")(shrink(registry.hparams("lstm_seq2seq")),
                                               TRAIN, model_hparams.test_problem_hparams(None, 4))
        logits, losses = model({"targets": tf.constant(feats["targets"])})
        assert logits.shape.as_list() == [2, feats["targets"].shape[1], 1, 1, 4]
        assert not any("encoder" in v.name for v in _v1.global_variables())
        assert np.isfinite(run(losses["training"]))
    with tf.Graph().as_default():
        p_hp = model_hparams.test_problem_hparams(4, 3, target_modality=ModalityType.CLASS_LABEL)
        model = registry.model("lstm_encoder")(shrink(registry.hparams("lstm_seq2seq")),
                                               TRAIN, p_hp)
        logits, _ = model({"inputs": tf.constant(feats["inputs"]),
                           "targets": tf.constant([[[[2]]], [[[0]]]])})
        assert logits.shape.as_list() == [2, 1, 1, 1, 3]


@pytest.mark.parametrize("model_name,hparams_set", [
    ("lstm_seq2seq", "lstm_seq2seq"), ("lstm_seq2seq_attention", "lstm_attention")])
def test_loss_falls_on_copy(model_name, hparams_set):
    rng = np.random.RandomState(2)
    batches = [batch_features(copy_examples(rng, 16, 4)) for _ in range(4)]
    losses = train_losses(model_name, shrink(registry.hparams(hparams_set)),
                          model_hparams.test_problem_hparams(4, 4), batches, steps=40)
    assert mean_last(losses) < 0.6 * mean_first(losses)


def test_greedy_and_beam_decoding_shapes():
    inputs = pad_ids([[2, 3, 1], [3, 1]])
    with tf.Graph().as_default():
        model = registry.model("lstm_seq2seq_attention")(
            shrink(registry.hparams("lstm_luong_attention")), PREDICT,
            model_hparams.test_problem_hparams(4, 4))
        greedy = model.infer({"inputs": tf.constant(inputs)}, decode_length=2)
        beam = model.infer({"inputs": tf.constant(inputs)}, decode_length=2, beam_size=2)
        greedy_v, beam_v = run([greedy, beam])
    assert greedy_v["outputs"].shape == (2, 5)  # no stop_at_eos: input length + 2
    assert beam_v["outputs"].shape[0] == 2 and beam_v["outputs"].shape[1] <= 6
    assert beam_v["scores"].shape == (2,)


# ------------------------------------------------------------------ errors
def _build(model_name, hp, features, p_hp=None):
    with tf.Graph().as_default():
        model = registry.model(model_name)(hp, TRAIN,
                                           p_hp or model_hparams.test_problem_hparams(4, 4))
        model({k: tf.constant(v) for k, v in features.items()})


def test_user_errors_have_one_line_fixes():
    feats = batch_features(copy_examples(np.random.RandomState(3), 2, 3))
    hp = shrink(registry.hparams("lstm_seq2seq"))
    hp.initializer = "orthogonal"
    with pytest.raises(ValueError, match="initializer=orthogonal; use the lstm_seq2seq"):
        _build("lstm_seq2seq", hp, feats)
    packed = dict(feats, inputs_segmentation=np.ones([2, feats["inputs"].shape[1]], np.int32))
    with pytest.raises(ValueError, match="cannot read packed rows"):
        _build("lstm_seq2seq", shrink(registry.hparams("lstm_seq2seq")), packed)
    with pytest.raises(ValueError, match="needs inputs; use lstm_seq2seq"):
        _build("lstm_seq2seq_attention", shrink(registry.hparams("lstm_attention")),
               {"targets": feats["targets"]}, model_hparams.test_problem_hparams(None, 4))
    hp = shrink(registry.hparams("lstm_attention"))
    hp.attention_mechanism = "telepathy"
    with pytest.raises(ValueError, match="unknown hparams.attention_mechanism 'telepathy'"):
        _build("lstm_seq2seq_attention", hp, feats)
