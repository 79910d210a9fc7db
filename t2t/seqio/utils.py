"""SeqIO utilities: `Feature`, trimming/padding/packing, autoregressive inputs, mixing rates,
`map_over_dataset` with deterministic seeds, cache paths and tf.train.Example helpers.

    >>> make_autoregressive_inputs(tf.constant([3, 8, 1, 9, 1, 5, 4, 1, 0, 0]),
    ...                            sequence_id=tf.constant([1, 1, 1, 2, 2, 3, 3, 3, 0, 0]))
    [0, 3, 8, 0, 9, 0, 5, 4, 0, 0]     # shifted right, 0 at each segment's start

    >>> @map_over_dataset(num_seeds=1)
    ... def noisy(ex, seed):            # seed: two int64 scalars, deterministic under
    ...     return ex + seed[0]         # map_seed_manager(seed) (the Task does this)
"""
import collections
import contextlib
import dataclasses
import functools
import glob
import inspect
import os
import threading
from typing import Any, Dict, Iterable, Mapping, Optional, Union

import numpy as np
import tensorflow as tf
import tensorflow.compat.v2 as _tf_v2
from absl import logging

import t2t.seqio.packing as packing
from t2t.seqio.packing import trim_and_pack_dataset  # noqa: F401  (seqio.utils name)
from t2t.seqio.tfds_loader import (  # noqa: F401  (seqio.utils names)
    LazyTfdsLoader, TfdsSplit, set_tfds_data_dir_override, set_tfds_read_config_override)
from t2t.seqio.vocabularies import Vocabulary

_INFO_FILENAME = "info.{split}.json"
_STATS_FILENAME = "stats.{split}.json"
_TFRECORD_PREFIX = "{split}.tfrecord"
_GLOBAL_CACHE_DIRECTORIES = []
_strip_packed_feature_key = packing._strip_packed_feature_key  # pylint: disable=protected-access


@dataclasses.dataclass(frozen=True)
class Feature:
    """An output feature of a Task: its vocabulary, whether EOS is appended, dtype, rank."""

    vocabulary: Vocabulary
    add_eos: bool = True
    required: bool = True
    dtype: tf.DType = tf.int32
    rank: int = 1


# ------------------------------------------------------------------------ cache folders
def get_global_cache_dirs():
    return _GLOBAL_CACHE_DIRECTORIES


def set_global_cache_dirs(global_cache_dirs):
    global _GLOBAL_CACHE_DIRECTORIES
    _GLOBAL_CACHE_DIRECTORIES = []
    add_global_cache_dirs(global_cache_dirs)


def add_global_cache_dirs(global_cache_dirs):
    for cache_dir in global_cache_dirs:
        if cache_dir not in _GLOBAL_CACHE_DIRECTORIES:
            _GLOBAL_CACHE_DIRECTORIES.append(cache_dir)


def get_cached_info_path(data_dir, split):
    return os.path.join(data_dir, _INFO_FILENAME.format(split=split))


def get_cached_tfrecord_prefix(data_dir, split):
    return os.path.join(data_dir, _TFRECORD_PREFIX.format(split=split))


def get_cached_stats_path(data_dir, split):
    return os.path.join(data_dir, _STATS_FILENAME.format(split=split))


def get_task_dir_from_name(task_name):
    return os.path.join(*(task_name.split(":")))


# ------------------------------------------------------------------ tf.train.Example
TFDict = Dict[str, Union[np.ndarray, tf.Tensor, tf.RaggedTensor, tf.SparseTensor]]
NestedTFDict = Dict[str, Union[tf.Tensor, tf.RaggedTensor, tf.SparseTensor, "NestedTFDict"]]
_TFEXAMPLE_SHAPE_PREFIX = "_sh:"
_TFEXAMPLE_RAGGED_PREFIX = "_rl:"
_TFEXAMPLE_SPARSE_PREFIX = "_sp:"
_TFEXAMPLE_NESTED_DELIMITER = "/"


def tfexample_ragged_length_key(key: str, dim: int) -> str:
    """The feature holding the `dim`-th row lengths of ragged `key`: "_rl:0:key"."""
    return f"{_TFEXAMPLE_RAGGED_PREFIX}{dim}:{key}"


def tfexample_sparse_indices_key(key: str, dim: int) -> str:
    """The feature holding the `dim`-th indices of sparse `key`: "_sp:0:key"."""
    return f"{_TFEXAMPLE_SPARSE_PREFIX}{dim}:{key}"


def _to_tffeature(tensor) -> tf.train.Feature:
    tensor = tf.convert_to_tensor(tensor)
    values = tf.reshape(tensor, [-1]).numpy().tolist()
    if tensor.dtype.is_bool or tensor.dtype.is_integer:
        # protobuf 7 rejects bools in an Int64List: True/False are written as 1/0.
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))
    if tensor.dtype.is_floating:
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    if tensor.dtype == tf.string:
        return tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[tf.compat.as_bytes(v) for v in values]))
    raise ValueError(f"Unsupported type {tensor.dtype}")


def dict_to_tfexample(dct: TFDict, store_shapes: bool = False) -> tf.train.Example:
    """A tf.train.Example of a dict of tensors (seqio's cache format).

    Ragged tensors store their row lengths under `tfexample_ragged_length_key`, sparse
    ones their indices under `tfexample_sparse_indices_key`; with `store_shapes`, 2+-D and
    sparse tensors also store their shape under "_sh:<key>".
    """
    features = {}
    for key, value in dct.items():
        if isinstance(value, tf.RaggedTensor):
            features[key] = _to_tffeature(value.flat_values)
            for dim, length in enumerate(value.nested_row_lengths()):
                features[tfexample_ragged_length_key(key, dim)] = _to_tffeature(length)
        elif isinstance(value, tf.SparseTensor):
            features[key] = _to_tffeature(value.values)
            for dim, indices in enumerate(tf.transpose(value.indices)):
                features[tfexample_sparse_indices_key(key, dim)] = _to_tffeature(indices)
            if store_shapes:
                features[_TFEXAMPLE_SHAPE_PREFIX + key] = _to_tffeature(
                    tf.constant(value.shape))
        else:
            value = tf.constant(value)
            if store_shapes and len(value.shape) > 1:
                features[_TFEXAMPLE_SHAPE_PREFIX + key] = _to_tffeature(
                    tf.constant(value.shape))
            features[key] = _to_tffeature(value)
    return tf.train.Example(features=tf.train.Features(feature=features))


def tfexample_to_dict(example: tf.train.Example) -> TFDict:
    """The inverse of `dict_to_tfexample` (ints come back int64, floats float32)."""
    dct, shapes = {}, {}
    ragged_lengths = collections.defaultdict(dict)
    sparse_indices = collections.defaultdict(dict)
    for key, feature in example.features.feature.items():
        if feature.int64_list.value:
            value = tf.constant(list(feature.int64_list.value), dtype=tf.int64)
        elif feature.float_list.value:
            value = tf.constant(list(feature.float_list.value), dtype=tf.float32)
        else:
            value = tf.constant(list(feature.bytes_list.value), dtype=tf.string)
        if key.startswith(_TFEXAMPLE_RAGGED_PREFIX):
            _, dim, key = key.split(":", 2)
            ragged_lengths[key][int(dim)] = value
        elif key.startswith(_TFEXAMPLE_SPARSE_PREFIX):
            _, dim, key = key.split(":", 2)
            sparse_indices[key][int(dim)] = value
        elif key.startswith(_TFEXAMPLE_SHAPE_PREFIX):
            shapes[key[len(_TFEXAMPLE_SHAPE_PREFIX):]] = value
        else:
            dct[key] = value
    for key, length_map in ragged_lengths.items():
        missing = [d for d in range(len(length_map)) if d not in length_map]
        if missing:
            raise ValueError(f"Couldn't find {missing[0]}-th ragged length for {key}")
        dct[key] = tf.RaggedTensor.from_nested_row_lengths(
            dct[key], [length_map[d] for d in range(len(length_map))])
    for key, indices_map in sparse_indices.items():
        if key not in shapes:
            raise ValueError(f"Couldn't find dense shape for sparse tensor {key}")
        missing = [d for d in range(len(indices_map)) if d not in indices_map]
        if missing:
            raise ValueError(f"Couldn't find {missing[0]}-th sparse indices for {key}")
        indices = tf.transpose(tf.stack([indices_map[d] for d in range(len(indices_map))]))
        dct[key] = tf.SparseTensor(indices, dct[key], shapes.pop(key))
    for key, shape in shapes.items():
        dct[key] = tf.reshape(dct[key], shape)
    return dct


def unflatten_dict(dct, delimiter=_TFEXAMPLE_NESTED_DELIMITER):
    """{"a/b": 1, "a/c": 2} -> {"a": {"b": 1, "c": 2}}."""
    nested = {}
    for key_path, value in dct.items():
        keys = key_path.split(delimiter)
        last = keys.pop()
        sub = nested
        for key in keys:
            sub = sub.setdefault(key, {})
        sub[last] = value
    return nested


def flatten_dict(nested_dct, delimiter=_TFEXAMPLE_NESTED_DELIMITER):
    """{"a": {"b": 1, "c": 2}} -> {"a/b": 1, "a/c": 2}."""
    flat = {}

    def walk(dct, prefix):
        for key, value in dct.items():
            if isinstance(value, dict):
                walk(value, prefix + key + delimiter)
            else:
                flat[prefix + key] = value

    walk(nested_dct, "")
    return flat


# ------------------------------------------------------------------------------ tasks
def add_kwargs_to_transform(transform, **kwargs):
    """`transform` with those of `kwargs` its signature (or dataclass fields) names.

    This is how a preprocessor receives `sequence_length`/`output_features` only when it
    asks for them: f(ds, sequence_length) gets sequence_length; f(ds) gets nothing.
    Arguments already bound by a functools.partial are not replaced.
    """
    is_dataclass = dataclasses.is_dataclass(transform)
    if is_dataclass:
        names = {f.name for f in dataclasses.fields(transform)}
    else:
        names = set(inspect.signature(transform).parameters.keys())
        if isinstance(transform, functools.partial):
            names -= set(transform.keywords.keys())
    kwargs = {k: v for k, v in kwargs.items() if k in names}
    if not kwargs:
        return transform
    if is_dataclass:
        return dataclasses.replace(transform, **kwargs)
    return functools.partial(transform, **kwargs)


def stateless_shuffle(value, seed):
    """`value` with its elements randomly permuted, statelessly (same seed, same order)."""
    flat = tf.reshape(value, [-1])
    indices = tf.argsort(tf.random.stateless_uniform(tf.shape(flat), seed=seed))
    return tf.reshape(tf.gather(flat, indices), tf.shape(value))


def trim_and_pad_dataset(dataset: tf.data.Dataset,
                         feature_lengths: Mapping[str, Any]) -> tf.data.Dataset:
    """Trims and 0-pads the leading axis (or all axes, for a list of lengths) of features.

    {"inputs": [7, 8, 5]} with {"inputs": 5} -> {"inputs": [7, 8, 5, 0, 0]}; features not
    in `feature_lengths` pass unchanged.
    """
    def trim_and_pad(k, t):
        if k not in feature_lengths:
            return t
        if isinstance(t, tf.RaggedTensor):
            t = t.to_tensor()
        length_k = feature_lengths[k]
        if isinstance(length_k, (int, np.integer)):
            length_k = int(length_k)
            t = t[:length_k]
            padded = tf.pad(t, [(0, length_k - tf.shape(t)[0])] + [(0, 0)] * (len(t.shape) - 1))
            padded.set_shape([length_k] + t.shape.as_list()[1:])
            return padded
        t = t[tuple(slice(0, limit) for limit in length_k)]
        amounts = tf.pad((tf.constant(list(length_k)) - tf.shape(t))[..., None],
                         ((0, 0), (1, 0)))
        padded = tf.pad(t, amounts)
        padded.set_shape(length_k)
        return padded

    return dataset.map(lambda x: {k: trim_and_pad(k, t) for k, t in x.items()},
                       num_parallel_calls=tf.data.AUTOTUNE)


def trim_dataset(dataset: tf.data.Dataset, sequence_length, output_features) -> tf.data.Dataset:
    """Trims output features to `sequence_length` (an int or per-axis lengths)."""
    def trim(k, v):
        if (k not in output_features or not sequence_length or k not in sequence_length
                or sequence_length[k] is None):
            return v
        lengths = sequence_length[k]
        if isinstance(lengths, (int, np.integer)):
            lengths = [lengths]
        return v[tuple(slice(0, int(limit)) for limit in lengths)]

    return dataset.map(lambda ex: {k: trim(k, v) for k, v in ex.items()},
                       num_parallel_calls=tf.data.AUTOTUNE)


def _shift_right_by_one(tensor: tf.Tensor, bos_id: int = 0) -> tf.Tensor:
    """[3, 8, 2] -> [bos_id, 3, 8] along axis 0 (no wrap-around)."""
    if not (tensor.dtype.is_integer or tensor.dtype.is_floating):
        raise ValueError(f"Only numeric types are supported. Got: {tensor.dtype}")
    rolled = tf.roll(tensor, shift=1, axis=0)
    mask = tf.one_hot(0, depth=tf.shape(tensor)[0], on_value=0, off_value=1,
                      dtype=tensor.dtype)
    mask = mask[tuple([slice(None)] + [None] * (len(rolled.shape) - 1))]
    return rolled * mask + (1 - mask) * bos_id


def make_autoregressive_inputs(targets: tf.Tensor, sequence_id: tf.Tensor = None,
                               output_dtype: Optional[tf.dtypes.DType] = None,
                               bos_id: int = 0) -> tf.Tensor:
    """Decoder inputs: targets shifted right, `bos_id` first and at every segment start.

          targets = [3, 8, 1, 9, 1, 5, 4, 1, 0, 0]
      sequence_id = [1, 1, 1, 2, 2, 3, 3, 3, 0, 0]
           inputs = [0, 3, 8, 0, 9, 0, 5, 4, 0, 0]   (the previous EOS never leaks)
    """
    output_dtype = output_dtype or targets.dtype
    if sequence_id is not None and not sequence_id.dtype.is_integer:
        raise ValueError("The sequence_id should be integer-valued tensors for a packed "
                         "dataset.")
    if sequence_id is not None and len(targets.shape) > 1:
        raise ValueError("Only 1-D sequences are supported with packing. Got a packed "
                         f"{len(targets.shape)}-D sequence.")
    inputs = _shift_right_by_one(targets, bos_id)
    if inputs.dtype != output_dtype:
        inputs = tf.cast(inputs, output_dtype)
    if sequence_id is not None:
        same = tf.cast(tf.equal(sequence_id, _shift_right_by_one(sequence_id)), output_dtype)
        inputs = inputs * same + tf.cast((1 - same) * bos_id, output_dtype)
    return inputs


# ---------------------------------------------------------------------- mixing rates
def mixing_rate_num_examples(task, maximum: Optional[int] = None, scale: float = 1.0,
                             temperature: float = 1.0,
                             fallback_to_num_input_examples: bool = True,
                             split: str = "train") -> float:
    """The task's example count (cached stats, else input examples): scale, clip, r**(1/T).

    E.g. 3 cached examples, scale=27, temperature=2 -> (3 * 27) ** 0.5 = 9.0.
    """
    if task.cache_dir or not fallback_to_num_input_examples:
        ret = task.get_cached_stats(split)["examples"]
    else:
        logging.warning("Task '%s' not cached so using number of input examples instead of "
                        "preprocessed examples to compute rate.", task.name)
        ret = task.num_input_examples(split)
        if ret is None:
            raise ValueError(f"mixing_rate_num_examples: task '{task.name}' is not cached and "
                             f"its source does not know its number of '{split}' examples; "
                             "pass num_input_examples to the source or give a numeric rate")
    ret *= scale
    if maximum:
        ret = min(ret, maximum)
    if temperature != 1.0:
        ret = ret ** (1.0 / temperature)
    return ret


def mixing_rate_num_characters(task, temperature: float = 1.0,
                               char_count_name: str = "text_chars") -> float:
    """The cached character count of the task's train split, to the power 1/T."""
    if task.cache_dir is None:
        raise ValueError("`mixing_rate_num_characters` requires that each task has is cached "
                         "with the character count stats.")
    ret = task.get_cached_stats("train")[char_count_name]
    if temperature != 1.0:
        ret = ret ** (1.0 / temperature)
    return ret


# ------------------------------------------------------------------ map_over_dataset
_NEXT_MAP_SEED = None
_SPECIAL_KWARGS = ("sequence_length", "output_features")


@contextlib.contextmanager
def map_seed_manager(initial_seed=None):
    """Sets the first seed `map_over_dataset(num_seeds=n)` hands out (restored on exit).

    Each seeded preprocessor built inside takes the next 2 * num_seeds integers, so a
    fixed initial seed gives the same random streams every time the pipeline is built.
    """
    global _NEXT_MAP_SEED
    old = _NEXT_MAP_SEED
    _NEXT_MAP_SEED = initial_seed
    try:
        yield
    finally:
        _NEXT_MAP_SEED = old


def set_preprocessor_seed(preprocessor_fn, seed=None):
    """seqio's hook for Grain pipelines: binds `seqio_internal_map_seed` if accepted."""
    return add_kwargs_to_transform(preprocessor_fn, seqio_internal_map_seed=seed)


def _seed_datasets(num_seeds):
    """num_seeds pairs of `tf.data.Dataset.random` streams, from the map seed manager."""
    global _NEXT_MAP_SEED
    if _NEXT_MAP_SEED is None:
        seeds = ((None, None),) * num_seeds
    else:
        seeds = tuple((int(_NEXT_MAP_SEED) + 2 * i, int(_NEXT_MAP_SEED) + 2 * i + 1)
                      for i in range(num_seeds))
        _NEXT_MAP_SEED += 2 * num_seeds
    return tuple(tuple(tf.data.Dataset.random(seed=s) for s in pair) for pair in seeds)


def map_over_dataset(fn=None, *, num_seeds=None,
                     num_parallel_calls=tf.data.experimental.AUTOTUNE):
    """Turns a function of one example into a function of a dataset (a decorator).

    With `num_seeds=1` the function also gets `seed=` (a pair of int64 scalars, new for
    every example); with more, `seeds=` (a tuple of pairs). Seeds are deterministic under
    `map_seed_manager(seed)`. Extra arguments are passed through:

        @map_over_dataset
        def add(ex, n=1): return {k: v + n for k, v in ex.items()}
        add(ds, n=2)
    """
    def map_without_seeds(map_fn):
        @functools.wraps(map_fn)
        def wrapped_fn(ds, *args, **kwargs):
            return ds.map(lambda x: map_fn(x, *args, **kwargs),
                          num_parallel_calls=num_parallel_calls)
        return wrapped_fn

    def map_with_seeds(map_fn):
        @functools.wraps(map_fn)
        def wrapped_fn(ds, *args, **kwargs):
            seed_datasets = _seed_datasets(num_seeds)

            def call(element, seeds):
                if num_seeds == 1:
                    return map_fn(element, *args, seed=seeds[0], **kwargs)
                return map_fn(element, *args, seeds=seeds, **kwargs)

            return tf.data.Dataset.zip((ds, seed_datasets)).map(
                call, num_parallel_calls=num_parallel_calls)
        return wrapped_fn

    wrapper = map_without_seeds if num_seeds is None else map_with_seeds
    return wrapper if fn is None else wrapper(fn)


# ------------------------------------------------------------------------------ misc
def fully_qualified_class_name(instance: Any) -> str:
    return f"{type(instance).__module__}.{type(instance).__name__}"


def function_name(function) -> str:
    """The name of a function or functools.partial ("" when unknown)."""
    try:
        if inspect.isclass(function):
            return function.__name__
        if isinstance(function, functools.partial):
            return function_name(function.func)
        if hasattr(function, "__name__"):
            return function.__name__
    except Exception:  # pylint: disable=broad-except
        pass
    return ""


_LIST_SHARD_LOCKS: Dict[str, threading.Lock] = collections.defaultdict(threading.Lock)


def list_files(file_patterns: Union[str, Iterable[str]]) -> list:
    """Files matching glob patterns, each pattern's matches sorted; plain paths kept."""
    if isinstance(file_patterns, str):
        file_patterns = [file_patterns]
    result = []
    for pattern in file_patterns:
        if not glob.has_magic(pattern):
            result.append(pattern)
            continue
        with _LIST_SHARD_LOCKS[pattern]:
            result.extend(_list_files_for_glob(pattern))
    return result


_GLOB_CACHE: Dict[str, list] = {}
# Globs go through tensorflow.compat.v2, as in seqio, whose modules import it as `tf`: in
# TF 2 its io.gfile is a module object of its own, and code (seqio's tests among it) that
# patches tensorflow.compat.v2.io.gfile.glob must reach list_files.


def _list_files_for_glob(file_pattern: str) -> list:
    """Sorted matches, remembered once found (an empty result is not remembered, so files
    written later in the same process are seen)."""
    if file_pattern not in _GLOB_CACHE:
        files = sorted(set(_tf_v2.io.gfile.glob(file_pattern)))
        if not files:
            return files
        _GLOB_CACHE[file_pattern] = files
    return list(_GLOB_CACHE[file_pattern])
