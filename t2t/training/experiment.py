"""T2TExperiment: the training schedules, and the hooks that log and stop training.

    exp = trainer_lib.create_experiment(run_config, hparams, "transformer",
                                        "algorithmic_reverse_binary40", data_dir,
                                        train_steps=1000, eval_steps=10)
    exp.continuous_train_and_eval()
    # I train transformer: step 100, loss 1.234 (mean of 100 steps), 12.3 steps/s, 3,456 tokens/s
    # ...
    # I train transformer done: 1,000 steps, 3,456,789 tokens, 1,000 final step,
    #   12.3 steps/s, 3,456 tokens/s, 0.456 final loss, 81.3 s

Schedules (`--schedule`, a method name of T2TExperiment):
  train                      train to `train_steps`.
  evaluate                   evaluate the latest checkpoint once.
  train_and_evaluate         train, evaluating after every checkpoint (T2T's in-process
                             ValidationMonitor); with a TF_CONFIG cluster every task plays its
                             role through `tf.estimator.train_and_evaluate`, the evaluator
                             through t2t's loop (which also ends after an early stop).
  continuous_train_and_eval  `tf.estimator.train_and_evaluate` (evaluations at most every
                             `eval_throttle_seconds`), then a final evaluation (the default).
  continuous_eval            evaluate each new checkpoint until one reaches `train_steps`.
  run_std_server             serve as a parameter server of the TF_CONFIG cluster.

Early stopping reads the evaluations written to `<model_dir>/eval` and stops training once
the metric has not improved by `delta` over the last `num_plateau_steps` steps; every
training task reads the same files, so a whole cluster stops together.
"""
import contextlib
import os
import time

import tensorflow as tf
from absl import logging

from t2t.core import errors
from t2t.core.modes import ModeKeys
from t2t.model import model_hparams
from t2t.training import backends
from t2t.training import checkpoint_schedule
from t2t.training import eval_events
from t2t.training import eval_throttle
from t2t.training import run_config as run_config_lib
from t2t.training import stop_signals
from t2t.training import train_log

# Re-exported: these live in the backend-free modules eval_events and train_log.
count_tokens = train_log.count_tokens
count_examples = train_log.count_examples
format_metrics = train_log.format_metrics
has_metric_plateaued = eval_events.has_metric_plateaued
read_eval_metrics = eval_events.read_eval_metrics
read_eval_history = eval_events.read_eval_history
checkpoint_step = eval_events.checkpoint_step
next_checkpoint = eval_events.next_checkpoint

# Graph collections filled by the trainer's model_fn wrapper (see trainer_lib): per replica,
# the non-padding tokens and the examples of the batch, and the training loss.
TOKENS_COLLECTION = "t2t_batch_tokens"
EXAMPLES_COLLECTION = "t2t_batch_examples"
LOSS_COLLECTION = "t2t_train_loss"


class TrainingLogHook(tf.compat.v1.train.SessionRunHook):
    """Logs steps/s, tokens/s and the loss every `every_n_steps`, and a summary at the end.

    Tokens, examples and losses come from the collections the trainer's model_fn fills (one
    entry per replica, summed); without them only steps/s and the step are logged.

        hook = TrainingLogHook(every_n_steps=100, description="train transformer")
        estimator.train(input_fn, hooks=[hook], max_steps=1000)
        hook.summary    # {"steps": 1000, "tokens": ..., "examples": ..., "replicas": 1, ...}
    """

    def __init__(self, every_n_steps=100, description="train", log_fn=None):
        self._every_n_steps = max(int(every_n_steps or 100), 1)
        self._description = description
        self._log = log_fn or logging.info
        self.summary = None

    def begin(self):
        self._global_step = tf.compat.v1.train.get_global_step()
        if self._global_step is None:
            raise RuntimeError("TrainingLogHook needs a global step in the graph")
        graph = tf.compat.v1.get_default_graph()
        tokens = graph.get_collection(TOKENS_COLLECTION)
        losses = graph.get_collection(LOSS_COLLECTION)
        examples = graph.get_collection(EXAMPLES_COLLECTION)
        self.num_replicas = max(len(tokens), 1)
        self._fetches = {"step": self._global_step}
        if tokens:
            self._fetches["tokens"] = tf.add_n(tokens) if len(tokens) > 1 else tokens[0]
        if examples:
            self._fetches["examples"] = tf.add_n(examples)
        if losses:
            losses = [tf.cast(loss, tf.float32) for loss in losses]
            self._fetches["loss"] = tf.add_n(losses) / float(len(losses))
        logging.info("%s: graph built; starting the session (TensorFlow optimizes the graph, "
                     "then restores or initializes the variables)", self._description)
        self._log_lines = None

    def after_create_session(self, session, coord):
        del coord
        self._log_lines = train_log.TrainingLog(
            self._every_n_steps, self._description, start_step=int(session.run(
                self._global_step)), count_tokens="tokens" in self._fetches, log_fn=self._log,
            num_replicas=self.num_replicas)

    def before_run(self, run_context):
        del run_context
        return tf.compat.v1.train.SessionRunArgs(self._fetches)

    def after_run(self, run_context, run_values):
        del run_context
        results = run_values.results
        # The step fetched with the train op is read before it increments.
        self._log_lines.after_step(int(results["step"]) + 1, tokens=results.get("tokens", 0),
                                   examples=results.get("examples", 0),
                                   loss=results.get("loss"))

    def end(self, session):
        del session
        if self._log_lines is not None:
            self.summary = self._log_lines.end()


class EvalResultLogger(tf.estimator.Exporter):
    """An exporter that exports nothing and logs each evaluation's metrics.

    `tf.estimator.train_and_evaluate` calls exporters after every evaluation, in whichever
    task evaluates (the evaluator of a cluster, or the trainer itself locally).
    """

    @property
    def name(self):
        return "t2t_eval_log"

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        del estimator, export_path, is_the_final_export
        # A checkpoint's name is the global step when its save began; on a cluster the ps
        # variables (global step included) may move on while they are saved, so the step
        # the evaluation restored is logged too.
        eval_result = eval_result or {}
        logging.info("Evaluation of %s at global step %s: %s",
                     os.path.basename(checkpoint_path or "?"),
                     eval_result.get("global_step", "?"), format_metrics(eval_result))
        return None


class EvalStartHook(tf.compat.v1.train.SessionRunHook):
    """Logs when an evaluation starts (its graph built and checkpoint restored), so the
    tens of seconds before its result line are not silent."""

    def __init__(self, steps=None):
        self._steps = steps

    def begin(self):
        logging.info("Evaluation graph built; starting its session and restoring the checkpoint")

    def after_create_session(self, session, coord):
        del coord
        step = tf.compat.v1.train.get_global_step()
        at = int(session.run(step)) if step is not None else "?"
        logging.info("Evaluating the checkpoint of step %s (%s)", at,
                     "%d batches" % self._steps if self._steps else "the whole eval set")


class CheckpointLogListener(tf.compat.v1.train.CheckpointSaverListener):
    """Logs every checkpoint the chief saves."""

    def after_save(self, session, global_step_value):
        del session
        logging.info("Saved checkpoint at step %d", global_step_value)


class EvalThrottleListener(tf.compat.v1.train.CheckpointSaverListener):
    """Logs a checkpoint whose evaluation a local `tf.estimator.train_and_evaluate` skips
    for `throttle_secs` (--eval_throttle_seconds); tf.estimator says so at its INFO level
    only, which the programs hide.

    tf.estimator's own listener runs right after this one for each checkpoint: it passes
    over the checkpoint training starts from, evaluates the next one, then each saved at
    least `throttle_secs` after the previous evaluation began. This follows the same rule
    (`eval_throttle.EvalThrottle`), so its line names the checkpoints that listener skips.
    """

    def __init__(self, throttle_secs, max_steps=None):
        self._throttle_secs = throttle_secs
        self._max_steps = max_steps
        self._throttle = None
        self._first_save = True

    def begin(self):
        self._throttle = eval_throttle.EvalThrottle(self._throttle_secs)
        self._first_save = True

    def after_save(self, session, global_step_value):
        del session
        if self._first_save:   # the checkpoint training starts from: never evaluated
            self._first_save = False
        elif self._throttle.due():
            self._throttle.record_evaluation()
        elif self._max_steps is None or global_step_value < self._max_steps:
            # (The final checkpoint is evaluated when training ends, throttled or not.)
            self._throttle.skipped(global_step_value)


class _ScheduleListener(tf.compat.v1.train.CheckpointSaverListener):
    """Tells a CheckpointSchedule of the saves of the hook it listens to."""

    def __init__(self, schedule):
        self._schedule = schedule

    def after_save(self, session, global_step_value):
        del session
        self._schedule.saved(global_step_value)


class TimedCheckpointHook(tf.compat.v1.train.SessionRunHook):
    """The chief's checkpoints every `secs` seconds since the last one, besides the
    Estimator's own every save_checkpoints_steps steps (`checkpoint_schedule`).

    These saves use the Estimator's Saver (so `keep_checkpoint_max` counts them) but not
    its CheckpointSaverHook, whose saves are followed by evaluations: a time-based
    checkpoint is for a run that dies, not one more evaluation. `listener` (a saving
    listener of the Estimator's hook) tells it of the step-based saves, which restart
    the clock.

        hook = TimedCheckpointHook("/run", secs=600)
        TrainSpec(input_fn, hooks=[hook], saving_listeners=[hook.listener])
    """

    def __init__(self, model_dir, secs):
        self._save_path = os.path.join(model_dir, "model.ckpt")
        self._schedule = checkpoint_schedule.CheckpointSchedule(None, secs)
        self.listener = _ScheduleListener(self._schedule)

    def begin(self):
        self._global_step = tf.compat.v1.train.get_global_step()

    def after_create_session(self, session, coord):
        del coord
        self._schedule.saved(int(session.run(self._global_step)))

    def before_run(self, run_context):
        del run_context
        return tf.compat.v1.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        # The step fetched with the train op is read before it increments.
        step = int(run_values.results) + 1
        if not self._schedule.due(step):
            return
        session = run_context.session
        # Estimator's Saver, in the graph's collection since the session was made.
        saver = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SAVERS)[0]
        saver.save(session, self._save_path, global_step=step, write_meta_graph=False)
        self._schedule.saved(step)
        logging.info("Saved checkpoint at step %d (%d s or more since the last)", step,
                     self._schedule.secs)


class StopOnSignalHook(tf.compat.v1.train.SessionRunHook):
    """Ends training after the step in progress once SIGINT or SIGTERM is received inside
    `stop_signals.stop_on_signals()`; the Estimator's CheckpointSaverHook then saves the
    final step (on the chief), and `StopOnSignalListener` raises `TrainingStopped`."""

    def after_run(self, run_context, run_values):
        del run_values
        if stop_signals.requested_signal() is not None:
            run_context.request_stop()


def checkpoint_saver_hook(run_config):
    """The Estimator's step- (or time-) based CheckpointSaverHook, made here to come after
    the hooks before it in `TrainSpec.hooks`.

    tf.estimator makes this hook itself when none is given, and the chief's session then
    runs it *before* every other hook; a step whose checkpoint a signal's stop raised in
    was then missing from the TrainingLogHook's summary (its `after_run` never ran). Given
    one among the hooks, the Estimator adds its saving listeners to it and makes none.
    (TPUEstimator makes its own; plain Estimators only.)
    """
    return tf.compat.v1.train.CheckpointSaverHook(
        run_config.model_dir, save_secs=run_config.save_checkpoints_secs,
        save_steps=run_config.save_checkpoints_steps,
        save_graph_def=run_config.checkpoint_save_graph_def)


class StopOnSignalListener(tf.compat.v1.train.CheckpointSaverListener):
    """Raises `TrainingStopped` once the checkpoint of a signal's stop is saved, before the
    listeners after it (tf.estimator's evaluation of that checkpoint) run: a stopped job
    exits promptly. It must come before them in the saving listeners. `training_log`: the
    run's TrainingLogHook, whose summary line it logs first."""

    def __init__(self, model_dir, training_log=None):
        self._model_dir = model_dir
        self._training_log = training_log

    def _raise_if_stopped(self, step):
        signum = stop_signals.requested_signal()
        if signum is not None:
            if self._training_log is not None:
                # Its own `end` would come after the hook this raises in: never.
                self._training_log.end(None)
            raise stop_signals.TrainingStopped(
                signum, int(step), tf.train.latest_checkpoint(self._model_dir))

    def after_save(self, session, global_step_value):
        del session
        self._raise_if_stopped(global_step_value)

    def end(self, session, global_step_value):
        # When the stop's step was saved already, the hook only calls `end`.
        del session
        self._raise_if_stopped(global_step_value)


class EarlyStoppingHook(tf.compat.v1.train.SessionRunHook):
    """Stops training when the evaluation metric has plateaued (see has_metric_plateaued).

    Checked every `every_n_steps` training steps against the evaluations in `eval_dir`.

        hook = EarlyStoppingHook("/run/eval", "loss", num_plateau_steps=1000,
                                 plateau_delta=0.1, plateau_decrease=True, every_n_steps=100)
    """

    def __init__(self, eval_dir, metric="loss", num_plateau_steps=1000, plateau_delta=0.1,
                 plateau_decrease=True, every_n_steps=1000):
        self._eval_dir = eval_dir
        self._metric = metric
        self._num_plateau_steps = num_plateau_steps
        self._plateau_delta = plateau_delta
        self._plateau_decrease = plateau_decrease
        self._every_n_steps = max(int(every_n_steps or 1), 1)
        self.stopped_at_step = None

    def begin(self):
        self._global_step = tf.compat.v1.train.get_global_step()
        self._last_step = None

    def before_run(self, run_context):
        del run_context
        return tf.compat.v1.train.SessionRunArgs(self._global_step)

    def should_stop(self):
        steps, values = read_eval_history(self._eval_dir, self._metric)
        return has_metric_plateaued(steps, values, self._num_plateau_steps,
                                    self._plateau_delta, self._plateau_decrease)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1
        last, self._last_step = self._last_step, step
        if last is not None and step // self._every_n_steps == last // self._every_n_steps:
            return
        if self.should_stop():
            logging.info("Early stopping at step %d: %s has not %s by %s in %d steps",
                         step, self._metric,
                         "decreased" if self._plateau_decrease else "increased",
                         self._plateau_delta, self._num_plateau_steps)
            self.stopped_at_step = step
            run_context.request_stop()


class T2TExperiment:
    """An estimator with its train and eval specs, and the schedules that run them.

    Build one with `trainer_lib.create_experiment`; run a schedule by name with
    `getattr(exp, schedule)()` (what `t2t-trainer --schedule` does).
    """

    def __init__(self, estimator, hparams, train_spec, eval_spec, use_validation_monitor=False,
                 decode_hparams=None, eval_name=None, eval_timeout_mins=240, problem=None):
        self._estimator = estimator
        self._hparams = hparams
        # T2T's callers attach the problem to hparams; read it once, here.
        self._problem = (problem if problem is not None
                         else model_hparams.attached_problem(hparams))
        self._train_spec = train_spec
        self._eval_spec = eval_spec
        self._use_validation_monitor = use_validation_monitor
        self._decode_hparams = decode_hparams
        self._eval_name = eval_name
        self._eval_timeout_mins = eval_timeout_mins
        self.last_eval_result = None

    @property
    def estimator(self):
        return self._estimator

    @property
    def train_steps(self):
        return self._train_spec.max_steps

    @property
    def eval_steps(self):
        return self._eval_spec.steps

    @property
    def train_spec(self):
        return self._train_spec

    @property
    def eval_spec(self):
        return self._eval_spec

    def eval_dir(self):
        """Where evaluations write their summaries: <model_dir>/eval (eval_test: test set)."""
        return self._estimator.eval_dir(self._eval_name)

    def train(self, max_steps=None):
        """Train until the global step reaches `max_steps` (default: train_steps); SIGINT
        or SIGTERM stops it with a checkpoint (`stop_signals.TrainingStopped`)."""
        self._clear_early_stop()
        with stop_signals.stop_on_signals():
            self._estimator.train(self._train_spec.input_fn, hooks=self._train_spec.hooks,
                                  max_steps=max_steps or self._train_spec.max_steps,
                                  saving_listeners=self._train_spec.saving_listeners)
            self._raise_if_stopped()
        self._record_early_stop()

    def _raise_if_stopped(self):
        """After training that ended without StopOnSignalListener raising (a task without
        checkpoints of its own: a worker of a cluster), raise TrainingStopped if a signal
        ended it."""
        signum = stop_signals.requested_signal()
        if signum is not None:
            raise stop_signals.TrainingStopped(signum)

    def _clear_early_stop(self):
        if self._estimator.config.is_chief:
            eval_events.clear_early_stop(self._estimator.model_dir)

    def _record_early_stop(self):
        """After the chief's training ends (its final checkpoint saved): if early stopping
        ended it, say so for the evaluator (`eval_events.early_stop_step`)."""
        if not self._estimator.config.is_chief:
            return
        for hook in self._train_spec.hooks:
            if isinstance(hook, EarlyStoppingHook) and hook.stopped_at_step is not None:
                eval_events.write_early_stop(self._estimator.model_dir, hook.stopped_at_step,
                                             self.train_steps)

    def evaluate(self):
        """Evaluate the latest checkpoint; returns the metrics dict."""
        self.last_eval_result = self._estimator.evaluate(
            self._eval_spec.input_fn, steps=self._eval_spec.steps, hooks=self._eval_spec.hooks,
            name=self._eval_name)
        logging.info("Evaluation at step %s: %s", self.last_eval_result.get("global_step"),
                     format_metrics(self.last_eval_result))
        return self.last_eval_result

    def test(self):
        """One training step, then one evaluation step (T2T's `test` schedule); with a
        validation monitor, `train_and_evaluate`. Returns the evaluation's metrics."""
        if self._use_validation_monitor:
            return self.train_and_evaluate()
        self._estimator.train(self._train_spec.input_fn, hooks=self._train_spec.hooks,
                              max_steps=1)
        self.last_eval_result = self._estimator.evaluate(
            self._eval_spec.input_fn, steps=1, hooks=self._eval_spec.hooks,
            name=self._eval_name)
        return self.last_eval_result

    def _train_and_evaluate(self, eval_spec):
        if (run_config_lib.is_distributed() and
                self._estimator.config.task_type == "evaluator"):
            return self._evaluate_each_checkpoint(eval_spec)
        self._clear_early_stop()
        train_spec = self._train_spec
        if not run_config_lib.is_distributed() and eval_spec.throttle_secs:
            train_spec = tf.estimator.TrainSpec(
                train_spec.input_fn, max_steps=train_spec.max_steps, hooks=train_spec.hooks,
                saving_listeners=tuple(train_spec.saving_listeners) + (
                    EvalThrottleListener(eval_spec.throttle_secs, train_spec.max_steps),))
        # A parameter server serves until it is ended: a signal ends it as before.
        trains = self._estimator.config.task_type not in ("ps",)
        with stop_signals.stop_on_signals() if trains else contextlib.nullcontext():
            result = tf.estimator.train_and_evaluate(self._estimator, train_spec, eval_spec)
            self._raise_if_stopped()
        self._record_early_stop()
        if isinstance(result, tuple) and result and isinstance(result[0], dict):
            self.last_eval_result = result[0]
        return result

    def _evaluate_each_checkpoint(self, eval_spec):
        """The evaluator task of a cluster: what tf.estimator's evaluator does (the start
        delay, an evaluation of the newest checkpoint at most every throttle_secs, the
        exporters after each) until a checkpoint reaches train_steps, or the final one of a
        run that stopped early (tf.estimator's evaluator waited for train_steps forever).
        Returns (metrics of the last evaluation, the exporters' results)."""
        model_dir = self._estimator.model_dir
        if eval_spec.start_delay_secs:
            time.sleep(eval_spec.start_delay_secs)
        evaluated, exports = None, []

        def training_ended():
            return eval_events.training_ended(model_dir, self.train_steps, evaluated)

        for checkpoint_path in next_checkpoint(model_dir, self._eval_timeout_mins,
                                               stop_fn=training_ended):
            step = checkpoint_step(checkpoint_path)
            if step == 0 or (step is not None and evaluated is not None and step <= evaluated):
                continue
            started = time.monotonic()
            result = self._estimator.evaluate(
                eval_spec.input_fn, steps=eval_spec.steps, hooks=eval_spec.hooks,
                checkpoint_path=checkpoint_path, name=eval_spec.name)
            self.last_eval_result = result
            evaluated = int(result["global_step"])
            final = training_ended()
            exports = [exporter.export(self._estimator,
                                       os.path.join(model_dir, "export", exporter.name),
                                       checkpoint_path, result, final)
                       for exporter in eval_spec.exporters or ()]
            if final:
                logging.info("Evaluated the final checkpoint (step %d); stopping", evaluated)
                break
            time.sleep(max(0.0, (eval_spec.throttle_secs or 0) - (time.monotonic() - started)))
        return self.last_eval_result, exports

    def train_and_evaluate(self):
        """Train with an evaluation after every checkpoint; cluster roles from TF_CONFIG."""
        if run_config_lib.is_distributed():
            return self._train_and_evaluate(self._eval_spec)
        every_checkpoint = tf.estimator.EvalSpec(
            self._eval_spec.input_fn, steps=self._eval_spec.steps, name=self._eval_spec.name,
            hooks=self._eval_spec.hooks, exporters=self._eval_spec.exporters,
            start_delay_secs=0, throttle_secs=0)
        self._train_and_evaluate(every_checkpoint)
        return self.last_eval_result

    def continuous_train_and_eval(self, continuous_eval_predicate_fn=None):
        """`tf.estimator.train_and_evaluate`, then a final evaluation when run locally."""
        del continuous_eval_predicate_fn
        self._train_and_evaluate(self._eval_spec)
        if run_config_lib.is_distributed():
            return self.last_eval_result
        if self.last_eval_result is None:
            return self.evaluate()
        return self.last_eval_result

    def continuous_eval(self):
        """Evaluate every new checkpoint until one reaches train_steps, or the final one of
        a run that stopped early (or until eval_timeout_mins pass without a new one)."""
        model_dir = self._estimator.model_dir
        evaluated = None

        def training_ended():
            return eval_events.training_ended(model_dir, self.train_steps, evaluated)

        for ckpt_path in next_checkpoint(model_dir, self._eval_timeout_mins,
                                         stop_fn=training_ended):
            step = checkpoint_step(ckpt_path)
            if step == 0:
                logging.info("Skipping evaluation at step 0")
                continue
            evaluated = int(self.evaluate().get("global_step", step or 0))
            if training_ended():
                logging.info("Evaluated the final checkpoint (step %d); stopping", evaluated)
                break
        return self.last_eval_result

    def continuous_eval_on_train_data(self):
        """continuous_eval with the training data as eval input."""
        self._eval_spec = self._eval_spec._replace(input_fn=self._train_eval_input_fn())
        return self.continuous_eval()

    def evaluate_on_train_data(self):
        """Evaluate the latest checkpoint on (eval_steps batches of) the training data."""
        self.last_eval_result = self._estimator.evaluate(
            self._train_eval_input_fn(), steps=self._eval_spec.steps,
            hooks=self._eval_spec.hooks, name="eval_train")
        return self.last_eval_result

    def _train_eval_input_fn(self):
        if self._problem is None:
            raise ValueError("evaluating on the training data needs the problem: pass "
                             "T2TExperiment(problem=...) or attach it to the hparams with "
                             "t2t_model.add_problem_hparams")
        return self._problem.make_estimator_input_fn(ModeKeys.EVAL, self._hparams,
                                               dataset_kwargs={"dataset_split": "train"})

    def run_std_server(self):
        """Start this task's server of the TF_CONFIG cluster and serve forever (ps tasks)."""
        config = tf.estimator.RunConfig()
        if not config.cluster_spec:
            raise errors.UserError("--schedule=run_std_server needs a cluster in TF_CONFIG")
        server = tf.distribute.Server(config.cluster_spec, job_name=config.task_type,
                                      task_index=config.task_id, protocol=config.protocol)
        server.join()

    def _decode_unsupported(self, *args, **kwargs):
        del args, kwargs
        raise errors.UserError("decoding schedules are run by t2t-decoder; use --schedule=train, "
                               "evaluate, train_and_evaluate, continuous_train_and_eval or "
                               "continuous_eval")

    decode = train_and_decode = train_eval_and_decode = continuous_decode = _decode_unsupported
    continuous_decode_from_file = continuous_decode_on_train_data = _decode_unsupported


SCHEDULES = backends.SCHEDULES
