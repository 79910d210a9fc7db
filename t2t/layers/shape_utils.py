"""Shape and dtype helpers used by every layer module (re-exported by `common_layers`).

They live apart from `common_layers` so that `losses` can use them without an import cycle.

    x = tf.compat.v1.placeholder(tf.float32, [None, 5, 1, 8])
    shape_list(x)          # [<tf.Tensor 'strided_slice:0' ...>, 5, 1, 8]
    flatten4d3d(x).shape   # (None, 5, 8)
"""
import functools
import operator

import tensorflow as tf


def shape_list(x):
    """The shape of `x` as a list: Python ints where static, scalar tensors where not.

        shape_list(tf.zeros([2, 3]))   # [2, 3]
    """
    x = tf.convert_to_tensor(x)
    if x.get_shape().dims is None:
        return tf.shape(x)
    static = x.get_shape().as_list()
    dynamic = tf.shape(x)
    return [dynamic[i] if dim is None else dim for i, dim in enumerate(static)]


def list_product(els):
    """Product of a list of ints or scalar tensors: list_product([2, 3, 4]) == 24."""
    return functools.reduce(operator.mul, els, 1)


def to_float(x):
    """Cast to float32 (TF1's tf.to_float)."""
    return tf.cast(x, tf.float32)


def cast_like(x, y):
    """Cast `x` to the dtype of `y` (no-op when they already match).

        cast_like(tf.constant([1, 2]), tf.zeros([2])).dtype   # tf.float32
    """
    x = tf.convert_to_tensor(x)
    y = tf.convert_to_tensor(y)
    if x.dtype.base_dtype == y.dtype.base_dtype:
        return x
    return tf.cast(x, y.dtype)


def variable_dtype(x):
    """The dtype of a layer's variables for activations `x`: float32 for half-precision
    activations (cast at use), else x's dtype."""
    return tf.float32 if x.dtype.base_dtype in (tf.float16, tf.bfloat16) else x.dtype.base_dtype


def flatten4d3d(x):
    """[batch, a, b, depth] -> [batch, a * b, depth].

        flatten4d3d(tf.zeros([2, 5, 1, 8])).shape   # (2, 5, 8)
    """
    xshape = shape_list(x)
    result = tf.reshape(x, [xshape[0], xshape[1] * xshape[2], xshape[3]])
    return result


def reshape_like(a, b):
    """Reshape `a` to b's shape except for the last dimension, which stays a's.

        reshape_like(tf.zeros([6, 4]), tf.zeros([2, 3, 7])).shape   # (2, 3, 4)
    """
    ret = tf.reshape(a, tf.concat([tf.shape(b)[:-1], tf.shape(a)[-1:]], 0))
    if not tf.executing_eagerly():
        ret.set_shape(b.get_shape().as_list()[:-1] + a.get_shape().as_list()[-1:])
    return ret


def expand_squeeze_to_nd(x, n, squeeze_dim=2, expand_dim=-1):
    """Squeeze `squeeze_dim` or expand at `expand_dim` until `x` has rank `n`.

        expand_squeeze_to_nd(tf.zeros([2, 3]), 4).shape          # (2, 3, 1, 1)
        expand_squeeze_to_nd(tf.zeros([2, 3, 1, 1]), 2).shape    # (2, 3)
    """
    if len(x.shape) > n:
        while len(x.shape) != n:
            x = tf.squeeze(x, [squeeze_dim])
    else:
        while len(x.shape) != n:
            x = tf.expand_dims(x, expand_dim)
    return x


def approximate_split(x, num_splits, axis=0):
    """Split `x` into num_splits pieces whose sizes differ by at most one.

        [t.shape[0] for t in approximate_split(tf.zeros([7]), 3)]   # [2, 2, 3]
    """
    size = shape_list(x)[axis]
    size_splits = [(size + i) // num_splits for i in range(num_splits)]
    return tf.split(x, size_splits, axis=axis)
