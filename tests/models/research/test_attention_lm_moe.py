"""AttentionLmMoe: every hparams set at test size (loss and the experts' load loss), T2T's
variable names, the expert attention's masking, learning and slow greedy decoding."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.layers import expert_attention
from t2t.layers import expert_utils
from t2t.model import model_hparams
from t2t.models.research import attention_lm_moe

from t2t_model_testing import EOS, PREDICT, TRAIN, batch_features, copy_examples, pad_ids, \
    placeholders, session

_v1 = tf.compat.v1
SETS = ["attention_lm_moe_base", "attention_lm_moe_base_long_seq", "attention_lm_moe_base_ae",
        "attention_lm_moe_base_local", "attention_lm_moe_base_hybrid", "attention_lm_hybrid_v2",
        "attention_lm_16k", "attention_lm_12k", "attention_lm_11k", "attention_lm_ae_extended",
        "attention_lm_moe_base_memeff", "attention_lm_moe_small", "attention_lm_moe_tiny",
        "attention_lm_attention_moe_tiny", "attention_lm_no_moe_small", "attention_lm_moe_large",
        "attention_lm_moe_large_diet", "attention_lm_moe_memory_efficient",
        "attention_lm_moe_32b_diet", "attention_lm_moe_24b_diet", "attention_lm_moe_translation",
        "attention_lm_moe_unscramble_base"]
EXPERT_SETS = {"attention_lm_moe_base_ae", "attention_lm_moe_base_hybrid",
               "attention_lm_hybrid_v2", "attention_lm_16k", "attention_lm_12k",
               "attention_lm_11k", "attention_lm_ae_extended", "attention_lm_attention_moe_tiny"}


def tiny(name="attention_lm_attention_moe_tiny", layers=2, experts=4, **values):
    """A registered set at test size: d=32, filter 64, 4 heads, `experts` experts with
    16-dim keys/values, blocks of 4, no dropout; attention_layers cut to `layers`
    (ending in an expert layer "e" when the set has one)."""
    hp = registry.hparams(name)
    hp.hidden_size, hp.filter_size, hp.num_heads, hp.num_hidden_layers = 32, 64, 4, layers
    cut = hp.attention_layers[:layers]
    if "e" in hp.attention_layers and "e" not in cut:
        cut = cut[:-1] + "e"
    hp.attention_layers = cut
    hp.attention_num_experts = max(experts, hp.attention_moe_k)
    hp.attention_kq_size = hp.attention_v_size = 16
    hp.attention_exp_inputdim, hp.attention_block_length = 8, 4
    hp.layer_prepostprocess_dropout = 0.0
    for key, value in values.items():
        setattr(hp, key, value)
    return hp


def test_hparams_sets_have_t2t_values():
    assert set(SETS) <= set(registry.list_hparams())
    assert "attention_lm_moe" in registry.list_models()
    base = registry.hparams("attention_lm_moe_base")
    assert (base.hidden_size, base.filter_size, base.num_heads, base.num_hidden_layers,
            base.batch_size, base.max_length, base.learning_rate) == (
        1024, 2048, 8, 4, 8192, 256, 0.1)
    assert (base.attention_type, base.attention_moe_k, base.attention_num_experts,
            base.attention_kq_size, base.attention_v_size, base.attention_load_balance,
            base.moe_num_experts, base.moe_layers, base.use_inputs) == (
        "multihead", 2, 16, 128, 256, 2e-2, 32, "2", False)
    hybrid = registry.hparams("attention_lm_hybrid_v2")
    assert (hybrid.attention_layers, hybrid.attention_moe_k, hybrid.attention_local,
            hybrid.max_length, hybrid.use_sepconv, hybrid.layer_preprocess_sequence) == (
        "hheh", 6, True, 0, True, "n")
    assert registry.hparams("attention_lm_16k").batch_size == 16384
    assert registry.hparams("attention_lm_ae_extended").attention_exp_factor == 4
    memeff = registry.hparams("attention_lm_moe_memory_efficient")
    assert (memeff.attention_type, memeff.memory_efficient_ffn, memeff.num_hidden_layers,
            memeff.moe_num_experts, memeff.factored_logits) == (
        "memory_efficient", True, 5, 128, False)
    diet = registry.hparams("attention_lm_moe_24b_diet")
    assert (diet.moe_hidden_sizes, diet.moe_num_experts, diet.batch_size,
            diet.diet_experts) == ("12288", 1024, 4096, True)
    translation = registry.hparams("attention_lm_moe_translation")
    assert (translation.prepend_mode, translation.num_hidden_layers,
            translation.label_smoothing) == ("prepend_inputs_masked_attention", 6, 0.1)
    unscramble = registry.hparams("attention_lm_moe_unscramble_base")
    assert (unscramble.use_inputs, unscramble.max_length, unscramble.batch_size) == (
        True, 1024, 5000)


@pytest.mark.parametrize("name", SETS)
def test_every_hparams_set_builds_with_finite_loss_and_load_loss(name):
    hp = tiny(name, layers=1, experts=2)
    rng = np.random.RandomState(0)
    examples = copy_examples(rng, 3, 4)
    if hp.use_inputs:  # position by position: inputs and targets of one length
        p_hp = model_hparams.test_problem_hparams(5, 5)
        feats = batch_features([(row, row) for row, _ in examples], 5, 5)
    elif hp.prepend_mode != "none":
        p_hp = model_hparams.test_problem_hparams(5, 5)
        feats = batch_features([(a, a + [0] + b) for a, b in examples])
    else:
        p_hp = model_hparams.test_problem_hparams(None, 5)
        feats = {"targets": batch_features(examples)["targets"]}
    with tf.Graph().as_default():
        logits, losses = attention_lm_moe.AttentionLmMoe(hp, TRAIN, p_hp)(
            {k: tf.constant(v) for k, v in feats.items()})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            values = sess.run({"logits": logits, "loss": losses["training"],
                               "extra": losses["extra"]})
    assert values["logits"].shape == feats["targets"].shape + (5,)
    assert np.isfinite(values["loss"]) and values["loss"] > 0
    assert np.isfinite(values["extra"])
    # Only the expert attention layers have a load-balancing loss (T2T 1.15.7 never
    # makes the feed-forward an MoE).
    assert (values["extra"] > 0) == (name in EXPERT_SETS), values["extra"]


def _variable_names(hp):
    feats = {"targets": batch_features(copy_examples(np.random.RandomState(1), 2, 3))[
        "targets"]}
    with tf.Graph().as_default():
        attention_lm_moe.AttentionLmMoe(hp, TRAIN, model_hparams.test_problem_hparams(None, 6))(
            {k: tf.constant(v) for k, v in feats.items()})
        return {v.op.name: v.shape.as_list() for v in _v1.global_variables()}


def test_variables_have_t2t_names_and_shapes():
    names = _variable_names(tiny(layers=1, experts=2))
    prefix = "attention_lm_moe/body/layer_0/"
    moe = prefix + "attention_local_experts/local_expert_attention/local_moe/"
    expected = [moe + "noisy_top_k_gating/w_gate", moe + "noisy_top_k_gating/w_noise"]
    expected += [moe + "parallel_%d/multihead_attention/%s/kernel" % (e, t)
                 for e in (0, 1) for t in ("q", "k", "v", "output_transform")]
    expected += [prefix + "ffn/conv_hidden_relu/conv%d_single/%s" % (c, v)
                 for c in (1, 2) for v in ("kernel", "bias")]
    expected += [prefix + "%s/layer_postprocess/layer_norm/layer_norm_%s" % (block, v)
                 for block in ("attention_local_experts", "ffn") for v in ("scale", "bias")]
    expected += ["attention_lm_moe/symbol_modality_6_32/target_emb/weights_0",
                 "attention_lm_moe/symbol_modality_6_32/softmax/weights_0"]
    assert sorted(names) == sorted(expected)
    assert names[moe + "noisy_top_k_gating/w_gate"] == [32, 2]
    assert names[moe + "parallel_1/multihead_attention/q/kernel"] == [32, 16]
    # Memory-efficient then multihead ("mh"), pre-norm: T2T's wqkv/wo and ffn2 variables.
    names = _variable_names(tiny("attention_lm_moe_base_memeff", attention_layers="mh"))
    mem = "attention_lm_moe/body/layer_0/attention_memory_efficient/decoder_self_attention/"
    assert names[mem + "wqkv"] == [4, 1, 32, 24] and names[mem + "wo"] == [4, 1, 8, 32]
    assert mem + "layer_norm_scale" in names
    assert names["attention_lm_moe/body/layer_1/ffn/ffn2/f1"] == [1, 32, 64]
    assert ("attention_lm_moe/body/layer_1/attention_multihead/decoder_self_attention/q/kernel"
            in names)
    assert "attention_lm_moe/body/layer_prepostprocess/layer_norm/layer_norm_bias" in names


def test_expert_attention_keeps_examples_apart_and_masks_the_future():
    """Changing the last position of example 1 changes no other position's output."""
    rng = np.random.RandomState(2)
    x = rng.normal(size=[2, 5, 8]).astype(np.float32)
    x2 = x.copy()
    x2[1, 4] += 3.0
    with tf.Graph().as_default():
        inp = _v1.placeholder(tf.float32, [2, 5, 8])
        bc = expert_attention.coordinate_tensor(tf.shape(inp)[:-1], axis=0)
        flat = tf.reshape(inp, [1, 10, 8])
        y, loss = expert_attention.local_expert_attention(
            flat, k=2, loss_coef=1e-2, attention_num_experts=3, train=False,
            batch_coordinate=tf.reshape(bc, [1, 10, 1]), attention_kq_size=8,
            attention_v_size=8)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            out1, out2, coords, value = sess.run([y, y, bc, loss], {inp: x})[0], \
                sess.run(y, {inp: x2}), sess.run(bc, {inp: x}), sess.run(loss, {inp: x})
    np.testing.assert_array_equal(coords, [[0] * 5, [1] * 5])
    out1, out2 = out1.reshape(2, 5, 8), out2.reshape(2, 5, 8)
    np.testing.assert_allclose(out1[0], out2[0], atol=1e-5)
    np.testing.assert_allclose(out1[1, :4], out2[1, :4], atol=1e-5)
    assert np.isfinite(value) and value >= 0


def test_batch_coordinates_and_pad_removal():
    with tf.Graph().as_default():
        expanded = attention_lm_moe.expand_batch_coordinates(tf.constant([[[0], [1]]]), 3)
        x = tf.constant(np.arange(12, dtype=np.float32).reshape([2, 3, 2]))
        pad = tf.constant([[0.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
        remover = expert_utils.PadRemover(pad)
        removed = attention_lm_moe.remove_pad(x, remover, TRAIN)
        restored = attention_lm_moe.restore_pad(removed, x, remover, TRAIN)
        kept = attention_lm_moe.remove_pad(x, remover, PREDICT)
        with session() as sess:
            values = sess.run([expanded, removed, restored, kept])
    np.testing.assert_array_equal(values[0][0, :, 0], [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(values[1][0], [[0, 1], [2, 3], [6, 7]])
    expected = np.arange(12, dtype=np.float32).reshape([2, 3, 2])
    expected[0, 2] = expected[1, 1:] = 0.0
    np.testing.assert_array_equal(values[2], expected)
    assert values[3].shape == (1, 6, 2)  # PREDICT keeps every position


@pytest.mark.parametrize("values, message", [
    ({"attention_layers": "hs"}, "attention type 'sparse_multihead' needs"),
    ({"attention_type": "multihead_reduced"}, "multihead_self_attention_reduced"),
    ({"attention_type": "memory_efficient"}, "set layer_preprocess_sequence='n'"),
    ({"attention_layers": "hx"}, "unknown attention_layers symbol"),
    ({"batch_size": 8, "max_length": 16}, "batch_size 8 < max_length 16"),
])
def test_unsupported_settings_name_themselves(values, message):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=message):
        attention_lm_moe.AttentionLmMoe(tiny(**values), TRAIN,
                                        model_hparams.test_problem_hparams(None, 5))(
            {"targets": tf.zeros([1, 3, 1, 1], tf.int32)})


def counting(rng, num):
    """Rows s, s+1, s+2, s+3, EOS (s in 2..5)."""
    return [list(range(start, start + 4)) + [EOS] for start in rng.randint(2, 6, size=num)]


def test_two_layer_expert_attention_lm_learns_counting_and_decodes_it():
    rng = np.random.RandomState(3)
    batches = [{"targets": pad_ids(counting(rng, 32))} for _ in range(4)]
    prompts = np.array([[2], [3], [4]], dtype=np.int32)
    hp, p_hp = tiny(layers=2, experts=4), model_hparams.test_problem_hparams(None, 10)
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(1)
        feeds = placeholders(["targets"], batches)
        _, losses = attention_lm_moe.AttentionLmMoe(hp, TRAIN, p_hp)(feeds)
        total = losses["training"] + losses["extra"]
        train_op = _v1.train.AdamOptimizer(0.01).minimize(total)
        greedy = attention_lm_moe.AttentionLmMoe(hp, PREDICT, p_hp).infer(
            {"inputs": tf.constant(prompts)}, decode_length=4)
        values = []
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            for step in range(100):
                batch = batches[step % len(batches)]
                value, _ = sess.run([losses["training"], train_op],
                                    {feeds["targets"]: batch["targets"]})
                values.append(value)
            decoded = sess.run(greedy)
    assert np.mean(values[-5:]) < 0.5 * np.mean(values[:5]), values
    expected = np.concatenate([prompts + [[1, 2, 3]], [[EOS]] * 3], axis=1)
    np.testing.assert_array_equal(decoded["outputs"], expected)
