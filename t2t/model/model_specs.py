"""Estimator specs for a built T2TModel: TRAIN, EVAL and PREDICT (plain or TPU).

`T2TModel.estimator_model_fn` builds the model and calls one of these:

    spec = estimator_spec_train(model, loss)                # loss + train_op
    spec = estimator_spec_eval(model, features, logits, features["targets"], loss, losses)
    spec.eval_metric_ops["metrics-algorithmic_identity_binary40/targets/accuracy"]
    spec = estimator_spec_predict(model, {"inputs": ids})
    spec.export_outputs["serving_default"].outputs          # {"outputs", "scores"}

EVAL metrics come from `t2t.evaluation.metric_ops.create_evaluation_metrics` for
`model.problem` (attached to the hparams by `t2t_model.add_problem_hparams`).
"""
import os

import tensorflow as tf
from absl import logging

from t2t.core.modes import ModeKeys
from t2t.evaluation import metric_ops
from t2t.layers import common_layers
from t2t.model import model_predict
from t2t.model import model_summaries


def _TPUEstimatorSpec(*args, **kwargs):  # noqa: N802 (a class, looked up only when used)
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(*args, **kwargs)


def estimator_spec_train(model, loss, num_async_replicas=1, use_tpu=False):
    """TRAIN spec: `model.optimize(loss)` as train op, warm-starting when asked.

    `hparams.warm_start_from` / `warm_start_from_second` name checkpoints whose matching
    variables initialise the model (only when the model dir has no checkpoint yet).
    """
    hparams = model.hparams
    train_op = model.optimize(loss, num_async_replicas=num_async_replicas, use_tpu=use_tpu)
    warm_start_from = getattr(hparams, "warm_start_from", None)
    if use_tpu:
        scaffold_fn = None
        if warm_start_from:
            def scaffold_fn():
                initialize_from_ckpt(warm_start_from, hparams)
                return tf.compat.v1.train.Scaffold()
        host_call = None
        if hparams.get("tpu_enable_host_call"):
            host_call = model_summaries.create_host_call(hparams.get("model_dir"))
        model_summaries.remove_summaries()
        return _TPUEstimatorSpec(ModeKeys.TRAIN, loss=loss, train_op=train_op,
                                 host_call=host_call, scaffold_fn=scaffold_fn)
    if warm_start_from:
        initialize_from_ckpt(warm_start_from, hparams)
    if hparams.get("warm_start_from_second"):
        # A second checkpoint, e.g. a pre-trained decoder next to a pre-trained encoder.
        initialize_from_ckpt(hparams.warm_start_from_second, hparams)
    return tf.estimator.EstimatorSpec(ModeKeys.TRAIN, loss=loss,
                                      train_op=train_op)


def _problem_of(model, what):
    if model.problem is None:
        raise ValueError("%s needs a problem attached to the model's hparams; call "
                         "t2t_model.add_problem_hparams(hparams, problem_name) before building "
                         "the model_fn" % what)
    return model.problem


def _metric_fns(problem, hparams):
    task_list = getattr(problem, "task_list", None)
    if task_list:
        return metric_ops.create_evaluation_metrics(task_list, hparams, multi_problem=problem)
    return metric_ops.create_evaluation_metrics([problem], hparams, multi_problem=None)


def _apply_metric_fns(metric_fns, logits, features):
    """{name: fn} -> {name: (value, update_op)} on logits (or logits[target name])."""
    eval_metrics = {}
    for name, metric_fn in metric_fns.items():
        if isinstance(logits, dict):
            # Names look like "metrics-<problem>/<target>/<metric>".
            key = name.split("/")[1]
            if key in logits:
                eval_metrics[name] = metric_fn(logits[key], features, features[key])
            else:
                logging.warning("No key %s in logits for evaluation.", key)
        else:
            eval_metrics[name] = metric_fn(logits, features, features["targets"])
    return eval_metrics


def eval_metric_ops(model, features, logits):
    """{"metrics-<problem>/<target>/<metric>": (value, update_op)} of the problem in
    `model.problem` on these logits (tf.compat.v1.metrics streaming means).

        ops = eval_metric_ops(model, features, logits)
        value, update_op = ops["metrics-algorithmic_reverse_binary40/targets/accuracy"]
    """
    problem = _problem_of(model, "EVAL")
    return _apply_metric_fns(_metric_fns(problem, model.hparams), logits, features)


def estimator_spec_eval(model, features, logits, labels, loss, losses_dict, use_tpu=False):
    """EVAL spec: loss, the problem's metrics, predictions and evaluation hooks."""
    del losses_dict
    hparams = model.hparams
    problem = _problem_of(model, "EVAL")
    if use_tpu or common_layers.is_xla_compiled():
        return _tpu_estimator_spec_eval(model, problem, logits, labels, loss)
    eval_metrics = eval_metric_ops(model, features, logits)
    predictions = logits if isinstance(logits, dict) else {"predictions": logits}

    evaluation_hooks = []
    summary_op = tf.compat.v1.summary.merge_all()
    model_dir = hparams.get("model_dir")
    if model_dir and summary_op is not None:
        eval_dir = os.path.join(model_dir, hparams.get("eval_dir_name") or "eval")
        evaluation_hooks.append(tf.compat.v1.train.SummarySaverHook(
            save_steps=1, output_dir=eval_dir, summary_op=summary_op))
    if hasattr(problem, "eval_hooks"):
        evaluation_hooks += list(problem.eval_hooks(features, logits, hparams) or [])
    return tf.estimator.EstimatorSpec(ModeKeys.EVAL, predictions=predictions,
                                      eval_metric_ops=eval_metrics,
                                      evaluation_hooks=evaluation_hooks, loss=loss)


def _tpu_estimator_spec_eval(model, problem, logits, labels, loss):
    """TPU EVAL: metrics are computed on the host from (logits, labels)."""
    hparams = model.hparams
    if isinstance(logits, dict):
        raise ValueError("TPU evaluation supports a single logits tensor, got the dict keys "
                         "%s; evaluate on CPU/GPU instead" % sorted(logits))

    def metric_fn(tpu_logits, tpu_labels):
        metric_fns = _metric_fns(problem, hparams)
        return _apply_metric_fns(metric_fns, tpu_logits, {"targets": tpu_labels})

    host_call = None
    if hparams.get("tpu_enable_host_call"):
        host_call = model_summaries.create_host_call(hparams.get("model_dir"))
    model_summaries.remove_summaries()
    return _TPUEstimatorSpec(ModeKeys.EVAL, loss=loss, host_call=host_call,
                             eval_metrics=(metric_fn, [logits, labels]))


del_dict_non_tensors = model_predict.del_dict_non_tensors


def set_static_predict_shapes(features, hparams, decode_hparams, params=None):
    """TPU PREDICT needs static shapes: batch from decode_hparams/params/hparams, length
    from max_input_seq_length or max_length."""
    inputs = features.get("inputs")
    if inputs is None:
        inputs = features["targets"]
    shape = inputs.shape.as_list()
    if shape[0] is None:
        shape[0] = (decode_hparams.get("batch_size") or (params or {}).get("batch_size") or
                    hparams.batch_size)
    if shape[1] is None:
        shape[1] = hparams.get("max_input_seq_length") or hparams.max_length
    inputs.set_shape(shape)


def estimator_spec_predict(model, features, use_tpu=False):
    """PREDICT spec: decode with the model's decode_hparams; export outputs and scores.

    Predictions hold "outputs", "scores", "inputs", "targets" (from "infer_targets") and
    every other batched feature (scalars are tiled to the batch).
    """
    predictions, exports = model_predict.build_predictions(model, features, use_tpu=use_tpu)
    export_outputs = {name: tf.estimator.export.PredictOutput(outputs)
                      for name, outputs in exports.items()}
    if use_tpu:
        host_call = None
        if model.hparams.get("tpu_enable_host_call"):
            host_call = model_summaries.create_host_call(model.hparams.get("model_dir"))
        model_summaries.remove_summaries()
        return _TPUEstimatorSpec(ModeKeys.PREDICT, predictions=predictions,
                                 host_call=host_call, export_outputs=export_outputs)
    return tf.estimator.EstimatorSpec(ModeKeys.PREDICT, predictions=predictions,
                                      export_outputs=export_outputs)


def initialize_from_ckpt(ckpt_dir, hparams):
    """Initialise trainable variables found (same name) in the checkpoint at `ckpt_dir`.

    Skipped when `hparams.model_dir` already has a checkpoint (a restarted job keeps its
    own weights).
    """
    model_dir = hparams.get("model_dir")
    if model_dir and tf.train.latest_checkpoint(model_dir) is not None:
        return
    logging.info("Warm-starting from checkpoint: %s", ckpt_dir)
    reader = tf.train.load_checkpoint(ckpt_dir)
    variable_map = {}
    for var in tf.compat.v1.trainable_variables():
        var_name = var.name.split(":")[0]
        if reader.has_tensor(var_name):
            variable_map[var_name] = var
        else:
            logging.info("Not in the checkpoint, skipped: %s", var_name)
    tf.compat.v1.train.init_from_checkpoint(ckpt_dir, variable_map)
