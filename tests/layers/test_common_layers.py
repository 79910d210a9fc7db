"""common_layers: shapes and values of each layer, T2T's loss numbers, variable sharing."""
import math

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t.layers import common_hparams
from t2t.layers import common_layers
from graph_testing import run_graph

v1 = tf.compat.v1


def global_var_names():
    return sorted(v.op.name for v in v1.global_variables())


# --------------------------------------------------------------------------- shapes
def test_shape_list_mixes_static_and_dynamic():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [None, 5, 1, 8])
        shape = common_layers.shape_list(x)
        assert shape[1:] == [5, 1, 8]
        assert isinstance(shape[0], tf.Tensor)
        flat = common_layers.flatten4d3d(x)
        assert flat.shape.as_list() == [None, 5, 8]
        with v1.Session() as sess:
            assert sess.run(shape[0], {x: np.zeros([3, 5, 1, 8])}) == 3


def test_flatten_cast_reshape_expand():
    x = tf.reshape(tf.range(24, dtype=tf.float32), [2, 3, 2, 2])
    flat = common_layers.flatten4d3d(x)
    np.testing.assert_array_equal(flat.numpy(), np.arange(24).reshape([2, 6, 2]))
    assert common_layers.cast_like(tf.constant([1, 2]), x).dtype == tf.float32
    same = tf.constant([1.0])
    assert common_layers.cast_like(same, x) is same
    assert common_layers.reshape_like(tf.zeros([6, 4]), tf.zeros([2, 3, 7])).shape == (2, 3, 4)
    assert common_layers.expand_squeeze_to_nd(tf.zeros([2, 3]), 4).shape == (2, 3, 1, 1)
    assert common_layers.expand_squeeze_to_nd(tf.zeros([2, 3, 1, 1]), 2).shape == (2, 3)


@given(st.lists(st.integers(min_value=-10**6, max_value=10**6), max_size=8))
def test_comma_separated_string_round_trip(values):
    text = ",".join(str(v) for v in values)
    assert common_layers.comma_separated_string_to_integer_list(text) == values
    spaced = ", ".join(str(v) for v in values)
    assert common_layers.comma_separated_string_to_integer_list(spaced) == values


# --------------------------------------------------------------------------- dense and conv
def test_dense_any_rank_matches_numpy_and_names_variables():
    x_np = np.random.RandomState(0).randn(2, 3, 1, 4).astype(np.float32)

    def build():
        out = common_layers.dense(tf.constant(x_np), 5, activation=tf.nn.relu, name="proj")
        with v1.variable_scope("proj", reuse=True):
            kernel = v1.get_variable("kernel")
            bias = v1.get_variable("bias")
        return out, kernel, bias

    out, kernel, bias = run_graph(build)
    assert out.shape == (2, 3, 1, 5)
    np.testing.assert_allclose(out, np.maximum(x_np @ kernel + bias, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(bias, np.zeros(5))


def test_dense_uses_scope_initializer_and_reuses_under_auto_reuse():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        with v1.variable_scope("body", initializer=v1.constant_initializer(0.5)):
            y = common_layers.dense(x, 4, use_bias=False, name="d")
        with v1.variable_scope("body", reuse=v1.AUTO_REUSE):
            y2 = common_layers.dense(x, 4, use_bias=False, name="d")
        assert global_var_names() == ["body/d/kernel"]
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            a, b = sess.run([y, y2])
        np.testing.assert_allclose(a, np.full([2, 4], 1.5))
        np.testing.assert_allclose(a, b)


def test_dense_rejects_unknown_depth():
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [2, None])
        with pytest.raises(ValueError, match="last dimension of the input must be static"):
            common_layers.dense(x, 3)
        with pytest.raises(ValueError, match="layer_collection"):
            common_layers.dense(tf.zeros([2, 3]), 3, layer_collection=object())


def test_dense_relu_dense_shapes_and_variable_names():
    with tf.Graph().as_default():
        out = common_layers.dense_relu_dense(tf.zeros([2, 5, 8]), 16, 6, dropout=0.1,
                                             dropout_broadcast_dims=[1])
        assert out.shape.as_list() == [2, 5, 6]
        assert global_var_names() == ["conv1/bias", "conv1/kernel", "conv2/bias",
                                      "conv2/kernel"]


@pytest.mark.parametrize("padding,kernel", [("SAME", 3), ("LEFT", 3), ("VALID", 1)])
def test_conv1d_shapes(padding, kernel):
    def build():
        return common_layers.conv1d(tf.ones([2, 7, 4]), 6, kernel, padding=padding)
    assert run_graph(build).shape == (2, 7, 6)


def test_conv_left_padding_is_causal():
    x_np = np.random.RandomState(1).randn(1, 6, 1, 3).astype(np.float32)
    changed = x_np.copy()
    changed[:, 4:] += 10.0  # change only positions 4 and 5

    def build():
        x = v1.placeholder(tf.float32, [1, 6, 1, 3])
        return x, common_layers.conv(x, 2, (3, 1), padding="LEFT")

    with tf.Graph().as_default():
        x, y = build()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            a = sess.run(y, {x: x_np})
            b = sess.run(y, {x: changed})
    np.testing.assert_allclose(a[:, :4], b[:, :4], rtol=1e-6)
    assert not np.allclose(a[:, 4:], b[:, 4:])


def test_conv_relu_conv_cached_steps_equal_full_left_padded_run():
    length, depth = 5, 4
    x_np = np.random.RandomState(2).randn(2, length, depth).astype(np.float32)

    def ffn(x, cache=None):
        # Re-entering the scope restarts default names, as a decoder re-run does.
        with v1.variable_scope("ffn", reuse=v1.AUTO_REUSE):
            return common_layers.conv_relu_conv(x, 8, depth, first_kernel_size=3,
                                                second_kernel_size=1, padding="LEFT",
                                                cache=cache)

    def build():
        x = tf.constant(x_np)
        full = ffn(x)
        cache = {"f": tf.zeros([2, 0, depth])}
        steps = [ffn(x[:, i:i + 1], cache) for i in range(length)]
        # conv1_0 (kernel, bias), conv1_1, conv1_2, conv2 (kernel, bias): shared by all calls.
        assert len(v1.global_variables()) == 6
        return full, tf.concat(steps, axis=1)

    full, steps = run_graph(build)
    np.testing.assert_allclose(steps, full, atol=1e-5)


# --------------------------------------------------------------------------- normalisation
def test_layer_norm_values():
    x_np = np.array([[1.0, 3.0, 5.0, 7.0], [2.0, 2.0, 2.0, 10.0]], np.float32)
    out = run_graph(lambda: common_layers.layer_norm(tf.constant(x_np)))
    mean = x_np.mean(-1, keepdims=True)
    expected = (x_np - mean) / np.sqrt(((x_np - mean) ** 2).mean(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def _layer_norm_by_autodiff(x, epsilon, scale, bias):
    mean = tf.reduce_mean(x, axis=[-1], keepdims=True)
    variance = tf.reduce_mean(tf.math.squared_difference(x, mean), axis=[-1], keepdims=True)
    return (x - mean) * tf.math.rsqrt(variance + epsilon) * scale + bias


@pytest.mark.parametrize("shape,param_shape", [((3, 5, 8), (8,)), ((2, 4, 1, 6), (6,)),
                                               ((3, 5, 8), (1, 1, 8)), ((4, 8), (4, 1))])
def test_layer_norm_gradient_matches_autodiff(shape, param_shape):
    """The closed-form layer norm gradient: the values autodiff of T2T's ops gives, for
    x, scale and bias (also scale/bias broadcast along other dimensions), in eager mode
    and in a graph."""
    rng = np.random.RandomState(0)
    x = tf.constant(rng.randn(*shape).astype(np.float32))
    weights = tf.constant(rng.randn(*shape).astype(np.float32))
    scale = tf.Variable(rng.randn(*param_shape).astype(np.float32))
    bias = tf.Variable(rng.randn(*param_shape).astype(np.float32))

    def outputs_and_gradients(layer_norm_fn):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer_norm_fn(x, 1e-6, scale, bias)
            loss = tf.reduce_sum(y * weights)
        return [y] + tape.gradient(loss, [x, scale, bias])

    expected = outputs_and_gradients(_layer_norm_by_autodiff)
    for run in (lambda fn: outputs_and_gradients(fn),
                tf.function(outputs_and_gradients)):
        got = run(common_layers.layer_norm_compute)
        for want, have in zip(expected, got):
            assert have.shape == want.shape
            np.testing.assert_allclose(have.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    # Forward: the same ops, so the same bits.
    np.testing.assert_array_equal(got[0].numpy(), expected[0].numpy())


def test_apply_norm_types():
    x_np = np.array([[3.0, 4.0, 0.0, 1.0]], np.float32)
    noam, l2, none, group = run_graph(lambda: [
        common_layers.apply_norm(tf.constant(x_np), "noam", 4, 1e-6),
        common_layers.apply_norm(tf.constant(x_np), "l2", 4, 1e-6),
        common_layers.apply_norm(tf.constant(x_np), "none", 4, 1e-6),
        common_layers.apply_norm(tf.ones([1, 2, 2, 16]), "group", 16, 1e-5)])
    np.testing.assert_allclose(np.linalg.norm(noam), 2.0, rtol=1e-5)  # sqrt(depth)
    centred = x_np - x_np.mean()
    np.testing.assert_allclose(l2, centred / np.sqrt((centred ** 2).sum() + 1e-6), rtol=1e-5)
    np.testing.assert_array_equal(none, x_np)
    assert group.shape == (1, 2, 2, 16)
    with pytest.raises(ValueError, match="norm_type 'batch' is not supported"):
        common_layers.apply_norm(tf.constant(x_np), "batch", 4, 1e-6)
    with pytest.raises(ValueError, match="unknown norm_type 'lr'"):
        common_layers.apply_norm(tf.constant(x_np), "lr", 4, 1e-6)


def test_layer_prepostprocess_dan_is_norm_of_residual_sum():
    rng = np.random.RandomState(3)
    prev, x = rng.randn(2, 3, 4).astype(np.float32), rng.randn(2, 3, 4).astype(np.float32)

    def build():
        dan = common_layers.layer_prepostprocess(tf.constant(prev), tf.constant(x), "dan", 0.0,
                                                 "layer", None, 1e-6, "post")
        ref = common_layers.layer_norm(tf.constant(prev + x))
        zero = common_layers.layer_prepostprocess(tf.constant(prev), tf.constant(x), "z", 0.0,
                                                  "layer", None, 1e-6, "rezero")
        return dan, ref, zero

    dan, ref, zero = run_graph(build)
    np.testing.assert_allclose(dan, ref, rtol=1e-5)
    np.testing.assert_allclose(zero, prev)  # gamma starts at 0
    with pytest.raises(ValueError, match="unknown step 'q'"):
        common_layers.layer_prepostprocess(None, tf.zeros([1, 2]), "nq", 0.0, "none", None,
                                           1e-6, "pre")


def test_layer_preprocess_and_postprocess_follow_hparams():
    hp = common_hparams.basic_params1()
    hp.layer_prepostprocess_dropout = 0.0
    hp.layer_preprocess_sequence = "n"
    hp.layer_postprocess_sequence = "da"
    x_np = np.arange(8, dtype=np.float32).reshape([2, 4])

    def build():
        x = tf.constant(x_np)
        return (common_layers.layer_preprocess(x, hp),
                common_layers.layer_postprocess(x, x * 2.0, hp))

    pre, post = run_graph(build)
    np.testing.assert_allclose(pre.mean(-1), 0.0, atol=1e-5)
    np.testing.assert_allclose(post, 3 * x_np)
    hp.layer_preprocess_sequence = "an"
    with pytest.raises(ValueError, match="residual step"):
        common_layers.layer_preprocess(tf.zeros([1, 2]), hp)


# --------------------------------------------------------------------------- dropout
def test_dropout_with_broadcast_dims_shares_the_mask():
    x = tf.ones([4, 6, 8])
    assert common_layers.dropout_with_broadcast_dims(x, 1.0) is x
    tf.random.set_seed(0)
    out = common_layers.dropout_with_broadcast_dims(x, 0.5, broadcast_dims=[0, -2]).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0}
    np.testing.assert_array_equal(out, np.broadcast_to(out[:1, :1], out.shape))
    with pytest.raises(ValueError, match="noise_shape"):
        common_layers.dropout_with_broadcast_dims(x, 0.5, noise_shape=[1, 1, 8])


def test_dropout_no_scaling_zeroes_ids_without_rescaling():
    ids = tf.fill([1000], 7)
    out = common_layers.dropout_no_scaling(ids, 0.7).numpy()
    assert set(np.unique(out)) <= {0, 7}
    assert 0.6 < (out == 7).mean() < 0.8


# --------------------------------------------------------------------------- shifting
def test_shift_right_variants():
    x4 = tf.reshape(tf.range(1, 7, dtype=tf.float32), [1, 3, 1, 2])
    np.testing.assert_array_equal(common_layers.shift_right(x4).numpy().reshape(3, 2),
                                  [[0, 0], [1, 2], [3, 4]])
    pad = tf.fill([1, 1, 1, 2], 9.0)
    np.testing.assert_array_equal(common_layers.shift_right(x4, pad).numpy().reshape(3, 2),
                                  [[9, 9], [1, 2], [3, 4]])
    x3 = tf.constant([[[1.0], [2.0], [3.0]]])
    np.testing.assert_array_equal(common_layers.shift_right_3d(x3).numpy().ravel(), [0, 1, 2])
    np.testing.assert_array_equal(common_layers.shift_right_2d(tf.constant([[3, 4, 5]])),
                                  [[0, 3, 4]])


# --------------------------------------------------------------------------- embedding
def test_embedding_looks_up_rows_and_squeezes_channel_axis():
    ids = np.array([[[[1]], [[3]], [[0]]]], np.int32)  # [1, 3, 1, 1]

    def build():
        out = common_layers.embedding(tf.constant(ids), 5, 4, name="emb", multiplier=2.0)
        with v1.variable_scope("emb", reuse=True):
            return out, v1.get_variable("kernel")

    out, kernel = run_graph(build)
    assert out.shape == (1, 3, 1, 4)
    np.testing.assert_allclose(out[0, :, 0], 2.0 * kernel[[1, 3, 0]], rtol=1e-6)


def test_convert_gradient_to_tensor_gives_dense_gradient():
    with tf.Graph().as_default():
        var = v1.get_variable("table", [6, 3])
        looked_up = tf.gather(common_layers.convert_gradient_to_tensor(var), [1, 1, 4])
        sparse_grad = tf.gradients(tf.reduce_sum(tf.gather(var, [1, 4])), var)[0]
        dense_grad = tf.gradients(tf.reduce_sum(looked_up), var)[0]
        assert isinstance(sparse_grad, tf.IndexedSlices)
        assert isinstance(dense_grad, tf.Tensor)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            grad = sess.run(dense_grad)
    np.testing.assert_array_equal(grad[:, 0], [0, 2, 0, 0, 1, 0])


def test_dense_gradients_in_functions_only_where_asked():
    var = tf.Variable(tf.ones([6, 3]))
    gradient_types = []

    def gradient():
        with tf.GradientTape() as tape:
            looked_up = tf.gather(common_layers.convert_gradient_to_tensor(var), [1, 1, 4])
            loss = tf.reduce_sum(looked_up)
        grad = tape.gradient(loss, var)
        gradient_types.append(type(grad))
        return tf.convert_to_tensor(grad)

    plain = tf.function(gradient)()
    with common_layers.dense_gradients_in_functions():
        dense = tf.function(gradient)()
    # A function (which may be saved) keeps the sparse gradient; a train step asks for dense.
    assert gradient_types[0] is tf.IndexedSlices
    assert gradient_types[1] is not tf.IndexedSlices and tf.is_tensor(dense)
    np.testing.assert_array_equal(dense.numpy()[:, 0], [0, 2, 0, 0, 1, 0])
    np.testing.assert_array_equal(plain.numpy(), dense.numpy())
    tf.function(gradient)()                     # after the block: sparse again
    assert gradient_types[2] is tf.IndexedSlices


# --------------------------------------------------------------------------- losses
def _log_softmax(logits):
    logits = logits - logits.max(-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


def test_padded_cross_entropy_without_smoothing_ignores_padding():
    logits = np.array([[2.0, 0.5, -1.0], [0.0, 1.0, 3.0], [5.0, 5.0, 5.0]], np.float32)
    labels = np.array([1, 2, 0], np.int32)  # the last position is padding
    num, den = common_layers.padded_cross_entropy(
        tf.constant(logits.reshape(1, 3, 1, 1, 3)), tf.constant(labels.reshape(1, 3, 1, 1)),
        label_smoothing=0.0)
    log_probs = _log_softmax(logits)
    assert float(den) == 2.0
    np.testing.assert_allclose(float(num), -(log_probs[0, 1] + log_probs[1, 2]), rtol=1e-5)


def test_padded_cross_entropy_with_label_smoothing_matches_t2t_formula():
    logits = np.array([[2.0, 0.5, -1.0, 0.0], [0.0, 1.0, 3.0, -2.0]], np.float32)
    labels = np.array([1, 3], np.int32)
    smoothing, vocab = 0.1, 4
    num, den = common_layers.padded_cross_entropy(
        tf.constant(logits.reshape(1, 2, 1, 1, 4)), tf.constant(labels.reshape(1, 2, 1, 1)),
        label_smoothing=smoothing)
    confidence, low = 1.0 - smoothing, smoothing / (vocab - 1)
    soft = np.full([2, vocab], low)
    soft[np.arange(2), labels] = confidence
    normalizing = -(confidence * math.log(confidence) + (vocab - 1) * low * math.log(low))
    expected = (-(soft * _log_softmax(logits)).sum(-1) - normalizing).sum()
    assert float(den) == 2.0
    np.testing.assert_allclose(float(num), expected, rtol=1e-5)


def test_smoothing_cross_entropy_is_zero_for_a_perfect_prediction():
    soft = np.array([[0.9, 0.05, 0.05]], np.float32)
    xent = common_layers.smoothing_cross_entropy(tf.math.log(soft), tf.constant([0]), 3, 0.9)
    np.testing.assert_allclose(xent.numpy(), [0.0], atol=1e-5)
    gaussian = common_layers.smoothing_cross_entropy(tf.zeros([2, 5]), tf.constant([1, 3]), 5,
                                                     0.9, gaussian=True)
    assert gaussian.shape == (2,) and np.all(np.isfinite(gaussian.numpy()))


def test_padded_cross_entropy_pads_shorter_labels_and_keeps_per_position_values():
    logits = tf.zeros([2, 4, 1, 1, 5])
    labels = tf.constant([[[[3]], [[1]]], [[[2]], [[0]]]])  # length 2 < 4
    xent, weights = common_layers.padded_cross_entropy(logits, labels, 0.0, reduce_sum=False)
    assert xent.shape == (2, 4, 1, 1)
    np.testing.assert_array_equal(weights.numpy().reshape(2, 4), [[1, 1, 0, 0], [1, 0, 0, 0]])
    np.testing.assert_allclose(xent.numpy().reshape(2, 4)[0, :2], [math.log(5)] * 2, rtol=1e-5)
    num, den = common_layers.padded_cross_entropy(logits, labels, 0.0,
                                                  weights_fn=common_layers.weights_all)
    assert float(den) == 8.0


def test_weights_functions():
    labels = tf.constant([[5, 6, 0, 7, 1, 0]])
    np.testing.assert_array_equal(common_layers.weights_nonzero(labels), [[1, 1, 0, 1, 1, 0]])
    np.testing.assert_array_equal(common_layers.weights_all(labels), [[1] * 6])
    np.testing.assert_array_equal(common_layers.weights_prepend_inputs_to_targets(labels),
                                  [[0, 0, 0, 1, 1, 0]])
    concatenated = tf.reshape(tf.constant([[4, 5, 1, 2, 3, 8, 9, 1, 6, 1]]), [1, 10, 1, 1])
    np.testing.assert_array_equal(
        common_layers.weights_concatenated(concatenated).numpy().ravel(),
        [0, 0, 0, 0, 0, 1, 1, 1, 0, 0])


def test_pad_to_same_length():
    a, b = common_layers.pad_to_same_length(tf.ones([2, 3, 4]), tf.ones([2, 5]))
    assert a.shape == (2, 5, 4) and b.shape == (2, 5)
    np.testing.assert_array_equal(a.numpy()[:, 3:], 0.0)
    a, b = common_layers.pad_to_same_length(tf.ones([1, 3]), tf.ones([1, 3]),
                                            final_length_divisible_by=4)
    assert a.shape == (1, 4) and b.shape == (1, 4)
    with pytest.raises(ValueError, match="axis must be 1 or 2"):
        common_layers.pad_to_same_length(a, b, axis=0)


# --------------------------------------------------------------------------- misc helpers
@settings(max_examples=20, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(-1, 5), st.integers(-1, 5))
def test_ones_matrix_band_part_matches_definition(rows, cols, lower, upper):
    band = common_layers.ones_matrix_band_part(rows, cols, lower, upper).numpy()
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    expected = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    np.testing.assert_array_equal(band, expected.astype(np.float32))
    dynamic = common_layers.ones_matrix_band_part(tf.constant(rows), tf.constant(cols),
                                                  lower, upper)
    np.testing.assert_array_equal(dynamic.numpy(), band)


def test_approximate_split_and_index_last_dim():
    pieces = common_layers.approximate_split(tf.range(7), 3)
    assert [int(p.shape[0]) for p in pieces] == [2, 2, 3]
    x = tf.constant([[[1.0, 2.0], [3.0, 4.0]]])
    np.testing.assert_array_equal(
        common_layers.index_last_dim_with_indices(x, tf.constant([[1, 0]])), [[2.0, 3.0]])


def test_sampling_helpers():
    logits = tf.constant([[[0.1, 3.0, -1.0]], [[2.0, 0.0, 1.0]]])  # [2, 1, 3]
    np.testing.assert_array_equal(common_layers.sample_with_temperature(logits, 0.0),
                                  [[1], [0]])
    tf.random.set_seed(3)
    for _ in range(5):  # top-1 sampling is argmax whatever the temperature
        np.testing.assert_array_equal(
            common_layers.sample_with_temperature(logits, 5.0, sampling_keep_top_k=1),
            [[1], [0]])
    with pytest.raises(ValueError, match="sampling_keep_top_k"):
        common_layers.sample_with_temperature(logits, 1.0, sampling_keep_top_k=0)
    probs = tf.exp(common_layers.log_prob_from_logits(logits))
    np.testing.assert_allclose(tf.reduce_sum(probs, -1), 1.0, rtol=1e-6)
    kth = common_layers.top_kth_iterative(tf.constant([[0.1, 0.5, 0.3, 0.2]]), 2)
    np.testing.assert_allclose(kth, [[0.3]])


def test_relu_density_and_rgb_conversions():
    density = common_layers.relu_density_logit(tf.constant([1.0, -1.0, 2.0, 3.0]), [0])
    np.testing.assert_allclose(float(density), math.log(0.75 / 0.25), rtol=1e-3)
    np.testing.assert_allclose(common_layers.convert_rgb_to_real(tf.constant([0, 255])),
                               [0.0, 1.0])
    np.testing.assert_allclose(common_layers.convert_real_to_rgb(tf.constant([0.5])), [127.5])
    np.testing.assert_allclose(
        common_layers.convert_rgb_to_symmetric_real(tf.constant([0, 255])), [-1.0, 1.0])


def test_should_generate_summaries():
    assert not common_layers.should_generate_summaries()  # eager
    with tf.Graph().as_default():
        assert common_layers.should_generate_summaries()
        with v1.variable_scope("shard", reuse=True):
            assert not common_layers.should_generate_summaries()
        seen = []

        def body(i):
            seen.append(common_layers.should_generate_summaries())
            return i + 1
        tf.while_loop(lambda i: i < 2, body, [tf.constant(0)])
        assert seen == [False]


def test_decay_schedules_use_the_step():
    np.testing.assert_allclose(common_layers.inverse_lin_decay(100, step=50), 0.505)
    np.testing.assert_allclose(common_layers.inverse_exp_decay(100, step=100), 1.0)
    np.testing.assert_allclose(common_layers.inverse_exp_decay(100, step=0), 0.01, rtol=1e-5)
