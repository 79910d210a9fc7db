"""Batching for the input pipeline: length buckets, token-sized batches, TPU padding.

`Problem.input_fn` hands its preprocessed per-example dataset to `input_fn` here, which
repeats, filters by length, batches and shapes it for the model (T2T 1.15.7 semantics).

Length bucketing puts examples of similar length in the same batch and sizes each
bucket's batch so that rows x padded length stays within `hparams.batch_size` tokens:

    scheme = batching_scheme(batch_size=4096, max_length=256, min_length_bucket=8,
                             length_bucket_step=1.1)
    scheme["boundaries"]    # [8, 9, 10, ..., 215, 236]   (41 bucket edges)
    scheme["batch_sizes"]   # [420, 420, 315, ..., 18, 15, 15] (42 buckets)

Packed datasets (`hparams.pack_dataset`, see `t2t.data.packing.pack_dataset`) already
hold rows of fixed length and are batched by rows instead.
"""
import bisect
import functools
import multiprocessing
import random
from typing import Dict, List

import tensorflow as tf
from absl import logging

from t2t.data import shard_check
from t2t.data import packing
from t2t.data.packing import pack_dataset  # noqa: F401  (T2T-compatible home of the name)

_TRAIN = "train"
_PREDICT = "infer"

# Lengths are compared against this when long examples are kept (T2T's "no limit").
_NO_MAX_LENGTH = 10**9


def cpu_count() -> int:
    """Number of CPUs (used for parallel map calls), e.g. 2 on a 2-core machine."""
    return multiprocessing.cpu_count()


# --------------------------------------------------------------------------------------
# Batching scheme
# --------------------------------------------------------------------------------------
def _bucket_boundaries(max_length, min_length=8, length_bucket_step=1.1):
    """Bucket edges from `min_length` up to (not including) `max_length`.

    Each edge grows by `length_bucket_step` (at least by 1):
    `_bucket_boundaries(20, 8, 1.2)` -> [8, 9, 10, 12, 14, 16, 19].
    """
    if length_bucket_step <= 1.0:
        raise ValueError("length_bucket_step must be > 1.0, got %r; use e.g. 1.1" %
                         (length_bucket_step,))
    edge = min_length
    boundaries = []
    while edge < max_length:
        boundaries.append(edge)
        edge = max(edge + 1, int(edge * length_bucket_step))
    return boundaries


bucket_boundaries = _bucket_boundaries


def _highly_composite_numbers(limit: int) -> List[int]:
    """Every highly composite number <= limit: [1, 2, 4, 6, 12, 24, 36, 48, 60, 120, ...].

    A highly composite number has more divisors than any smaller number. All of them are
    products of consecutive primes with non-increasing exponents, so only those products
    are enumerated.
    """
    primes: List[int] = []
    product, candidate = 1, 2
    while product <= limit:
        if all(candidate % p for p in primes):
            primes.append(candidate)
            product *= candidate
        candidate += 1
    found = []  # (number, number of divisors)

    def extend(prime_index, value, max_exponent, divisors):
        found.append((value, divisors))
        if prime_index == len(primes):
            return
        for exponent in range(1, max_exponent + 1):
            value *= primes[prime_index]
            if value > limit:
                break
            extend(prime_index + 1, value, exponent, divisors * (exponent + 1))

    extend(0, 1, max(1, limit.bit_length()), 1)
    record, result = 0, []
    for value, divisors in sorted(found):
        if divisors > record:
            record = divisors
            result.append(value)
    return result


def _divisors(number: int) -> List[int]:
    """Sorted divisors, e.g. 12 -> [1, 2, 3, 4, 6, 12]."""
    small, large = [], []
    factor = 1
    while factor * factor <= number:
        if number % factor == 0:
            small.append(factor)
            if factor * factor != number:
                large.append(number // factor)
        factor += 1
    return small + large[::-1]


def batching_scheme(batch_size, max_length, min_length_bucket, length_bucket_step,
                    drop_long_sequences=False, shard_multiplier=1, length_multiplier=1,
                    min_length=0):
    """T2T's length-bucketed batching scheme.

    Args:
      batch_size: tokens per batch (per shard).
      max_length: longest example length; 0 or None means `batch_size`.
      min_length_bucket: first bucket edge.
      length_bucket_step: growth factor between bucket edges (> 1).
      drop_long_sequences: if False the returned `max_length` is 10**9 (keep everything).
      shard_multiplier: number of data shards (GPUs); multiplies batch and window sizes.
      length_multiplier: multiplies the edges and `max_length` (the problem's
        `batch_size_multiplier`).
      min_length: copied to the result.

    Returns:
      {"boundaries", "batch_sizes", "min_length", "max_length", "shuffle_queue_size",
       "window_size"}. `batch_sizes[i]` is `batch_size // edge` for the bucket's upper
      edge (the last bucket uses `max_length`), rounded down to a divisor of the window:
      the largest highly composite number <= 3 x the largest batch size.

    Example: batching_scheme(4096, 256, 8, 1.1) has window 1260, batch sizes 420 for
    lengths below 8 ... 15 for lengths 236-256.
    """
    max_length = max_length or batch_size
    if max_length < min_length:
        raise ValueError("max_length (%d) is below min_length (%d); raise hparams.max_length "
                         "or lower hparams.min_length" % (max_length, min_length))
    boundaries = _bucket_boundaries(max_length, min_length_bucket, length_bucket_step)
    boundaries = [edge * length_multiplier for edge in boundaries]
    max_length *= length_multiplier
    batch_sizes = [max(1, batch_size // edge) for edge in boundaries + [max_length]]
    # bucket_by_sequence_length cuts a window of examples into batches; rounding each
    # batch size to a divisor of one highly composite window size keeps windows whole.
    window_size = _highly_composite_numbers(3 * max(batch_sizes))[-1]
    divisors = _divisors(window_size)
    batch_sizes = [divisors[bisect.bisect_right(divisors, size) - 1] for size in batch_sizes]
    window_size *= shard_multiplier
    batch_sizes = [size * shard_multiplier for size in batch_sizes]
    # One window yields runs of same-sized batches; a queue a few windows deep mixes them.
    shuffle_queue_size = 3 * (window_size // min(batch_sizes))
    return {
        "boundaries": boundaries,
        "batch_sizes": batch_sizes,
        "min_length": min_length,
        "max_length": max_length if drop_long_sequences else _NO_MAX_LENGTH,
        "shuffle_queue_size": shuffle_queue_size,
        "window_size": window_size,
    }


_batching_scheme = batching_scheme


def hparams_to_batching_scheme(hparams, drop_long_sequences=False, shard_multiplier=1,
                               length_multiplier=1):
    """`batching_scheme` from `hparams.batch_size`, `max_length`, `min_length`,
    `min_length_bucket` and `length_bucket_step`.

    Example: basic_params1() with max_length=256 -> the 4096-token scheme above.
    """
    return batching_scheme(
        batch_size=hparams.batch_size,
        min_length=hparams.min_length,
        max_length=hparams.max_length,
        min_length_bucket=hparams.min_length_bucket,
        length_bucket_step=hparams.length_bucket_step,
        drop_long_sequences=drop_long_sequences,
        shard_multiplier=shard_multiplier,
        length_multiplier=length_multiplier)


# --------------------------------------------------------------------------------------
# Per-example and per-batch helpers
# --------------------------------------------------------------------------------------
def example_length(example):
    """Length of an example: the largest first dimension over its features.

    Features of rank > 2 (images) count height x width; scalars are ignored.
    Example: {"inputs": [5 ids], "targets": [7 ids]} -> 7.
    """
    length = None
    for _, value in sorted(example.items()):
        rank = value.shape.rank
        if rank == 0:
            continue
        if rank == 1:
            feature_length = tf.size(value, out_type=tf.int32)  # one op, not shape + slice
        else:
            shape = tf.shape(value)
            feature_length = shape[0] * shape[1] if rank is not None and rank > 2 else shape[0]
        length = feature_length if length is None else tf.maximum(length, feature_length)
    return tf.constant(0, tf.int32) if length is None else length


def example_valid_size(example, min_length, max_length):
    """True when min_length <= example_length(example) <= max_length."""
    length = example_length(example)
    return tf.logical_and(length >= min_length, length <= max_length)


def padded_batch(dataset, batch_size, padded_shapes=None):
    """`dataset.padded_batch`, by default padding every dimension to the longest in batch."""
    padded_shapes = padded_shapes or {
        name: [None] * spec.shape.rank for name, spec in dataset.element_spec.items()}
    return dataset.padded_batch(batch_size, padded_shapes)


_file_num_records_cache: Dict[str, int] = {}


def _file_num_records_cached(filename):
    """Number of records in a TFRecord file, counted once per process.

    A damaged file is a one-line `shard_check.DataFileError` naming it and the fix.
    """
    if filename not in _file_num_records_cache:
        _file_num_records_cache[filename] = shard_check.checked_num_records(filename)
    return _file_num_records_cache[filename]


def skip_random_fraction(dataset, data_file, rng=None):
    """Skips a random number (0..records in `data_file`) of examples at the start.

    Replicas that start together then do not read the same data in lock-step. `rng` is a
    `random.Random` (default: the module-level generator, seeded by `--random_seed`).
    """
    rng = rng or random
    return dataset.skip(rng.randint(0, _file_num_records_cached(data_file)))


def pad_for_tpu(shapes_dict, hparams, max_length):
    """Padded shapes with every unknown dimension set to `max_length`.

    `inputs` / `targets` use `hparams.max_input_seq_length` / `max_target_seq_length`
    instead when set and smaller. Example: {"inputs": [None], "targets": [None, 1]},
    max_length 64 -> {"inputs": [64], "targets": [64, 1]}.
    """
    def filler(specified):
        return min(specified, max_length) if specified else max_length

    fillers = {"inputs": filler(getattr(hparams, "max_input_seq_length", 0)),
               "targets": filler(getattr(hparams, "max_target_seq_length", 0))}
    padded = {}
    for key, shape in shapes_dict.items():
        dims = tf.TensorShape(shape).as_list()
        padded[key] = [dim if dim is not None else fillers.get(key, max_length)
                       for dim in dims]
    return padded


def cast_ints_to_int32(features):
    """int64 and uint8 features become int32 (what the models and TPUs take)."""
    cast = {}
    for key, value in sorted(features.items()):
        if value.dtype in (tf.int64, tf.uint8):
            value = tf.cast(value, tf.int32)
        cast[key] = value
    return cast


def standardize_shapes(features, batch_size=None):
    """Gives a batch the model's shapes: the one place where feature shapes change.

    `inputs` / `targets` become int32 [batch, length, 1, 1] (class labels [batch, 1]
    become [batch, 1, 1, 1]); `*_segmentation`, `*_position` and others keep their shape.
    With `batch_size`, the static batch dimension of every feature is set.

    Example: {"targets": int64 [32, 17]} -> {"targets": int32 [32, 17, 1, 1]}.
    """
    features = cast_ints_to_int32(features)
    for name in ("inputs", "targets"):
        if name not in features:
            continue
        value = features[name]
        if value.shape.rank is None:
            raise ValueError("standardize_shapes: feature %r has unknown rank; give the "
                             "dataset static ranks (e.g. tf.ensure_shape)" % name)
        while value.shape.rank < 4:
            value = tf.expand_dims(value, axis=-1)
        features[name] = value
    if batch_size:
        for name, value in features.items():
            if not value.shape.rank:
                continue
            batch_dim = value.shape[0]
            if batch_dim is not None and batch_dim != batch_size:
                raise ValueError("standardize_shapes: feature %r has batch dimension %d, not "
                                 "%d; batch with drop_remainder=True" %
                                 (name, batch_dim, batch_size))
            value.set_shape([batch_size] + value.shape.as_list()[1:])
    return features


def pad_batch(features, batch_multiple):
    """Pads the batch dimension of every feature with zeros up to a multiple.

    Eval uses it so the last, partial batch still splits evenly over the shards.
    Example: a batch of 5 with batch_multiple 4 becomes 8 rows (3 of zeros).
    """
    first = next(iter(features.values()))
    batch_size = tf.shape(first)[0]
    remainder = batch_size % batch_multiple
    padding = tf.math.floormod(batch_multiple - remainder, batch_multiple)
    padded = {}
    for key, value in features.items():
        rank = value.shape.rank
        if not rank:
            padded[key] = value
            continue
        paddings = tf.concat([[[0, padding]], tf.zeros([rank - 1, 2], tf.int32)], axis=0)
        padded[key] = tf.pad(value, paddings)
    return padded


# --------------------------------------------------------------------------------------
# input_fn
# --------------------------------------------------------------------------------------
def _are_shapes_fully_defined(element_spec):
    return all(spec.shape.is_fully_defined() for spec in element_spec.values())


def _is_packed(element_spec, hparams):
    return bool(getattr(hparams, "pack_dataset", False)) or any(
        key.endswith("_segmentation") for key in element_spec)


def _mode_key(mode):
    """'train' / 'eval' / 'infer' for ModeKeys values or plain strings."""
    return str(mode).lower()


def _use_tpu(params, config):
    if params and hasattr(params, "get") and params.get("use_tpu"):
        return True
    return bool(getattr(config, "use_tpu", False))


def _num_shards(params, config):
    """Data shards (devices): params["num_shards"], config.t2t_device_info, else 1."""
    if params and hasattr(params, "get") and params.get("num_shards"):
        return int(params["num_shards"])
    device_info = getattr(config, "t2t_device_info", None)
    if isinstance(device_info, dict) and device_info.get("num_shards"):
        return int(device_info["num_shards"])
    data_parallelism = getattr(config, "data_parallelism", None)
    if data_parallelism is not None and getattr(data_parallelism, "n", 0):
        return int(data_parallelism.n)
    return 1


def _data_files(filepattern):
    patterns = filepattern if isinstance(filepattern, (list, tuple)) else [filepattern]
    files = []
    for pattern in patterns:
        if pattern:
            files.extend(sorted(tf.io.gfile.glob(pattern)))
    return files


def _tpu_batch_size(params):
    if not params or "batch_size" not in params:
        raise ValueError("input_fn on TPU needs params['batch_size'] (examples per batch over "
                         "all shards); pass it through the TPUEstimator params")
    return int(params["batch_size"])


# Values noted per example before batching (each batched as a [batch] vector) so that the
# sequential stages (filter, group_by_window) only read a feature: a tf.data function runs
# per element otherwise, and costs more (~20 us) than the rest of batching an example.
_HELPER_PREFIX = "_t2t_"
_VALID_KEY = _HELPER_PREFIX + "valid"
_BUCKET_KEY = _HELPER_PREFIX + "bucket"
_LENGTH_PREFIX = _HELPER_PREFIX + "length_"
# Examples measured together by one vectorised function call.
_MEASURE_WINDOW = 32


def _is_valid(features):
    return features[_VALID_KEY]


def _bucket_id(features):
    return features[_BUCKET_KEY]


def _bucket_of(length, boundaries):
    """Number of edges <= length (int64, elementwise): `bucket_by_sequence_length`'s bucket."""
    if boundaries and boundaries[-1] < 2**24:
        # One op (float32 edges: exact for integers below 2**24).
        bucket = tf.raw_ops.Bucketize(input=length, boundaries=[float(b) for b in boundaries])
        return tf.cast(bucket, tf.int64)
    edges = tf.constant(boundaries, tf.int32, shape=[len(boundaries)])
    return tf.reduce_sum(tf.cast(length[..., tf.newaxis] >= edges, tf.int64), axis=-1)


def _can_measure_in_windows(element_spec):
    """True when only the first dimension varies, and only in int features."""
    for spec in element_spec.values():
        if not isinstance(spec, tf.TensorSpec) or spec.shape.rank is None:
            return False
        dims = spec.shape.as_list()
        if None in dims[1:] or (dims and dims[0] is None and
                                spec.dtype not in (tf.int32, tf.int64)):
            return False
    return True


def _measure_window(window, element_spec, widths):
    """Lengths of a window of examples padded with `packing.padding_sentinel`.

    Returns the window (variable features cut to `widths[name]` when given, still padded
    with the sentinel: `_finish_batch` zeroes it once batches are cut to size), each
    variable feature's lengths as `_t2t_length_<name>` and the example lengths
    (`example_length` of each example) as a [window] vector.
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
            features[_LENGTH_PREFIX + name] = length
        else:
            length = tf.fill([count], shape[0])
        features[name] = value
        lengths.append(length * shape[1] if shape.rank > 2 else length)
    example_lengths = tf.reduce_max(tf.stack(lengths), axis=0) if lengths else tf.zeros(
        [count], tf.int32)
    return features, example_lengths


def _prepare_examples(dataset, min_length, max_length, boundaries=None, widths=None):
    """Drops examples outside [min_length, max_length]; with `boundaries`, notes buckets.

    The bucket is the number of edges <= the example's length, as in
    `bucket_by_sequence_length`. `widths` ({feature: width}) also drops examples with a
    feature longer than its width (they could not be padded to it).

    Usually the examples are measured in windows of `_MEASURE_WINDOW` by one vectorised
    call; they then come out padded to their window's longest (cut to `widths`) with
    their true lengths noted, and `_finish_batch(trim=True)` cuts batches back to T2T's
    width (the longest in the batch). Otherwise one function runs per example.
    When there is nothing to check the dataset is returned as is (ints are cast to int32
    per batch, in `_finish_batch`: cheaper, same values).
    """
    widths = widths or {}
    check_length = min_length > 0 or max_length < _NO_MAX_LENGTH or bool(widths)
    if not check_length and boundaries is None:
        return dataset
    spec = dataset.element_spec

    def note(features, example_lengths, feature_lengths):
        if check_length:
            valid = tf.logical_and(example_lengths >= min_length, example_lengths <= max_length)
            for name, width in widths.items():
                valid = tf.logical_and(valid, feature_lengths[name] <= width)
            features[_VALID_KEY] = valid
        if boundaries is not None:
            features[_BUCKET_KEY] = _bucket_of(example_lengths, boundaries)
        return features

    if _can_measure_in_windows(spec):
        def measure(window):
            features, example_lengths = _measure_window(window, spec, widths)
            lengths = {name: features[_LENGTH_PREFIX + name] for name in widths}
            return note(features, example_lengths, lengths)

        padding = {name: (packing.padding_sentinel(s.dtype) if s.shape.rank and
                          s.shape[0] is None else tf.zeros([], s.dtype))
                   for name, s in spec.items()}
        dataset = dataset.padded_batch(_MEASURE_WINDOW, padding_values=padding)
        dataset = dataset.map(measure, num_parallel_calls=tf.data.AUTOTUNE).unbatch()
    else:
        def prepare(example):
            lengths = {name: tf.shape(example[name])[0] for name in widths}
            return note(dict(example), example_length(example), lengths)

        dataset = dataset.map(prepare, num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.filter(_is_valid) if check_length else dataset


def _bucket_by_length(dataset, batch_sizes):
    """Batches examples of the same length bucket: `bucket_by_sequence_length` semantics.

    Same batches as `dataset.bucket_by_sequence_length(example_length, boundaries,
    batch_sizes)`, but the bucket id was noted by `_prepare_examples`, so the sequential
    grouping runs no function per example.
    """
    sizes = tf.constant(batch_sizes, tf.int64)

    def window_size(bucket):
        return tf.gather(sizes, bucket)

    def batch_window(bucket, window):
        return padded_batch(window, tf.gather(sizes, bucket))

    return dataset.group_by_window(_bucket_id, batch_window, window_size_func=window_size)


def _finish_batch(features, batch_size=None, batch_multiple=1, trim=False):
    """Drops helper features, pads the batch to `batch_multiple`, sets model shapes.

    Features measured in windows (with a `_t2t_length_<name>`) are first cut to the
    longest in the batch (with `trim`) and their sentinel padding becomes 0.
    """
    finished = {}
    for name, value in features.items():
        if name.startswith(_HELPER_PREFIX):
            continue
        if _LENGTH_PREFIX + name in features:
            if trim:
                value = value[:, :tf.reduce_max(features[_LENGTH_PREFIX + name])]
            sentinel = packing.padding_sentinel(value.dtype)
            value = tf.where(tf.equal(value, sentinel), tf.zeros_like(value), value)
        finished[name] = value
    if batch_multiple > 1:
        finished = pad_batch(finished, batch_multiple)
    return standardize_shapes(finished, batch_size=batch_size)


def _shapes(dataset):
    return {name: spec.shape for name, spec in dataset.element_spec.items()}


def _variable_widths(element_spec, padded_shapes):
    """{feature: padded width} for features whose length varies (None if not padded)."""
    return {name: (padded_shapes.get(name) or [None])[0]
            for name, spec in element_spec.items()
            if spec.shape.rank and spec.shape[0] is None}


def _static_row_length(element_spec):
    """The common static length of 1-D features (packed on the fly), else None."""
    lengths = {spec.shape[0] for spec in element_spec.values() if spec.shape.rank == 1}
    return lengths.pop() if len(lengths) == 1 and None not in lengths else None


def _batch_packed_rows(dataset, rows, row_length, pad_to_row_length):
    """Packed rows: `rows` per batch, padded to `row_length` (or the longest in batch)."""
    padded_shapes = {}
    for name, spec in dataset.element_spec.items():
        fill = row_length if pad_to_row_length else None
        padded_shapes[name] = [dim if dim is not None else fill for dim in spec.shape.as_list()]
    logging.info("Batching packed rows of length %s: %d rows per batch", row_length, rows)
    return dataset.padded_batch(rows, padded_shapes)


def _split_targets_into_chunks(dataset, chunk_length, max_chunks):
    """Cuts each batch's targets into `max_chunks` chunks of `chunk_length` positions.

    Each chunk becomes its own batch with a `chunk_number` feature (0 for the first
    chunk); other features are repeated; all-padding chunks are dropped.
    """
    total = chunk_length * max_chunks

    def split(features):
        if "chunk_number" in features:
            raise ValueError("split_targets_chunk_length: the features already have "
                             "'chunk_number'; rename that feature")
        targets = features["targets"]
        if targets.shape[1] is not None and targets.shape[1] > total:
            raise ValueError(
                "targets are %d long, more than split_targets_chunk_length x "
                "split_targets_max_chunks = %d; raise split_targets_max_chunks" %
                (targets.shape[1], total))
        length = tf.shape(targets)[1]
        check = tf.debugging.assert_less_equal(
            length, total, message="targets are longer than split_targets_chunk_length x "
                                   "split_targets_max_chunks; raise split_targets_max_chunks")
        with tf.control_dependencies([check]):
            rest = [[0, 0]] * (targets.shape.rank - 2)
            padded = tf.pad(targets, [[0, 0], [0, total - length]] + rest)
        inner = padded.shape.as_list()[2:]
        chunks = tf.reshape(padded, [tf.shape(padded)[0], max_chunks, chunk_length] + inner)
        chunks = tf.transpose(chunks, [1, 0, 2] + list(range(3, 3 + len(inner))))
        chunks.set_shape([max_chunks, targets.shape[0], chunk_length] + inner)
        numbers = tf.reshape(tf.range(max_chunks, dtype=chunks.dtype),
                             [max_chunks] + [1] * (chunks.shape.rank - 1))
        split_features = {"targets": chunks, "chunk_number": tf.ones_like(chunks) * numbers}
        for key, value in features.items():
            if key != "targets":
                split_features[key] = tf.repeat(value[tf.newaxis], max_chunks, axis=0)
        return tf.data.Dataset.from_tensor_slices(split_features)

    dataset = dataset.flat_map(split)
    return dataset.filter(lambda f: tf.reduce_any(tf.not_equal(f["targets"], 0)))


def _stride_chunks(dataset, max_chunks):
    """Regroups chunk batches so one batch mixes chunk numbers (T2T's strided training)."""
    batch_size = dataset.element_spec["targets"].shape[0]
    if batch_size is None:
        raise ValueError("split_targets_strided_training needs a static batch size (the TPU "
                         "path); unset it or train on TPU")
    stride = batch_size * max(1, max_chunks // batch_size) + 1
    dataset = dataset.unbatch().window(batch_size, batch_size, stride, drop_remainder=True)
    return dataset.flat_map(lambda window: tf.data.Dataset.zip(
        {key: rows.batch(batch_size, drop_remainder=True) for key, rows in window.items()}))


def input_fn(dataset, filepattern, skip_random_fraction_when_training,
             batch_size_means_tokens_param, batch_size_multiplier, max_length, mode, hparams,
             data_dir=None, params=None, config=None, force_repeat=False,
             prevent_repeat=False):
    """Batches a per-example dataset for an Estimator (T2T's `data_reader.input_fn`).

    Args:
      dataset: `tf.data.Dataset` of dicts of 1-D tensors (preprocessed examples).
      filepattern: the files `dataset` reads; the first one sizes the random skip.
      skip_random_fraction_when_training: skip a random number of examples when training.
      batch_size_means_tokens_param: the problem's `batch_size_means_tokens`.
      batch_size_multiplier: the problem's `batch_size_multiplier` (scales bucket lengths).
      max_length: the problem's `max_length(hparams)` (examples longer are dropped when
        training, or in eval with `hparams.eval_drop_long_sequences`).
      mode: a `tf.estimator.ModeKeys` value.
      hparams: model hparams (batch_size, min_length, max_length, buckets, ...).
      data_dir: unused, for T2T compatibility.
      params: Estimator params; `use_tpu`, `batch_size` (TPU) and `num_shards` are read.
      config: RunConfig; `use_tpu` and `t2t_device_info["num_shards"]` are read.
      force_repeat: repeat in eval too.
      prevent_repeat: never repeat.

    Returns:
      A dataset of (features, labels) with labels = features["targets"] (features keep
      "targets"); in PREDICT, features only with "targets" renamed "infer_targets".
      Example: train, 4096 tokens -> features["targets"] int32 [B, L, 1, 1] with
      B x L <= 4096.
    """
    del data_dir
    mode = _mode_key(mode)
    is_training = mode == _TRAIN
    use_tpu = _use_tpu(params, config)
    num_shards = _num_shards(params, config)
    if max_length is None:
        max_length = hparams.max_length or hparams.batch_size
    drop_long = is_training or bool(getattr(hparams, "eval_drop_long_sequences", False))
    parallel = tf.data.AUTOTUNE

    if (force_repeat or is_training) and not prevent_repeat:
        dataset = dataset.repeat()
    if is_training and skip_random_fraction_when_training:
        files = _data_files(filepattern)
        if files:
            dataset = skip_random_fraction(dataset, files[0])
        else:
            logging.warning("No files match %r; not skipping a random fraction", filepattern)
    packed = _is_packed(dataset.element_spec, hparams)
    if batch_size_means_tokens_param or packed:
        # Packed rows have static shapes only because they were packed: their batch_size
        # still counts tokens (T2T took it as rows, e.g. 4096 rows of 256 tokens).
        batch_size_means_tokens = True
    elif _are_shapes_fully_defined(dataset.element_spec):
        batch_size_means_tokens = False
    else:
        logging.warning("Shapes are not fully defined; assuming batch_size means tokens.")
        batch_size_means_tokens = True

    min_length = hparams.min_length
    static_batch_size = None
    trim = True  # cut variable features back to the longest in each batch
    batch_multiple = 1  # pad (eval) batches to a multiple of this many examples
    if use_tpu:
        static_batch_size = _tpu_batch_size(params)
        trim = False  # padded to fixed shapes
        if batch_size_means_tokens:
            widths = _variable_widths(dataset.element_spec,
                                      pad_for_tpu(_shapes(dataset), hparams, max_length))
            dataset = _prepare_examples(dataset, min_length, max_length, widths=widths)
            padded_shapes = pad_for_tpu(_shapes(dataset), hparams, max_length)
            if getattr(hparams, "pad_batch", False):
                logging.warning("Padding the last batch with zero examples; metrics of "
                                "non-zero-padded features (e.g. images) may be off.")
                dataset = dataset.padded_batch(static_batch_size, padded_shapes)
                batch_multiple = static_batch_size
            else:
                dataset = dataset.padded_batch(static_batch_size, padded_shapes,
                                               drop_remainder=True)
        else:
            dataset = dataset.batch(static_batch_size, drop_remainder=True)
    elif not batch_size_means_tokens:
        # batch_size counts examples per shard; shapes are static, so no padding.
        dataset = dataset.batch(hparams.batch_size * num_shards)
    else:
        if packed:
            # Rows packed on the fly all have the static packed length (never dropped);
            # rows packed offline vary and follow the usual length rules.
            static_length = _static_row_length(dataset.element_spec)
            row_length = static_length or max_length
            if hparams.use_fixed_batch_size:
                rows = hparams.batch_size * num_shards
            else:
                rows = max(1, hparams.batch_size // row_length) * num_shards
            longest = max_length if (drop_long and not static_length) else _NO_MAX_LENGTH
            widths = {}
            if drop_long and not static_length:
                widths = dict.fromkeys(_variable_widths(dataset.element_spec, {}), max_length)
            dataset = _prepare_examples(dataset, min_length, longest, widths=widths)
            dataset = _batch_packed_rows(dataset, rows, row_length,
                                         pad_to_row_length=bool(static_length) or drop_long)
            trim = not drop_long
        elif hparams.use_fixed_batch_size:
            # batch_size counts examples per shard: a single bucket.
            longest = max_length if drop_long else _NO_MAX_LENGTH
            dataset = _prepare_examples(dataset, min_length, longest)
            dataset = padded_batch(dataset, hparams.batch_size * num_shards)
        else:
            longest = max_length if drop_long else _NO_MAX_LENGTH
            scheme = hparams_to_batching_scheme(
                hparams, shard_multiplier=num_shards, length_multiplier=batch_size_multiplier)
            logging.info("Length buckets %s with batch sizes %s", scheme["boundaries"],
                         scheme["batch_sizes"])
            dataset = _prepare_examples(dataset, min_length, longest, scheme["boundaries"])
            dataset = _bucket_by_length(dataset, scheme["batch_sizes"])
        if not is_training:
            batch_multiple = num_shards
            if hparams.use_fixed_batch_size:
                batch_multiple *= hparams.batch_size  # the last batch keeps the fixed size
            if batch_multiple > 1:
                logging.warning("Padding eval batches to a multiple of %d examples; metrics "
                                "of non-zero-padded features may be off.", batch_multiple)

    dataset = dataset.map(functools.partial(_finish_batch, batch_size=static_batch_size,
                                            batch_multiple=batch_multiple, trim=trim),
                          num_parallel_calls=parallel)
    batch_shuffle_size = getattr(hparams, "batch_shuffle_size", 0)
    if is_training and batch_shuffle_size:
        # Bucketing emits runs of same-length batches; shuffling batches breaks them up.
        dataset = dataset.shuffle(batch_shuffle_size)

    chunk_length = getattr(hparams, "split_targets_chunk_length", 0)
    if chunk_length > 0:
        max_chunks = getattr(hparams, "split_targets_max_chunks", 100)
        dataset = _split_targets_into_chunks(dataset, chunk_length, max_chunks)
        if is_training and getattr(hparams, "split_targets_strided_training", False):
            dataset = _stride_chunks(dataset, max_chunks)

    labels_name = getattr(hparams, "labels_feature_name", "targets")

    def prepare_for_output(features):
        if mode == _PREDICT:
            if "targets" in features:
                features["infer_targets"] = features.pop("targets")
            return features
        return features, features[labels_name]

    dataset = dataset.map(prepare_for_output, num_parallel_calls=parallel)
    return dataset.prefetch(tf.data.AUTOTUNE)
