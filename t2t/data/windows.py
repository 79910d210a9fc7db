"""Batching a window of examples at a time, with vectorised ops instead of a function per
example.

Examples are read `padded_batch`-ed into windows (padded with `packing.padding_sentinel`,
so each feature's length can be read back), measured in one call per window
(`measure_window`), and then cut into batches:

- `bucket_batches`: T2T's length buckets with the very same batches as
  `tf.data.Dataset.group_by_window` makes them (each batch is the next `batch_sizes[b]`
  examples of bucket b, in arrival order), but grouped with a `scan` over windows that
  carries each bucket's unfinished batch to the next window;
- `sorted_token_batches`: windows sorted by length and cut into token-budget batches
  (fairseq / OpenNMT-tf style, `token_batch_plan`).

Features of the batches keep the window's padding width and sentinel; `_t2t_length_<name>`
features give each example's length so that `data_reader._finish_batch` cuts a batch back
to its longest example and zeroes the padding.
"""
import numpy as np
import tensorflow as tf

from t2t.data import packing

# Features noted per example by the batching machinery; `input_fn` drops them.
HELPER_PREFIX = "_t2t_"
VALID_KEY = HELPER_PREFIX + "valid"
BUCKET_KEY = HELPER_PREFIX + "bucket"
LENGTH_PREFIX = HELPER_PREFIX + "length_"


def bucket_of(length, boundaries):
    """Number of edges <= length (int64, elementwise): `bucket_by_sequence_length`'s bucket.

        bucket_of(tf.constant([3, 8, 9, 40]), [8, 9, 10])   # [0, 1, 2, 3]
    """
    if boundaries and boundaries[-1] < 2**24:
        # One op (float32 edges: exact for integers below 2**24).
        bucket = tf.raw_ops.Bucketize(input=length, boundaries=[float(b) for b in boundaries])
        return tf.cast(bucket, tf.int64)
    edges = tf.constant(boundaries, tf.int32, shape=[len(boundaries)])
    return tf.reduce_sum(tf.cast(length[..., tf.newaxis] >= edges, tf.int64), axis=-1)


def can_measure_in_windows(element_spec):
    """True when only the first dimension varies, and only in int features."""
    for spec in element_spec.values():
        if not isinstance(spec, tf.TensorSpec) or spec.shape.rank is None:
            return False
        dims = spec.shape.as_list()
        if None in dims[1:] or (dims and dims[0] is None and
                                spec.dtype not in (tf.int32, tf.int64)):
            return False
    return True


def window_padding(element_spec):
    """`padded_batch` padding values: the sentinel for variable features, else 0."""
    return {name: (packing.padding_sentinel(spec.dtype) if spec.shape.rank and
                   spec.shape[0] is None else tf.zeros([], spec.dtype))
            for name, spec in element_spec.items()}


def measure_window(window, element_spec, widths):
    """Lengths of a window of examples padded with `packing.padding_sentinel`.

    Returns the window (variable features cut to `widths[name]` when given, still padded
    with the sentinel), each variable feature's lengths as `_t2t_length_<name>` and the
    example lengths (`batching.example_length` of each example) as a [window] vector.
    """
    features, lengths = {}, []
    count = tf.shape(next(iter(window.values())))[0]
    for name, value in window.items():
        shape = element_spec[name].shape
        if shape.rank == 0:
            features[name] = value
            continue
        if shape[0] is None:
            real = tf.not_equal(value, packing.padding_sentinel(value.dtype))
            real_rows = tf.reduce_any(real, axis=list(range(2, shape.rank + 1)))
            length = tf.reduce_sum(tf.cast(real_rows, tf.int32), axis=1)
            if name in widths:
                value = value[:, :widths[name]]
            features[LENGTH_PREFIX + name] = length
        else:
            length = tf.fill([count], shape[0])
        features[name] = value
        lengths.append(length * shape[1] if shape.rank > 2 else length)
    example_lengths = tf.reduce_max(tf.stack(lengths), axis=0) if lengths else tf.zeros(
        [count], tf.int32)
    return features, example_lengths


def _batches_of(features, splits):
    """A dataset of batches: rows splits[b]:splits[b+1] of every feature."""
    return tf.data.Dataset.range(tf.size(splits, out_type=tf.int64) - 1).map(
        lambda b: {name: value[splits[b]:splits[b + 1]] for name, value in features.items()})


def measured_windows(dataset, window_size, min_length, max_length):
    """Windows of measured examples, those outside [min_length, max_length] dropped.

    Yields (features, example_lengths): the window's features padded with the sentinel,
    with `_t2t_length_<name>` for variable ones (`measure_window`), and [n] lengths.
    `record_windows.RecordWindows.measured_windows` gives the same from serialized records.
    """
    spec = dataset.element_spec

    def measure(window):
        features, example_lengths = measure_window(window, spec, {})
        keep = tf.logical_and(example_lengths >= min_length, example_lengths <= max_length)
        features = {name: tf.boolean_mask(value, keep) for name, value in features.items()}
        return features, tf.boolean_mask(example_lengths, keep)

    windows = dataset.padded_batch(window_size, padding_values=window_padding(spec))
    return windows.map(measure, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


# --------------------------------------------------------------------------------------
# T2T's length buckets
# --------------------------------------------------------------------------------------
def _pad_width(value, width, sentinel):
    """value [n, w, ...] padded with `sentinel` to width `width` on axis 1."""
    extra = width - tf.shape(value)[1]
    paddings = [[0, 0], [0, extra]] + [[0, 0]] * (value.shape.rank - 2)
    return tf.pad(value, paddings, constant_values=sentinel)


def bucket_batches(dataset, boundaries, batch_sizes, window_size, min_length, max_length):
    """`group_by_window` bucketing (T2T's), grouped a window at a time.

    A batch of bucket b is the next `batch_sizes[b]` examples of that bucket in arrival
    order, as `group_by_window` forms it; an unfinished batch waits in the scan state for
    the next window, and at the end of finite data each bucket's rest becomes a last,
    smaller batch. Only the order in which batches come out differs from group_by_window
    (window by window, buckets in order), which `input_fn`'s batch shuffle mixes anyway.

        bucket_batches(ds, boundaries=[4], batch_sizes=[3, 2], window_size=8, ...)
        # lengths 2 5 3 6 2 1 -> [2, 3, 2] (bucket 0), [5, 6] (bucket 1), then [1] at the end
    """
    return bucket_batches_of_windows(
        measured_windows(dataset, window_size, min_length, max_length), boundaries,
        batch_sizes)


def bucket_batches_of_windows(windows, boundaries, batch_sizes):
    """`bucket_batches` of windows that `measured_windows` (or RecordWindows) made."""
    sizes = tf.constant(batch_sizes, tf.int64)
    num_buckets = len(batch_sizes)
    variable = {name for name, s in windows.element_spec[0].items()
                if s.shape.rank > 1 and s.shape[1] is None}

    def with_buckets(features, example_lengths):
        features = dict(features)
        features[BUCKET_KEY] = bucket_of(example_lengths, boundaries)
        return features, tf.constant(False)

    def flush_window():
        # An empty window that tells the scan to emit every unfinished batch.
        element = windows.element_spec[0]
        empty = {name: tf.zeros([0] + [0 if d is None else d for d in s.shape.as_list()[1:]],
                                s.dtype) for name, s in element.items()}
        empty[BUCKET_KEY] = tf.zeros([0], tf.int64)
        return tf.data.Dataset.from_tensors((empty, tf.constant(True)))

    def step(waiting, window):
        features, flush = window
        joined = {}
        for name, value in features.items():
            held = waiting[name]
            if name in variable:
                width = tf.maximum(tf.shape(held)[1], tf.shape(value)[1])
                sentinel = packing.padding_sentinel(value.dtype)
                held, value = _pad_width(held, width, sentinel), _pad_width(value, width,
                                                                            sentinel)
            joined[name] = tf.concat([held, value], axis=0)
        buckets = joined[BUCKET_KEY]
        order = tf.argsort(buckets, stable=True)  # by bucket, arrival order within one
        joined = {name: tf.gather(value, order) for name, value in joined.items()}
        buckets = joined[BUCKET_KEY]
        counts = tf.math.bincount(buckets, minlength=num_buckets, maxlength=num_buckets,
                                  dtype=tf.int64)
        full = counts // sizes
        batches = tf.where(flush, full + tf.cast(counts % sizes > 0, tf.int64), full)
        emitted = tf.minimum(batches * sizes, counts)
        starts = tf.cumsum(counts, exclusive=True)
        position = tf.range(tf.size(buckets, out_type=tf.int64)) - tf.gather(starts, buckets)
        out = position < tf.gather(emitted, buckets)
        # Batch b of a bucket holds sizes[bucket] rows (the last, at a flush, the rest).
        rows = tf.repeat(sizes, batches)
        last_rows = tf.where(batches > 0, emitted - (batches - 1) * sizes, 0)
        ends = tf.cumsum(batches)
        rows = tf.tensor_scatter_nd_update(
            rows, tf.reshape(tf.boolean_mask(ends - 1, batches > 0), [-1, 1]),
            tf.boolean_mask(last_rows, batches > 0))
        splits = tf.concat([[0], tf.cumsum(rows)], axis=0)
        held = {name: tf.boolean_mask(value, tf.logical_not(out))
                for name, value in joined.items()}
        sent = {name: tf.boolean_mask(value, out) for name, value in joined.items()
                if name != BUCKET_KEY}
        return held, (sent, splits)

    element = windows.element_spec[0]
    initial = {name: tf.zeros([0] + [0 if d is None else d for d in s.shape.as_list()[1:]],
                              s.dtype) for name, s in element.items()}
    initial[BUCKET_KEY] = tf.zeros([0], tf.int64)
    marked = windows.map(with_buckets).concatenate(flush_window())
    return marked.scan(initial, step).flat_map(_batches_of)


# --------------------------------------------------------------------------------------
# Length-sorted token batches
# --------------------------------------------------------------------------------------
def token_batch_plan(lengths, min_length, max_length, budget, max_rows, multiplier=1):
    """Sort a window of examples by length and cut it into token-budget batches.

    Returns (order, splits): `order` lists the kept examples (min_length <= length <=
    max_length) shortest first (ties in arrival order); batch b is order[splits[b]:
    splits[b+1]]. Each batch is as many rows as fit: rows x longest x `multiplier` <=
    `budget`, at most `max_rows`, at least 1.

        token_batch_plan(np.array([5, 2, 9, 2, 4]), 0, 8, budget=8, max_rows=10)
        # order [1, 3, 4, 0] (lengths 2, 2, 4, 5; the 9 is too long), splits [0, 2, 3, 4]:
        # batches of lengths [2, 2], [4] and [5] (3 x 4 = 12 and 2 x 5 = 10 exceed 8)
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    kept = np.flatnonzero((lengths >= min_length) & (lengths <= max_length))
    order = kept[np.argsort(lengths[kept], kind="stable")]
    costs = lengths[order] * int(multiplier)
    splits = [0]
    start, count = 0, len(order)
    while start < count:
        rows = np.arange(1, min(int(max_rows), count - start) + 1, dtype=np.int64)
        # costs are sorted, so rows x cost of the last row only grows with rows.
        fits = int(np.searchsorted(rows * costs[start:start + len(rows)], budget, "right"))
        start += max(fits, 1)
        splits.append(start)
    return order.astype(np.int64), np.asarray(splits, dtype=np.int64)


def sorted_token_batches(dataset, window_size, min_length, max_length, budget, max_rows,
                         multiplier=1):
    """Token-budget batches cut from length-sorted windows (see `token_batch_plan`)."""
    # The plan drops examples outside [min_length, max_length] itself.
    return sorted_token_batches_of_windows(
        measured_windows(dataset, window_size, 0, MAX_INT32), min_length, max_length,
        budget, max_rows, multiplier)


def sorted_token_batches_of_windows(windows, min_length, max_length, budget, max_rows,
                                    multiplier=1):
    """`sorted_token_batches` of windows that `measured_windows` (or RecordWindows) made."""
    def plan(lengths):
        return token_batch_plan(lengths, min_length, max_length, budget, max_rows, multiplier)

    def cut(features, example_lengths):
        order, splits = tf.numpy_function(plan, [example_lengths], [tf.int64, tf.int64],
                                          stateful=False)
        order, splits = tf.ensure_shape(order, [None]), tf.ensure_shape(splits, [None])
        return _batches_of({name: tf.gather(value, order) for name, value in features.items()},
                           splits)

    return windows.flat_map(cut)


MAX_INT32 = np.iinfo(np.int32).max
