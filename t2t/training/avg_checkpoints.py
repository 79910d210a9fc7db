"""Average the weights of several checkpoints into a new checkpoint.

    paths = last_checkpoints("train/", 3)   # ["train/model.ckpt-800", "-900", "-1000"]
    average_checkpoints(paths, "avg/model.ckpt-1000")
    # avg/model.ckpt-1000: every float variable is the mean of the three; integer (and
    # other non-float) variables come from the newest; global_step is 1000

    average_all("train/", "avg/", n=3)
    # avg/model.ckpt-<s> for every checkpoint step s from the 3rd on: the mean of the 3
    # checkpoints ending at s (what t2t-avg-all does; T2T's utils/avg_checkpoints.py and
    # bin/t2t_avg_all.py)

A checkpoint that cannot be read (a truncated data file) is a UserError naming it and the
intact ones, before any of it is read. Averages are accumulated in float64 and written in each variable's own dtype (T2T wrote
every variable as float32, which broke integer variables).
"""
import collections
import os
import shutil

import numpy as np
import tensorflow as tf
from absl import logging

from t2t.core import errors
from t2t.core.progress import Progress
from t2t.evaluation import bleu_hook
from t2t.model import checkpoint_files
from t2t.training import eval_events

_GLOBAL_STEP = "global_step"
# Not averaged, as in T2T: step counters and training statistics.
_SKIPPED_PREFIXES = (_GLOBAL_STEP, "train_stats/")
# The advice for a checkpoint that cannot be read (checkpoint_files.check_readable).
_AVERAGE_OTHERS = "move {path}.* out of the folder to average the others"


def checkpoint_exists(path):
    """Whether `path` is a checkpoint prefix (its .index file exists)."""
    return tf.io.gfile.exists(path + ".index")


def checkpoint_step(path):
    """The step number a checkpoint prefix ends with: "dir/model.ckpt-300" -> 300.

    Averaging needs it, so a name without one is a UserError (eval_events.checkpoint_step,
    which this wraps, returns None for it).
    """
    step = eval_events.checkpoint_step(path)
    if step is None:
        raise errors.UserError("checkpoint %s has no step number (-<steps>) in its name"
                               % path)
    return step


def last_checkpoints(model_dir, n):
    """The last `n` checkpoints of `model_dir` (from its "checkpoint" file), oldest first."""
    state = tf.train.get_checkpoint_state(model_dir)
    paths = list(state.all_model_checkpoint_paths) if state else []
    paths = [p if os.path.isabs(p) or "://" in p else os.path.join(model_dir, p)
             for p in paths]
    paths = [p for p in paths if checkpoint_exists(p)]
    if not paths:
        raise errors.UserError("no checkpoints in %s" % model_dir)
    return paths[-n:]


def _is_float(dtype):
    return tf.as_dtype(dtype).is_floating


class _CheckpointWindow:
    """Running float64 sums of the float variables of the checkpoints added and removed."""

    def __init__(self, first_path):
        reader = tf.train.load_checkpoint(first_path)
        self.dtypes = {name: dtype for name, dtype in
                       reader.get_variable_to_dtype_map().items()
                       if not name.startswith(_SKIPPED_PREFIXES)}
        self.shapes = reader.get_variable_to_shape_map()
        self.sums = {name: np.zeros(self.shapes[name], np.float64)
                     for name, dtype in self.dtypes.items() if _is_float(dtype)}
        self.paths = collections.deque()

    def _reader(self, path):
        reader = tf.train.load_checkpoint(path)
        missing = sorted(set(self.dtypes) - set(reader.get_variable_to_dtype_map()))
        if missing:
            raise errors.UserError("checkpoint %s lacks variables of the others (%s); "
                                   "average checkpoints of one model only" %
                                   (path, ", ".join(missing[:3])))
        return reader

    def add(self, path):
        reader = self._reader(path)
        for name in self.sums:
            value = reader.get_tensor(name)
            if list(value.shape) != list(self.shapes[name]):
                raise errors.UserError("variable %s has shape %s in %s but %s elsewhere; "
                                       "average checkpoints of one model only" %
                                       (name, list(value.shape), path, self.shapes[name]))
            self.sums[name] += value
        self.paths.append(path)

    def remove_oldest(self):
        reader = self._reader(self.paths.popleft())
        for name in self.sums:
            self.sums[name] -= reader.get_tensor(name)

    def values(self):
        """{name: value}: float means over the window; other variables from the newest."""
        newest = tf.train.load_checkpoint(self.paths[-1])
        count = float(len(self.paths))
        values = {}
        for name, dtype in self.dtypes.items():
            if name in self.sums:
                values[name] = (self.sums[name] / count).astype(
                    tf.as_dtype(dtype).as_numpy_dtype)
            else:
                values[name] = newest.get_tensor(name)
        return values


def save_checkpoint(values, output_path, global_step):
    """Write {variable name: numpy value} (plus global_step) as the checkpoint `output_path`.

    The folder's "checkpoint" state file then lists `output_path` as the latest.
    """
    tf.io.gfile.makedirs(os.path.dirname(output_path) or ".")
    graph = tf.Graph()
    with graph.as_default():
        variables, feeds = {}, {}
        for index, (name, value) in enumerate(sorted(values.items())):
            placeholder = tf.compat.v1.placeholder(tf.as_dtype(value.dtype), value.shape)
            variables[name] = tf.compat.v1.Variable(placeholder, name="v%d" % index)
            feeds[placeholder] = value
        variables[_GLOBAL_STEP] = tf.compat.v1.Variable(
            tf.constant(global_step, tf.int64), name=_GLOBAL_STEP, trainable=False)
        saver = tf.compat.v1.train.Saver(variables, max_to_keep=None)
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer(), feeds)
            # Written without a step suffix: output_path already holds the name wanted.
            return saver.save(sess, output_path, write_meta_graph=False)


def average_checkpoints(checkpoint_paths, output_path, global_step=None):
    """Average `checkpoint_paths` into `output_path`; returns the path written.

    global_step defaults to the newest checkpoint's (its global_step variable, else the
    step in its name).
    """
    if not checkpoint_paths:
        raise errors.UserError("no checkpoints to average")
    for path in checkpoint_paths:
        if not checkpoint_exists(path):
            raise errors.UserError("%s is not a checkpoint (no %s.index)" % (path, path))
        checkpoint_files.check_readable(path, fix=_AVERAGE_OTHERS)
    window = _CheckpointWindow(checkpoint_paths[0])
    for path in checkpoint_paths:
        logging.info("Reading %s", path)
        window.add(path)
    if global_step is None:
        newest = tf.train.load_checkpoint(checkpoint_paths[-1])
        if newest.has_tensor(_GLOBAL_STEP):
            global_step = int(newest.get_tensor(_GLOBAL_STEP))
        else:
            global_step = checkpoint_step(checkpoint_paths[-1])
    path = save_checkpoint(window.values(), output_path, global_step)
    logging.info("Averaged %d checkpoints into %s", len(checkpoint_paths), path)
    return path


def average_all(model_dir, output_dir, n=8, min_steps=0, wait_minutes=0):
    """Sliding averages of `n` checkpoints of `model_dir` into `output_dir` (t2t-avg-all).

    For every checkpoint from the n-th on (oldest first, waiting up to `wait_minutes`
    for new ones), writes `<output_dir>/model.ckpt-<its step>`: the average of it and the
    n - 1 checkpoints before it. Copies model_dir/flags.txt (keeping its time). Returns
    the paths written; fewer than n checkpoints is a UserError.
    """
    if n < 1:
        raise errors.UserError("--n must be at least 1, got %d" % n)
    # Every checkpoint there now is checked before anything is written (those that come
    # while waiting, when they come).
    for stepfile in bleu_hook.stepfiles_iterator(model_dir, 0, min_steps):
        if checkpoint_exists(stepfile.filename):
            checkpoint_files.check_readable(stepfile.filename, fix=_AVERAGE_OTHERS)
    tf.io.gfile.makedirs(output_dir)
    flags_file = os.path.join(model_dir, "flags.txt")
    if (tf.io.gfile.exists(flags_file) and
            not tf.io.gfile.exists(os.path.join(output_dir, "flags.txt"))):
        shutil.copy2(flags_file, os.path.join(output_dir, "flags.txt"))
    window, written, seen = None, [], []
    progress = Progress("average %s" % model_dir, unit="checkpoints")
    for stepfile in bleu_hook.stepfiles_iterator(model_dir, wait_minutes, min_steps):
        if not checkpoint_exists(stepfile.filename):
            logging.info("%s was deleted, skipping it", stepfile.filename)
            continue
        checkpoint_files.check_readable(stepfile.filename, fix=_AVERAGE_OTHERS)
        window = window or _CheckpointWindow(stepfile.filename)
        window.add(stepfile.filename)
        seen.append(stepfile.steps)
        progress.update(1)
        if len(window.paths) < n:
            continue
        output_path = os.path.join(output_dir, "model.ckpt-%d" % stepfile.steps)
        written.append(save_checkpoint(window.values(), output_path, stepfile.steps))
        tf.compat.v1.train.update_checkpoint_state(
            output_dir, written[-1], all_model_checkpoint_paths=written)
        logging.info("Averaged checkpoints %s into %s",
                     ", ".join(str(checkpoint_step(p)) for p in window.paths), written[-1])
        window.remove_oldest()
    if not written:
        raise errors.UserError(
            "%s has %d checkpoints%s (steps >= %d), fewer than --n=%d; lower --n or wait for "
            "more (--wait_minutes)" % (model_dir, len(seen), (" (%s)" % ", ".join(
                map(str, seen))) if seen else "", min_steps, n))
    progress.done(averaged=len(written))
    return written
