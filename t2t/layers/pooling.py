"""Pooling with T2T 1.15.7's names (re-exported by `common_layers`): `pool` (with "LEFT"
padding), `global_pool_1d` over a sequence and its causal `running_global_pool_1d`.

    global_pool_1d(x, "AVR", mask)   # x [B, L, d], mask [B, L] -> [B, d]: mean of real ones
    running_global_pool_1d(x)        # [B, L, d]: max over positions <= i
"""
import tensorflow as tf


def pool(inputs, window_size, pooling_type, padding, strides=(1, 1)):
    """tf.nn.pool over [batch, height, width, channels]; padding "LEFT" pads before each
    axis only (odd windows), so output i pools inputs <= i."""
    inputs = tf.convert_to_tensor(inputs)
    with tf.name_scope("pool"):
        static_shape = inputs.get_shape()
        if static_shape.ndims != 4:
            raise ValueError("pool: inputs must have static rank 4, got shape %s" % static_shape)
        if padding == "LEFT":
            if window_size[0] % 2 != 1 or window_size[1] % 2 != 1:
                raise ValueError("pool: padding 'LEFT' needs odd window sizes, got %s"
                                 % (window_size,))
            height_padding = 2 * (window_size[0] // 2)
            width_padding = 0 if static_shape[2] == 1 else 2 * (window_size[1] // 2)
            inputs = tf.pad(inputs, [[0, 0], [height_padding, 0], [width_padding, 0], [0, 0]])
            inputs.set_shape([static_shape[0], None, None, static_shape[3]])
            padding = "VALID"
    return tf.nn.pool(inputs, window_size, pooling_type, padding=padding, strides=strides)


def global_pool_1d(inputs, pooling_type="MAX", mask=None):
    """[batch, length, depth] -> [batch, depth] by "MAX" or "AVR" (mean) over length.

    mask [batch, length] (1 = real) zeroes the other positions first; "AVR" then divides
    by the number of real ones (at least 1).
    """
    if pooling_type not in ("MAX", "AVR"):
        raise ValueError("global_pool_1d: pooling_type must be 'MAX' or 'AVR', got %r"
                         % (pooling_type,))
    with tf.name_scope("global_pool"):
        if mask is not None:
            mask = tf.expand_dims(mask, axis=2)
            inputs = tf.multiply(inputs, mask)
        if pooling_type == "MAX":
            return tf.reduce_max(inputs, axis=1)
        if mask is not None:
            num_elems = tf.reduce_sum(mask, axis=1)  # [batch, 1]
            return tf.reduce_sum(inputs, axis=1) / tf.maximum(num_elems, 1)
        return tf.reduce_mean(inputs, axis=1)


def running_global_pool_1d(inputs, pooling_type="MAX"):
    """[batch, length, depth] -> the running max over positions 0..i (only "MAX")."""
    if pooling_type != "MAX":
        raise ValueError("running_global_pool_1d supports only pooling_type 'MAX', got %r"
                         % (pooling_type,))
    with tf.name_scope("running_global_pool"):
        elems = tf.transpose(inputs, [1, 0, 2])  # length first, for tf.scan
        cumulatives = tf.scan(tf.maximum, elems, swap_memory=True)
        return tf.transpose(cumulatives, [1, 0, 2])
