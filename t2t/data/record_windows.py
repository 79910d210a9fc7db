"""Serialized examples parsed a window at a time, for batching without a per-example step.

Most of what a plain `TFRecordDataset -> map(parse_single_example) -> padded_batch` costs
is tf.data's per-element work, not parsing: parsing 126 records at once with
`tf.io.parse_example` straight into a batch is ~8x faster than the per-example pipeline
(bench/bench_batching.py). `RecordWindows` keeps examples serialized until a batching
strategy asks for a window of them, then parses and measures the whole window in one call:

    windows = RecordWindows(tf.data.TFRecordDataset(files),
                            {"inputs": tf.io.VarLenFeature(tf.int64),
                             "targets": tf.io.VarLenFeature(tf.int64)})
    windows.element_spec      # {"inputs": TensorSpec([None], int64), "targets": ...}
    for features, example_lengths in windows.measured_windows(2048, 0, 256):
        features["targets"]                 # int64 [n, longest in window], padded with
                                            # packing.padding_sentinel(int64)
        features["_t2t_length_targets"]     # int32 [n]: each example's targets length
        example_lengths                     # int32 [n]: the longest feature of each

These are the windows `windows.bucket_batches` and `windows.sorted_token_batches` cut into
batches, so the batches are the same as from the per-example dataset `examples()` gives.
`packed()` likewise parses and packs a window at a time (the rows of `pack_dataset`).
Record-level steps (repeat, skip, take, shuffle) act on the serialized records.
"""
from typing import Callable, Mapping, Optional, Sequence

import tensorflow as tf

from t2t.data import packing
from t2t.data.windows import LENGTH_PREFIX

FeatureTransform = Callable[[dict], dict]


class RecordWindows:
    """A dataset of serialized `tf.train.Example`s and how to parse them.

    Args:
      records: a `tf.data.Dataset` of serialized examples (scalar strings).
      features: {name: tf.io.VarLenFeature | tf.io.FixedLenFeature}, as for
        `tf.io.parse_example` (a Problem's `example_reading_spec()` fields).
      transform: applied to every parsed dict (of a window or of one example) before it is
        measured; it may only rename, drop or copy features (e.g. a Problem's
        `maybe_reverse_and_copy`), since it sees a whole window at once.
    """

    def __init__(self, records: tf.data.Dataset, features: Mapping[str, object],
                 transform: Optional[FeatureTransform] = None):
        if records.element_spec != tf.TensorSpec([], tf.string):
            raise ValueError("RecordWindows reads scalar serialized examples, got a dataset "
                             "of %s" % (records.element_spec,))
        for name, spec in features.items():
            if not isinstance(spec, (tf.io.VarLenFeature, tf.io.FixedLenFeature)):
                raise ValueError("RecordWindows parses VarLenFeature or FixedLenFeature, got "
                                 "%s for feature %r" % (type(spec).__name__, name))
        self.records = records
        self.features = dict(features)
        self.transform = transform or (lambda features: features)
        self._element_spec = None

    def _with_records(self, records):
        return RecordWindows(records, self.features, self.transform)

    # Record-level steps, as on a tf.data.Dataset of examples.
    def repeat(self, count=None):
        return self._with_records(self.records.repeat(count))

    def skip(self, count):
        return self._with_records(self.records.skip(count))

    def take(self, count):
        return self._with_records(self.records.take(count))

    def shuffle(self, buffer_size, seed=None):
        return self._with_records(self.records.shuffle(buffer_size, seed=seed))

    def _parse_one(self, serialized):
        parsed = tf.io.parse_single_example(serialized, self.features)
        parsed = {name: tf.sparse.to_dense(value) if isinstance(value, tf.sparse.SparseTensor)
                  else value for name, value in parsed.items()}
        return self.transform(parsed)

    def examples(self) -> tf.data.Dataset:
        """The per-example dataset (dense 1-D tensors for variable features)."""
        return self.records.map(self._parse_one, num_parallel_calls=tf.data.AUTOTUNE)

    @property
    def element_spec(self):
        """The element spec of `examples()`."""
        if self._element_spec is None:
            self._element_spec = self.examples().element_spec
        return self._element_spec

    def _parse_window(self, serialized):
        """(features padded with the sentinel, lengths noted, example lengths) of a window."""
        parsed = self.transform(tf.io.parse_example(serialized, self.features))
        count = tf.shape(serialized)[0]
        features, lengths = {}, []
        for name, value in parsed.items():
            if isinstance(value, tf.sparse.SparseTensor):
                ragged = tf.RaggedTensor.from_sparse(value)
                length = tf.cast(ragged.row_lengths(), tf.int32)
                features[name] = ragged.to_tensor(
                    default_value=packing.padding_sentinel(value.dtype))
                features[LENGTH_PREFIX + name] = length
                lengths.append(length)
                continue
            features[name] = value
            shape = value.shape.as_list()[1:]
            if not shape:
                continue
            # batching.example_length: the first dimension (x the second from rank 3).
            per_example = shape[0] * shape[1] if len(shape) > 2 else shape[0]
            lengths.append(tf.fill([count], per_example))
        example_lengths = (tf.reduce_max(tf.stack(lengths), axis=0) if lengths
                           else tf.zeros([count], tf.int32))
        return features, example_lengths

    def measured_windows(self, window_size: int, min_length: int, max_length: int):
        """Windows of `window_size` examples as `windows.measured_windows` gives them.

        Examples whose length is outside [min_length, max_length] are dropped.
        """
        def parse_and_keep(serialized):
            features, example_lengths = self._parse_window(serialized)
            keep = tf.logical_and(example_lengths >= min_length, example_lengths <= max_length)
            index = tf.reshape(tf.where(keep), [-1])
            return ({name: tf.gather(value, index) for name, value in features.items()},
                    tf.gather(example_lengths, index))

        return self.records.batch(window_size).map(
            parse_and_keep, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)

    def packed(self, length: int, keys: Sequence[str],
               window_size: int = packing.DEFAULT_WINDOW_SIZE) -> tf.data.Dataset:
        """The rows `packing.pack_dataset(self.examples(), length, keys, window_size)`
        gives, with each window of records parsed and packed in one step.

            RecordWindows(records, spec).packed(256, ["inputs", "targets"])
            # {"inputs": [256], "inputs_segmentation": [256], "inputs_position": [256],
            #  "targets": ..., "targets_segmentation": ..., "targets_position": ...}
        """
        length = packing.check_pack_length(length, window_size)
        keys = list(keys)
        spec = self.element_spec
        for key in keys:
            if key not in spec or spec[key].shape.rank != 1:
                raise ValueError("RecordWindows.packed: feature %r is not a 1-D sequence "
                                 "feature of the records (they have %s)"
                                 % (key, ", ".join(sorted(spec))))

        def pack(serialized):
            features, _ = self._parse_window(serialized)
            lengths = {key: features[LENGTH_PREFIX + key] for key in keys
                       if LENGTH_PREFIX + key in features}
            return packing.pack_window(features, keys, length, lengths)

        return self.records.batch(window_size).map(
            pack, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).unbatch()

