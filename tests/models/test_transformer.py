"""Transformer: hparams sets, shapes, biases and positions, training and decoding."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.layers import expert_utils
from t2t.layers.modality_type import ModalityType
from t2t.model import model_hparams
from t2t.models import transformer

from t2t_model_testing import (EVAL, PREDICT, TRAIN, batch_features, copy_examples, mean_first,
    mean_last, placeholders, session, train_losses)

_v1 = tf.compat.v1
# Sets whose graphs differ once shrunk (the others change only sizes or the learning rate,
# and their values are checked in test_hparams_sets_have_t2t_values).
HPARAMS_SETS = ["transformer_base_v1", "transformer_base_v2", "transformer_base_v3",
                "transformer_big", "transformer_tiny", "transformer_tpu"]
RUN_SETS = ("transformer_base_v1", "transformer_base_v2", "transformer_tpu")


def shrink(hp, hidden=16, layers=1):
    """Shrink any transformer hparams set to test size."""
    hp.hidden_size, hp.filter_size, hp.num_heads = hidden, 2 * hidden, 2
    hp.num_hidden_layers = layers
    return hp


def run(fetches, feed=None):
    with session() as sess:
        sess.run(_v1.global_variables_initializer())
        return sess.run(fetches, feed)


# ------------------------------------------------------------------ hparams
def test_hparams_sets_have_t2t_values():
    v1 = registry.hparams("transformer_base_v1")
    assert (v1.hidden_size, v1.num_hidden_layers, v1.filter_size, v1.num_heads) == (
        512, 6, 2048, 8)
    assert (v1.batch_size, v1.max_length, v1.layer_postprocess_sequence) == (4096, 256, "dan")
    assert (v1.optimizer_adam_beta1, v1.optimizer_adam_beta2,
            v1.optimizer_adam_epsilon) == (0.9, 0.98, 1e-9)
    assert (v1.learning_rate_decay_scheme, v1.learning_rate,
            v1.learning_rate_warmup_steps) == ("noam", 0.1, 4000)
    assert v1.shared_embedding_and_softmax_weights and v1.symbol_modality_num_shards == 16
    assert (v1.initializer, v1.initializer_gain, v1.label_smoothing) == (
        "uniform_unit_scaling", 1.0, 0.1)
    assert (v1.ffn_layer, v1.pos, v1.self_attention_type, v1.use_pad_remover) == (
        "dense_relu_dense", "timing", "dot_product", True)
    assert v1.attention_dropout == 0.0 and v1.relu_dropout == 0.0

    v2 = registry.hparams("transformer_base_v2")
    assert (v2.layer_preprocess_sequence, v2.layer_postprocess_sequence) == ("n", "da")
    assert (v2.attention_dropout, v2.relu_dropout, v2.learning_rate_warmup_steps) == (
        0.1, 0.1, 8000)

    v3 = registry.hparams("transformer_base_v3")
    assert v3.optimizer_adam_beta2 == 0.997 and v3.learning_rate_constant == 2.0
    assert v3.learning_rate_schedule == "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size"
    assert registry.hparams("transformer_base") == v3

    big = registry.hparams("transformer_big")
    assert (big.hidden_size, big.filter_size, big.num_heads, big.batch_size,
            big.layer_prepostprocess_dropout) == (1024, 4096, 16, 2048, 0.3)
    small, tiny, test = (registry.hparams(n) for n in
                         ("transformer_small", "transformer_tiny", "transformer_test"))
    assert (small.num_hidden_layers, small.hidden_size, small.filter_size,
            small.num_heads) == (2, 256, 1024, 4)
    assert (tiny.num_hidden_layers, tiny.hidden_size, tiny.filter_size,
            tiny.num_heads) == (2, 128, 512, 4)
    assert (test.hidden_size, test.filter_size, test.num_heads) == (16, 8, 2)

    single = registry.hparams("transformer_base_single_gpu")
    assert (single.batch_size, single.learning_rate_constant,
            single.learning_rate_warmup_steps) == (1024, 0.1, 16000)
    big_single = registry.hparams("transformer_big_single_gpu")
    assert (big_single.hidden_size, big_single.layer_prepostprocess_dropout,
            big_single.learning_rate_warmup_steps) == (1024, 0.1, 16000)
    tpu = registry.hparams("transformer_tpu")
    assert (tpu.optimizer, tpu.learning_rate_schedule, tpu.max_length,
            tpu.symbol_modality_num_shards) == ("Adafactor", "rsqrt_decay", 64, 1)
    assert tpu.attention_dropout_broadcast_dims == "0,1"


@pytest.mark.parametrize("hparams_set", HPARAMS_SETS)
def test_every_hparams_set_builds_with_test_sizes(hparams_set):
    feats = batch_features(copy_examples(np.random.RandomState(0), 3, 4))
    with tf.Graph().as_default():
        hp = shrink(registry.hparams(hparams_set))
        p_hp = model_hparams.test_problem_hparams(4, 4)
        model = transformer.Transformer(hp, TRAIN, p_hp)
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        assert logits.shape.as_list() == [3, feats["targets"].shape[1], 1, 1, 4]
        if hparams_set in RUN_SETS:  # distinct layer/dropout settings; the rest only build
            assert np.isfinite(run(losses["training"]))


# ------------------------------------------------------------------ shapes and variants
def test_decoder_only_and_shared_embeddings():
    feats = batch_features(copy_examples(np.random.RandomState(1), 2, 5))
    with tf.Graph().as_default():
        hp = shrink(registry.hparams("transformer_test"))
        model = transformer.Transformer(hp, TRAIN, model_hparams.test_problem_hparams(None, 4))
        logits, _ = model({"targets": tf.constant(feats["targets"])})
        assert logits.shape.as_list() == [2, feats["targets"].shape[1], 1, 1, 4]
        names = [v.name for v in _v1.global_variables()]
        assert not any("encoder" in name for name in names)
        assert not any("encdec_attention" in name for name in names)
    with tf.Graph().as_default():
        model = transformer.Transformer(hp, TRAIN, model_hparams.test_problem_hparams(4, 4))
        model({k: tf.constant(v) for k, v in feats.items()})
        names = [v.name for v in _v1.global_variables()]
        # One matrix for input and target embeddings and the softmax.
        assert any("symbol_modality_4_16/shared/weights_0" in name for name in names)
        assert not any("softmax" in name for name in names)
        emb = [v for v in _v1.global_variables() if "target_space_embedding" in v.name]
        assert emb[0].shape.as_list() == [transformer.NUM_TARGET_SPACES, 16]


def test_transformer_encoder_classifies():
    feats = batch_features(copy_examples(np.random.RandomState(2), 3, 5))
    with tf.Graph().as_default():
        hp = shrink(registry.hparams("transformer_tiny"))
        p_hp = model_hparams.test_problem_hparams(4, 3, target_modality=ModalityType.CLASS_LABEL)
        model = registry.model("transformer_encoder")(hp, TRAIN, p_hp)
        labels = tf.constant([[[[0]]], [[[2]]], [[[1]]]], dtype=tf.int32)
        logits, losses = model({"inputs": tf.constant(feats["inputs"]), "targets": labels})
        assert logits.shape.as_list() == [3, 1, 1, 1, 3]
        assert np.isfinite(run(losses["training"]))


@pytest.mark.parametrize("overrides", [
    {"pos": "emb"}, {"unidirectional_encoder": True}, {"ffn_layer": "conv_relu_conv"},
    {"ffn_layer": "none"}, {"self_attention_type": "dot_product_relative",
                            "max_relative_position": 3}])
def test_variants_build(overrides):
    feats = batch_features(copy_examples(np.random.RandomState(3), 2, 4))
    with tf.Graph().as_default():
        hp = shrink(registry.hparams("transformer_test"))
        for name, value in overrides.items():
            setattr(hp, name, value)
        model = transformer.Transformer(hp, TRAIN, model_hparams.test_problem_hparams(4, 4))
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        assert logits.shape.as_list()[:2] == [2, feats["targets"].shape[1]]
        assert np.isfinite(run(losses["training"]))


def test_unknown_ffn_layer_and_pos_are_rejected():
    hp = shrink(registry.hparams("transformer_test"))
    hp.ffn_layer = "magic"
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="unsupported hparams.ffn_layer 'magic'"):
            transformer.transformer_ffn_layer(tf.zeros([1, 2, 16]), hp)
    hp = shrink(registry.hparams("transformer_test"))
    hp.pos = "spiral"
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="unsupported hparams.pos 'spiral'"):
            transformer.transformer_prepare_decoder(tf.zeros([1, 2, 16]), hp)


# ------------------------------------------------------------------ biases and positions
def test_prepare_encoder_padding_bias_and_timing():
    hp = shrink(registry.hparams("transformer_test"))
    with tf.Graph().as_default():
        emb = tf.constant([[[1.0] * 16, [2.0] * 16, [0.0] * 16]])  # last position padding
        enc_in, self_bias, encdec_bias = transformer.transformer_prepare_encoder(emb, None, hp)
        enc_v, self_v, encdec_v = run([enc_in, self_bias, encdec_bias])
    assert self_v.shape == (1, 1, 1, 3)
    assert self_v[0, 0, 0, 2] <= -1e9 and self_v[0, 0, 0, 0] == 0.0
    np.testing.assert_array_equal(self_v, encdec_v)
    # Timing signal at position 0: sin(0) = 0 in the first half, cos(0) = 1 in the second.
    np.testing.assert_allclose(enc_v[0, 0], [1.0] * 8 + [2.0] * 8, atol=1e-6)


def test_prepare_decoder_packed_rows():
    hp = shrink(registry.hparams("transformer_test"))
    hp.pos = "none"
    with tf.Graph().as_default():
        features = {"targets_segmentation": tf.constant([[1, 1, 2, 2, 0]]),
                    "targets_position": tf.constant([[0, 1, 0, 1, 0]])}
        targets = tf.reshape(tf.range(1.0, 6.0), [1, 5, 1]) * tf.ones([1, 5, 16])
        dec_in, bias = transformer.transformer_prepare_decoder(targets, hp, features)
        dec_v, bias_v = run([dec_in, bias])
    # Each segment starts from zeros; inside a segment the previous target comes in.
    np.testing.assert_allclose(dec_v[0, :, 0], [0.0, 1.0, 0.0, 3.0, 0.0])
    allowed = bias_v[0, 0] > -1.0
    np.testing.assert_array_equal(allowed[:4, :4], [[1, 0, 0, 0], [1, 1, 0, 0],
                                                    [0, 0, 1, 0], [0, 0, 1, 1]])


@pytest.mark.parametrize("pad_mask", [[[0.0, 1.0], [0.0, 0.0]], [[0.0, 0.0, 1.0, 1.0]],
                                      [[1.0, 0.0, 1.0]]])
def test_pad_remover_round_trip(pad_mask):
    mask = np.array(pad_mask, dtype=np.float32)
    x = np.arange(mask.size * 3, dtype=np.float32).reshape([mask.size, 3]) + 1.0
    remover = expert_utils.PadRemover(tf.constant(mask))
    removed = remover.remove(tf.constant(x))
    restored = remover.restore(removed)
    keep = mask.reshape(-1) == 0
    np.testing.assert_array_equal(removed.numpy(), x[keep])
    np.testing.assert_array_equal(restored.numpy(), x * keep[:, None])


def test_fast_decode_hook_is_used_when_defined():
    class WithFastDecode(transformer.Transformer):
        calls = []

        def _fast_decode(self, features, decode_length, beam_size=1, top_beams=1, alpha=1.0,
                         use_tpu=False):
            WithFastDecode.calls.append((decode_length, beam_size))
            return {"outputs": tf.zeros([1, 1], tf.int32), "scores": tf.zeros([1])}

    hp = shrink(registry.hparams("transformer_test"))
    model = WithFastDecode(hp, PREDICT, model_hparams.test_problem_hparams(4, 4))
    with tf.Graph().as_default():
        model.infer({"inputs": tf.zeros([1, 2, 1, 1], tf.int32)}, decode_length=7)
        model.infer({"inputs": tf.zeros([1, 2, 1, 1], tf.int32)}, decode_length=3,
                    beam_size=4)
    assert WithFastDecode.calls == [(7, 1), (3, 4)]


# ------------------------------------------------------------------ training and decoding
@pytest.fixture(scope="module")
def trained_copy_model():
    """Train a 1-layer Transformer on copying binary strings, then decode held-out ones."""
    rng = np.random.RandomState(0)
    batches = [batch_features(copy_examples(rng, 32, 4)) for _ in range(8)]
    test_inputs = batch_features(copy_examples(np.random.RandomState(5), 8, 4))["inputs"]
    hp = shrink(registry.hparams("transformer_test"))
    p_hp = model_hparams.test_problem_hparams(4, 4)
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(1)
        feeds = placeholders()
        _, losses = transformer.Transformer(hp, TRAIN, p_hp)(feeds)
        train_op = _v1.train.AdamOptimizer(0.02).minimize(losses["training"])
        predict_model = transformer.Transformer(hp, PREDICT, p_hp)
        greedy = predict_model.infer({"inputs": feeds["inputs"]}, decode_length=1)
        beam = predict_model.infer({"inputs": feeds["inputs"]}, decode_length=1, beam_size=3,
                                   top_beams=2, alpha=0.6)
        # Fixed-size buffers (TPU mode, run here on CPU) must decode the same beams.
        beam_fixed = predict_model.infer({"inputs": feeds["inputs"]}, decode_length=1,
                                         beam_size=3, top_beams=2, alpha=0.6, use_tpu=True)
        loss_values = []
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            for step in range(150):
                batch = batches[step % len(batches)]
                value, _ = sess.run([losses["training"], train_op],
                                    {feeds[k]: v for k, v in batch.items()})
                loss_values.append(value)
            decoded = sess.run({"greedy": greedy, "beam": beam, "beam_fixed": beam_fixed},
                               {feeds["inputs"]: test_inputs})
    return {"losses": loss_values, "inputs": test_inputs[:, :, 0, 0], **decoded}


def _until_eos(ids):
    ids = [int(i) for i in ids]
    return ids[:ids.index(1) + 1] if 1 in ids else ids


def test_loss_falls_on_copy(trained_copy_model):
    losses = trained_copy_model["losses"]
    assert mean_last(losses) < 0.6 * mean_first(losses)


def test_greedy_decoding_copies_after_training(trained_copy_model):
    inputs, greedy = trained_copy_model["inputs"], trained_copy_model["greedy"]
    assert greedy["outputs"].shape[0] == 8
    assert greedy["outputs"].shape[1] <= inputs.shape[1] + 1
    assert greedy["scores"].shape == (8,)
    copied = sum(_until_eos(out) == _until_eos(inp)
                 for out, inp in zip(greedy["outputs"], inputs))
    assert copied >= 5, (inputs, greedy["outputs"])


def test_beam_decoding_returns_ranked_beams(trained_copy_model):
    inputs, beam = trained_copy_model["inputs"], trained_copy_model["beam"]
    assert beam["outputs"].shape[:2] == (8, 2) and beam["scores"].shape == (8, 2)
    assert np.all(beam["scores"][:, 0] >= beam["scores"][:, 1])
    copied = sum(_until_eos(out[0]) == _until_eos(inp)
                 for out, inp in zip(beam["outputs"], inputs))
    assert copied >= 5, (inputs, beam["outputs"])
    fixed = trained_copy_model["beam_fixed"]
    for row, fixed_row in zip(beam["outputs"], fixed["outputs"]):
        assert [_until_eos(b) for b in row] == [_until_eos(b) for b in fixed_row]
    np.testing.assert_allclose(beam["scores"], fixed["scores"], atol=1e-4)


def test_same_seed_same_losses():
    rng = np.random.RandomState(4)
    batches = [batch_features(copy_examples(rng, 4, 4))]
    hp = shrink(registry.hparams("transformer_test"))
    hp.layer_prepostprocess_dropout = 0.3  # random masks must repeat too
    p_hp = model_hparams.test_problem_hparams(4, 4)
    first = train_losses("transformer", hp, p_hp, batches, steps=3, seed=7)
    second = train_losses("transformer", hp, p_hp, batches, steps=3, seed=7)
    assert first == second
    assert first[2] < first[0]  # the steps did train


def test_eval_mode_is_deterministic_and_dropout_free():
    feats = batch_features(copy_examples(np.random.RandomState(6), 3, 4))
    with tf.Graph().as_default():
        hp = shrink(registry.hparams("transformer_test"))
        hp.layer_prepostprocess_dropout = 0.5
        model = transformer.Transformer(hp, EVAL, model_hparams.test_problem_hparams(4, 4))
        assert model.hparams.layer_prepostprocess_dropout == 0.0
        logits, _ = model({k: tf.constant(v) for k, v in feats.items()})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(logits), sess.run(logits))
