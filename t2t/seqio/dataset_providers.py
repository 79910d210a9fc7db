"""Tasks, Mixtures and their registries, and `get_dataset` (seqio 0.0.20's API).

    seqio.TaskRegistry.add(
        "my_task",
        seqio.TextLineDataSource({"train": "/data/train.tsv"}),
        preprocessors=[parse_tsv, seqio.preprocessors.tokenize, seqio.preprocessors.append_eos],
        output_features={"inputs": seqio.Feature(vocab), "targets": seqio.Feature(vocab)})
    seqio.MixtureRegistry.add("my_mix", [("my_task", 1), ("other_task", 7)])
    ds = seqio.get_dataset("my_mix", {"inputs": 64, "targets": 32},
                           seqio.EncDecFeatureConverter(pack=True), seed=1, batch_size=8)

`Task.get_dataset` runs, in seqio's order: the source (sharded at the source when it has
enough shards, else by example), an in-memory cache for small splits, the preprocessors
before `CacheDatasetPlaceholder`, `repeat(num_epochs)`, the preprocessors after it (map
seeds from `seed + 42 * cache_index`), validation of dtype and rank, trimming to
`sequence_length`, and a shuffle. A fixed `seed` gives the same examples in the same order.

A Mixture samples its tasks by rate; the rate of a task inside a sub-mixture is
sub_rate * sub.get_rate(task) / sub.total_rate. Its tasks must agree on feature keys,
dtypes and vocabularies, which is checked when the Mixture is built.
"""
import collections
import dataclasses
import functools
import inspect
import numbers
import os
import re
from typing import Any, Callable, List, Mapping, Optional, Sequence, Set, Type, Union

import tensorflow as tf
from absl import logging

from t2t.core import errors as t2t_errors
from t2t.core import registry as t2t_registry
import t2t.seqio.metrics as metrics_lib
import t2t.seqio.utils as utils
from t2t.seqio.feature_converters import FeatureConverter
from t2t.seqio.provider_registry import DatasetProviderRegistry
from t2t.seqio.sources import (  # noqa: F401  (seqio.dataset_providers names)
    DataSource, DatasetProviderBase, FileDataSource, FunctionDataSource, ProtoDataSource,
    ShardInfo, TextLineDataSource, TfdsDataSource, TFExampleDataSource, _CachedDataSource,
    _rename_plaintext_to_pretokenized, _validate_args)
from t2t.seqio.vocabularies import PassThroughVocabulary, Vocabulary

_DEFAULT_FEATURE_KEYS = ["inputs", "targets"]
_VALID_TASK_NAME_REGEX = re.compile(r"^[\w\d\.\:_#]+$")
_MAX_EXAMPLES_TO_MEM_CACHE = 10000
SHUFFLE_BUFFER_SIZE = 1000

Feature = utils.Feature
DatasetReaderType = Callable[..., tf.data.Dataset]


@dataclasses.dataclass(frozen=True)
class ContinuousFeature(Feature):
    """A feature of real values (no vocabulary to speak of, no EOS)."""

    vocabulary: Vocabulary = dataclasses.field(
        default_factory=lambda: PassThroughVocabulary(size=0))
    add_eos: bool = False


@dataclasses.dataclass(frozen=True)
class SourceInfo:
    """Where a Task or Mixture was defined."""

    file_path: Optional[str] = None
    line_number: Optional[int] = None

    @classmethod
    @functools.lru_cache(maxsize=None)
    def for_class(cls, klass) -> "SourceInfo":
        try:
            source_file = inspect.getsourcefile(klass)
        except TypeError:
            source_file = None
        try:
            _, line_number = inspect.getsourcelines(klass)
        except (TypeError, OSError):
            line_number = None
        return SourceInfo(file_path=source_file, line_number=line_number)

    def has_meaningful_info(self) -> bool:
        return bool(self.file_path)


class CacheDatasetPlaceholder:
    """Marks where offline caching cuts a Task's preprocessors (at most one per Task)."""

    def __init__(self, required: bool = False, file_shuffle_buffer_size: Optional[int] = None):
        self._required = required
        self._file_shuffle_buffer_size = file_shuffle_buffer_size

    @property
    def required(self):
        return self._required

    @property
    def file_shuffle_buffer_size(self):
        return self._file_shuffle_buffer_size

    def __call__(self, dataset):
        raise RuntimeError("`CacheDatasetPlaceholder` should never be called.")


def _deterministic(ds: tf.data.Dataset) -> tf.data.Dataset:
    options = tf.data.Options()
    options.deterministic = True
    return ds.with_options(options)


class Task(DatasetProviderBase):
    """A data source, preprocessors, output features, and metrics."""

    def __init__(self, name: str, source: DataSource, output_features: Mapping[str, Feature],
                 preprocessors: Optional[Sequence[Callable[..., tf.data.Dataset]]] = None,
                 postprocess_fn: Optional[Callable[..., Any]] = None,
                 metric_fns: Optional[Sequence[Callable[..., Any]]] = None,
                 metric_objs: Optional[Sequence[Any]] = None,
                 shuffle_buffer_size: Optional[int] = SHUFFLE_BUFFER_SIZE,
                 source_info: Optional[SourceInfo] = None):
        if not _VALID_TASK_NAME_REGEX.match(name):
            raise ValueError("Task name '%s' contains invalid characters. Must match regex: %s"
                             % (name, _VALID_TASK_NAME_REGEX.pattern))
        if not isinstance(output_features, Mapping):
            raise ValueError(f"Task '{name}': output_features must be a dict of "
                             f"seqio.Feature, got {type(output_features).__name__}")
        for key, feature in output_features.items():
            if not isinstance(feature, Feature):
                raise ValueError(f"Task '{name}': output feature '{key}' must be a "
                                 f"seqio.Feature, got {type(feature).__name__}")
        self._metric_objs_constructor_args = metric_objs or []
        self._metric_fn_constructor_args = metric_fns or []
        self._name = name
        self._source = source
        self._source_info = source_info
        self._preprocessor_constructor_args = preprocessors or ()
        self._cache_step_idx: Optional[int] = None
        self._cache_dataset_placerholder: Optional[CacheDatasetPlaceholder] = None
        for i, p in enumerate(preprocessors or []):
            if isinstance(p, CacheDatasetPlaceholder):
                if self._cache_step_idx is not None:
                    raise ValueError("`CacheDatasetPlaceholder` can appear at most once in the "
                                     f"preprocessing pipeline. Found multiple in '{name}'.")
                self._cache_step_idx = i
                self._cache_dataset_placerholder = p
        if self._cache_step_idx is not None and not self.source.caching_permitted:
            raise ValueError(f"Caching was requested for '{self.name}', but the underlying data "
                             "source prohibits caching. Please remove `CacheDatasetPlaceholder` "
                             "and try again.")
        self._postprocess_fn = postprocess_fn
        self._cache_dir = None
        self._stats = {}
        self._shuffle_buffer_size = shuffle_buffer_size
        self._output_features = collections.OrderedDict(sorted(list(output_features.items())))

    @property
    def name(self) -> str:
        return self._name

    def __str__(self):
        return f"Task(name={self.name}, source={str(self.source)})"

    def __repr__(self):
        return f"Task(name={self.name!r})"

    @property
    def source_info(self) -> Optional[SourceInfo]:
        return self._source_info

    @functools.cached_property
    def metric_objs(self) -> Sequence[Any]:
        """The given `metric_objs`, then each of `metric_fns` as a PassthroughLegacyMetric."""
        return list(self._metric_objs_constructor_args) + [
            metrics_lib.PassthroughLegacyMetric.from_metric_fn(fn, self._postprocess_fn).empty()
            for fn in self.metric_fns]

    @functools.cached_property
    def _all_metric_fns(self):
        by_type = {t: [] for t in metrics_lib.ModelOutputType}
        for metric_fn in self._metric_fn_constructor_args:
            by_type[metrics_lib.metric_fn_output_type(metric_fn)].append(metric_fn)
        return (by_type[metrics_lib.ModelOutputType.PREDICTION],
                by_type[metrics_lib.ModelOutputType.SCORE],
                by_type[metrics_lib.ModelOutputType.PREDICTION_WITH_AUX])

    @property
    def metric_fns(self) -> Sequence[Callable[..., Any]]:
        predict_fns, score_fns, aux_fns = self._all_metric_fns
        return predict_fns + score_fns + aux_fns

    @property
    def predict_metric_fns(self):
        return self._all_metric_fns[0]

    @property
    def score_metric_fns(self):
        return self._all_metric_fns[1]

    @property
    def predict_with_aux_metric_fns(self):
        return self._all_metric_fns[2]

    @property
    def output_features(self) -> Mapping[str, Feature]:
        return self._output_features

    @property
    def splits(self) -> Sequence[str]:
        s = self.source.splits
        if not s:
            raise ValueError(f"Task {self.name} has no splits")
        return s

    @property
    def source(self) -> DataSource:
        return self._source

    def _validate_preprocessors(self):
        if self._cache_step_idx is None:
            return
        for prep in self._preprocessor_constructor_args[:self._cache_step_idx]:
            prep_args = inspect.signature(prep).parameters.keys()
            if "sequence_length" in prep_args:
                raise ValueError(f"'{utils.function_name(prep)}' has a `sequence_length` "
                                 "argument but occurs before `CacheDatasetPlaceholder` in "
                                 f"'{self.name}'. This is not allowed since the sequence length "
                                 "is specified at run time.")
            if "seed" in prep_args or "seeds" in prep_args:
                logging.warning("'%s' has a `seed(s)` argument but occurs before "
                                "`CacheDatasetPlaceholder` in '%s': the same samples will be "
                                "used each epoch when reading from the cache.",
                                utils.function_name(prep), self.name)

    @functools.cached_property
    def preprocessors(self) -> Sequence[Callable[..., tf.data.Dataset]]:
        self._validate_preprocessors()
        return self._preprocessor_constructor_args

    @property
    def postprocessor(self) -> Optional[Callable[..., Any]]:
        return self._postprocess_fn

    @property
    def shuffle_buffer_size(self) -> Optional[int]:
        return self._shuffle_buffer_size

    def replace(self, **kwargs):
        """A new Task like this one with some constructor arguments replaced."""
        properties = ["name", "source", "output_features", "preprocessors", "postprocess_fn",
                      "metric_fns", "metric_objs", "shuffle_buffer_size"]
        unknown = set(kwargs) - set(properties)
        if unknown:
            raise ValueError("Expected keys of kwargs argument task.replace to be one of "
                             f"{properties}. However, there were keys in kwargs that are not "
                             f"in this set: {unknown}")
        task_kwargs = dict(kwargs)
        defaults = {"postprocess_fn": self.postprocessor,
                    "preprocessors": self._preprocessor_constructor_args,
                    "metric_fns": self._metric_fn_constructor_args,
                    "metric_objs": self._metric_objs_constructor_args}
        for key in properties:
            if key not in task_kwargs:
                task_kwargs[key] = defaults[key] if key in defaults else getattr(self, key)
        return Task(**task_kwargs)

    def num_input_examples(self, split: str) -> Optional[int]:
        return self.source.num_input_examples(split)

    def _preprocess_dataset(self, dataset, preprocessors, sequence_length=None):
        for prep_fn in preprocessors:
            prep_fn = utils.add_kwargs_to_transform(prep_fn, sequence_length=sequence_length,
                                                    output_features=self.output_features)
            dataset = prep_fn(dataset)
        return dataset

    def _validate_preprocessing(self, dataset: tf.data.Dataset) -> tf.data.Dataset:
        """Checks the output features' presence, dtype and rank after preprocessing."""
        actual_specs = dataset.element_spec
        for feat, feat_spec in self.output_features.items():
            if feat not in actual_specs:
                if feat_spec.required:
                    raise ValueError("Task dataset is missing expected output feature after "
                                     f"preprocessing: {feat}")
                continue
            actual_spec = actual_specs[feat]
            if feat_spec.dtype != actual_spec.dtype:
                raise ValueError(f"Task dataset has incorrect type for feature '{feat}' after "
                                 f"preprocessing: Got {actual_spec.dtype.name}, expected "
                                 f"{feat_spec.dtype.name}")
            if feat_spec.rank != actual_spec.shape.rank:
                raise ValueError(f"Task dataset has incorrect rank for feature '{feat}' after "
                                 f"preprocessing: Got {actual_spec.shape.rank}, expected "
                                 f"{feat_spec.rank}")
        return dataset

    def _trim_output_features(self, dataset, sequence_length):
        return utils.trim_dataset(dataset, sequence_length, self.output_features)

    def preprocess_precache(self, dataset: tf.data.Dataset,
                            seed: Optional[int] = None) -> tf.data.Dataset:
        """The preprocessors before the CacheDatasetPlaceholder (none without one)."""
        if not self.supports_caching:
            return dataset
        with utils.map_seed_manager(seed):
            return self._preprocess_dataset(dataset, self.preprocessors[:self._cache_step_idx])

    def preprocess_postcache(self, dataset: tf.data.Dataset,
                             sequence_length: Optional[Mapping[str, int]],
                             seed: Optional[int] = None) -> tf.data.Dataset:
        """The preprocessors after the CacheDatasetPlaceholder (all without one)."""
        start_idx = 0
        if self.supports_caching:
            # Skip seeds so none repeats one of the pre-cache preprocessors.
            seed = None if seed is None else seed + 42 * self._cache_step_idx
            start_idx = self._cache_step_idx + 1
        with utils.map_seed_manager(seed):
            return self._preprocess_dataset(dataset, self.preprocessors[start_idx:],
                                            sequence_length=sequence_length)

    @property
    def cache_dir(self) -> Optional[str]:
        """The first global cache folder holding this task (with COMPLETED), or None."""
        if not self._cache_dir:
            for d in utils.get_global_cache_dirs():
                cache_dir = os.path.join(d, utils.get_task_dir_from_name(self.name))
                try:
                    if tf.io.gfile.exists(os.path.join(cache_dir, "COMPLETED")):
                        self._cache_dir = cache_dir
                        logging.info("'%s' is cached at %s.", self.name, cache_dir)
                        break
                except (tf.errors.PermissionDeniedError, tf.errors.FailedPreconditionError) as e:
                    logging.warning("Task %s: cannot read cache folder %s: %r", self.name,
                                    cache_dir, e)
        return self._cache_dir

    @property
    def supports_caching(self) -> bool:
        return self._cache_step_idx is not None

    @property
    def requires_caching(self) -> bool:
        return (self._cache_dataset_placerholder is not None
                and self._cache_dataset_placerholder.required)

    def assert_cached(self) -> None:
        assert self.cache_dir, (
            f"'{self.name}' does not exist in any of the task cache directories.")

    def get_cached_stats(self, split: str = "train") -> Mapping[str, Union[int, float]]:
        """The stats.<split>.json of the cached task ("examples", "<f>_tokens", ...)."""
        self.assert_cached()
        if split not in self._stats:
            path = utils.get_cached_stats_path(self.cache_dir, split)
            if not tf.io.gfile.exists(path):
                raise ValueError("Stats do not exist for '%s' split: %s" % (self.name, split))
            import json  # pylint: disable=import-outside-toplevel
            with tf.io.gfile.GFile(path) as f:
                self._stats[split] = json.load(f)
        return self._stats[split]

    def get_dataset(self, sequence_length: Optional[Mapping[str, int]] = None,
                    split: str = "train", use_cached: bool = False, shuffle: bool = True,
                    shuffle_buffer_size: Optional[int] = None, seed: Optional[int] = None,
                    shard_info: Optional[ShardInfo] = None, num_epochs: Optional[int] = 1,
                    trim_output_features: bool = True,
                    try_in_mem_cache: bool = True) -> tf.data.Dataset:
        """The preprocessed split (see the module docstring for the order of the steps).

        Args:
          sequence_length: {feature: max length}, passed to preprocessors that ask for it
            and used to trim; None: no trimming.
          split: the split.
          use_cached: read the offline cache (seqio_cache_tasks' format).
          shuffle: shuffle files and examples.
          shuffle_buffer_size: overrides the task's buffer size.
          seed: makes shuffling and seeded preprocessors deterministic.
          shard_info: read only this shard.
          num_epochs: repeats before the post-cache preprocessors; None: forever.
          trim_output_features: trim to `sequence_length`.
          try_in_mem_cache: cache splits of < 10,000 examples per shard in memory.
        """
        if use_cached and not self.supports_caching:
            logging.warning("Task '%s' does not support caching. Switching to on-the-fly "
                            "preprocessing.", self.name)
            use_cached = False
        elif self.requires_caching and not use_cached:
            raise ValueError(f"Task '{self.name}' requires caching, but was called with "
                             "`use_cached=False`.")
        if split not in self.splits:
            raise ValueError(f"Task '{self.name}' has no split '{split}'; splits: "
                             f"{sorted(self.splits)}")
        source = self._get_cached_source(split) if use_cached else self.source

        if source.supports_arbitrary_sharding:
            shard_data_source = True
        elif shard_info:
            shard_data_source = len(source.list_shards(split=split)) >= shard_info.num_shards
            logging.info("Sharding at the %s: %d of %d",
                         "data source" if shard_data_source else "examples",
                         shard_info.index + 1, shard_info.num_shards)
        else:
            shard_data_source = True
            shard_info = None
        if shard_data_source:
            ds = source.get_dataset(split=split, shuffle=shuffle, seed=seed,
                                    shard_info=shard_info)
        else:
            ds = source.get_dataset(split=split, shuffle=shuffle, seed=seed)
            ds = ds.shard(shard_info.num_shards, shard_info.index)

        num_shards = shard_info.num_shards if shard_info else 1
        limit = _MAX_EXAMPLES_TO_MEM_CACHE * num_shards
        if try_in_mem_cache and (
                (use_cached and self.get_cached_stats(split)["examples"] < limit)
                or (source.num_input_examples(split)
                    and source.num_input_examples(split) < limit)):
            logging.info("Automatically caching small dataset in memory: '%s:%s'", self.name,
                         split)
            ds = ds.cache()

        if not use_cached:
            ds = self.preprocess_precache(ds, seed=seed)
        # Repeat before the (possibly random) post-cache steps: new samples each epoch.
        if num_epochs != 1:
            ds = ds.repeat(num_epochs)
        ds = self.preprocess_postcache(ds, sequence_length=sequence_length, seed=seed)
        ds = self._validate_preprocessing(ds)
        if trim_output_features:
            ds = self._trim_output_features(ds, sequence_length=sequence_length)
        if shuffle:
            if self._shuffle_buffer_size is None:
                if not self.source.performs_internal_shuffling:
                    raise ValueError(f"Shuffling is disallowed for Task '{self.name}' since its "
                                     "`shuffle_buffer_size` was set to `None` on construction.")
            else:
                ds = ds.shuffle(shuffle_buffer_size or self._shuffle_buffer_size, seed=seed)
        ds = ds.prefetch(tf.data.AUTOTUNE)
        return _deterministic(ds) if seed is not None else ds

    def _get_cached_source(self, split: str,
                           file_shuffle_buffer_size: Optional[int] = None) -> _CachedDataSource:
        self.assert_cached()
        return _CachedDataSource(
            cache_dir=self.cache_dir, split=split,
            file_shuffle_buffer_size=(file_shuffle_buffer_size or
                                      self._cache_dataset_placerholder.file_shuffle_buffer_size))

    def postprocess_fn(self, decoded_model_output: Any, **postprocess_kwargs) -> Any:
        """The postprocessor applied to a decoded output (identity without one)."""
        if self._postprocess_fn:
            return self._postprocess_fn(decoded_model_output, **postprocess_kwargs)
        return decoded_model_output


class TaskRegistry(DatasetProviderRegistry):
    """Registry of Tasks."""

    _REGISTRY = {}
    _PROVIDER_TYPE = Task

    @classmethod
    def add(cls, name: str, source: DataSource, output_features: Mapping[str, Feature],
            preprocessors: Optional[Sequence[Callable[..., tf.data.Dataset]]] = None,
            postprocess_fn: Optional[Callable[..., Any]] = None,
            metric_fns: Optional[Sequence[Callable[..., Any]]] = None,
            metric_objs: Optional[Sequence[Any]] = None, task_cls: Type[Task] = Task,
            source_info: Optional[SourceInfo] = None, **kwargs) -> Task:
        """Builds a Task (see `Task`) and registers it under `name`."""
        provider_kwargs = {"name": name, "source": source, "output_features": output_features,
                           "preprocessors": preprocessors, "postprocess_fn": postprocess_fn,
                           "metric_fns": metric_fns, "metric_objs": metric_objs,
                           "source_info": source_info, **kwargs}
        return super().add(name, provider_cls=task_cls, provider_kwargs=provider_kwargs)

    @classmethod
    def get(cls, name) -> Task:
        return super().get(name)


# ------------------------------------------------------------------------------ mixtures
SampleFn = Callable[[Sequence[tf.data.Dataset], Sequence[float], Optional[int]],
                    tf.data.Dataset]
MixtureRate = Union[int, float, Callable[[Any], float]]


class MixtureMismatchError(t2t_errors.UserError):
    """Tasks of a mixture disagree on features: a ValueError (seqio's), one line + exit 2."""


def _first_mismatch(mixture_name, tasks) -> Optional[str]:
    """A one-line description of the first feature the tasks disagree on, or None."""
    reference = tasks[0]
    ref_features = reference.output_features
    for task in tasks[1:]:
        features = task.output_features
        for name in sorted(set(ref_features) | set(features)):
            if name not in features or name not in ref_features:
                has, lacks = (reference, task) if name in ref_features else (task, reference)
                return (f"Mixture '{mixture_name}': task '{lacks.name}' has no output feature "
                        f"'{name}', which task '{has.name}' has; all tasks of a mixture must "
                        "have the same output features")
            ours, theirs = ref_features[name], features[name]
            if theirs.dtype != ours.dtype:
                return (f"Mixture '{mixture_name}': feature '{name}' of task '{task.name}' has "
                        f"dtype {theirs.dtype.name}, but task '{reference.name}' has "
                        f"{ours.dtype.name}; all tasks of a mixture must use the same dtype")
            if (hasattr(ours, "vocabulary") and hasattr(theirs, "vocabulary")
                    and theirs.vocabulary != ours.vocabulary):
                return (f"Mixture '{mixture_name}': feature '{name}' of task '{task.name}' has "
                        f"vocabulary {theirs.vocabulary}, but task '{reference.name}' has "
                        f"{ours.vocabulary}; all tasks of a mixture must use the same "
                        "vocabularies")
    return None


class Mixture(DatasetProviderBase):
    """Tasks (and sub-mixtures) sampled by rate.

    Rates are relative numbers of examples, numbers or `callable(task) -> float`:
    [("task1", 1), ("task2", 7)] gives task1 1/8 of the examples; ["task1", "task2"]
    with default_rate=seqio.mixing_rate_num_examples mixes by size. A sub-mixture's own
    rate must be a number.
    """

    def __init__(self, name: str, tasks, default_rate: Optional[MixtureRate] = None,
                 sample_fn: SampleFn = functools.partial(tf.data.Dataset.sample_from_datasets,
                                                         stop_on_empty_dataset=True),
                 source_info: Optional[SourceInfo] = None):
        self._task_to_rate = {}
        self._task_map = {}
        self._tasks = []
        self._sub_mixtures = []
        self._name = name
        self._sample_fn = sample_fn
        self._source_info = source_info
        for t in tasks:
            if isinstance(t, (str, Task, Mixture)):
                task_or_name, rate = t, default_rate
                if default_rate is None:
                    raise ValueError(f"Mixture '{name}': need a rate for each task; '"
                                     f"{t if isinstance(t, str) else t.name}' has none (give "
                                     "(task, rate) pairs or default_rate)")
            else:
                task_or_name, rate = t
            if isinstance(task_or_name, str):
                task_name = task_or_name
                is_task = task_name in TaskRegistry.names()
                if not is_task and task_name not in MixtureRegistry.names():
                    raise ValueError(_unknown_name_message(task_name))
                subtask = TaskRegistry.get(task_name) if is_task else MixtureRegistry.get(
                    task_name)
            else:
                subtask = task_or_name
                task_name = subtask.name
                is_task = isinstance(subtask, Task)
            if is_task:
                self._tasks.append(subtask)
            else:
                self._sub_mixtures.append(subtask)
            self._task_to_rate[task_name] = rate
            self._task_map[task_name] = subtask
        if not self.tasks:
            raise ValueError(f"Mixture, {self.name}, does not contain any Tasks.")
        mismatch = _first_mismatch(self.name, self.tasks)
        if mismatch:
            raise MixtureMismatchError(mismatch)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self):
        return f"Mixture(name={self.name!r})"

    @property
    def source_info(self) -> Optional[SourceInfo]:
        return self._source_info

    @property
    def tasks(self) -> List[Task]:
        """All tasks, those of sub-mixtures included, sorted by name."""
        sub_tasks = (mix.tasks for mix in self._sub_mixtures)
        return sorted(set(sum(sub_tasks, self._tasks)), key=lambda t: t.name)

    @property
    def total_rate(self) -> float:
        return sum(float(rate(self._task_map[name]) if callable(rate) else rate)
                   for name, rate in self.rate_per_task_name.items())

    @property
    def rate_per_task_name(self) -> Mapping[str, MixtureRate]:
        """The rate of each direct member (sub-mixtures count as members)."""
        return self._task_to_rate

    def get_rate(self, task: Task) -> float:
        """sum over sub-mixtures of sub_rate * sub.get_rate(task) / sub.total_rate + own rate."""
        value = 0.0
        for mix in self._sub_mixtures:
            if task in mix.tasks:
                value += self._get_submixture_rate(mix) * mix.get_rate(task) / mix.total_rate
        if task.name in self.rate_per_task_name:
            rate = self.rate_per_task_name[task.name]
            value += float(rate(task) if callable(rate) else rate)
        return value

    def _get_submixture_rate(self, mix: "Mixture") -> float:
        rate = self.rate_per_task_name[mix.name]
        if not isinstance(rate, numbers.Number):
            raise ValueError(f"'rate' for sub-mixture {repr(mix.name)} must be a number.")
        return float(rate)

    def num_input_examples(self, split: str) -> int:
        return sum(t.num_input_examples(split) for t in self.tasks if split in t.splits)

    @property
    def splits(self) -> Sequence[str]:
        splits = set()
        for task in self.tasks:
            splits.update(task.splits)
        return tuple(splits)

    @property
    def output_features(self) -> Mapping[str, Feature]:
        return self.tasks[0].output_features

    def _check_compatible_features(self) -> None:
        mismatch = _first_mismatch(self.name, self.tasks)
        if mismatch:
            raise MixtureMismatchError(mismatch)

    def get_task_dataset(self, task: Task, output_feature_keys: Set[str],
                         sequence_length: Optional[Mapping[str, int]] = None,
                         split: str = "train", use_cached: bool = False, shuffle: bool = True,
                         seed: Optional[int] = None, shard_info: Optional[ShardInfo] = None,
                         num_epochs: Optional[int] = None, trim_output_features: bool = True,
                         try_in_mem_cache: bool = True) -> tf.data.Dataset:
        """One task's dataset with only the mixture's features."""
        return task.get_dataset(
            sequence_length=sequence_length, split=split, use_cached=use_cached,
            shuffle=shuffle, seed=seed, shard_info=shard_info, num_epochs=num_epochs,
            trim_output_features=trim_output_features, try_in_mem_cache=try_in_mem_cache,
        ).map(lambda ex: {k: v for k, v in ex.items() if k in output_feature_keys},
              num_parallel_calls=tf.data.AUTOTUNE)

    def _get_all_mixing_rates(self, tasks):
        return [self.get_rate(task) for task in tasks]

    def get_dataset(self, sequence_length: Optional[Mapping[str, int]] = None,
                    split: str = "train", use_cached: bool = False, shuffle: bool = True,
                    seed: Optional[int] = None, shard_info: Optional[ShardInfo] = None,
                    num_epochs: Optional[int] = None, copy_pretokenized: bool = False,
                    compute_stats_empirically: bool = False,
                    log_mixing_proportions: bool = True,
                    passthrough_features: Optional[Sequence[str]] = None,
                    trim_output_features: bool = True,
                    try_in_mem_cache: bool = True) -> tf.data.Dataset:
        """The tasks' datasets sampled by rate (repeating forever by default).

        The sampling seed is `seed`; without one, random when shuffling, else 42.
        `copy_pretokenized` keeps "<f>_pretokenized" features; `passthrough_features`
        keeps more. `compute_stats_empirically` is accepted for seqio compatibility.
        """
        del compute_stats_empirically
        self._check_compatible_features()
        tasks = []
        for task in self.tasks:
            if split not in task.splits:
                logging.warning("Task %s has no '%s' split, skipping.", task.name, split)
                continue
            tasks.append(task)
        if not tasks:
            raise ValueError("No datasets have a '{}' split".format(split))
        output_feature_keys = set(self.output_features.keys())
        if copy_pretokenized:
            output_feature_keys.update({f + "_pretokenized" for f in output_feature_keys})
        if passthrough_features:
            output_feature_keys.update(passthrough_features)
        datasets = []
        for task in tasks:
            try:
                datasets.append(self.get_task_dataset(
                    task, output_feature_keys, sequence_length, split, use_cached, shuffle,
                    seed, shard_info, num_epochs, trim_output_features, try_in_mem_cache))
            except Exception:
                logging.error("Failed to load task '%s' as part of mixture '%s'", task.name,
                              self.name)
                raise
        rates = self._get_all_mixing_rates(tasks)
        if seed is not None:
            sample_seed = seed
        elif shuffle:
            sample_seed = None
        else:
            sample_seed = 42
        dataset = self._sample_fn(datasets, rates, sample_seed)
        if log_mixing_proportions and split == "train":
            total = sum(rates) or 1.0
            for task, rate in zip(tasks, rates):
                logging.info("mixture %s: %12g rate %10.4f fraction  %s", self.name, rate,
                             rate / total, task.name)
        return _deterministic(dataset) if seed is not None else dataset


class MixtureRegistry(DatasetProviderRegistry):
    """Registry of Mixtures."""

    _REGISTRY = {}
    _PROVIDER_TYPE = Mixture

    @classmethod
    def add(cls, name, tasks, default_rate=None, mixture_cls: Type[Mixture] = Mixture,
            source_info: Optional[SourceInfo] = None, **kwargs) -> Mixture:
        """Builds a Mixture (see `Mixture`) and registers it under `name`."""
        provider_kwargs = {"name": name, "tasks": tasks, "default_rate": default_rate,
                           "source_info": source_info, **kwargs}
        return super().add(name, provider_cls=mixture_cls, provider_kwargs=provider_kwargs)

    @classmethod
    def get(cls, name) -> Mixture:
        return super().get(name)


def _unknown_name_message(name: str) -> str:
    names = list(TaskRegistry.names()) + list(MixtureRegistry.names())
    close = t2t_registry.closest_names(name, names)  # the one did-you-mean of t2t
    hint = ("; closest registered names: %s" % ", ".join(close) if close else
            "; nothing similar is registered (%d Tasks and Mixtures are)" % len(names) if names
            else "; no Task or Mixture is registered (import the module that registers them)")
    return "No Task or Mixture found with name '%s'%s" % (name, hint)


def get_mixture_or_task(task_or_mixture_name: str):
    """The Mixture (preferred) or Task of that name; else a ValueError with close names."""
    if not isinstance(task_or_mixture_name, str):
        raise ValueError(f"get_mixture_or_task: expected a name, got {task_or_mixture_name!r}")
    mixtures, tasks = MixtureRegistry.names(), TaskRegistry.names()
    if task_or_mixture_name in mixtures:
        if task_or_mixture_name in tasks:
            logging.warning("%s is both a Task and a Mixture, returning Mixture",
                            task_or_mixture_name)
        return MixtureRegistry.get(task_or_mixture_name)
    if task_or_mixture_name in tasks:
        return TaskRegistry.get(task_or_mixture_name)
    raise ValueError(_unknown_name_message(task_or_mixture_name))


def maybe_get_mixture_or_task(task: Union[str, Task, Mixture]) -> Union[Task, Mixture]:
    """A name is looked up; a Task or Mixture is returned as is."""
    if isinstance(task, str):
        return get_mixture_or_task(task)
    if isinstance(task, (Task, Mixture)):
        return task
    raise ValueError("User passed in a task that was not a string, Task, or Mixture."
                     f"Got type: {type(task)}")


def get_subtasks(task_or_mixture):
    """[task] for a Task, all tasks for a Mixture."""
    if isinstance(task_or_mixture, Task):
        return [task_or_mixture]
    return task_or_mixture.tasks


def get_dataset(mixture_or_task_name: Union[str, Task, Mixture],
                task_feature_lengths: Mapping[str, int], feature_converter: FeatureConverter,
                dataset_split: str = "train", use_cached: bool = False, shuffle: bool = False,
                num_epochs: Optional[int] = 1, shard_info: Optional[ShardInfo] = None,
                verbose: bool = True, seed: Optional[int] = None,
                batch_size: Optional[int] = None,
                trim_output_features: bool = True) -> tf.data.Dataset:
    """Model features: the provider's `get_dataset`, the feature converter, then batches.

        ds = get_dataset("wmt_ende", {"inputs": 32, "targets": 32},
                         EncDecFeatureConverter(pack=True), batch_size=8)
        # {"encoder_input_tokens": int32 [8, 32], ..., "decoder_positions": int32 [8, 32]}

    Sharding (`shard_info`) happens before packing; batches drop the remainder.
    """
    if not isinstance(feature_converter, FeatureConverter):
        raise TypeError("feature_converter should be an instance of FeatureConverter.")
    mixture_or_task = (get_mixture_or_task(mixture_or_task_name)
                       if not isinstance(mixture_or_task_name, DatasetProviderBase)
                       else mixture_or_task_name)
    ds = mixture_or_task.get_dataset(task_feature_lengths, split=dataset_split,
                                     use_cached=use_cached, shuffle=shuffle, seed=seed,
                                     shard_info=shard_info, num_epochs=num_epochs,
                                     trim_output_features=trim_output_features)
    ds = feature_converter(ds, task_feature_lengths=task_feature_lengths)
    if batch_size is not None:
        ds = ds.batch(batch_size, drop_remainder=True)
    if verbose:
        logging.info("The output dataset from seqio.get_dataset has the following features")
        for name, spec in utils.flatten_dict(ds.element_spec, delimiter=".").items():
            if isinstance(spec, tf.TensorSpec):
                logging.info("feature: %s \t shape: %s \t dtype: %s", name, spec.shape.as_list(),
                             spec.dtype.name)
    return ds
