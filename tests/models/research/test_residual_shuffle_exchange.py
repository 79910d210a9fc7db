"""Residual Shuffle-Exchange network: T2T's (Keras-derived) variable names, the Residual
Switch Unit and its layer normalisation, the hparams set, learning to reverse binary
strings, and training on the Estimator backend (the native one where TF has none)."""
import numpy as np
import tensorflow as tf

from t2t.core import backend_choice
from t2t.core import registry
from t2t.datagen import datagen
from t2t.model import model_hparams
from t2t.models.research import residual_shuffle_exchange as rse
from t2t.training import run_config, trainer_lib
from t2t.training.native import experiment as native_experiment

from t2t_model_testing import PREDICT, TRAIN, session

_v1 = tf.compat.v1


def tiny(**values):
    hp = registry.hparams("shuffle_network_baseline")
    hp.hidden_size, hp.num_hidden_layers, hp.dropout = 8, 1, 0.0
    for key, value in values.items():
        setattr(hp, key, value)
    return hp


def reversal_batch(rng, batch=32, length=8):
    inputs = rng.randint(2, 4, size=[batch, length, 1, 1]).astype(np.int32)
    return {"inputs": inputs, "targets": inputs[:, ::-1].copy()}


def rsu_variables(prefix, index, d=8):
    rsu = "rsu_%d" % index if index else "rsu"
    norm = "layer_normalization_%d" % index if index else "layer_normalization"
    return {"%s/%s/residual" % (rsu, prefix): [2 * d],
            "%s/%s/cand1/kernel" % (rsu, prefix): [2 * d, 4 * d],
            "%s/%s/bias" % (rsu, norm): [1, 1, 4 * d],
            "%s/%s/cand2/kernel" % (rsu, prefix): [4 * d, 2 * d],
            "%s/%s/cand2/bias" % (rsu, prefix): [2 * d]}


def test_tiny_model_has_t2ts_variable_names():
    rng = np.random.RandomState(0)
    inputs = rng.randint(2, 4, size=[3, 6, 1, 1]).astype(np.int32)
    with tf.Graph().as_default():
        model = rse.ResidualShuffleExchange(tiny(num_hidden_layers=2), TRAIN,
                                            model_hparams.test_problem_hparams(4, 4))
        logits, losses = model({"inputs": tf.constant(inputs), "targets": tf.constant(inputs)})
        variables = {v.op.name: v for v in _v1.global_variables()}
        names = {name: v.shape.as_list() for name, v in variables.items()}
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            logits, loss, residual = sess.run([
                logits, losses["training"], variables["residual_shuffle_exchange/body/"
                                                      "benes_block_0/scan/while/forward/rsu/"
                                                      "switch/residual"]])
    expected = {"residual_shuffle_exchange/symbol_modality_4_8/%s/weights_0" % part: [4, 8]
                for part in ("input_emb", "target_emb", "softmax")}
    body = "residual_shuffle_exchange/body/"
    for k in (0, 1):
        for scope, prefix, index in (("scan/while/forward", "switch", 2 * k),
                                     ("scan_1/while/reverse", "reverse_switch", 2 * k + 1)):
            for name, shape in rsu_variables(prefix, index).items():
                expected["%sbenes_block_%d/%s/%s" % (body, k, scope, name)] = shape
    for name, shape in rsu_variables("last_layer", 4).items():
        expected[body + name] = shape
    assert names == expected
    np.testing.assert_allclose(residual, np.log(9.0) * np.ones(16), rtol=1e-6)  # sigmoid 0.9
    assert logits.shape == (3, 8, 1, 1, 4)
    assert np.isfinite(loss) and 0.5 < loss < 3.0


def test_layer_normalization_centres_and_scales_over_axis_1_without_gain():
    x = np.random.RandomState(1).normal(size=[2, 4, 3]).astype(np.float32)
    with tf.Graph().as_default():
        y = rse.layer_normalization(tf.constant(x))
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            y = sess.run(y)
    centred = x - x.mean(axis=1, keepdims=True)
    expected = centred / np.sqrt((centred ** 2).mean(axis=1, keepdims=True) + 1e-10)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)
    assert rse.keras_name("rsu", 0) == "rsu" and rse.keras_name("rsu", 3) == "rsu_3"


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def test_rsu_is_a_residual_gelu_unit_on_position_pairs():
    x = np.random.RandomState(2).normal(size=[2, 8, 4]).astype(np.float32)
    with tf.Graph().as_default():
        y = rse.RSU("switch", 0.0, PREDICT, index=2)(tf.constant(x))
        weights = {v.op.name.split("/", 1)[1]: v for v in _v1.global_variables()}
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            y, w = sess.run([y, weights])
    assert sorted(w) == sorted(n.split("/", 1)[1] for n in rsu_variables("switch", 2, d=4))
    pairs = x.reshape([2, 4, 8])  # positions 2i and 2i + 1 side by side
    hidden = pairs @ w["switch/cand1/kernel"]
    centred = hidden - hidden.mean(axis=1, keepdims=True) + w["layer_normalization_2/bias"]
    hidden = centred / np.sqrt((centred ** 2).mean(axis=1, keepdims=True) + 1e-10)
    candidate = _gelu(hidden) @ w["switch/cand2/kernel"] + w["switch/cand2/bias"]
    expected = 0.9 * pairs + np.sqrt(1 - 0.81) * 0.25 * candidate  # sigmoid(log 9) = 0.9
    np.testing.assert_allclose(y, expected.reshape([2, 8, 4]), rtol=1e-4, atol=1e-5)


def test_hparams_set_builds_with_dropout_and_a_finite_loss():
    batch = reversal_batch(np.random.RandomState(3), batch=2, length=4)
    with tf.Graph().as_default():
        model = registry.model("residual_shuffle_exchange")(
            tiny(dropout=0.1), TRAIN, model_hparams.test_problem_hparams(4, 4))
        _, losses = model({k: tf.constant(v) for k, v in batch.items()})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            assert np.isfinite(sess.run(losses["training"]))


def test_learns_to_reverse_binary_strings_and_infers_them():
    rng = np.random.RandomState(4)
    hp = tiny(hidden_size=16)
    with tf.Graph().as_default():
        _v1.set_random_seed(1)
        problem_hp = model_hparams.test_problem_hparams(4, 4)
        feeds = {k: _v1.placeholder(tf.int32, [None, 8, 1, 1]) for k in ("inputs", "targets")}
        _, losses = rse.ResidualShuffleExchange(hp, TRAIN, problem_hp)(feeds)
        train_op = _v1.train.AdamOptimizer(0.01).minimize(losses["training"])
        predicted = rse.ResidualShuffleExchange(hp, PREDICT, problem_hp).infer(
            {"inputs": feeds["inputs"], "infer_targets": feeds["targets"]})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            values = []
            for _ in range(100):
                batch = reversal_batch(rng)
                loss, _ = sess.run([losses["training"], train_op],
                                   {feeds[k]: v for k, v in batch.items()})
                values.append(loss)
            test = reversal_batch(rng, batch=16)
            outputs = sess.run(predicted["outputs"], {feeds[k]: v for k, v in test.items()})
    assert np.mean(values[-10:]) < 0.2 * np.mean(values[:10]), values[::10]
    assert outputs.shape == (16, 8)
    assert np.mean(outputs == test["targets"][:, :, 0, 0]) > 0.98


PROBLEM = "algorithmic_reverse_binary40_test"
OVERRIDES = ("hidden_size=8,num_hidden_layers=1,batch_size=128,dropout=0.0,"
             "learning_rate_schedule=constant,learning_rate_constant=0.01")
STEPS = 3


def test_backend_trains_and_checkpoints_t2t_names(tmp_path):
    """The Estimator backend (test_shuffle_network runs the native one); native without."""
    data_dir, model_dir = str(tmp_path / "data"), str(tmp_path / "model")
    datagen.generate_problems([PROBLEM], data_dir, str(tmp_path / "tmp"), random_seed=1,
                              num_concurrent_processes=1)
    hparams = trainer_lib.create_hparams("shuffle_network_baseline", OVERRIDES,
                                         data_dir=data_dir, problem_name=PROBLEM)
    run_spec = run_config.RunConfigSpec(model_dir=model_dir, save_checkpoints_steps=STEPS,
                                        random_seed=1, log_step_count_steps=STEPS)
    spec = trainer_lib.ExperimentSpec("residual_shuffle_exchange", PROBLEM, data_dir,
                                      train_steps=STEPS, eval_steps=1, schedule="train")
    if backend_choice.estimator_available():
        trainer_lib.experiment_from_spec(run_config.run_config_from_spec(run_spec), hparams,
                                         spec).train()
    else:
        native_experiment.native_experiment(run_spec, hparams, spec).train()
    variables = dict(tf.train.list_variables(model_dir))
    assert variables["residual_shuffle_exchange/body/benes_block_0/scan_1/while/reverse/"
                     "rsu_1/reverse_switch/cand1/kernel"] == [16, 32]
    assert variables["residual_shuffle_exchange/body/rsu_2/layer_normalization_2/bias"] == [
        1, 1, 32]
    assert tf.train.load_checkpoint(model_dir).get_tensor("global_step") == STEPS
