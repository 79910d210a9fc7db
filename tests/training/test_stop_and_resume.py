"""Runs that stop and resume: a signal's checkpoint, time-based checkpoints, the batches a
resumed run skips, and a resume past a broken (truncated) newest checkpoint.

One run is stopped by SIGTERM, then resumed past a broken newer checkpoint, and must end
with the weights of an uninterrupted run, bit for bit: on the default backend (the
Estimator where tf.estimator exists, else native), so CI's two stacks test both backends
with three model builds each. No signal is sent to this (pytest's) process: the
in-process runs call the handler `stop_on_signals` installed, which is what a delivered
signal runs; real signals go to child processes only (here a small Python child without
TensorFlow; t2t-trainer's exit code and line: tests/bin/test_trainer_cli.py). The model is
a 1-layer, 16-wide Transformer without dropout (whose random masks start anew in a
resumed process).
"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import types

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import backend_choice
from t2t.core import errors
from t2t.core import random_seed
from t2t.training import checkpoint_recovery, checkpoint_schedule, eval_events
from t2t.training import run_config, runner, stop_signals, trainer_lib
from t2t.training.native import experiment as native_experiment
from t2t.training.native import functions as functions_lib
from t2t.training.native import strategies

PROBLEM = "algorithmic_reverse_binary40_test"
TINY = ("hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,batch_size=128,"
        "layer_prepostprocess_dropout=0.0,attention_dropout=0.0,relu_dropout=0.0")
STOP_AT, TRAIN_STEPS = 3, 6
RUN_CONFIG = dict(save_checkpoints_steps=STOP_AT, keep_checkpoint_max=10, random_seed=1,
                  log_step_count_steps=1)


def _deliver(signum):
    """What a delivered `signum` runs: the handler installed for it (stop_on_signals')."""
    handler = signal.getsignal(signum)
    assert callable(handler), handler
    handler(signum, None)


# ---------------------------------------------------------------------------- the pieces
STOP_CHILD = textwrap.dedent('''
    import signal, sys, time
    from t2t.training import stop_signals

    # The handlers it started with: default_int_handler for SIGINT, or SIG_IGN when the
    # process that started it ignored SIGINT (a disposition a child inherits).
    before = {each: signal.getsignal(each) for each in stop_signals.SIGNALS}
    with stop_signals.stop_on_signals():
        print("ready", flush=True)
        while stop_signals.requested_signal() is None:
            time.sleep(0.01)
        print("requested", stop_signals.requested_signal(),
              signal.getsignal(signal.SIGINT) == signal.getsignal(signal.SIGTERM)
              == signal.SIG_DFL, flush=True)
        if sys.argv[1] == "slow_save":
            time.sleep(120)  # a save that a second signal interrupts
    after = {each: signal.getsignal(each) for each in stop_signals.SIGNALS}
    print("handlers before and after:", before, after, file=sys.stderr, flush=True)
    print("restored", after == before, flush=True)
''')


def test_a_signal_is_a_request_and_a_second_one_ends_the_process_at_once():
    # Real signals, to a child in its own session (never this process or its group).
    def child(mode):
        return subprocess.Popen([sys.executable, "-c", STOP_CHILD, mode], text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)

    first, second = child("quick"), child("slow_save")
    try:
        for proc in (first, second):
            assert proc.stdout.readline() == "ready\n"
        first.send_signal(signal.SIGINT)
        second.send_signal(signal.SIGTERM)
        assert first.stdout.readline() == "requested %d True\n" % signal.SIGINT
        assert second.stdout.readline() == "requested %d True\n" % signal.SIGTERM
        second.send_signal(signal.SIGINT)
        first.wait(timeout=60)
        out, err = first.stdout.read(), first.stderr.read()  # (after readline: not communicate)
        # The request ended nothing by itself; the handlers before it are back after.
        assert (first.returncode, out) == (0, "restored True\n"), err
        assert ("Received SIGINT: saving a checkpoint at the current step, then stopping "
                "(another SIGINT or SIGTERM stops at once, without it)") in err
        second.wait(timeout=60)  # not the 120 s save
        assert second.returncode == -signal.SIGINT
    finally:
        for proc in (first, second):
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


def test_only_the_main_thread_installs_handlers():
    before = signal.getsignal(signal.SIGTERM)
    seen = []

    def enter():
        with stop_signals.stop_on_signals():
            seen.append(signal.getsignal(signal.SIGTERM))

    thread = threading.Thread(target=enter)
    thread.start()
    thread.join()
    assert seen == [before]


def test_training_stopped_says_where_and_how_to_resume():
    stopped = stop_signals.TrainingStopped(signal.SIGTERM, 1234, "/run/model.ckpt-1234")
    assert (str(stopped), stopped.exit_code) == (
        "stopped by SIGTERM at step 1,234; saved /run/model.ckpt-1234: rerun the same command "
        "to resume", 143)
    worker = stop_signals.TrainingStopped(signal.SIGINT, 10, None, from_other_task=True)
    assert (str(worker), worker.exit_code) == (
        "stopped at step 10: another task of the cluster got SIGINT; this task writes no "
        "checkpoint (the chief saves them): rerun the same command to resume", 130)


def test_checkpoint_schedule_steps_or_time_whichever_first(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(checkpoint_schedule, "_now", lambda: now[0])
    schedule = checkpoint_schedule.CheckpointSchedule(steps=1000, secs=600, start_step=0)
    assert schedule.due(999) is None
    assert schedule.due(1000) == "steps" and schedule.evaluation_follows("steps")
    schedule.saved(1000)
    now[0] = 599.0
    assert schedule.due(1400) is None
    now[0] = 600.0
    assert schedule.due(1400) == "time" and not schedule.evaluation_follows("time")
    schedule.saved(1400)
    assert (schedule.due(1999), schedule.due(2000)) == (None, "steps")
    only_time = checkpoint_schedule.CheckpointSchedule(steps=None, secs=600)
    now[0] = 1200.0
    assert only_time.due(7) == "time" and only_time.evaluation_follows("time")
    never = checkpoint_schedule.CheckpointSchedule(steps=0, secs=None)
    assert never.due(10 ** 6) is None  # only the final checkpoint, as the Estimator's


def test_the_tasks_of_a_native_cluster_stop_at_one_step():
    # A task that stopped alone would leave the others waiting in the next step's
    # all-reduce: in a cluster they agree every STOP_CHECK_STEPS steps (a sum over the
    # strategy's replicas; tests/training/test_native_cluster.py runs it across two
    # processes), a process alone stops at once.
    strategy = tf.distribute.get_strategy()
    placement = strategies.Placement(strategy)
    cluster = strategies.Placement(strategy, in_cluster=True)
    assert [cluster.agree_signal(s) for s in (None, signal.SIGINT, signal.SIGTERM)] == [
        None, signal.SIGINT, signal.SIGTERM]
    other_task_got_one = strategies.Placement(strategy, in_cluster=True)
    other_task_got_one.agree_signal = lambda signum: signal.SIGTERM

    def stop_signal(where, step):
        return native_experiment.NativeExperiment._stop_signal(
            types.SimpleNamespace(_placement=where), step)

    every = native_experiment.STOP_CHECK_STEPS
    with stop_signals.stop_on_signals():
        assert stop_signal(placement, 3) is stop_signal(cluster, every) is None
        assert stop_signal(other_task_got_one, every + 3) is None
        assert stop_signal(other_task_got_one, 2 * every) == (signal.SIGTERM, True)
        _deliver(signal.SIGTERM)
        assert stop_signal(placement, 3) == (signal.SIGTERM, False)
        assert stop_signal(cluster, every + 3) is None
        assert stop_signal(cluster, 2 * every) == (signal.SIGTERM, False)


# ---------------------------------------------------------------------------- stop, resume
class _StepHook(tf.compat.v1.train.SessionRunHook):
    """Calls `at_step(step)` as each Estimator training step starts: a signal it delivers
    arrives while that step runs, as a real one mostly does (every hook's `after_run`,
    the checkpoint saver's included, then sees it)."""

    def __init__(self, at_step):
        self._at_step = at_step

    def begin(self):
        self._global_step = tf.compat.v1.train.get_global_step()

    def before_run(self, run_context):
        self._at_step(int(run_context.session.run(self._global_step)) + 1)


def _hparams(data_dir):
    return trainer_lib.create_hparams("transformer_tiny", TINY, data_dir=data_dir,
                                      problem_name=PROBLEM)


def _experiment(backend, model_dir, data_dir, schedule="train", at_step=None,
                checkpoint_secs=None, monkeypatch=None):
    """A native or Estimator experiment of TRAIN_STEPS; `at_step(step)` after each step."""
    random_seed.set_random_seed(1)  # as t2t-trainer: the Python and numpy generators
    hparams = _hparams(data_dir)
    run_spec = run_config.RunConfigSpec(model_dir=model_dir,
                                        save_checkpoints_secs=checkpoint_secs, **RUN_CONFIG)
    hooks = [_StepHook(at_step)] if at_step and backend == "estimator" else []
    spec = trainer_lib.ExperimentSpec("transformer", PROBLEM, data_dir,
                                      train_steps=TRAIN_STEPS, eval_steps=1, schedule=schedule,
                                      eval_throttle_seconds=0, additional_train_hooks=hooks)
    if backend == "estimator":
        return trainer_lib.experiment_from_spec(run_config.run_config_from_spec(run_spec),
                                                hparams, spec)
    if at_step:
        train_step = functions_lib.NativeModelFunctions.train_step

        def train_step_then(self, features):
            results = train_step(self, features)
            at_step(int(results[-1]))
            return results

        monkeypatch.setattr(functions_lib.NativeModelFunctions, "train_step", train_step_then)
    return native_experiment.native_experiment(run_spec, hparams, spec)


def _values(checkpoint_path):
    reader = tf.train.load_checkpoint(checkpoint_path)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def _steps(model_dir):
    return [eval_events.checkpoint_step(path) for path in
            tf.train.get_checkpoint_state(model_dir).all_model_checkpoint_paths]


def _job(model_dir, data_dir, backend):
    return runner.TrainingJob(
        model_name="transformer", hparams_set="transformer_tiny", output_dir=model_dir,
        problem_name=PROBLEM, data_dir=data_dir, hparams_overrides=TINY, backend=backend,
        train_steps=TRAIN_STEPS, eval_steps=1, run_config=RUN_CONFIG,
        experiment={"schedule": "train"})


def test_stopped_by_sigterm_then_resumed_past_a_broken_checkpoint_trains_what_one_run_does(
        data_dir, tmp_path, monkeypatch, caplog):
    caplog.set_level("INFO", logger="absl")
    backend = backend_choice.resolve_backend("auto")
    reference_dir, model_dir = str(tmp_path / "reference"), str(tmp_path / "run")
    _experiment(backend, reference_dir, data_dir).train()
    reference = os.path.join(reference_dir, "model.ckpt-%d" % TRAIN_STEPS)

    # Stopped by SIGTERM after step 3, checkpoints every 600 s: the clock reads 300 s a
    # step, so one comes at step 2. Step 3 is also a step-based checkpoint's: the signal's
    # stop then rides on that save (on the Estimator, whose saver hook once ran before the
    # training log's, the summary then missed step 3).
    steps_done = [0]
    monkeypatch.setattr(checkpoint_schedule, "_now", lambda: 300.0 * steps_done[0])

    def at_step(step):
        steps_done[0] = step
        if step == STOP_AT:
            _deliver(signal.SIGTERM)

    stopped = _experiment(backend, model_dir, data_dir, schedule="train_and_evaluate",
                          at_step=at_step, checkpoint_secs=600, monkeypatch=monkeypatch)
    with pytest.raises(stop_signals.TrainingStopped) as raised:
        stopped.train_and_evaluate()
    monkeypatch.undo()
    path = os.path.join(model_dir, "model.ckpt-%d" % STOP_AT)
    assert (raised.value.signum, raised.value.step, raised.value.checkpoint_path) == (
        signal.SIGTERM, STOP_AT, path)
    assert "Received SIGTERM: saving a checkpoint at the current step" in caplog.text
    assert _steps(model_dir) == [0, 2, STOP_AT]
    assert int(_values(path)["global_step"]) == STOP_AT
    assert "train transformer done: %d steps" % STOP_AT in caplog.text
    # train_and_evaluate evaluates after the step-based checkpoints only: neither the
    # time-based one nor the signal's (a step-based one too).
    assert eval_events.read_eval_metrics(os.path.join(model_dir, "eval")) == {}
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # put back as it was

    # A newer checkpoint whose data file was cut short (a disk that filled up): the
    # resumed run sets it aside, says why, and resumes from the signal's checkpoint.
    trainer_lib.save_metadata(model_dir, _hparams(data_dir))
    broken = os.path.join(model_dir, "model.ckpt-%d" % TRAIN_STEPS)
    for name in glob.glob(reference + ".index") + glob.glob(reference + ".data-*"):
        shutil.copy(name, model_dir)
    with open(broken + ".data-00000-of-00001", "r+b") as data:
        data.truncate(100)
    listed = [os.path.join(model_dir, "model.ckpt-%d" % step) for step in _steps(model_dir)]
    tf.compat.v1.train.update_checkpoint_state(model_dir, broken, listed + [broken])
    random_seed.set_random_seed(1)
    again = runner.prepare(_job(model_dir, data_dir, backend))
    assert again.resuming
    assert ("Skipping checkpoint %s: model.ckpt-%d.data-00000-of-00001 holds 100 bytes, its "
            "index lists" % (broken, TRAIN_STEPS)) in caplog.text
    set_aside = os.path.join(model_dir, checkpoint_recovery.BROKEN_DIR)
    assert sorted(os.listdir(set_aside)) == [
        "model.ckpt-6.data-00000-of-00001", "model.ckpt-6.index"]
    assert tf.train.latest_checkpoint(model_dir) == path
    runner.run(again)
    assert "train transformer: resuming at global step %d" % STOP_AT in caplog.text

    # It skipped the 3 batches trained on: its weights are the uninterrupted run's, bit for
    # bit (without the skip they differ).
    expected, actual = _values(reference), _values(broken)
    assert sorted(actual) == sorted(expected)
    for name in sorted(expected):
        np.testing.assert_array_equal(actual[name], expected[name], err_msg=name)

    # When no checkpoint reads, nothing is moved and the run does not start.
    for name in glob.glob(os.path.join(model_dir, "model.ckpt-*.data-*")):
        with open(name, "r+b") as data:
            data.truncate(10)
    with pytest.raises(errors.UserError, match=r"no checkpoint in .*run can be read "
                                               r"\(model\.ckpt-6: .*; model\.ckpt-0: .*\); "
                                               r"restore them from a backup"):
        runner.prepare(_job(model_dir, data_dir, backend))
    assert len(os.listdir(set_aside)) == 2
    assert os.path.exists(broken + ".index")
