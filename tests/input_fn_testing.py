"""Helpers for tests that run `data_reader.input_fn` on small in-memory examples.

    examples = make_examples(100, 1, 20)              # (inputs, targets) id lists
    dataset = run_input_fn(examples, TRAIN, hparams(batch_size=64, max_length=16), 16)
    for features, rows in unbatch(dataset): ...       # rows without padding
"""
import numpy as np
import tensorflow as tf

from t2t.core.modes import ModeKeys
from t2t.data import data_reader
from t2t.layers import common_hparams


def hparams(**overrides):
    """basic_params1 without batch shuffling (batches come in a fixed order), overridden."""
    hp = common_hparams.basic_params1()
    hp.batch_shuffle_size = 0
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def make_examples(count, low, high, seed=0):
    """(inputs, targets) id lists with lengths in [low, high]; ids are nonzero."""
    rng = np.random.RandomState(seed)
    return [(rng.randint(2, 50, rng.randint(low, high + 1)).tolist(),
             rng.randint(2, 50, rng.randint(low, high + 1)).tolist()) for _ in range(count)]


def make_dataset(examples):
    def generate():
        for inputs, targets in examples:
            yield {"inputs": np.array(inputs, np.int64), "targets": np.array(targets, np.int64)}
    return tf.data.Dataset.from_generator(generate, output_signature={
        "inputs": tf.TensorSpec([None], tf.int64), "targets": tf.TensorSpec([None], tf.int64)})


def run_input_fn(examples, mode, hp, max_length, tokens=True, **kwargs):
    kwargs.setdefault("prevent_repeat", mode == ModeKeys.TRAIN)
    return data_reader.input_fn(
        make_dataset(examples), None, False, tokens, 1, max_length, mode, hp, **kwargs)


def unbatch(dataset):
    """Yields (batch features as numpy, rows as (inputs, targets) tuples without padding)."""
    for features, labels in dataset:
        features = {k: v.numpy() for k, v in features.items()}
        np.testing.assert_array_equal(labels.numpy(), features["targets"])
        rows = [(tuple(i[i != 0].tolist()), tuple(t[t != 0].tolist()))
                for i, t in zip(features["inputs"][..., 0, 0], features["targets"][..., 0, 0])]
        yield features, rows
