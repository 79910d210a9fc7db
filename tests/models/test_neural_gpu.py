"""Neural GPU and its diagonal variant: T2T's hparams set, cells and variable names, padding
steps, learning to copy and decoding it."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_layers
from t2t.layers import recurrent
from t2t.model import model_hparams
from t2t.models import neural_gpu

from t2t_model_testing import (PREDICT, TRAIN, batch_features, copy_examples, placeholders,
    session)

_v1 = tf.compat.v1


def tiny_hparams(**overrides):
    hp = registry.hparams("neural_gpu")
    hp.hidden_size, hp.dropout = 12, 0.0
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def run(fetches):
    with session() as sess:
        sess.run(_v1.global_variables_initializer())
        return sess.run(fetches)


def test_hparams_set_has_t2ts_values():
    hp = registry.hparams("neural_gpu")
    assert (hp.hidden_size, hp.num_hidden_layers, hp.dropout) == (256, 1, 0.1)
    assert (hp.kernel_height, hp.kernel_width, hp.clip_grad_norm) == (3, 1, 10.0)
    assert (hp.learning_rate, hp.sampling_method, hp.daisy_chain_variables) == (
        0.02, "argmax", False)


def test_cells_are_re_exported_with_t2ts_names():
    assert common_layers.conv_gru is recurrent.conv_gru
    assert common_layers.diagonal_conv_gru is recurrent.diagonal_conv_gru
    with tf.Graph().as_default():
        x = tf.random.normal([2, 5, 1, 6])
        out = [recurrent.conv_gru(x, (3, 1), 6), recurrent.conv_lstm(x, (3, 1), 6),
               recurrent.diagonal_conv_gru(x, (3, 1), 6)[0]]
        names = {v.name: v for v in _v1.global_variables()}
        biases = run({k: v for k, v in names.items() if k.endswith("bias:0")})
    assert all(o.shape.as_list() == [2, 5, 1, 6] for o in out)
    np.testing.assert_allclose(biases["conv_gru/reset_single/bias:0"], 1.0)
    np.testing.assert_allclose(biases["conv_gru/candidate_single/bias:0"], 0.0)
    np.testing.assert_allclose(biases["diagonal_conv_gru/reset_single/bias:0"], 0.5)
    np.testing.assert_allclose(biases["diagonal_conv_gru/gate_single/bias:0"], 0.7)
    assert names["conv_lstm/conv_single/kernel:0"].shape.as_list() == [3, 1, 6, 24]
    assert "conv_lstm/layer_norm/layer_norm_scale:0" in names


def test_conv_gru_with_a_closed_gate_keeps_the_state():
    x = np.random.RandomState(0).randn(1, 4, 1, 3).astype(np.float32)
    with tf.Graph().as_default():
        out = recurrent.conv_gru(tf.constant(x), (3, 1), 3)
        gate_bias = [v for v in _v1.global_variables() if v.name == "conv_gru/gate_single/bias:0"]
        gate_kernel = [v for v in _v1.global_variables()
                       if v.name == "conv_gru/gate_single/kernel:0"]
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            sess.run([gate_bias[0].assign(tf.fill([3], 10.0)),
                      gate_kernel[0].assign(tf.zeros([3, 1, 3, 3]))])
            got = sess.run(out)
    np.testing.assert_allclose(got, x, rtol=1e-5)  # saturating sigmoid(10) is exactly 1


def test_diagonal_shift_moves_thirds_of_the_channels_along_the_length():
    x = np.arange(1, 19, dtype=np.float32).reshape([1, 3, 1, 6])  # 3 positions, 6 channels
    with tf.Graph().as_default():
        got = run(recurrent.diagonal_shift(tf.constant(x)))[0, :, 0]
    x = x[0, :, 0]
    np.testing.assert_array_equal(got[:, :2], x[:, :2])               # kept
    np.testing.assert_array_equal(got[:, 2:4], np.vstack([0 * x[:1, 2:4], x[:2, 2:4]]))
    np.testing.assert_array_equal(got[:, 4:], np.vstack([x[1:, 4:], 0 * x[:1, 4:]]))


def test_cells_name_a_wrong_width():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="filters"):
        recurrent.conv_gru(tf.zeros([1, 4, 1, 5]), (3, 1), 6)


def build(model_name, hp, feats):
    model = registry.model(model_name)(hp, TRAIN, model_hparams.test_problem_hparams(4, 4))
    logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
    names = {v.name: v.shape.as_list() for v in _v1.trainable_variables()}
    return logits, losses, names


@pytest.mark.parametrize("model_name,cell", [("neural_gpu", "cgru"),
                                             ("diagonal_neural_gpu", "dcgru")])
def test_set_builds_with_finite_losses_and_t2ts_variable_names(model_name, cell):
    hp = registry.hparams("neural_gpu")
    hp.hidden_size, hp.num_hidden_layers = 9, 2   # T2T's dropout 0.1
    feats = batch_features(copy_examples(np.random.RandomState(0), 3, 4),
                           targets_length=7)  # longer than the inputs: zero logits there
    with tf.Graph().as_default():
        logits, losses, names = build(model_name, hp, feats)
        logits, losses = run([logits, losses])
    assert logits.shape == (3, 7, 1, 1, 4)
    np.testing.assert_array_equal(logits[:, feats["inputs"].shape[1]:], 0.0)
    assert np.isfinite(losses["training"]) and losses["training"] > 0
    if model_name == "diagonal_neural_gpu":
        assert np.isfinite(losses["extra"]) and losses["extra"] >= 0
    scope = "%s/body/%s/" % (model_name, model_name)
    for layer in (0, 1):
        for gate in ("reset", "gate", "candidate"):
            prefix = scope + "%s_%d/%s_single/" % (cell, layer, gate)
            assert names[prefix + "kernel:0"] == [3, 1, 9, 9]
            assert names[prefix + "bias:0"] == [9]
    assert len([n for n in names if "/body/" in n]) == 12


def test_padding_steps_leave_the_state_alone():
    hp = tiny_hparams()
    x = np.random.RandomState(1).randn(2, 3, 1, 12).astype(np.float32)
    padded = np.concatenate([x, np.zeros([2, 2, 1, 12], np.float32)], 1)
    with tf.Graph().as_default():
        inp = tf.constant(padded)
        final = neural_gpu.neural_gpu_body(inp, hp, name="ngpu")
        state = inp
        with _v1.variable_scope("ngpu", reuse=True):
            for _ in range(3):  # the three real steps, over the whole padded state
                state = recurrent.conv_gru(state, (3, 1), 12, name="cgru_0")
        final, three_steps = run([final, state])
    # The last two steps read padding: the state is the one after the three real steps.
    np.testing.assert_allclose(final, three_steps, rtol=1e-5, atol=1e-6)
    assert not np.allclose(final, padded)


@pytest.mark.parametrize("model_name", ["neural_gpu", "diagonal_neural_gpu"])
def test_learns_to_copy_and_decodes_the_copy(model_name):
    rng = np.random.RandomState(3)
    batches = [batch_features(copy_examples(rng, 16, 4, min_len=4)) for _ in range(4)]
    p_hp = model_hparams.test_problem_hparams(4, 4)
    test = copy_examples(np.random.RandomState(7), 6, 4, min_len=4)
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(1)
        feeds = placeholders(["inputs", "targets"], batches)
        with _v1.variable_scope("m"):
            _, losses = registry.model(model_name)(tiny_hparams(), TRAIN, p_hp)(feeds)
        with _v1.variable_scope("m", reuse=True):
            decoded = registry.model(model_name)(tiny_hparams(), PREDICT, p_hp).infer(
                {"inputs": tf.constant(batch_features(test)["inputs"])}, decode_length=0)
        train_op = _v1.train.AdamOptimizer(0.03).minimize(losses["training"])
        values = []
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            for step in range(100):
                batch = batches[step % 4]
                value, _ = sess.run([losses["training"], train_op],
                                    {feeds[k]: v for k, v in batch.items()})
                values.append(value)
            outputs = sess.run(decoded)["outputs"]
    assert np.mean(values[-3:]) < 0.2 * np.mean(values[:3]), values
    for row, (_, targets) in zip(outputs.reshape([6, -1]), test):
        assert list(row[:len(targets)]) == targets, (row, targets)
