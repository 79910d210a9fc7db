"""The native training backend: learning, Estimator's names and files, checkpoints that
cross between the backends, schedules, early stopping, MirroredStrategy, refusals.

One Estimator run (2 steps, where tf.estimator exists) is shared by the tests that
compare with it; every model is a 1-layer, 16-wide Transformer.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading

import pytest
import tensorflow as tf

from t2t.core import backend_choice
from t2t.core import errors
from t2t.training import backends, eval_events, run_config, runner, trainer_lib
from t2t.training.native import experiment as native_experiment
from t2t.training.native import functions as functions_lib

PROBLEM = "algorithmic_reverse_binary40_test"
TINY = "hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,batch_size=128"
TIMEOUT = 300
ACCURACY = "metrics-%s/targets/accuracy" % PROBLEM
needs_estimator = pytest.mark.skipif(not backend_choice.estimator_available(),
                                     reason="this TensorFlow has no tf.estimator")


def _specs(model_dir, data_dir, train_steps, schedule="train", overrides=TINY, **experiment):
    hparams = trainer_lib.create_hparams("transformer_tiny", overrides, data_dir=data_dir,
                                         problem_name=PROBLEM)
    run_spec = run_config.RunConfigSpec(
        model_dir=model_dir, save_checkpoints_steps=experiment.pop("checkpoint_steps", 100),
        keep_checkpoint_max=3, random_seed=1, log_step_count_steps=50)
    spec = trainer_lib.ExperimentSpec("transformer", PROBLEM, data_dir, train_steps=train_steps,
                                      eval_steps=4, schedule=schedule, **experiment)
    return run_spec, hparams, spec


def _native(model_dir, data_dir, train_steps, **kwargs):
    return native_experiment.native_experiment(*_specs(model_dir, data_dir, train_steps,
                                                       **kwargs))


def _estimator(model_dir, data_dir, train_steps, **kwargs):
    run_spec, hparams, spec = _specs(model_dir, data_dir, train_steps, **kwargs)
    return trainer_lib.experiment_from_spec(run_config.run_config_from_spec(run_spec),
                                            hparams, spec)


def _shapes(checkpoint_dir):
    return dict(tf.train.list_variables(checkpoint_dir))


def _count_traces(monkeypatch):
    """{step name: times traced}: tf.function runs a step's Python code only to trace it
    ("build": the forward pass that makes the variables before a replica function runs)."""
    traces = {"build": 0, "train": 0, "eval": 0}

    def counting(key, original):
        def step(self, features):     # the step's own signature: tf.function reads it
            traces[key] += 1
            return original(self, features)
        return step

    for key, name in (("build", "_build_graph"), ("train", "_replica_train_step"),
                      ("eval", "_eval_step")):
        monkeypatch.setattr(functions_lib.NativeModelFunctions, name,
                            counting(key, getattr(functions_lib.NativeModelFunctions, name)))
    return traces


@pytest.fixture(scope="module")
def estimator_run(data_dir, tmp_path_factory):
    """An Estimator run of 2 steps: its folder and its evaluation of model.ckpt-2."""
    if not backend_choice.estimator_available():
        pytest.skip("this TensorFlow has no tf.estimator")
    model_dir = str(tmp_path_factory.mktemp("estimator"))
    experiment = _estimator(model_dir, data_dir, 2)
    experiment.train()
    return model_dir, experiment.evaluate()


# ---------------------------------------------------------------------------- learning
def test_native_learns_with_estimators_files(data_dir, tmp_path, request):
    model_dir = str(tmp_path / "run")
    experiment = _native(model_dir, data_dir, 300, schedule="train_and_evaluate",
                         checkpoint_steps=100, min_eval_frequency=100)
    result = experiment.train_and_evaluate()

    evaluations = eval_events.read_eval_metrics(os.path.join(model_dir, "eval"))
    assert sorted(evaluations) == [100, 200, 300]
    assert set(evaluations[300]) >= {"loss", ACCURACY}
    assert evaluations[300]["loss"] < evaluations[100]["loss"] - 0.15
    # Still in transformer_tiny's learning-rate warmup: slow, but steadily better.
    assert evaluations[300][ACCURACY] > evaluations[100][ACCURACY] + 0.03
    assert result["global_step"] == 300
    assert abs(result["loss"] - evaluations[300]["loss"]) < 1e-6

    state = tf.train.get_checkpoint_state(model_dir)
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "model.ckpt-100", "model.ckpt-200", "model.ckpt-300"]   # keep_checkpoint_max=3
    assert int(tf.train.load_checkpoint(model_dir).get_tensor("global_step")) == 300
    summary = experiment.train_summary
    assert summary["steps"] == 300 and summary["tokens"] > 0
    assert summary["final_loss"] < 1.5
    train_tags = set()
    for path in tf.io.gfile.glob(os.path.join(model_dir, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            train_tags.update(value.tag for value in event.summary.value)
    assert train_tags >= {"loss", "learning_rate", "global_step/sec"}

    if backend_choice.estimator_available():
        # Every variable, optimizer slot and the global step, named and shaped as the
        # Estimator's checkpoint has them.
        estimator_dir, _ = request.getfixturevalue("estimator_run")
        assert _shapes(model_dir) == _shapes(estimator_dir)
    else:
        assert "transformer/body/encoder/layer_0/ffn/conv1/kernel/Adam_1" in _shapes(model_dir)


# ---------------------------------------------------------------------------- checkpoints
@needs_estimator
def test_checkpoints_cross_between_backends(estimator_run, data_dir, tmp_path):
    estimator_dir, estimator_eval = estimator_run
    model_dir = str(tmp_path / "run")
    shutil.copytree(estimator_dir, model_dir)

    # The Estimator's model.ckpt-2, evaluated natively: the same loss and metrics.
    native = _native(model_dir, data_dir, 4)
    native_eval = native.evaluate()
    assert native_eval["global_step"] == 2
    for name in ("loss", ACCURACY):
        assert native_eval[name] == pytest.approx(estimator_eval[name], abs=1e-5)

    # Training resumes from it natively; the Estimator reads the native model.ckpt-4.
    summary = native.train()
    assert (summary["start_step"], summary["final_step"]) == (2, 4)
    native_eval = native.evaluate()
    estimator_eval = _estimator(model_dir, data_dir, 4).evaluate()
    assert estimator_eval["global_step"] == native_eval["global_step"] == 4
    for name in ("loss", ACCURACY):
        assert native_eval[name] == pytest.approx(estimator_eval[name], abs=1e-5)


# ---------------------------------------------------------------------------- early stopping
def test_early_stopping_reads_eval_events(data_dir, tmp_path, monkeypatch):
    traces = _count_traces(monkeypatch)
    model_dir = str(tmp_path / "run")
    # Any change under 100 is a plateau: training stops at the first check with an
    # evaluation 5 steps older than the newest (step 10: evaluations at 5 and 10).
    experiment = _native(model_dir, data_dir, 1000, schedule="train_and_evaluate",
                         checkpoint_steps=5, min_eval_frequency=5, eval_early_stopping_steps=5,
                         eval_early_stopping_metric_delta=100.0)
    experiment.train_and_evaluate()
    assert experiment.stopped_early_at_step == 10
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-10")
    assert sorted(eval_events.read_eval_metrics(os.path.join(model_dir, "eval"))) == [5, 10]
    # One trace of each step for the whole run (every extra trace costs seconds at startup);
    # on one device the train step's trace makes the variables, with no forward pass first.
    assert traces == {"build": 0, "train": 1, "eval": 1}
    # The stop is recorded, so an evaluator following the run stops after the final
    # checkpoint instead of waiting --eval_timeout_mins (60 here) for step 1000.
    assert eval_events.early_stop_step(model_dir, train_steps=1000) == 10
    evaluator = _native(model_dir, data_dir, 1000, schedule="continuous_eval",
                        eval_timeout_mins=60)
    thread = threading.Thread(target=evaluator.continuous_eval, daemon=True)
    thread.start()
    thread.join(timeout=TIMEOUT)
    assert not thread.is_alive(), "the evaluator waited on after the run stopped early"
    assert evaluator.last_eval_result["global_step"] == 10
    # A run resumed with another --train_steps is not the one that stopped early: its
    # evaluator waits for new checkpoints (here until its 0.05-minute timeout).
    assert eval_events.early_stop_step(model_dir, train_steps=2000) is None
    longer = _native(model_dir, data_dir, 2000, schedule="continuous_eval",
                     eval_timeout_mins=0.05)
    assert longer.continuous_eval()["global_step"] == 10
    # Training again clears the record (the chief writes a new one if it stops again).
    _native(model_dir, data_dir, 12).train()
    assert eval_events.early_stop_step(model_dir, train_steps=12) is None
    assert not os.path.exists(os.path.join(model_dir, eval_events.EARLY_STOP_FILE))


# ---------------------------------------------------------------------------- runner
def test_runner_saves_the_job_and_resumes_it(data_dir, tmp_path, monkeypatch):
    traces = _count_traces(monkeypatch)
    model_dir = str(tmp_path / "run")
    job = runner.TrainingJob(
        model_name="transformer", hparams_set="transformer_tiny", output_dir=model_dir,
        problem_name=PROBLEM, data_dir=data_dir, hparams_overrides=TINY, backend="native",
        train_steps=3, eval_steps=2, run_config={"save_checkpoints_steps": 2},
        experiment={"schedule": "train"})
    prepared = runner.prepare(job)
    assert (prepared.backend, prepared.resuming) == ("native", False)
    runner.run(prepared)
    # --schedule=train traces no eval step (nor reads the eval data).
    assert traces == {"build": 0, "train": 1, "eval": 0}
    assert runner.TrainingJob.load(model_dir) == job
    with open(os.path.join(model_dir, "hparams.json")) as hparams_file:
        assert json.load(hparams_file)["hidden_size"] == 16

    again = runner.prepare(job.__class__(**dict(job.__dict__, train_steps=5)))
    assert again.resuming
    runner.run(again)
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-5")
    with pytest.raises(errors.UserError, match="num_hidden_layers 1 -> 2"):
        runner.prepare(job.__class__(**dict(job.__dict__, hparams_overrides=TINY.replace(
            "num_hidden_layers=1", "num_hidden_layers=2"))))


# ---------------------------------------------------------------------------- refusals
def test_backend_choice_and_refusals(monkeypatch):
    monkeypatch.setattr(backend_choice, "estimator_available", lambda: False)
    assert backend_choice.resolve_backend("auto") == "native"
    with pytest.raises(errors.UserError, match="--backend=estimator needs tf.estimator, "
                       "which TensorFlow .* does not have; use --backend=native"):
        backend_choice.resolve_backend("estimator")
    monkeypatch.setattr(backend_choice, "estimator_available", lambda: True)
    assert backend_choice.resolve_backend("auto") == "estimator"
    with pytest.raises(errors.UserError, match="--use_tpu needs the Estimator backend"):
        backends.check_native_supported(use_tpu=True)
    with pytest.raises(errors.UserError, match=r"parameter servers \(a 'ps' task"):
        backends.check_native_supported(cluster={"chief": ["h:1"], "ps": ["h:2"]})
    backends.check_native_supported(cluster={"chief": ["h:1"], "worker": ["h:2"]})


# ---------------------------------------------------------------------------- MirroredStrategy
MIRRORED_SCRIPT = textwrap.dedent('''
    import json, sys
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    from t2t.training import run_config, trainer_lib
    from t2t.training.native import experiment
    data_dir, model_dir, overrides = sys.argv[1:4]
    hparams = trainer_lib.create_hparams("transformer_tiny", overrides, data_dir=data_dir,
                                         problem_name="{problem}")
    run_spec = run_config.RunConfigSpec(model_dir=model_dir, num_gpus=2,
                                        save_checkpoints_steps=3)
    spec = trainer_lib.ExperimentSpec("transformer", "{problem}", data_dir, train_steps=3,
                                      eval_steps=1, schedule="train")
    exp = experiment.native_experiment(run_spec, hparams, spec)
    summary = exp.train()
    print("RESULT " + json.dumps({{"replicas": exp.placement.num_replicas,
                                  "summary": summary, "eval": exp.evaluate()}}))
''').format(problem=PROBLEM)


def test_mirrored_strategy_on_two_cpu_replicas(data_dir, tmp_path):
    # Fixed batches of 4 examples per replica: one step must see 4 x 2 examples.
    overrides = TINY.replace("batch_size=128", "batch_size=4") + ",use_fixed_batch_size=true"
    proc = subprocess.run([sys.executable, "-c", MIRRORED_SCRIPT, data_dir, str(tmp_path),
                           overrides], capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1]
    result = json.loads(line[len("RESULT "):])
    assert result["replicas"] == 2
    assert result["summary"]["steps"] == 3 and result["summary"]["examples"] == 3 * 2 * 4
    assert result["eval"]["global_step"] == 3
    names = _shapes(str(tmp_path))
    assert names["global_step"] == []
    assert "transformer/body/encoder/layer_0/ffn/conv1/kernel/Adam" in names
