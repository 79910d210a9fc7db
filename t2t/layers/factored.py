"""Logits as a product of two factors, T2T 1.15.7's `FactoredTensor` and the cross-entropy
that never builds the whole [positions, vocab] matrix (re-exported by `common_layers`).

    logits = FactoredTensor(body_output, embedding)   # [B, L, d] and [vocab, d]
    logits.to_tensor()                                # [B, L, vocab] = a @ b^T
    num, den = padded_cross_entropy_factored(logits, labels, label_smoothing=0.1)

The loss runs over the positions in 16 parts, one [part, vocab] block of logits at a time
forward and backward (T2T's memory-efficient version).
"""
import tensorflow as tf

from t2t.layers.losses import smoothing_cross_entropy, weights_nonzero
from t2t.layers.shape_utils import approximate_split, shape_list

_NUM_SPLITS = 16


class FactoredTensor:
    """The tensor tf.matmul(a, b, transpose_b=True), kept as a [..., d] and b [n, d].

    Converts to a tensor where one is needed (tf.convert_to_tensor, ops), so code that
    expects logits still works; the loss functions use the factors directly.
    """

    def __init__(self, a, b):
        self._a = a
        self._b = b

    @property
    def a(self):
        return self._a

    @property
    def b(self):
        return self._b

    def to_tensor(self):
        """The product a @ b^T, [..., n] (a's leading axes kept)."""
        a_shape = shape_list(self.a)
        b_shape = shape_list(self.b)
        flat_a = tf.reshape(self.a, [-1, b_shape[1]])
        product = tf.matmul(flat_a, self.b, transpose_b=True)
        product = tf.reshape(product, a_shape[:-1] + [b_shape[0]])
        product.set_shape(self.a.get_shape().as_list()[:-1] + [self.b.get_shape()[0]])
        return product


def _convert_factored_tensor_to_tensor(value, dtype=None, name=None, as_ref=False):
    del as_ref
    return tf.convert_to_tensor(value.to_tensor(), dtype=dtype, name=name)


tf.register_tensor_conversion_function(FactoredTensor, _convert_factored_tensor_to_tensor)


@tf.custom_gradient
def smoothing_cross_entropy_factored(a, b, labels, confidence):
    """smoothing_cross_entropy(a @ b^T, labels, vocab, confidence) without building a @ b^T.

    a [batch, d], b [vocab, d], labels [batch] ints, confidence a float tensor.
    Returns [batch]. The gradient is recomputed part by part from the factors.
    """
    vocab_size = shape_list(b)[0]
    a_parts = approximate_split(a, _NUM_SPLITS)
    label_parts = approximate_split(labels, _NUM_SPLITS)
    parts = []
    for a_part, label_part in zip(a_parts, label_parts):
        # One block of logits alive at a time.
        with tf.control_dependencies(parts[-1:]):
            logits = tf.matmul(a_part, b, transpose_b=True)
            parts.append(smoothing_cross_entropy(logits, label_part, vocab_size, confidence))

    def grad(dy):
        # d xent / d logits = softmax(logits) - soft targets, per block.
        low_confidence = (1.0 - confidence) / tf.cast(vocab_size - 1, confidence.dtype)
        a_grads, b_grad = [], tf.zeros_like(b)
        for a_part, label_part, dy_part in zip(a_parts, label_parts,
                                               approximate_split(dy, _NUM_SPLITS)):
            with tf.control_dependencies([b_grad] + a_grads[-1:]):
                logits = tf.matmul(a_part, b, transpose_b=True)
                targets = tf.one_hot(tf.cast(label_part, tf.int32), vocab_size,
                                     on_value=confidence, off_value=low_confidence)
                d_logits = (tf.nn.softmax(logits) - targets) * dy_part[:, tf.newaxis]
                a_grads.append(tf.matmul(d_logits, b))
                b_grad += tf.matmul(d_logits, a_part, transpose_a=True)
        return tf.concat(a_grads, 0), b_grad, None, None

    return tf.concat(parts, 0), grad


def padded_cross_entropy_factored(factored_logits, labels, label_smoothing,
                                  weights_fn=weights_nonzero, reduce_sum=True):
    """padded_cross_entropy for a FactoredTensor of logits [batch, timesteps, vocab].

    Returns (sum of losses, sum of weights), or the per-position values when not
    reduce_sum, as padded_cross_entropy does.
    """
    a = factored_logits.a
    b = factored_logits.b
    confidence = 1.0 - label_smoothing
    with tf.name_scope("padded_cross_entropy_factored"):
        labels_flat = tf.reshape(labels, [-1])
        a_flat = tf.reshape(a, [-1, shape_list(b)[1]])
        xent = smoothing_cross_entropy_factored(a_flat, b, labels_flat,
                                                tf.convert_to_tensor(confidence, a.dtype))
        xent = tf.reshape(xent, shape_list(labels))
        weights = weights_fn(labels)
        if not reduce_sum:
            return xent * weights, weights
        return tf.reduce_sum(xent * weights), tf.reduce_sum(weights)
