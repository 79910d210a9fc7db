"""`trim_and_pack_dataset`: seqio's packing, fast, without custom ops.

Packing puts several examples side by side in one row of each feature, with segment ids
(1, 2, ... per example, 0 = padding) and positions (from 0 in each example):

    {"inputs": [7, 8, 5, 1], "targets": [3, 9, 1]}
    {"inputs": [8, 4, 9, 3, 1], "targets": [4, 1]}
    trim_and_pack_dataset(ds, {"inputs": 10, "targets": 7}) gives one row:
      inputs              [7, 8, 5, 1, 8, 4, 9, 3, 1, 0]
      inputs_segment_ids  [1, 1, 1, 1, 2, 2, 2, 2, 2, 0]
      inputs_positions    [0, 1, 2, 3, 0, 1, 2, 3, 4, 0]
      targets             [3, 9, 1, 4, 1, 0, 0]
      targets_segment_ids [1, 1, 1, 2, 2, 0, 0]
      targets_positions   [0, 1, 2, 0, 1, 0, 0]

Two modes:

* `use_custom_ops=False` (seqio's default): seqio 0.0.20's greedy fill, row for row. The
  stream is cut into batches of max(feature_lengths) examples; inside a batch examples
  are appended in order to the open row until one does not fit in some feature, which
  closes the row; each batch ends its last row. Each example counts as its number of
  nonzero tokens (seqio reads 0 as padding), and segment ids are seqio's
  `cumsum(position == 0) * (token != 0)`. seqio runs this in a `tf.while_loop` per
  example; here a NumPy planner packs a window of whole batches per call, with the same
  rows in the same order.
* `use_custom_ops=True` (seqio's "faster, denser" path, which needed a compiled
  tensor2tensor op): t2t's first-fit-decreasing planner (`t2t.data.packing`) over windows
  of examples. Lengths are the true lengths, so a 0 token inside a sequence is kept, and
  every example has the same segment id in every feature. Rows are denser; the order of
  examples changes inside a window (deterministically).

Both give int32 features of static length and drop features not in `feature_lengths`.
"""
import math
from typing import List, Mapping, Sequence

import numpy as np
import tensorflow as tf
from absl import logging

from t2t.data import packing as t2t_packing

# Examples per NumPy call, rounded up to whole seqio batches in greedy mode.
GREEDY_WINDOW = 2048
FIRST_FIT_WINDOW = 2048

_LENGTH_SUFFIX = "__seqio_length"


def _strip_packed_feature_key(key: str) -> str:
    for suffix in ("_positions", "_segment_ids"):
        if key.endswith(suffix):
            return key[:-len(suffix)]
    return key


def greedy_rows(lengths: np.ndarray, capacities: Sequence[int], batch_size: int) -> np.ndarray:
    """Row number of each example under seqio's greedy fill.

    Args:
      lengths: int [N, K] example lengths (already trimmed to the capacities).
      capacities: K row lengths.
      batch_size: seqio's batch (max of the capacities): the open row is closed at the
        end of every batch of this many examples, and every batch yields a row.

    Returns:
      int64 [N] row numbers, nondecreasing from 0, and the number of rows.

    Example: lengths [[4], [5], [3]], capacities [8], batch_size 8 -> rows [0, 1, 1], 2
    (5 does not fit after 4; 3 fits after 5).
    """
    num_examples, num_dims = lengths.shape
    rows = np.empty(num_examples, np.int64)
    num_rows = 0
    table = lengths.tolist()
    for start in range(0, num_examples, batch_size):
        stop = min(start + batch_size, num_examples)
        current = num_rows
        num_rows += 1
        if num_dims == 1:
            cap, fill = capacities[0], 0
            for i in range(start, stop):
                size = table[i][0]
                if fill + size > cap:
                    current = num_rows
                    num_rows += 1
                    fill = 0
                rows[i] = current
                fill += size
        elif num_dims == 2:
            cap_a, cap_b = capacities
            fill_a = fill_b = 0
            for i in range(start, stop):
                size_a, size_b = table[i]
                if fill_a + size_a > cap_a or fill_b + size_b > cap_b:
                    current = num_rows
                    num_rows += 1
                    fill_a = fill_b = 0
                rows[i] = current
                fill_a += size_a
                fill_b += size_b
        else:
            fill = [0] * num_dims
            for i in range(start, stop):
                size = table[i]
                if any(f + s > c for f, s, c in zip(fill, size, capacities)):
                    current = num_rows
                    num_rows += 1
                    fill = [0] * num_dims
                rows[i] = current
                fill = [f + s for f, s in zip(fill, size)]
    return rows, num_rows


def pack_greedy(values: Sequence[np.ndarray], capacities: Sequence[int],
                batch_size: int) -> List[np.ndarray]:
    """seqio's greedy packing of a window of zero-padded examples, in NumPy.

    Args:
      values: K int arrays [N, M_k], example i's feature k zero-padded.
      capacities: K row lengths (examples are already trimmed to them).
      batch_size: seqio's batch size, max(capacities).

    Returns:
      3K int32 arrays [R, capacity_k]: tokens, segment ids, positions per feature.
    """
    values = [np.asarray(v) for v in values]
    # seqio keeps the first count_nonzero(x) tokens of each example.
    lengths = np.stack([np.count_nonzero(v, axis=1) for v in values], axis=1).astype(np.int64)
    if lengths.shape[0] == 0:
        return [np.zeros([0, c], np.int32) for c in capacities for _ in range(3)]
    rows, num_rows = greedy_rows(lengths, capacities, batch_size)
    # First example of each example's row (rows are nondecreasing).
    is_start = np.ones(rows.size, bool)
    is_start[1:] = rows[1:] != rows[:-1]
    first = np.maximum.accumulate(np.where(is_start, np.arange(rows.size), 0))
    out = []
    for column, feature in enumerate(values):
        cap = capacities[column]
        sizes = lengths[:, column]
        ends = np.cumsum(sizes)
        offsets = (ends - sizes) - (ends - sizes)[first]
        example = np.repeat(np.arange(sizes.size), sizes)
        position = np.arange(example.size) - (ends - sizes)[example]
        slot = rows[example] * cap + offsets[example] + position
        tokens = np.zeros(num_rows * cap, np.int32)
        tokens[slot] = feature[example, position]
        positions = np.zeros(num_rows * cap, np.int32)
        positions[slot] = position
        tokens = tokens.reshape(num_rows, cap)
        positions = positions.reshape(num_rows, cap)
        segments = np.cumsum(positions == 0, axis=1, dtype=np.int32) * (tokens != 0)
        out += [tokens, segments.astype(np.int32), positions]
    return out


def pack_first_fit(lengths: np.ndarray, values: Sequence[np.ndarray],
                   capacities: Sequence[int]) -> List[np.ndarray]:
    """First-fit-decreasing packing of a window, by true lengths; 3K int32 arrays."""
    packed = t2t_packing.pack_rows(lengths, values, list(capacities))
    return [np.asarray(a, np.int32) for a in packed]


def _validate(dataset, feature_lengths, use_custom_ops):
    element_spec = dataset.element_spec
    if not isinstance(element_spec, Mapping):
        raise ValueError("trim_and_pack_dataset: the dataset must yield dicts of features, "
                         "got %r" % (element_spec,))
    if not feature_lengths:
        raise ValueError("trim_and_pack_dataset: feature_lengths is empty; give the packed "
                         "length of each feature, e.g. {'targets': 512}")
    for k, length in feature_lengths.items():
        if k not in element_spec:
            raise ValueError(f"Feature '{k}' not found in dataset. Available keys are "
                             f"{list(element_spec.keys())}")
        if not element_spec[k].shape.is_compatible_with(tf.TensorShape([None])):
            if use_custom_ops:
                raise ValueError(f"Feature '{k}' has shape {element_spec[k].shape}: t2t packs "
                                 "only one-dimensional features (also with use_custom_ops)")
            raise ValueError(
                f"Features to be packed must be one-dimensional. '{k}' is not.' Consider "
                "setting use_custom_ops if you have higher-rank features.")
        if not isinstance(length, (int, np.integer)) or length < 1:
            raise ValueError(f"trim_and_pack_dataset: length of '{k}' must be a positive int, "
                             f"got {length!r}")


def trim_and_pack_dataset(dataset: tf.data.Dataset, feature_lengths: Mapping[str, int],
                          use_custom_ops: bool = False) -> tf.data.Dataset:
    """Packs examples into rows of `feature_lengths` (seqio's greedy fill or first-fit).

    Args:
      dataset: a tf.data.Dataset of dicts of 1-D features.
      feature_lengths: {feature: packed length}; other features are removed.
      use_custom_ops: False: seqio's greedy rows exactly. True: t2t's denser
        first-fit-decreasing packing (no custom ops needed), where 0 is a token.

    Returns:
      A dataset of {k, k_segment_ids, k_positions} int32 [feature_lengths[k]] rows.
    """
    _validate(dataset, feature_lengths, use_custom_ops)
    element_spec = dataset.element_spec
    keys = list(feature_lengths)
    capacities = [int(feature_lengths[k]) for k in keys]
    additional_keys = set(element_spec) - set(feature_lengths)
    if additional_keys:
        logging.warning("Features not in `features_length` will be removed during packing: %s",
                        additional_keys)

    if use_custom_ops:
        def trim(x):
            out = {}
            for k, cap in zip(keys, capacities):
                v = tf.cast(x[k][:cap], tf.int32)
                out[k] = v
                out[k + _LENGTH_SUFFIX] = tf.size(v)
            return out

        ds = dataset.map(trim, num_parallel_calls=tf.data.AUTOTUNE)
        padded_shapes = {k: [None] for k in keys}
        padded_shapes.update({k + _LENGTH_SUFFIX: [] for k in keys})
        ds = ds.padded_batch(FIRST_FIT_WINDOW, padded_shapes=padded_shapes)

        def pack_window(window):
            lengths = tf.stack([window[k + _LENGTH_SUFFIX] for k in keys], axis=1)
            return tf.numpy_function(
                lambda lens, *vals: pack_first_fit(lens, vals, capacities),
                [lengths] + [window[k] for k in keys], [tf.int32] * (3 * len(keys)),
                stateful=False)
    else:
        ds = dataset.map(lambda x: {k: tf.cast(x[k][:cap], tf.int32)
                                    for k, cap in zip(keys, capacities)},
                         num_parallel_calls=tf.data.AUTOTUNE)
        batch_size = max(capacities)
        window = batch_size * max(1, math.ceil(GREEDY_WINDOW / batch_size))
        ds = ds.padded_batch(window, padded_shapes={k: [None] for k in keys})

        def pack_window(window_values):
            return tf.numpy_function(
                lambda *vals: pack_greedy(vals, capacities, batch_size),
                [window_values[k] for k in keys], [tf.int32] * (3 * len(keys)),
                stateful=False)

    def to_rows(window_values):
        packed = pack_window(window_values)
        rows = {}
        for index, (k, cap) in enumerate(zip(keys, capacities)):
            for offset, suffix in enumerate(("", "_segment_ids", "_positions")):
                rows[k + suffix] = tf.ensure_shape(packed[3 * index + offset], [None, cap])
        return rows

    ds = ds.map(to_rows, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return ds.unbatch()
