"""common_attention: timing signals, biases, attention values, packing, fast-decoding caches."""
import dataclasses
import inspect
import math

import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import common_attention
from t2t.layers.attention_config import MultiheadAttentionConfig
from graph_testing import run_graph

v1 = tf.compat.v1
DEPTH, HEADS = 16, 4


def reference_timing(positions, channels, min_timescale=1.0, max_timescale=1.0e4):
    """The formula, in numpy: sin/cos of position * geometric inverse timescales."""
    n = channels // 2
    increment = math.log(max_timescale / min_timescale) / max(n - 1, 1)
    inv = min_timescale * np.exp(np.arange(n) * -increment)
    scaled = np.asarray(positions, np.float64)[..., None] * inv
    signal = np.concatenate([np.sin(scaled), np.cos(scaled)], axis=-1)
    pad = [(0, 0)] * (signal.ndim - 1) + [(0, channels % 2)]
    return np.pad(signal, pad)


# --------------------------------------------------------------------------- timing signals
@pytest.mark.parametrize("channels", [2, 7, 16])
def test_timing_signal_matches_formula(channels):
    signal = common_attention.get_timing_signal_1d(5, channels).numpy()
    assert signal.shape == (1, 5, channels)
    np.testing.assert_allclose(signal[0], reference_timing(np.arange(5), channels), atol=1e-5)
    shifted = common_attention.add_timing_signal_1d(tf.zeros([2, 4, channels]), start_index=3)
    np.testing.assert_allclose(shifted.numpy()[1], reference_timing(np.arange(3, 7), channels),
                               atol=1e-5)


def test_timing_signal_value_examples():
    signal = common_attention.get_timing_signal_1d(2, 4).numpy()[0]
    np.testing.assert_allclose(signal, [[0, 0, 1, 1],
                                        [math.sin(1), math.sin(1e-4), math.cos(1),
                                         math.cos(1e-4)]], atol=1e-6)


def test_layer_timing_signals_pick_the_layers_row():
    sinusoid = common_attention.add_layer_timing_signal_sinusoid_1d(
        tf.zeros([2, 3, 6]), 2, 4).numpy()
    np.testing.assert_allclose(sinusoid, np.broadcast_to(reference_timing([2], 6), [2, 3, 6]),
                               atol=1e-6)

    def build():
        with v1.variable_scope("depth", reuse=v1.AUTO_REUSE):
            added = common_attention.add_layer_timing_signal_learned_1d(
                tf.zeros([2, 3, 6]), tf.constant(1), 4)
            table = v1.get_variable("layer_embedding")
        return added, table

    added, table = run_graph(build)
    assert table.shape == (4, 1, 1, 6)
    np.testing.assert_allclose(added, np.broadcast_to(table[1] * 6 ** 0.5, [2, 3, 6]),
                               rtol=1e-6)


@pytest.mark.parametrize("channels", [2, 9])
def test_timing_signal_given_position_restarts_per_segment(channels):
    position = tf.constant([[0, 1, 2, 0, 1, 0]])
    signal = common_attention.add_timing_signal_1d_given_position(
        tf.zeros([1, 6, channels]), position).numpy()
    assert np.all(np.isfinite(signal))  # T2T divided by zero for channels 2 and 3
    np.testing.assert_allclose(signal[0], reference_timing([0, 1, 2, 0, 1, 0], channels),
                               atol=1e-5)
    alone = common_attention.get_timing_signal_1d(3, channels).numpy()[0]
    np.testing.assert_allclose(signal[0, :3], alone, atol=1e-6)


def test_add_positional_embedding_shapes_and_overflow():
    def build():
        with v1.variable_scope("emb", reuse=v1.AUTO_REUSE):
            short = common_attention.add_positional_embedding(tf.zeros([2, 5, 4]), 8, "pos")
            var = v1.get_variable("pos")
            long = common_attention.add_positional_embedding(tf.zeros([1, 10, 4]), 8, "pos")
            given = common_attention.add_positional_embedding(
                tf.zeros([1, 3, 4]), 8, name="pos", positions=tf.constant([[0, 1, 0]]))
        assert len(v1.global_variables()) == 1
        return short, var, long, given

    short, var, long, given = run_graph(build)
    np.testing.assert_allclose(short[1], var[:5])
    np.testing.assert_allclose(long[0, :8], var)
    np.testing.assert_array_equal(long[0, 8:], 0.0)
    np.testing.assert_allclose(given[0], var[[0, 1, 0]])


# --------------------------------------------------------------------------- biases
def test_lower_triangle_and_local_biases():
    causal = common_attention.attention_bias_lower_triangle(3).numpy()
    assert causal.shape == (1, 1, 3, 3)
    np.testing.assert_array_equal(causal[0, 0] < -1e8, [[0, 1, 1], [0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(causal[0, 0][causal[0, 0] > -1], 0.0)
    local = common_attention.attention_bias_local(4, 1, 0).numpy()[0, 0]
    np.testing.assert_array_equal(local == 0, [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0],
                                               [0, 0, 1, 1]])


def test_padding_biases_round_trip():
    emb = tf.constant([[[1.0, 0.0], [0.0, 0.0], [0.0, -2.0]]])
    padding = common_attention.embedding_to_padding(emb)
    np.testing.assert_array_equal(padding, [[0, 1, 0]])
    bias = common_attention.attention_bias_ignore_padding(padding)
    assert bias.shape == (1, 1, 1, 3)
    np.testing.assert_allclose(bias.numpy().ravel(), [0, -1e9, 0])
    np.testing.assert_array_equal(common_attention.attention_bias_to_padding(bias), padding)


def test_same_segment_bias():
    segments = tf.constant([[1, 1, 2, 0]])
    bias = common_attention.attention_bias_same_segment(segments, segments).numpy()
    assert bias.shape == (1, 1, 4, 4)
    allowed = [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    np.testing.assert_array_equal(bias[0, 0] == 0, allowed)
    np.testing.assert_allclose(bias[0, 0][bias[0, 0] != 0], -1e9)


def test_proximal_and_prepend_biases():
    proximal = common_attention.attention_bias_proximal(3).numpy()[0, 0]
    np.testing.assert_allclose(proximal, -np.log1p(np.abs(np.subtract.outer(range(3),
                                                                            range(3)))))
    # "inputs 0 targets": padding marks the separator (and trailing padding).
    padding = tf.constant([[0.0, 0.0, 1.0, 0.0, 0.0]])
    bias = common_attention.attention_bias_prepend_inputs_full_attention(padding).numpy()
    allowed = bias[0, 0] == 0
    assert allowed[0].tolist() == [True, True, True, False, False]  # inputs see all inputs
    assert allowed[3].tolist() == [True, True, True, True, False]   # targets are causal
    assert allowed[4].all()


# --------------------------------------------------------------------------- heads, attention
def test_split_and_combine_heads_round_trip():
    x = tf.reshape(tf.range(2 * 3 * 8, dtype=tf.float32), [2, 3, 8])
    heads = common_attention.split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 2)
    np.testing.assert_array_equal(heads.numpy()[0, 1, 2], [18, 19])  # x[0, 2, 2:4]
    np.testing.assert_array_equal(common_attention.combine_heads(heads), x)
    with pytest.raises(ValueError, match="not divisible by 3"):
        common_attention.split_last_dimension(x, 3)


def _softmax(logits):
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_dot_product_attention_matches_numpy_and_saves_weights():
    rng = np.random.RandomState(0)
    q, k, v = (rng.randn(1, 2, 3, 4).astype(np.float32) for _ in range(3))
    bias = np.array([0.0, -1e9, 0.0], np.float32).reshape(1, 1, 1, 3)
    saved = {}
    out = common_attention.dot_product_attention(q, k, v, bias, save_weights_to=saved).numpy()
    weights = _softmax(q @ k.transpose(0, 1, 3, 2) + bias)
    np.testing.assert_allclose(out, weights @ v, rtol=1e-5, atol=1e-6)
    names = sorted(saved)
    assert names[0].endswith("dot_product_attention") and names[1].endswith("/logits")
    np.testing.assert_allclose(saved[names[0]].numpy()[..., 1], 0.0)


def test_hard_attention_keeps_the_k_largest_weights():
    rng = np.random.RandomState(1)
    q, k, v = (rng.randn(1, 1, 3, 4).astype(np.float32) for _ in range(3))
    logits = q @ k.transpose(0, 1, 3, 2)
    out = common_attention.dot_product_attention(q, k, v, None, hard_attention_k=1).numpy()
    best = np.argmax(logits, axis=-1)[0, 0]
    np.testing.assert_allclose(out[0, 0], v[0, 0, best], rtol=1e-5)
    hard = common_attention.harden_attention_weights(tf.constant([[0.5, 0.3, 0.2]]), 2, 0.0)
    np.testing.assert_allclose(hard, [[0.625, 0.375, 0.0]], rtol=1e-6)
    # More k than memory positions keeps them all.
    np.testing.assert_allclose(
        common_attention.harden_attention_weights(tf.constant([[0.4, 0.6]]), 5, 0.0),
        [[0.4, 0.6]], rtol=1e-6)


def self_attention(x, bias, cache=None, attention_type="dot_product", scope="decoder",
                   **kwargs):
    # Re-entering the scope each call shares the weights, as the fast decoder does.
    with v1.variable_scope(scope, reuse=v1.AUTO_REUSE):
        return common_attention.multihead_attention(
            x, None, bias, DEPTH, DEPTH, DEPTH, HEADS, 0.0, attention_type=attention_type,
            max_relative_position=2, cache=cache, **kwargs)


def test_multihead_attention_shapes_and_variable_names():
    with tf.Graph().as_default():
        with v1.variable_scope("enc"):  # not reusing, so the image summary is made
            y = common_attention.multihead_attention(tf.zeros([2, 5, 8]), None, None, DEPTH,
                                                     DEPTH, DEPTH, HEADS, 0.0)
        assert y.shape.as_list() == [2, 5, DEPTH]
        names = sorted(var.op.name for var in v1.global_variables())
        assert names == ["enc/multihead_attention/%s/kernel" % n
                         for n in ("k", "output_transform", "q", "v")]
        assert v1.get_collection(v1.GraphKeys.SUMMARIES)  # the attention image summary


def test_multihead_attention_3d_variables():
    with tf.Graph().as_default():
        y = self_attention(tf.zeros([2, 5, 8]), None, vars_3d=True)
        assert y.shape.as_list() == [2, 5, DEPTH]
        shapes = {var.op.name.split("/")[-1]: var.shape.as_list()
                  for var in v1.global_variables()}
        assert shapes == {"q": [8, 4, 4], "k": [8, 4, 4], "v": [8, 4, 4], "o": [4, 4, DEPTH]}


@pytest.mark.parametrize("kwargs,match", [
    (dict(attention_type="local_mask_left"), "attention_type 'local_mask_left' is not "
                                             "supported in t2t"),
    (dict(attention_type="local_mask_right", cache={"k": None, "v": None}, bias=0.0),
     "a cache .* not 'local_mask_right'; decode without a cache"),
    (dict(attention_type="dot_product_relative_v2"), "'dot_product_relative_v2' needs "
                                                     "max_relative_position > 0"),
    (dict(total_key_depth=10), r"total_key_depth \(10\) must be divisible by num_heads \(4\)"),
    (dict(cache={"k": None, "v": None}), "with a cache needs a bias"),
    (dict(attention_type="dot_product_relative"), "needs max_relative_position > 0"),
    (dict(max_area_width=2), "area attention"),
])
def test_multihead_attention_errors(kwargs, match):
    with tf.Graph().as_default():
        args = dict(query_antecedent=tf.zeros([1, 2, 8]), memory_antecedent=None, bias=None,
                    total_key_depth=8, total_value_depth=8, output_depth=8, num_heads=4,
                    dropout_rate=0.0)
        args.update(kwargs)
        with pytest.raises(ValueError, match=match):
            common_attention.multihead_attention(**args)


def test_packed_row_attends_within_each_segment_only():
    rng = np.random.RandomState(2)
    x_np = rng.randn(1, 6, DEPTH).astype(np.float32)
    segment = np.array([[1, 1, 1, 2, 2, 0]], np.int32)
    position = np.array([[0, 1, 2, 0, 1, 0]], np.int32)

    def build():
        x = tf.constant(x_np)
        packed_in = common_attention.add_timing_signal_1d_given_position(x, position)
        bias = common_attention.attention_bias_same_segment(segment, segment)
        packed = self_attention(packed_in, bias, scope="enc")
        first = self_attention(common_attention.add_timing_signal_1d(x[:, :3]), None,
                               scope="enc")
        second = self_attention(common_attention.add_timing_signal_1d(x[:, 3:5]), None,
                                scope="enc")
        return packed, first, second

    packed, first, second = run_graph(build)
    np.testing.assert_allclose(packed[:, :3], first, atol=1e-5)
    np.testing.assert_allclose(packed[:, 3:5], second, atol=1e-5)


@pytest.mark.parametrize("attention_type", ["dot_product", "dot_product_relative"])
def test_cached_step_by_step_self_attention_equals_full_causal(attention_type):
    length = 5
    x_np = np.random.RandomState(3).randn(2, length, DEPTH).astype(np.float32)

    def build():
        x = tf.constant(x_np)
        bias = common_attention.attention_bias_lower_triangle(length)
        full = self_attention(x, bias, attention_type=attention_type)
        cache = {"k": tf.zeros([2, HEADS, 0, DEPTH // HEADS]),
                 "v": tf.zeros([2, HEADS, 0, DEPTH // HEADS])}
        steps = [self_attention(x[:, i:i + 1], bias[:, :, i:i + 1, :i + 1], cache,
                                attention_type=attention_type) for i in range(length)]
        assert cache["k"].shape.as_list() == [2, HEADS, length, DEPTH // HEADS]
        return full, tf.concat(steps, axis=1)

    full, steps = run_graph(build)
    np.testing.assert_allclose(steps, full, atol=1e-5)


def test_cached_self_attention_inside_while_loop_and_fixed_size_cache():
    length = 4
    x_np = np.random.RandomState(4).randn(2, length, DEPTH).astype(np.float32)
    head_depth = DEPTH // HEADS

    def build():
        x = tf.constant(x_np)
        bias = common_attention.attention_bias_lower_triangle(length)
        full = self_attention(x, bias)

        def body(i, cache_k, cache_v, outputs):
            cache = {"k": cache_k, "v": cache_v}
            step_bias = tf.slice(bias, [0, 0, i, 0], [-1, -1, 1, i + 1])
            y = self_attention(tf.slice(x, [0, i, 0], [-1, 1, -1]), step_bias, cache)
            return i + 1, cache["k"], cache["v"], outputs.write(i, y[:, 0])

        empty = tf.zeros([2, HEADS, 0, head_depth])
        _, _, _, outputs = tf.while_loop(
            lambda i, *_: i < length, body,
            [tf.constant(0), empty, empty, tf.TensorArray(tf.float32, size=length)],
            shape_invariants=[tf.TensorShape([]), tf.TensorShape([2, HEADS, None, head_depth]),
                              tf.TensorShape([2, HEADS, None, head_depth]),
                              tf.TensorShape(None)])
        looped = tf.transpose(outputs.stack(), [1, 0, 2])

        # TPU-style fixed-size cache written at decode_loop_step.
        fixed = {"k": tf.zeros([2, HEADS, length, head_depth]),
                 "v": tf.zeros([2, HEADS, length, head_depth])}
        fixed_steps = [self_attention(x[:, i:i + 1], bias[:, :, i:i + 1, :], fixed,
                                      decode_loop_step=i) for i in range(length)]
        return full, looped, tf.concat(fixed_steps, axis=1)

    full, looped, fixed = run_graph(build)
    np.testing.assert_allclose(looped, full, atol=1e-5)
    np.testing.assert_allclose(fixed, full, atol=1e-5)


def test_encoder_decoder_attention_uses_precomputed_cache():
    rng = np.random.RandomState(5)
    query_np = rng.randn(2, 3, DEPTH).astype(np.float32)
    memory_np = rng.randn(2, 4, DEPTH).astype(np.float32)

    def encdec(query, memory, bias, cache=None):
        with v1.variable_scope("encdec", reuse=v1.AUTO_REUSE):
            return common_attention.multihead_attention(
                query, memory, bias, DEPTH, DEPTH, DEPTH, HEADS, 0.0, cache=cache)

    def build():
        query, memory = tf.constant(query_np), tf.constant(memory_np)
        padding = tf.constant([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
        bias = common_attention.attention_bias_ignore_padding(padding)
        full = encdec(query, memory, bias)
        n_vars = len(v1.global_variables())
        with v1.variable_scope("encdec/multihead_attention", reuse=True):
            k = common_attention.compute_attention_component(memory, DEPTH, name="k")
            v = common_attention.compute_attention_component(memory, DEPTH, name="v")
        cache = {"k_encdec": common_attention.split_heads(k, HEADS),
                 "v_encdec": common_attention.split_heads(v, HEADS)}
        steps = [encdec(query[:, i:i + 1], memory, bias, cache) for i in range(3)]
        assert len(v1.global_variables()) == n_vars  # nothing new was created
        return full, tf.concat(steps, axis=1)

    full, steps = run_graph(build)
    np.testing.assert_allclose(steps, full, atol=1e-5)


# ----------------------------------------------------------------- MultiheadAttentionConfig
@pytest.mark.parametrize("fields,match", [
    (dict(num_heads=3), r"total_key_depth \(8\) must be divisible by num_heads \(3\)"),
    (dict(total_value_depth=0), "total_value_depth must be a positive int, got 0"),
    (dict(dropout_rate=1.0), r"dropout_rate must be in \[0, 1\), got 1.0"),
    (dict(attention_type="local"), "attention_type 'local' is not supported"),
    (dict(q_padding="valid"), "q_padding must be one of VALID, SAME, LEFT, got 'valid'"),
    (dict(hard_attention_k=-1), "hard_attention_k must be >= 0"),
    (dict(block_length=0), "block_length must be a positive int, got 0"),
    (dict(gap_size=-1), "gap_size must be an int >= 0, got -1"),
])
def test_attention_config_validates_each_field(fields, match):
    settings = dict(total_key_depth=8, total_value_depth=8, output_depth=8, num_heads=4)
    settings.update(fields)
    with pytest.raises(ValueError, match="^MultiheadAttentionConfig: " + match):
        MultiheadAttentionConfig(**settings)


def test_attention_config_is_frozen_and_from_hparams_reads_the_transformer_settings():
    from t2t.models import transformer
    hparams = transformer.transformer_tiny()
    hparams.attention_dropout_broadcast_dims = "0,1"
    hparams.heads_share_relative_embedding = True
    config = MultiheadAttentionConfig.from_hparams(hparams, attention_type="dot_product")
    assert config.heads_share_relative_embedding and not config.add_relative_to_values
    assert (config.block_length, config.block_width, config.gap_size) == (128, 128, 0)
    assert (config.total_key_depth, config.output_depth, config.num_heads) == (128, 128, 4)
    assert config.dropout_broadcast_dims == (0, 1) and config.key_depth_per_head == 32
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.num_heads = 2


def test_t2t_signature_and_config_form_build_the_same_layer():
    x = np.random.RandomState(0).randn(2, 5, DEPTH).astype(np.float32)
    outputs = []
    for use_config in (False, True):
        with tf.Graph().as_default():
            v1.set_random_seed(7)
            bias = common_attention.attention_bias_lower_triangle(5)
            if use_config:
                config = MultiheadAttentionConfig(DEPTH, DEPTH, DEPTH, 4, dropout_rate=0.0,
                                                  name="att")
                y = common_attention.multihead_attention_with_config(
                    tf.constant(x), None, bias, config)
            else:  # positional, as T2T's own callers pass them
                y = common_attention.multihead_attention(tf.constant(x), None, bias, DEPTH,
                                                         DEPTH, DEPTH, 4, 0.0, name="att")
            names = sorted(var.op.name for var in v1.global_variables())
            with v1.Session() as session:
                session.run(v1.global_variables_initializer())
                outputs.append((names, session.run(y)))
    assert outputs[0][0] == outputs[1][0] == ["att/k/kernel", "att/output_transform/kernel",
                                              "att/q/kernel", "att/v/kernel"]
    np.testing.assert_allclose(outputs[0][1], outputs[1][1], rtol=1e-6)


def test_t2t_signature_is_kept():
    names = list(inspect.signature(common_attention.multihead_attention).parameters)
    assert names[:8] == ["query_antecedent", "memory_antecedent", "bias", "total_key_depth",
                         "total_value_depth", "output_depth", "num_heads", "dropout_rate"]
    assert {"attention_type", "cache", "vars_3d", "layer_collection", "max_area_width",
            "training", "kwargs"} <= set(names)


# ------------------------------------------------- T2T's smaller helpers (timing, biases, ...)
def test_timing_signals_given_positions_fill_one_channel_range_each():
    word = np.tile(np.arange(5), [2, 1])
    sentence = np.array([[0, 0, 1, 1, 1], [0, 1, 2, 2, 2]])
    out = common_attention.add_timing_signals_given_positions(
        tf.zeros([2, 5, 9]), [None, tf.constant(sentence)]).numpy()
    # 9 // (2 * 2) = 2 timescales each: channels 0-3 by word, 4-7 by sentence, 8 untouched.
    np.testing.assert_allclose(out[..., :4], reference_timing(word, 4), atol=1e-5)
    np.testing.assert_allclose(out[..., 4:8], reference_timing(sentence, 4), atol=1e-5)
    assert not out[..., 8].any()
    from_features = common_attention.add_timing_signals_from_features(
        tf.zeros([2, 5, 9]), {"sentence": tf.constant(sentence)}, ",sentence")
    np.testing.assert_allclose(from_features, out, atol=1e-6)


def test_layer_timing_signals():
    x = np.random.RandomState(0).randn(2, 3, 6).astype(np.float32)
    sinusoid = common_attention.add_layer_timing_signal_sinusoid_1d(tf.constant(x), 2, 4)
    np.testing.assert_allclose(sinusoid - x, np.broadcast_to(
        reference_timing([2], 6), (2, 3, 6)), atol=1e-5)

    def build():
        y = common_attention.add_layer_timing_signal_learned_1d(tf.constant(x), 1, 3)
        assert [var.op.name for var in v1.global_variables()] == ["layer_embedding"]
        return y, v1.global_variables()[0]

    y, table = run_graph(build)
    assert table.shape == (3, 1, 1, 6)
    np.testing.assert_allclose(y - x, np.broadcast_to(table[1] * 6 ** 0.5, x.shape), rtol=1e-5)


def test_batch_coordinate_biases_padding_to_length_and_first_dimensions():
    coordinates = tf.constant([[0], [0], [1]])
    np.testing.assert_array_equal(common_attention.attention_bias_coordinates(coordinates),
                                  [[0, 0, -1e9], [0, 0, -1e9], [-1e9, -1e9, 0]])
    np.testing.assert_array_equal(common_attention.attention_bias_future(coordinates),
                                  [[0, 0, -1e9], [0, 0, -1e9], [0, 0, 0]])
    np.testing.assert_array_equal(
        common_attention.padding_to_length(tf.constant([[0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])),
        [2, 1])
    x = tf.reshape(tf.range(24), [2, 3, 4])
    np.testing.assert_array_equal(common_attention.combine_first_two_dimensions(x),
                                  np.arange(24).reshape(6, 4))


def test_parameter_attention_matches_numpy_and_t2t_variable_names():
    x = np.random.RandomState(1).randn(2, 3, 8).astype(np.float32)

    def build():
        y = common_attention.parameter_attention(tf.constant(x), 8, 4, 6, memory_rows=5,
                                                 num_heads=2, dropout_rate=0.0)
        return y, {var.op.name: var for var in v1.global_variables()}

    y, variables = run_graph(build)
    assert sorted(variables) == ["parameter_attention/" + n for n in (
        "k", "output_transform/kernel", "q_transform/kernel", "v")]
    assert variables["parameter_attention/k"].shape == (2, 5, 4)
    assert variables["parameter_attention/v"].shape == (2, 5, 2)
    q = (x @ variables["parameter_attention/q_transform/kernel"]).reshape(2, 3, 2, 4)
    heads = []
    for h in range(2):
        weights = _softmax(q[:, :, h] @ variables["parameter_attention/k"][h].T)
        heads.append(weights @ variables["parameter_attention/v"][h])
    expected = np.concatenate(heads, -1) @ variables["parameter_attention/output_transform/kernel"]
    assert y.shape == (2, 3, 6)
    np.testing.assert_allclose(y, expected, atol=1e-5)


def test_encoder_decoder_attention_loss():
    rng = np.random.RandomState(2)
    expected = rng.randn(2, 3, 4).astype(np.float32)
    logits = [rng.randn(2, 2, 3, 4).astype(np.float32) for _ in range(2)]
    attentions = {"self_attention/dot_product_attention": np.zeros([2, 2, 3, 3], np.float32)}
    for layer, layer_logits in enumerate(logits):
        key = "body/decoder/layer_%d/encdec_attention/multihead_attention/dot_product_attention"
        attentions[key % layer] = _softmax(layer_logits)
        attentions[key % layer + "/logits"] = layer_logits
    attentions = {key: tf.constant(value) for key, value in attentions.items()}
    kl = common_attention.encoder_decoder_attention_loss(expected, attentions,
                                                         loss_multiplier=2.0).numpy()
    p = _softmax(expected)
    q = _softmax(np.mean(logits, axis=(0, 2)))
    np.testing.assert_allclose(kl, 2.0 * np.sum(p * np.log(p / q), -1), rtol=1e-4)
    mse = common_attention.encoder_decoder_attention_loss(expected, attentions, "mse").numpy()
    actual = np.mean([_softmax(l) for l in logits], axis=(0, 2))
    np.testing.assert_allclose(mse, np.mean((p - actual) ** 2), rtol=1e-4)


def test_scaled_dot_product_attention_simple_and_standard_attention_hparams():
    rng = np.random.RandomState(3)
    q, k, v = (rng.randn(2, n, 4).astype(np.float32) for n in (3, 5, 5))
    bias = np.where(rng.rand(2, 3, 5) < 0.3, -1e9, 0.0).astype(np.float32)
    bias[:, :, 0] = 0.0
    out = common_attention.scaled_dot_product_attention_simple(q, k, v, tf.constant(bias))
    expected = _softmax(q @ k.transpose(0, 2, 1) / 2.0 + bias) @ v
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-5)
    from t2t.core.hparam import HParams
    hparams = common_attention.add_standard_attention_hparams(HParams(hidden_size=8))
    assert (hparams.num_heads, hparams.attention_loc_block_length, hparams.filter_size,
            hparams.attention_red_type) == (8, 256, 2048, "conv")
    assert not common_attention.mixed_precision_is_enabled("float32", "float32")
