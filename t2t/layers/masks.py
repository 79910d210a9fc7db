"""Masks and lengths, T2T 1.15.7's names (re-exported by `common_layers`): band matrices,
position comparisons and the padding of embedded sequences.

    ones_matrix_band_part(3, 3, -1, 0)       # lower triangle of ones (causal attention)
    mask_leq(2, 3)                           # [[[1, 0, 0], [1, 1, 0]]]
    length_from_embedding(emb)               # [batch]: positions whose vector is not all zero
"""
import numpy as np
import tensorflow as tf

from t2t.layers.losses import weights_nonzero



def ones_matrix_band_part(rows, cols, num_lower, num_upper, out_shape=None):
    """A [rows, cols] float matrix of ones within the band, zeros outside.

    num_lower / num_upper: how many sub/super-diagonals to keep (negative = all).
    Built in numpy when the sizes are Python ints, so it is a constant.

        ones_matrix_band_part(3, 3, -1, 0)   # lower triangle: [[1,0,0],[1,1,0],[1,1,1]]
    """
    if all(isinstance(el, int) for el in [rows, cols, num_lower, num_upper]):
        if num_lower < 0:
            num_lower = rows - 1
        if num_upper < 0:
            num_upper = cols - 1
        lower_mask = np.tri(cols, rows, num_lower).T
        upper_mask = np.tri(rows, cols, num_upper)
        band = np.ones((rows, cols)) * lower_mask * upper_mask
        if out_shape:
            band = band.reshape(out_shape)
        return tf.constant(band, tf.float32)
    # band_part rejects bands wider than the matrix; clip them (negative still means all).
    num_lower = tf.minimum(tf.cast(num_lower, tf.int64), tf.cast(rows, tf.int64) - 1)
    num_upper = tf.minimum(tf.cast(num_upper, tf.int64), tf.cast(cols, tf.int64) - 1)
    band = tf.linalg.band_part(tf.ones([rows, cols]), num_lower, num_upper)
    if out_shape:
        band = tf.reshape(band, out_shape)
    return band


def mask_pos_gt(source_length, target_length):
    """[1, target_length, source_length]: 1.0 where the target position > the source one.

        mask_pos_gt(2, 2)   # [[[0, 0], [1, 0]]]
    """
    return tf.cast(tf.range(target_length)[tf.newaxis, :, tf.newaxis] >
                   tf.range(source_length)[tf.newaxis, tf.newaxis, :], tf.float32)


def mask_leq(target_length, source_length):
    """[1, target_length, source_length]: 1.0 where the source position <= the target one."""
    return ones_matrix_band_part(target_length, source_length, -1, 0,
                                 out_shape=[1, target_length, source_length])


def mask_pos_lt(source_length, target_length):
    """[1, target_length, source_length]: 1.0 where the target position < the source one.

        mask_pos_lt(2, 2)   # [[[0, 1], [0, 0]]]
    """
    return tf.cast(tf.range(target_length)[tf.newaxis, :, tf.newaxis] <
                   tf.range(source_length)[tf.newaxis, tf.newaxis, :], tf.float32)


def mask_from_embedding(emb):
    """[batch, width, height, depth] embeddings -> [batch, width, height, 1]: 0.0 where the
    vector is all zeros (symbol modalities embed padding as zeros), else 1.0."""
    return weights_nonzero(tf.reduce_sum(tf.abs(emb), axis=3, keepdims=True))


def length_from_embedding(emb):
    """[batch] int32: how many positions of [batch, length, 1, depth] are not padding.

        length_from_embedding(tf.constant([[[[1.]], [[2.]], [[0.]]]]))   # [2]
    """
    return tf.cast(tf.reduce_sum(mask_from_embedding(emb), [1, 2, 3]), tf.int32)
