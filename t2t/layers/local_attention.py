"""1-D local self-attention: blocked, banded and dilated windows instead of the whole
sequence.

Each function splits the length into query blocks and lets a block attend to a window
of memory positions around it, so the cost grows with length x window, not length^2.
q, k: [batch, heads, length, depth_k]; v: [batch, heads, length, depth_v]; outputs
[batch, heads, length, depth_v]. None of them takes a bias: the masked ("mask_right")
functions are causal, and padded positions are found as all-zero keys. Names, defaults
and scopes are T2T 1.15.7's (`common_attention` re-exports them); none of them creates
variables except `masked_relative_local_attention_1d`.

    y = masked_local_attention_1d(q, k, v, block_length=4)
    # position i sees positions j <= i in its own block of 4 and in the block before
"""
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import masks
from t2t.layers import dropout as dropout_lib
from t2t.layers.relative_attention import (
    _absolute_position_to_relative_position_masked,
    _absolute_position_to_relative_position_unmasked,
    _relative_position_to_absolute_position_masked,
    _relative_position_to_absolute_position_unmasked, get_relative_embeddings_left,
    matmul_with_relative_keys, matmul_with_relative_values)
from t2t.layers.shape_utils import cast_like, shape_list, to_float
from t2t.layers.softmax_attention import attention_image_summary, dot_product_attention

_v1 = tf.compat.v1


def _lower_triangle_bias(length, out_shape=None):
    # common_attention.attention_bias_lower_triangle, which sits above this module.
    band = masks.ones_matrix_band_part(length, length, -1, 0,
                                               out_shape=out_shape or [1, 1, length, length])
    return -1e9 * (1.0 - band)


def _zero_key_bias(k):
    """[..., 1, memory]: -1e9 at all-zero keys (the padding this module adds)."""
    return tf.expand_dims(to_float(tf.equal(tf.reduce_sum(tf.abs(k), -1), 0.0)) * -1e9, -2)


def _pad_length_to(x, multiple, left=0, right=0):
    """Zero-pad the length axis (2) of x up to a multiple, plus `left`/`right` positions."""
    length = shape_list(x)[2]
    to_multiple = (-length) % multiple if isinstance(length, int) and isinstance(
        multiple, int) else tf.math.floormod(-length, multiple)
    return tf.pad(x, [[0, 0], [0, 0], [left, to_multiple + right], [0, 0]])


def _static_int(value):
    # T2T accepted block lengths as constant tensors; use their value when known.
    if isinstance(value, tf.Tensor):
        const = tf.get_static_value(value)
        if const is not None:
            return int(const)
    return value


def _effective_block_length(length, block_length):
    # Under two blocks' worth of positions, one block covers the whole sequence.
    if isinstance(length, int) and isinstance(block_length, int):
        return length if length < 2 * block_length else block_length
    return tf.where(tf.less(length, 2 * block_length), length, block_length)


def _drop_padding(output, batch, heads, length, depth_v):
    output = tf.reshape(output, [batch, heads, -1, depth_v])[:, :, :length, :]
    output.set_shape([d if isinstance(d, int) else None for d in (batch, heads, length,
                                                                  depth_v)])
    return output


def reshape_by_blocks(x, x_shape, memory_block_size):
    """[batch, heads, length, depth] -> [batch, heads, length / size, size, depth]
    (memory_block_size divides length; x_shape is shape_list(x))."""
    return tf.reshape(x, [x_shape[0], x_shape[1], x_shape[2] // memory_block_size,
                          memory_block_size, x_shape[3]])


def masked_within_block_local_attention_1d(q, k, v, block_length=64, name=None):
    """Causal attention inside blocks of block_length: j <= i and j in i's block."""
    with _v1.variable_scope(name, default_name="within_local_attention_1d",
                            values=[q, k, v]):
        batch, heads, length, depth_k = shape_list(q)
        depth_v = shape_list(v)[-1]
        block_length = _static_int(block_length)
        q, k, v = (_pad_length_to(t, block_length) for t in (q, k, v))
        padded_length = shape_list(q)[2]
        num_blocks = padded_length // block_length
        q = tf.reshape(q, [batch, heads, num_blocks, block_length, depth_k])
        k = tf.reshape(k, [batch, heads, num_blocks, block_length, depth_k])
        v = tf.reshape(v, [batch, heads, num_blocks, block_length, depth_v])
        logits = tf.matmul(q, k, transpose_b=True)
        logits += _lower_triangle_bias(block_length, [1, 1, 1, block_length, block_length])
        output = tf.matmul(tf.nn.softmax(logits), v)
        return _drop_padding(output, batch, heads, length, depth_v)


def _make_local_block(x, depth, batch, heads, num_blocks, block_length):
    """[B, H, n, b, d] -> [B, H, n - 1, 2b, d]: each block after the first with the one
    before it."""
    local_block = tf.concat([x[:, :, :-1], x[:, :, 1:]], axis=3)
    return tf.reshape(local_block, [batch, heads, num_blocks - 1, block_length * 2, depth])


def _blocked_causal(q, k, v, block_length):
    """Pads to whole blocks and splits them: the first block's q, k, v and the later
    blocks' queries with their 2-block memories, plus the sizes."""
    batch, heads, length, depth_k = shape_list(q)
    depth_v = shape_list(v)[-1]
    block_length = _effective_block_length(length, _static_int(block_length))
    q, k, v = (_pad_length_to(t, block_length) for t in (q, k, v))
    num_blocks = shape_list(q)[2] // block_length
    first = [t[:, :, :block_length] for t in (q, k, v)]
    q = tf.reshape(q, [batch, heads, num_blocks, block_length, depth_k])
    k = tf.reshape(k, [batch, heads, num_blocks, block_length, depth_k])
    v = tf.reshape(v, [batch, heads, num_blocks, block_length, depth_v])
    local_k = _make_local_block(k, depth_k, batch, heads, num_blocks, block_length)
    local_v = _make_local_block(v, depth_v, batch, heads, num_blocks, block_length)
    tail_q = q[:, :, 1:]
    sizes = (batch, heads, length, depth_k, depth_v, block_length, num_blocks)
    return first, (tail_q, local_k, local_v), sizes


def _causal_two_block_band(block_length, out_shape=None):
    # Query t of a block sees the previous block and positions <= t of its own.
    return masks.ones_matrix_band_part(block_length, 2 * block_length, -1,
                                               block_length, out_shape=out_shape)


def masked_local_attention_1d(q, k, v, block_length=128, make_image_summary=False,
                              dropout_rate=0., name=None):
    """Causal local attention: position i sees j <= i in its block and the block before.

    A sequence shorter than 2 * block_length is one block (plain causal attention).
    """
    with _v1.variable_scope(name, default_name="local_attention_1d", values=[q, k, v]):
        (first_q, first_k, first_v), (tail_q, local_k, local_v), sizes = _blocked_causal(
            q, k, v, block_length)
        batch, heads, length, _, depth_v, block_length, num_blocks = sizes
        first_output = dot_product_attention(
            first_q, first_k, first_v, _lower_triangle_bias(block_length),
            dropout_rate=dropout_rate, make_image_summary=make_image_summary,
            name="first_block")
        band = _causal_two_block_band(block_length,
                                      [1, 1, 1, block_length, 2 * block_length])
        tail_output = dot_product_attention(
            tail_q, local_k, local_v, (1.0 - band) * -1e9, dropout_rate=dropout_rate,
            make_image_summary=False, name="tail_block")
        tail_output = tf.reshape(tail_output,
                                 [batch, heads, (num_blocks - 1) * block_length, depth_v])
        output = tf.concat([first_output, tail_output], axis=2)
        return tf.reshape(output[:, :, :length], [batch, heads, length, depth_v])


def _relative_value_term(weights, rel_embed_length, block_length, depth_v, heads,
                         heads_share, previous_block):
    # Weights over [previous block, own block] (or the own block only) times the value
    # embeddings of their distances; row 4B - 1 + (j - i) of the variable for distance.
    masked_weights = weights[..., -block_length:] if previous_block else weights
    rel_weights = [_absolute_position_to_relative_position_masked(masked_weights)]
    embeddings = [get_relative_embeddings_left(rel_embed_length, block_length, depth_v, heads,
                                               heads_share, "value_relative_embeddings")]
    if previous_block:
        rel_weights.insert(0, _absolute_position_to_relative_position_unmasked(
            weights[..., :block_length]))
        left = get_relative_embeddings_left(rel_embed_length, 2 * block_length, depth_v,
                                            heads, heads_share, "value_relative_embeddings")
        embeddings.insert(0, left[:-1] if heads_share else left[:, :-1])
    rel_weights = tf.concat(rel_weights, axis=3)
    embeddings = tf.concat(embeddings, axis=0 if heads_share else 1)
    return matmul_with_relative_values(rel_weights, cast_like(embeddings, weights),
                                       heads_share)


def masked_relative_local_attention_1d(q, k, v, block_length=128, make_image_summary=False,
                                       dropout_rate=0., heads_share_relative_embedding=False,
                                       add_relative_to_values=False, name=None):
    """masked_local_attention_1d with relative-position logits (and values).

    The variable `<name>/relative_embeddings` ([heads,] 4 * block_length, depth_k; and
    `value_relative_embeddings` with add_relative_to_values) holds distances
    0 .. 4 * block_length - 1 to the left: logits[i, j] += q_i . E[4B - 1 + (j - i)].
    `name` is required (T2T's callers pass "masked_relative_local_attention_1d"): the
    scope is reused so the first and later blocks share the embeddings.
    """
    if not name:
        raise ValueError("masked_relative_local_attention_1d needs a name: its scope is "
                         "reused (AUTO_REUSE) to share the relative embeddings")
    with _v1.variable_scope(name, default_name="masked_relative_local_attention_1d",
                            values=[q, k, v], reuse=_v1.AUTO_REUSE):
        # The variable's size follows the requested block length, so it is known
        # statically (and a checkpoint fits any sequence length).
        rel_embed_length = 4 * block_length
        heads_share = heads_share_relative_embedding
        (first_q, first_k, first_v), (tail_q, local_k, local_v), sizes = _blocked_causal(
            q, k, v, block_length)
        batch, heads, length, depth_k, depth_v, block_length, num_blocks = sizes

        def attend(queries, keys, values, rel_logits, band, previous_block):
            logits = tf.matmul(queries, keys, transpose_b=True) + rel_logits
            logits += cast_like((1.0 - band) * -1e9, logits)
            weights = tf.nn.softmax(logits, name="attention_weights")
            weights = dropout_lib.dropout_with_broadcast_dims(weights, 1.0 - dropout_rate)
            output = tf.matmul(weights, values)
            if add_relative_to_values:
                output += _relative_value_term(weights, rel_embed_length, block_length,
                                               depth_v, heads, heads_share, previous_block)
            return output, weights

        first_embeddings = get_relative_embeddings_left(
            rel_embed_length, block_length, depth_k, heads, heads_share,
            "relative_embeddings")
        first_rel = _relative_position_to_absolute_position_masked(
            matmul_with_relative_keys(first_q, cast_like(first_embeddings, first_q),
                                      heads_share))
        first_output, first_weights = attend(
            first_q, first_k, first_v, first_rel,
            masks.ones_matrix_band_part(block_length, block_length, -1, 0),
            previous_block=False)
        if make_image_summary and common_layers.should_generate_summaries():
            attention_image_summary(first_weights, None)

        def fold_blocks(x):
            # [B, H, n - 1, b, d] -> [B * (n - 1), H, b, d]: blocks as batch entries.
            shape = shape_list(x)
            return tf.reshape(tf.transpose(x, [0, 2, 1, 3, 4]),
                              [batch * shape[2], heads, shape[3], shape[4]])

        tail_q, local_k, local_v = fold_blocks(tail_q), fold_blocks(local_k), fold_blocks(
            local_v)
        embeddings = get_relative_embeddings_left(rel_embed_length, 2 * block_length,
                                                  depth_k, heads, heads_share,
                                                  "relative_embeddings")
        rel = matmul_with_relative_keys(tail_q, cast_like(embeddings, tail_q), heads_share)
        # The previous block's columns skew as unmasked, the own block's as masked.
        tail_rel = tf.concat([
            _relative_position_to_absolute_position_unmasked(rel[..., :2 * block_length - 1]),
            _relative_position_to_absolute_position_masked(rel[..., block_length:])], axis=3)
        tail_output, _ = attend(tail_q, local_k, local_v, tail_rel,
                                _causal_two_block_band(block_length), previous_block=True)
        tail_output = tf.reshape(tail_output,
                                 [batch, num_blocks - 1, heads, block_length, depth_v])
        tail_output = tf.reshape(tf.transpose(tail_output, [0, 2, 1, 3, 4]),
                                 [batch, heads, (num_blocks - 1) * block_length, depth_v])
        output = tf.concat([first_output, tail_output], axis=2)
        return tf.reshape(output[:, :, :length], [batch, heads, length, depth_v])


def local_attention_1d(q, k, v, block_length=128, filter_width=100, name=None):
    """Unmasked local attention: a query block of block_length sees its own block and
    filter_width positions on each side of it."""
    with _v1.variable_scope(name, default_name="local_self_attention_1d", values=[q, k, v]):
        q.get_shape()[:-1].assert_is_compatible_with(k.get_shape()[:-1])
        q.get_shape()[:-1].assert_is_compatible_with(v.get_shape()[:-1])
        batch, heads, length, _ = shape_list(q)
        depth_v = shape_list(v)[-1]
        q = _pad_length_to(q, block_length)
        q = reshape_by_blocks(q, shape_list(q), block_length)
        num_query_blocks = shape_list(q)[2]
        full_blocks, partial = divmod(filter_width, block_length)
        # Whole blocks of margin on both sides, one more than the filter needs, so the
        # partial block at each end can be cut from them.
        margin = (full_blocks + 1) * block_length
        k, v = (reshape_by_blocks(t, shape_list(t), block_length)
                for t in (_pad_length_to(t, block_length, margin, margin) for t in (k, v)))
        # Block b + i of the padded memory is block b + i - full_blocks - 1 of the
        # sequence: i = 1 .. 2 * full_blocks + 1 are the own block and full_blocks whole
        # blocks either side; the partial margins come from i = 0 and the last.
        def window(x, offset):
            return x[:, :, offset:offset + num_query_blocks]

        pieces = []
        if partial:
            pieces.append((window(k, 0)[:, :, :, block_length - partial:],
                           window(v, 0)[:, :, :, block_length - partial:]))
            last = 2 * full_blocks + 2
            pieces.append((window(k, last)[:, :, :, :partial],
                           window(v, last)[:, :, :, :partial]))
        pieces += [(window(k, i), window(v, i)) for i in range(1, 2 * full_blocks + 2)]
        k = tf.concat([p[0] for p in pieces], axis=3)
        v = tf.concat([p[1] for p in pieces], axis=3)
        output = dot_product_attention(q, k, v, _zero_key_bias(k), dropout_rate=0.,
                                       name="local_1d", make_image_summary=False)
        return _drop_padding(output, batch, heads, length, depth_v)


def gather_dilated_memory_blocks(x, num_memory_blocks, gap_size, query_block_size,
                                 memory_block_size, gather_indices, direction="left"):
    """The memory blocks of every query block, gap_size apart, nearest first.

    x: [length, batch, heads, depth] (padded by (gap_size + memory_block_size) *
    num_memory_blocks on the side of `direction`); gather_indices [query blocks,
    memory_block_size]. Returns [batch, heads, query blocks, num_memory_blocks *
    memory_block_size, depth].
    """
    gathered = []
    for block_id in range(num_memory_blocks):
        # Block block_id ends gap_size * (block_id + 1) + memory_block_size * block_id
        # positions before the query block (starts as far after it, to the right).
        near_edge = query_block_size + gap_size * (block_id + 1) + memory_block_size * block_id
        far_edge = (memory_block_size + gap_size) * (num_memory_blocks - block_id - 1)
        if direction == "left":
            x_block = x[far_edge:-near_edge]
        else:
            x_block = x[near_edge:-far_edge] if far_edge else x[near_edge:]
        gathered.append(tf.transpose(tf.gather(x_block, gather_indices), [2, 3, 0, 1, 4]))
    return tf.concat(gathered, 3)


def _dilated_gather_indices(padded_length, query_block_size, memory_block_size):
    # Row b: memory_block_size consecutive indices from b * query_block_size.
    num_query_blocks = padded_length // query_block_size
    starts = tf.range(num_query_blocks) * query_block_size
    return starts[:, None] + tf.range(memory_block_size)[None, :]


def _dilated_attention(q, k, v, query_block_size, memory_block_size, gap_size,
                       num_memory_blocks, masked):
    v_list_shape = v.get_shape().as_list()
    if v_list_shape != k.shape.as_list():
        raise ValueError("dilated self-attention needs keys and values of one shape, got "
                         "%s and %s" % (k.shape, v.shape))
    batch, heads, length, depth_v = shape_list(v)
    q, k, v = (_pad_length_to(t, query_block_size) for t in (q, k, v))
    padded_shape = shape_list(q)
    q, self_k, self_v = (reshape_by_blocks(t, padded_shape, query_block_size)
                         for t in (q, k, v))
    margin = (gap_size + memory_block_size) * num_memory_blocks
    gather_indices = _dilated_gather_indices(padded_shape[2], query_block_size,
                                             memory_block_size)

    def memory(x, direction):
        padding = [[margin, 0]] if direction == "left" else [[0, margin]]
        x = tf.pad(tf.transpose(x, [2, 0, 1, 3]), padding + [[0, 0]] * 3)
        return gather_dilated_memory_blocks(x, num_memory_blocks, gap_size,
                                            query_block_size, memory_block_size,
                                            gather_indices, direction=direction)

    left_k, left_v = memory(k, "left"), memory(v, "left")
    if masked:
        # Causal inside the own block; the memory blocks are all in the past.
        causal = tf.tile(_lower_triangle_bias(query_block_size,
                                              [1, 1, 1, query_block_size, query_block_size]),
                         [batch, heads, padded_shape[2] // query_block_size, 1, 1])
        zero_keys = tf.tile(_zero_key_bias(left_k), [1, 1, 1, query_block_size, 1])
        bias = tf.concat([causal, zero_keys], axis=-1)
        k_windows = tf.concat([self_k, left_k], 3)
        v_windows = tf.concat([self_v, left_v], 3)
    else:
        k_windows = tf.concat([left_k, self_k, memory(k, "right")], 3)
        v_windows = tf.concat([left_v, self_v, memory(v, "right")], 3)
        bias = _zero_key_bias(k_windows)
    output = dot_product_attention(q, k_windows, v_windows, bias, dropout_rate=0.,
                                   name="dilated_1d", make_image_summary=False)
    output = tf.reshape(output, [batch, heads, -1, depth_v])[:, :, :length, :]
    output.set_shape(v_list_shape)
    return output


def dilated_self_attention_1d(q, k, v, query_block_size=128, memory_block_size=128,
                              gap_size=2, num_memory_blocks=2, name=None):
    """Dilated self-attention: a query block sees itself and num_memory_blocks blocks of
    memory_block_size on each side, with gap_size positions skipped before each.

    Keys and values must have one shape.
    """
    with _v1.variable_scope(name, default_name="dilated_self_attention_1d",
                            values=[q, k, v]):
        return _dilated_attention(q, k, v, query_block_size, memory_block_size, gap_size,
                                  num_memory_blocks, masked=False)


def masked_dilated_self_attention_1d(q, k, v, query_block_size=64, memory_block_size=64,
                                     gap_size=2, num_memory_blocks=2, name=None):
    """Causal dilated self-attention: positions <= i of the own query block and
    num_memory_blocks dilated blocks to the left only."""
    with _v1.variable_scope(name, default_name="masked_dilated_self_attention_1d",
                            values=[q, k, v]):
        return _dilated_attention(q, k, v, query_block_size, memory_block_size, gap_size,
                                  num_memory_blocks, masked=True)
