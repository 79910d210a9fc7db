"""sample_temperature_per_example: argmax at temperature 0, top-k, per-example temperature."""
import numpy as np
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import sampling

LOGITS = tf.constant([[0., 5., 1., 3.], [3., 0., 0., -1.], [1., 2., 4., 0.]])


def test_temperature_zero_is_argmax_for_any_rank():
    assert common_layers.sample_temperature_per_example is sampling.sample_temperature_per_example
    ids = sampling.sample_temperature_per_example(LOGITS, tf.zeros([3]))
    assert ids.dtype == tf.int64 and ids.numpy().tolist() == [1, 0, 2]
    logits = tf.reshape(tf.range(24, dtype=tf.float32) % 5, [2, 3, 4])
    ids = sampling.sample_temperature_per_example(logits, tf.zeros([2]))
    np.testing.assert_array_equal(ids.numpy(), np.argmax(logits.numpy(), axis=-1))


def test_top_k_keeps_the_largest_logits_per_example():
    kept = sampling._select_top_k(LOGITS, tf.constant([2, -1, 1])).numpy()
    np.testing.assert_array_equal(kept[0], [-1e6, 5, -1e6, 3])
    np.testing.assert_array_equal(kept[1], LOGITS.numpy()[1])
    np.testing.assert_array_equal(kept[2], [-1e6, -1e6, 4, -1e6])
    # T2T's path (common_layers._select_top_k), on a float64 [batch, len, 1, 1, vocab] array.
    assert common_layers._select_top_k is sampling._select_top_k
    logits = np.random.RandomState(0).rand(3, 5, 1, 1, 7) + 0.001
    kept = common_layers._select_top_k(logits, [3, 2, -1]).numpy()
    assert ((kept > -1e6).sum(axis=-1)[..., 0, 0] == [[3] * 5, [2] * 5, [7] * 5]).all()
    # Sampling with k = 1 can only give the argmax, at any temperature.
    ids = sampling.sample_temperature_per_example(LOGITS, tf.constant([5., 1., 9.]), 1)
    assert ids.numpy().tolist() == [1, 0, 2]


def test_per_example_temperatures_and_seeds():
    logits = tf.constant([[0., 0.1], [0., 0.1]])
    draws = np.stack([sampling.sample_temperature_per_example(
        logits, tf.constant([0., 1.]), seed=s).numpy() for s in range(40)])
    assert (draws[:, 0] == 1).all()                 # temperature 0: always the argmax
    assert 0 < draws[:, 1].sum() < 40               # temperature 1: both ids occur
    again = sampling.sample_temperature_per_example(logits, tf.constant([1., 1.]), seed=7)
    same = sampling.sample_temperature_per_example(logits, tf.constant([1., 1.]), seed=7)
    np.testing.assert_array_equal(again.numpy(), same.numpy())
