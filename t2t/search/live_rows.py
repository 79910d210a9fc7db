"""Removing finished batch elements from a decoding loop's state, and putting them back.

A decoding `tf.while_loop` over a batch keeps computing every element until the last one
is done. With these helpers the loop keeps only the elements still searching (the "live"
ones): `batch_index` [n] holds each live element's row in the original batch, an element
whose result can no longer change is written into a result buffer of the full batch at its
original row (`write_rows`) and its rows are removed from every loop tensor
(`keep_rows`). After the loop the buffer holds every element's result in the input order:

    buffer = tf.zeros([3, 6], tf.int32)                    # 3 elements, up to 6 ids
    batch_index = tf.constant([0, 2])                      # element 1 is already done
    done = tf.constant([True, False])                      # element 0 is done now
    buffer = write_rows(buffer, batch_index, done, pad_to(ids, 6))  # ids [2, 4] -> row 0
    batch_index = keep_rows(batch_index, tf.logical_not(done))     # [2]

In exact arithmetic the results do not change. In floating point they can, by rounding:
a MatMul's row values depend on the number of rows it is given (the CPU kernels choose
their blocking by the matrix shape), so the remaining elements' scores may move in the
last bits once the batch shrinks.
"""
import tensorflow as tf


def row_indices(mask):
    """int32 [k] positions where the bool [n] `mask` is True: [F, T, T] -> [1, 2]."""
    return tf.cast(tf.reshape(tf.where(mask), [-1]), tf.int32)


def keep_rows(tensor, keep):
    """The rows of `tensor` [n, ...] where the bool [n] `keep` is True (nested allowed)."""
    indices = row_indices(keep)
    return tf.nest.map_structure(lambda t: tf.gather(t, indices), tensor)


def pad_to(tensor, length, axis=-1):
    """`tensor` zero-padded at the end of `axis` to `length` (an int or scalar tensor)."""
    rank = tensor.shape.ndims
    axis = axis % rank
    pad = length - tf.shape(tensor)[axis]
    paddings = [[0, 0]] * axis + [[0, pad]] + [[0, 0]] * (rank - axis - 1)
    return tf.pad(tensor, paddings)


def write_rows(buffer, batch_index, done, values):
    """`buffer` [B, ...] with the rows `batch_index[done]` set to `values[done]`.

    `values` [n, ...] must have the buffer's shape after the first dimension.
    """
    indices = row_indices(done)
    return tf.tensor_scatter_nd_update(buffer, tf.gather(batch_index, indices)[:, None],
                                       tf.gather(values, indices))


def batch_invariant(tensor):
    """The shape invariant of a loop tensor whose batch dimension (the first) shrinks."""
    shape = tensor.shape.as_list()
    return tf.TensorShape([None] + shape[1:])


def worth_dropping(batch_size):
    """False when the batch is known to hold one element (nothing to remove from it)."""
    value = tf.get_static_value(batch_size) if tf.is_tensor(batch_size) else batch_size
    return value is None or int(value) > 1
