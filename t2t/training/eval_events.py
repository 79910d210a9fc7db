"""Evaluation results on disk, as the Estimator writes them: `<model_dir>/eval` event files.

Both backends write one event per evaluation, at its global step, with a float
`simple_value` per metric (`loss`, `metrics-<problem>/targets/<metric>`, ...); early
stopping, `t2t.tuning` and TensorBoard read them back:

    write_eval_summary("/run/eval", {"loss": 1.5, "metrics-p/targets/accuracy": 0.7}, step=200,
                       checkpoint_path="/run/model.ckpt-200")
    read_eval_metrics("/run/eval")      # {200: {"loss": 1.5, "metrics-p/targets/accuracy": 0.7}}
    read_eval_history("/run/eval", "loss")        # ([200], [1.5])
    has_metric_plateaued([100, 200, 300], [5.0, 4.95, 4.93], num_steps=200, delta=0.1)  # True

A run that stops early says so in `<model_dir>/training_stopped_early.json`, so an
evaluator following its checkpoints stops after the final one instead of waiting
`--eval_timeout_mins` for a checkpoint at `train_steps` that never comes:

    write_early_stop("/run", step=1200, train_steps=5000)
    early_stop_step("/run", train_steps=5000)     # 1200
    early_stop_step("/run", train_steps=8000)     # None: a resumed, longer run's evaluator
"""
import json
import os
import time

import numpy as np
import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
from t2t.core import errors

EARLY_STOP_FILE = "training_stopped_early.json"


def write_eval_summary(eval_dir, metrics, step, checkpoint_path=None):
    """One event at `step` in `eval_dir` holding every metric but global_step (Estimator's
    `_write_dict_to_summary`: floats as simple_value, the checkpoint path as a string).
    """
    summary = tf.compat.v1.Summary()
    for name in sorted(metrics):
        if name == "global_step":
            continue
        value = metrics[name]
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        if isinstance(value, (int, float, np.integer, np.floating)):
            summary.value.add(tag=name, simple_value=float(value))
    if checkpoint_path:
        value = summary.value.add(tag="checkpoint_path")
        value.tensor.CopyFrom(tf.make_tensor_proto(checkpoint_path))
    writer = _writer(eval_dir)
    with writer.as_default():
        tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=int(step))
    writer.flush()


_WRITERS = {}


def _writer(eval_dir):
    """One events file per directory and process (as Estimator's FileWriterCache)."""
    if eval_dir not in _WRITERS:
        tf.io.gfile.makedirs(eval_dir)
        with tf.init_scope():
            _WRITERS[eval_dir] = tf.summary.create_file_writer(eval_dir)
    return _WRITERS[eval_dir]


def has_metric_plateaued(steps, values, num_steps=100, delta=0.1, decrease=True):
    """Whether a metric has stopped improving (T2T's early-stopping rule).

    The reference is the last value evaluated at least `num_steps` steps before the latest
    evaluation; the metric has plateaued when no value since improves on it by `delta` or
    more (improving means going down when `decrease`, up otherwise).

        has_metric_plateaued([100, 200, 300], [5.0, 4.95, 4.93], num_steps=200, delta=0.1)
        # True: 4.93 is only 0.07 below the 5.0 of step 100
        has_metric_plateaued([100, 200, 300], [5.0, 4.95, 4.8], num_steps=200, delta=0.1)
        # False
        has_metric_plateaued([100, 200], [5.0, 5.0], num_steps=200)
        # False: no evaluation is 200 steps old yet
    """
    if num_steps <= 0:
        raise ValueError("num_steps must be positive, got %r" % num_steps)
    if len(steps) != len(values):
        raise ValueError("steps and values differ in length (%d, %d)" % (len(steps), len(values)))
    if len(steps) < 2:
        return False
    old_enough = [i for i, step in enumerate(steps) if step <= steps[-1] - num_steps]
    if not old_enough:
        return False
    reference = values[old_enough[-1]]
    for value in values[old_enough[-1]:]:
        improvement = reference - value if decrease else value - reference
        if improvement >= delta:
            return False
    return True


def read_eval_metrics(eval_dir):
    """{step: {metric name: value}} from the event files in `eval_dir`, ordered by step.

    A step evaluated more than once keeps the values written last.
    """
    if not tf.io.gfile.isdir(eval_dir):
        return {}
    evaluations = {}
    for path in sorted(tf.io.gfile.glob(os.path.join(eval_dir, "events.out.tfevents.*"))):
        try:
            for event in tf.compat.v1.train.summary_iterator(path):
                if not event.HasField("summary"):
                    continue
                for value in event.summary.value:
                    if value.HasField("simple_value"):
                        number = value.simple_value
                    elif (value.HasField("tensor") and not value.tensor.tensor_shape.dim and
                          value.tensor.dtype != tf.string.as_datatype_enum):
                        number = float(tf.make_ndarray(value.tensor))
                    else:  # images, histograms, the checkpoint path
                        continue
                    evaluations.setdefault(int(event.step), {})[value.tag] = number
        except tf.errors.DataLossError:
            # The evaluator may be appending to this file right now; the next read sees it.
            continue
    return dict(sorted(evaluations.items()))


def read_eval_history(eval_dir, metric):
    """(steps, values) of `metric` in the evaluation summaries under `eval_dir`, by step.

    Raises a UserError naming the metrics that exist when `metric` is not among them.
    """
    evaluations = read_eval_metrics(eval_dir)
    steps, values = [], []
    available = set()
    for step, metrics in evaluations.items():
        available.update(metrics)
        if metric in metrics:
            steps.append(int(step))
            values.append(float(metrics[metric]))
    if evaluations and not steps:
        raise errors.UserError("--eval_early_stopping_metric=%r is not an evaluation metric; "
                               "choose one of %s" % (metric, ", ".join(sorted(available))))
    return steps, values


def checkpoint_step(checkpoint_path):
    """The global step in a checkpoint path: ".../model.ckpt-1200" -> 1200 (None if absent)."""
    tail = os.path.basename(checkpoint_path or "").rsplit("-", 1)
    if len(tail) == 2 and tail[1].isdigit():
        return int(tail[1])
    return None


def write_early_stop(model_dir, step, train_steps):
    """Record that training of `train_steps` steps stopped early at `step` (atomic)."""
    path = os.path.join(model_dir, EARLY_STOP_FILE)
    with atomic_files.atomic_write(path, "w") as out:
        json.dump({"step": int(step), "train_steps": int(train_steps)}, out)


def clear_early_stop(model_dir):
    """Forget an earlier early stop (a run that trains again starts without one)."""
    path = os.path.join(model_dir, EARLY_STOP_FILE)
    if atomic_files.path_exists(path):
        atomic_files.remove_path(path)


def early_stop_step(model_dir, train_steps):
    """The step where a run of `train_steps` steps stopped early; None if it has not.

    A record of another `train_steps` is an earlier run's (resumed since with a new
    --train_steps): None.
    """
    path = os.path.join(model_dir, EARLY_STOP_FILE)
    try:
        with tf.io.gfile.GFile(path) as record:
            values = json.load(record)
    except (tf.errors.NotFoundError, ValueError):
        return None
    if values.get("train_steps") != train_steps:
        return None
    return values.get("step")


def training_ended(model_dir, train_steps, evaluated_step):
    """Whether an evaluator that has evaluated `evaluated_step` (None: nothing yet) is done:
    the step reached `train_steps`, or the step where the run stopped early.

    >>> training_ended("/no/such/dir", 100, 100), training_ended("/no/such/dir", 100, 40)
    (True, False)
    """
    if evaluated_step is None:
        return False
    if evaluated_step >= train_steps:
        return True
    stop = early_stop_step(model_dir, train_steps)
    return stop is not None and evaluated_step >= stop


def next_checkpoint(model_dir, timeout_mins=240, stop_fn=None, poll_secs=1.0):
    """Yield each new checkpoint path of `model_dir`, waiting up to `timeout_mins` for one.

    A negative timeout waits forever; the generator ends when no new checkpoint appears in
    time, or as soon as `stop_fn()` (asked at every poll while waiting) says True. Only the
    newest checkpoint is yielded: one saved and replaced during an evaluation is skipped.
    """
    timeout_secs = None if timeout_mins < 0 else timeout_mins * 60
    last_path, waiting_since = None, time.monotonic()
    logged_wait = False
    while True:
        path = tf.train.latest_checkpoint(model_dir)
        if path is not None and path != last_path:
            last_path, logged_wait = path, False
            yield path
            waiting_since = time.monotonic()
            continue
        if stop_fn is not None and stop_fn():
            return
        if timeout_secs is not None and time.monotonic() - waiting_since >= timeout_secs:
            logging.info("No new checkpoint in %s for %g minutes; stopping", model_dir,
                         timeout_mins)
            return
        if not logged_wait:
            logging.info("Waiting for a new checkpoint in %s", model_dir)
            logged_wait = True
        time.sleep(poll_secs)
