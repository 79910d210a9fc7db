"""seqio.Evaluator: a task's (or each task of a mixture's) metrics on model outputs.

The eval split of every task that has metric functions is read once (cached), turned into
model features by the feature converter (never packed) and enumerated, so a model function
may return its outputs in any order, keyed by example index:

    evaluator = seqio.Evaluator("copy_and_reverse", seqio.EncDecFeatureConverter(pack=False),
                                logger_cls=[seqio.TensorBoardLogger, seqio.JSONLogger],
                                log_dir="/run/inference_eval")
    def predict_fn(ds, model_feature_shapes=None):      # ds: (index, model features)
        return [(int(i), model_tokens(ex)) for i, ex in ds.as_numpy_iterator()]
    metrics, outputs = evaluator.evaluate(compute_metrics=True, step=500,
                                          predict_fn=predict_fn, score_fn=score_fn)
    metrics.result()        # {"copy": {"exact_match": 87.5}, "reverse": {...}}

Per task, each of its `metric_objs` (its own, then each of its `metric_fns` as a
`metrics.PassthroughLegacyMetric`) gets the outputs of the model function its
`model_output_type` names, in example order: `metric.from_model_output(examples, outputs,
task.output_features, target_field_name)`, then `actual_compute(...)` for a
`CollectingMetric`, `compute()` otherwise. The legacy path decodes predicted ids with the
task's target vocabulary and post-processes them (`task.postprocess_fn(text, example=ex,
is_target=False)`); targets are the `targets_pretokenized` text when the task keeps it,
else the decoded targets, post-processed with `is_target=True` (`evaluator.cached_targets`).
Each logger is then called with the task's metrics (plain numbers become `metrics.Scalar`).

Names, signatures, defaults and return values are seqio 0.0.20's (`evaluate` returns a
Future of {task: {metric: value}} and {task: {ModelOutputType: outputs}}). t2t also takes
predictions of different lengths per example (a list of id lists).
"""
import concurrent.futures
import inspect
import time
from typing import (Any, Mapping, MutableMapping, Optional, Protocol, Sequence, Set, Tuple,
                    Type, Union)

import numpy as np
import tensorflow as tf
from absl import logging

import t2t.seqio.dataset_providers as dataset_providers
import t2t.seqio.feature_converters as feature_converters
import t2t.seqio.loggers as loggers_lib
import t2t.seqio.metrics as metrics_lib

Task = dataset_providers.Task
ModelOutputType = metrics_lib.ModelOutputType
EncDecFeatureConverter = feature_converters.EncDecFeatureConverter
FeatureConverter = feature_converters.FeatureConverter

# seqio 0.0.20's public types, with its meanings.
AllOutputTokensType = Mapping[str, Sequence[Sequence[int]]]
AllOutputScoresType = Any  # Mapping[str, Sequence[float]]
AllOutputAuxValuesType = Mapping[str, Mapping[str, Sequence[Any]]]
TaskMetricsType = MutableMapping[str, Any]
AllMetricsType = MutableMapping[str, TaskMetricsType]


class AllMetricsFuture(Protocol):
    """What `evaluate` returns first: a future whose `result()` is {task: {metric: value}}."""

    def result(self) -> AllMetricsType:
        ...


MetricsAndOutputsType = Tuple[AllMetricsFuture, Any]  # (metrics, outputs)

_BatchId = int
_Tokens = Sequence[int]
_AuxValues = Mapping[str, Sequence[Any]]
_IndicesAndPredictions = Sequence[Tuple[_BatchId, _Tokens]]
_IndicesAndPredictionsWithAuxValues = Tuple[_IndicesAndPredictions, _AuxValues]
_IndicesAndScores = Sequence[Tuple[_BatchId, float]]
_IndicesAndScoresWithIntermediates = Tuple[_IndicesAndScores, Mapping[str, Any]]
# What a predict_fn returns: [(example index, token ids)], optionally with
# {aux name: [value per example]} (predict_with_aux_fn).
PredictFnReturnType = Union[_IndicesAndPredictions, _IndicesAndPredictionsWithAuxValues]
# What a score_fn returns: [(example index, score)], optionally with intermediates.
ScoreFnReturnType = Union[_IndicesAndScores, _IndicesAndScoresWithIntermediates]
ModelFnReturnType = Union[_IndicesAndPredictions, _IndicesAndPredictionsWithAuxValues,
                          _IndicesAndScores, _IndicesAndScoresWithIntermediates]


class PredictFnCallable(Protocol):
    """predict_fn(enumerated model dataset, model_feature_shapes) -> PredictFnReturnType."""

    def __call__(self, dataset: tf.data.Dataset,
                 model_feature_shapes: Optional[Mapping[str, int]]) -> PredictFnReturnType:
        ...


class ScoreFnCallable(Protocol):
    """score_fn(enumerated model dataset, model_feature_shapes) -> ScoreFnReturnType."""

    def __call__(self, dataset: tf.data.Dataset,
                 model_feature_shapes: Optional[Mapping[str, int]]) -> ScoreFnReturnType:
        ...


class ModelFnCallable(Protocol):
    """A model function of any `ModelOutputType` (`evaluate(model_fns={type: fn})`)."""

    def __call__(self, dataset: tf.data.Dataset,
                 model_feature_shapes: Optional[Mapping[str, int]]) -> ModelFnReturnType:
        ...


def get_valid_eval_tasks(tasks: Sequence[Task], split: str) -> Sequence[Task]:
    """The tasks that have `split` and at least one metric (function or object)."""
    valid = []
    for task in tasks:
        if split not in task.splits:
            logging.info("Task %s has no '%s' split; skipping eval.", task.name, split)
            continue
        if not task.metric_fns and not task.metric_objs:
            logging.info("Task %s has no metrics defined; skipping eval.", task.name)
            continue
        valid.append(task)
    return valid


def needed_output_types(tasks: Sequence[Task]) -> Set[ModelOutputType]:
    """The model outputs the metrics of `tasks` need (t2t: which model functions to build).

        needed_output_types(evaluator.eval_tasks)    # {ModelOutputType.PREDICTION}
    """
    return {metric.model_output_type for task in tasks for metric in task.metric_objs}


def _sequence_length_of(value, dim):
    return int(np.shape(value)[dim]) if np.ndim(value) > dim else 0


def _cache_and_measure_examples(tasks, dataset_fn, sequence_dims, num_examples=None,
                                use_memory_cache=True):
    """({task: dataset with its cardinality}, {feature: longest length over all tasks})."""
    cached, max_lengths = {}, {k: 0 for k in tasks[0].output_features}
    for task in tasks:
        if set(task.output_features) != set(max_lengths):
            raise ValueError("all tasks must have the same features: %s has %s, %s has %s"
                             % (tasks[0].name, sorted(max_lengths), task.name,
                                sorted(task.output_features)))
    for task in tasks:
        ds = dataset_fn(task)
        if num_examples:
            ds = ds.take(num_examples)
        if use_memory_cache:
            ds = ds.cache()
        count = 0
        for example in ds.as_numpy_iterator():
            for key in max_lengths:
                max_lengths[key] = max(max_lengths[key], _sequence_length_of(
                    example[key], sequence_dims.get(key, 0)))
            count += 1
        cached[task.name] = ds.apply(tf.data.experimental.assert_cardinality(count))
    return cached, max_lengths


def _sorted_outputs(result):
    """[(index, output), ...] (or that and an aux dict) -> outputs in index order."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], Mapping):
        indices_and_outputs, aux = result
        indices = [int(i) for i, _ in indices_and_outputs]
        order = np.argsort(indices, kind="stable")
        outputs = [indices_and_outputs[i][1] for i in order]
        aux = {name: [values[i] for i in order] for name, values in aux.items()}
        return outputs, aux
    pairs = list(result)
    if pairs and len(pairs[0]) != 2:
        raise ValueError("Expected a sequence of length-2 tuples with (index, output) format.")
    return [output for _, output in sorted(pairs, key=lambda pair: int(pair[0]))]


def _call_model_fn(model_fn, dataset, feature_shapes_fn):
    """model_fn(dataset), as seqio calls it, or (dataset, model_feature_shapes) when the
    function names a second parameter (a `*args` function gets seqio's one argument)."""
    try:
        params = inspect.signature(model_fn).parameters
    except (TypeError, ValueError):
        params = {}
    positional = [p for p in params.values() if p.kind in (
        inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= 2:
        return model_fn(dataset, feature_shapes_fn())
    return model_fn(dataset)


def _feature_shapes(dataset):
    """{model feature: shape} of a (possibly enumerated) dataset of feature dicts."""
    spec = dataset.element_spec
    if isinstance(spec, tuple) and len(spec) == 2:
        spec = spec[1]  # (index, features)
    if not isinstance(spec, Mapping):
        return {}
    return {k: tuple(v.shape) for k, v in spec.items() if v.shape.rank}


_MODEL_FN_ARGS = {ModelOutputType.PREDICTION: "predict_fn", ModelOutputType.SCORE: "score_fn",
                  ModelOutputType.PREDICTION_WITH_AUX: "predict_with_aux_fn"}


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


class Evaluator:
    """Evaluates a Task or each task of a Mixture on its eval split (see the module doc).

    Attributes:
      eval_tasks: the tasks evaluated (those with the split and metric functions).
      cached_model_datasets: {task: enumerated dataset of model features}.
      cached_task_datasets: {task: dataset of task features}.
      cached_targets: {task: post-processed targets}.
      model_feature_shapes: {model feature: shape} of the model datasets.
      loggers: the loggers made from `logger_cls`.
    """

    def __init__(self, mixture_or_task_name: str, feature_converter: FeatureConverter,
                 eval_split: str = "validation", use_cached: bool = False,
                 seed: Optional[int] = 42,
                 sequence_length: Optional[Mapping[str, int]] = None,
                 num_examples: Optional[int] = None, shuffle: bool = False,
                 logger_cls: Sequence[Type[loggers_lib.Logger]] = (),
                 log_dir: Optional[str] = None, use_memory_cache: bool = True,
                 async_compute_metrics: bool = True, target_field_name: str = "targets"):
        logging.info("Initializing Evaluator for '%s'", mixture_or_task_name)
        eval_tasks = dataset_providers.get_subtasks(
            dataset_providers.get_mixture_or_task(mixture_or_task_name))
        self._eval_tasks = get_valid_eval_tasks(eval_tasks, eval_split)
        self._metrics_executor = (concurrent.futures.ThreadPoolExecutor(max_workers=1)
                                  if async_compute_metrics else None)
        self._metrics_future = None
        self._target_field_name = target_field_name
        self._cached_model_datasets = {}
        self._cached_task_datasets = {}
        self._cached_targets = {}
        self._model_feature_shapes = {}
        if logger_cls and not log_dir:
            raise ValueError("'log_dir' must be provided to `Evaluator` if `logger_cls` is "
                             "non-empty.")
        self._loggers = tuple(cls(output_dir=log_dir) for cls in logger_cls)
        if not self._eval_tasks:
            logging.warning("No eval task with valid split and metric fn found. Skipping eval.")
            return
        if feature_converter.pack:
            raise ValueError("During evaluation, packing can't be used.")

        for task in self._eval_tasks:
            for prep in task.preprocessors:
                try:
                    params = inspect.signature(prep).parameters
                except (TypeError, ValueError):
                    continue
                if ("sequence_length" in params and sequence_length is None and
                        params["sequence_length"].default is inspect.Parameter.empty):
                    name = getattr(getattr(prep, "func", prep), "__name__", repr(prep))
                    raise ValueError(
                        "Preprocessor '%s' in task '%s' has a `sequence_length` argument, "
                        "making it incompatible with automatic sequence length detection. "
                        "Pass a valid `sequence_length` to `Evaluator` and try again."
                        % (name, task.name))

        def dataset_fn(task):
            return task.get_dataset(sequence_length=sequence_length, split=eval_split,
                                    shuffle=shuffle, num_epochs=1, seed=seed,
                                    use_cached=use_cached)

        sequence_dims = {k: v.sequence_dim for k, v in feature_converter.TASK_FEATURES.items()}
        self._cached_task_datasets, max_lengths = _cache_and_measure_examples(
            self._eval_tasks, dataset_fn, sequence_dims, num_examples=num_examples,
            use_memory_cache=use_memory_cache)
        if sequence_length is None:
            logging.info("Setting sequence lengths to %s", max_lengths)
            sequence_length = max_lengths
        else:
            sequence_length = {k: sequence_length.get(k, max_lengths[k]) for k in max_lengths}
        for task in self._eval_tasks:
            model_ds = feature_converter(self._cached_task_datasets[task.name],
                                         sequence_length)
            self._cached_model_datasets[task.name] = model_ds.enumerate()
            self._model_feature_shapes = _feature_shapes(model_ds)
            self._cached_targets[task.name] = self._postprocessed_targets(task)

    def _postprocessed_targets(self, task):
        field = self._target_field_name
        vocab = task.output_features[field].vocabulary
        targets = []
        for example in self._cached_task_datasets[task.name].as_numpy_iterator():
            if field + "_pretokenized" in example:
                target = example[field + "_pretokenized"]
            else:
                target = vocab.decode([int(i) for i in np.reshape(example[field], [-1])])
            targets.append(task.postprocess_fn(_text(target), example=example, is_target=True))
        return targets

    def __del__(self):
        self.close()

    def close(self):
        """Wait for the metrics being computed."""
        executor = getattr(self, "_metrics_executor", None)
        if executor:
            executor.shutdown(wait=True)

    def evaluate(self, *, compute_metrics: bool, step: Optional[int] = None,
                 predict_fn: Optional[PredictFnCallable] = None,
                 score_fn: Optional[ScoreFnCallable] = None,
                 predict_with_aux_fn: Optional[PredictFnCallable] = None,
                 model_fns: Optional[Mapping[ModelOutputType, ModelFnCallable]] = None
                 ) -> MetricsAndOutputsType:
        """Run the model functions the tasks' metrics need; compute and log the metrics.

        Returns:
          (a Future of {task: {metric: value}} (its result None without compute_metrics),
           {task: {ModelOutputType: outputs in example order}}).
        """
        model_fns = dict(model_fns or {})
        if predict_fn:
            model_fns[ModelOutputType.PREDICTION] = predict_fn
        if score_fn:
            model_fns[ModelOutputType.SCORE] = score_fn
        if predict_with_aux_fn:
            model_fns[ModelOutputType.PREDICTION_WITH_AUX] = predict_with_aux_fn
        all_output = {}
        for task in self.eval_tasks:
            logging.info("Evaluating %s", task.name)
            all_output[task.name] = {}
            for metric_obj in task.metric_objs:
                output_type = metric_obj.model_output_type
                if output_type in all_output[task.name]:
                    continue
                if output_type not in model_fns:
                    raise ValueError("task %s has %s metrics: pass %s to evaluate()" % (
                        task.name, ModelOutputType.to_str(output_type), _MODEL_FN_ARGS.get(
                            output_type, "model_fns={%s: fn}" % output_type)))
                all_output[task.name][output_type] = _sorted_outputs(_call_model_fn(
                    model_fns[output_type], self._cached_model_datasets[task.name],
                    lambda: self.model_feature_shapes))

        future = concurrent.futures.Future()
        if not compute_metrics:
            future.set_result(None)
            return future, all_output
        if self._metrics_future is not None:
            tick = time.time()
            self._metrics_future.result()
            logging.info("Time waiting for previous metrics run: %f secs.", time.time() - tick)

        def compute_all():
            tick = time.time()
            results = {}
            for task in self.eval_tasks:
                try:
                    results[task.name] = self._compute_metrics(task, all_output[task.name], step)
                except Exception as error:
                    raise ValueError("Failed to evaluate task %s: %s" % (task.name, error)
                                     ) from error
            logging.info("Time computing metrics: %f secs.", time.time() - tick)
            return results

        if self._metrics_executor:
            self._metrics_future = self._metrics_executor.submit(compute_all)
        else:
            future.set_result(compute_all())
            self._metrics_future = future
        return self._metrics_future, all_output

    def _compute_metrics(self, task: Task, task_output, step: Optional[int] = None
                         ) -> TaskMetricsType:
        """Run the task's metric objects on its outputs, call the loggers (seqio's
        `_compute_clu_metrics`)."""
        task_dataset = self._cached_task_datasets[task.name]
        examples = list(task_dataset.as_numpy_iterator())
        results, inferences, targets = {}, {}, None
        for metric_obj in task.metric_objs:
            model_output = metrics_lib.model_output_arrays(
                task_output[metric_obj.model_output_type])
            metric = metric_obj.from_model_output(examples, model_output, task.output_features,
                                                  self._target_field_name)
            if isinstance(metric, metrics_lib.CollectingMetric):
                value, targets_and_inferences = metric.actual_compute(
                    examples, task.output_features, self._target_field_name,
                    self.cached_targets.get(task.name))
                self.cached_targets[task.name] = targets_and_inferences["targets"]
            else:
                value = metric.compute()
                targets_and_inferences = getattr(metric, "targets_and_inferences", None)
            for key, val in (targets_and_inferences or {}).items():
                if key == "targets":
                    targets = val  # the last legacy metric's, as in seqio
                else:
                    inferences[key] = val.tolist() if isinstance(val, np.ndarray) else val
            for key, val in value.items():
                if key in results:
                    raise ValueError("Duplicate metric key '%s' in Task '%s'." % (key, task.name))
                results[key] = val
        values = {k: v if isinstance(v, metrics_lib.MetricValue) else metrics_lib.Scalar(v)
                  for k, v in results.items()}
        for logger in self.loggers:
            logger(task_name=task.name, step=step, metrics=values, dataset=task_dataset,
                   targets=targets, inferences=inferences)
        return results

    @property
    def eval_tasks(self) -> Sequence[Task]:
        return self._eval_tasks

    @property
    def cached_model_datasets(self) -> Mapping[str, tf.data.Dataset]:
        return self._cached_model_datasets

    @property
    def cached_task_datasets(self) -> Mapping[str, tf.data.Dataset]:
        return self._cached_task_datasets

    @property
    def cached_targets(self) -> Mapping[str, Sequence[Any]]:
        # An `__init__` of a subclass or a test may leave it out: the targets are then
        # post-processed on the first evaluation (`CollectingMetric.actual_compute`).
        if getattr(self, "_cached_targets", None) is None:
            self._cached_targets = {}
        return self._cached_targets

    @property
    def model_feature_shapes(self) -> Mapping[str, Tuple[int, ...]]:
        """{model feature: shape} of the model datasets (of the cached ones when an
        `__init__` of a subclass or a test did not measure them)."""
        shapes = getattr(self, "_model_feature_shapes", None)
        if shapes is None:
            shapes = {}
            for dataset in getattr(self, "_cached_model_datasets", {}).values():
                shapes = _feature_shapes(dataset)
        return shapes

    @property
    def loggers(self) -> Tuple[loggers_lib.Logger, ...]:
        return tuple(self._loggers)



class MetricCollection:
    """The metric objects of one task and model output type, by name (`<Class>_<i>`),
    merged together (clu.metrics.Collection as MetricManager uses it).

        collection.FromMetricFun_0.values["mask"]     # a metric by its name
        collection.merge(batch).compute()             # {name: metric.compute()}
    """

    def __init__(self, metrics: Mapping[str, Any]):
        self._metrics = dict(metrics)

    def __getattr__(self, name):
        try:
            return self.__dict__["_metrics"][name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def metrics(self) -> Mapping[str, Any]:
        return dict(self._metrics)

    def merge(self, other: "MetricCollection") -> "MetricCollection":
        return MetricCollection({name: metric.merge(other.metrics[name])
                                 for name, metric in self._metrics.items()})

    def compute(self) -> Mapping[str, Any]:
        return {name: metric.compute() for name, metric in self._metrics.items()}


class MetricManager:
    """Metric objects updated batch by batch, for evaluations that run the model in
    batches or shards (seqio 0.0.20's `evaluation.MetricManager`).

        manager = MetricManager(tasks)
        manager.initialize_metrics("copy", ModelOutputType.PREDICTION)
        for examples, tokens, mask, indices_2d in batches:   # padded batches of any shard
            batch = manager.from_model_output("copy", ModelOutputType.PREDICTION, examples,
                                              tokens, task.output_features, mask=mask,
                                              indices_2d=indices_2d)
            manager.merge(batch, "copy", ModelOutputType.PREDICTION)
        collection = manager.output_metrics_collections["copy"][ModelOutputType.PREDICTION]
    A `CollectingMetric` in the collection then gives its values with `actual_compute(all
    examples, features)`, any other metric with `compute()`.
    """

    def __init__(self, tasks: Sequence[Task]):
        self.metric_registry = {}
        self.output_metrics_collections = {}
        for task in tasks:
            by_type = {}
            for metric_obj in task.metric_objs:
                by_type.setdefault(metric_obj.model_output_type, []).append(metric_obj)
            self.metric_registry[task.name] = {
                output_type: {type(m).__name__ + "_%d" % i: type(m) for i, m in enumerate(objs)}
                for output_type, objs in by_type.items()}
            self.output_metrics_collections[task.name] = {}

    def initialize_metrics(self, task_name: str, model_output_type: ModelOutputType):
        """Start the task's metrics of this output type from empty ones."""
        self.output_metrics_collections[task_name][model_output_type] = MetricCollection({
            name: cls.empty()
            for name, cls in self.metric_registry[task_name][model_output_type].items()})

    def from_model_output(self, task_name: str, model_output_type: ModelOutputType,
                          inputs: Sequence[Mapping[str, Any]], model_output: Any,
                          features: Mapping[str, Any], target_field_name: str = "targets",
                          mask: Optional[np.ndarray] = None,
                          indices_2d: Optional[np.ndarray] = None) -> MetricCollection:
        """The task's metrics of this output type on one batch (`mask` 0 = padding)."""
        return MetricCollection({
            name: cls.from_model_output(inputs=inputs, model_output=model_output,
                                        features=features, target_field_name=target_field_name,
                                        mask=mask, indices_2d=indices_2d)
            for name, cls in self.metric_registry[task_name][model_output_type].items()})

    def merge(self, metrics_collection: MetricCollection, task_name: str,
              model_output_type: ModelOutputType):
        """Add one batch's metrics to the task's."""
        current = self.output_metrics_collections[task_name][model_output_type]
        self.output_metrics_collections[task_name][model_output_type] = current.merge(
            metrics_collection)

    def host_gather_and_reduce(self, task_name: str, model_output_type: ModelOutputType):
        """Across hosts in seqio (jax multihost); t2t evaluates in one process, whose
        metrics are already complete, so they stay as they are."""
        del task_name, model_output_type
