"""On-the-fly packing of variable-length examples into fixed-length rows, in `tf.data`.

Short examples waste most of a padded batch. Packing puts several examples side by side
in one row of `length` tokens and records where each came from, so attention can be
kept inside an example:

    examples (inputs, targets):  ([3, 4, 1], [5, 1])   ([6, 1], [7, 8, 9, 1])
    pack_dataset(ds, length=8) gives one row:
      inputs               [3, 4, 1, 6, 1, 0, 0, 0]
      inputs_segmentation  [1, 1, 1, 2, 2, 0, 0, 0]    (1, 2, ... per example, 0 = padding)
      inputs_position      [0, 1, 2, 0, 1, 0, 0, 0]    (from 0 within each example)
      targets              [5, 1, 7, 8, 9, 1, 0, 0]
      targets_segmentation [1, 1, 2, 2, 2, 2, 0, 0]
      targets_position     [0, 1, 0, 1, 2, 3, 0, 0]

How: the stream is cut into windows of `window_size` examples. For each window a NumPy
planner (`packing_plan`, run through `tf.numpy_function`) decides which row every
example goes to with first-fit-decreasing on the example's size in every packed feature
at once (an example joins a row only if ALL its features fit, as in T2T), then
`pack_rows` scatters the tokens of the whole window into its rows with vectorised NumPy
indexing. No custom C++ ops are needed and the output depends only on the input order
(deterministic).

Like T2T, an example longer than `length` in some feature is truncated to `length`
tokens in that feature (its tail is lost); examples with no tokens at all are dropped.
"""
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np
import tensorflow as tf

# Examples per planning window. Larger windows pack tighter (fewer half-empty rows at the
# end of each window) but hold more examples in memory; 1024 examples of typical
# sentence lengths reach ~98% of the slots filled.
DEFAULT_WINDOW_SIZE = 1024

_LENGTH_SUFFIX = "__packing_length"

# (sizes [N, K], K capacities) -> int [N] row of each example (rows numbered 0, 1, ...).
RowAssigner = Callable[[np.ndarray, List[int]], np.ndarray]


def padding_sentinel(dtype):
    """The value that pads int sequences when their lengths must be read back after batching.

    The dtype's minimum (-2**31 / -2**63) never occurs in ids, positions or segment
    numbers, so a padded batch gives each example's length without running a function per
    example. Example: padding_sentinel(tf.int64) -> -9223372036854775808.
    """
    return tf.constant(tf.as_dtype(dtype).min, dtype)


def _capacities(capacity, num_dims: int) -> List[int]:
    """[c] * K for an int, else the K per-feature capacities as ints."""
    if isinstance(capacity, (int, np.integer)):
        return [int(capacity)] * num_dims
    capacities = [int(c) for c in capacity]
    if len(capacities) != num_dims:
        raise ValueError("packing: %d capacities for %d features" % (len(capacities), num_dims))
    return capacities


def _first_fit_decreasing(sizes: np.ndarray, capacity) -> np.ndarray:
    """Row index for each example, by first-fit-decreasing over K dimensions.

    Args:
      sizes: int array [N, K], the length of each example in each packed feature,
        already clipped to `capacity`; every row has at least one nonzero entry.
      capacity: tokens per row in each feature: an int, or K ints (one per feature;
        examples are then ordered by the sum of their fractions of each feature's capacity,
        which packs pairs such as inputs/targets of lengths 128/64 densest).

    Returns:
      int64 array [N] of row numbers in creation order (0, 1, ...).

    Example: sizes [[5, 2], [3, 6], [4, 1]], capacity 8 -> [0, 0, 1]. Sorted by largest
    size the order is example 1 (6), 0 (5), 2 (4): example 1 opens row 0, example 0 fits
    beside it (3+5 <= 8 and 6+2 <= 8), example 2 no longer fits and opens row 1.
    """
    num_examples, num_dims = sizes.shape
    capacities = _capacities(capacity, num_dims)
    rows = np.empty(num_examples, np.int64)
    if len(set(capacities)) <= 1:
        order = np.argsort(-sizes.max(axis=1), kind="stable")
    else:
        order = np.argsort(-(sizes / np.asarray(capacities, np.float64)).sum(axis=1),
                           kind="stable")
    # A row whose room in some feature is below the smallest size left in that feature
    # can take nothing more: it is closed so later scans skip it.
    smallest = sizes.min(axis=0).tolist()
    num_rows = 0
    if num_dims == 1:
        room_ids: List[int] = []
        room: List[int] = []
        min0 = smallest[0]
        for index, size in zip(order.tolist(), sizes[order, 0].tolist()):
            for slot in range(len(room)):
                if room[slot] >= size:
                    break
            else:
                slot = len(room)
                room_ids.append(num_rows)
                room.append(capacities[0])
                num_rows += 1
            rows[index] = room_ids[slot]
            room[slot] -= size
            if room[slot] < min0:
                del room[slot], room_ids[slot]
        return rows
    if num_dims == 2:
        room_ids = []
        room_a: List[int] = []
        room_b: List[int] = []
        min_a, min_b = smallest
        pairs = sizes[order].tolist()
        for index, (size_a, size_b) in zip(order.tolist(), pairs):
            for slot in range(len(room_a)):
                if room_a[slot] >= size_a and room_b[slot] >= size_b:
                    break
            else:
                slot = len(room_a)
                room_ids.append(num_rows)
                room_a.append(capacities[0])
                room_b.append(capacities[1])
                num_rows += 1
            rows[index] = room_ids[slot]
            room_a[slot] -= size_a
            room_b[slot] -= size_b
            if room_a[slot] < min_a or room_b[slot] < min_b:
                del room_a[slot], room_b[slot], room_ids[slot]
        return rows
    # Any number of features: same algorithm, rooms as lists of K values.
    room_ids = []
    rooms: List[List[int]] = []
    for index, size in zip(order.tolist(), sizes[order].tolist()):
        for slot in range(len(rooms)):
            if all(r >= s for r, s in zip(rooms[slot], size)):
                break
        else:
            slot = len(rooms)
            room_ids.append(num_rows)
            rooms.append(list(capacities))
            num_rows += 1
        rows[index] = room_ids[slot]
        rooms[slot] = [r - s for r, s in zip(rooms[slot], size)]
        if any(r < m for r, m in zip(rooms[slot], smallest)):
            del rooms[slot], room_ids[slot]
    return rows


def packing_plan(lengths: np.ndarray, length, assign_rows: Optional[RowAssigner] = None):
    """Where each example of a window goes: row, segment id and offsets.

    Args:
      lengths: int array [N, K], example lengths per packed feature (may exceed `length`:
        they are truncated).
      length: row length: an int, or K ints (one per feature).
      assign_rows: `(sizes [M, K], capacities) -> row of each example`, for the examples
        with tokens (sizes clipped to the capacities); default first-fit-decreasing.

    Returns:
      (row [N], segment [N], offsets [N, K], num_rows) as int64 numpy values. `row` is -1
      and `segment` 0 for examples with no tokens. Rows are numbered in the order of their
      first example, and inside a row examples keep their input order, numbered from 1.

    Example: lengths [[3, 2], [2, 4]] and length 8 -> row [0, 0], segment [1, 2],
    offsets [[0, 0], [3, 2]], num_rows 1.
    """
    lengths = np.asarray(lengths, np.int64)
    num_examples, num_dims = lengths.shape
    if num_dims:
        lengths = np.minimum(lengths, np.asarray(_capacities(length, num_dims), np.int64))
    row = np.full(num_examples, -1, np.int64)
    segment = np.zeros(num_examples, np.int64)
    offsets = np.zeros((num_examples, num_dims), np.int64)
    placed = np.flatnonzero(lengths.max(axis=1) > 0) if num_dims else np.zeros(0, np.int64)
    if placed.size == 0:
        return row, segment, offsets, np.int64(0)
    raw_rows = (assign_rows or _first_fit_decreasing)(
        lengths[placed], _capacities(length, num_dims))
    num_rows = int(raw_rows.max()) + 1
    # Renumber rows by their first (lowest-index) example, so rows come out roughly in
    # input order rather than longest-first, which would correlate length with position.
    first_member = np.full(num_rows, num_examples, np.int64)
    np.minimum.at(first_member, raw_rows, placed)
    renumber = np.empty(num_rows, np.int64)
    renumber[np.argsort(first_member, kind="stable")] = np.arange(num_rows)
    row[placed] = renumber[raw_rows]
    # Group by row, keeping input order inside each row (`placed` is ascending).
    by_row = placed[np.argsort(row[placed], kind="stable")]
    sorted_rows = row[by_row]
    is_start = np.ones(by_row.size, bool)
    is_start[1:] = sorted_rows[1:] != sorted_rows[:-1]
    start = np.maximum.accumulate(np.where(is_start, np.arange(by_row.size), 0))
    segment[by_row] = np.arange(by_row.size) - start + 1
    ends = np.cumsum(lengths[by_row], axis=0)
    exclusive = ends - lengths[by_row]
    offsets[by_row] = exclusive - exclusive[start]
    return row, segment, offsets, np.int64(num_rows)


def pack_rows(lengths: np.ndarray, values: Sequence[np.ndarray], length,
              assign_rows: Optional[RowAssigner] = None):
    """Packs a window of examples into rows, in NumPy.

    Args:
      lengths: int array [N, K], each example's length per feature.
      values: K arrays [N, M_k]; example i's tokens of feature k are values[k][i, :len].
      length: row length: an int, or K ints (one per feature).
      assign_rows: the row planner, as for `packing_plan`.

    Returns:
      A list of 3K arrays [R, length_k]: for each feature its tokens, segment ids (int64)
      and positions (int64).

    Example: lengths [[2], [1]], values [[[7, 8], [9, 0]]], length 4 ->
      [[[7, 8, 9, 0]], [[1, 1, 2, 0]], [[0, 1, 0, 0]]].
    """
    lengths = np.asarray(lengths, np.int64)
    capacities = _capacities(length, lengths.shape[1])
    lengths = np.minimum(lengths, np.asarray(capacities, np.int64))
    row, segment, offsets, num_rows = packing_plan(lengths, capacities, assign_rows)
    packed = []
    for column, feature in enumerate(values):
        length = capacities[column]
        sizes = lengths[:, column]
        # One entry per kept token: its example and its position in the example.
        example = np.repeat(np.arange(sizes.size), sizes)
        position = np.arange(example.size) - (np.cumsum(sizes) - sizes)[example]
        slot = row[example] * length + offsets[example, column] + position
        for source, dtype in ((feature[example, position], feature.dtype),
                              (segment[example], np.int64), (position, np.int64)):
            flat = np.zeros(num_rows * length, dtype)
            flat[slot] = source
            packed.append(flat.reshape(num_rows, length))
    return packed


def pack_window(window: Dict[str, tf.Tensor], keys: Sequence[str], length: int,
                lengths: Optional[Dict[str, tf.Tensor]] = None):
    """Packs one padded window {key: [N, M]} into rows {..: [R, length]}.

    Example lengths come from `lengths[key]` ([N]) or `key + _LENGTH_SUFFIX` features when
    present, else from the `padding_sentinel` that padded the window.
    """
    lengths = dict(lengths or {})
    columns = []
    for key in keys:
        if key in lengths:
            columns.append(tf.cast(lengths[key], tf.int64))
        elif key + _LENGTH_SUFFIX in window:
            columns.append(tf.cast(window[key + _LENGTH_SUFFIX], tf.int64))
        else:
            real = tf.not_equal(window[key], padding_sentinel(window[key].dtype))
            columns.append(tf.reduce_sum(tf.cast(real, tf.int64), axis=1))
    out_types = []
    for key in keys:
        out_types += [window[key].dtype, tf.int64, tf.int64]
    packed = tf.numpy_function(
        lambda lens, *values: pack_rows(lens, values, length),
        [tf.stack(columns, axis=1)] + [window[k] for k in keys], out_types, stateful=False)
    rows = {}
    for index, key in enumerate(keys):
        for offset, suffix in enumerate(("", "_segmentation", "_position")):
            rows[key + suffix] = tf.ensure_shape(packed[3 * index + offset], [None, length])
    return rows


def check_pack_length(length, window_size):
    """`length` as an int; one-line errors for a length or window size below 1."""
    if not isinstance(length, (int, np.integer)) or length < 1:
        raise ValueError("pack_dataset: length must be a positive int, got %r; "
                         "set hparams.max_length" % (length,))
    if window_size < 1:
        raise ValueError("pack_dataset: window_size must be >= 1, got %r" % (window_size,))
    return int(length)


def pack_dataset(dataset: tf.data.Dataset, length: int, keys: Optional[Sequence[str]] = None,
                 use_custom_ops: bool = False, window_size: int = DEFAULT_WINDOW_SIZE):
    """Packs a dataset of 1-D sequence examples into rows of exactly `length` tokens.

    Args:
      dataset: a `tf.data.Dataset` of dicts of 1-D tensors (e.g. int64 `inputs`, `targets`).
      length: tokens per packed row, e.g. `hparams.max_length`.
      keys: the features to pack (default: all of them); other features are dropped.
      use_custom_ops: accepted for T2T compatibility and ignored (there are no custom ops).
      window_size: examples planned together; larger packs tighter.

    Returns:
      A dataset of dicts with, for each key `k`, `k`, `k_segmentation` and `k_position`,
      each of static shape [length]; `k` keeps its dtype, the others are int64.

    Example: ([1, 2, 1], [3, 1]) and ([4, 1], [5, 6, 1]) with length 6 give
      inputs [1, 2, 1, 4, 1, 0], inputs_segmentation [1, 1, 1, 2, 2, 0],
      inputs_position [0, 1, 2, 0, 1, 0], targets [3, 1, 5, 6, 1, 0], ...
    """
    del use_custom_ops  # T2T's C++ ops are replaced by the NumPy planner.
    length = check_pack_length(length, window_size)
    spec = dataset.element_spec
    if not isinstance(spec, dict):
        raise ValueError("pack_dataset: the dataset must yield dicts of features, got %r" %
                         (spec,))
    if keys is None:
        keys = sorted(spec)
        already = [k for k in keys if k.endswith(("_segmentation", "_position"))]
        if already:
            raise ValueError("pack_dataset: the dataset is already packed (it has %s); pass "
                             "keys=[...] to pack other features" % ", ".join(already))
    keys = list(keys)
    if not keys:
        raise ValueError("pack_dataset: keys is empty; name at least one feature to pack")
    for key in keys:
        if key not in spec:
            raise ValueError("pack_dataset: no feature %r in the dataset (it has %s); "
                             "fix keys" % (key, ", ".join(sorted(spec))))
        if spec[key].shape.rank != 1:
            raise ValueError("pack_dataset: feature %r has shape %s; only 1-D sequence "
                             "features can be packed" % (key, spec[key].shape))

    if set(keys) == set(spec) and all(spec[k].dtype in (tf.int32, tf.int64) for k in keys):
        # Lengths are read off the padding, so no function runs per example (it would
        # cost more than the packing itself).
        dataset = dataset.padded_batch(window_size, padded_shapes={k: [None] for k in keys},
                                       padding_values={k: padding_sentinel(spec[k].dtype)
                                                       for k in keys})
    else:
        def with_lengths(example):
            features = {k: example[k] for k in keys}
            for k in keys:
                features[k + _LENGTH_SUFFIX] = tf.size(example[k])
            return features

        dataset = dataset.map(with_lengths, num_parallel_calls=tf.data.AUTOTUNE)
        padded_shapes = {k: [None] for k in keys}
        padded_shapes.update({k + _LENGTH_SUFFIX: [] for k in keys})
        dataset = dataset.padded_batch(window_size, padded_shapes=padded_shapes)
    dataset = dataset.map(lambda window: pack_window(window, keys, length),
                          num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return dataset.unbatch()


# ---------------------------------------------------------------------------------------
# T2T 1.15.7's other packing names (exposed from generator_utils), over pack_dataset.
INDEX_DTYPE = tf.int32


def _pack_with_custom_ops(dataset, keys, length):
    """T2T's fast path (a C++ op there); here the same first-fit-decreasing `pack_dataset`."""
    return pack_dataset(dataset, length, keys=keys)


def _chop(dataset, key, length):
    """Split every `key` sequence longer than `length` into pieces of at most `length`."""
    def pieces(example):
        tokens = example[key]
        size = tf.size(tokens)
        count = tf.maximum((size + length - 1) // length, 1)
        padded = tf.pad(tokens, [[0, count * length - size]])
        lengths = tf.minimum(length, size - tf.range(count) * length)
        rows = tf.RaggedTensor.from_tensor(tf.reshape(padded, [count, length]), lengths=lengths)
        return tf.data.Dataset.from_tensor_slices({key: rows})

    return dataset.flat_map(pieces).map(lambda example: {key: example[key]})


class SequenceDatasetPacker:
    """T2T's packer object: `SequenceDatasetPacker(packed_length)(dataset, keys=...)`.

    A dataset of dicts comes back packed as `pack_dataset` packs it ({k, k_segmentation,
    k_position}); a dataset of tuples of 1-D tensors comes back as T2T gave it:
    {"contents": [packed_length, n], "segment": [...], "position": [...]}.

        packer = SequenceDatasetPacker(packed_length=8)
        packer(tf.data.Dataset.from_tensor_slices(...), keys=["targets"])

    `window_size` and `cycle_length` (T2T's parallelism knobs) are accepted; the packing
    is deterministic whatever they are. `spacing` must be 0 (t2t packs segments side by
    side; segment ids keep them apart). With `chop_long_sequences` (one sequence per
    example only, as in T2T) a sequence longer than `packed_length` is split into pieces
    instead of truncated.
    """

    def __init__(self, packed_length=256, spacing=0, queue_size=10, chop_long_sequences=False):
        if spacing:
            raise ValueError("SequenceDatasetPacker: spacing=%r is not supported; use 0 "
                             "(segment ids already keep packed examples apart)" % (spacing,))
        self._packed_length = int(packed_length)
        self._queue_size = queue_size
        self._chop_long_sequences = chop_long_sequences

    def __call__(self, dataset, window_size=None, cycle_length=None, keys=None,
                 deterministic=True):
        del cycle_length, deterministic, window_size  # always deterministic here
        spec = dataset.element_spec
        as_tuple = not isinstance(spec, dict)
        if as_tuple:
            specs = spec if isinstance(spec, tuple) else (spec,)
            names = ["sequence_%d" % i for i in range(len(specs))]
            dataset = dataset.map(lambda *values: dict(zip(names, values)))
            keys = names
        keys = list(keys or sorted(dataset.element_spec))
        if self._chop_long_sequences:
            if len(keys) != 1:
                raise ValueError("SequenceDatasetPacker: chop_long_sequences needs exactly one "
                                 "sequence per example, got %d (%s)" % (len(keys), keys))
            dataset = _chop(dataset, keys[0], self._packed_length)
        packed = pack_dataset(dataset, self._packed_length, keys=keys)
        if not as_tuple:
            return packed

        def to_contents(example):
            def stack(suffix):
                return tf.stack([tf.cast(example[k + suffix], INDEX_DTYPE if suffix else
                                         example[k].dtype) for k in keys], axis=1)
            return {"contents": stack(""), "segment": stack("_segmentation"),
                    "position": stack("_position")}

        return packed.map(to_contents)
