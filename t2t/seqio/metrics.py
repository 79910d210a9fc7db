"""seqio.metrics: the values a metric function returns, and common text metrics.

A Task's `metric_fns` take `(targets, predictions)` (postprocessed strings, one per
example) or `(targets, scores)` (one log-likelihood per example) and return
{name: value}; a plain number is a `Scalar`, the other value classes say how a logger
writes them:

    def exact_match(targets, predictions):
        return {"exact_match": 100.0 * np.mean([t == p for t, p in zip(targets, predictions)])}
    exact_match(["a b", "c"], ["a b", "d"])          # {"exact_match": 50.0}
    sequence_accuracy(["a b", "c"], ["a b", "d"])    # {"sequence_accuracy": 50.0}
    bleu(["the cat sat"], ["the cat sat"])           # {"bleu": 100.0}  (sacrebleu)

Metric objects (a Task's `metric_objs`, seqio's current API) build intermediate values
from model outputs, merge across batches or shards, and compute {name: value}:

    @dataclasses.dataclass(frozen=True)          # seqio code: @flax.struct.dataclass
    class Count(Metric): ...                     # see `Metric`
    LegacyMetric.empty(exact_match, postprocess_fn=None)       # a metric function, once
    PassthroughLegacyMetric.from_metric_fn(exact_match).empty()  # collected, then computed

The value classes, `ModelOutputType`, `Metric`, `CollectingMetric`, `LegacyMetric`,
`PassthroughLegacyMetric`, `remove_padding_examples` and `globally_sort_model_output` have
seqio 0.0.20's names, fields and merge semantics, in plain Python and numpy (seqio builds
them on clu, flax and jax). `bleu`, `accuracy`, `sequence_accuracy` and `exact_match` are
t2t additions with the names and results of `t5.evaluation.metrics` (percentages).
"""
import dataclasses
import enum
import inspect
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np


@dataclasses.dataclass
class MetricValue:
    """Base of the values a metric function may return (written by a `Logger`)."""


@dataclasses.dataclass
class Scalar(MetricValue):
    """A number: a time series in TensorBoard, a field of the JSON-lines log."""

    value: Union[int, float]


@dataclasses.dataclass
class Text(MetricValue):
    """Text (markdown) for TensorBoard's text tab and the JSON-lines log."""

    textdata: Union[str, bytes]


@dataclasses.dataclass
class Image(MetricValue):
    """Images for `tf.summary.image` ([k, h, w, c] array)."""

    image: np.ndarray
    max_outputs: int = 3


@dataclasses.dataclass
class Audio(MetricValue):
    """Audio for `tf.summary.audio` ([k, t, c] float array)."""

    audiodata: np.ndarray
    sample_rate: int = 44100
    max_outputs: int = 3


@dataclasses.dataclass
class Histogram(MetricValue):
    """A histogram of `values` for `tf.summary.histogram`."""

    values: np.ndarray
    bins: Optional[int] = None


@dataclasses.dataclass
class Generic(MetricValue):
    """A raw tensor with its SummaryMetadata (`tf.summary.write`)."""

    tensor: np.ndarray
    metadata: Any


class ModelOutputType(enum.IntEnum):
    """What a model function returns for the Evaluator."""

    PREDICTION = 1
    SCORE = 2
    PREDICTION_WITH_AUX = 3
    SCORE_WITH_INTERMEDIATES = 4

    @classmethod
    def to_str(cls, enm):
        return {cls.PREDICTION: "prediction", cls.SCORE: "score",
                cls.PREDICTION_WITH_AUX: "prediction_with_aux",
                cls.SCORE_WITH_INTERMEDIATES: "score_with_intermediates"}[enm]


MetricFnCallable = Callable[..., Mapping[str, Union[MetricValue, float]]]

_METRIC_FN_ARGS = {("targets", "predictions"): ModelOutputType.PREDICTION,
                   ("targets", "scores"): ModelOutputType.SCORE,
                   ("targets", "predictions", "aux_values"): ModelOutputType.PREDICTION_WITH_AUX}


def metric_fn_output_type(metric_fn: MetricFnCallable) -> ModelOutputType:
    """The model output a metric function needs, from its positional arguments.

        metric_fn_output_type(lambda targets, scores: {})              # SCORE
        metric_fn_output_type(lambda targets, predictions, k=3: {})    # PREDICTION
    """
    pos_args = tuple(key for key, param in inspect.signature(metric_fn).parameters.items()
                     if param.default == inspect.Parameter.empty
                     and param.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if pos_args not in _METRIC_FN_ARGS:
        raise ValueError("Metric functions must have positional arguments matching either "
                         "('targets', 'scores'), ('targets', 'predictions') or "
                         f"('targets', 'predictions', 'aux_values'). Got: {pos_args}")
    return _METRIC_FN_ARGS[pos_args]


# --- model outputs as trees of per-example arrays (dicts and tuples hold leaves) ----------

def _tree_map(fn, tree, *others):
    """`fn` over the leaves of `tree` (and the same leaves of `others`): dicts and tuples
    are containers, None is empty, anything else (an array, a list of examples) a leaf."""
    if isinstance(tree, Mapping):
        return {key: _tree_map(fn, tree[key], *(other[key] for other in others))
                for key in tree}
    if isinstance(tree, tuple):
        return tuple(_tree_map(fn, item, *(other[i] for other in others))
                     for i, item in enumerate(tree))
    if tree is None:
        return None
    return fn(tree, *others)


def _rows(rows: Sequence[Any]) -> np.ndarray:
    """A 1-D object array holding `rows` as they are (ragged rows, mixed shapes)."""
    out = np.empty(len(rows), dtype=object)
    for i, row in enumerate(rows):
        out[i] = row
    return out


def _as_array(values: Any) -> np.ndarray:
    """`np.asarray(values)`; rows of different lengths become an object array of rows."""
    if isinstance(values, np.ndarray):
        return values
    try:
        return np.asarray(values)
    except ValueError:  # ragged: numpy >= 1.24 refuses an inhomogeneous shape
        return _rows([np.asarray(row) for row in values])


def _concatenate(first: Any, second: Any) -> np.ndarray:
    """The examples of `first` then those of `second` (along the first axis)."""
    first, second = _as_array(first), _as_array(second)
    if first.dtype != object and second.dtype != object and first.shape[1:] == second.shape[1:]:
        return np.concatenate([first, second], axis=0)
    return _rows(list(first) + list(second))


def model_output_arrays(model_output):
    """Model outputs as the Evaluator gives them to metric objects: a list of per-example
    outputs becomes an array (ragged rows: an object array of rows, a t2t addition), and
    (outputs, {name: values}) becomes (array, {name: array}).

        model_output_arrays([[3, 4], [5, 6]])               # array([[3, 4], [5, 6]])
        model_output_arrays(([[3], [5]], {"p": [0.1, 0.2]}))  # (array([[3], [5]]), {"p": ...})
    """
    if isinstance(model_output, tuple):
        outputs, aux = model_output
        return _as_array(outputs), _tree_map(_as_array, aux)
    return _as_array(model_output)


def _num_examples(model_output: Any) -> int:
    return len(model_output[0]) if isinstance(model_output, tuple) else len(model_output)


def remove_padding_examples(model_output, indices_2d, mask):
    """The 2-D indices and model outputs of the examples whose `mask` is 1.

    A sharded inference pads its last batch with copies of examples (mask 0):

        remove_padding_examples(np.array([[1, 2], [3, 4], [1, 2]]),
                                np.array([[0, 1], [0, 2], [0, 0]]), np.array([1, 1, 0]))
        # (array([[0, 1], [0, 2]]), array([[1, 2], [3, 4]]))
    `model_output` may be a tuple or dict of such arrays (predictions with aux values).
    """
    keep = np.asarray(mask) == 1
    return (np.asarray(indices_2d)[keep],
            _tree_map(lambda values: _as_array(values)[keep], model_output))


def globally_sort_model_output(model_output, indices_2d):
    """Model outputs in example order: by shard id (`indices_2d[:, 0]`), then by index
    within the shard (`indices_2d[:, 1]`).

        globally_sort_model_output(np.array([[1, 2], [3, 4], [5, 6]]),
                                   np.array([[1, 0], [0, 1], [0, 0]]))
        # array([[5, 6], [3, 4], [1, 2]])
    """
    indices_2d = np.asarray(indices_2d).reshape([-1, 2])
    permutation = np.lexsort((indices_2d[:, 1], indices_2d[:, 0]))
    return _tree_map(lambda values: _as_array(values)[permutation], model_output)


def _decode(vocabulary, tokens) -> str:
    return vocabulary.decode([int(t) for t in np.reshape(np.asarray(tokens), [-1])])


def _decode_predictions(vocabulary, model_output) -> list:
    """Text of each example: [batch, length] ids (top-1), [batch, k, length] (top-k lists),
    ragged rows of ids (t2t), or the texts themselves (already decoded)."""
    if isinstance(model_output, np.ndarray) and model_output.dtype != object:
        if model_output.ndim == 2:
            return [_decode(vocabulary, tokens) for tokens in model_output]
        if model_output.ndim == 3:
            return [[_decode(vocabulary, seq) for seq in sequences] for sequences in model_output]
    if len(model_output) and all(isinstance(row, (list, np.ndarray)) and np.ndim(row) == 1
                                 and (np.size(row) == 0 or np.asarray(row).dtype.kind in "iu")
                                 for row in model_output):
        return [_decode(vocabulary, tokens) for tokens in model_output]
    return list(model_output)


def _postprocessed_target(example, features, target_field_name, postprocess):
    if target_field_name + "_pretokenized" in example:
        target = example[target_field_name + "_pretokenized"]
    else:
        target = features[target_field_name].vocabulary.decode(
            [int(t) for t in example[target_field_name]])
    if isinstance(target, bytes):
        target = target.decode("utf-8")
    return postprocess(target, example=example, is_target=True)


class _CluMetric:
    """clu.metrics.Metric's interface: intermediate values that merge, then a result."""

    @classmethod
    def from_model_output(cls, *args, **kwargs):
        """A metric from one batch (or all) of model outputs."""
        raise NotImplementedError("Must override from_model_output()")

    def merge(self, other):
        """The metric of the examples of `self` and of `other`."""
        raise NotImplementedError("Must override merge()")

    def compute(self):
        """The final result from the intermediate values."""
        raise NotImplementedError("Must override compute()")

    @classmethod
    def empty(cls):
        """The metric of no example: `m.merge(cls.empty())` is `m`."""
        raise NotImplementedError("Must override empty()")

    def compute_value(self) -> MetricValue:
        """`compute()` as a `Scalar`."""
        return Scalar(self.compute())


@dataclasses.dataclass(frozen=True)
class Metric(_CluMetric):
    """A metric object of a Task (`metric_objs`): seqio.metrics.Metric without jax.

    A subclass is a frozen dataclass (where seqio code writes `@flax.struct.dataclass`)
    with the model output it needs, built per batch and merged:

        @dataclasses.dataclass(frozen=True)
        class Count(seqio.metrics.Metric):
            count: int = 0
            model_output_type: ModelOutputType = ModelOutputType.PREDICTION

            @classmethod
            def empty(cls):
                return cls(count=0)

            @classmethod
            def from_model_output(cls, inputs, model_output, features,
                                  target_field_name="targets", mask=None, indices_2d=None):
                return cls(count=len(inputs) if mask is None else int(np.sum(mask)))

            def merge(self, other):
                return type(self)(count=self.count + other.count)

            def compute(self):
                return {"count": self.count}

        Count.empty().merge(Count.from_model_output([{}, {}], None, {})).compute()  # {"count": 2}
    The Evaluator calls `from_model_output(examples, outputs, task.output_features,
    target_field_name)` once with all examples of the eval split (outputs in their order)
    and logs `compute()`, a {name: value} dict.
    """

    model_output_type: ModelOutputType

    @classmethod
    def from_model_output(cls, inputs: Sequence[Mapping[str, Any]],
                          model_output: Union[np.ndarray, Tuple[np.ndarray, np.ndarray]],
                          features: Mapping[str, Any], target_field_name: str = "targets",
                          mask: Optional[np.ndarray] = None,
                          indices_2d: Optional[np.ndarray] = None) -> "Metric":
        """A metric of `inputs` (examples) and their `model_output`; `mask` marks the real
        examples (0 = padding), `indices_2d` each one's (shard id, index in shard)."""
        raise NotImplementedError("Must override from_model_output()")


@dataclasses.dataclass(frozen=True)
class CollectingMetric(_CluMetric):
    """Collects model outputs (with their mask and 2-D indices) to compute on the host.

    `values` holds {"model_output", "indices_2d", "mask"}; merging concatenates each along
    the examples (clu.metrics.CollectingMetric):

        a = CollectingMetric.from_model_output([{}], np.array([[5, 6]]), {})
        b = CollectingMetric.from_model_output([{}], np.array([[7, 8]]), {})
        a.merge(b).values["model_output"]          # array([[5, 6], [7, 8]])
    Subclasses implement `actual_compute(task_dataset_as_numpy, task_output_features,
    target_field_name, cached_targets)` -> (metrics, targets_and_inferences).
    """

    values: Dict[str, Any]

    @classmethod
    def empty(cls) -> "CollectingMetric":
        return cls(values={})

    @classmethod
    def from_model_output(cls, inputs: Sequence[Mapping[str, Any]],
                          model_output: Union[np.ndarray, Tuple[np.ndarray, np.ndarray]],
                          features: Mapping[str, Any], target_field_name: str = "targets",
                          mask: Optional[np.ndarray] = None,
                          indices_2d: Optional[np.ndarray] = None):
        del inputs, features, target_field_name
        num_examples = _num_examples(model_output)
        if mask is None:
            mask = np.ones((num_examples,), np.int32)
        if indices_2d is None:
            indices_2d = np.stack([np.zeros((num_examples,), np.int32),
                                   np.arange(num_examples, dtype=np.int32)], axis=1)
        return cls(values={"model_output": model_output, "indices_2d": indices_2d,
                           "mask": mask})

    def merge(self, other: "CollectingMetric") -> "CollectingMetric":
        if not other.values:
            return self
        if not self.values:
            return other
        if set(self.values) != set(other.values):
            raise ValueError("CollectingMetric.merge: values %s and %s differ; merge metrics "
                             "of the same kind" % (sorted(self.values), sorted(other.values)))
        return dataclasses.replace(self, values={
            name: _tree_map(_concatenate, value, other.values[name])
            for name, value in self.values.items()})

    def compute(self):
        return dict(self.values)

    def actual_compute(self, task_dataset_as_numpy, task_output_features,
                       target_field_name: str = "targets",
                       cached_targets: Optional[List[str]] = None):
        """(metrics, targets_and_inferences) of the collected outputs."""
        raise NotImplementedError("Must override actual_compute()")


@dataclasses.dataclass(frozen=True)
class LegacyMetric(Metric):
    """A `metric_fns` function as a Metric: decodes and post-processes, then calls it.

        metric = LegacyMetric.empty(sequence_accuracy, postprocess_fn=None)
        metric.model_output_type                   # ModelOutputType.PREDICTION
        metric.from_model_output(examples, np.array(token_rows), task.output_features)
        metric.compute()                           # {"sequence_accuracy": 75.0}
    The targets (`<field>_pretokenized`, else the decoded `<field>`) are post-processed
    once and kept for later calls.
    """

    _metric_fn: MetricFnCallable
    _postprocess_fn: Optional[Callable[..., Any]]
    metric_fn_kwargs: Dict[str, Any]
    targets_and_inferences: Dict[str, Any]

    @classmethod
    def empty(cls, metric_fn: MetricFnCallable,
              postprocess_fn: Optional[Callable[..., Any]]) -> "LegacyMetric":
        return cls(_metric_fn=metric_fn, _postprocess_fn=postprocess_fn,
                   model_output_type=metric_fn_output_type(metric_fn),
                   metric_fn_kwargs={}, targets_and_inferences={})

    def postprocess_fn(self, targets_or_predictions: Any, **postprocess_kwargs) -> Any:
        if self._postprocess_fn:
            return self._postprocess_fn(targets_or_predictions, **postprocess_kwargs)
        return targets_or_predictions

    def from_model_output(self, inputs: Sequence[Mapping[str, Any]],  # pylint: disable=arguments-differ
                          model_output: Union[np.ndarray, Tuple[np.ndarray, np.ndarray]],
                          features: Mapping[str, Any], target_field_name: str = "targets",
                          mask: Optional[np.ndarray] = None) -> "LegacyMetric":
        del mask
        inputs = list(inputs)
        if not self.metric_fn_kwargs.get("targets"):
            targets = [_postprocessed_target(ex, features, target_field_name,
                                             self.postprocess_fn) for ex in inputs]
            self.metric_fn_kwargs["targets"] = targets
            self.targets_and_inferences["targets"] = targets
        _add_inferences(self.model_output_type, model_output, inputs, features,
                        target_field_name, self.postprocess_fn, self.metric_fn_kwargs,
                        self.targets_and_inferences)
        return self

    def compute(self):
        return self._metric_fn(**self.metric_fn_kwargs)


def _add_inferences(output_type, model_output, inputs, features, target_field_name,
                    postprocess, metric_fn_kwargs, targets_and_inferences):
    """seqio's legacy path: scores as they are; predictions decoded, then post-processed."""
    if output_type == ModelOutputType.SCORE:
        metric_fn_kwargs["scores"] = model_output
        targets_and_inferences["score"] = model_output
        return
    vocab = features[target_field_name].vocabulary
    if output_type == ModelOutputType.PREDICTION_WITH_AUX:
        metric_fn_kwargs["aux_values"] = model_output[1]
        targets_and_inferences["aux_value"] = model_output[1]
        predictions = [_decode(vocab, tokens) for tokens in model_output[0]]
    else:
        predictions = _decode_predictions(vocab, model_output)
        targets_and_inferences["output"] = predictions
    predictions = [postprocess(p, example=ex, is_target=False)
                   for ex, p in zip(inputs, predictions)]
    metric_fn_kwargs["predictions"] = predictions
    targets_and_inferences["prediction"] = predictions


@dataclasses.dataclass(frozen=True)
class PassthroughLegacyMetric(CollectingMetric):
    """A `metric_fns` function as a CollectingMetric (what a Task makes of `metric_fns`).

        Squad = PassthroughLegacyMetric.from_metric_fn(squad, postprocess_fn=qa)
        metric = Squad.empty()
        for shard in shards:       # outputs with padding examples (mask 0) and 2-D indices
            metric = metric.merge(Squad.from_model_output(
                shard.examples, shard.tokens, features, mask=shard.mask,
                indices_2d=shard.indices_2d))
        values, targets_and_inferences = metric.actual_compute(examples, features)
    `actual_compute` drops the padding, sorts the outputs by (shard, index), decodes and
    post-processes them, and calls the function with all examples' targets.
    """

    @classmethod
    def from_metric_fn(cls, metric_fn: MetricFnCallable,
                       postprocess_fn: Optional[Callable[..., Any]] = None):
        """A `PassthroughLegacyMetric` class calling `metric_fn` (after `postprocess_fn`)."""
        output_type = metric_fn_output_type(metric_fn)

        @dataclasses.dataclass(frozen=True)
        class FromMetricFun(cls):
            """PassthroughLegacyMetric running one metric function."""

            model_output_type: ModelOutputType = output_type

            @classmethod
            def postprocess(cls, targets_or_predictions: Any, **postprocess_kwargs) -> Any:
                if postprocess_fn:
                    return postprocess_fn(targets_or_predictions, **postprocess_kwargs)
                return targets_or_predictions

            def postprocess_targets(self, task_dataset_as_numpy, task_output_features,
                                    target_field_name: str = "targets"):
                return [_postprocessed_target(ex, task_output_features, target_field_name,
                                              type(self).postprocess)
                        for ex in task_dataset_as_numpy]

            def actual_compute(self, task_dataset_as_numpy, task_output_features,
                               target_field_name: str = "targets",
                               cached_targets: Optional[List[str]] = None):
                examples = list(task_dataset_as_numpy)
                targets = cached_targets or self.postprocess_targets(
                    examples, task_output_features, target_field_name)
                metric_fn_kwargs = {"targets": targets}
                targets_and_inferences = {"targets": targets}
                indices_2d, model_output = remove_padding_examples(
                    self.values["model_output"], self.values["indices_2d"], self.values["mask"])
                if len(targets) != len(indices_2d):
                    raise ValueError(
                        "%s: %d targets but %d model outputs (without padding); give one "
                        "output per example of the split" % (getattr(
                            metric_fn, "__name__", "metric_fn"), len(targets), len(indices_2d)))
                model_output = globally_sort_model_output(model_output, indices_2d)
                _add_inferences(type(self).model_output_type, model_output, examples,
                                task_output_features, target_field_name, type(self).postprocess,
                                metric_fn_kwargs, targets_and_inferences)
                return metric_fn(**metric_fn_kwargs), targets_and_inferences

        FromMetricFun.__name__ = FromMetricFun.__qualname__ = "FromMetricFun"
        return FromMetricFun


def _check_lengths(targets: Sequence[Any], predictions: Sequence[Any]):
    if len(targets) != len(predictions):
        raise ValueError("metric: %d targets but %d predictions; give one prediction per "
                         "target" % (len(targets), len(predictions)))


def sequence_accuracy(targets: Sequence[Any], predictions: Sequence[Any]):
    """Percentage of predictions equal to their target (whole sequences)."""
    _check_lengths(targets, predictions)
    if not targets:
        return {"sequence_accuracy": 0.0}
    return {"sequence_accuracy": 100.0 * float(np.mean(
        [t == p for t, p in zip(targets, predictions)]))}


def exact_match(targets: Sequence[Any], predictions: Sequence[Any]):
    """Percentage of predictions equal to their target, after stripping whitespace."""
    _check_lengths(targets, predictions)
    if not targets:
        return {"exact_match": 0.0}

    def norm(value):
        return value.strip() if isinstance(value, str) else value

    return {"exact_match": 100.0 * float(np.mean(
        [norm(t) == norm(p) for t, p in zip(targets, predictions)]))}


def accuracy(targets: Sequence[Any], predictions: Sequence[Any]):
    """Percentage of equal labels (classification tasks)."""
    _check_lengths(targets, predictions)
    if not targets:
        return {"accuracy": 0.0}
    return {"accuracy": 100.0 * float(np.mean(
        [t == p for t, p in zip(targets, predictions)]))}


def bleu(targets: Sequence[Any], predictions: Sequence[str], tokenizer: str = "intl"):
    """Corpus BLEU of sacrebleu (as t5.evaluation.metrics.bleu: "intl" tokenizer,
    exponential smoothing); `targets` may hold one reference or a list per example."""
    import sacrebleu  # a dependency of t2t
    _check_lengths(targets, predictions)
    if targets and isinstance(targets[0], (list, tuple)):
        references = [[t[i] for t in targets] for i in range(len(targets[0]))]
    else:
        references = [list(targets)]
    score = sacrebleu.corpus_bleu(list(predictions), references, smooth_method="exp",
                                  smooth_value=0.0, force=False, lowercase=False,
                                  tokenize=tokenizer, use_effective_order=False)
    return {"bleu": float(score.score)}
