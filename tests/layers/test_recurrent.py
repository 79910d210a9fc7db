"""sru against the recurrence written out in numpy."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import recurrent

v1 = tf.compat.v1


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def np_sru(x, kernels, biases, activation=lambda c: c):
    """x [B, T, C]; one (kernel [C, 3C], bias [3C]) per layer."""
    for kernel, bias in zip(kernels, biases):
        proj = x @ kernel + bias
        xt, f, r = np.split(proj, 3, axis=-1)
        f, r = sigmoid(f), sigmoid(r)
        c = np.zeros([x.shape[0], x.shape[2]], np.float32)
        hs = []
        for t in range(x.shape[1]):
            c = f[:, t] * c + (1.0 - f[:, t]) * xt[:, t]
            hs.append(activation(c) * r[:, t] + (1.0 - r[:, t]) * x[:, t])
        x = np.stack(hs, axis=1)
    return x


@pytest.mark.parametrize("num_layers,activation", [(2, None), (1, tf.nn.tanh)])
def test_sru_equals_the_explicit_recurrence(num_layers, activation):
    x = np.random.RandomState(0).randn(2, 5, 3).astype(np.float32)
    with tf.Graph().as_default():
        with v1.variable_scope("s", initializer=v1.random_normal_initializer(seed=1)):
            y = recurrent.sru(tf.constant(x), num_layers=num_layers, activation=activation)
        names = sorted(v.op.name for v in v1.global_variables())
        assert names == sorted("s/sru/kernel_%d/%s" % (i, n) for i in range(num_layers)
                               for n in ("kernel", "bias"))
        with v1.variable_scope("s/sru", reuse=True):
            params = [(v1.get_variable("kernel_%d/kernel" % i), v1.get_variable(
                "kernel_%d/bias" % i)) for i in range(num_layers)]
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            # A non-zero bias, so its use is checked too.
            sess.run([b.assign(tf.fill(b.shape, 0.3)) for _, b in params])
            y, params = sess.run([y, params])
    np_activation = np.tanh if activation is not None else (lambda c: c)
    expected = np_sru(x, [k for k, _ in params], [b for _, b in params], np_activation)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_sru_treats_middle_axes_as_time_and_checks_layers():
    assert common_layers.sru is recurrent.sru
    with tf.Graph().as_default():
        assert recurrent.sru(tf.zeros([2, 3, 1, 4])).shape.as_list() == [2, 3, 1, 4]
        with pytest.raises(ValueError, match="num_layers must be positive"):
            recurrent.sru(tf.zeros([2, 3, 4]), num_layers=0)
