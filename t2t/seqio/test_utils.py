"""Helpers for testing SeqIO pipelines (the commonly used part of seqio.test_utils).

    ds = create_default_dataset([{"inputs": [7, 8], "targets": [3]}])
    assert_dataset(trim_and_pad_dataset(ds, {"inputs": 3, "targets": 2}),
                   {"inputs": [7, 8, 0], "targets": [3, 0]})

`assert_dataset` compares every example to literal lists (strings as text or bytes);
`clear_tasks`/`clear_mixtures` empty the registries between tests. Not included: the
fake-task fixtures built on seqio's own test data files (`FakeTaskTest`, ...).
"""
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import tensorflow as tf

import t2t.seqio.dataset_providers as dataset_providers
import t2t.seqio.vocabularies as vocabularies


def _maybe_as_bytes(v):
    if isinstance(v, list):
        return [_maybe_as_bytes(x) for x in v]
    if isinstance(v, str):
        return tf.compat.as_bytes(v)
    return v


def _maybe_as_text(v):
    if isinstance(v, list):
        return [_maybe_as_text(x) for x in v]
    if isinstance(v, bytes):
        return tf.compat.as_text(v)
    return v


def _as_numpy(dataset):
    for ex in dataset:
        yield tf.nest.map_structure(
            lambda t: t if isinstance(t, tf.RaggedTensor) else t.numpy(), ex)


def dataset_as_text(ds):
    """The examples with bytes turned into str."""
    for ex in _as_numpy(ds):
        yield {k: _maybe_as_text(v.tolist() if isinstance(v, np.ndarray) and v.dtype == object
                                 else v) for k, v in ex.items()}


def _compare_dict(actual_dict, expected_dict, rtol=1e-7, atol=0):
    if set(actual_dict) != set(expected_dict):
        raise AssertionError("features differ: got %s, expected %s"
                             % (sorted(actual_dict), sorted(expected_dict)))
    for key, actual in actual_dict.items():
        expected = expected_dict[key]
        if isinstance(actual, dict):
            _compare_dict(actual, expected, rtol, atol)
        elif isinstance(actual, tf.RaggedTensor):
            np.testing.assert_array_equal(np.array(actual.to_list(), dtype=object),
                                          np.array(_maybe_as_bytes(expected), dtype=object), key)
        elif (isinstance(actual, np.floating) or isinstance(actual, np.ndarray)
              and np.issubdtype(actual.dtype, np.floating)):
            np.testing.assert_allclose(actual, expected, err_msg=key, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(actual, _maybe_as_bytes(expected), key)


def assert_dataset(dataset: tf.data.Dataset,
                   expected: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]],
                   expected_dtypes: Optional[Mapping[str, tf.DType]] = None, rtol=1e-7, atol=0):
    """The whole dataset equals `expected` (one example or a list of examples)."""
    if not isinstance(expected, list):
        expected = [expected]
    actual = list(_as_numpy(dataset))
    if len(actual) != len(expected):
        raise AssertionError("dataset has %d examples, expected %d" % (len(actual),
                                                                         len(expected)))
    for actual_ex, expected_ex in zip(actual, expected):
        _compare_dict(actual_ex, expected_ex, rtol, atol)
    if expected_dtypes:
        actual_dtypes = {k: dataset.element_spec[k].dtype for k in expected_dtypes}
        if actual_dtypes != dict(expected_dtypes):
            raise AssertionError("dtypes %s, expected %s" % (actual_dtypes, expected_dtypes))


def assert_datasets_eq(dataset1: tf.data.Dataset, dataset2: tf.data.Dataset):
    """The two datasets have equal examples in the same order."""
    examples1, examples2 = list(_as_numpy(dataset1)), list(_as_numpy(dataset2))
    if len(examples1) != len(examples2):
        raise AssertionError("datasets have %d and %d examples" % (len(examples1),
                                                                     len(examples2)))
    for ex1, ex2 in zip(examples1, examples2):
        _compare_dict(ex1, ex2)


def assert_datasets_neq(dataset1, dataset2):
    """The two datasets differ somewhere."""
    try:
        assert_datasets_eq(dataset1, dataset2)
    except AssertionError:
        return
    raise AssertionError("datasets are equal")


def create_default_dataset(x: Sequence[Mapping[str, Sequence[int]]],
                           feature_names: Sequence[str] = ("inputs", "targets"),
                           output_types: Optional[Mapping[str, tf.dtypes.DType]] = None,
                           output_shapes: Optional[Mapping[str, Tuple[None]]] = None
                           ) -> tf.data.Dataset:
    """A dataset of the examples `x` (int32 1-D features by default)."""
    if output_types is None:
        output_types = {name: tf.int32 for name in feature_names}
    if output_shapes is None:
        output_shapes = {name: [None] for name in feature_names}
    signature = {name: tf.TensorSpec(output_shapes[name], output_types[name])
                 for name in feature_names}
    return tf.data.Dataset.from_generator(
        lambda: ({k: ex[k] for k in feature_names} for ex in x), output_signature=signature)


class MockVocabulary(vocabularies.Vocabulary):
    """A vocabulary from a dict {text: ids} (encode only), EOS=1."""

    def __init__(self, encode_dict, vocab_size=None):
        self._encode_dict = encode_dict
        self._vocab_size = vocab_size
        super().__init__()

    @property
    def unk_id(self) -> Optional[int]:
        return None

    def encode(self, s):
        return self._encode_dict[s]

    def encode_tf(self, s):
        keys = list(self._encode_dict)
        values = [tf.constant(self._encode_dict[k], tf.int32) for k in keys]
        result = tf.constant([-1], tf.int32)
        for key, value in zip(keys, values):
            result = tf.cond(tf.equal(s, key), lambda v=value: v, lambda r=result: r)
        return result

    def _encode(self, s):
        raise NotImplementedError

    def _encode_tf(self, s):
        raise NotImplementedError

    def _decode(self, ids):
        raise NotImplementedError

    def _decode_tf(self, ids):
        raise NotImplementedError

    @property
    def _base_vocab_size(self) -> int:
        return self._vocab_size

    @property
    def vocab_size(self):
        return self._vocab_size

    @property
    def eos_id(self):
        return 1


def clear_tasks():
    dataset_providers.TaskRegistry._REGISTRY = {}  # pylint: disable=protected-access


def clear_mixtures():
    dataset_providers.MixtureRegistry._REGISTRY = {}  # pylint: disable=protected-access
