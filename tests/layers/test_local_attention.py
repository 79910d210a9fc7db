"""1-D local, blocked and dilated attention against dense attention with the band mask
each one promises, in TF2 eager and in tf.compat.v1 graph mode."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import common_attention

v1 = tf.compat.v1
BATCH, HEADS, DEPTH = 2, 2, 4


def qkv(length, seed=0, depth_v=DEPTH):
    rng = np.random.RandomState(seed)
    q = rng.randn(BATCH, HEADS, length, DEPTH).astype(np.float32)
    k = rng.randn(BATCH, HEADS, length, DEPTH).astype(np.float32)
    v = rng.randn(BATCH, HEADS, length, depth_v).astype(np.float32)
    return q, k, v


def run(mode, build):
    """build() in eager mode, or in a fresh graph run by a session."""
    if mode == "eager":
        return tf.nest.map_structure(lambda t: t.numpy(), build())
    with tf.Graph().as_default():
        fetches = build()
        with v1.Session() as sess:
            return sess.run(fetches)


def dense_reference(q, k, v, allowed):
    """softmax(q k^T masked to allowed[i, j]) v, in numpy."""
    logits = np.where(allowed, q @ np.swapaxes(k, -1, -2), -1e9)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return weights @ v


def positions(length):
    i = np.arange(length)[:, None]
    j = np.arange(length)[None, :]
    return i, j


MODES = ["eager", "graph"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("length,block_length,effective", [(10, 3, 3), (11, 4, 4), (5, 4, 5)])
def test_masked_local_sees_own_and_previous_block_causally(mode, length, block_length,
                                                           effective):
    q, k, v = qkv(length, depth_v=3)
    out = run(mode, lambda: common_attention.masked_local_attention_1d(
        tf.constant(q), tf.constant(k), tf.constant(v), block_length=block_length))
    i, j = positions(length)
    # Shorter than two blocks: one block of the whole length (plain causal attention).
    allowed = (j <= i) & (j >= (i // effective - 1) * effective)
    assert out.shape == (BATCH, HEADS, length, 3)
    np.testing.assert_allclose(out, dense_reference(q, k, v, allowed), atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_masked_local_with_a_long_block_is_causal_dot_product_attention(mode):
    q, k, v = qkv(6)
    out = run(mode, lambda: (
        common_attention.masked_local_attention_1d(*map(tf.constant, (q, k, v)),
                                                   block_length=128),
        common_attention.dot_product_attention(
            *map(tf.constant, (q, k, v)), common_attention.attention_bias_lower_triangle(6),
            name="dense")))
    np.testing.assert_allclose(out[0], out[1], atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("length,block_length", [(10, 3), (8, 4)])
def test_within_block_attention_is_causal_inside_each_block(mode, length, block_length):
    q, k, v = qkv(length, seed=1)
    out = run(mode, lambda: common_attention.masked_within_block_local_attention_1d(
        *map(tf.constant, (q, k, v)), block_length=block_length))
    i, j = positions(length)
    allowed = (j <= i) & (i // block_length == j // block_length)
    np.testing.assert_allclose(out, dense_reference(q, k, v, allowed), atol=1e-5)


@pytest.mark.parametrize("mode,block_length,filter_width", [
    ("eager", 4, 3), ("graph", 4, 4), ("eager", 3, 0), ("graph", 2, 5)])
def test_unmasked_local_sees_its_block_and_filter_width_either_side(mode, block_length,
                                                                    filter_width):
    length = 11
    q, k, v = qkv(length, seed=2, depth_v=5)
    out = run(mode, lambda: common_attention.local_attention_1d(
        *map(tf.constant, (q, k, v)), block_length=block_length, filter_width=filter_width))
    i, j = positions(length)
    start = (i // block_length) * block_length
    allowed = (j >= start - filter_width) & (j < start + block_length + filter_width)
    assert out.shape == (BATCH, HEADS, length, 5)
    np.testing.assert_allclose(out, dense_reference(q, k, v, allowed), atol=1e-5)


def dilated_allowed(length, query_block, memory_block, gap, num_blocks, masked):
    """Own query block, and num_blocks memory blocks gap apart on the left (and right)."""
    i, j = positions(length)
    start = (i // query_block) * query_block
    allowed = (j >= start) & (j < start + query_block)
    if masked:
        allowed &= j <= i
    for block_id in range(num_blocks):
        left_end = start - gap * (block_id + 1) - memory_block * block_id
        allowed |= (j >= left_end - memory_block) & (j < left_end)
        if not masked:
            right_start = start + query_block + gap * (block_id + 1) + memory_block * block_id
            allowed |= (j >= right_start) & (j < right_start + memory_block)
    return allowed


@pytest.mark.parametrize("mode,masked,length,query_block,memory_block,gap,num_blocks", [
    ("eager", False, 13, 3, 2, 1, 2), ("graph", True, 13, 3, 2, 1, 2),
    ("graph", False, 12, 4, 3, 0, 1), ("eager", True, 12, 4, 3, 0, 1)])
def test_dilated_attention_sees_the_gapped_memory_blocks(mode, masked, length, query_block,
                                                         memory_block, gap, num_blocks):
    q, k, v = qkv(length, seed=3)
    function = (common_attention.masked_dilated_self_attention_1d if masked
                else common_attention.dilated_self_attention_1d)
    out = run(mode, lambda: function(*map(tf.constant, (q, k, v)), query_block, memory_block,
                                     gap, num_blocks))
    allowed = dilated_allowed(length, query_block, memory_block, gap, num_blocks, masked)
    np.testing.assert_allclose(out, dense_reference(q, k, v, allowed), atol=1e-5)


def test_dilated_attention_needs_keys_and_values_of_one_shape():
    q, k, v = qkv(6, depth_v=3)
    with pytest.raises(ValueError, match="keys and values of one shape"):
        common_attention.dilated_self_attention_1d(*map(tf.constant, (q, k, v)), 2, 2)


def test_reshape_by_blocks_and_gather_dilated_memory_blocks():
    x = tf.reshape(tf.range(24), [1, 1, 12, 2])
    blocks = common_attention.reshape_by_blocks(x, [1, 1, 12, 2], 4)
    assert blocks.shape == (1, 1, 3, 4, 2)
    np.testing.assert_array_equal(blocks[0, 0, 1, :, 0], [8, 10, 12, 14])
    # Positions 0..7 padded by (gap 1 + block 2) * 1 on the left, as the attention does:
    # query block b (of 2) gets positions 2b - 3, 2b - 2 (gap 1 before the block).
    padded = tf.pad(tf.reshape(tf.range(1, 9), [8, 1, 1, 1]), [[3, 0], [0, 0], [0, 0], [0, 0]])
    indices = tf.constant([[0, 1], [2, 3], [4, 5], [6, 7]])
    left = common_attention.gather_dilated_memory_blocks(padded, 1, 1, 2, 2, indices)
    assert left.shape == (1, 1, 4, 2, 1)
    # Value p + 1 at position p; 0 is padding.
    np.testing.assert_array_equal(left[0, 0, :, :, 0], [[0, 0], [0, 1], [2, 3], [4, 5]])


MASKED_TYPES = ["local_mask_right", "local_within_block_mask_right",
                "local_relative_mask_right", "masked_dilated_1d", "dot_product_relative_v2"]


@pytest.mark.parametrize("attention_type", MASKED_TYPES)
def test_masked_types_do_not_attend_to_the_future(attention_type):
    length = 9
    x_np = np.random.RandomState(4).randn(BATCH, length, 8).astype(np.float32)
    changed = x_np.copy()
    changed[:, 5:] += 3.0

    def build():
        outputs = []
        for x in (x_np, changed):
            with v1.variable_scope("layer", reuse=v1.AUTO_REUSE):
                outputs.append(common_attention.multihead_attention(
                    tf.constant(x), None, common_attention.attention_bias_lower_triangle(length),
                    8, 8, 8, HEADS, 0.0, attention_type=attention_type, block_length=2,
                    block_width=2, gap_size=1, max_relative_position=3))
        return outputs

    with tf.Graph().as_default():
        v1.set_random_seed(1)
        outputs = build()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            before, after = sess.run(outputs)
    np.testing.assert_allclose(before[:, :5], after[:, :5], atol=1e-5)
    assert np.abs(before[:, 5:] - after[:, 5:]).max() > 1e-3


def test_multihead_local_types_keep_dot_product_variables_and_numerics():
    x = np.random.RandomState(5).randn(BATCH, 6, 8).astype(np.float32)
    results = {}
    for attention_type in ("dot_product", "local_mask_right"):
        with tf.Graph().as_default():
            v1.set_random_seed(3)
            y = common_attention.multihead_attention(
                tf.constant(x), None, common_attention.attention_bias_lower_triangle(6), 8, 8,
                8, HEADS, 0.0, attention_type=attention_type)
            names = sorted(var.op.name for var in v1.global_variables())
            with v1.Session() as sess:
                sess.run(v1.global_variables_initializer())
                results[attention_type] = names, sess.run(y)
    assert results["dot_product"][0] == results["local_mask_right"][0] == [
        "multihead_attention/%s/kernel" % n for n in ("k", "output_transform", "q", "v")]
    np.testing.assert_allclose(results["local_mask_right"][1], results["dot_product"][1],
                               atol=1e-5)


def test_masked_local_with_unknown_length_and_batch_in_a_graph():
    # The slow decoding loops grow the targets one position per step.
    q, k, v = qkv(7, seed=6)
    with tf.Graph().as_default():
        holders = [v1.placeholder(tf.float32, [None, HEADS, None, DEPTH]) for _ in range(3)]
        out = common_attention.masked_local_attention_1d(*holders, block_length=3)
        within = common_attention.masked_within_block_local_attention_1d(*holders,
                                                                         block_length=3)
        dilated = common_attention.masked_dilated_self_attention_1d(*holders, 3, 2, 1, 1)
        with v1.Session() as sess:
            got = sess.run([out, within, dilated], dict(zip(holders, (q, k, v))))
    i, j = positions(7)
    two_blocks = (j <= i) & (j >= (i // 3 - 1) * 3)
    np.testing.assert_allclose(got[0], dense_reference(q, k, v, two_blocks), atol=1e-5)
    np.testing.assert_allclose(got[1], dense_reference(q, k, v, (j <= i) & (i // 3 == j // 3)),
                               atol=1e-5)
    np.testing.assert_allclose(got[2], dense_reference(q, k, v,
                                                       dilated_allowed(7, 3, 2, 1, 1, True)),
                               atol=1e-5)
