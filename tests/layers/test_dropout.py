"""t2t.layers.dropout: tf.nn.dropout's contract with 16-bit random draws."""
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.layers import common_layers
from t2t.layers import dropout as dropout_lib


@pytest.mark.parametrize("rate", [0.1, 0.3, 0.9])
def test_dropout_drops_the_rate_and_scales_the_rest(rate):
    x = tf.ones([500, 401])   # an odd size: one draw more than needed, sliced off
    out = dropout_lib.dropout(x, rate).numpy()
    scale = np.float32(1.0) / (np.float32(1.0) - np.float32(rate))
    assert set(np.unique(out)) == {0.0, scale}
    # 200,500 draws: the dropped fraction within 5 standard deviations of the rate.
    assert abs((out == 0).mean() - rate) < 5 * np.sqrt(rate * (1 - rate) / out.size)


def test_dropout_rate_zero_returns_x_and_bad_rates_name_the_range():
    x = tf.ones([2, 3])
    assert dropout_lib.dropout(x, 0.0) is x
    assert common_layers.dropout(x, 0) is x
    for rate in (1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"rate must be in \[0, 1\)"):
            dropout_lib.dropout(x, rate)
    with pytest.raises(ValueError, match="floating-point"):
        dropout_lib.dropout(tf.ones([2], tf.int32), 0.5)


def test_dropout_masks_repeat_for_a_seed_and_change_between_calls():
    x = tf.ones([64, 64])
    tf.random.set_seed(7)
    first, second = dropout_lib.dropout(x, 0.5).numpy(), dropout_lib.dropout(x, 0.5).numpy()
    tf.random.set_seed(7)
    again = dropout_lib.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(first, again)
    assert (first != second).mean() > 0.3   # two independent masks differ in about half


def test_dropout_noise_shape_broadcasts_one_mask():
    x = tf.reshape(tf.range(1, 4 * 6 * 8 + 1, dtype=tf.float32), [4, 6, 8])
    out = dropout_lib.dropout(x, 0.5, noise_shape=[1, 6, 1]).numpy()
    kept = out != 0
    np.testing.assert_array_equal(kept, np.broadcast_to(kept[:1, :, :1], kept.shape))
    np.testing.assert_allclose(out[kept], 2.0 * x.numpy()[kept])


def test_dropout_gradient_is_the_mask():
    x = tf.random.normal([8, 9])
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = dropout_lib.dropout(x, 0.25)
    gradient = tape.gradient(out, x).numpy()
    scale = np.float32(1.0) / np.float32(0.75)
    np.testing.assert_array_equal(gradient, np.where(out.numpy() != 0, scale, 0.0))


def test_dropout_in_a_function_with_unknown_shape_and_a_tensor_rate():
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32),
                                  tf.TensorSpec([], tf.float32)])
    def apply(x, rate):
        return dropout_lib.dropout(x, rate)

    out = apply(tf.ones([3, 5]), tf.constant(0.5)).numpy()   # odd size, even after
    assert out.shape == (3, 5) and set(np.unique(out)) <= {0.0, 2.0}
    assert set(np.unique(apply(tf.ones([4, 4]), tf.constant(0.0)).numpy())) == {1.0}


def test_dropout_half_precision():
    out = dropout_lib.dropout(tf.ones([16, 16], tf.float16), 0.5)
    assert out.dtype == tf.float16
    assert set(np.unique(out.numpy())) == {0.0, 2.0}


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 7), min_size=1, max_size=3),
       rate=st.floats(0.01, 0.99))
def test_dropout_keeps_shape_and_values_for_any_shape(shape, rate):
    x = tf.random.uniform(shape, 1.0, 2.0)
    out = dropout_lib.dropout(x, rate).numpy()
    assert out.shape == tuple(shape)
    kept = out != 0
    scale = np.float32(1.0) / (np.float32(1.0) - np.float32(rate))
    np.testing.assert_allclose(out[kept], x.numpy()[kept] * scale, rtol=1e-6)
