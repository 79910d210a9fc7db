"""Softmax attention on per-head tensors: weights, their dropout and summaries.

The core that every attention function shares (dense, local, relative): q, k, v are
[batch, heads, length, depth]; a bias holds 0 where attention is allowed and -1e9 where
not. `common_attention` re-exports these names under T2T 1.15.7's module path.

    q = k = v = tf.random.normal([1, 2, 3, 4])
    y = dot_product_attention(q, k, v, None)    # [1, 2, 3, 4], each row a mix of v's rows
"""
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers.shape_utils import cast_like, shape_list

_v1 = tf.compat.v1


def maybe_upcast(logits, activation_dtype=None, weight_dtype=None, hparams=None):
    """Cast logits to float32 under mixed precision (so the softmax is stable)."""
    if common_layers.mixed_precision_is_enabled(activation_dtype, weight_dtype, hparams):
        return tf.cast(logits, tf.float32)
    return logits


def attention_image_summary(attn, image_shapes=None):
    """An image summary of attention weights [batch, heads, query, memory], heads as RGB.

    image_shapes: (q_rows, q_cols, m_rows, m_cols) or, with channels,
    (q_rows, q_cols, q_channels, m_rows, m_cols, m_channels) when positions are pixels.
    """
    attn = tf.cast(attn, tf.float32)
    num_heads = shape_list(attn)[1]
    image = tf.transpose(attn, [0, 2, 3, 1])  # [batch, query, memory, heads]
    image = tf.pow(image, 0.2)  # brighten small weights
    # Pad heads to a multiple of 3; each third becomes one colour channel.
    image = tf.pad(image, [[0, 0], [0, 0], [0, 0], [0, tf.math.floormod(-num_heads, 3)]])
    image = tf.reduce_max(tf.reshape(image, shape_list(image)[:-1] + [3, -1]), 4)
    if image_shapes is not None:
        if len(image_shapes) == 4:
            q_rows, q_cols, m_rows, m_cols = list(image_shapes)
            image = tf.reshape(image, [-1, q_rows, q_cols, m_rows, m_cols, 3])
            image = tf.transpose(image, [0, 1, 3, 2, 4, 5])
            image = tf.reshape(image, [-1, q_rows * m_rows, q_cols * m_cols, 3])
        elif len(image_shapes) == 6:
            q_rows, q_cols, q_channels, m_rows, m_cols, m_channels = list(image_shapes)
            image = tf.reshape(image, [-1, q_rows, q_cols, q_channels, m_rows, m_cols,
                                       m_channels, 3])
            image = tf.transpose(image, [0, 1, 4, 3, 2, 5, 6, 7])
            image = tf.reshape(image, [-1, q_rows * m_rows * q_channels,
                                       q_cols * m_cols * m_channels, 3])
        else:
            raise ValueError("attention_image_summary: image_shapes must have 4 or 6 "
                             "entries, got %r" % (image_shapes,))
    _v1.summary.image("attention", image, max_outputs=1)


def harden_attention_weights(weights, k, gumbel_noise_weight):
    """Keep only the k largest weights per query, renormalised; optional Gumbel noise.

        harden_attention_weights(tf.constant([[0.5, 0.3, 0.2]]), 2, 0.0)   # [[0.625, 0.375, 0]]
    """
    if gumbel_noise_weight > 0.0:
        gumbel_noise = -tf.math.log(-tf.math.log(tf.random.uniform(
            tf.shape(weights), minval=1e-5, maxval=1 - 1e-5)))
        weights += gumbel_noise * gumbel_noise_weight
    # Fewer than k memory positions (early decoding steps) keep them all.
    k = tf.minimum(k, tf.shape(weights)[-1])
    kth_largest = tf.stop_gradient(tf.math.top_k(weights, k).values[..., -1:])
    weights = tf.nn.relu(tf.where(weights >= kth_largest, weights, tf.zeros_like(weights)))
    weights_sum = tf.maximum(tf.reduce_sum(weights, axis=-1, keepdims=True), 1e-6)
    return weights / weights_sum


def finish_attention_weights(weights, scope, logits, save_weights_to, dropout_rate,
                    dropout_broadcast_dims, make_image_summary, image_shapes):
    """The shared tail of the attention functions: record, drop out, summarise.

    save_weights_to (a dict, or None) receives `weights` under the scope's name and
    `logits` under "<name>/logits"; then dropout at 1 - dropout_rate (mask shared over
    dropout_broadcast_dims) and, when summaries are on, an image summary.
    """
    if save_weights_to is not None:
        save_weights_to[scope.name] = weights
        save_weights_to[scope.name + "/logits"] = logits
    weights = dropout_lib.dropout_with_broadcast_dims(
        weights, 1.0 - dropout_rate, broadcast_dims=dropout_broadcast_dims)
    if make_image_summary and common_layers.should_generate_summaries():
        attention_image_summary(weights, image_shapes)
    return weights


def dot_product_attention(q, k, v, bias, dropout_rate=0.0, image_shapes=None, name=None,
                          make_image_summary=True, save_weights_to=None,
                          dropout_broadcast_dims=None, activation_dtype=None,
                          weight_dtype=None, hard_attention_k=0, gumbel_noise_weight=0.0):
    """softmax(q k^T + bias) v.

    q: [batch, heads, length_q, depth_k]; k: [batch, heads, length_kv, depth_k];
    v: [batch, heads, length_kv, depth_v]; bias broadcastable to [batch, heads, q, kv].
    Returns [batch, heads, length_q, depth_v]. q is not scaled here (multihead_attention
    scales it by depth_k^-0.5). save_weights_to (a dict) receives the weights and logits
    under this scope's name; hard_attention_k > 0 keeps only the k largest weights.
    """
    with _v1.variable_scope(name, default_name="dot_product_attention",
                            values=[q, k, v]) as scope:
        logits = tf.matmul(q, k, transpose_b=True)  # [..., length_q, length_kv]
        if bias is not None:
            logits += cast_like(bias, logits)
        logits = maybe_upcast(logits, activation_dtype, weight_dtype)
        weights = tf.nn.softmax(logits, name="attention_weights")
        if hard_attention_k > 0:
            weights = harden_attention_weights(weights, hard_attention_k, gumbel_noise_weight)
        weights = cast_like(weights, q)
        weights = finish_attention_weights(weights, scope, logits, save_weights_to,
                                           dropout_rate, dropout_broadcast_dims,
                                           make_image_summary, image_shapes)
        return tf.matmul(weights, v)


def scaled_dot_product_attention_simple(q, k, v, bias, name=None):
    """One head, one spatial dimension: softmax(q k^T / sqrt(depth_k) + bias) v.

    q: [batch, length_q, depth_k]; k: [batch, length_kv, depth_k]; v: [batch,
    length_kv, depth_v]; bias broadcastable to [batch, length_q, length_kv].
    """
    with _v1.variable_scope(name, default_name="scaled_dot_product_attention_simple"):
        scalar = tf.math.rsqrt(tf.cast(shape_list(q)[2], q.dtype))
        logits = tf.matmul(q * scalar, k, transpose_b=True)
        if bias is not None:
            logits += cast_like(bias, logits)
        weights = tf.nn.softmax(logits, name="attention_weights")
        if common_layers.should_generate_summaries():
            _v1.summary.image("attention", tf.expand_dims(tf.pow(weights, 0.2), 3),
                              max_outputs=1)
        return tf.matmul(weights, v)
