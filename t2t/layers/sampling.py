"""Sampling with one temperature per example, T2T 1.15.7's `sample_temperature_per_example`
(re-exported by `common_layers`; `sample_with_temperature` is in common_layers itself).

    logits = tf.constant([[0., 5., 1.], [3., 0., 0.]])
    sample_temperature_per_example(logits, tf.constant([0., 0.]))   # [1, 0]: argmax each
"""
import tensorflow as tf

from t2t.layers.shape_utils import shape_list


def _select_top_k(logits, top_k):
    """logits [batch, ..., vocab] with all but each row's top_k[b] largest set to -1e6.

    top_k: one value per example (or a scalar); -1 keeps every logit.
    """
    vocab_size = shape_list(logits)[-1]
    top_k = tf.cast(tf.convert_to_tensor(top_k), tf.int32)
    top_k = tf.where(tf.not_equal(top_k, -1), top_k, tf.ones_like(top_k) * vocab_size)
    # Rank of each logit in its row, 0 for the largest.
    ranks = tf.argsort(tf.argsort(logits, axis=-1, direction="DESCENDING"), axis=-1)
    top_k = tf.reshape(top_k, [-1] + [1] * (len(logits.shape) - 1))
    return tf.where(ranks < top_k, logits, tf.ones_like(logits) * -1e6)


def sample_temperature_per_example(logits, temperature, sampling_keep_top_k=-1, seed=None):
    """Sample ids from logits [batch, ..., vocab] with temperature[b] for example b.

    An example of temperature 0 gets the argmax. sampling_keep_top_k: -1 (all), or the
    number of largest logits to sample from (a scalar or one per example). seed: None (a
    stateful random op, as T2T), an int, or a shape-[2] int tensor for a stateless draw.
    Returns int64 ids of shape logits.shape[:-1].
    """
    logits = tf.convert_to_tensor(logits)
    logits = _select_top_k(logits, sampling_keep_top_k)
    shape = shape_list(logits)
    temperature = tf.reshape(tf.cast(temperature, logits.dtype),
                             [-1] + [1] * (len(logits.shape) - 1))
    greedy = tf.equal(temperature, 0.0)
    # Temperature 0 would divide by zero; those rows take the argmax below.
    scaled = logits / tf.where(greedy, tf.ones_like(temperature), temperature)
    reshaped = tf.reshape(scaled, [-1, shape[-1]])
    if seed is None:
        choices = tf.random.categorical(reshaped, 1)
    else:
        choices = tf.random.stateless_categorical(
            reshaped, 1, seed=[seed, 0] if isinstance(seed, int) else seed)
    choices = tf.reshape(choices, shape[:-1])
    greedy = tf.broadcast_to(tf.reshape(greedy, [-1] + [1] * (len(logits.shape) - 2)),
                             shape[:-1])
    return tf.where(greedy, tf.argmax(logits, axis=-1), choices)
