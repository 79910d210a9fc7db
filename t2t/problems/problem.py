"""The `Problem` base class: one dataset's generation, reading, hparams and metrics.

A Problem writes sharded TFRecord files of `tf.train.Example`s and reads them back
as a `tf.data.Dataset` of feature dicts:

    @registry.register_problem
    class MyCopy(Problem):
        def generate_data(self, data_dir, tmp_dir, task_id=-1):
            generator_utils.generate_dataset_and_shuffle(
                ({"inputs": [3, 4, 1], "targets": [3, 4, 1]} for _ in range(8)),
                self.training_filepaths(data_dir, 2, shuffled=True),
                ({"inputs": [5, 1], "targets": [5, 1]} for _ in range(2)),
                self.dev_filepaths(data_dir, 1, shuffled=True), shuffle=False)

    p = registry.problem("my_copy")
    p.training_filepaths("/d", 2, shuffled=True)
    # ['/d/my_copy-train-00000-of-00002', '/d/my_copy-train-00001-of-00002']
    ds = p.dataset(ModeKeys.EVAL, data_dir="/d")
    next(iter(ds))["inputs"]            # <tf.Tensor: [5, 1], dtype=int64>

`registry.problem("my_copy_rev")` gives the same Problem with inputs and targets
swapped (`was_reversed`), `"..._copy"` one whose targets are its inputs (`was_copy`).
"""
import collections
import functools
import multiprocessing
import os
import random

from absl import logging
import tensorflow as tf

from t2t.core import errors
from t2t.core.modes import ModeKeys
from t2t.data import batching, data_reader, generator_utils, length_filter, packing, shard_check
from t2t.data.input_settings import InputSettings
from t2t.data.record_windows import RecordWindows
from t2t.data.tf1_datasets import tf1_dataset
from t2t.encoders import text_encoder
from t2t.evaluation import metrics
from t2t.problems.preprocessing import (  # noqa: F401  (T2T's names in problem.py)
    default_model_hparams, preprocess_example_common, preprocessing_is_identity)
from t2t.problems.problem_hparams_schema import (  # noqa: F401  (T2T's names in problem.py)
    add_encoder_hparams, copy_problem_hparams, default_problem_hparams,
    problem_hparams_to_features, reverse_problem_hparams)
from t2t.problems.spaces import DatasetSplit, SpaceID, TaskID  # noqa: F401

_TRAIN = ModeKeys.TRAIN
_EVAL = ModeKeys.EVAL
_PREDICT = ModeKeys.PREDICT


def _read_files(data_files, load, shuffle_files):
    """`load(files)` of all files, or interleaved file by file (in parallel) when shuffled.

    The interleave keeps a fixed order (`tf.data.Options.deterministic`, default True), so
    a seeded run reads the same examples in the same order every time; T2T read the files
    "sloppily", in whatever order its threads finished, which made training unrepeatable.
    """
    if not shuffle_files:
        return load(data_files)
    files = tf.data.Dataset.from_tensor_slices(tf.constant(data_files))
    return files.interleave(load, cycle_length=min(8, len(data_files)),
                            num_parallel_calls=tf.data.AUTOTUNE)


def cpu_count():
    """The number of available cores."""
    return multiprocessing.cpu_count()


# What `serving_input_fn` returns: the fields of tf.estimator's ServingInputReceiver that
# t2t's exporter reads (a lone receiver tensor is named "input", as there), without
# tf.estimator (TF 2.16+ has none).
ServingInputReceiver = collections.namedtuple("ServingInputReceiver",
                                              ["features", "receiver_tensors"])


class FeatureInfo:
    """What is known about one feature: modality type, vocab size, encoder, space id."""

    def __init__(self, encoder=None, modality=None, vocab_size=None, space_id=None):
        self.encoder = encoder
        self.modality = modality
        self.vocab_size = vocab_size
        self.space_id = space_id

    def __repr__(self):
        return "FeatureInfo(modality=%r, vocab_size=%r, space_id=%r, encoder=%s)" % (
            self.modality, self.vocab_size, self.space_id, type(self.encoder).__name__)


class Problem:
    """A dataset: how to generate it, read it, and what the model sees of it.

    Subclasses override, as in T2T:
      * `generate_data(data_dir, tmp_dir, task_id=-1)`: write the files named by
        `training_filepaths` / `dev_filepaths` (and vocab files) into data_dir;
      * `hparams(defaults, model_hparams)`: set modalities, vocab sizes, space ids;
      * `example_reading_spec()`, `preprocess_example(example, mode, hparams)`;
      * `eval_metrics()`; `feature_encoders(data_dir)` for decoding.
    `Problem.name` is set by `registry.register_problem`.
    """

    name = None  # set by the registry

    def __init__(self, was_reversed=False, was_copy=False):
        """was_reversed swaps inputs and targets; was_copy makes targets a copy of inputs.

        Both may be set: the targets become the inputs and are then copied to the
        targets, so the task is targets -> targets.
        """
        self._was_reversed = was_reversed
        self._was_copy = was_copy
        self._encoders = None
        self._hparams = None
        self._feature_info = None
        self._task_id = -1
        self._next_partition_id = 0

    # ==========================================================================
    # Subclass interface
    # ==========================================================================
    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        raise NotImplementedError(
            "problem %s does not generate data; override generate_data" % self.name)

    @property
    def multiprocess_generate(self):
        """Whether datagen may run `generate_data` as parallel tasks."""
        return False

    @property
    def num_generate_tasks(self):
        """The number of tasks when `multiprocess_generate` is True."""
        raise NotImplementedError()

    @property
    def num_training_examples(self):
        """How many training examples there are (used when mixing problems)."""
        raise NotImplementedError()

    def prepare_to_generate(self, data_dir, tmp_dir):
        """One-off work before parallel generation (downloads, vocab)."""
        raise NotImplementedError()

    def hparams(self, defaults, model_hparams):
        """Mutate `defaults` (see `_default_hparams`) in place; return None."""
        pass

    def max_length(self, model_hparams):
        """Longest sequence: split_to_length, else max_length, else batch_size."""
        return (model_hparams.split_to_length or model_hparams.max_length or
                model_hparams.batch_size)

    def tpu_batch_size_per_shard(self, model_hparams):
        """Examples per TPU core: batch_size // max_length when it counts tokens."""
        if self.batch_size_means_tokens and not model_hparams.use_fixed_batch_size:
            return model_hparams.batch_size // self.max_length(model_hparams)
        return model_hparams.batch_size

    @property
    def batch_size_means_tokens(self):
        """True when hparams.batch_size counts tokens rather than examples."""
        return False

    @property
    def skip_random_fraction_when_training(self):
        """Skip a random fraction of the stream at the start of training.

        Keeps synchronous replicas from reading the same data in lock-step.
        """
        return True

    def dataset_filename(self):
        """The file name prefix of this problem's data files."""
        return self.name

    def feature_encoders(self, data_dir):
        del data_dir
        return {"inputs": text_encoder.TextEncoder(), "targets": text_encoder.TextEncoder()}

    def example_reading_spec(self):
        """(data_fields, data_items_to_decoders): how examples are stored on disk.

        data_items_to_decoders is kept for T2T compatibility: None, or a dict
        {output name: callable(parsed feature dict) -> Tensor}.
        """
        data_fields = {"inputs": tf.io.VarLenFeature(tf.int64),
                       "targets": tf.io.VarLenFeature(tf.int64)}
        return data_fields, None

    def preprocess_example(self, example, mode, hparams):
        """Runtime preprocessing of one example: a dict, or a Dataset of dicts."""
        return preprocess_example_common(example, mode, hparams)

    def eval_metrics(self):
        return ["accuracy", "accuracy_top5", "accuracy_per_sequence", "neg_log_perplexity"]

    @property
    def all_metrics_fns(self):
        return metrics.METRICS_FNS

    def eval_metric_fns(self, model_hparams):
        """{metric name: metric fn} for `eval_metrics()`."""
        del model_hparams
        known = self.all_metrics_fns
        names = self.eval_metrics()
        unknown = [name for name in names if name not in known]
        if unknown:
            raise ValueError("problem %s asks for unknown metrics %s; known metrics: %s" %
                             (self.name, unknown, sorted(known)))
        return {name: known[name] for name in names}

    def eval_hooks(self, features, logits, hparams):
        del features, logits, hparams
        return []

    @property
    def decode_hooks(self):
        """Functions run on full decodes, each given a decoding.DecodeHookArgs."""
        return []

    @property
    def export_assets(self):
        """{name: path} of files (e.g. vocabularies) to export with a model, or None."""
        return None

    @property
    def task_id(self):
        if self._task_id == -1 and hasattr(self, "global_task_id"):
            self._task_id = self.global_task_id()
        return self._task_id

    def set_task_id(self, new_task_id):
        self._task_id = new_task_id

    # ==========================================================================
    # File names
    # ==========================================================================
    def _basename(self, shuffled):
        basename = self.dataset_filename()
        return basename if shuffled else basename + generator_utils.UNSHUFFLED_SUFFIX

    def training_filepaths(self, data_dir, num_shards, shuffled):
        """[".../<name>[-unshuffled]-train-00000-of-00010", ...]."""
        return generator_utils.train_data_filenames(
            self._basename(shuffled), data_dir, num_shards)

    def dev_filepaths(self, data_dir, num_shards, shuffled):
        return generator_utils.dev_data_filenames(self._basename(shuffled), data_dir, num_shards)

    def test_filepaths(self, data_dir, num_shards, shuffled):
        return generator_utils.test_data_filenames(self._basename(shuffled), data_dir, num_shards)

    def data_filepaths(self, split, output_dir, num_shards, shuffled):
        if split == DatasetSplit.TRAIN:
            return self.training_filepaths(output_dir, num_shards, shuffled)
        if split == DatasetSplit.EVAL:
            return self.dev_filepaths(output_dir, num_shards, shuffled)
        if split == DatasetSplit.TEST:
            return self.test_filepaths(output_dir, num_shards, shuffled)
        raise ValueError("unknown dataset split %r; use one of train, eval, test" % (split,))

    def filepattern(self, data_dir, mode, shard=None):
        """"<data_dir>/<name>-{train|dev|test}[-<shard>]*"; PREDICT reads dev.

            p.filepattern("/d", "train")           # "/d/my_copy-train*"
            p.filepattern("/d", "infer", shard=3)  # "/d/my_copy-dev-00003*"
        """
        path = os.path.join(data_dir, self.dataset_filename())
        shard_str = "-%05d" % shard if shard is not None else ""
        if mode == DatasetSplit.TRAIN:
            suffix = "train"
        elif mode in (DatasetSplit.EVAL, _PREDICT):
            suffix = "dev"
        elif mode == DatasetSplit.TEST:
            suffix = "test"
        else:
            raise ValueError("unknown mode %r; use train, eval, infer or test" % (mode,))
        return "%s-%s%s*" % (path, suffix, shard_str)

    # ==========================================================================
    # Hparams, encoders, feature info
    # ==========================================================================
    @property
    def was_reversed(self):
        return self._was_reversed

    @property
    def was_copy(self):
        return self._was_copy

    def get_feature_encoders(self, data_dir=None):
        if self._encoders is None:
            self._encoders = self.feature_encoders(data_dir)
        return self._encoders

    def get_hparams(self, model_hparams=None):
        """The problem hparams (cached after the first call)."""
        if self._hparams is not None:
            return self._hparams
        if model_hparams is None:
            model_hparams = default_model_hparams()
        if self._encoders is None:
            data_dir = getattr(model_hparams, "data_dir", None) or None
            self.get_feature_encoders(data_dir)

        hp = default_problem_hparams()
        if self.hparams(hp, model_hparams) is not None:
            raise ValueError("%s.hparams must change the defaults it is given and return None" %
                             type(self).__name__)
        add_encoder_hparams(hp, self._encoders, self._was_reversed, self._was_copy)
        if self._was_reversed:
            reverse_problem_hparams(hp)
        if self._was_copy:
            copy_problem_hparams(hp)
        self._hparams = hp
        return hp

    def maybe_reverse_features(self, feature_map):
        """Swap inputs and targets (and their _segmentation/_position) if reversed."""
        if not self._was_reversed:
            return
        swapped = {}
        for suffix in ("", "_segmentation", "_position"):
            inputs = feature_map.pop("inputs" + suffix, None)
            targets = feature_map.pop("targets" + suffix, None)
            if inputs is not None:
                swapped["targets" + suffix] = inputs
            if targets is not None:
                swapped["inputs" + suffix] = targets
        feature_map.update(swapped)

    def maybe_copy_features(self, feature_map):
        """Make the targets a copy of the inputs if this is a `_copy` problem."""
        if not self._was_copy:
            return
        feature_map["targets"] = feature_map["inputs"]
        for suffix in ("_segmentation", "_position"):
            if "inputs" + suffix in feature_map and "targets" + suffix not in feature_map:
                feature_map["targets" + suffix] = feature_map["inputs" + suffix]

    def maybe_reverse_and_copy(self, example):
        self.maybe_reverse_features(example)
        self.maybe_copy_features(example)
        return example

    @property
    def has_inputs(self):
        return "inputs" in self.get_feature_encoders()

    @property
    def feature_info(self):
        """{feature name: FeatureInfo}; call `get_hparams` or `dataset` first."""
        if self._feature_info is not None:
            return self._feature_info
        if self._hparams is None:
            raise ValueError("feature_info of problem %s is not known yet; call "
                             "get_hparams() or dataset() first" % self.name)
        hp = self.get_hparams()
        features = collections.defaultdict(FeatureInfo)
        for feature_name, modality in hp.modality.items():
            info = features[feature_name]
            info.modality = modality
            info.vocab_size = hp.vocab_size.get(feature_name)
        for feature_name, encoder in hp.vocabulary.items():
            features[feature_name].encoder = encoder
        if self.has_inputs:
            features["inputs"].space_id = hp.input_space_id
        features["targets"].space_id = hp.target_space_id
        self._feature_info = features
        return features

    # ==========================================================================
    # Reading
    # ==========================================================================
    def decode_example(self, serialized_example):
        """A dict of dense Tensors from one serialized `tf.train.Example`.

        VarLen features become dense 1-D tensors; "batch_prediction_key" (int64 [1],
        default 0) is added as in T2T, for batch prediction to rejoin examples.
        """
        data_fields, data_items_to_decoders = self.example_reading_spec()
        data_fields = dict(data_fields)
        data_fields.setdefault("batch_prediction_key",
                               tf.io.FixedLenFeature([1], tf.int64, default_value=0))
        parsed = tf.io.parse_single_example(serialized_example, data_fields)
        dense = {}
        for name, value in parsed.items():
            dense[name] = tf.sparse.to_dense(value) if isinstance(value, tf.sparse.SparseTensor) \
                else value
        if data_items_to_decoders is None:
            return dense
        return {name: decoder(dense) for name, decoder in sorted(data_items_to_decoders.items())}

    def _preprocess_returns_dataset(self, element_spec, mode, hparams):
        """Whether `preprocess_example` gives a Dataset (then it is flat_mapped)."""
        seen = []

        def probe(example):
            seen.append(isinstance(self.preprocess_example(dict(example), mode, hparams),
                                   tf.data.Dataset))
            return tf.constant(0)

        tf.function(probe, autograph=False).get_concrete_function(element_spec)
        return seen[0]

    def preprocess(self, dataset, mode, hparams, interleave=True):
        """Apply `preprocess_example` to a Dataset of decoded examples.

        A dict result is mapped; a Dataset result is flattened (flat_map, or a
        parallel interleave when `interleave`, in a fixed order as `_read_files`).
        """
        if not self._preprocess_returns_dataset(dataset.element_spec, mode, hparams):
            return dataset.map(lambda ex: self.preprocess_example(dict(ex), mode, hparams),
                               num_parallel_calls=tf.data.AUTOTUNE)

        def to_dataset(example):
            return self.preprocess_example(dict(example), mode, hparams)

        if interleave:
            return dataset.interleave(to_dataset, cycle_length=8,
                                      num_parallel_calls=tf.data.AUTOTUNE)
        return dataset.flat_map(to_dataset)

    def data_files(self, data_dir, dataset_split=_TRAIN, shard=None):
        """The sorted data files of a split, checked against what t2t-datagen recorded.

            p.data_files("/d", "train")   # ["/d/p-train-00000-of-00010", ...]

        Raises a UserError (one line, with the fix) when there are none, or when a shard's
        size differs from the one datagen wrote beside it (`t2t.data.shard_check`).
        """
        return self._data_files(data_dir, dataset_split, shard)

    def _data_files(self, data_dir, dataset_split, shard):
        if not data_dir:
            raise errors.UserError("problem %s needs a data_dir to read its data; pass "
                                   "data_dir (--data_dir)" % self.name)
        pattern = self.filepattern(data_dir, dataset_split, shard=shard)
        files = sorted(tf.io.gfile.glob(pattern))
        if not files:
            raise errors.UserError(
                "no data files match %s; run t2t-datagen --problem=%s --data_dir=%s first" %
                (pattern, self.name, data_dir))
        shard_check.check_shards(files, problem_name=self.name, data_dir=data_dir)
        logging.info("Reading %d data files matching %s", len(files), pattern)
        return files

    def dataset(self, mode, data_dir=None, num_threads=None, output_buffer_size=None,
                shuffle_files=None, hparams=None, preprocess=True, dataset_split=None,
                shard=None, partition_id=0, num_partitions=1, shuffle_buffer_size=1024,
                max_records=-1, drop_longer_than=None):
        """A Dataset of feature dicts read from this problem's files.

        Args:
          mode: ModeKeys; picks the files (PREDICT reads dev).
          data_dir: the folder holding the data files.
          num_threads: parallel calls for decoding (default: autotuned).
          output_buffer_size: elements to prefetch at the end (default: autotuned).
          shuffle_files: shuffle the file order; default True in TRAIN.
          hparams: model hparams for preprocessing (default: a no-op set).
          preprocess: apply `preprocess_example`.
          dataset_split: read this split instead of `mode`'s.
          shard: read only this shard number.
          partition_id, num_partitions: read files i with i % num_partitions == id.
          shuffle_buffer_size: record shuffle buffer in TRAIN.
          max_records: keep at most this many examples (-1: all).
          drop_longer_than: drop longer examples before the shuffle (`length_filter`).

        Returns:
          A Dataset of {feature name: Tensor}, 1-D int64 for symbol features.
        """
        is_training = mode == _TRAIN
        shuffle_files = shuffle_files or (shuffle_files is None and is_training)
        hparams = self._hparams_for_reading(hparams, data_dir)
        data_files = self._files_to_read(data_dir, dataset_split or mode, shard, partition_id,
                                         num_partitions, shuffle_files)
        parallel = num_threads or tf.data.AUTOTUNE

        def load_and_preprocess(filenames):
            records = tf.data.TFRecordDataset(filenames, buffer_size=8 * 1024 * 1024)
            examples = records.map(self.decode_example, num_parallel_calls=parallel)
            if preprocess:
                # Per file, as T2T: the order inside a file may matter to preprocessing.
                examples = self.preprocess(examples, mode, hparams, interleave=shuffle_files)
            return examples

        dataset = _read_files(data_files, load_and_preprocess, shuffle_files)
        dataset = dataset.map(self.maybe_reverse_and_copy, num_parallel_calls=parallel)
        dataset = dataset.take(max_records)
        dataset = length_filter.drop_long_examples(dataset, drop_longer_than)
        if shuffle_files and is_training:
            dataset = dataset.shuffle(shuffle_buffer_size)
        if InputSettings.from_hparams(hparams).pack_dataset and mode != _PREDICT:
            dataset = packing.pack_dataset(dataset, self._packed_length(hparams),
                                               keys=self._packed_keys(dataset.element_spec))
        # Graph mode (eager execution off): also TF 1's dataset methods, as T2T's datasets.
        return tf1_dataset(dataset.prefetch(output_buffer_size or tf.data.AUTOTUNE))

    def _packed_length(self, hparams):
        # hparams.max_length, if set, beats split_to_length; hparams may lack max_length.
        return getattr(hparams, "max_length", 0) or self.max_length(hparams)

    @staticmethod
    def _packed_keys(element_spec):
        return [k for k in ("inputs", "targets") if k in element_spec]

    def _hparams_for_reading(self, hparams, data_dir):
        """`hparams` (default: a no-op set) with data_dir; builds the problem hparams so
        that encoders and feature_info exist."""
        if hparams is None:
            hparams = default_model_hparams()
        if not hasattr(hparams, "data_dir"):
            hparams.add_hparam("data_dir", data_dir)
        if not hparams.data_dir:
            hparams.data_dir = data_dir
        self.get_hparams(hparams)
        return hparams

    def _files_to_read(self, data_dir, dataset_split, shard, partition_id, num_partitions,
                       shuffle_files):
        """This partition's data files of a split, in random order when `shuffle_files`."""
        data_files = self._data_files(data_dir, dataset_split, shard)
        if len(data_files) < num_partitions:
            raise ValueError("problem %s has %d data files, fewer than the %d partitions "
                             "(hosts) reading them" % (self.name, len(data_files),
                                                       num_partitions))
        data_files = [f for i, f in enumerate(data_files) if i % num_partitions == partition_id]
        if shuffle_files:
            random.shuffle(data_files)
        return data_files

    def reads_record_windows(self, mode, hparams, preprocess=True):
        """Whether `input_fn` may parse this problem's records a window at a time.

        True when reading gives the same examples as `dataset()`: the problem keeps
        `Problem`'s `dataset`, `decode_example` (with no `data_items_to_decoders`) and
        reverse/copy, and its preprocessing does nothing for these hparams (no truncation,
        prepend_mode or split_to_length), outside PREDICT mode.
        """
        cls = type(self)
        kept = ("dataset", "decode_example", "preprocess", "maybe_reverse_and_copy",
                "maybe_reverse_features", "maybe_copy_features")
        if mode == _PREDICT or any(getattr(cls, name) is not getattr(Problem, name)
                                   for name in kept):
            return False
        if preprocess and (cls.preprocess_example is not Problem.preprocess_example or
                           not preprocessing_is_identity(hparams)):
            return False
        fields, decoders = self.example_reading_spec()
        return decoders is None and all(
            isinstance(spec, (tf.io.VarLenFeature, tf.io.FixedLenFeature))
            for spec in fields.values())

    def record_windows(self, mode, data_dir=None, num_threads=None, output_buffer_size=None,
                       shuffle_files=None, hparams=None, preprocess=True, dataset_split=None,
                       shard=None, partition_id=0, num_partitions=1, shuffle_buffer_size=1024,
                       max_records=-1, drop_longer_than=None):
        """The examples `dataset()` gives, still serialized: a `RecordWindows` that length
        bucketing parses a window at a time (see `reads_record_windows` for when). With
        `hparams.pack_dataset`, the packed rows `dataset()` gives, parsed and packed a
        window at a time (a `tf.data.Dataset`).

        Same arguments as `dataset` (`num_threads`, `output_buffer_size`, `preprocess` unused).
        """
        del num_threads, output_buffer_size, preprocess
        is_training = mode == _TRAIN
        shuffle_files = shuffle_files or (shuffle_files is None and is_training)
        hparams = self._hparams_for_reading(hparams, data_dir)
        data_files = self._files_to_read(data_dir, dataset_split or mode, shard, partition_id,
                                         num_partitions, shuffle_files)

        def load(filenames):
            return tf.data.TFRecordDataset(filenames, buffer_size=8 * 1024 * 1024)

        records = _read_files(data_files, load, shuffle_files).take(max_records)
        fields = dict(self.example_reading_spec()[0])
        records = length_filter.drop_long_records(records, fields, drop_longer_than,
                                                  self.maybe_reverse_and_copy)
        if shuffle_files and is_training:
            records = records.shuffle(shuffle_buffer_size)
        fields.setdefault("batch_prediction_key",
                          tf.io.FixedLenFeature([1], tf.int64, default_value=0))
        windows = RecordWindows(records, fields, transform=self.maybe_reverse_and_copy)
        if InputSettings.from_hparams(hparams).pack_dataset and mode != _PREDICT:
            return windows.packed(self._packed_length(hparams),
                                  self._packed_keys(windows.element_spec))
        return windows

    # ==========================================================================
    # Estimator input functions
    # ==========================================================================
    def make_estimator_input_fn(self, mode, hparams, data_dir=None, force_repeat=False,
                                prevent_repeat=False, dataset_kwargs=None):
        """An Estimator `input_fn(params, config)` that calls `self.input_fn`."""

        def estimator_input_fn(params, config):
            return self.input_fn(mode, hparams, data_dir=data_dir, params=params,
                                 config=config, force_repeat=force_repeat,
                                 prevent_repeat=prevent_repeat, dataset_kwargs=dataset_kwargs)

        return estimator_input_fn

    def _dataset_partition(self, mode, config, params):
        """(partition_id, num_partitions): which part of the data this input_fn reads.

        With several TPU hosts each call reads its own partition; otherwise (0, 1).
        """
        tpu_config = getattr(config, "tpu_config", None)
        if mode != _TRAIN or tpu_config is None:
            # Reset for TPU runs that alternate TRAIN and EVAL.
            self._next_partition_id = 0
            return 0, 1
        per_host = tpu_config.per_host_input_for_training
        # TPU input configs exist only where tf.estimator does (TensorFlow 2.15).
        estimator_v1 = getattr(tf.compat.v1, "estimator", None)
        pipeline_config = getattr(getattr(estimator_v1, "tpu", None), "InputPipelineConfig",
                                  None)
        if per_host == getattr(pipeline_config, "BROADCAST", object()):
            return 0, 1  # mesh-tensorflow
        if per_host:
            params = params or {}
            num_hosts = (params["context"].num_hosts if "context" in params
                         else tpu_config.num_shards // 8)
            num_partitions = max(num_hosts, 1)
        else:
            num_partitions = tpu_config.num_shards
        partition_id = self._next_partition_id
        self._next_partition_id = partition_id + 1
        logging.info("num_partitions = %d partition_id = %d", num_partitions, partition_id)
        if partition_id >= num_partitions:
            raise ValueError("input_fn called %d times for %d partitions" %
                             (partition_id + 1, num_partitions))
        return partition_id, num_partitions

    def input_fn(self, mode, hparams, data_dir=None, params=None, config=None,
                 force_repeat=False, prevent_repeat=False, dataset_kwargs=None):
        """Batched features for an Estimator, via `data_reader.input_fn`.

        Args:
          mode: ModeKeys.
          hparams: model hparams.
          data_dir: data folder; default hparams.data_dir.
          params: Estimator params (may hold "batch_size" on TPU).
          config: RunConfig (use_tpu, tpu_config, data_parallelism).
          force_repeat: repeat even when not training.
          prevent_repeat: do not repeat even in training (wins over force_repeat).
          dataset_kwargs: extra keyword arguments for `self.dataset`.
        """
        partition_id, num_partitions = self._dataset_partition(mode, config, params)
        is_training = mode == _TRAIN
        if config is not None and getattr(config, "use_tpu", False):
            num_threads = 64
        else:
            num_threads = cpu_count() if is_training else 1
        data_dir = data_dir or getattr(hparams, "data_dir", None)
        dataset_kwargs = dict(dataset_kwargs or {})
        dataset_kwargs.update({
            "mode": mode,
            "data_dir": data_dir,
            "num_threads": num_threads,
            "hparams": hparams,
            "partition_id": partition_id,
            "num_partitions": num_partitions,
        })
        # Examples batching drops go before any buffer holds them (not via T2T-style overrides).
        if type(self).dataset is Problem.dataset:
            dataset_kwargs["drop_longer_than"] = length_filter.early_length_limit(
                mode, hparams, self.max_length(hparams))
        if self.reads_record_windows(mode, hparams, dataset_kwargs.get("preprocess", True)):
            dataset = self.record_windows(**dataset_kwargs)
        else:
            dataset = self.dataset(**dataset_kwargs)
        return data_reader.input_fn(
            dataset,
            self.filepattern(data_dir, mode),
            self.skip_random_fraction_when_training,
            self.batch_size_means_tokens,
            self.get_hparams().batch_size_multiplier,
            self.max_length(hparams),
            mode,
            hparams,
            data_dir=data_dir,
            params=params,
            config=config,
            force_repeat=force_repeat,
            prevent_repeat=prevent_repeat)

    def serving_input_fn(self, hparams, decode_hparams=None, use_tpu=False):
        """A ServingInputReceiver that parses a batch of serialized tf.Examples.

        The receiver tensor is a string vector "serialized_example"; the features are
        decoded, preprocessed (PREDICT), cast to int32, padded into one batch and given
        the model's shapes (`data_reader.standardize_shapes`). Call in graph mode (as
        Estimator export does).
        """
        mode = _PREDICT
        serialized_example = tf.compat.v1.placeholder(
            dtype=tf.string, shape=[None], name="serialized_example")
        dataset = tf.data.Dataset.from_tensor_slices(serialized_example)
        dataset = dataset.map(self.decode_example)
        dataset = dataset.map(lambda ex: self.preprocess_example(dict(ex), mode, hparams))
        dataset = dataset.map(data_reader.cast_ints_to_int32)
        padded_shapes = tf.nest.map_structure(lambda spec: spec.shape, dataset.element_spec)
        if use_tpu:
            padded_shapes = batching.pad_for_tpu(padded_shapes, hparams, hparams.max_length)
            batch_size = getattr(decode_hparams, "batch_size", 1) if decode_hparams else 1
            batch_size = batch_size or 1
            dataset = dataset.padded_batch(batch_size, padded_shapes, drop_remainder=False)
            dataset = dataset.map(functools.partial(data_reader.pad_batch,
                                                    batch_multiple=batch_size))
        else:
            dataset = dataset.padded_batch(
                tf.shape(serialized_example, out_type=tf.int64)[0], padded_shapes)
        dataset = dataset.map(data_reader.standardize_shapes)
        features = tf.data.experimental.get_single_element(dataset)
        if self.has_inputs:
            features.pop("targets", None)
        return ServingInputReceiver(features=features,
                                    receiver_tensors={"input": serialized_example})


# T2T's names in problem.py.
_default_hparams = default_problem_hparams
_reverse_problem_hparams = reverse_problem_hparams
_copy_problem_hparams = copy_problem_hparams
