"""Relative-position self-attention, "v2" (Music Transformer's memory-efficient form).

One learned embedding per relative distance (per head unless
`heads_share_relative_embedding`), multiplied with the queries once ([length, length]
logits instead of [length, length, depth] tensors), then "skewed" into absolute
positions by a pad-and-reshape. With W the variable (rows for distances
-(M-1) .. 0, or -(M-1) .. M-1 unmasked, M = max_relative_position):

    logits[i, j] = q_i . k_j + q_i . W[M - 1 + (j - i)]      (0 when |j - i| >= M)

Names, variables (`key_relative_embeddings`, `value_relative_embeddings`) and numerics
are T2T 1.15.7's; `common_attention` re-exports them under T2T's module path.

    y = dot_product_self_attention_relative_v2(q, k, v, causal_bias, max_relative_position=4)
"""
import tensorflow as tf

from t2t.layers.shape_utils import cast_like, shape_list
from t2t.layers.softmax_attention import finish_attention_weights

_v1 = tf.compat.v1


def _relative_position_to_absolute_position_masked(x):
    """[B, H, L, L] indexed by (query, L - 1 + memory - query) -> by (query, memory).

    Only the causal part (memory <= query) is meaningful.
    """
    batch, heads, length, _ = shape_list(x)
    # One zero column in front, then reading rows of length L shifts row i by i.
    x = tf.pad(x, [[0, 0], [0, 0], [0, 0], [1, 0]])
    x = tf.reshape(x, [batch, heads, 1 + length, length])
    return x[:, :, 1:, :]


def _absolute_position_to_relative_position_masked(x):
    """Inverse of `_relative_position_to_absolute_position_masked` on causal weights."""
    batch, heads, length, _ = shape_list(x)
    x = tf.pad(x, [[0, 0], [0, 0], [1, 0], [0, 0]])
    x = tf.reshape(x, [batch, heads, length, length + 1])
    return x[:, :, :, 1:]


def _relative_position_to_absolute_position_unmasked(x):
    """[B, H, L, 2L - 1] indexed by (query, L - 1 + memory - query) -> [B, H, L, L]."""
    batch, heads, length, _ = shape_list(x)
    # A zero column makes rows 2L long; L - 1 more zeros make (L + 1) rows of 2L - 1,
    # in which row i starts i places later: column L - 1 onwards is the absolute index.
    x = tf.concat([x, tf.zeros([batch, heads, length, 1], x.dtype)], axis=3)
    flat = tf.reshape(x, [batch, heads, length * 2 * length])
    flat = tf.concat([flat, tf.zeros([batch, heads, length - 1], x.dtype)], axis=2)
    x = tf.reshape(flat, [batch, heads, length + 1, 2 * length - 1])
    return x[:, :, :length, length - 1:]


def _absolute_position_to_relative_position_unmasked(x):
    """[B, H, L, L] by (query, memory) -> [B, H, L, 2L - 1] by (query, L - 1 + memory - query)."""
    batch, heads, length, _ = shape_list(x)
    x = tf.pad(x, [[0, 0], [0, 0], [0, 0], [0, length - 1]])
    flat = tf.reshape(x, [batch, heads, length ** 2 + length * (length - 1)])
    flat = tf.pad(flat, [[0, 0], [0, 0], [length, 0]])
    x = tf.reshape(flat, [batch, heads, length, 2 * length])
    return x[:, :, :, 1:]


def _relative_embeddings(name, rows, depth, num_heads, heads_share_relative_embedding):
    shape = (rows, depth) if heads_share_relative_embedding else (num_heads, rows, depth)
    return _v1.get_variable(name, shape,
                            initializer=_v1.random_normal_initializer(stddev=depth ** -0.5))


def _pad_and_slice_rows(embeddings, pad_before, pad_after, start, size, heads_share):
    # Row axis is 0 when heads share the embedding, else 1 ([heads, rows, depth]).
    row_padding = [[pad_before, pad_after], [0, 0]]
    if not heads_share:
        row_padding = [[0, 0]] + row_padding
    padded = tf.pad(embeddings, row_padding)
    if heads_share:
        return tf.slice(padded, [start, 0], [size, -1])
    return tf.slice(padded, [0, start, 0], [-1, size, -1])


def get_relative_embeddings_left(max_relative_position, length, depth, num_heads,
                                 heads_share_relative_embedding, name):
    """The variable `name` ([heads,] max_relative_position, depth) cut to `length` rows.

    Row r is the embedding of distance r - (length - 1) (looking left only); distances
    beyond max_relative_position get zero rows.
    """
    embeddings = _relative_embeddings(name, max_relative_position, depth, num_heads,
                                      heads_share_relative_embedding)
    # Padding first, then slicing, needs no tf.cond on the (maybe dynamic) length.
    pad_length = tf.maximum(length - max_relative_position, 0)
    start = tf.maximum(max_relative_position - length, 0)
    return _pad_and_slice_rows(embeddings, pad_length, 0, start, length,
                               heads_share_relative_embedding)


def get_relative_embeddings_left_right(max_relative_position, length, depth, num_heads,
                                       heads_share_relative_embedding, name):
    """The variable `name` ([heads,] 2 * max_relative_position - 1, depth) cut to
    2 * length - 1 rows: row r is distance r - (length - 1), zeros beyond the variable."""
    embeddings = _relative_embeddings(name, 2 * max_relative_position - 1, depth, num_heads,
                                      heads_share_relative_embedding)
    pad_length = tf.maximum(length - max_relative_position, 0)
    start = tf.maximum(max_relative_position - length, 0)
    return _pad_and_slice_rows(embeddings, pad_length, pad_length, start, 2 * length - 1,
                               heads_share_relative_embedding)


def matmul_with_relative_keys(x, y, heads_share_relative_embedding):
    """x [B, H, L, d] . y [(H,) M, d] -> [B, H, L, M]."""
    if heads_share_relative_embedding:
        return tf.einsum("bhld,md->bhlm", x, y)
    return tf.einsum("bhld,hmd->bhlm", x, y)


def matmul_with_relative_values(x, y, heads_share_relative_embedding):
    """x [B, H, L, M] . y [(H,) M, d] -> [B, H, L, d]."""
    if heads_share_relative_embedding:
        return tf.einsum("bhlm,md->bhld", x, y)
    return tf.einsum("bhlm,hmd->bhld", x, y)


def _check_max_relative_position(max_relative_position):
    if not max_relative_position:
        raise ValueError("max_relative_position must be > 0 for relative self-attention, "
                         "got %r" % (max_relative_position,))


def _relative_self_attention(q, k, v, bias, max_relative_position, dropout_rate,
                             image_shapes, save_weights_to, scope, make_image_summary,
                             dropout_broadcast_dims, heads_share_relative_embedding,
                             add_relative_to_values, masked):
    # The shared body of the masked and unmasked v2 functions.
    if masked:
        get_embeddings = get_relative_embeddings_left
        to_absolute = _relative_position_to_absolute_position_masked
        to_relative = _absolute_position_to_relative_position_masked
    else:
        get_embeddings = get_relative_embeddings_left_right
        to_absolute = _relative_position_to_absolute_position_unmasked
        to_relative = _absolute_position_to_relative_position_unmasked
    _, num_heads, length, depth_k = shape_list(k)
    logits = tf.matmul(q, k, transpose_b=True)
    key_embeddings = get_embeddings(max_relative_position, length, depth_k, num_heads,
                                    heads_share_relative_embedding, "key_relative_embeddings")
    logits += to_absolute(matmul_with_relative_keys(q, cast_like(key_embeddings, q),
                                                    heads_share_relative_embedding))
    if bias is not None:
        logits += cast_like(bias, logits)
    weights = tf.nn.softmax(logits, name="attention_weights")
    weights = finish_attention_weights(weights, scope, logits, save_weights_to, dropout_rate,
                                       dropout_broadcast_dims, make_image_summary,
                                       image_shapes)
    output = tf.matmul(weights, v)
    if add_relative_to_values:
        depth_v = shape_list(v)[3]
        value_embeddings = get_embeddings(max_relative_position, length, depth_v, num_heads,
                                          heads_share_relative_embedding,
                                          "value_relative_embeddings")
        output += matmul_with_relative_values(to_relative(weights),
                                              cast_like(value_embeddings, weights),
                                              heads_share_relative_embedding)
    return output


def dot_product_self_attention_relative_v2(q, k, v, bias, max_relative_position=None,
                                           dropout_rate=0.0, image_shapes=None,
                                           save_weights_to=None, name=None,
                                           make_image_summary=True,
                                           dropout_broadcast_dims=None,
                                           heads_share_relative_embedding=False,
                                           add_relative_to_values=False):
    """Causal self-attention with relative positions looking left (T2T's
    "dot_product_relative_v2"); pass a causal `bias`, as positions ahead get no embedding.

    q, k: [batch, heads, length, depth_k]; v: [batch, heads, length, depth_v].
    max_relative_position: rows of the embeddings (distances 0 .. M - 1 to the left).
    Returns [batch, heads, length, depth_v].
    """
    _check_max_relative_position(max_relative_position)
    with _v1.variable_scope(name, default_name="dot_product_self_attention_relative_v2",
                            values=[q, k, v]) as scope:
        q.get_shape().assert_is_compatible_with(k.get_shape())
        q.get_shape()[:-1].assert_is_compatible_with(v.get_shape()[:-1])
        return _relative_self_attention(
            q, k, v, bias, max_relative_position, dropout_rate, image_shapes,
            save_weights_to, scope, make_image_summary, dropout_broadcast_dims,
            heads_share_relative_embedding, add_relative_to_values, masked=True)


def dot_product_unmasked_self_attention_relative_v2(
        q, k, v, bias, max_relative_position=None, dropout_rate=0.0, image_shapes=None,
        save_weights_to=None, name=None, make_image_summary=True,
        dropout_broadcast_dims=None, heads_share_relative_embedding=False,
        add_relative_to_values=False):
    """Self-attention with relative positions both ways (T2T's
    "dot_product_unmasked_relative_v2"): 2 * max_relative_position - 1 embeddings.

    q, k, v: [batch, heads, length, depth] (equal shapes). Returns [batch, heads, length,
    depth].
    """
    _check_max_relative_position(max_relative_position)
    with _v1.variable_scope(name,
                            default_name="dot_product_unmasked_self_attention_relative_v2",
                            values=[q, k, v]) as scope:
        q.get_shape().assert_is_compatible_with(k.get_shape())
        q.get_shape().assert_is_compatible_with(v.get_shape())
        return _relative_self_attention(
            q, k, v, bias, max_relative_position, dropout_rate, image_shapes,
            save_weights_to, scope, make_image_summary, dropout_broadcast_dims,
            heads_share_relative_embedding, add_relative_to_values, masked=False)
