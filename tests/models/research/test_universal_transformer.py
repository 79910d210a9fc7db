"""Universal Transformer: hparams sets, ACT halting, every recurrence type, T2T's variable
names, slow greedy/beam decoding, and training on the native and Estimator backends."""
import os

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import backend_choice
from t2t.core import registry
from t2t.datagen import datagen
from t2t.layers import common_layers
from t2t.layers.modality_type import ModalityType
from t2t.model import model_hparams
from t2t.models.research import universal_transformer
from t2t.models.research import universal_transformer_util as ut_util
from t2t.training import run_config, trainer_lib
from t2t.training.native import experiment as native_experiment

from t2t_model_testing import EVAL, PREDICT, TRAIN, batch_features, copy_examples, session

_v1 = tf.compat.v1
UT_SETS = [name for name in registry.list_hparams() if "universal_transformer" in name]


def tiny(name="universal_transformer_tiny", **values):
    """A registered set at test size: d=16, 2 heads, 2 steps (ACT: at most 3)."""
    hp = registry.hparams(name)
    hp.hidden_size, hp.filter_size, hp.num_heads = 16, 32, 2
    hp.num_rec_steps, hp.act_max_steps = 2, 3
    hp.symbol_modality_num_shards = 1
    for key, value in values.items():
        setattr(hp, key, value)
    return hp


# ------------------------------------------------------------------ hparams
def test_hparams_sets_have_t2t_values():
    base = registry.hparams("universal_transformer_base")
    assert (base.hidden_size, base.filter_size, base.num_heads) == (1024, 4096, 16)
    assert base.layer_prepostprocess_dropout == 0.3
    assert (base.num_rec_steps, base.act_max_steps, base.recurrence_type) == (6, 12, "basic")
    assert base.pos is None and base.daisy_chain_variables is False
    assert (base.act_epsilon, base.act_loss_weight, base.act_halting_bias_init) == (
        0.01, 0.01, 1.0)
    assert (base.add_step_timing_signal, base.step_timing_signal_type) == (True, "learned")
    tiny_set = registry.hparams("universal_transformer_tiny")
    assert (tiny_set.hidden_size, tiny_set.num_rec_steps, tiny_set.act_max_steps) == (128, 8, 4)
    assert registry.hparams("adaptive_universal_transformer_tiny").recurrence_type == "act"
    assert registry.hparams("adaptive_universal_transformer_global_base").act_type == "global"
    tall = registry.hparams("adaptive_universal_transformer_tall_actlossw001")
    assert (tall.act_max_steps, tall.batch_size, tall.act_loss_weight) == (24, 1024, 0.001)
    assert registry.hparams("universal_transformer_big").hidden_size == 2048
    tpu = registry.hparams("universal_transformer_base_tpu")
    assert (tpu.optimizer, tpu.add_step_timing_signal) == ("Adafactor", False)
    assert registry.hparams("universal_transformer_gru_base").add_step_timing_signal is False
    assert registry.hparams("transformer_teeny").filter_size == 128
    assert registry.hparams("universal_transformer_teeny").num_rec_steps == 10
    # Every set names a recurrence and an ACT type the code runs.
    for name in UT_SETS:
        hp = registry.hparams(name)
        assert hp.recurrence_type in ut_util.RECURRENCE_TYPES, name
        assert hp.act_type in ut_util.ACT_TYPES, name
        assert hp.transformer_ffn_type in ("fc", "sepconv"), name
    assert len(UT_SETS) == 41  # T2T's 42 sets so named, but universal_transformer_base_fp16
    hard = registry.hparams("adaptive_universal_transformer_multilayer_hard")
    assert (hard.num_inrecurrence_layers, hard.mix_with_transformer, hard.hard_attention_k,
            hard.self_attention_type) == (2, "before_ut,after_ut", 8, "dot_product_relative_v2")
    assert registry.hparams("universal_transformer_small_dropconnect").dropconnect_dropout == 0.5
    assert registry.hparams("adaptive_universal_transformer_with_sru_base").add_sru is True
    assert {"universal_transformer_base_range",
            "adaptive_universal_transformer_base_range"} <= set(registry.list_ranged_hparams())
    help_text = registry.help_string()
    assert "adaptive_universal_transformer_tiny" in help_text
    assert "universal_transformer_encoder" in help_text


# ------------------------------------------------------------------ ACT
def _halting(act_type, x, max_steps):
    hp = tiny("adaptive_universal_transformer_tiny", act_type=act_type, act_max_steps=max_steps,
              act_halting_bias_init=-1.0, add_position_timing_signal=False,
              add_step_timing_signal=False)
    identity = lambda state: state  # noqa: E731  (the block leaves the state as it is)
    with _v1.variable_scope(act_type):
        output, (ponder, remainders) = ut_util.universal_transformer_act(
            x, hp, identity, identity)
        kernel = _v1.get_variable("sigmoid_activation_for_pondering/dense/kernel")
        bias = _v1.get_variable("sigmoid_activation_for_pondering/dense/bias")
    p = tf.sigmoid(tf.squeeze(tf.tensordot(x, kernel, 1), -1) + bias[0])
    return output, ponder, remainders, p


def test_act_halts_each_position_with_weights_summing_to_one():
    max_steps = 6
    x_value = np.random.RandomState(0).normal(size=[2, 9, 16]).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.constant(x_value)
        with _v1.variable_scope("act", reuse=_v1.AUTO_REUSE):
            basic = _halting("basic", x, max_steps)
            accumulated = _halting("accumulated", x, max_steps)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            (_, ponder, remainders, p), (output, _, _, p_acc) = sess.run([basic, accumulated])
    halted_acc = np.minimum(np.floor(0.99 / p_acc) + 1, max_steps) * p_acc > 0.99
    # The state never changes, so p is the same at every step: a position halts at the
    # first step k with k * p > 1 - act_epsilon (at most max_steps) and gets the remainder.
    steps = np.minimum(np.floor(0.99 / p) + 1, max_steps)
    halted = steps * p > 0.99
    np.testing.assert_array_equal(ponder, steps)
    assert ponder.min() >= 1 and ponder.max() <= max_steps
    assert halted.any() and (~halted).any()
    np.testing.assert_allclose(((ponder - 1) * p + remainders)[halted], 1.0, rtol=1e-5)
    np.testing.assert_array_equal(remainders[~halted], 0.0)
    # "accumulated" sums the weighted states: the weights of a halted position sum to 1.
    weights = np.where(halted_acc, 1.0, max_steps * p_acc)[..., None]
    np.testing.assert_allclose(output, x_value * weights, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------ recurrence types
GATE = ["layer_prepostprocess/layer_norm/layer_norm_bias",
        "layer_prepostprocess/layer_norm/layer_norm_scale", "transform/bias", "transform/kernel"]
STEP_VARIABLES = {
    "basic": ["layer_embedding"],
    "highway": ["layer_embedding"] + GATE,
    "skip": ["layer_embedding"] + GATE,
    "dwa": ["dense/bias", "dense/kernel", "depth_embedding", "layer_embedding"],
    # The cells' input and output are normalised (layer_prepostprocess, _1).
    "gru": ["gru/%s/%s" % (g, v) for g in ("candidate", "reset", "update")
            for v in ("bias", "kernel")] + GATE[:2] + [n.replace("ss/", "ss_1/") for n in GATE[:2]],
    "lstm": ["lstm/%s/%s" % (g, v) for g in ("forget", "input", "input_modulation", "output")
             for v in ("bias", "kernel")] + GATE[:2] + [
                 n.replace("ss/", "ss_1/") for n in GATE[:2]],
}


def test_every_recurrence_type_keeps_shapes_and_t2t_variable_names():
    x_value = np.random.RandomState(1).normal(size=[2, 5, 16]).astype(np.float32)
    padding = np.zeros([2, 5], np.float32)
    padding[1, 3:] = 1.0
    with tf.Graph().as_default():
        bias = tf.constant(-1e9 * padding)[:, None, None, :]
        outputs = {}
        for recurrence in STEP_VARIABLES:
            hp = tiny(recurrence_type=recurrence,
                      add_step_timing_signal=recurrence not in ("gru", "lstm"))
            outputs[recurrence], _ = ut_util.universal_transformer_encoder(
                tf.constant(x_value), bias, hp, name="encoder_" + recurrence)
        names = [v.op.name for v in _v1.global_variables()]
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            values = sess.run(outputs)
    block = ["ffn/conv1/bias", "ffn/conv1/kernel", "ffn/conv2/bias", "ffn/conv2/kernel",
             "ffn/layer_prepostprocess/layer_norm/layer_norm_bias",
             "ffn/layer_prepostprocess/layer_norm/layer_norm_scale"] + [
        "self_attention/" + v for v in (
            "layer_prepostprocess/layer_norm/layer_norm_bias",
            "layer_prepostprocess/layer_norm/layer_norm_scale",
            "multihead_attention/k/kernel", "multihead_attention/output_transform/kernel",
            "multihead_attention/q/kernel", "multihead_attention/v/kernel")]
    for recurrence, step_variables in STEP_VARIABLES.items():
        scope = "encoder_%s/universal_transformer_%s/" % (recurrence, recurrence)
        if recurrence in ("gru", "lstm"):  # the attention feeds the cell; no ffn unit
            expected = [scope + v for v in block if v.startswith("self")]
        else:
            expected = [scope + "rec_layer_0/" + v for v in block]
        expected += [scope + v for v in step_variables] + [
            "encoder_%s/layer_prepostprocess/layer_norm/layer_norm_%s" % (recurrence, v)
            for v in ("bias", "scale")]
        found = [n for n in names if n.startswith("encoder_%s/" % recurrence)]
        assert sorted(found) == sorted(expected), recurrence
        assert values[recurrence].shape == (2, 5, 16)
        assert np.all(np.isfinite(values[recurrence])), recurrence


# ------------------------------------------------------------------ models
def test_models_build_with_t2t_names_and_the_ponder_loss():
    feats = batch_features(copy_examples(np.random.RandomState(2), 3, 5))
    with tf.Graph().as_default():
        model = universal_transformer.UniversalTransformer(
            tiny("adaptive_universal_transformer_tiny"), TRAIN,
            model_hparams.test_problem_hparams(4, 4))
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        classifier = registry.model("universal_transformer_encoder")(
            tiny(), TRAIN, model_hparams.test_problem_hparams(
                4, 3, target_modality=ModalityType.CLASS_LABEL))
        class_logits, class_losses = classifier({
            "inputs": tf.constant(feats["inputs"]),
            "targets": tf.constant([[[[0]]], [[[2]]], [[[1]]]], dtype=tf.int32)})
        names = {v.op.name for v in _v1.global_variables()}
        # A language model (no inputs): the decoder alone, sharing the first build's weights.
        language_model = universal_transformer.UniversalTransformer(
            tiny("adaptive_universal_transformer_tiny"), TRAIN,
            model_hparams.test_problem_hparams(None, 4))
        lm_logits, lm_losses = language_model({"targets": tf.constant(feats["targets"])})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            values = sess.run({"logits": logits, "losses": losses,
                               "class_losses": class_losses, "lm_logits": lm_logits,
                               "lm_losses": lm_losses})
    assert values["logits"].shape == (3, feats["targets"].shape[1], 1, 1, 4)
    assert class_logits.shape.as_list() == [3, 1, 1, 1, 3]
    # 0.01 * (mean(ponder + remainder) of the encoder + of the decoder), each in [1, 3 + 1].
    assert 0.02 <= values["losses"]["act_loss"] <= 0.08
    assert np.isfinite(values["losses"]["training"])
    assert values["lm_logits"].shape == values["logits"].shape
    assert 0.01 <= values["lm_losses"]["act_loss"] <= 0.04  # the decoder's term only
    assert np.isfinite(values["class_losses"]["training"]) and "act_loss" not in class_losses
    prefix = "universal_transformer/body/%s/universal_transformer_act/"
    for name in ["decoder/rec_layer_0/encdec_attention/multihead_attention/q/kernel",
                 "decoder/sigmoid_activation_for_pondering/dense/bias",
                 "encoder/sigmoid_activation_for_pondering/dense/kernel",
                 "encoder/layer_embedding", "encoder/rec_layer_0/ffn/conv1/kernel"]:
        part, rest = name.split("/", 1)
        assert prefix % part + rest in names
    assert "universal_transformer/body/encoder/layer_prepostprocess/layer_norm/" \
           "layer_norm_scale" in names
    assert ("universal_transformer_encoder/body/encoder/universal_transformer_basic/"
            "rec_layer_0/self_attention/multihead_attention/q/kernel") in names


def _build(hp, feats):
    model = universal_transformer.UniversalTransformer(
        hp, TRAIN, model_hparams.test_problem_hparams(4, 4))
    logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
    return logits, losses, {v.op.name for v in _v1.global_variables()}


def test_sepconv_sru_and_multilayer_sets_build_with_t2t_names():
    feats = batch_features(copy_examples(np.random.RandomState(7), 2, 5))
    prefix = "universal_transformer/body/%s/universal_transformer_%s/rec_layer_0/ffn/"
    with tf.Graph().as_default():
        _, _, names = _build(tiny("universal_transformer_sepconv_tiny"), feats)
    for part in ("encoder", "decoder"):
        for conv in ("conv1", "conv2"):
            for kernel in ("depthwise_kernel", "pointwise_kernel"):
                assert (prefix % (part, "basic") + "sepconv_relu_sepconv/%s_single/%s"
                        % (conv, kernel)) in names
    with tf.Graph().as_default():
        logits, losses, names = _build(
            tiny("adaptive_universal_transformer_with_sru_base", num_hidden_layers=1), feats)
        assert any("/universal_transformer_act/sru" in n for n in names), sorted(names)
        assert "act_loss" in losses
    with tf.Graph().as_default():
        logits, losses, names = _build(
            tiny("adaptive_universal_transformer_multilayer_hard", max_relative_position=4,
                 hard_attention_k=2), feats)
        assert any("rec_layer_1/" in n for n in names)  # two layers in the recurrence
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            assert np.isfinite(sess.run(losses["training"]))


def test_sepconv_decoder_is_causal():
    feats = batch_features(copy_examples(np.random.RandomState(8), 2, 5, min_len=5))
    changed = {k: v.copy() for k, v in feats.items()}
    changed["targets"][:, 4] = 5 - changed["targets"][:, 4]  # swap 2 <-> 3 at the last position
    with tf.Graph().as_default():
        _v1.set_random_seed(3)
        model = universal_transformer.UniversalTransformer(
            tiny("universal_transformer_sepconv_tiny"), EVAL,
            model_hparams.test_problem_hparams(4, 4))
        ph = {k: _v1.placeholder(tf.int32, [None, None, 1, 1]) for k in feats}
        logits, _ = model(ph)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            before, after = (sess.run(logits, {ph[k]: f[k] for k in f}) for f in (feats, changed))
    np.testing.assert_allclose(before[:, :5], after[:, :5], rtol=1e-5, atol=1e-5)
    assert not np.allclose(before[:, 5:], after[:, 5:])  # the position after the change sees it


def test_dropconnect_gates_drop_kernel_entries_in_training_only():
    eye = np.eye(8, dtype=np.float32)
    with tf.Graph().as_default():
        _v1.set_random_seed(4)
        dropped = common_layers.dense_dropconnect(tf.constant(eye), 8, dropconnect_dropout=0.5,
                                                  name="gate")
        with _v1.variable_scope("", reuse=True):
            plain = common_layers.dense_dropconnect(tf.constant(eye), 8, name="gate")
            kernel = _v1.get_variable("gate/kernel")
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            dropped, plain, kernel = sess.run([dropped, plain, kernel])
    np.testing.assert_allclose(plain, kernel)  # the identity's rows are the kernel (bias 0)
    kept = dropped != 0
    assert 0.25 < kept.mean() < 0.75
    np.testing.assert_allclose(dropped[kept], 2 * kernel[kept], rtol=1e-6)
    feats = batch_features(copy_examples(np.random.RandomState(9), 2, 4))
    with tf.Graph().as_default():  # the skip gates' dense layers are dense_dropconnect
        hp = tiny("universal_transformer_small_dropconnect", recurrence_type="skip")
        _, _, names = _build(hp, feats)
        assert any(n.endswith("universal_transformer_skip/transform/kernel") for n in names)


def test_slow_greedy_and_beam_decoding():
    inputs = batch_features(copy_examples(np.random.RandomState(5), 3, 3))["inputs"]
    with tf.Graph().as_default():
        _v1.set_random_seed(1)
        model = universal_transformer.UniversalTransformer(
            tiny(), PREDICT, model_hparams.test_problem_hparams(4, 4))
        assert not model._use_fast_decoding()  # no cache: the whole prefix each step
        greedy = model.infer({"inputs": tf.constant(inputs)}, decode_length=2)
        beam = model.infer({"inputs": tf.constant(inputs)}, decode_length=2, beam_size=2,
                           top_beams=2)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            greedy, beam = sess.run([greedy, beam])
    # At most 2 positions past the input; ids within the vocabulary; ranked beams.
    assert greedy["outputs"].shape[0] == 3 and greedy["outputs"].shape[1] <= inputs.shape[1] + 2
    assert beam["outputs"].shape[:2] == (3, 2) and beam["scores"].shape == (3, 2)
    assert np.all(beam["scores"][:, 0] >= beam["scores"][:, 1])
    for outputs in (greedy["outputs"], beam["outputs"]):
        assert outputs.min() >= 0 and outputs.max() <= 3
    assert np.all(np.isfinite(greedy["scores"])) and np.all(greedy["scores"] <= 0)


def test_unsupported_settings_fail_naming_the_fix():
    with pytest.raises(ValueError, match="transformer_ffn_type 'conv'; use 'fc' or 'sepconv'"):
        ut_util.transformer_encoder_ffn_unit(None, tiny(transformer_ffn_type="conv"))
    with pytest.raises(ValueError, match="recurrence_type 'rnn'; use one of basic, highway"):
        ut_util.universal_transformer_layer(None, tiny(recurrence_type="rnn"), None, None)
    with pytest.raises(ValueError, match="act_type 'sometimes'; use one of basic, global"):
        ut_util.universal_transformer_act(None, tiny(act_type="sometimes"), None, None)
    model = universal_transformer.UniversalTransformer(
        tiny(), PREDICT, model_hparams.test_problem_hparams(4, 4))
    with pytest.raises(ValueError, match="no cached .* decoding; pass cache=None"):
        model.decode(None, None, None, None, model.hparams, cache={})


# ------------------------------------------------------------------ backends
PROBLEM = "algorithmic_reverse_binary40_test"
OVERRIDES = ("hidden_size=16,filter_size=32,num_heads=2,num_rec_steps=1,act_max_steps=2,"
             "batch_size=256,symbol_modality_num_shards=1,learning_rate_schedule=constant,"
             "learning_rate_constant=0.05,layer_prepostprocess_dropout=0.0")
STEPS = 40


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("data"))
    datagen.generate_problems([PROBLEM], path, str(tmp_path_factory.mktemp("tmp")),
                              random_seed=1, num_concurrent_processes=1)
    return path


def _train(backend, model_dir, data_dir):
    hparams = trainer_lib.create_hparams("adaptive_universal_transformer_tiny", OVERRIDES,
                                         data_dir=data_dir, problem_name=PROBLEM)
    run_spec = run_config.RunConfigSpec(model_dir=model_dir, save_checkpoints_steps=STEPS,
                                        random_seed=1, save_summary_steps=1,
                                        log_step_count_steps=STEPS)
    spec = trainer_lib.ExperimentSpec("universal_transformer", PROBLEM, data_dir,
                                      train_steps=STEPS, eval_steps=1, schedule="train")
    if backend == "native":
        native_experiment.native_experiment(run_spec, hparams, spec).train()
    else:
        trainer_lib.experiment_from_spec(run_config.run_config_from_spec(run_spec), hparams,
                                         spec).train()
    losses = {}
    for path in tf.io.gfile.glob(os.path.join(model_dir, "events.out.tfevents.*")):
        for event in _v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == "loss":
                    losses[event.step] = (value.simple_value if value.HasField("simple_value")
                                          else float(tf.make_ndarray(value.tensor)))
    return [losses[step] for step in sorted(losses)], dict(tf.train.list_variables(model_dir))


BACKENDS = ["native"] + (["estimator"] if backend_choice.estimator_available() else [])


@pytest.fixture(scope="module")
def runs(data_dir, tmp_path_factory):
    return {backend: _train(backend, str(tmp_path_factory.mktemp(backend)), data_dir)
            for backend in BACKENDS}


@pytest.mark.parametrize("backend", BACKENDS)
def test_backends_train_act_with_falling_loss(runs, backend):
    losses, variables = runs[backend]
    # Towards the symbols' frequencies (from about ln 4, uniform over PAD, EOS, 0, 1).
    assert len(losses) >= STEPS - 1, losses
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) - 0.05, losses
    assert ("universal_transformer/body/encoder/universal_transformer_act/"
            "sigmoid_activation_for_pondering/dense/kernel") in variables
    # Both backends write the same checkpoint: names, shapes, optimizer slots.
    assert variables == runs[BACKENDS[0]][1]
