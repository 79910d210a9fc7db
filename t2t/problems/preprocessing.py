"""Runtime preprocessing shared by every Problem (T2T's `preprocess_example_common`).

What `Problem.preprocess_example` does by default, driven by model hparams: truncation
(`max_input_seq_length`, `max_target_seq_length`), `prepend_mode` and `split_to_length`,
read (and checked) by `InputSettings.from_hparams`, so hparams that lack them keep T2T's
defaults.
`t2t.problems.problem` re-exports these names, their T2T home.
"""
from absl import logging
import tensorflow as tf

from t2t.core.hparam import HParams
from t2t.core.modes import ModeKeys
from t2t.data.input_settings import InputSettings

_PREDICT = ModeKeys.PREDICT


def default_model_hparams():
    """The model hparams a Problem uses when it is given none (a no-op preprocessing)."""
    return HParams(max_input_seq_length=0, max_target_seq_length=0, prepend_mode="none",
                   split_to_length=0, data_dir=None)


def preprocess_example_common(example, mode, hparams):
    """Truncation, `prepend_mode` and `split_to_length`, as T2T.

        ex = {"inputs": [5, 6, 7, 1], "targets": [8, 9, 1]}
        hparams.max_input_seq_length = 2   -> inputs [5, 6]
        hparams.prepend_mode = "prepend_inputs_masked_attention"
          TRAIN/EVAL: targets [5, 6, 0, 8, 9, 1]; PREDICT: partial_targets [5, 6, 0]
        hparams.split_to_length = 4 (LM):  targets [a b c d e] ->
          a Dataset of chunks [[a b c d]], [[e 0 0 0]] (each [4, 1, 1])

    Returns a dict, or a `tf.data.Dataset` of dicts when `split_to_length` is set.
    """
    settings = InputSettings.from_hparams(hparams)
    max_input = settings.max_input_seq_length
    max_target = settings.max_target_seq_length
    prepend_mode = settings.prepend_mode
    split_to_length = settings.split_to_length
    if "inputs" in example and max_input > 0:
        example["inputs"] = example["inputs"][:max_input]
    if prepend_mode != "none":
        # Both prepend modes put "inputs 0" before the targets; they differ only in
        # the attention mask the model builds ("masked" vs "full" over the prefix).
        inputs = example["inputs"]
        separator = tf.zeros([1], dtype=inputs.dtype)
        if mode == _PREDICT:
            example["partial_targets"] = tf.concat([inputs, separator], 0)
        else:
            example["targets"] = tf.concat([inputs, separator, example["targets"]], 0)
    if "targets" in example and max_target > 0:
        example["targets"] = example["targets"][:max_target]
    if split_to_length:
        chunks = {}
        for key, value in example.items():
            if key not in ("inputs", "targets"):
                logging.warning("split_to_length drops the feature %s", key)
                continue
            # T2T reshaped directly, which failed on any length that was not a
            # multiple; the last chunk is padded with 0 (PAD) instead.
            padding = (-tf.shape(value)[0]) % split_to_length
            value = tf.pad(value, [[0, padding]])
            chunks[key] = tf.reshape(value, [-1, split_to_length, 1, 1])
        return tf.data.Dataset.from_tensor_slices(chunks)
    return example


def preprocessing_is_identity(hparams):
    """Whether `preprocess_example_common` leaves every example as it is for `hparams`.

        preprocessing_is_identity(default_model_hparams())   # True
        hparams.max_target_seq_length = 64                    # -> False (truncates)
    """
    settings = InputSettings.from_hparams(hparams)
    return (settings.max_input_seq_length <= 0 and settings.max_target_seq_length <= 0 and
            settings.prepend_mode == "none" and not settings.split_to_length)

