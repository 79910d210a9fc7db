"""conv_layers: T2T's '<name>_single' variable names, values against numpy convolutions,
subseparable_conv's groups, conv_hidden_relu."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import conv_layers
from graph_testing import run_graph

v1 = tf.compat.v1


def var(name):
    return [v for v in v1.global_variables() if v.op.name == name][0]


def global_var_shapes():
    return {v.op.name: v.shape.as_list() for v in v1.global_variables()}


def np_conv_height(x, kernel, left_pad):
    """Reference conv over height only (width 1): x [B, L, 1, C], kernel [k, 1, C, F]."""
    k = kernel.shape[0]
    padded = np.pad(x, [(0, 0), (left_pad, k - 1 - left_pad), (0, 0), (0, 0)])
    return np.stack([np.einsum("bkc,kcf->bf", padded[:, i:i + k, 0], kernel[:, 0])
                     for i in range(x.shape[1])], axis=1)[:, :, None, :]


X = np.random.RandomState(0).randn(2, 6, 1, 4).astype(np.float32)


def test_conv_is_re_exported_and_names_variables_as_t2t():
    assert common_layers.conv is conv_layers.conv
    assert common_layers.subseparable_conv is conv_layers.subseparable_conv

    def build():
        out = conv_layers.conv(tf.constant(X), 5, (3, 1), padding="LEFT", name="c")
        assert global_var_shapes() == {"c_single/kernel": [3, 1, 4, 5], "c_single/bias": [5]}
        conv_layers.conv(tf.constant(X), 5, (1, 1))
        conv_layers.conv(tf.constant(X), 5, (1, 1))
        assert {"conv_single/kernel", "conv_single_1/kernel"} <= set(global_var_shapes())
        return out, var("c_single/kernel")

    out, kernel = run_graph(build)
    np.testing.assert_allclose(out, np_conv_height(X, kernel, 2), rtol=1e-5, atol=1e-5)


def test_separable_conv_is_depthwise_then_pointwise():
    def build():
        out = conv_layers.separable_conv(tf.constant(X), 3, (3, 1), padding="SAME",
                                         name="s")
        assert global_var_shapes() == {"s_single/depthwise_kernel": [3, 1, 4, 1],
                                       "s_single/pointwise_kernel": [1, 1, 4, 3],
                                       "s_single/bias": [3]}
        return out, var("s_single/depthwise_kernel"), var("s_single/pointwise_kernel")

    out, depthwise, pointwise = run_graph(build)
    k = depthwise[:, 0, :, 0]  # [3, C]
    padded = np.pad(X, [(0, 0), (1, 1), (0, 0), (0, 0)])[:, :, 0]
    per_channel = np.stack([(padded[:, i:i + 3] * k).sum(axis=1) for i in range(6)], axis=1)
    expected = per_channel @ pointwise[0, 0]
    np.testing.assert_allclose(out[:, :, 0], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("separability,filters,names", [
    (0, 6, {"x_single/depthwise_kernel": [3, 1, 4, 1], "x_single/pointwise_kernel": [1, 1, 4, 6],
            "x_single/bias": [6]}),
    (1, 6, {"part_0/x_single/kernel": [3, 1, 4, 6], "part_0/x_single/bias": [6]}),
    (2, 6, {"part_0/x_single/kernel": [3, 1, 2, 3], "part_0/x_single/bias": [3],
            "part_1/x_single/kernel": [3, 1, 2, 3], "part_1/x_single/bias": [3],
            "conv2d/kernel": [1, 1, 6, 6], "conv2d/bias": [6]}),
    (-2, 6, {"part_%d/x_single/%s" % (i, n): s for i in range(2)
             for n, s in [("depthwise_kernel", [3, 1, 2, 1]),
                          ("pointwise_kernel", [1, 1, 2, 3]), ("bias", [3])]}),
    (-1, 5, {"part_0/x_single/depthwise_kernel": [3, 1, 4, 1],
             "part_0/x_single/pointwise_kernel": [1, 1, 4, 5], "part_0/x_single/bias": [5]}),
])
def test_subseparable_conv_shapes_and_variables(separability, filters, names):
    def build():
        out = conv_layers.subseparable_conv(tf.constant(X), filters, (3, 1), padding="SAME",
                                            separability=separability, name="x")
        assert global_var_shapes() == names
        return out

    assert run_graph(build).shape == (2, 6, 1, filters)


def test_subseparable_conv_with_separability_two_convolves_each_half_separately():
    def build():
        out = conv_layers.subseparable_conv(tf.constant(X), 4, (3, 1), padding="LEFT",
                                            separability=2, name="x", use_bias=False)
        return out, var("part_0/x_single/kernel"), var("part_1/x_single/kernel"), var(
            "conv2d/kernel"), var("conv2d/bias")

    out, k0, k1, mix, bias = run_graph(build)
    parts = np.concatenate([np_conv_height(X[..., :2], k0, 2),
                            np_conv_height(X[..., 2:], k1, 2)], axis=-1)
    np.testing.assert_allclose(out, parts @ mix[0, 0] + bias, rtol=1e-5, atol=1e-5)


def test_subseparable_conv_rejects_a_separability_not_dividing_the_channels():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="must divide"):
        conv_layers.subseparable_conv(tf.constant(X), 6, (3, 1), separability=3)


def test_conv_hidden_relu_shapes_names_and_values():
    x3 = X[:, :, 0]

    def build():
        out = conv_layers.conv_hidden_relu(tf.constant(x3), 8, 4)
        names = global_var_shapes()
        assert names == {"conv_hidden_relu/conv1_single/kernel": [1, 1, 4, 8],
                         "conv_hidden_relu/conv1_single/bias": [8],
                         "conv_hidden_relu/conv2_single/kernel": [1, 1, 8, 4],
                         "conv_hidden_relu/conv2_single/bias": [4]}
        wide = conv_layers.conv_hidden_relu(tf.constant(X), 8, 3, kernel_size=(3, 1),
                                            padding="LEFT", name="wide")
        assert "wide/conv1_single/depthwise_kernel" in global_var_shapes()
        assert wide.shape.as_list() == [2, 6, 1, 3]
        return out, [var("conv_hidden_relu/%s_single/%s" % (c, n))
                     for c in ("conv1", "conv2") for n in ("kernel", "bias")]

    out, (k1, b1, k2, b2) = run_graph(build)
    assert out.shape == (2, 6, 4)
    expected = np.maximum(x3 @ k1[0, 0] + b1, 0) @ k2[0, 0] + b2
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_conv_block_is_activation_conv_norm_per_layer():
    def build():
        x = tf.constant(X)
        out = conv_layers.conv_block(x, 4, [((1, 1), (3, 1)), ((2, 1), (3, 1))],
                                     padding="SAME", name="b")
        assert sorted(global_var_shapes()) == sorted(
            ["b/conv_block_%d_single/kernel" % i for i in range(2)] +
            ["b/conv_block_norm_%d/layer_norm_%s" % (i, n) for i in range(2)
             for n in ("scale", "bias")])
        plain = conv_layers.conv_block(x, 5, [((1, 1), (3, 1))], first_relu=False,
                                       normalizer_fn=None, padding="LEFT", name="p")
        masked = conv_layers.conv1d_block(x[:, :, 0], 4, [(1, 3)], padding="SAME",
                                          mask=tf.zeros([2, 6, 1]), name="m")
        return (out, plain, masked, var("p/conv_block_0_single/kernel"),
                var("p/conv_block_0_single/bias"))

    out, plain, masked, kernel, bias = run_graph(build)
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-5)   # layer-normalised
    np.testing.assert_allclose(plain, np_conv_height(X, kernel, 2) + bias, rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_array_equal(masked, np.zeros([2, 6, 4]))       # masked out, then norm


def test_separable_and_subseparable_blocks_build_their_convs():
    def build():
        x = tf.constant(X)
        sep = conv_layers.separable_conv_block(x, 4, [((1, 1), (3, 1))], padding="SAME",
                                               name="s")
        sub = conv_layers.subseparable_conv_block(x, 4, [((1, 1), (3, 1))] * 2,
                                                  separabilities=[2, -2], padding="SAME",
                                                  name="u")
        names = set(global_var_shapes())
        assert {"s/conv_block_0_single/depthwise_kernel", "u/part_1/conv_block_0_single/kernel",
                "u/conv2d/kernel", "u/part_1/conv_block_1_single/pointwise_kernel"} <= names
        return sep, sub

    sep, sub = run_graph(build)
    assert sep.shape == sub.shape == (2, 6, 1, 4)


def test_sepconv_relu_sepconv_is_causal_and_ignores_padding():
    x3 = X[:, :, 0]
    nonpadding = np.ones([2, 6], np.float32)
    nonpadding[1, 4:] = 0.0
    changed = x3.copy()
    changed[1, 4:] += 10.0   # padding positions: must not matter
    changed[0, 5] += 10.0    # the last position: must not change earlier outputs

    def build():
        outs = []
        for i, inputs in enumerate([x3, changed]):
            with v1.variable_scope("f", reuse=i > 0):
                outs.append(conv_layers.sepconv_relu_sepconv(
                    tf.constant(inputs), 8, 3, first_kernel_size=(3, 1),
                    second_kernel_size=(3, 1), nonpadding_mask=tf.constant(nonpadding)))
        assert sorted(global_var_shapes()) == sorted(
            "f/sepconv_relu_sepconv/conv%d_single/%s" % (i, n) for i in (1, 2)
            for n in ("depthwise_kernel", "pointwise_kernel", "bias"))
        return outs

    out, out_changed = run_graph(build)
    assert out.shape == (2, 6, 3)
    np.testing.assert_allclose(out[1, :4], out_changed[1, :4], rtol=1e-6)
    np.testing.assert_allclose(out[0, :5], out_changed[0, :5], rtol=1e-6)
    assert not np.allclose(out[0, 5], out_changed[0, 5])


def test_subseparable_block_with_two_separability_two_layers_names_each_mixing_conv():
    # T2T's Keras Conv2D layers were named conv2d, conv2d_1: a second layer must not collide
    # with the first (T2T's own common_layers_test builds this block).
    def build():
        x = tf.constant(X)
        out = conv_layers.subseparable_conv_block(x, 4, [((1, 1), (3, 1))] * 2,
                                                  separability=2, padding="SAME", name="u")
        names = set(global_var_shapes())
        assert {"u/conv2d/kernel", "u/conv2d_1/kernel", "u/part_0/conv_block_1_single/kernel"
                } <= names
        with tf.compat.v1.variable_scope("u", reuse=True):  # the first layer again
            conv_layers.subseparable_conv(x, 4, (3, 1), separability=2, padding="SAME",
                                          name="conv_block_0", use_bias=False)
        assert set(global_var_shapes()) == names  # found, not created
        return out

    assert run_graph(build).shape == (2, 6, 1, 4)


DILATED_CONV_AND_GRADIENT = """
import numpy as np, tensorflow as tf
from t2t.layers import conv_layers
with tf.Graph().as_default():
    x = tf.constant(np.arange(2 * 9 * 1 * 3, dtype=np.float32).reshape(2, 9, 1, 3) / 50)
    out = conv_layers.conv(x, 2, (3, 1), dilation_rate=(2, 1), padding="LEFT", name="d")
    kernel = [v for v in tf.compat.v1.global_variables() if v.op.name == "d_single/kernel"][0]
    grads = tf.gradients(tf.reduce_sum(out * out), [x, kernel])
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        values = sess.run([out, kernel] + grads)
np.save("%s", np.array(values, dtype=object), allow_pickle=True)
"""


def test_dilated_conv_and_its_gradients_without_onednn(tmp_path):
    # TensorFlow's own CPU kernel (oneDNN off: the default on AMD CPUs) has no input
    # gradient for a dilated conv2d; conv computes it by space-to-batch.
    import os
    import subprocess
    import sys
    path = str(tmp_path / "values.npy")
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="0", TF_CPP_MIN_LOG_LEVEL="3")
    run = subprocess.run([sys.executable, "-c", DILATED_CONV_AND_GRADIENT % path], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    out, kernel, grad_x, grad_kernel = np.load(path, allow_pickle=True)
    x = np.arange(2 * 9 * 1 * 3, dtype=np.float32).reshape(2, 9, 1, 3) / 50
    # Dilation 2, left padding: output i sees inputs i - 4, i - 2, i.
    padded = np.pad(x, [(0, 0), (4, 0), (0, 0), (0, 0)])
    expected = np.stack([sum(padded[:, i + 2 * t, 0] @ kernel[t, 0] for t in range(3))
                         for i in range(9)], axis=1)[:, :, None, :]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    # d/dx sum(out^2) = sum over outputs of 2 * out * kernel at the input's tap.
    want_x = np.zeros_like(padded)
    for i in range(9):
        for t in range(3):
            want_x[:, i + 2 * t, 0] += 2 * out[:, i, 0] @ kernel[t, 0].T
    np.testing.assert_allclose(grad_x, want_x[:, 4:], rtol=1e-4, atol=1e-5)
    want_kernel = np.stack([np.einsum("bc,bf->cf", padded[:, 2 * t:2 * t + 9, 0].reshape(-1, 3),
                                      2 * out[:, :, 0].reshape(-1, 2)) for t in range(3)])
    np.testing.assert_allclose(grad_kernel, want_kernel[:, None], rtol=1e-4, atol=1e-5)


def test_strides_with_dilation_are_refused():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="one of them must be 1"):
        conv_layers.conv(tf.constant(X), 2, (3, 1), dilation_rate=(2, 1), strides=(2, 1))
