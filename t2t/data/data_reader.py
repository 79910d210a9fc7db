"""The input pipeline (T2T's `data_reader`): `input_fn` turns a Problem's per-example
dataset into the model's batches.

    input_fn: repeat (training) -> skip a random fraction -> batch with the strategy
    `batching.select_strategy` picks (TPU fixed shapes, example counts, packed rows, a fixed
    batch size, or length buckets with token budgets) -> finish each batch (drop helper
    features, pad eval batches, `standardize_shapes`) -> shuffle batches -> (features, labels)

T2T's batching-scheme names (`batching_scheme`, `hparams_to_batching_scheme`,
`example_length`, `pad_for_tpu`, ...) live in `t2t.data.batching` and are exposed here too.
"""
import functools
import multiprocessing
import random
from typing import Dict

import tensorflow as tf
from absl import logging

from t2t.data import batching, packing, shard_check, windows
from t2t.data.batching import (  # noqa: F401  (T2T's names in data_reader)
    NO_MAX_LENGTH as _NO_MAX_LENGTH, _batching_scheme, _bucket_boundaries, _divisors,
    _highly_composite_numbers, batching_scheme, bucket_boundaries, example_length,
    example_valid_size, hparams_to_batching_scheme, pad_for_tpu, padded_batch)
from t2t.data.input_settings import InputSettings
from t2t.data.record_windows import RecordWindows
from t2t.data.packing import pack_dataset  # noqa: F401  (T2T-compatible home of the name)

_TRAIN = "train"
_PREDICT = "infer"


def cpu_count() -> int:
    """Number of CPUs (used for parallel map calls), e.g. 2 on a 2-core machine."""
    return multiprocessing.cpu_count()


# --------------------------------------------------------------------------------------
# Per-example and per-batch helpers
# --------------------------------------------------------------------------------------
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


def _is_packed(element_spec, settings):
    return settings.pack_dataset or any(
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


def _finish_batch(features, batch_size=None, batch_multiple=1, trim=False):
    """Drops helper features, pads the batch to `batch_multiple`, sets model shapes.

    Features measured in windows (with a `_t2t_length_<name>`) are first cut to the
    longest in the batch (with `trim`) and their sentinel padding becomes 0.
    """
    finished = {}
    for name, value in features.items():
        if name.startswith(windows.HELPER_PREFIX):
            continue
        if windows.LENGTH_PREFIX + name in features:
            if trim:
                value = value[:, :tf.reduce_max(features[windows.LENGTH_PREFIX + name])]
            sentinel = packing.padding_sentinel(value.dtype)
            value = tf.where(tf.equal(value, sentinel), tf.zeros_like(value), value)
        finished[name] = value
    if batch_multiple > 1:
        finished = pad_batch(finished, batch_multiple)
    return standardize_shapes(finished, batch_size=batch_size)


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
      dataset: `tf.data.Dataset` of dicts of 1-D tensors (preprocessed examples), or
        `RecordWindows` (serialized examples that length bucketing and sorted token
        batching parse a window at a time; other strategies read its `examples()`).
      filepattern: the files `dataset` reads; the first one sizes the random skip.
      skip_random_fraction_when_training: skip a random number of examples when training.
      batch_size_means_tokens_param: the problem's `batch_size_means_tokens`.
      batch_size_multiplier: the problem's `batch_size_multiplier` (scales bucket lengths).
      max_length: the problem's `max_length(hparams)` (examples longer are dropped when
        training, or in eval with `hparams.eval_drop_long_sequences`).
      mode: a `ModeKeys` value.
      hparams: model hparams (batch_size, min_length, max_length, buckets, ...); the
        optional ones (`InputSettings`) are read and checked once, here.
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
    settings = InputSettings.from_hparams(hparams)
    mode = _mode_key(mode)
    is_training = mode == _TRAIN
    use_tpu = _use_tpu(params, config)
    num_shards = _num_shards(params, config)
    if max_length is None:
        max_length = hparams.max_length or hparams.batch_size
    drop_long = is_training or settings.eval_drop_long_sequences
    parallel = tf.data.AUTOTUNE

    if (force_repeat or is_training) and not prevent_repeat:
        dataset = dataset.repeat()
    examples_per_epoch = None
    if is_training and skip_random_fraction_when_training:
        files = _data_files(filepattern)
        if files:
            dataset = skip_random_fraction(dataset, files[0])
            # Shards hold about the same number of examples: an estimate for one pass.
            examples_per_epoch = _file_num_records_cached(files[0]) * len(files)
        else:
            logging.warning("No files match %r; not skipping a random fraction", filepattern)
    packed = _is_packed(dataset.element_spec, settings)
    if batch_size_means_tokens_param or packed:
        # Packed rows have static shapes only because they were packed: their batch_size
        # still counts tokens (T2T took it as rows, e.g. 4096 rows of 256 tokens).
        batch_size_means_tokens = True
    elif _are_shapes_fully_defined(dataset.element_spec):
        batch_size_means_tokens = False
    else:
        logging.warning("Shapes are not fully defined; assuming batch_size means tokens.")
        batch_size_means_tokens = True

    tpu_batch_size = _tpu_batch_size(params) if use_tpu else None
    context = batching.BatchingContext(
        hparams=hparams, settings=settings, is_training=is_training,
        min_length=hparams.min_length, max_length=max_length, drop_long=drop_long,
        num_shards=num_shards, length_multiplier=batch_size_multiplier,
        tpu_batch_size=tpu_batch_size, examples_per_epoch=examples_per_epoch)
    strategy = batching.select_strategy(use_tpu, batch_size_means_tokens, packed, hparams,
                                        settings)
    if isinstance(dataset, RecordWindows) and not strategy.reads_record_windows:
        dataset = dataset.examples()
    batches = strategy.batch(dataset, context)
    dataset = batches.dataset
    static_batch_size, batch_multiple, trim = (batches.static_batch_size,
                                               batches.batch_multiple, batches.trim)

    dataset = dataset.map(functools.partial(_finish_batch, batch_size=static_batch_size,
                                            batch_multiple=batch_multiple, trim=trim),
                          num_parallel_calls=parallel)
    if is_training and settings.batch_shuffle_size:
        # Bucketing emits runs of same-length batches; shuffling batches breaks them up.
        dataset = dataset.shuffle(settings.batch_shuffle_size)

    chunk_length = settings.split_targets_chunk_length
    if chunk_length > 0:
        max_chunks = settings.split_targets_max_chunks
        dataset = _split_targets_into_chunks(dataset, chunk_length, max_chunks)
        if is_training and settings.split_targets_strided_training:
            dataset = _stride_chunks(dataset, max_chunks)

    labels_name = settings.labels_feature_name

    def prepare_for_output(features):
        if mode == _PREDICT:
            if "targets" in features:
                features["infer_targets"] = features.pop("targets")
            return features
        return features, features[labels_name]

    dataset = dataset.map(prepare_for_output, num_parallel_calls=parallel)
    return dataset.prefetch(tf.data.AUTOTUNE)
