"""activations and nac/nalu against numpy."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import activations
from t2t.layers import common_layers
from t2t.layers import nalu

v1 = tf.compat.v1
X = np.array([[-2.0, -0.5, 0.5, 3.0]], np.float32)


def test_elementwise_activations():
    assert common_layers.brelu is activations.brelu
    np.testing.assert_allclose(activations.brelu(tf.constant(X)).numpy(),
                               [[0.0, -0.5, 0.5, 0.0]])
    elu = lambda z: np.where(z > 0, z, np.exp(z) - 1)  # noqa: E731
    np.testing.assert_allclose(activations.belu(tf.constant(X)).numpy(),
                               [[elu(-2.0), -elu(0.5), elu(0.5), -elu(-3.0)]], rtol=1e-6)
    sig = 1 / (1 + np.exp(-X))
    np.testing.assert_allclose(activations.saturating_sigmoid(tf.constant(X)).numpy(),
                               np.clip(1.2 * sig - 0.1, 0, 1), rtol=1e-6)
    y, cost = activations.hard_sigmoid(tf.constant(X))
    np.testing.assert_allclose(y.numpy(), np.clip(0.5 * X + 0.5, 0, 1))
    assert cost.numpy() == pytest.approx(np.maximum(np.abs(X) - 0.9, 0).mean())
    y, cost = activations.hard_tanh(tf.constant(X))
    np.testing.assert_allclose(y.numpy(), np.clip(X, -1, 1))
    gelu = X * 0.5 * (1 + np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X ** 3)))
    np.testing.assert_allclose(activations.gelu(tf.constant(X)).numpy(), gelu, rtol=1e-5)


def test_nac_and_nalu_match_their_formulas_and_name_variables():
    x = np.abs(np.random.RandomState(0).randn(3, 2, 4)).astype(np.float32) + 0.1
    with tf.Graph().as_default():
        out = nalu.nalu(tf.constant(x), 5)
        names = {v.op.name: v for v in v1.global_variables()}
        assert sorted(names) == ["nalu/nac_lin/m", "nalu/nac_lin/w", "nalu/nac_log/m",
                                 "nalu/nac_log/w", "nalu/w"]
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            out, values = sess.run([out, names])
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731

    def nac_np(z, scope):
        return z @ (np.tanh(values[scope + "/w"]) * sig(values[scope + "/m"]))

    g = sig(x @ values["nalu/w"])
    expected = g * nac_np(x, "nalu/nac_lin") + (1 - g) * np.exp(
        nac_np(np.log(x + 1e-30), "nalu/nac_log"))
    assert out.shape == (3, 2, 5)
    np.testing.assert_allclose(out, expected, rtol=1e-4)
