"""set_layers against numpy: the per-element linear map, the context, the set's max."""
import numpy as np
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import set_layers
from graph_testing import run_graph

v1 = tf.compat.v1
X = np.array([[[1., -2.], [3., 0.], [-1., 5.]], [[2., 2.], [-4., 1.], [0., -3.]]], np.float32)
MASK = np.array([[1., 1., 0.], [1., 0., 0.]], np.float32)


def test_set_layers_map_each_element_and_subtract_the_set_max():
    assert common_layers.linear_set_layer is set_layers.linear_set_layer
    context = np.array([[1., -1., 2.], [0., 3., 1.]], np.float32)

    def build():
        x = tf.constant(X)
        plain = set_layers.linear_set_layer(4, x, context=tf.constant(context), name="l")
        deep = set_layers.ravanbakhsh_set_layer(4, x, mask=tf.constant(MASK), name="r")
        running = set_layers.ravanbakhsh_set_layer(4, x, sequential=True, name="s")
        names = sorted(v.op.name for v in v1.global_variables())
        assert names == sorted("%s/%s_single/%s" % (scope, conv, n)
                               for scope, convs in [("l", ["set_conv", "cont_conv"]),
                                                    ("r/r", ["set_conv"]), ("s/s", ["set_conv"])]
                               for conv in convs for n in ("kernel", "bias"))
        weights = {v.op.name: v for v in v1.global_variables()}
        return plain, deep, running, weights

    plain, deep, running, w = run_graph(build)

    def lin(scope, conv, z):
        return z @ w["%s/%s_single/kernel" % (scope, conv)][0, 0] + w[
            "%s/%s_single/bias" % (scope, conv)]

    expected = np.maximum(lin("l", "set_conv", X) + lin("l", "cont_conv", context)[:, None], 0)
    np.testing.assert_allclose(plain, expected, rtol=1e-5, atol=1e-6)
    set_max = (X * MASK[:, :, None]).max(axis=1, keepdims=True)
    np.testing.assert_allclose(deep, np.tanh(lin("r/r", "set_conv", X - set_max)), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(running, np.tanh(lin("s/s", "set_conv", X - np.maximum.accumulate(
        X, axis=1))), rtol=1e-5, atol=1e-6)
