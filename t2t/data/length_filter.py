"""Drop examples longer than max_length as they are read, before anything buffers them.

The batching strategies drop examples longer than `max_length` (when training, or in
eval with `eval_drop_long_sequences`), but only after the record shuffle buffer and a
window of up to 4,096 examples padded to the window's longest: one record of 2 million
ids made that window [2048, 2,000,000] int64, and a trainer reached 7.8 GB 15 s after its
first step. `Problem.input_fn` drops them here first, so memory is bounded by the batch:

    records = drop_long_records(records, {"targets": tf.io.VarLenFeature(tf.int64)}, 128)
    # a record's targets of more than 128 ids is dropped before any shuffle or window

Only variable-length features count (their length is the first dimension, as
`batching.example_length` measures it); a strategy that keeps long examples (packing on the
fly, fixed shapes) gets no filter (`early_length_limit`). The examples kept are the same
ones the strategy keeps, in the same order.
"""
from typing import Callable, Mapping, Optional

import tensorflow as tf

from t2t.core.modes import ModeKeys
from t2t.data.input_settings import InputSettings

# A serialized record of at most this many bytes per allowed id (plus overhead) is kept
# without parsing: each value of a feature takes at least one byte, so it cannot be far
# too long, and the window that later measures it exactly stays small. Longer records
# (rare) are parsed one at a time to measure them.
_BYTES_PER_ID = 8
_OVERHEAD_BYTES = 1024
# Records checked together (serialized: at most this many big ones are held at once).
_GROUP = 32


def early_length_limit(mode, hparams, max_length) -> Optional[int]:
    """The length above which `input_fn`'s batching drops examples, or None (it keeps them).

    `max_length` is the problem's `max_length(hparams)` (None: hparams' as `input_fn`).
    """
    settings = InputSettings.from_hparams(hparams)
    if mode == ModeKeys.PREDICT or settings.pack_dataset:
        return None  # packed rows take examples of any length
    if mode != ModeKeys.TRAIN and not settings.eval_drop_long_sequences:
        return None
    if max_length is None:
        max_length = hparams.max_length or hparams.batch_size
    return int(max_length)


def _variable_length(lengths: Mapping[str, tf.Tensor]) -> tf.Tensor:
    values = [tf.cast(value, tf.int64) for value in lengths.values()]
    return tf.reduce_max(tf.stack(values)) if values else tf.constant(0, tf.int64)


def drop_long_records(records: tf.data.Dataset, features: Mapping[str, object],
                      max_length: Optional[int],
                      transform: Optional[Callable[[dict], dict]] = None) -> tf.data.Dataset:
    """Serialized examples whose variable-length `features` are at most `max_length` long
    (all of them when `max_length` is None).

    `transform` renames, drops or copies features (`RecordWindows`' transform); it is
    applied to the lengths, so the lengths measured are those of the features batched.
    """
    variable = {name: spec for name, spec in features.items()
                if isinstance(spec, tf.io.VarLenFeature)}
    if not variable or max_length is None:
        return records
    transform = transform or (lambda lengths: lengths)
    small = _BYTES_PER_ID * max_length + _OVERHEAD_BYTES

    def exact_length(serialized):
        parsed = tf.io.parse_single_example(serialized, variable)
        return _variable_length(transform(
            {name: tf.size(value.values) for name, value in parsed.items()}))

    def keep(serialized):  # a group of records: a per-record filter costs 2x the pipeline
        is_small = tf.strings.length(serialized) <= small

        def measure_big():  # one record at a time, so one big record is parsed at once
            big = tf.where(tf.logical_not(is_small))
            lengths = tf.map_fn(exact_length, tf.gather_nd(serialized, big),
                                fn_output_signature=tf.int64, parallel_iterations=1)
            return tf.tensor_scatter_nd_update(is_small, big, lengths <= max_length)

        kept = tf.cond(tf.reduce_all(is_small), lambda: is_small, measure_big)
        return tf.boolean_mask(serialized, kept)

    return records.batch(_GROUP).map(keep).unbatch()


def drop_long_examples(dataset: tf.data.Dataset,
                       max_length: Optional[int]) -> tf.data.Dataset:
    """Parsed examples whose variable-length (1-D, unknown size) features are at most
    `max_length` long (all of them when `max_length` is None)."""
    names = [name for name, spec in dataset.element_spec.items()
             if spec.shape.rank == 1 and spec.shape[0] is None]
    if not names or max_length is None:
        return dataset
    return dataset.filter(lambda example: _variable_length(
        {name: tf.size(example[name]) for name in names}) <= max_length)
