"""trainer_lib: hparams (and their resume), run configs, experiments, hooks, early stopping.

The training tests use a tiny transformer (d=16, 1 layer) on the 1,000-example
`algorithmic_reverse_binary40_test` problem, generated once for the module.
"""
import dataclasses
import inspect
import json
import os
import threading

import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.core import backend_choice

if not backend_choice.estimator_available():
    # The Estimator backend's own tests (its experiment, RunConfig and ps clusters);
    # tests/training/test_native.py covers the native backend.
    pytest.skip("needs tf.estimator (TensorFlow 2.15)", allow_module_level=True)

from t2t.core import errors, registry  # noqa: E402
from t2t.training import eval_events, experiment, run_config, trainer_lib  # noqa: E402

PROBLEM = "algorithmic_reverse_binary40_test"
MODEL = "transformer"
HPARAMS_SET = "transformer_tiny"
TINY = "hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,batch_size=128"
METRIC_PREFIX = "metrics-%s/targets/" % PROBLEM


def tiny_hparams(data_dir, overrides=TINY):
    return trainer_lib.create_hparams(HPARAMS_SET, overrides, data_dir=data_dir,
                                      problem_name=PROBLEM)


def make_experiment(model_dir, data_dir, train_steps, schedule="train", checkpoint_steps=3,
                    **kwargs):
    config = trainer_lib.create_run_config(
        MODEL, model_dir=model_dir, save_checkpoints_steps=checkpoint_steps,
        keep_checkpoint_max=kwargs.pop("keep_checkpoint_max", 5), random_seed=3,
        log_step_count_steps=2, use_tpu_estimator=kwargs.get("use_tpu_estimator", False),
        inter_op_parallelism_threads=2)
    return trainer_lib.create_experiment(
        config, tiny_hparams(data_dir), MODEL, PROBLEM, data_dir, train_steps=train_steps,
        eval_steps=2, min_eval_frequency=checkpoint_steps, schedule=schedule, **kwargs)


def log_hook(exp):
    return next(h for h in exp.train_spec.hooks if isinstance(h, experiment.TrainingLogHook))


# ----------------------------------------------------------------------------- hparams
def test_create_hparams_applies_overrides_data_dir_and_problem(tmp_path):
    hparams = trainer_lib.create_hparams(HPARAMS_SET, "num_hidden_layers=1,dropout=0.3",
                                         data_dir=str(tmp_path), problem_name=PROBLEM)
    assert hparams.num_hidden_layers == 1
    assert hparams.dropout == 0.3
    assert hparams.hidden_size == registry.hparams(HPARAMS_SET).hidden_size
    assert hparams.data_dir == str(tmp_path)
    assert hparams.problem.name == PROBLEM
    assert hparams.problem_hparams.vocab_size["targets"] == 4


def test_create_hparams_user_errors_are_one_line():
    with pytest.raises(registry.UnknownNameError, match="transformer_tiny"):
        trainer_lib.create_hparams("transformer_tinny")
    with pytest.raises(errors.UserError) as bad_value:
        trainer_lib.create_hparams(HPARAMS_SET, "num_hidden_layers=two")
    assert "num_hidden_layers" in str(bad_value.value) and "\n" not in str(bad_value.value)
    with pytest.raises(errors.UserError, match="hidden_size"):
        trainer_lib.create_hparams(HPARAMS_SET, "hiden_size=3")
    with pytest.raises(errors.UserError, match="--hparams_set is required"):
        trainer_lib.create_hparams("")


def test_resume_restores_saved_hparams_and_names_conflicts(tmp_path):
    first = trainer_lib.create_hparams(HPARAMS_SET, "num_hidden_layers=1,hidden_size=32")
    first.add_hparam("train_steps", 100)  # a run setting: saved, never restored
    trainer_lib.save_metadata(str(tmp_path), first)
    path = str(tmp_path / "hparams.json")

    resumed = trainer_lib.create_hparams(HPARAMS_SET, hparams_path=path)
    assert (resumed.num_hidden_layers, resumed.hidden_size) == (1, 32)
    assert "train_steps" not in resumed

    same = trainer_lib.create_hparams(HPARAMS_SET, "hidden_size=32", hparams_path=path,
                                      strict_resume=True)
    assert same.values() == resumed.values()

    # Without strict_resume (T2T's behaviour, used for decoding) overrides win.
    changed = trainer_lib.create_hparams(HPARAMS_SET, "hidden_size=64", hparams_path=path)
    assert (changed.num_hidden_layers, changed.hidden_size) == (1, 64)

    with pytest.raises(errors.UserError) as conflict:
        trainer_lib.create_hparams(
            HPARAMS_SET, "hidden_size=64,num_hidden_layers=2,dropout=%s" % first.dropout,
            hparams_path=path, strict_resume=True)
    message = str(conflict.value)
    assert "hidden_size 32 -> 64" in message
    assert "num_hidden_layers 1 -> 2" in message
    assert "dropout" not in message  # the saved value: no conflict
    assert path in message and "\n" not in message


def test_create_hparams_from_json_skips_function_dicts(tmp_path):
    path = tmp_path / "hparams.json"
    path.write_text(json.dumps({"hidden_size": 8, "bottom": {"inputs": "<function f>"},
                                "model_dir": "/x"}))
    hparams = trainer_lib.create_hparams_from_json(str(path), registry.hparams(HPARAMS_SET))
    assert hparams.hidden_size == 8
    assert hparams.bottom == {}
    assert "model_dir" not in hparams
    path.write_text("{not json")
    with pytest.raises(errors.UserError, match="not valid JSON"):
        trainer_lib.create_hparams_from_json(str(path), registry.hparams(HPARAMS_SET))


def test_hparams_differences():
    assert trainer_lib.hparams_differences({"a": 1, "b": "x", "c": [1]},
                                           {"a": 2, "b": "y", "c": [1], "d": 0}) == [
        "a 1 -> 2", 'b "x" -> "y"']


def test_save_metadata_writes_complete_files_only(tmp_path):
    hparams = trainer_lib.create_hparams(HPARAMS_SET, "hidden_size=24")
    trainer_lib.save_metadata(str(tmp_path), hparams, flags_text="--model=transformer\n",
                              t2t_flags_text="--model=transformer\n")
    assert sorted(os.listdir(tmp_path)) == ["flags.txt", "flags_t2t.txt", "hparams.json"]
    saved = json.loads((tmp_path / "hparams.json").read_text())
    assert saved["hidden_size"] == 24 and saved["num_heads"] == hparams.num_heads
    assert trainer_lib.read_saved_flags(str(tmp_path)) == {"model": "transformer"}


def test_check_resume_flags(tmp_path):
    (tmp_path / "flags.txt").write_text("--model=transformer\n--problem=p\n--hparams=\n")
    trainer_lib.check_resume_flags(str(tmp_path), model="transformer", problem="p")
    with pytest.raises(errors.UserError, match="--model=transformer, not lstm_seq2seq"):
        trainer_lib.check_resume_flags(str(tmp_path), model="lstm_seq2seq", problem="p")
    trainer_lib.check_resume_flags(str(tmp_path / "new"), model="lstm_seq2seq")


# ----------------------------------------------------------------------------- early stopping
def test_has_metric_plateaued_examples():
    plateaued = experiment.has_metric_plateaued
    assert plateaued([100, 200, 300], [5.0, 4.95, 4.93], num_steps=200, delta=0.1)
    assert not plateaued([100, 200, 300], [5.0, 4.95, 4.8], num_steps=200, delta=0.1)
    assert not plateaued([100, 200], [5.0, 5.0], num_steps=200)  # not enough history
    assert not plateaued([100], [5.0], num_steps=1)
    assert plateaued([10, 20, 30], [0.5, 0.52, 0.55], num_steps=20, delta=0.1, decrease=False)
    assert not plateaued([10, 20, 30], [0.5, 0.52, 0.65], num_steps=20, delta=0.1,
                         decrease=False)
    with pytest.raises(ValueError):
        plateaued([1, 2], [1.0, 2.0], num_steps=0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.11, 5.0), min_size=2, max_size=12), st.integers(1, 50),
       st.booleans())
def test_metric_improving_by_more_than_delta_never_plateaus(gains, num_steps, decrease):
    steps = [100 * (i + 1) for i in range(len(gains) + 1)]
    values = [0.0]
    for gain in gains:
        values.append(values[-1] + (-gain if decrease else gain))
    assert not experiment.has_metric_plateaued(steps, values, num_steps, delta=0.1,
                                               decrease=decrease)
    flat = [values[0]] * len(steps)
    assert experiment.has_metric_plateaued(steps, flat, num_steps, delta=0.1,
                                           decrease=decrease)


def test_checkpoint_step():
    assert experiment.checkpoint_step("/run/model.ckpt-1200") == 1200
    assert experiment.checkpoint_step("/run/model.ckpt") is None
    assert experiment.checkpoint_step(None) is None


# ----------------------------------------------------------------------------- run config
def test_create_run_config_checkpoints_seed_threads(tmp_path):
    config = trainer_lib.create_run_config(
        MODEL, model_dir=str(tmp_path), save_checkpoints_steps=50, keep_checkpoint_max=3,
        keep_checkpoint_every_n_hours=2, random_seed=7, log_step_count_steps=5,
        inter_op_parallelism_threads=3, intra_op_parallelism_threads=1)
    assert config.model_dir == str(tmp_path)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (50, None)
    assert (config.keep_checkpoint_max, config.keep_checkpoint_every_n_hours) == (3, 2)
    assert (config.tf_random_seed, config.log_step_count_steps) == (7, 5)
    assert config.session_config.inter_op_parallelism_threads == 3
    assert config.session_config.intra_op_parallelism_threads == 1
    assert config.session_config.allow_soft_placement
    assert config.t2t_device_info == {"num_async_replicas": 1}
    assert config.train_distribute is None and not config.use_tpu

    assert config.t2t_save_checkpoints_secs is None
    # Seconds too: the RunConfig (one or the other) keeps the steps, the experiment's
    # TimedCheckpointHook saves by time; without steps the RunConfig saves by time.
    both = trainer_lib.create_run_config(MODEL, model_dir=str(tmp_path),
                                         save_checkpoints_secs=30)
    assert (both.save_checkpoints_steps, both.save_checkpoints_secs) == (1000, None)
    assert both.t2t_save_checkpoints_secs == 30
    by_time = trainer_lib.create_run_config(MODEL, model_dir=str(tmp_path),
                                            save_checkpoints_steps=None,
                                            save_checkpoints_secs=30)
    assert (by_time.save_checkpoints_steps, by_time.save_checkpoints_secs) == (None, 30)
    assert by_time.t2t_save_checkpoints_secs is None

    tpu = trainer_lib.create_run_config(MODEL, model_dir=str(tmp_path), use_tpu_estimator=True,
                                        iterations_per_loop=4, num_shards=2)
    assert isinstance(tpu, tf.compat.v1.estimator.tpu.RunConfig)
    assert (tpu.tpu_config.iterations_per_loop, tpu.tpu_config.num_shards) == (4, 2)


def test_create_run_config_user_errors(tmp_path):
    with pytest.raises(errors.UserError, match="--worker_gpu=64"):
        trainer_lib.create_run_config(MODEL, model_dir=str(tmp_path), num_gpus=64)
    with pytest.raises(errors.UserError, match="--gpu_order"):
        run_config.replica_devices(2, gpu_order="0 1 2")
    with pytest.raises(errors.UserError, match="keep_checkpoint_max"):
        trainer_lib.create_run_config(MODEL, model_dir=str(tmp_path), keep_checkpoint_max=-1)
    with pytest.raises(errors.UserError, match="--schedule='trian'"):
        trainer_lib.create_experiment(
            trainer_lib.create_run_config(MODEL, model_dir=str(tmp_path)),
            trainer_lib.create_hparams(HPARAMS_SET, TINY), MODEL, PROBLEM, str(tmp_path),
            train_steps=1, eval_steps=1, schedule="trian")


def test_run_config_spec_validates_and_matches_t2t_signature(tmp_path):
    with pytest.raises(errors.UserError, match=r"--worker_gpu=-1: give 0 \(a CPU run\) or more"):
        run_config.RunConfigSpec(num_gpus=-1)
    # --worker_gpu=0 is T2T's CPU run: one device, no strategy, as 1 is without GPUs.
    cpu = trainer_lib.create_run_config(MODEL, model_dir=str(tmp_path), num_gpus=0)
    assert cpu.train_distribute is None and cpu.model_dir == str(tmp_path)
    with pytest.raises(errors.UserError, match="--local_eval_frequency"):
        run_config.RunConfigSpec(save_checkpoints_steps=0)
    with pytest.raises(errors.UserError, match="--iterations_per_loop=0"):
        run_config.RunConfigSpec(iterations_per_loop=0)
    spec = run_config.RunConfigSpec(MODEL, model_dir=str(tmp_path), save_checkpoints_steps=7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.num_gpus = 2
    # T2T's calling forms (positional and keyword) give the same config as the spec.
    positional = trainer_lib.create_run_config(MODEL, "", str(tmp_path), 1000, 8, False, 7)
    from_spec = run_config.run_config_from_spec(spec)
    for config in (positional, from_spec):
        assert (config.model_dir, config.save_checkpoints_steps) == (str(tmp_path), 7)
    names = list(inspect.signature(trainer_lib.create_run_config).parameters)
    assert names[:7] == ["model_name", "master", "model_dir", "iterations_per_loop",
                         "num_shards", "log_device_placement", "save_checkpoints_steps"]
    assert "save_summary_steps" in names and "tpu_config_extra_kwargs" in names
    with pytest.raises(TypeError, match="no_such_setting"):
        trainer_lib.create_run_config(MODEL, no_such_setting=1)


def test_experiment_spec_validates_and_matches_t2t_signature():
    for fields, message in [(dict(train_steps=0), "--train_steps=0: give a positive number"),
                            (dict(eval_steps=0), "--eval_steps=0: give a positive number"),
                            (dict(schedule="trian"), "--schedule='trian' is not a schedule"),
                            (dict(use_tfdbg=True), "--tfdbg is not supported"),
                            (dict(export=True), "--export_saved_model is deprecated")]:
        settings = dict(train_steps=10, eval_steps=2)
        settings.update(fields)
        with pytest.raises(errors.UserError, match=message):
            trainer_lib.ExperimentSpec(MODEL, PROBLEM, "/data", **settings)
    names = list(inspect.signature(trainer_lib.create_experiment).parameters)
    assert names[:9] == ["run_config", "hparams", "model_name", "problem_name", "data_dir",
                         "train_steps", "eval_steps", "min_eval_frequency",
                         "eval_throttle_seconds"]
    assert names[-2:] == ["log_step_count_steps", "additional_exporters"]


def test_create_experiment_and_experiment_from_spec_agree(tmp_path):
    data_dir = str(tmp_path / "data")
    config = trainer_lib.create_run_config(MODEL, model_dir=str(tmp_path / "a"))
    spec = trainer_lib.ExperimentSpec(MODEL, PROBLEM, data_dir, train_steps=5, eval_steps=2,
                                      schedule="train", min_eval_frequency=5)
    from_spec = trainer_lib.experiment_from_spec(config, tiny_hparams(data_dir), spec)
    t2t_form = trainer_lib.create_experiment(config, tiny_hparams(data_dir), MODEL, PROBLEM,
                                             data_dir, 5, 2, min_eval_frequency=5,
                                             schedule="train")
    for exp in (from_spec, t2t_form):
        assert exp.train_spec.max_steps == 5 and exp.eval_spec.steps == 2
        assert exp._hparams.train_steps == 5 and exp._hparams.schedule == "train"


def test_the_chiefs_checkpoint_saver_comes_after_the_log_and_stop_hooks(tmp_path):
    data_dir = str(tmp_path / "data")
    exp = make_experiment(str(tmp_path / "a"), data_dir, train_steps=5)
    hooks = exp.train_spec.hooks
    savers = [i for i, h in enumerate(hooks)
              if isinstance(h, tf.compat.v1.train.CheckpointSaverHook)]
    log_index = hooks.index(log_hook(exp))
    stop_index = next(i for i, h in enumerate(hooks)
                      if isinstance(h, experiment.StopOnSignalHook))
    assert len(savers) == 1 and savers[0] > max(log_index, stop_index)
    # A caller's own saver is the only one: the Estimator attaches its listeners to it.
    own = tf.compat.v1.train.CheckpointSaverHook(str(tmp_path / "b"), save_steps=2)
    exp = make_experiment(str(tmp_path / "b"), data_dir, train_steps=5,
                          additional_train_hooks=[own])
    assert [h for h in exp.train_spec.hooks
            if isinstance(h, tf.compat.v1.train.CheckpointSaverHook)] == [own]


def test_tf_config_roles(monkeypatch):
    cluster = {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster,
                                                "task": {"type": "worker", "index": 1}}))
    assert run_config.is_distributed() and not run_config.is_chief()
    assert run_config.num_training_tasks() == 3
    monkeypatch.setenv("TF_CONFIG", "{oops")
    with pytest.raises(errors.UserError, match="TF_CONFIG is not valid JSON"):
        run_config.tf_config()
    monkeypatch.delenv("TF_CONFIG")
    assert not run_config.is_distributed() and run_config.is_chief()


# ----------------------------------------------------------------------------- training
@pytest.fixture(scope="module")
def trained(data_dir, tmp_path_factory):
    """6 steps with checkpoints every 3, then one evaluation."""
    import logging as std_logging
    from absl import logging as absl_logging
    model_dir = str(tmp_path_factory.mktemp("run"))
    exp = make_experiment(model_dir, data_dir, train_steps=6)
    messages = []

    class Keep(std_logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    handler, logger = Keep(level=std_logging.INFO), absl_logging.get_absl_logger()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(std_logging.INFO)
    try:
        exp.train()
        metrics = exp.evaluate()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    exp.log_messages = messages
    return model_dir, exp, metrics


def test_long_stretches_say_what_they_are_doing(trained):
    """Graph building and session start-up took tens of seconds without a line (make demo)."""
    messages = trained[1].log_messages
    expected = ["train transformer: graph built; starting the session",
                "train transformer: session ready, training from step 0 (a line every",
                "Evaluation graph built; starting its session and restoring the checkpoint",
                "Evaluating the checkpoint of step 6 (2 batches)"]
    found = [next((i for i, m in enumerate(messages) if m.startswith(e)), None)
             for e in expected]
    assert None not in found and found == sorted(found), messages


def test_train_logs_tokens_and_checkpoints(trained):
    model_dir, exp, _ = trained
    summary = log_hook(exp).summary
    assert (summary["start_step"], summary["steps"], summary["replicas"]) == (0, 6, 1)
    assert summary["tokens"] > summary["examples"] > 0
    assert summary["final_loss"] > 0 and summary["tokens_per_sec"] > 0
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-6")
    state = tf.train.get_checkpoint_state(model_dir)
    assert [experiment.checkpoint_step(p) for p in state.all_model_checkpoint_paths] == [
        0, 3, 6]


def test_evaluate_reports_problem_metrics(trained):
    model_dir, exp, metrics = trained
    assert metrics["global_step"] == 6
    assert metrics["loss"] > 0
    assert 0.0 <= metrics[METRIC_PREFIX + "accuracy"] <= 1.0
    steps, values = experiment.read_eval_history(exp.eval_dir(), "loss")
    assert steps == [6] and values == [pytest.approx(metrics["loss"])]
    assert exp.eval_dir() == os.path.join(model_dir, "eval")
    with pytest.raises(errors.UserError, match="choose one of .*loss"):
        experiment.read_eval_history(exp.eval_dir(), "blue_score")


def test_rerun_resumes_from_latest_checkpoint(trained, data_dir):
    model_dir, _, _ = trained
    exp = make_experiment(model_dir, data_dir, train_steps=8)
    exp.train()
    summary = log_hook(exp).summary
    assert (summary["start_step"], summary["steps"]) == (6, 2)
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-8")


def test_early_stopping_ends_training_on_plateau(data_dir, tmp_path, monkeypatch):
    # Any change below 1e9 counts as no improvement: stop once two evaluations are 2 steps
    # apart (checkpoints and evaluations every 2 steps).
    exp = make_experiment(str(tmp_path), data_dir, train_steps=1000,
                          schedule="train_and_evaluate", checkpoint_steps=2,
                          eval_early_stopping_steps=2, eval_early_stopping_metric="loss",
                          eval_early_stopping_metric_delta=1e9)
    metrics = exp.train_and_evaluate()
    stopper = next(h for h in exp.train_spec.hooks
                   if isinstance(h, experiment.EarlyStoppingHook))
    assert stopper.stopped_at_step is not None and stopper.stopped_at_step < 20
    final_step = experiment.checkpoint_step(tf.train.latest_checkpoint(str(tmp_path)))
    assert final_step < 20
    assert metrics is not None and "loss" in metrics
    # The chief records the stop, so evaluators end after the final checkpoint instead of
    # waiting for step 1000 (tf.estimator's evaluator waited for it forever).
    assert eval_events.early_stop_step(str(tmp_path), 1000) == stopper.stopped_at_step

    def ends(run):
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(timeout=120)
        assert not thread.is_alive(), "the evaluator waited on after the run stopped early"

    follower = make_experiment(str(tmp_path), data_dir, train_steps=1000,
                               schedule="continuous_eval", eval_timeout_mins=60)
    ends(follower.continuous_eval)
    assert follower.last_eval_result["global_step"] == final_step
    # A cluster's evaluator task (TF_CONFIG), with the exporters after its evaluation.
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"chief": ["127.0.0.1:2222"], "ps": ["127.0.0.1:2223"]},
        "task": {"type": "evaluator", "index": 0}}))
    evaluator = make_experiment(str(tmp_path), data_dir, train_steps=1000,
                                schedule="train_and_evaluate", eval_timeout_mins=60,
                                eval_throttle_seconds=1)
    assert evaluator.estimator.config.task_type == "evaluator"
    ends(evaluator.train_and_evaluate)
    assert evaluator.last_eval_result["global_step"] == final_step


def test_tpu_estimator_trains_on_cpu(data_dir, tmp_path):
    exp = make_experiment(str(tmp_path), data_dir, train_steps=3, use_tpu_estimator=True)
    assert isinstance(exp.estimator, tf.compat.v1.estimator.tpu.TPUEstimator)
    exp.train()
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-3")
    assert log_hook(exp).summary["steps"] == 3


def test_estimator_is_created_without_the_params_warning(tmp_path):
    """Every trainer and decoder run used to warn "Estimator's model_fn ... includes params
    argument, but params are not passed to Estimator"."""
    import logging as std_logging
    records = []

    class Keep(std_logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler, logger = Keep(), tf.get_logger()
    logger.addHandler(handler)
    try:
        hparams = trainer_lib.create_hparams("transformer_tiny")
        config = run_config.create_run_config(model_name="transformer",
                                              model_dir=str(tmp_path))
        trainer_lib.create_estimator("transformer", hparams, config)
    finally:
        logger.removeHandler(handler)
    assert not [m for m in records if "params are not passed" in m], records


def test_experiment_test_trains_one_step_and_evaluates_one(data_dir, tmp_path):
    # T2T's T2TExperiment.test (its trainer_lib_test calls it): 1 train step, 1 eval step.
    model_dir = str(tmp_path / "run")
    metrics = make_experiment(model_dir, data_dir, train_steps=50).test()
    assert metrics["global_step"] == 1 and "loss" in metrics
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-1")
