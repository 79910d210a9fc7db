"""Attention: timing signals, attention biases, and multi-head dot-product attention.

Names, signatures and variable names are T2T 1.15.7's, so a ported Transformer builds the
same graph. Shapes: activations [batch, length, channels]; per-head tensors
[batch, heads, length, channels / heads]; biases broadcast to [batch, heads, query, memory]
and hold 0 where attention is allowed and -1e9 where it is not.

    x = common_attention.add_timing_signal_1d(tf.zeros([2, 6, 16]))   # sinusoids added
    bias = common_attention.attention_bias_lower_triangle(6)          # [1, 1, 6, 6], causal
    y = common_attention.multihead_attention(
        x, None, bias, total_key_depth=16, total_value_depth=16, output_depth=16,
        num_heads=4, dropout_rate=0.0)                                  # [2, 6, 16]

Fast decoding: pass `cache={"k": [B, heads, 0, d/heads] zeros, "v": ...}` to self-attention
and feed one new position per call; the new keys/values are appended to the cache. For
encoder-decoder attention, precompute `cache["k_encdec"]`/`cache["v_encdec"]` with
`compute_attention_component` + `split_heads` under the layer's scope.
"""
import math

import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers.attention_config import (  # noqa: F401  (SUPPORTED_ATTENTION_TYPES: T2T's name)
    SUPPORTED_ATTENTION_TYPES, MultiheadAttentionConfig)
from t2t.layers.shape_utils import cast_like, shape_list, to_float

_v1 = tf.compat.v1

def large_compatible_negative(tensor_type):
    """-1e9, or the most negative float16 for float16 (where -1e9 would overflow)."""
    if tensor_type == tf.float16:
        return tf.float16.min
    return -1e9


def maybe_upcast(logits, activation_dtype=None, weight_dtype=None, hparams=None):
    """Cast logits to float32 under mixed precision (so the softmax is stable)."""
    if common_layers.mixed_precision_is_enabled(activation_dtype, weight_dtype, hparams):
        return tf.cast(logits, tf.float32)
    return logits


# --------------------------------------------------------------------------- timing signals
def _inv_timescales(num_timescales, min_timescale, max_timescale):
    # Geometric sequence from 1/min_timescale down to 1/max_timescale.
    log_timescale_increment = (math.log(float(max_timescale) / float(min_timescale)) /
                               tf.maximum(to_float(num_timescales) - 1, 1))
    return min_timescale * tf.exp(to_float(tf.range(num_timescales)) * -log_timescale_increment)


def get_timing_signal_1d(length, channels, min_timescale=1.0, max_timescale=1.0e4,
                         start_index=0):
    """Sinusoids of geometrically spaced periods: [1, length, channels].

    With n = channels // 2 and inv[i] = min_timescale^-1 * (max/min)^(-i / (n - 1)),
    signal[0, p, i] = sin((p + start_index) * inv[i]) and
    signal[0, p, n + i] = cos((p + start_index) * inv[i]); an odd last channel is 0.

        get_timing_signal_1d(2, 4)[0]   # [[0, 0, 1, 1], [sin 1, sin 1e-4, cos 1, cos 1e-4]]
    """
    position = to_float(tf.range(length)) + to_float(start_index)
    num_timescales = channels // 2
    inv_timescales = _inv_timescales(num_timescales, min_timescale, max_timescale)
    scaled_time = tf.expand_dims(position, 1) * tf.expand_dims(inv_timescales, 0)
    signal = tf.concat([tf.sin(scaled_time), tf.cos(scaled_time)], axis=1)
    signal = tf.pad(signal, [[0, 0], [0, tf.math.floormod(channels, 2)]])
    return tf.reshape(signal, [1, length, channels])


def add_timing_signal_1d(x, min_timescale=1.0, max_timescale=1.0e4, start_index=0):
    """x [batch, length, channels] + get_timing_signal_1d(length, channels, ...)."""
    length = shape_list(x)[1]
    channels = shape_list(x)[2]
    signal = get_timing_signal_1d(length, channels, min_timescale, max_timescale, start_index)
    return x + cast_like(signal, x)


def add_timing_signal_1d_given_position(x, position, min_timescale=1.0, max_timescale=1.0e4):
    """Like add_timing_signal_1d, but at explicit positions [batch, length].

    Used for packed rows, whose `*_position` feature restarts at 0 in each segment, so
    every packed example gets the same signal it would get alone.
    """
    channels = shape_list(x)[2]
    num_timescales = channels // 2
    inv_timescales = _inv_timescales(num_timescales, min_timescale, max_timescale)
    scaled_time = (tf.expand_dims(to_float(position), 2) *
                   tf.expand_dims(tf.expand_dims(inv_timescales, 0), 0))
    signal = tf.concat([tf.sin(scaled_time), tf.cos(scaled_time)], axis=2)
    signal = tf.pad(signal, [[0, 0], [0, 0], [0, tf.math.floormod(channels, 2)]])
    return x + cast_like(signal, x)


def add_positional_embedding(x, max_length, name=None, positions=None):
    """x [batch, length, depth] + a learned embedding per position (variable `name`).

    Positions past max_length get a zero embedding; `positions` [batch, length] selects
    explicit positions (packed rows).
    """
    with tf.name_scope("add_positional_embedding"):
        _, length, depth = shape_list(x)
        var = cast_like(_v1.get_variable(name or "positional_embedding", [max_length, depth]),
                        x)
        if positions is None:
            pad_length = tf.maximum(0, length - max_length)
            sliced = tf.cond(tf.less(length, max_length),
                             lambda: tf.slice(var, [0, 0], [length, -1]),
                             lambda: tf.pad(var, [[0, pad_length], [0, 0]]))
            return x + tf.expand_dims(sliced, 0)
        return x + tf.gather(var, tf.cast(positions, tf.int32))


def get_layer_timing_signal_learned_1d(channels, layer, num_layers):
    """A learned embedding of the layer (depth) index `layer` of `num_layers`: [1, 1, channels].

    Variable `layer_embedding` [num_layers, 1, 1, channels] in the current scope, initialised
    N(0, channels^-0.5) and scaled by channels^0.5 (so entries start near unit variance);
    `layer` may be a tensor (the step of a depth-recurrent loop).
    """
    shape = [num_layers, 1, 1, channels]
    layer_embedding = _v1.get_variable(
        "layer_embedding", shape,
        initializer=_v1.random_normal_initializer(0, channels ** -0.5)) * (channels ** 0.5)
    return layer_embedding[layer, :, :, :]


def add_layer_timing_signal_learned_1d(x, layer, num_layers):
    """x [batch, length, channels] + get_layer_timing_signal_learned_1d."""
    return x + get_layer_timing_signal_learned_1d(shape_list(x)[-1], layer, num_layers)


def get_layer_timing_signal_sinusoid_1d(channels, layer, num_layers):
    """Row `layer` of get_timing_signal_1d(num_layers, channels): [1, 1, channels].

        get_layer_timing_signal_sinusoid_1d(4, 0, 3)   # [[[0, 0, 1, 1]]]
    """
    signal = get_timing_signal_1d(num_layers, channels)
    return tf.expand_dims(signal[:, layer, :], axis=1)


def add_layer_timing_signal_sinusoid_1d(x, layer, num_layers):
    """x [batch, length, channels] + get_layer_timing_signal_sinusoid_1d."""
    return x + get_layer_timing_signal_sinusoid_1d(shape_list(x)[-1], layer, num_layers)


# --------------------------------------------------------------------------- biases
def embedding_to_padding(emb):
    """1.0 where an embedding is all zeros (a padding position; symbol bottoms zero those).

        embedding_to_padding(tf.constant([[[1., 0.], [0., 0.]]]))   # [[0., 1.]]
    """
    emb_sum = tf.reduce_sum(tf.abs(emb), axis=-1)
    return to_float(tf.equal(emb_sum, 0.0))


def attention_bias_local(length, max_backward, max_forward):
    """[1, 1, length, length]: 0 within max_backward/max_forward of the diagonal, else -1e9.

    Negative max_backward / max_forward mean unlimited.
    """
    band = common_layers.ones_matrix_band_part(length, length, max_backward, max_forward,
                                               out_shape=[1, 1, length, length])
    return -1e9 * (1.0 - band)


def attention_bias_lower_triangle(length):
    """Causal bias [1, 1, length, length]: position i may attend to positions <= i."""
    return attention_bias_local(length, -1, 0)


def attention_bias_same_segment(query_segment_id, memory_segment_id):
    """[batch, 1, query, memory]: -1e9 where the two positions' segment ids differ.

    Packed rows hold several examples; this keeps each from attending to the others.

        attention_bias_same_segment(tf.constant([[1, 1, 2]]), tf.constant([[1, 1, 2]]))
        # [[[[0, 0, -1e9], [0, 0, -1e9], [-1e9, -1e9, 0]]]]
    """
    ret = (to_float(tf.not_equal(tf.expand_dims(query_segment_id, 2),
                                 tf.expand_dims(memory_segment_id, 1))) *
           large_compatible_negative(memory_segment_id.dtype))
    return tf.expand_dims(ret, axis=1)


def attention_bias_ignore_padding(memory_padding):
    """[batch, 1, 1, memory]: -1e9 at padding positions (memory_padding is 1.0 there)."""
    ret = memory_padding * large_compatible_negative(memory_padding.dtype)
    return tf.expand_dims(tf.expand_dims(ret, axis=1), axis=1)


def attention_bias_to_padding(attention_bias, cast_fn=to_float):
    """Inverse of attention_bias_ignore_padding: [batch, 1, 1, memory] -> [batch, memory]."""
    return tf.squeeze(cast_fn(tf.less(attention_bias, -1)), axis=[1, 2])


def attention_bias_prepend_inputs_full_attention(padding):
    """Self-attention bias for "inputs 0 targets" rows: full over inputs, causal over targets.

    padding: [batch, length], 1.0 at padding; the first padding position separates the
    inputs from the targets. Returns [batch, 1, length, length].
    """
    # Zero on the inputs part and the separator, 1, 2, ... along the targets.
    in_target = tf.cumsum(padding, axis=1, exclusive=True)
    target_pos = tf.cumsum(in_target, axis=1)
    illegal_connections = tf.greater(tf.expand_dims(target_pos, 1),
                                     tf.expand_dims(target_pos, 2))
    bias = to_float(illegal_connections) * -1e9
    return tf.expand_dims(bias, 1)


def attention_bias_proximal(length):
    """[1, 1, length, length] bias -log(1 + |i - j|), favouring nearby positions."""
    r = to_float(tf.range(length))
    diff = tf.expand_dims(r, 0) - tf.expand_dims(r, 1)
    return tf.expand_dims(tf.expand_dims(-tf.math.log1p(tf.abs(diff)), 0), 0)


# --------------------------------------------------------------------------- heads
def split_last_dimension(x, n):
    """[..., m] -> [..., n, m / n]."""
    x_shape = shape_list(x)
    m = x_shape[-1]
    if isinstance(m, int) and isinstance(n, int) and m % n != 0:
        raise ValueError("split_last_dimension: last dimension %d is not divisible by %d"
                         % (m, n))
    return tf.reshape(x, x_shape[:-1] + [n, m // n])


def combine_last_two_dimensions(x):
    """[..., a, b] -> [..., a * b]."""
    x_shape = shape_list(x)
    a, b = x_shape[-2:]
    return tf.reshape(x, x_shape[:-2] + [a * b])


def split_heads(x, num_heads):
    """[batch, length, channels] -> [batch, num_heads, length, channels / num_heads]."""
    return tf.transpose(split_last_dimension(x, num_heads), [0, 2, 1, 3])


def combine_heads(x):
    """Inverse of split_heads: [batch, heads, length, d] -> [batch, length, heads * d]."""
    return combine_last_two_dimensions(tf.transpose(x, [0, 2, 1, 3]))


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
    image = tf.reduce_max(split_last_dimension(image, 3), 4)
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


# --------------------------------------------------------------------------- attention
def _finish_weights(weights, scope, logits, save_weights_to, dropout_rate,
                    dropout_broadcast_dims, make_image_summary, image_shapes):
    # Shared tail of the attention functions: record, drop out, summarise.
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
        weights = _finish_weights(weights, scope, logits, save_weights_to, dropout_rate,
                                  dropout_broadcast_dims, make_image_summary, image_shapes)
        return tf.matmul(weights, v)


def _generate_relative_positions_matrix(length_q, length_k, max_relative_position,
                                        cache=False):
    """[length_q, length_k] ids of clipped relative distances k - q, shifted to >= 0.

    With cache (one decoding step), the single query is the last position:
    [1, length_k] for distances -(length_k - 1) .. 0.
    """
    if not cache:
        range_vec_k = tf.range(length_k)
        if isinstance(length_q, int) and isinstance(length_k, int) and length_q == length_k:
            range_vec_q = range_vec_k
        else:
            range_vec_q = range_vec_k[-length_q:]  # queries are the last length_q positions
        distance_mat = range_vec_k[None, :] - range_vec_q[:, None]
    else:
        distance_mat = tf.expand_dims(tf.range(-length_k + 1, 1, 1), 0)
    distance_mat_clipped = tf.clip_by_value(distance_mat, -max_relative_position,
                                            max_relative_position)
    return distance_mat_clipped + max_relative_position


def _generate_relative_positions_embeddings(length_q, length_k, depth, max_relative_position,
                                            name, cache=False):
    """[length_q, length_k, depth] learned embeddings of relative distances (variable
    `<name>/embeddings`, 2 * max_relative_position + 1 rows)."""
    with _v1.variable_scope(name):
        relative_positions_matrix = _generate_relative_positions_matrix(
            length_q, length_k, max_relative_position, cache=cache)
        vocab_size = max_relative_position * 2 + 1
        embeddings_table = _v1.get_variable("embeddings", [vocab_size, depth])
        return tf.gather(embeddings_table, relative_positions_matrix)


def _relative_attention_inner(x, y, z, transpose):
    """x y (+ relative term with z [length_q, length_k, depth]).

    transpose=True: logits = q k^T + q . rel_keys; transpose=False: weights v + weights .
    rel_values.
    """
    xy_matmul = tf.matmul(x, y, transpose_b=transpose)
    z = cast_like(z, x)
    if transpose:
        x_z = tf.einsum("bhqd,qkd->bhqk", x, z)
    else:
        x_z = tf.einsum("bhqk,qkd->bhqd", x, z)
    return xy_matmul + x_z


def dot_product_attention_relative(q, k, v, bias, max_relative_position, dropout_rate=0.0,
                                   image_shapes=None, save_weights_to=None, name=None,
                                   make_image_summary=True, cache=False, allow_memory=False,
                                   hard_attention_k=0, gumbel_noise_weight=0.0):
    """Self-attention with learned relative-position keys and values (Shaw et al., 2018).

    Relative distances are clipped to +-max_relative_position. Shapes as in
    dot_product_attention; q, k, v must have equal lengths unless `cache` (one query,
    the last position) or `allow_memory` (queries are the last positions of the memory).
    """
    if not max_relative_position:
        raise ValueError("max_relative_position must be > 0 for relative attention, got %r"
                         % (max_relative_position,))
    with _v1.variable_scope(name, default_name="dot_product_attention_relative",
                            values=[q, k, v]) as scope:
        if not cache and not allow_memory:
            q.get_shape().assert_is_compatible_with(k.get_shape())
            q.get_shape().assert_is_compatible_with(v.get_shape())
        depth = k.get_shape().as_list()[3]
        length_k = shape_list(k)[2]
        length_q = shape_list(q)[2] if allow_memory else length_k
        relations_keys = _generate_relative_positions_embeddings(
            length_q, length_k, depth, max_relative_position, "relative_positions_keys",
            cache=cache)
        relations_values = _generate_relative_positions_embeddings(
            length_q, length_k, depth, max_relative_position, "relative_positions_values",
            cache=cache)
        logits = _relative_attention_inner(q, k, relations_keys, True)
        if bias is not None:
            logits += cast_like(bias, logits)
        weights = tf.nn.softmax(logits, name="attention_weights")
        if hard_attention_k > 0:
            weights = harden_attention_weights(weights, hard_attention_k, gumbel_noise_weight)
        weights = _finish_weights(weights, scope, logits, save_weights_to, dropout_rate,
                                  None, make_image_summary, image_shapes)
        return _relative_attention_inner(weights, v, relations_values, False)


def compute_attention_component(antecedent, total_depth, filter_width=1, padding="VALID",
                                name="c", vars_3d_num_heads=0, layer_collection=None):
    """One of q, k, v: a bias-free projection of antecedent [batch, length, channels].

    filter_width > 1 uses a conv1d ("LEFT"/"SAME" padding); vars_3d_num_heads > 0 stores
    the kernel as [channels, heads, depth / heads] (T2T's "3-D variables", whose q kernel
    initialiser already holds the depth^-0.5 query scaling). Variable `<name>/kernel`.
    """
    if layer_collection is not None:
        raise ValueError("compute_attention_component: layer_collection (K-FAC) is not "
                         "supported in t2t; pass None")
    if vars_3d_num_heads > 0:
        if filter_width != 1:
            raise ValueError("compute_attention_component: 3-D variables need "
                             "filter_width 1, got %d" % filter_width)
        input_depth = antecedent.get_shape().as_list()[-1]
        depth_per_head = total_depth // vars_3d_num_heads
        initializer_stddev = input_depth ** -0.5
        if "q" in name:
            initializer_stddev *= depth_per_head ** -0.5
        var = _v1.get_variable(
            name, [input_depth, vars_3d_num_heads, total_depth // vars_3d_num_heads],
            initializer=_v1.random_normal_initializer(stddev=initializer_stddev))
        var = tf.reshape(cast_like(var, antecedent), [input_depth, total_depth])
        return tf.tensordot(antecedent, var, axes=1)
    if filter_width == 1:
        return common_layers.dense(antecedent, total_depth, use_bias=False, name=name)
    return common_layers.conv1d(antecedent, total_depth, filter_width, padding=padding,
                                name=name)


def compute_qkv(query_antecedent, memory_antecedent, total_key_depth, total_value_depth,
                q_filter_width=1, kv_filter_width=1, q_padding="VALID", kv_padding="VALID",
                vars_3d_num_heads=0, layer_collection=None):
    """q, k, v projections [batch, length, depth]; memory defaults to the query (self-attn)."""
    if memory_antecedent is None:
        memory_antecedent = query_antecedent
    q = compute_attention_component(query_antecedent, total_key_depth, q_filter_width,
                                    q_padding, "q", vars_3d_num_heads=vars_3d_num_heads,
                                    layer_collection=layer_collection)
    k = compute_attention_component(memory_antecedent, total_key_depth, kv_filter_width,
                                    kv_padding, "k", vars_3d_num_heads=vars_3d_num_heads,
                                    layer_collection=layer_collection)
    v = compute_attention_component(memory_antecedent, total_value_depth, kv_filter_width,
                                    kv_padding, "v", vars_3d_num_heads=vars_3d_num_heads,
                                    layer_collection=layer_collection)
    return q, k, v


def _update_cache(cache, key, new, decode_loop_step):
    """Append `new` [B, H, 1 or more, d] to cache[key] along length, or (fixed-size cache)
    write it at decode_loop_step."""
    if decode_loop_step is None:
        cache[key] = tf.concat([cache[key], new], axis=2)
    else:
        length = shape_list(cache[key])[2]
        mask = tf.reshape(tf.one_hot(decode_loop_step, length, dtype=new.dtype),
                          [1, 1, length, 1])
        cache[key] = cache[key] * (1.0 - mask) + new * mask
    return cache[key]


def _check_unsupported_multihead_args(layer_collection, recurrent_memory, max_area_width,
                                      max_area_height):
    if layer_collection is not None:
        raise ValueError("multihead_attention: layer_collection (K-FAC) is not supported "
                         "in t2t; pass None")
    if recurrent_memory is not None:
        raise ValueError("multihead_attention: recurrent_memory is not supported in t2t; "
                         "pass None")
    if max_area_width > 1 or max_area_height > 1:
        raise ValueError("multihead_attention: area attention (max_area_width/height > 1) "
                         "is not supported in t2t; use 1")


def multihead_attention(query_antecedent, memory_antecedent, bias, total_key_depth,
                        total_value_depth, output_depth, num_heads, dropout_rate,
                        attention_type="dot_product", max_relative_position=None,
                        heads_share_relative_embedding=False, add_relative_to_values=False,
                        image_shapes=None, block_length=128, block_width=128,
                        q_filter_width=1, kv_filter_width=1, q_padding="VALID",
                        kv_padding="VALID", cache=None, gap_size=0, num_memory_blocks=2,
                        name="multihead_attention", save_weights_to=None,
                        make_image_summary=True, dropout_broadcast_dims=None, vars_3d=False,
                        layer_collection=None, recurrent_memory=None, chunk_number=None,
                        hard_attention_k=0, gumbel_noise_weight=0.0, max_area_width=1,
                        max_area_height=1, memory_height=1, area_key_mode="mean",
                        area_value_mode="sum", training=True, **kwargs):
    """Multi-head attention with input and output projections (T2T's signature).

    The settings become a `MultiheadAttentionConfig` (validated there) and
    `multihead_attention_with_config` does the work; code that calls a layer many times
    builds the config once and calls that directly.

    Args:
      query_antecedent: [batch, length_q, channels].
      memory_antecedent: [batch, length_m, channels], or None for self-attention.
      bias: broadcastable to [batch, heads, length_q, length_m] (0 = attend, -1e9 = not).
      cache: for step-by-step decoding (see `multihead_attention_with_config`).
      decode_loop_step (kwarg): with a fixed-size cache, the position to write.
      activation_dtype, weight_dtype (kwargs): mixed-precision settings.
      block_length, block_width, gap_size, num_memory_blocks, heads_share_relative_embedding,
      add_relative_to_values, chunk_number, memory_height, area_*_mode, training: accepted
      for T2T compatibility; they only matter for attention types t2t does not implement.
      The other arguments are the fields of `MultiheadAttentionConfig`.

    Returns:
      [batch, length_q, output_depth].

        y = multihead_attention(x, None, attention_bias_lower_triangle(6), 16, 16, 16, 4, 0.0)
    """
    del (heads_share_relative_embedding, add_relative_to_values, block_length, block_width,
         gap_size, num_memory_blocks, chunk_number, memory_height, area_key_mode,
         area_value_mode, training)
    _check_unsupported_multihead_args(layer_collection, recurrent_memory, max_area_width,
                                      max_area_height)
    decode_loop_step = kwargs.pop("decode_loop_step", None)
    kwargs.pop("max_length", None)  # T2T's Transformer passed it; only area attention used it
    config = MultiheadAttentionConfig(
        total_key_depth=total_key_depth, total_value_depth=total_value_depth,
        output_depth=output_depth, num_heads=num_heads, dropout_rate=dropout_rate,
        attention_type=attention_type, max_relative_position=max_relative_position,
        q_filter_width=q_filter_width, kv_filter_width=kv_filter_width, q_padding=q_padding,
        kv_padding=kv_padding, image_shapes=image_shapes,
        make_image_summary=make_image_summary,
        dropout_broadcast_dims=dropout_broadcast_dims or None, vars_3d=vars_3d,
        hard_attention_k=hard_attention_k, gumbel_noise_weight=gumbel_noise_weight,
        activation_dtype=kwargs.pop("activation_dtype", None) or "float32",
        weight_dtype=kwargs.pop("weight_dtype", None) or "float32", name=name)
    return multihead_attention_with_config(
        query_antecedent, memory_antecedent, bias, config, cache=cache,
        save_weights_to=save_weights_to, decode_loop_step=decode_loop_step, **kwargs)


def multihead_attention_with_config(query_antecedent, memory_antecedent, bias, config,
                                    cache=None, save_weights_to=None, decode_loop_step=None,
                                    **attention_kwargs):
    """Multi-head attention of one layer described by `config` (a MultiheadAttentionConfig).

    Args:
      query_antecedent: [batch, length_q, channels].
      memory_antecedent: [batch, length_m, channels], or None for self-attention.
      bias: broadcastable to [batch, heads, length_q, length_m] (0 = attend, -1e9 = not).
      config: the layer's settings.
      cache: for step-by-step decoding. Self-attention: {"k", "v"} of shape
        [batch, heads, steps_so_far, depth/heads]; the new positions' keys and values are
        appended (and stored back in the dict). Encoder-decoder attention: {"k_encdec",
        "v_encdec"} (already split into heads) replace the memory projections.
      save_weights_to: a dict that receives the attention weights by scope name.
      decode_loop_step: with a fixed-size cache, the position to write.
      **attention_kwargs: passed to a callable `config.attention_type`.

    Returns:
      [batch, length_q, output_depth].
    """
    num_heads = config.num_heads
    if cache is not None:
        if callable(config.attention_type):
            raise ValueError("a cache (fast decoding) needs attention_type 'dot_product' or "
                             "'dot_product_relative', not a callable")
        if bias is None:
            raise ValueError("multihead_attention with a cache needs a bias (e.g. the "
                             "causal bias sliced to the current step)")
    vars_3d_num_heads = num_heads if config.vars_3d else 0
    with _v1.variable_scope(config.name, default_name="multihead_attention",
                            values=[query_antecedent, memory_antecedent]):
        if cache is None or memory_antecedent is None:
            q, k, v = compute_qkv(query_antecedent, memory_antecedent, config.total_key_depth,
                                  config.total_value_depth, config.q_filter_width,
                                  config.kv_filter_width, config.q_padding, config.kv_padding,
                                  vars_3d_num_heads=vars_3d_num_heads)
        if cache is not None:
            if memory_antecedent is not None:
                # Encoder-decoder attention: memory keys/values were computed once.
                q = compute_attention_component(query_antecedent, config.total_key_depth,
                                                config.q_filter_width, config.q_padding, "q",
                                                vars_3d_num_heads=vars_3d_num_heads)
                k = cache["k_encdec"]
                v = cache["v_encdec"]
            else:
                k = _update_cache(cache, "k", split_heads(k, num_heads), decode_loop_step)
                v = _update_cache(cache, "v", split_heads(v, num_heads), decode_loop_step)
        q = split_heads(q, num_heads)
        if cache is None:
            k = split_heads(k, num_heads)
            v = split_heads(v, num_heads)
        if not config.vars_3d:
            q *= config.key_depth_per_head ** -0.5

        if callable(config.attention_type):
            x = config.attention_type(q, k, v, **attention_kwargs)
            if isinstance(x, tuple):  # (output, extra) as in T2T
                x = x[0]
        elif config.attention_type == "dot_product":
            x = dot_product_attention(
                q, k, v, bias, config.dropout_rate, config.image_shapes,
                save_weights_to=save_weights_to, make_image_summary=config.make_image_summary,
                dropout_broadcast_dims=config.dropout_broadcast_dims,
                activation_dtype=config.activation_dtype, weight_dtype=config.weight_dtype,
                hard_attention_k=config.hard_attention_k,
                gumbel_noise_weight=config.gumbel_noise_weight)
        else:  # "dot_product_relative"
            x = dot_product_attention_relative(
                q, k, v, bias, config.max_relative_position, config.dropout_rate,
                config.image_shapes, save_weights_to=save_weights_to,
                make_image_summary=config.make_image_summary, cache=cache is not None,
                allow_memory=False, hard_attention_k=config.hard_attention_k,
                gumbel_noise_weight=config.gumbel_noise_weight)
        x = combine_heads(x)
        x.set_shape(x.shape.as_list()[:-1] + [config.total_value_depth])

        if config.vars_3d:
            o_var = _v1.get_variable("o", [num_heads, config.total_value_depth // num_heads,
                                           config.output_depth])
            o_var = tf.reshape(cast_like(o_var, x), [config.total_value_depth,
                                                     config.output_depth])
            x = tf.tensordot(x, o_var, axes=1)
        else:
            x = common_layers.dense(x, config.output_depth, use_bias=False,
                                    name="output_transform")
        return x
