"""InputSettings: the optional hparams of the input pipeline, read once and checked."""
import dataclasses
import types

import numpy as np
import pytest
import tensorflow as tf

from input_fn_testing import hparams, make_examples, run_input_fn

from t2t.core import registry
from t2t.core.hparam import HParams
from t2t.core.modes import ModeKeys
from t2t.data import batching
from t2t.data.input_settings import InputSettings
from t2t.problems.preprocessing import preprocess_example_common

T2T_DEFAULTS = {
    "pack_dataset": False, "eval_drop_long_sequences": False, "batch_shuffle_size": 0,
    "split_targets_chunk_length": 0, "split_targets_max_chunks": 100,
    "split_targets_strided_training": False, "labels_feature_name": "targets",
    "token_batching": "buckets", "pad_batch": False, "max_input_seq_length": 0,
    "max_target_seq_length": 0, "prepend_mode": "none", "split_to_length": 0}


def test_defaults_from_none_and_from_an_empty_hparams_are_t2ts():
    assert dataclasses.asdict(InputSettings.from_hparams(None)) == T2T_DEFAULTS
    assert InputSettings.from_hparams(HParams()) == InputSettings()
    assert InputSettings.from_hparams(object()) == InputSettings()


def test_values_are_read_from_the_hparams():
    hp = HParams(batch_size=4096, batch_shuffle_size=64, pack_dataset=True,
                 labels_feature_name="inputs", prepend_mode="prepend_inputs_full_attention",
                 max_target_seq_length=np.int64(32), split_to_length=8)
    settings = InputSettings.from_hparams(hp)
    assert (settings.batch_shuffle_size, settings.pack_dataset, settings.labels_feature_name,
            settings.prepend_mode, settings.max_target_seq_length, settings.split_to_length) == (
        64, True, "inputs", "prepend_inputs_full_attention", 32, 8)
    assert type(settings.max_target_seq_length) is int
    assert settings.pad_batch is False  # not in hp: the default
    assert InputSettings.from_hparams(hparams(batch_shuffle_size=512)).batch_shuffle_size == 512
    # Any object, and what the probes took: 0/1 flags, None for a count or a flag.
    loose = types.SimpleNamespace(pad_batch=1, pack_dataset=np.bool_(True),
                                  batch_shuffle_size=None, eval_drop_long_sequences=None)
    settings = InputSettings.from_hparams(loose)
    assert (settings.pad_batch, settings.pack_dataset, settings.batch_shuffle_size,
            settings.eval_drop_long_sequences) == (True, True, 0, False)


def test_every_registered_hparams_set_reads():
    for name in registry.list_hparams():
        InputSettings.from_hparams(registry.hparams(name))


def test_settings_are_frozen():
    settings = InputSettings.from_hparams(None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.batch_shuffle_size = 8


@pytest.mark.parametrize("name,value,expected", [
    ("batch_shuffle_size", -1, "an int >= 0"),
    ("split_targets_chunk_length", -2, "an int >= 0"),
    ("max_input_seq_length", 2.5, "an int >= 0"),
    ("split_to_length", True, "an int >= 0"),
    ("split_targets_max_chunks", 0, "an int >= 1"),
    ("pad_batch", "false", "True or False"),
    ("pack_dataset", 2, "True or False"),
    ("labels_feature_name", "", "a non-empty string"),
    ("prepend_mode", "prepend_inputs_full", "one of 'none', 'prepend_inputs_masked_attention', "
                                            "'prepend_inputs_full_attention'"),
    ("prepend_mode", None, "a non-empty string"),
    ("token_batching", "sort", "one of 'buckets', 'sorted'"),
])
def test_a_bad_value_names_the_hparam_the_value_and_what_was_expected(name, value, expected):
    with pytest.raises(ValueError) as raised:
        InputSettings.from_hparams(types.SimpleNamespace(**{name: value}))
    message = str(raised.value)
    assert message.startswith("hparams.%s = %r: expected " % (name, value))
    assert expected in message and "\n" not in message


def test_labels_feature_name_takes_effect_through_input_fn():
    examples = make_examples(6, 1, 8, seed=3)
    hp = hparams(batch_size=64, max_length=16, labels_feature_name="inputs")
    batches = list(run_input_fn(examples, ModeKeys.EVAL, hp, 16))
    assert batches
    for features, labels in batches:
        np.testing.assert_array_equal(labels.numpy(), features["inputs"].numpy())
        assert labels.shape != features["targets"].shape or not np.array_equal(
            labels.numpy(), features["targets"].numpy())


def test_input_fn_and_preprocessing_check_the_settings_before_reading():
    with pytest.raises(ValueError, match=r"^hparams.batch_shuffle_size = -1: expected"):
        run_input_fn(make_examples(2, 1, 4), ModeKeys.TRAIN,
                     hparams(batch_size=64, max_length=16, batch_shuffle_size=-1), 16)
    example = {"inputs": tf.constant([5, 6], tf.int64), "targets": tf.constant([7], tf.int64)}
    with pytest.raises(ValueError, match=r"^hparams.prepend_mode = 'prepend': expected"):
        preprocess_example_common(example, ModeKeys.TRAIN, HParams(prepend_mode="prepend"))


def test_pad_for_tpu_takes_hparams_or_their_settings():
    shapes = {"inputs": tf.TensorShape([None]), "targets": tf.TensorShape([None])}
    settings = InputSettings(max_input_seq_length=16)
    assert batching.pad_for_tpu(shapes, settings, 64) == batching.pad_for_tpu(
        shapes, hparams(max_input_seq_length=16), 64) == {"inputs": [16], "targets": [64]}
