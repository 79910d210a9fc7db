"""Element-wise activations of T2T 1.15.7 (re-exported by `common_layers`).

    brelu(tf.constant([[-1., -1., 2., 2.]]))   # [[0., -1., 2., 0.]]: relu, -relu(-x), ...
    saturating_sigmoid(tf.constant([9.]))     # [1.]
"""
import numpy as np
import tensorflow as tf

from t2t.layers.shape_utils import shape_list


def saturating_sigmoid(x):
    """1.2 * sigmoid(x) - 0.1, clipped to [0, 1] (reaches 0 and 1 at finite x)."""
    with tf.name_scope("saturating_sigmoid"):
        y = tf.sigmoid(x)
        return tf.minimum(1.0, tf.maximum(0.0, 1.2 * y - 0.1))


def hard_sigmoid(x, saturation_limit=0.9):
    """(min(1, relu(x / 2 + 1 / 2)), mean(relu(|x| - saturation_limit))): the activation and
    a cost for inputs past the saturation limit."""
    saturation_cost = tf.reduce_mean(tf.nn.relu(tf.abs(x) - saturation_limit))
    return tf.minimum(1.0, tf.nn.relu(0.5 * x + 0.5)), saturation_cost


def hard_tanh(x, saturation_limit=0.9):
    """(x clipped to [-1, 1], mean(relu(|x| - saturation_limit)))."""
    saturation_cost = tf.reduce_mean(tf.nn.relu(tf.abs(x) - saturation_limit))
    return tf.minimum(1.0, tf.maximum(x, -1.0)), saturation_cost


def _bipolar(x, fn):
    # Pairs of the last axis: fn on the first, -fn(-x) on the second (arXiv:1709.04054).
    x_shape = shape_list(x)
    x1, x2 = tf.split(tf.reshape(x, x_shape[:-1] + [-1, 2]), 2, axis=-1)
    return tf.reshape(tf.concat([fn(x1), -fn(-x2)], axis=-1), x_shape)


def brelu(x):
    """Bipolar ReLU: relu on even channels, -relu(-x) on odd ones (an even last axis)."""
    return _bipolar(x, tf.nn.relu)


def belu(x):
    """Bipolar ELU: elu on even channels, -elu(-x) on odd ones (an even last axis)."""
    return _bipolar(x, tf.nn.elu)


def gelu(x):
    """GELU, tanh approximation: x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))."""
    cdf = 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))
    return x * cdf
