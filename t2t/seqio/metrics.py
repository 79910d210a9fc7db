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

The value classes, `ModelOutputType` and `MetricFnCallable` have seqio 0.0.20's names and
fields. seqio's CLU-based `Metric`/`CollectingMetric`/`LegacyMetric` (jax, flax, clu) are
not part of t2t: `metric_fns` cover the same evaluations. `bleu`, `accuracy`,
`sequence_accuracy` and `exact_match` are t2t additions with the names and results of
`t5.evaluation.metrics` (percentages).
"""
import dataclasses
import enum
from typing import Any, Callable, Mapping, Optional, Sequence, Union

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
