"""NativeExperiment: t2t's schedules on the native backend, with the Estimator's files.

    experiment = native_experiment(run_spec, hparams, spec)     # RunConfigSpec, ExperimentSpec
    experiment.continuous_train_and_eval()
    # I train transformer: step 100, loss 1.2345 (mean of 100 steps), 30.12 steps/s, ...
    # I Saved checkpoint at step 1000
    # I Evaluation of model.ckpt-1000 at global step 1000: loss 0.4, metrics-.../accuracy 0.9
    # I train transformer done: 1,000 steps, ..., 0.3990 final loss, 33.2 s

What lands in `model_dir` is what the Estimator backend writes, so either backend resumes
the other's run and every reader (t2t-decoder, early stopping, t2t.tuning, TensorBoard)
works unchanged: `model.ckpt-N.{index,data-*}` and `checkpoint` (the newest
`keep_checkpoint_max` kept; a fresh run saves step 0 first, as the Estimator does), train
events (`loss`, `learning_rate`, `global_step/sec` every `save_summary_steps`) in
`model_dir`, and one event per evaluation in `eval/` (`loss`, `metrics-<problem>/...`).
A run killed at any point resumes from its newest checkpoint that reads; SIGINT or SIGTERM
first saves one at the current step (`stop_signals`), and a seeded run resumes with the
batch after those its checkpoint trained on (`checkpoint_recovery.skip_trained_batches`),
so stopping and resuming trains what one uninterrupted run would (without dropout, whose
random masks start anew in each process).

Schedules (as `T2TExperiment`'s): train, evaluate, train_and_evaluate (an evaluation after
every step-based checkpoint), continuous_train_and_eval (evaluations at most every
`eval_throttle_seconds`, then a final one), continuous_eval (each new checkpoint until
`train_steps`), continuous_eval_on_train_data and evaluate_on_train_data (training data,
`eval_train/`). Early stopping reads `eval/` like the Estimator's hook.
"""
import os
import time

import tensorflow as tf
from absl import logging

from t2t.core import errors
from t2t.core.modes import ModeKeys
from t2t.model import checkpoint_files
from t2t.model import model_hparams
from t2t.decoding import predictor as predictor_lib
from t2t.training import checkpoint_recovery
from t2t.training import checkpoint_schedule
from t2t.training import eval_events
from t2t.training import eval_throttle
from t2t.training import stop_signals
from t2t.training import train_log
from t2t.training.native import functions as functions_lib
from t2t.training.native import strategies

CHECKPOINT_PREFIX = "model.ckpt"
# In a cluster, how often the training tasks agree whether one of them got a stop signal.
STOP_CHECK_STEPS = 10


def _write_train_summary(writer, step, values):
    summary = tf.compat.v1.Summary()
    for name in sorted(values):
        summary.value.add(tag=name, simple_value=float(values[name]))
    with writer.as_default():
        tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=int(step))


class NativeExperiment:
    """The schedules of `T2TExperiment` (same method names) on the native backend.

    Args:
      run_spec: a `run_config.RunConfigSpec` (model_dir, checkpoints, devices, seed).
      hparams: model hparams with the problem and run settings attached
        (`trainer_lib.experiment_from_spec` does it; so does `native_experiment`).
      spec: a `trainer_lib.ExperimentSpec`.
      placement: a `strategies.Placement` (default: from run_spec and TF_CONFIG).
      problem: the Problem whose data it reads (default: the one attached to `hparams`).
    """

    def __init__(self, run_spec, hparams, spec, placement=None, problem=None):
        self._run_spec = run_spec
        self._hparams = hparams
        self._problem = (problem if problem is not None else
                         model_hparams.attached_problem(hparams, "NativeExperiment"))
        self._spec = spec
        self._placement = placement or strategies.placement_for(run_spec)
        self._model_dir = run_spec.model_dir
        self._functions = None
        self._built_for_training = False
        self._restored_path = None
        self._eval_datasets = {}
        self.last_eval_result = None
        self.train_summary = None
        self.stopped_early_at_step = None
        self._eval_name = "test" if spec.eval_use_test_set else None
        self._predictor = None
        self._resume_step = 0

    # ------------------------------------------------------------------ properties
    @property
    def model_dir(self):
        return self._model_dir

    @property
    def train_steps(self):
        return self._spec.train_steps

    @property
    def eval_steps(self):
        return self._spec.eval_steps

    @property
    def placement(self):
        return self._placement

    def eval_dir(self, name=None):
        """Where evaluations write events: <model_dir>/eval (eval_<name> for others)."""
        name = self._eval_name if name is None else name
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    # ------------------------------------------------------------------ data
    def _dataset(self, mode, split=None):
        return self._problem.input_fn(mode, self._hparams, data_dir=self._spec.data_dir,
                                dataset_kwargs={"dataset_split": split} if split else None)

    def _eval_dataset(self, split=None):
        """The eval input of `split` (made once: every evaluation iterates it anew)."""
        if split is None and self._spec.eval_use_test_set:
            split = "test"
        if split not in self._eval_datasets:
            self._eval_datasets[split] = self._dataset(ModeKeys.EVAL, split)
        return self._eval_datasets[split]

    def _pipeline_dataset(self, context):
        """One worker's training batches: every `num_input_pipelines`-th batch of the
        problem's input from the `input_pipeline_id`-th on.

        Each worker of a MultiWorkerMirroredStrategy runs its own input pipeline, and with
        --random_seed (the same on every task) all of them shuffle alike: unsharded, every
        worker trained on the same batch at each step, so N workers learned what one does.
        Sharded, the workers of a seeded run get the batches one process with as many
        replicas gets (its replicas take consecutive batches of one pipeline). Each worker
        still reads all of the input, as T2T's workers did.
        """
        dataset = self._dataset(ModeKeys.TRAIN)
        if context.num_input_pipelines > 1:
            dataset = dataset.shard(context.num_input_pipelines, context.input_pipeline_id)
        return checkpoint_recovery.skip_trained_batches(
            dataset, self._resume_step,
            context.num_replicas_in_sync // context.num_input_pipelines,
            self._run_spec.random_seed)

    # ------------------------------------------------------------------ model functions
    def _build(self, training):
        """Model functions with every variable created and the newest checkpoint loaded."""
        if self._functions is not None and (self._built_for_training or not training):
            return self._functions
        strategy = self._placement.strategy
        if self._run_spec.random_seed is not None:
            # As the Estimator's tf_random_seed: initial values and dropout follow the seed.
            tf.random.set_seed(self._run_spec.random_seed)
        functions = functions_lib.NativeModelFunctions(
            self._spec.model_name, self._hparams, strategy=strategy,
            num_async_replicas=self._placement.num_async_replicas, use_xla=self._spec.use_xla)
        # Known before the input is made: a resumed seeded run skips the batches trained
        # on, in the one training dataset it makes (a second one would draw other seeds).
        self._resume_step = checkpoint_recovery.resume_step(self._model_dir) if training else 0
        train_dataset = self._dataset(ModeKeys.TRAIN)
        replica_spec = train_dataset.element_spec
        train_input_spec = None
        if training:
            if strategy.num_replicas_in_sync > 1:
                # Every replica reads its own batches (T2T's shard_multiplier).
                self._train_input = strategy.distribute_datasets_from_function(
                    self._pipeline_dataset)
            else:
                self._train_input = checkpoint_recovery.skip_trained_batches(
                    train_dataset, self._resume_step, 1, self._run_spec.random_seed)
            train_input_spec = self._train_input.element_spec
        # The eval step is traced at the first evaluation (never for --schedule=train),
        # except in an evaluation-only build, where evaluating is all there is to do.
        functions.build(replica_spec, train_input_spec,
                        None if training else self._eval_dataset().element_spec)
        functions.saver(max_to_keep=self._run_spec.keep_checkpoint_max,
                        keep_checkpoint_every_n_hours=self._run_spec.keep_checkpoint_every_n_hours)
        self._functions, self._built_for_training = functions, training
        self._restored_path = None
        self._restore_latest()
        return functions

    def _restore_latest(self):
        """Load the newest checkpoint of model_dir that reads (warm-start a fresh run); its
        path. A worker of a cluster may look before the chief has set a broken newer one
        aside (`checkpoint_recovery`): it skips it too."""
        path, broken = checkpoint_files.newest_readable(self._model_dir)
        if path is None and not broken:
            if self._spec.warm_start_from:
                self._functions.warm_start(self._spec.warm_start_from)
            return None
        if path is None:  # checkpoints, none of which reads: its UserError says which
            checkpoint_recovery.resume_from_readable(self._model_dir, is_chief=False)
        if path != self._restored_path:
            logging.info("Restoring checkpoint %s", path)
            self._functions.restore(path)
            # The Saver deletes what it recovers beyond keep_checkpoint_max: the state
            # file's list (not what else is on disk, e.g. kept every n hours).
            skipped = {broken_path for broken_path, _ in broken}
            state = tf.train.get_checkpoint_state(self._model_dir)
            self._functions.saver().recover_last_checkpoints(
                [p for p in state.all_model_checkpoint_paths if p not in skipped])
            self._restored_path = path
        return path

    def _save(self, step, reason=None):
        """The chief writes model.ckpt-<step> (workers hold the same values: nothing)."""
        if not self._placement.is_chief:
            return None
        path = self._functions.save(os.path.join(self._model_dir, CHECKPOINT_PREFIX), step)
        logging.info("Saved checkpoint at step %d%s", step,
                     " (%d s or more since the last)" % self._run_spec.save_checkpoints_secs
                     if reason == "time" else "")
        self._restored_path = path
        return path

    # ------------------------------------------------------------------ training
    def train(self, max_steps=None, evaluate_every_checkpoint=False, throttle_secs=None):
        """Train until the global step reaches `max_steps` (default: train_steps).

        Checkpoints every save_checkpoints_steps steps or save_checkpoints_secs seconds,
        whichever comes first. With `evaluate_every_checkpoint`, an evaluation follows
        every step-based checkpoint saved after at least `throttle_secs` since the
        previous one (0: every one). SIGINT or SIGTERM stops it after the step in
        progress with a checkpoint at that step (`stop_signals.TrainingStopped`).
        Returns the log's summary (steps, tokens/s, final loss, ...).
        """
        with stop_signals.stop_on_signals():
            return self._train(max_steps or self.train_steps, evaluate_every_checkpoint,
                               throttle_secs)

    def _train(self, max_steps, evaluate_every_checkpoint, throttle_secs):
        functions = self._build(training=True)
        step = int(functions.global_step.numpy())
        log_every = self._spec.log_step_count_steps or self._run_spec.log_step_count_steps
        log = train_log.TrainingLog(log_every or 100, "train %s" % self._spec.model_name,
                                    start_step=step,
                                    num_replicas=self._placement.num_replicas)
        if step == 0 and tf.train.latest_checkpoint(self._model_dir) is None:
            self._save(0)
        if self._placement.is_chief:
            eval_events.clear_early_stop(self._model_dir)
        if step >= max_steps:
            logging.info("Global step %d is already at --train_steps=%d", step, max_steps)
        chief = self._placement.is_chief
        writer = tf.summary.create_file_writer(self._model_dir) if chief else None
        schedule = checkpoint_schedule.CheckpointSchedule(
            self._run_spec.save_checkpoints_steps, self._run_spec.save_checkpoints_secs,
            start_step=step)
        summary_steps = max(self._run_spec.save_summary_steps or 100, 1)
        stopper = self._early_stopper()
        last_summary_time = time.monotonic()
        last_summary_step = step
        throttle = eval_throttle.EvalThrottle(throttle_secs)
        stop = None
        iterator = iter(self._train_input)
        while step < max_steps:
            stop = self._stop_signal(step)
            if stop is not None:
                break
            loss, tokens, examples, learning_rate, new_step = functions.train_step(
                next(iterator))
            step = int(new_step)
            loss = float(loss)
            log.after_step(step, tokens=int(tokens), examples=int(examples), loss=loss)
            if writer is not None and step // summary_steps > last_summary_step // summary_steps:
                now = time.monotonic()
                _write_train_summary(writer, step, {
                    "loss": loss, "learning_rate": float(learning_rate),
                    "global_step/sec": (step - last_summary_step) / max(now - last_summary_time,
                                                                        1e-9)})
                last_summary_step, last_summary_time = step, now
            due = schedule.due(step)
            if due and step < max_steps:
                self._save(step, due)
                schedule.saved(step)
                # A time-based checkpoint is for a run that dies, not one more evaluation;
                # nor is one saved while a signal's stop is pending (as on the Estimator).
                if (evaluate_every_checkpoint and schedule.evaluation_follows(due)
                        and stop_signals.requested_signal() is None):
                    if throttle.due():
                        self._evaluate_now(step)
                        throttle.record_evaluation()
                    else:
                        throttle.skipped(step)
            if stopper is not None and stopper(step):
                break
        if schedule.last_saved_step != step:
            self._save(step)
        if self.stopped_early_at_step is not None and self._placement.is_chief:
            # After the final checkpoint: an evaluator that reads this has it to evaluate.
            eval_events.write_early_stop(self._model_dir, step, self.train_steps)
        if writer is not None:
            writer.close()
        self.train_summary = log.end()
        if stop is not None:
            signum, from_other_task = stop
            raise stop_signals.TrainingStopped(
                signum, step, self._restored_path if chief else None,
                from_other_task=from_other_task)
        return self.train_summary

    def _stop_signal(self, step):
        """(signal, from another task) when training must stop before `step`, else None.

        One process stops at once. The tasks of a cluster train each step together, so
        one that stopped alone would leave the others waiting for it forever: they agree
        every STOP_CHECK_STEPS steps (a sum over the tasks; all of them stop at the same
        step, where the chief saves).
        """
        signum = stop_signals.requested_signal()
        if not self._placement.in_cluster:
            return None if signum is None else (signum, False)
        if step % STOP_CHECK_STEPS:
            return None
        agreed = self._placement.agree_signal(signum)
        return None if agreed is None else (agreed, signum is None)

    def _early_stopper(self):
        """A function step -> bool (stop now), checked every min_eval_frequency steps."""
        spec = self._spec
        if not spec.eval_early_stopping_steps:
            return None
        metric = spec.eval_early_stopping_metric or "loss"
        delta = (0.1 if spec.eval_early_stopping_metric_delta is None
                 else spec.eval_early_stopping_metric_delta)
        every = max(spec.min_eval_frequency or self._run_spec.save_checkpoints_steps or 100, 1)
        last = {"step": None}

        def should_stop(step):
            previous, last["step"] = last["step"], step
            if previous is not None and step // every == previous // every:
                return False
            steps, values = eval_events.read_eval_history(self.eval_dir(), metric)
            stop = eval_events.has_metric_plateaued(
                steps, values, spec.eval_early_stopping_steps, delta,
                spec.eval_early_stopping_metric_minimize)
            stop = self._placement.agree(stop)
            if stop:
                logging.info("Early stopping at step %d: %s has not %s by %s in %d steps",
                             step, metric, "decreased" if
                             spec.eval_early_stopping_metric_minimize else "increased",
                             delta, spec.eval_early_stopping_steps)
                self.stopped_early_at_step = step
            return stop

        return should_stop

    # ------------------------------------------------------------------ evaluation
    def _evaluate_now(self, step, split=None, name=None):
        """Evaluate the variables as they are (the checkpoint of `step`); write events."""
        functions = self._functions
        dataset = self._eval_dataset(split)
        metrics = functions.evaluate(dataset, steps=self.eval_steps)
        metrics["global_step"] = int(step)
        checkpoint_path = self._restored_path
        if self._placement.is_chief or self._placement.is_evaluator:
            eval_events.write_eval_summary(self.eval_dir(name), metrics, step,
                                           checkpoint_path=checkpoint_path)
        logging.info("Evaluation of %s at global step %d: %s",
                     os.path.basename(checkpoint_path or "?"), step,
                     train_log.format_metrics(metrics))
        self.last_eval_result = metrics
        if self._placement.is_chief or self._placement.is_evaluator:
            self._run_exporters(checkpoint_path, metrics)
        return metrics

    def _run_exporters(self, checkpoint_path, metrics):
        """Call each of the spec's `additional_exporters` as `tf.estimator` does after an
        evaluation, with a checkpoint predictor in the Estimator's place (what exporters
        use of it: `predict(input_fn, checkpoint_path=...)` and `model_dir`)."""
        exporters = list(self._spec.additional_exporters or [])
        if not exporters or checkpoint_path is None:
            return
        if self._predictor is None:
            self._predictor = predictor_lib.CheckpointPredictor(
                self._spec.model_name, self._hparams, self._model_dir,
                decode_hparams=self._spec.decode_hparams,
                random_seed=self._run_spec.random_seed)
        final = metrics["global_step"] >= self.train_steps
        for exporter in exporters:
            exporter.export(self._predictor, os.path.join(self._model_dir, "export",
                                                          exporter.name),
                            checkpoint_path, metrics, final)

    def _evaluate_latest(self, split=None, name=None, must_exist=True):
        functions = self._build(training=self._built_for_training)
        path = self._restore_latest()
        if path is None:
            if must_exist:
                raise errors.UserError("no checkpoint in %s to evaluate; train first or give "
                                       "the right --output_dir" % self._model_dir)
            return None
        return self._evaluate_now(int(functions.global_step.numpy()), split, name)

    def evaluate(self):
        """Evaluate the latest checkpoint; returns the metrics dict."""
        return self._evaluate_latest()

    def train_and_evaluate(self):
        """Train with an evaluation after every checkpoint, and of the final one."""
        if self._placement.is_evaluator:
            return self.continuous_eval()
        self._log_cluster_evaluation()
        self.train(evaluate_every_checkpoint=self._chief_evaluates(), throttle_secs=0)
        return self._final_evaluation()

    def continuous_train_and_eval(self, continuous_eval_predicate_fn=None):
        """Train, evaluating at most every eval_throttle_seconds, then a final evaluation."""
        del continuous_eval_predicate_fn
        if self._placement.is_evaluator:
            return self.continuous_eval()
        self._log_cluster_evaluation()
        self.train(evaluate_every_checkpoint=self._chief_evaluates(),
                   throttle_secs=self._spec.eval_throttle_seconds)
        return self._final_evaluation()

    def _chief_evaluates(self):
        """Whether this task evaluates during training: the chief of a run without a
        cluster. In a TF_CONFIG cluster the evaluator task does (tf.estimator's rule)."""
        return self._placement.is_chief and not self._placement.in_cluster

    def _log_cluster_evaluation(self):
        if self._placement.is_chief and self._placement.in_cluster:
            logging.info("In a cluster, evaluations are the evaluator task's (TF_CONFIG task "
                         "type \"evaluator\"); this chief trains only")

    def _final_evaluation(self):
        if not self._chief_evaluates():
            return self.last_eval_result
        step = int(self._functions.global_step.numpy())
        if self.last_eval_result and self.last_eval_result.get("global_step") == step:
            return self.last_eval_result
        return self._evaluate_now(step)

    def continuous_eval(self, split=None, name=None):
        """Evaluate every new checkpoint until one reaches train_steps, or the final one of
        a run that stopped early (or until eval_timeout_mins pass without a new one)."""
        evaluated = None

        def training_ended():
            return eval_events.training_ended(self._model_dir, self.train_steps, evaluated)

        for checkpoint_path in eval_events.next_checkpoint(self._model_dir,
                                                           self._spec.eval_timeout_mins,
                                                           stop_fn=training_ended):
            step = eval_events.checkpoint_step(checkpoint_path)
            if step == 0:
                logging.info("Skipping evaluation at step 0")
                continue
            # The newest checkpoint is the one evaluated, and it may be newer than the one
            # announced (the chief saved again meanwhile): without this, that newer one was
            # evaluated again when announced, and the final one twice.
            if step is not None and evaluated is not None and step <= evaluated:
                logging.info("Skipping %s: step %d is evaluated already",
                             os.path.basename(checkpoint_path), evaluated)
                continue
            evaluated = self._evaluate_latest(split, name)["global_step"]
            if training_ended():
                logging.info("Evaluated the final checkpoint (step %d); stopping", evaluated)
                break
        return self.last_eval_result

    def continuous_eval_on_train_data(self):
        """continuous_eval with the training data as eval input (events in eval_train/)."""
        return self.continuous_eval(split="train", name="train")

    def evaluate_on_train_data(self):
        """Evaluate the latest checkpoint on eval_steps batches of the training data."""
        return self._evaluate_latest(split="train", name="train")

    def run_std_server(self):
        from t2t.training import backends
        backends.check_native_supported(schedule="run_std_server")

    def _decode_unsupported(self, *args, **kwargs):
        del args, kwargs
        raise errors.UserError("decoding schedules are run by t2t-decoder; use --schedule=train, "
                               "evaluate, train_and_evaluate, continuous_train_and_eval or "
                               "continuous_eval")

    decode = train_and_decode = train_eval_and_decode = continuous_decode = _decode_unsupported
    continuous_decode_from_file = continuous_decode_on_train_data = _decode_unsupported


def native_experiment(run_spec, hparams, spec, placement=None):
    """A NativeExperiment with the run settings added to `hparams` (as the Estimator
    path's `experiment_from_spec` adds them) and the problem attached."""
    from t2t.training import trainer_lib
    problem = trainer_lib.add_run_settings(hparams, run_spec.model_dir, spec)
    return NativeExperiment(run_spec, hparams, spec, placement=placement, problem=problem)
