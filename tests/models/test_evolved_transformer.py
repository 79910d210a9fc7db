"""Evolved Transformer: T2T's variable names and hparams, causality, cached decoding, training."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.model import model_hparams
from t2t.models import evolved_transformer

from t2t_model_testing import (EVAL, PREDICT, TRAIN, batch_features, copy_examples, mean_first,
    mean_last, session, train_losses)

_v1 = tf.compat.v1


def tiny_hparams(**overrides):
    hp = registry.hparams("evolved_transformer_tiny")
    hp.hidden_size, hp.filter_size, hp.num_heads = 16, 32, 2
    hp.num_encoder_layers, hp.num_decoder_layers = 1, 2
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def test_hparams_sets_have_t2ts_values():
    base = registry.hparams("evolved_transformer_base")
    assert (base.num_encoder_layers, base.num_decoder_layers, base.hidden_size) == (3, 4, 512)
    assert base.learning_rate_constant == pytest.approx(2.0 / 8000 ** 0.5)
    assert base.learning_rate_schedule == (
        "constant*linear_warmup*single_cycle_cos_decay*rsqrt_hidden_size")
    assert registry.hparams("evolved_transformer_tiny").learning_rate_schedule == (
        "constant*single_cycle_cos_decay")
    deep = registry.hparams("evolved_transformer_deep")
    assert (deep.num_encoder_layers, deep.num_decoder_layers, deep.hidden_size) == (9, 10, 640)
    tpu = registry.hparams("evolved_transformer_big_tpu")
    assert tpu.learning_rate_constant == pytest.approx(1 / 10000 ** 0.5)
    assert tpu.optimizer == "Adafactor" and tpu.hidden_size == 1024
    basic = registry.hparams("evolved_transformer_tpu_basic")
    assert (basic.batch_size, basic.max_length, basic.num_trainable_top_decoder_layers) == (
        8192, 256, -1)
    assert evolved_transformer._capped_double_heads(4) == 8
    assert evolved_transformer._capped_double_heads(16) == 16


def test_variables_have_t2ts_names_and_shapes():
    feats = batch_features(copy_examples(np.random.RandomState(0), 2, 4))
    with tf.Graph().as_default():
        model = registry.model("evolved_transformer")(
            tiny_hparams(), TRAIN, model_hparams.test_problem_hparams(4, 4))
        logits, _ = model({k: tf.constant(v) for k, v in feats.items()})
        shapes = {v.name[:-2]: v.shape.as_list() for v in _v1.global_variables()}
    assert logits.shape.as_list() == [2, feats["targets"].shape[1], 1, 1, 4]
    enc = "evolved_transformer/body/encoder/layer_0/"
    dec = "evolved_transformer/body/decoder/layer_1/"
    expected = {
        enc + "gated_linear_unit/dense/kernel": [16, 16],
        enc + "gated_linear_unit/dense_1/bias": [16],
        enc + "conv_branches/dense/kernel": [16, 64],
        enc + "conv_branches/standard_conv_3x1/kernel": [3, 16, 8],
        enc + "conv_branches/separable_conv_9x1/depthwise_kernel": [9, 64, 1],
        enc + "conv_branches/separable_conv_9x1/pointwise_kernel": [1, 64, 8],
        enc + "conv_branches/layer_prepostprocess_1/layer_norm/layer_norm_scale": [64],
        enc + "self_attention/multihead_attention/q/kernel": [16, 16],
        enc + "dense_layers/dense_1/kernel": [64, 16],
        dec + "16_head_self_attention/multihead_attention/k/kernel": [16, 16],
        dec + "first_attend_to_encoder/multihead_attention/v/kernel": [16, 16],
        dec + "conv_branches/separable_conv11x1/depthwise_kernel": [11, 16, 1],
        dec + "conv_branches/separable_conv11x1/pointwise_kernel": [1, 16, 32],
        dec + "conv_branches/separable_conv_7x1_1/pointwise_kernel": [1, 16, 8],
        dec + "conv_branches/separable_conv_7x1_2/depthwise_kernel": [7, 32, 1],
        dec + "conv_branches/separable_conv_7x1_2/pointwise_kernel": [1, 32, 16],
        dec + "self_attention/multihead_attention/output_transform/kernel": [16, 16],
        dec + "second_attend_to_encoder/multihead_attention/q/kernel": [16, 16],
        dec + "dense_layers/dense/kernel": [16, 64],
        dec + "dense_layers/layer_prepostprocess_1/layer_norm/layer_norm_bias": [64],
        "evolved_transformer/body/decoder/layer_prepostprocess/layer_norm/layer_norm_scale":
            [16],
    }
    assert {name: shapes.get(name) for name in expected} == expected


def test_decoder_is_causal():
    rng = np.random.RandomState(1)
    feats = batch_features(copy_examples(rng, 2, 6, min_len=6))
    changed = {k: v.copy() for k, v in feats.items()}
    changed["targets"][:, 4:] = 3 - changed["targets"][:, 4:]  # swap 2 <-> 3 from step 4 on
    with tf.Graph().as_default():
        model = registry.model("evolved_transformer")(
            tiny_hparams(), TRAIN, model_hparams.test_problem_hparams(4, 4))
        model.set_mode(EVAL)
        logits = [model({k: tf.constant(v) for k, v in f.items()})[0] for f in (feats, changed)]
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            before, after = sess.run(logits)
    # Position t predicts target t from targets < t: positions 0-4 see no change.
    np.testing.assert_allclose(before[:, :5], after[:, :5], rtol=1e-5, atol=1e-6)
    assert not np.allclose(before[:, 5:], after[:, 5:])


def test_cached_decoding_equals_the_slow_loops():
    # Greedy with the growing and the fixed-shape (TPU) cache, and beam search, against the
    # loops that re-run the whole model each step (one graph: its build is the cost).
    feats = batch_features(copy_examples(np.random.RandomState(2), 2, 4, min_len=4))
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(5)
        model = registry.model("evolved_transformer")(
            tiny_hparams(), PREDICT, model_hparams.test_problem_hparams(4, 4))
        inputs = {"inputs": tf.constant(feats["inputs"])}
        assert model._use_fast_decoding()
        pairs = {
            "greedy": (model._fast_decode(dict(inputs), 4),
                       model.slow_greedy_infer(dict(inputs), 4)),
            "greedy, fixed shapes": (model._fast_decode_tpu(dict(inputs), 4),
                                     model.slow_greedy_infer(dict(inputs), 4)),
            "beam 2": (model._fast_decode(dict(inputs), 4, beam_size=2, alpha=0.6),
                       model.beam_decode_slow(dict(inputs), 4, 2, 1, 0.6)),
        }
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            pairs = sess.run(pairs)
    for name, (fast, slow) in pairs.items():
        width = min(fast["outputs"].shape[-1], slow["outputs"].shape[-1])
        np.testing.assert_array_equal(fast["outputs"][..., :width],
                                      slow["outputs"][..., :width], err_msg=name)
        np.testing.assert_allclose(fast["scores"], slow["scores"], rtol=1e-4, atol=1e-5,
                                   err_msg=name)


def test_learns_to_copy():
    rng = np.random.RandomState(3)
    batches = [batch_features(copy_examples(rng, 8, 4)) for _ in range(4)]
    losses = train_losses("evolved_transformer", tiny_hparams(),
                          model_hparams.test_problem_hparams(4, 4), batches, steps=30,
                          learning_rate=0.01)
    assert mean_last(losses) < 0.5 * mean_first(losses), losses


def test_only_the_top_decoder_layers_train_when_asked():
    feats = batch_features(copy_examples(np.random.RandomState(4), 2, 4))
    with tf.Graph().as_default():
        hp = tiny_hparams()
        hp.add_hparam("num_trainable_top_decoder_layers", 1)
        model = registry.model("evolved_transformer")(hp, TRAIN,
                                                      model_hparams.test_problem_hparams(4, 4))
        assert not model.hparams.shared_embedding_and_softmax_weights
        assert model.hparams.shared_embedding
        # The hparams given keep their value (T2T's `_original_hparams`); every mode unsets it.
        assert model._original_hparams.shared_embedding_and_softmax_weights
        model.set_mode(PREDICT)
        assert not model.hparams.shared_embedding_and_softmax_weights
        model.set_mode(TRAIN)
        _, losses = model({k: tf.constant(v) for k, v in feats.items()})
        variables = _v1.trainable_variables()
        grads = dict(zip([v.name for v in variables],
                         tf.gradients(losses["training"], variables)))
    trained = sorted(name for name, grad in grads.items() if grad is not None)
    assert trained and all("/decoder/layer_1/" in name or "/decoder/layer_prepostprocess/" in name
                           or "softmax" in name for name in trained), trained
    assert any("softmax" in name for name in trained)
