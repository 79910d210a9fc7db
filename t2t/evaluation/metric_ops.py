"""Metric ops for Estimator EVAL and eager evaluation, built from `metrics.METRICS_FNS`.

    ops = create_evaluation_metrics([problem], model_hparams)
    # {"metrics-algorithmic_reverse_binary40/targets/accuracy": fn, ...}
    value, update_op = ops[name](predictions, features, features["targets"])

Kept apart from `t2t.evaluation.metrics` (the metric functions themselves) for size; both
`create_*` functions are re-exported there under T2T's names.
"""
import numpy as np
import tensorflow as tf
from absl import logging

from t2t.evaluation import metrics
from t2t.layers import losses
from t2t.layers import modalities
from t2t.layers import shape_utils


def _reduce_dimensions(predictions, labels):
    """Fold extra leading axes (e.g. video frames) into the spatial one: [B, T, -1, V]."""
    if predictions.shape.rank is not None and predictions.shape.rank > 5:
        predictions_shape = shape_utils.shape_list(predictions)
        predictions = tf.reshape(predictions, [predictions_shape[0], predictions_shape[1], -1,
                                               predictions_shape[-1]])
        labels_shape = shape_utils.shape_list(labels)
        labels = tf.reshape(labels, [labels_shape[0], labels_shape[1], -1])
    return predictions, labels


def _problem_metric_fns(problem, model_hparams):
    """{metric name: fn} of a problem: its eval_metric_fns, else its eval_metrics() names."""
    if hasattr(problem, "eval_metric_fns"):
        return problem.eval_metric_fns(model_hparams)
    names = list(problem.eval_metrics())
    unknown = [name for name in names if name not in metrics.METRICS_FNS]
    if unknown:
        raise metrics.unknown_metrics_error("problem %s" % problem.name, unknown)
    return {name: metrics.METRICS_FNS[name] for name in names}


def _weights_fn_for(model_hparams, target_name, modality_type):
    """hparams.weights_fn[target] if set, else the modality's weights function."""
    overrides = getattr(model_hparams, "weights_fn", None) or {}
    weights_fn = overrides.get(target_name) if isinstance(overrides, dict) else None
    if weights_fn is None:
        weights_fn = modalities.get_weights_fn(modality_type)
    if weights_fn is None:
        # A user's own modality type: metrics ignore 0-padded labels, as for symbols.
        logging.warning("No weights function for modality %r of %s; metrics use "
                        "weights_nonzero (set hparams.weights_fn[%r] to change it)",
                        modality_type, target_name, target_name)
        weights_fn = losses.weights_nonzero
    return weights_fn


def _make_metric_fn(metric_fn, weights_fn):
    takes_features = metrics.takes_features(metric_fn)

    def problem_metric_fn(predictions, features, labels):
        """(value, update_op) of the weighted mean of the metric's scores."""
        kwargs = {"features": features} if takes_features else {}
        predictions, labels = _reduce_dimensions(predictions, labels)
        scores, weights = metric_fn(predictions, labels, weights_fn=weights_fn, **kwargs)
        return tf.compat.v1.metrics.mean(scores, weights)

    return problem_metric_fn


def _make_streaming_metric_fn(streaming_fn):
    def streaming_metric_fn(predictions, features, labels):
        del features
        predictions, labels = _reduce_dimensions(predictions, labels)
        return streaming_fn(predictions, labels)

    return streaming_metric_fn


def _make_image_summary_fn(metric_fn, model_hparams):
    def image_wrapped_metric_fn(predictions, features, labels):
        """(summary, zeros): written as an image summary, not averaged."""
        del features
        predictions, labels = _reduce_dimensions(predictions, labels)
        return metric_fn(predictions, labels, model_hparams)

    return image_wrapped_metric_fn


def _multi_problem_weights_fn(task_id):
    return lambda labels: losses.weights_multi_problem(labels, task_id)


# `multi_problem` not given: T2T's callers, whose hparams carry the trained problem.
_FROM_HPARAMS = object()


def create_evaluation_metrics(problems, model_hparams, multi_problem=_FROM_HPARAMS):
    """Estimator metric fns for each problem, target feature and metric the problem asks for.

    Args:
      problems: Problem instances (anything with `name`, `eval_metrics()` or
        `eval_metric_fns(hparams)`, and `get_hparams(hparams)` giving `modality`).
      multi_problem: the MultiProblem whose `task_list` `problems` are (its metric fns and
        per-task weights apply), or None. Not given, as T2T's callers do, it is the problem
        attached to `model_hparams` when that has a task_list.
      model_hparams: the model's hparams; `weights_fn[target]` overrides the modality's
        weights, `overload_eval_metric_name` renames a single problem's metrics.

    Returns:
      {"metrics-<problem>/<target>/<metric>": fn(predictions, features, labels) ->
       (value, update_op)}. The problem name gets "_rev" when it was reversed.

        fns = create_evaluation_metrics([problem], hparams)
        sorted(fns)   # ["metrics-my_problem/targets/accuracy", ...]

    Raises:
      ValueError: a problem asks for a metric name that metrics.METRICS_FNS does not have.
    """
    if multi_problem is _FROM_HPARAMS:
        multi_problem = getattr(model_hparams, "problem", None)
    if not hasattr(multi_problem, "task_list"):
        multi_problem = None
    eval_metrics = {}
    for problem in problems:
        problem_name = problem.name
        if getattr(problem, "was_reversed", False):
            problem_name += "_rev"
        metric_fns = _problem_metric_fns(problem, model_hparams)
        if multi_problem is not None:
            metric_fns = multi_problem.eval_metric_fns(model_hparams)

        target_modality = problem.get_hparams(model_hparams).modality["targets"]
        if not isinstance(target_modality, dict):
            target_modality = {"targets": target_modality}

        for target_name, modality_type in target_modality.items():
            weights_fn = _weights_fn_for(model_hparams, target_name, modality_type)
            if multi_problem is not None:
                weights_fn = _multi_problem_weights_fn(problem.task_id)
            for metric, metric_fn in metric_fns.items():
                overload_name = getattr(model_hparams, "overload_eval_metric_name", None)
                if len(problems) == 1 and overload_name:
                    metric_name = "metrics-%s/%s/%s" % (overload_name, target_name, metric)
                else:
                    metric_name = "metrics-%s/%s/%s" % (problem_name, target_name, metric)
                streaming = metrics.STREAMING_METRICS.get(metric)
                if metric == metrics.Metrics.IMAGE_SUMMARY:
                    eval_metrics[metric_name] = _make_image_summary_fn(metric_fn, model_hparams)
                elif streaming is not None and metric_fn is streaming[0]:
                    eval_metrics[metric_name] = _make_streaming_metric_fn(streaming[1])
                else:
                    eval_metrics[metric_name] = _make_metric_fn(metric_fn, weights_fn)
    return eval_metrics


# --------------------------------------------------------------------------- eager metrics
def create_eager_metrics_for_problem(problem, model_hparams=None):
    """create_eager_metrics for a problem's metrics and its targets' weights function."""
    metric_fns = _problem_metric_fns(problem, model_hparams)
    target_modality = problem.get_hparams(model_hparams).modality["targets"]
    weights_fn = _weights_fn_for(model_hparams, "targets", target_modality)
    return create_eager_metrics_internal(metric_fns, weights_fn=weights_fn)


def create_eager_metrics(metric_names, weights_fn=losses.weights_all):
    """Accumulators for metrics computed eagerly, batch after batch.

    Args:
      metric_names: names from `metrics.Metrics`.
      weights_fn: labels -> weights; weights_all by default, use
        common_layers.weights_nonzero for 0-padded labels.

    Returns:
      (metric_accum(predictions, targets) -> None, metric_means() -> {name: float}).

        accum, means = create_eager_metrics(["accuracy"], common_layers.weights_nonzero)
        accum(logits_batch_1, targets_batch_1); accum(logits_batch_2, targets_batch_2)
        means()   # {"accuracy": 0.83}: correct / weighted positions over both batches
    """
    unknown = [name for name in metric_names if name not in metrics.METRICS_FNS]
    if unknown:
        raise metrics.unknown_metrics_error("create_eager_metrics", unknown)
    metric_fns = {name: metrics.METRICS_FNS[name] for name in metric_names}
    return create_eager_metrics_internal(metric_fns, weights_fn)


def create_eager_metrics_internal(metric_fns, weights_fn=losses.weights_all):
    """(metric_accum, metric_means) over {name: metric fn}; see create_eager_metrics.

    Each metric is the weighted mean of all scores seen: sum(score * weight) / sum(weight),
    weights broadcast to the scores' shape as tf.compat.v1.metrics.mean does.
    """
    totals = {name: [0.0, 0.0] for name in metric_fns}  # name -> [sum(v * w), sum(w)]

    def metric_accum(predictions, targets):
        for name, metric_fn in metric_fns.items():
            value, weight = metric_fn(predictions, targets, weights_fn=weights_fn)
            value = np.asarray(value, dtype=np.float64)
            weight = np.broadcast_to(np.asarray(weight, dtype=np.float64), value.shape)
            totals[name][0] += float(np.sum(value * weight))
            totals[name][1] += float(np.sum(weight))

    def metric_means():
        return {name: np.float32(total / count if count else 0.0)
                for name, (total, count) in totals.items()}

    return metric_accum, metric_means
