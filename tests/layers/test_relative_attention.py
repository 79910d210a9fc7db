"""Relative-position attention v2 and masked relative local attention against explicit
relative-logit computations in numpy; variable names and shapes as T2T's."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import common_attention
from t2t.layers import relative_attention

v1 = tf.compat.v1
BATCH, HEADS, DEPTH = 2, 2, 4


def qkv(length, seed=0):
    rng = np.random.RandomState(seed)
    return [rng.randn(BATCH, HEADS, length, DEPTH).astype(np.float32) for _ in range(3)]


def relative_rows(table, length, center, heads_share):
    """[H, L, L, d]: row center + (j - i) of table ([H,] rows, d), zeros outside it."""
    if heads_share:
        table = np.broadcast_to(table, (HEADS,) + table.shape)
    i, j = np.meshgrid(np.arange(length), np.arange(length), indexing="ij")
    index = center + j - i
    inside = (index >= 0) & (index < table.shape[1])
    rows = table[:, np.clip(index, 0, table.shape[1] - 1)]
    return rows * inside[None, :, :, None]


def reference(q, k, v, allowed, key_rows, value_rows=None, value_from=0):
    """Attention with logits q.k + q.key_rows[h, i, j], plus sum_j w value_rows[h, i, j]
    for queries from value_from on."""
    logits = q @ np.swapaxes(k, -1, -2) + np.einsum("bhid,hijd->bhij", q, key_rows)
    logits = np.where(allowed, logits, -1e9)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    out = weights @ v
    if value_rows is not None:
        out[:, :, value_from:] += np.einsum("bhij,hijd->bhid", weights,
                                            value_rows)[:, :, value_from:]
    return out


def run_graph(build):
    with tf.Graph().as_default():
        v1.set_random_seed(2)
        out = build()
        variables = {var.op.name: var for var in v1.global_variables()}
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            return sess.run(out), sess.run(variables)


@pytest.mark.parametrize("masked,max_relative_position,heads_share", [
    (True, 3, False), (True, 8, True), (False, 3, True), (False, 8, False)])  # M < L, M > L
def test_relative_v2_equals_explicit_relative_logits(masked, max_relative_position,
                                                     heads_share):
    length = 6
    q, k, v = qkv(length)
    i, j = np.meshgrid(np.arange(length), np.arange(length), indexing="ij")
    allowed = j <= i if masked else np.ones_like(i, bool)
    function = (common_attention.dot_product_self_attention_relative_v2 if masked else
                common_attention.dot_product_unmasked_self_attention_relative_v2)
    saved = {}

    def build():
        bias = common_attention.attention_bias_lower_triangle(length) if masked else None
        return function(*map(tf.constant, (q, k, v)), bias, max_relative_position,
                        save_weights_to=saved, heads_share_relative_embedding=heads_share,
                        add_relative_to_values=True, make_image_summary=False)

    out, variables = run_graph(build)
    scope = ("dot_product_self_attention_relative_v2" if masked
             else "dot_product_unmasked_self_attention_relative_v2")
    rows = max_relative_position if masked else 2 * max_relative_position - 1
    shape = (rows, DEPTH) if heads_share else (HEADS, rows, DEPTH)
    assert sorted(variables) == [scope + "/key_relative_embeddings",
                                 scope + "/value_relative_embeddings"]
    assert variables[scope + "/key_relative_embeddings"].shape == shape
    assert sorted(saved) == [scope, scope + "/logits"]
    center = max_relative_position - 1
    key_rows, value_rows = (relative_rows(variables[scope + name], length, center, heads_share)
                            for name in ("/key_relative_embeddings",
                                         "/value_relative_embeddings"))
    np.testing.assert_allclose(out, reference(q, k, v, allowed, key_rows, value_rows),
                               atol=1e-5)


def test_relative_v2_needs_max_relative_position():
    q = tf.zeros([1, 1, 2, 2])
    with pytest.raises(ValueError, match="max_relative_position must be > 0"):
        common_attention.dot_product_self_attention_relative_v2(q, q, q, None, None)


@pytest.mark.parametrize("length,block_length,effective,add_values,heads_share", [
    (10, 3, 3, True, False), (10, 3, 3, False, True), (5, 4, 5, True, True)])
def test_masked_relative_local_equals_banded_relative_attention(length, block_length,
                                                                effective, add_values,
                                                                heads_share):
    q, k, v = qkv(length, seed=1)

    def build():
        return common_attention.masked_relative_local_attention_1d(
            *map(tf.constant, (q, k, v)), block_length=block_length,
            heads_share_relative_embedding=heads_share, add_relative_to_values=add_values,
            name="masked_relative_local_attention_1d")

    out, variables = run_graph(build)
    names = ["relative_embeddings"] + (["value_relative_embeddings"] if add_values else [])
    assert sorted(variables) == ["masked_relative_local_attention_1d/" + n for n in names]
    rows = 4 * block_length  # from the requested block length, whatever the sequence
    table = variables["masked_relative_local_attention_1d/relative_embeddings"]
    assert table.shape == ((rows, DEPTH) if heads_share else (HEADS, rows, DEPTH))
    i, j = np.meshgrid(np.arange(length), np.arange(length), indexing="ij")
    allowed = (j <= i) & (j >= (i // effective - 1) * effective)
    key_rows = relative_rows(table, length, rows - 1, heads_share)
    value_rows = None
    if add_values:
        value_rows = relative_rows(
            variables["masked_relative_local_attention_1d/value_relative_embeddings"],
            length, rows - 1, heads_share)
    np.testing.assert_allclose(out, reference(q, k, v, allowed, key_rows, value_rows),
                               atol=1e-5)


def test_masked_relative_local_needs_a_name():
    q = tf.zeros([1, 1, 2, 2])
    with pytest.raises(ValueError, match="needs a name"):
        common_attention.masked_relative_local_attention_1d(q, q, q)


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_skewing_helpers_move_between_absolute_and_relative_indexing(mode):
    length = 4
    x = np.random.RandomState(3).randn(1, 1, length, length).astype(np.float32)
    i, j = np.meshgrid(np.arange(length), np.arange(length), indexing="ij")

    def build():
        t = tf.constant(x)
        rel = relative_attention._absolute_position_to_relative_position_unmasked(t)
        return (rel, relative_attention._relative_position_to_absolute_position_unmasked(rel),
                relative_attention._relative_position_to_absolute_position_masked(t))

    if mode == "eager":
        rel, back, masked = (t.numpy() for t in build())
    else:
        with tf.Graph().as_default(), v1.Session() as sess:
            rel, back, masked = sess.run(build())
    # rel[i, L - 1 + j - i] = x[i, j]; the round trip is the identity.
    assert rel.shape == (1, 1, length, 2 * length - 1)
    np.testing.assert_array_equal(rel[0, 0, i, length - 1 + j - i], x[0, 0])
    np.testing.assert_array_equal(back, x)
    # Masked: absolute[i, j] = relative[i, L - 1 + j - i] for j <= i.
    causal = j <= i
    np.testing.assert_array_equal(masked[0, 0][causal],
                                  x[0, 0][i[causal], (length - 1 + j - i)[causal]])


@pytest.mark.parametrize("attention_type,scope,rows", [
    ("dot_product_relative_v2", "dot_product_self_attention_relative_v2", 3),
    ("dot_product_unmasked_relative_v2", "dot_product_unmasked_self_attention_relative_v2",
     5),
    ("local_relative_mask_right", "masked_relative_local_attention_1d", 8),
])
def test_multihead_attention_variable_names(attention_type, scope, rows):
    with tf.Graph().as_default():
        with v1.variable_scope("self_attention"):
            y = common_attention.multihead_attention(
                tf.zeros([BATCH, 5, 8]), None, None, 8, 8, 8, HEADS, 0.0,
                attention_type=attention_type, max_relative_position=3, block_length=2,
                heads_share_relative_embedding=True)
        shapes = {var.op.name: var.shape.as_list() for var in v1.global_variables()}
    assert y.shape.as_list() == [BATCH, 5, 8]
    prefix = "self_attention/multihead_attention/"
    assert shapes == {prefix + "q/kernel": [8, 8], prefix + "k/kernel": [8, 8],
                      prefix + "v/kernel": [8, 8], prefix + "output_transform/kernel": [8, 8],
                      prefix + scope + ("/relative_embeddings" if "local" in attention_type
                                        else "/key_relative_embeddings"): [rows, 4]}
