"""Shuffle-Exchange network: the shuffle permutations, T2T's variable names, padding, the
hparams set, learning to reverse binary strings, and training on the native backend."""
import os

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t.core import registry
from t2t.datagen import datagen
from t2t.model import model_hparams
from t2t.models.research import shuffle_network as sn
from t2t.training import run_config, trainer_lib
from t2t.training.native import experiment as native_experiment

from t2t_model_testing import PREDICT, TRAIN, session

_v1 = tf.compat.v1


def tiny(name="shuffle_network_baseline", **values):
    hp = registry.hparams(name)
    hp.hidden_size, hp.num_hidden_layers, hp.dropout = 8, 1, 0.0
    for key, value in values.items():
        setattr(hp, key, value)
    return hp


def reversal_batch(rng, batch=32, length=8):
    """Binary strings (symbols 2, 3) of `length` and their reversals, [B, L, 1, 1]."""
    inputs = rng.randint(2, 4, size=[batch, length, 1, 1]).astype(np.int32)
    return {"inputs": inputs, "targets": inputs[:, ::-1].copy()}


# ------------------------------------------------------------------ permutations
@settings(max_examples=7, deadline=None)
@given(st.integers(1, 7))
def test_shuffle_and_reverse_shuffle_are_inverse_permutations(bits):
    length = 2 ** bits
    with tf.Graph().as_default():
        positions = tf.range(length)[None]
        shuffled = sn.shuffle_layer(positions)
        with session() as sess:
            forward, there_and_back, back_and_there = sess.run([
                shuffled, sn.reverse_shuffle_layer(shuffled),
                sn.shuffle_layer(sn.reverse_shuffle_layer(positions))])
    assert sorted(forward[0]) == list(range(length))  # a permutation
    np.testing.assert_array_equal(there_and_back[0], np.arange(length))
    np.testing.assert_array_equal(back_and_there[0], np.arange(length))


def test_shuffle_is_t2ts_bit_rotation_computed_by_hand():
    # Length 8, 3 bits: output i takes input rol(i) (shuffle) or ror(i) (reverse);
    # e.g. rol(1) = 001 -> 010 = 2, rol(4) = 100 -> 001 = 1; ror(1) = 001 -> 100 = 4.
    x = np.array([[10, 11, 12, 13, 14, 15, 16, 17]])
    with tf.Graph().as_default(), session() as sess:
        shuffled, reversed_, rol6, ror6, rol_by2 = sess.run([
            sn.shuffle_layer(tf.constant(x)), sn.reverse_shuffle_layer(tf.constant(x)),
            sn.rol(6, 3), sn.ror(6, 3), sn.rol(tf.range(8), 3, 2)])
    np.testing.assert_array_equal(shuffled[0], [10, 12, 14, 16, 11, 13, 15, 17])
    np.testing.assert_array_equal(reversed_[0], [10, 14, 11, 15, 12, 16, 13, 17])
    assert (rol6, ror6) == (5, 3)  # 110 -> 101, 110 -> 011
    np.testing.assert_array_equal(rol_by2, [0, 4, 1, 5, 2, 6, 3, 7])


def test_swap_halves_exchanges_the_first_half_of_features_between_neighbours():
    x = np.arange(2 * 4 * 4, dtype=np.float32).reshape([2, 4, 4])
    with tf.Graph().as_default():
        switch = sn.SwitchLayer("switch", 0.0, TRAIN)
        switch.length, switch.num_units = 4, 4
        with session() as sess:
            swapped = sess.run(switch.swap_halves(tf.constant(x)))
    np.testing.assert_array_equal(swapped[:, :, 2:], x[:, :, 2:])
    np.testing.assert_array_equal(swapped[:, :, :2], x[:, [1, 0, 3, 2], :2])


# ------------------------------------------------------------------ model
SWITCH = ["residual_scale"] + ["%s/%s/Cv%s" % (part, map_name, v)
                               for part, map_name in (("reset1", "c"), ("reset2", "c"),
                                                      ("cand1", "c"), ("cand2", "c"))
                               for v in ("B", "K")] + ["g/CvB", "g/CvK"]


def test_tiny_model_has_t2ts_variable_names_and_pads_to_a_power_of_two():
    rng = np.random.RandomState(0)
    inputs = rng.randint(2, 4, size=[3, 5, 1, 1]).astype(np.int32)
    targets = rng.randint(2, 4, size=[3, 3, 1, 1]).astype(np.int32)
    with tf.Graph().as_default():
        model = sn.ShuffleNetwork(tiny(num_hidden_layers=2), TRAIN,
                                  model_hparams.test_problem_hparams(4, 4))
        logits, losses = model({"inputs": tf.constant(inputs), "targets": tf.constant(targets)})
        names = {v.op.name: v.shape.as_list() for v in _v1.global_variables()}
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            logits, loss = sess.run([logits, losses["training"]])
    expected = {"shuffle_network/symbol_modality_4_8/%s/weights_0" % part: [4, 8]
                for part in ("input_emb", "target_emb", "softmax")}
    for scope in (["benes_block_%d/forward/switch" % k for k in (0, 1)] +
                  ["benes_block_%d/reverse/reverse_switch" % k for k in (0, 1)] +
                  ["last_layer"]):
        for var in SWITCH:
            width = 8 if var in ("residual_scale", "cand1/c/CvB", "cand2/c/CvB") else 16
            shape = {"CvK": [16, 8 if "cand" in var else 16]}.get(var[-3:], [width])
            expected["shuffle_network/body/%s/%s" % (scope, var)] = shape
    assert names == expected
    assert logits.shape == (3, 8, 1, 1, 4)  # max(5, 3) padded to 8
    assert np.isfinite(loss) and 0.5 < loss < 3.0  # about ln 4 at initialisation


def test_hparams_set_builds_with_dropout_and_a_finite_loss():
    hp = registry.hparams("shuffle_network_baseline")
    assert (hp.hidden_size, hp.num_hidden_layers, hp.max_length) == (384, 2, 256)
    assert (hp.optimizer, hp.learning_rate_decay_scheme, hp.dropout) == ("adam", "noam", 0.1)
    assert hp.force_max_length is False and hp.optimizer_adam_epsilon == 1e-5
    batch = reversal_batch(np.random.RandomState(1), batch=2, length=4)
    with tf.Graph().as_default():
        model = sn.ShuffleNetwork(tiny(dropout=0.1), TRAIN,
                                  model_hparams.test_problem_hparams(4, 4))
        _, losses = model({k: tf.constant(v) for k, v in batch.items()})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            assert np.isfinite(sess.run(losses["training"]))


def test_pad_length_is_the_next_power_of_two_and_at_least_two():
    model = sn.ShuffleNetwork(tiny(), TRAIN, model_hparams.test_problem_hparams(4, 4))
    with tf.Graph().as_default(), session() as sess:
        lengths = {(1, 1): 2, (2, 1): 2, (3, 2): 4, (8, 8): 8, (8, 9): 16, (64, 33): 64}
        for (inputs, targets), padded in lengths.items():
            features = {"inputs": tf.zeros([1, inputs, 1, 1]),
                        "targets": tf.zeros([1, targets, 1, 1])}
            assert sess.run(model.max_pad_length(features)) == padded, (inputs, targets)
    assert sn.ShuffleNetwork(tiny(force_max_length=True, max_length=32), TRAIN).max_pad_length(
        {"inputs": None, "targets": None}) == 32


def test_predict_outputs_without_targets_pad_to_max_length():
    inputs = np.full([2, 5, 1, 1], 2, np.int32)
    with tf.Graph().as_default():
        model = sn.ShuffleNetwork(tiny(max_length=8), PREDICT,
                                  model_hparams.test_problem_hparams(4, 4))
        predictions, exports = model.predict_outputs({"inputs": tf.constant(inputs)})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            outputs, exported = sess.run([predictions["outputs"],
                                          exports["serving_default"]["outputs"]])
    assert outputs.shape == (2, 8) and outputs.dtype == np.int32
    assert "scores" not in predictions  # a single pass: no scores, as in T2T
    np.testing.assert_array_equal(outputs, exported)
    assert outputs.min() >= 0 and outputs.max() <= 3


def test_max_length_must_be_a_power_of_two():
    model = sn.ShuffleNetwork(tiny(max_length=12), PREDICT,
                              model_hparams.test_problem_hparams(4, 4))
    with pytest.raises(ValueError, match="max_length a power of 2"):
        model.max_pad_length({"inputs": None})


def test_learns_to_reverse_binary_strings_and_infers_them():
    rng = np.random.RandomState(2)
    hp = tiny(hidden_size=16)
    with tf.Graph().as_default():
        _v1.set_random_seed(1)
        problem_hp = model_hparams.test_problem_hparams(4, 4)
        feeds = {k: _v1.placeholder(tf.int32, [None, 8, 1, 1]) for k in ("inputs", "targets")}
        _, losses = sn.ShuffleNetwork(hp, TRAIN, problem_hp)(feeds)
        train_op = _v1.train.AdamOptimizer(0.01).minimize(losses["training"])
        predicted = sn.ShuffleNetwork(hp, PREDICT, problem_hp).infer(
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


# ------------------------------------------------------------------ backends
PROBLEM = "algorithmic_reverse_binary40_test"
OVERRIDES = ("hidden_size=8,num_hidden_layers=1,batch_size=128,dropout=0.0,"
             "learning_rate_schedule=constant,learning_rate_constant=0.01")
STEPS = 3


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("data"))
    datagen.generate_problems([PROBLEM], path, str(tmp_path_factory.mktemp("tmp")),
                              random_seed=1, num_concurrent_processes=1)
    return path


def test_native_backend_trains_and_checkpoints_t2t_names(data_dir, tmp_path):
    """(test_residual_shuffle_exchange runs the Estimator backend: one per file, for time.)"""
    hparams = trainer_lib.create_hparams("shuffle_network_baseline", OVERRIDES,
                                         data_dir=data_dir, problem_name=PROBLEM)
    run_spec = run_config.RunConfigSpec(model_dir=str(tmp_path), save_checkpoints_steps=STEPS,
                                        random_seed=1, log_step_count_steps=STEPS)
    spec = trainer_lib.ExperimentSpec("shuffle_network", PROBLEM, data_dir,
                                      train_steps=STEPS, eval_steps=1, schedule="train")
    native_experiment.native_experiment(run_spec, hparams, spec).train()
    variables = dict(tf.train.list_variables(str(tmp_path)))
    assert variables["global_step"] == []
    assert variables["shuffle_network/body/benes_block_0/forward/switch/cand1/c/CvK"] == [16, 8]
    assert variables["shuffle_network/body/last_layer/residual_scale"] == [8]
    assert tf.train.load_checkpoint(str(tmp_path)).get_tensor("global_step") == STEPS
    assert os.path.exists(os.path.join(str(tmp_path), "checkpoint"))
