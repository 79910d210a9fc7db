"""How examples become batches: T2T's length-bucketed batching scheme and the five
batching strategies `data_reader.input_fn` chooses from.

Length bucketing puts examples of similar length in the same batch and sizes each
bucket's batch so that rows x padded length stays within `hparams.batch_size` tokens:

    scheme = batching_scheme(batch_size=4096, max_length=256, min_length_bucket=8,
                             length_bucket_step=1.1)
    scheme["boundaries"]    # [8, 9, 10, ..., 215, 236]   (41 bucket edges)
    scheme["batch_sizes"]   # [420, 420, 315, ..., 18, 15, 15] (42 buckets)

Which strategy batches a dataset (`select_strategy`):

    | when                                                   | strategy            |
    |--------------------------------------------------------|---------------------|
    | on TPU (static shapes, params["batch_size"] examples)  | `TpuFixedShapes`    |
    | batch_size counts examples (all shapes static)         | `ExampleCount`      |
    | packed rows (settings.pack_dataset or *_segmentation)  | `PackedRows`        |
    | hparams.use_fixed_batch_size                           | `FixedBatchSize`    |
    | settings.token_batching == "sorted"                    | `SortedTokenBatches`|
    | otherwise: batch_size counts tokens                    | `LengthBuckets`     |

(`settings` are the optional hparams `InputSettings.from_hparams` read, once, in `input_fn`.)
Each strategy takes the per-example dataset and a `BatchingContext` and returns `Batches`:
the batched dataset and how `input_fn` finishes its batches (static batch size, eval
padding to a multiple, trimming). A strategy is self-contained, so a faster one can
replace another without touching `input_fn`.
"""
import abc
import bisect
import dataclasses
from typing import Any, List, Optional

import tensorflow as tf
from absl import logging

from t2t.core.log_once import info_once
from t2t.data import windows
from t2t.data.input_settings import InputSettings
from t2t.data.record_windows import RecordWindows
from t2t.data.windows import (
    BUCKET_KEY, LENGTH_PREFIX, VALID_KEY, bucket_of, can_measure_in_windows, measure_window,
    window_padding)

# Lengths are compared against this when long examples are kept (T2T's "no limit").
NO_MAX_LENGTH = 10**9


# --------------------------------------------------------------------------------------
# T2T's batching scheme
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
        "max_length": max_length if drop_long_sequences else NO_MAX_LENGTH,
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
# Per-example helpers
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


def pad_for_tpu(shapes_dict, hparams, max_length):
    """Padded shapes with every unknown dimension set to `max_length`.

    `inputs` / `targets` use `hparams.max_input_seq_length` / `max_target_seq_length`
    instead when set and smaller. Example: {"inputs": [None], "targets": [None, 1]},
    max_length 64 -> {"inputs": [64], "targets": [64, 1]}. `hparams` may be model
    hparams or their `InputSettings`.
    """
    settings = hparams if isinstance(hparams, InputSettings) else (
        InputSettings.from_hparams(hparams))
    return _tpu_padded_shapes(shapes_dict, settings, max_length)


def _tpu_padded_shapes(shapes_dict, settings, max_length):
    """`pad_for_tpu` with the settings already read."""
    def filler(specified):
        return min(specified, max_length) if specified else max_length

    fillers = {"inputs": filler(settings.max_input_seq_length),
               "targets": filler(settings.max_target_seq_length)}
    padded = {}
    for key, shape in shapes_dict.items():
        dims = tf.TensorShape(shape).as_list()
        padded[key] = [dim if dim is not None else fillers.get(key, max_length)
                       for dim in dims]
    return padded


# --------------------------------------------------------------------------------------
# Measuring and filtering examples before batching
# --------------------------------------------------------------------------------------
# Examples measured together by one vectorised function call.
_MEASURE_WINDOW = 32


def _is_valid(features):
    return features[VALID_KEY]


def _bucket_id(features):
    return features[BUCKET_KEY]


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
    check_length = min_length > 0 or max_length < NO_MAX_LENGTH or bool(widths)
    if not check_length and boundaries is None:
        return dataset
    spec = dataset.element_spec

    def note(features, example_lengths, feature_lengths):
        if check_length:
            valid = tf.logical_and(example_lengths >= min_length, example_lengths <= max_length)
            for name, width in widths.items():
                valid = tf.logical_and(valid, feature_lengths[name] <= width)
            features[VALID_KEY] = valid
        if boundaries is not None:
            features[BUCKET_KEY] = bucket_of(example_lengths, boundaries)
        return features

    if can_measure_in_windows(spec):
        def measure(window):
            features, example_lengths = measure_window(window, spec, widths)
            lengths = {name: features[LENGTH_PREFIX + name] for name in widths}
            return note(features, example_lengths, lengths)

        dataset = dataset.padded_batch(_MEASURE_WINDOW, padding_values=window_padding(spec))
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
    info_once("Batching packed rows of length %s: %d rows per batch", row_length, rows)
    return dataset.padded_batch(rows, padded_shapes)


# --------------------------------------------------------------------------------------
# The strategies
# --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class BatchingContext:
    """What the strategies read, gathered once by `input_fn`.

    Attributes:
      hparams: model hparams every set has (batch_size, use_fixed_batch_size, min_length,
        min_length_bucket, length_bucket_step, ...).
      settings: the optional hparams (`InputSettings`: pad_batch, max_*_seq_length, ...).
      is_training: TRAIN mode (eval batches get padded to a multiple of the shards).
      min_length, max_length: examples outside are dropped when `drop_long` (max) / always
        (min); max_length is the problem's `max_length(hparams)`.
      drop_long: drop examples longer than max_length (training, or
        settings.eval_drop_long_sequences).
      num_shards: data shards (devices); batch sizes are per shard.
      length_multiplier: the problem's `batch_size_multiplier` (scales bucket lengths).
      tpu_batch_size: examples per batch over all shards on TPU (params["batch_size"]).
      examples_per_epoch: about how many examples one pass over the data holds, when known
        (strategies that sort windows keep a window within one epoch of repeated data).
    """
    hparams: Any
    settings: InputSettings
    is_training: bool
    min_length: int
    max_length: int
    drop_long: bool
    num_shards: int = 1
    length_multiplier: int = 1
    tpu_batch_size: Optional[int] = None
    examples_per_epoch: Optional[int] = None

    @property
    def longest(self):
        """The longest example kept."""
        return self.max_length if self.drop_long else NO_MAX_LENGTH


@dataclasses.dataclass(frozen=True)
class Batches:
    """A strategy's result: batches, and how `input_fn` finishes each one.

    static_batch_size: set as every feature's static batch dimension (TPU).
    batch_multiple: pad the batch dimension with zero examples to a multiple of this.
    trim: cut variable-length features back to the longest in each batch.
    """
    dataset: tf.data.Dataset
    static_batch_size: Optional[int] = None
    batch_multiple: int = 1
    trim: bool = True


class BatchingStrategy(abc.ABC):
    """Turns a dataset of examples into a dataset of batches.

    A strategy whose `reads_record_windows` is True also batches `RecordWindows` (examples
    still serialized, parsed a window at a time); the others get `examples()` of them.
    """

    reads_record_windows = False

    @abc.abstractmethod
    def batch(self, dataset: tf.data.Dataset, context: BatchingContext) -> Batches:
        """The batches of `dataset` (dicts of per-example tensors)."""


def _eval_batch_multiple(context, examples_per_batch=1):
    """Eval batches are padded to a multiple of the shards (x a fixed batch size)."""
    if context.is_training:
        return 1
    multiple = context.num_shards * examples_per_batch
    if multiple > 1:
        logging.warning("Padding eval batches to a multiple of %d examples; metrics of "
                        "non-zero-padded features may be off.", multiple)
    return multiple


class TpuFixedShapes(BatchingStrategy):
    """TPU: `params["batch_size"]` examples per batch, every shape static.

    Variable features are padded to `max_length` (`pad_for_tpu`; inputs/targets to
    `max_input_seq_length` / `max_target_seq_length` when set); examples outside
    [min_length, max_length] or wider than their padding are dropped; the last partial
    batch is dropped, or with `settings.pad_batch` filled with zero examples. Example:
    batch 8, max_length 64 -> {"targets": [8, 64]} batches.
    """

    def __init__(self, counts_tokens: bool):
        self.counts_tokens = counts_tokens

    def batch(self, dataset, context):
        batch_size = context.tpu_batch_size
        if not self.counts_tokens:
            return Batches(dataset.batch(batch_size, drop_remainder=True),
                           static_batch_size=batch_size, trim=False)
        settings, max_length = context.settings, context.max_length
        widths = _variable_widths(dataset.element_spec,
                                  _tpu_padded_shapes(_shapes(dataset), settings, max_length))
        dataset = _prepare_examples(dataset, context.min_length, max_length, widths=widths)
        padded_shapes = _tpu_padded_shapes(_shapes(dataset), settings, max_length)
        if settings.pad_batch:
            logging.warning("Padding the last batch with zero examples; metrics of "
                            "non-zero-padded features (e.g. images) may be off.")
            return Batches(dataset.padded_batch(batch_size, padded_shapes),
                           static_batch_size=batch_size, batch_multiple=batch_size, trim=False)
        return Batches(dataset.padded_batch(batch_size, padded_shapes, drop_remainder=True),
                       static_batch_size=batch_size, trim=False)


class ExampleCount(BatchingStrategy):
    """`hparams.batch_size` counts examples per shard and every shape is static: no padding.

    Example: batch_size 32 on 2 shards -> batches of 64 examples.
    """

    def batch(self, dataset, context):
        return Batches(dataset.batch(context.hparams.batch_size * context.num_shards))


class PackedRows(BatchingStrategy):
    """Rows packed on the fly (static length) or offline (variable): batch_size counts tokens.

    Rows per batch = batch_size // row length (x shards), or batch_size rows with
    `use_fixed_batch_size`. Rows packed on the fly are never dropped; rows packed offline
    follow the usual length rules. Example: batch_size 4096, rows of 256 -> 16 rows.
    """

    def batch(self, dataset, context):
        hparams, num_shards = context.hparams, context.num_shards
        static_length = _static_row_length(dataset.element_spec)
        row_length = static_length or context.max_length
        if hparams.use_fixed_batch_size:
            rows = hparams.batch_size * num_shards
        else:
            rows = max(1, hparams.batch_size // row_length) * num_shards
        check_long = context.drop_long and not static_length
        widths = {}
        if check_long:
            widths = dict.fromkeys(_variable_widths(dataset.element_spec, {}),
                                   context.max_length)
        dataset = _prepare_examples(dataset, context.min_length,
                                    context.max_length if check_long else NO_MAX_LENGTH,
                                    widths=widths)
        dataset = _batch_packed_rows(dataset, rows, row_length,
                                     pad_to_row_length=bool(static_length) or context.drop_long)
        examples = hparams.batch_size if hparams.use_fixed_batch_size else 1
        return Batches(dataset, batch_multiple=_eval_batch_multiple(context, examples),
                       trim=not context.drop_long)


class FixedBatchSize(BatchingStrategy):
    """`hparams.use_fixed_batch_size`: batch_size examples per shard in a single bucket,
    padded to the longest in each batch. Example: batch_size 16 -> [16, longest] batches."""

    def batch(self, dataset, context):
        batch_size = context.hparams.batch_size
        dataset = _prepare_examples(dataset, context.min_length, context.longest)
        dataset = padded_batch(dataset, batch_size * context.num_shards)
        return Batches(dataset, batch_multiple=_eval_batch_multiple(context, batch_size))


class LengthBuckets(BatchingStrategy):
    """T2T's bucketing: examples grouped by length bucket, each bucket's batch sized so
    rows x bucket length stays within `hparams.batch_size` tokens (`batching_scheme`).

    The batches are group_by_window's, formed a window of `window_size` examples at a time
    with vectorised ops (`windows.bucket_batches`), so no function runs per example.
    Example: batch_size 4096, max_length 256 -> 420 rows of length < 8 ... 15 rows of
    length 236-256 per batch.
    """

    reads_record_windows = True

    def __init__(self, window_size: int = 2048):
        self.window_size = window_size

    def batch(self, dataset, context):
        scheme = hparams_to_batching_scheme(context.hparams, shard_multiplier=context.num_shards,
                                            length_multiplier=context.length_multiplier)
        info_once("Length buckets %s with batch sizes %s", scheme["boundaries"],
                  scheme["batch_sizes"])
        if can_measure_in_windows(dataset.element_spec):
            dataset = windows.bucket_batches_of_windows(
                measured_windows(dataset, self.window_size, context.min_length,
                                 context.longest),
                scheme["boundaries"], scheme["batch_sizes"])
        else:  # e.g. float sequences: one function per example, then group_by_window
            if isinstance(dataset, RecordWindows):
                dataset = dataset.examples()
            dataset = _prepare_examples(dataset, context.min_length, context.longest,
                                        scheme["boundaries"])
            dataset = _bucket_by_length(dataset, scheme["batch_sizes"])
        return Batches(dataset, batch_multiple=_eval_batch_multiple(context))


class SortedTokenBatches(BatchingStrategy):
    """Token-budget batches cut from length-sorted windows (as fairseq and OpenNMT-tf do);
    `hparams.token_batching = "sorted"` (`settings.token_batching`) selects it.

    `window_size` examples are read together, sorted by length and cut into batches of
    rows x longest <= `hparams.batch_size` tokens (x shards; lengths x the problem's
    `batch_size_multiplier`), at most `batch_size // min_length_bucket` rows. Sorting by the
    exact length pads less than T2T's buckets, but each batch then holds examples of one
    length (the demo's tiny model trained a little worse on them). On repeated training
    data a window never spans more than one epoch (`context.examples_per_epoch`, at least
    256 examples): a window over several copies of a small dataset would put copies of one
    example in one batch. Example: lengths [5, 2, 9, 2, 4] in one window, 8 tokens a batch,
    max_length 8 -> batches of lengths [2, 2], [4], [5].
    """

    MIN_WINDOW_SIZE = 256
    reads_record_windows = True

    def __init__(self, window_size: int = 4096):
        self.window_size = window_size

    def window_for(self, context):
        """Examples per window: `window_size`, or one epoch if that is smaller."""
        if context.examples_per_epoch:
            return max(self.MIN_WINDOW_SIZE, min(self.window_size, context.examples_per_epoch))
        return self.window_size

    def batch(self, dataset, context):
        if not can_measure_in_windows(dataset.element_spec):
            return LengthBuckets().batch(dataset, context)
        hparams, shards = context.hparams, context.num_shards
        max_rows = max(1, hparams.batch_size // max(1, hparams.min_length_bucket)) * shards
        # The plan drops examples outside [min_length, longest] itself.
        dataset = windows.sorted_token_batches_of_windows(
            measured_windows(dataset, self.window_for(context), 0, windows.MAX_INT32),
            context.min_length, context.longest, budget=hparams.batch_size * shards,
            max_rows=max_rows, multiplier=context.length_multiplier)
        return Batches(dataset, batch_multiple=_eval_batch_multiple(context))


def measured_windows(dataset, window_size, min_length, max_length):
    """Measured windows of a per-example dataset or of `RecordWindows`."""
    if isinstance(dataset, RecordWindows):
        return dataset.measured_windows(window_size, min_length, max_length)
    return windows.measured_windows(dataset, window_size, min_length, max_length)


def select_strategy(use_tpu: bool, batch_size_means_tokens: bool, packed: bool,
                    hparams, settings: Optional[InputSettings] = None) -> BatchingStrategy:
    """The strategy for a dataset (see the table in this module's docstring).

    `settings`: `InputSettings.from_hparams(hparams)` when the caller has read them.
    """
    if settings is None:
        settings = InputSettings.from_hparams(hparams)
    if use_tpu:
        return TpuFixedShapes(counts_tokens=batch_size_means_tokens)
    if not batch_size_means_tokens:
        return ExampleCount()
    if packed:
        return PackedRows()
    if hparams.use_fixed_batch_size:
        return FixedBatchSize()
    if settings.token_batching == "sorted":
        return SortedTokenBatches()
    return LengthBuckets()
