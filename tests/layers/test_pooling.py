"""pooling: pool's causal padding, global_pool_1d with and without masks, the running max."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import pooling

X = np.array([[[1., -2.], [3., 0.], [-1., 5.]], [[2., 2.], [-4., 1.], [0., -3.]]], np.float32)
MASK = np.array([[1., 1., 0.], [1., 0., 0.]], np.float32)


def test_global_pool_1d_max_and_average_with_masks():
    assert common_layers.global_pool_1d is pooling.global_pool_1d
    x = tf.constant(X)
    np.testing.assert_array_equal(pooling.global_pool_1d(x).numpy(), X.max(axis=1))
    np.testing.assert_allclose(pooling.global_pool_1d(x, "AVR").numpy(), X.mean(axis=1))
    masked = X * MASK[:, :, None]
    np.testing.assert_array_equal(pooling.global_pool_1d(x, "MAX", tf.constant(MASK)).numpy(),
                                  masked.max(axis=1))
    np.testing.assert_allclose(pooling.global_pool_1d(x, "AVR", tf.constant(MASK)).numpy(),
                               masked.sum(axis=1) / MASK.sum(axis=1, keepdims=True))
    with pytest.raises(ValueError, match="'MAX' or 'AVR'"):
        pooling.global_pool_1d(x, "MIN")


def test_running_global_pool_1d_is_the_running_max():
    np.testing.assert_array_equal(pooling.running_global_pool_1d(tf.constant(X)).numpy(),
                                  np.maximum.accumulate(X, axis=1))


def test_pool_left_padding_is_causal():
    x = np.arange(1., 6., dtype=np.float32).reshape(1, 5, 1, 1)
    out = pooling.pool(tf.constant(x), (3, 1), "AVG", "LEFT").numpy()[0, :, 0, 0]
    # Zeros padded on the left count in the average (VALID pooling of the padded input).
    np.testing.assert_allclose(out, [1 / 3, 1.0, 2.0, 3.0, 4.0])
    same = pooling.pool(tf.constant(x), (3, 1), "MAX", "SAME").numpy()[0, :, 0, 0]
    np.testing.assert_array_equal(same, [2, 3, 4, 5, 5])

