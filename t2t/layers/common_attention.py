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

The attention functions of one concept each live in their own modules and are re-exported
here under T2T's names: the softmax core in `softmax_attention`, the 1-D local, blocked and
dilated family in `local_attention`, relative attention v2 in `relative_attention`.
`multihead_attention(..., attention_type=...)` takes all of T2T's attention type strings
(`SUPPORTED_ATTENTION_TYPES`).

Fast decoding: pass `cache={"k": [B, heads, 0, d/heads] zeros, "v": ...}` to self-attention
and feed one new position per call; the new keys/values are appended to the cache. For
encoder-decoder attention, precompute `cache["k_encdec"]`/`cache["v_encdec"]` with
`compute_attention_component` + `split_heads` under the layer's scope.
"""
import functools
import math

import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import conv_layers
from t2t.layers import masks
from t2t.layers import dropout as dropout_lib
from t2t.layers.attention_config import (  # noqa: F401  (SUPPORTED_ATTENTION_TYPES: T2T's name)
    CACHED_ATTENTION_TYPES, SUPPORTED_ATTENTION_TYPES, MultiheadAttentionConfig)
from t2t.layers.local_attention import (  # noqa: F401  (T2T's names, re-exported)
    dilated_self_attention_1d, gather_dilated_memory_blocks, local_attention_1d,
    masked_dilated_self_attention_1d, masked_local_attention_1d,
    masked_relative_local_attention_1d, masked_within_block_local_attention_1d,
    reshape_by_blocks)
from t2t.layers.relative_attention import (  # noqa: F401  (T2T's names, re-exported)
    dot_product_self_attention_relative_v2, dot_product_unmasked_self_attention_relative_v2,
    get_relative_embeddings_left, get_relative_embeddings_left_right,
    matmul_with_relative_keys, matmul_with_relative_values)
from t2t.layers.memory_efficient import (  # noqa: F401  (T2T's name, re-exported)
    multihead_self_attention_memory_efficient)
from t2t.layers.shape_utils import cast_like, shape_list, to_float
from t2t.layers.softmax_attention import (  # noqa: F401  (T2T's names, re-exported)
    attention_image_summary, dot_product_attention, finish_attention_weights,
    harden_attention_weights, maybe_upcast, scaled_dot_product_attention_simple)
from t2t.layers.common_layers import (  # noqa: F401  (T2T's name here too)
    mixed_precision_is_enabled)

_v1 = tf.compat.v1

def large_compatible_negative(tensor_type):
    """-1e9, or the most negative float16 for float16 (where -1e9 would overflow)."""
    if tensor_type == tf.float16:
        return tf.float16.min
    return -1e9


def add_standard_attention_hparams(hparams):
    """Adds T2T's attention hparams (heads, channels, dropout, local and memory-compressed
    attention settings, filter_size, relu_dropout) to `hparams`; returns it."""
    for name, value in (("num_heads", 8), ("attention_key_channels", 0),
                        ("attention_value_channels", 0), ("attention_dropout", 0.0),
                        ("attention_loc_block_length", 256),
                        ("attention_loc_block_width", 128), ("attention_red_factor", 3),
                        ("attention_red_type", "conv"), ("attention_red_nonlinearity", "none"),
                        ("filter_size", 2048), ("relu_dropout", 0.0)):
        hparams.add_hparam(name, value)
    return hparams


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


def add_timing_signals_given_positions(x, positions, min_timescale=1.0, max_timescale=1.0e4):
    """One sinusoid signal per position tensor, in consecutive channel ranges.

    positions: a list of [batch, length] tensors, or None for 0 .. length - 1. With n of
    them, each gets channels // (2n) timescales; leftover channels stay unchanged.

        add_timing_signals_given_positions(x, [None, sentence_ids])   # word and sentence
    """
    batch, length, channels = shape_list(x)[:3]
    num_dims = len(positions)
    num_timescales = channels // (num_dims * 2)
    inv_timescales = _inv_timescales(num_timescales, min_timescale, max_timescale)
    for dim, position in enumerate(positions):
        if position is None:
            position = tf.tile(tf.range(length)[None, :], [batch, 1])
        scaled_time = tf.expand_dims(to_float(position), 2) * inv_timescales[None, None, :]
        signal = tf.concat([tf.sin(scaled_time), tf.cos(scaled_time)], axis=2)
        prepad = dim * 2 * num_timescales
        postpad = channels - (dim + 1) * 2 * num_timescales
        x += cast_like(tf.pad(signal, [[0, 0], [0, 0], [prepad, postpad]]), x)
    return x


def add_timing_signals_from_features(x, features, position_features, min_timescale=1.0,
                                     max_timescale=1.0e4):
    """add_timing_signals_given_positions with the features named in a comma-separated
    string (an empty name: 0 .. length - 1)."""
    return add_timing_signals_given_positions(
        x, [features.get(name) for name in position_features.split(",")], min_timescale,
        max_timescale)


def get_layer_timing_signal_learned_1d(channels, layer, num_layers):
    """[1, 1, channels]: row `layer` of the variable `layer_embedding` ([num_layers, 1, 1,
    channels], N(0, channels^-0.5)) times sqrt(channels); marks a layer's depth."""
    embedding = _v1.get_variable(
        "layer_embedding", [num_layers, 1, 1, channels],
        initializer=_v1.random_normal_initializer(0, channels ** -0.5))
    return (embedding * channels ** 0.5)[layer]


def add_layer_timing_signal_learned_1d(x, layer, num_layers):
    """x [batch, length, channels] + get_layer_timing_signal_learned_1d."""
    return x + get_layer_timing_signal_learned_1d(shape_list(x)[-1], layer, num_layers)


def get_layer_timing_signal_sinusoid_1d(channels, layer, num_layers):
    """[1, 1, channels]: the timing signal of position `layer` among num_layers."""
    return tf.expand_dims(get_timing_signal_1d(num_layers, channels)[:, layer, :], axis=1)


def add_layer_timing_signal_sinusoid_1d(x, layer, num_layers):
    """x [batch, length, channels] + get_layer_timing_signal_sinusoid_1d."""
    return x + cast_like(
        get_layer_timing_signal_sinusoid_1d(shape_list(x)[-1], layer, num_layers), x)


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
    band = masks.ones_matrix_band_part(length, length, max_backward, max_forward,
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


def padding_to_length(padding):
    """[..., length] padding (1.0 at padding) -> int32 [...] count of non-padding."""
    return tf.cast(tf.reduce_sum(1.0 - padding, axis=-1), tf.int32)


def attention_bias_batch(batch_coordinates_q, batch_coordinates_k=None, condition_fn=None):
    """[length_q, length_k]: -1e9 * condition_fn(coordinate_k - coordinate_q).

    The coordinates ([length, 1], the example each position of a flattened batch belongs
    to) keep examples apart: see attention_bias_coordinates and attention_bias_future.
    """
    if batch_coordinates_k is None:
        batch_coordinates_k = batch_coordinates_q
    coordinates_q = to_float(tf.squeeze(batch_coordinates_q, 1))
    coordinates_k = to_float(tf.squeeze(batch_coordinates_k, 1))
    return condition_fn(coordinates_k[None, :] - coordinates_q[:, None]) * -1e9


# -1e9 between positions of different examples.
attention_bias_coordinates = functools.partial(
    attention_bias_batch, condition_fn=lambda bias: tf.minimum(1.0, tf.abs(bias)))

# -1e9 from a position to those of later examples (a lower triangle by example).
attention_bias_future = functools.partial(
    attention_bias_batch, condition_fn=lambda bias: tf.maximum(0.0, tf.minimum(1.0, bias)))


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


def combine_first_two_dimensions(x):
    """[a, b, ...] -> [a * b, ...]."""
    ret = tf.reshape(x, tf.concat([[-1], shape_list(x)[2:]], 0))
    a, b = x.get_shape().dims[:2]
    ret.set_shape([a * b if a and b else None] + x.get_shape().dims[2:])
    return ret


def split_heads(x, num_heads):
    """[batch, length, channels] -> [batch, num_heads, length, channels / num_heads]."""
    return tf.transpose(split_last_dimension(x, num_heads), [0, 2, 1, 3])


def combine_heads(x):
    """Inverse of split_heads: [batch, heads, length, d] -> [batch, length, heads * d]."""
    return combine_last_two_dimensions(tf.transpose(x, [0, 2, 1, 3]))


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
        weights = finish_attention_weights(weights, scope, logits, save_weights_to,
                                           dropout_rate, None, make_image_summary,
                                           image_shapes)
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
    return conv_layers.conv1d(antecedent, total_depth, filter_width, padding=padding,
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


def _relative_v2(function):
    def attend(q, k, v, bias, config, save_weights_to):
        return function(q, k, v, bias, config.max_relative_position, config.dropout_rate,
                        config.image_shapes, save_weights_to=save_weights_to,
                        make_image_summary=config.make_image_summary,
                        dropout_broadcast_dims=config.dropout_broadcast_dims,
                        heads_share_relative_embedding=config.heads_share_relative_embedding,
                        add_relative_to_values=config.add_relative_to_values)
    return attend


def _dilated(function):
    def attend(q, k, v, bias, config, save_weights_to):
        del bias, save_weights_to  # dilated attention makes its own masks
        return function(q, k, v, config.block_length, config.block_width, config.gap_size,
                        config.num_memory_blocks)
    return attend


# The attention types beside "dot_product(_relative)": f(q, k, v, bias, config,
# save_weights_to), called with T2T's arguments. The local types take no bias (they
# mask by themselves), as in T2T.
_OTHER_ATTENTION = {
    "dot_product_relative_v2": _relative_v2(dot_product_self_attention_relative_v2),
    "dot_product_unmasked_relative_v2": _relative_v2(
        dot_product_unmasked_self_attention_relative_v2),
    "local_within_block_mask_right": lambda q, k, v, bias, c, saved: (
        masked_within_block_local_attention_1d(q, k, v, block_length=c.block_length)),
    "local_relative_mask_right": lambda q, k, v, bias, c, saved: (
        masked_relative_local_attention_1d(
            q, k, v, block_length=c.block_length, make_image_summary=c.make_image_summary,
            dropout_rate=c.dropout_rate,
            heads_share_relative_embedding=c.heads_share_relative_embedding,
            add_relative_to_values=c.add_relative_to_values,
            name="masked_relative_local_attention_1d")),
    "local_mask_right": lambda q, k, v, bias, c, saved: masked_local_attention_1d(
        q, k, v, block_length=c.block_length, make_image_summary=c.make_image_summary),
    "local_unmasked": lambda q, k, v, bias, c, saved: local_attention_1d(
        q, k, v, block_length=c.block_length, filter_width=c.block_width),
    "masked_dilated_1d": _dilated(masked_dilated_self_attention_1d),
    "unmasked_dilated_1d": _dilated(dilated_self_attention_1d),
}


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
      chunk_number, memory_height, area_*_mode, training: accepted for T2T compatibility;
      they only matter for recurrent memory and area attention, which t2t does not have.
      The other arguments are the fields of `MultiheadAttentionConfig`.

    Returns:
      [batch, length_q, output_depth].

        y = multihead_attention(x, None, attention_bias_lower_triangle(6), 16, 16, 16, 4, 0.0)
    """
    del chunk_number, memory_height, area_key_mode, area_value_mode, training
    _check_unsupported_multihead_args(layer_collection, recurrent_memory, max_area_width,
                                      max_area_height)
    decode_loop_step = kwargs.pop("decode_loop_step", None)
    kwargs.pop("max_length", None)  # T2T's Transformer passed it; only area attention used it
    config = MultiheadAttentionConfig(
        total_key_depth=total_key_depth, total_value_depth=total_value_depth,
        output_depth=output_depth, num_heads=num_heads, dropout_rate=dropout_rate,
        attention_type=attention_type, max_relative_position=max_relative_position,
        heads_share_relative_embedding=heads_share_relative_embedding,
        add_relative_to_values=add_relative_to_values, block_length=block_length,
        block_width=block_width, gap_size=gap_size, num_memory_blocks=num_memory_blocks,
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
        if callable(config.attention_type) or (
                config.attention_type not in CACHED_ATTENTION_TYPES):
            raise ValueError("a cache (fast decoding) needs attention_type 'dot_product' or "
                             "'dot_product_relative', not %r; decode without a cache" % (
                                 config.attention_type,))
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
        elif config.attention_type == "dot_product_relative":
            x = dot_product_attention_relative(
                q, k, v, bias, config.max_relative_position, config.dropout_rate,
                config.image_shapes, save_weights_to=save_weights_to,
                make_image_summary=config.make_image_summary, cache=cache is not None,
                allow_memory=False, hard_attention_k=config.hard_attention_k,
                gumbel_noise_weight=config.gumbel_noise_weight)
        else:
            x = _OTHER_ATTENTION[config.attention_type](q, k, v, bias, config,
                                                        save_weights_to)
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


def parameter_attention(x, total_key_depth, total_value_depth, output_depth, memory_rows,
                        num_heads, dropout_rate, name=None):
    """Multi-head attention over memory_rows learned key/value rows (variables `k`, `v`).

    x: [batch, length_q, channels] -> [batch, length_q, output_depth]. Only the queries
    (`q_transform`) and the output (`output_transform`) are projected. Dropout drops
    whole value rows per head, the same for every query.
    """
    with _v1.variable_scope(name, default_name="parameter_attention", values=[x]):
        head_size_k = total_key_depth // num_heads
        head_size_v = total_value_depth // num_heads
        k = _v1.get_variable("k", [num_heads, memory_rows, head_size_k],
                             initializer=_v1.random_normal_initializer(
                                 0, output_depth ** -0.5 * num_heads ** 0.5))
        v = _v1.get_variable("v", [num_heads, memory_rows, head_size_v],
                             initializer=_v1.random_normal_initializer(
                                 0, output_depth ** -0.5 * output_depth ** 0.5))
        batch_size, length = shape_list(x)[:2]
        q = common_layers.dense(x, total_key_depth, use_bias=False, name="q_transform")
        if dropout_rate:
            v = tf.nn.dropout(v, rate=dropout_rate, noise_shape=[num_heads, memory_rows, 1])
        # [heads, batch * length, head_size]: every query of a head against its rows.
        q = tf.reshape(tf.transpose(tf.reshape(q, [batch_size, length, num_heads,
                                                   head_size_k]), [2, 0, 1, 3]),
                       [num_heads, batch_size * length, head_size_k])
        y = tf.matmul(tf.nn.softmax(tf.matmul(q, k, transpose_b=True)), v)
        y = tf.transpose(tf.reshape(y, [num_heads, batch_size, length, head_size_v]),
                         [1, 2, 0, 3])
        y = tf.reshape(y, [batch_size, length, total_value_depth])
        y.set_shape([None, None, total_value_depth])
        return common_layers.dense(y, output_depth, use_bias=False, name="output_transform")


def encoder_decoder_attention_loss(expected_attention_logits, actual_attentions,
                                   loss_type="kl_divergence", loss_multiplier=1.0):
    """How far the encoder-decoder attention is from an expected one.

    expected_attention_logits: [batch, target_length, input_length].
    actual_attentions: the dict `save_weights_to` filled (a Transformer's
      `attention_weights`); its "encdec_attention" entries, averaged over layers and
      heads, are compared.
    loss_type: "kl_divergence" (of the actual from the expected distribution, per
      target position: [batch, target_length], from the saved logits) or "mse" (of the
      weights, a scalar).
    """
    def mean_over_layers_and_heads(want_logits):
        tensors = [t for key, t in actual_attentions.items()
                   if "encdec_attention" in key and key.endswith("/logits") == want_logits]
        return tf.reduce_mean(tf.stack(tensors), [0, 2])

    if loss_type == "mse":
        expected_weights = tf.nn.softmax(expected_attention_logits)
        loss = _v1.losses.mean_squared_error(expected_weights,
                                             mean_over_layers_and_heads(False))
    else:
        actual_logits = mean_over_layers_and_heads(True)
        expected_log_p = tf.nn.log_softmax(expected_attention_logits)
        loss = tf.reduce_sum(tf.exp(expected_log_p) *
                             (expected_log_p - tf.nn.log_softmax(actual_logits)), -1)
    return loss * loss_multiplier
