"""Distributed training: MirroredStrategy replicas, and a chief/worker/ps/evaluator cluster.

Both run in subprocesses: the replicas need CPU devices configured before TensorFlow starts,
and a cluster needs one process per task (each given its TF_CONFIG).
"""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf

from t2t.core import backend_choice

if not backend_choice.estimator_available():
    # The Estimator backend's own tests (its experiment, RunConfig and ps clusters);
    # tests/training/test_native.py covers the native backend.
    pytest.skip("needs tf.estimator (TensorFlow 2.15)", allow_module_level=True)

from t2t.training import experiment  # noqa: E402

from cluster_testing import free_ports, read_log  # noqa: E402

TRAINER = os.path.join(os.path.dirname(sys.executable), "t2t-trainer")
PROBLEM = "algorithmic_reverse_binary40_test"
TINY = "hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,batch_size=128"
TIMEOUT = 300


MIRRORED_SCRIPT = textwrap.dedent('''
    import json, sys
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    from t2t.training import experiment, trainer_lib
    data_dir, model_dir, overrides = sys.argv[1:4]
    hparams = trainer_lib.create_hparams("transformer_tiny", overrides, data_dir=data_dir,
                                         problem_name="{problem}")
    config = trainer_lib.create_run_config("transformer", model_dir=model_dir, num_gpus=2,
                                           save_checkpoints_steps=3)
    exp = trainer_lib.create_experiment(config, hparams, "transformer", "{problem}", data_dir,
                                        train_steps=3, eval_steps=1, schedule="train")
    exp.train()
    hook = [h for h in exp.train_spec.hooks if isinstance(h, experiment.TrainingLogHook)][0]
    print("RESULT " + json.dumps({{
        "replicas_in_sync": config.train_distribute.num_replicas_in_sync,
        "device_count": dict(config.session_config.device_count),
        "summary": hook.summary}}))
''').format(problem=PROBLEM)


def test_mirrored_strategy_on_two_cpu_replicas(data_dir, tmp_path):
    # Fixed batches of 4 examples per replica: one step must see 4 x 2 examples.
    overrides = TINY.replace("batch_size=128", "batch_size=4") + ",use_fixed_batch_size=true"
    proc = subprocess.run([sys.executable, "-c", MIRRORED_SCRIPT, data_dir, str(tmp_path),
                           overrides], capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")][-1]
    result = json.loads(line[len("RESULT "):])
    assert result["replicas_in_sync"] == 2
    assert result["device_count"] == {"CPU": 2}
    summary = result["summary"]
    assert (summary["steps"], summary["replicas"]) == (3, 2)
    assert summary["examples"] == 3 * 4 * 2
    assert summary["tokens"] > summary["examples"]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-3")




def _done_steps(log):
    match = re.search(r"train transformer done: (\d+) steps", log)
    return int(match.group(1)) if match else None


def test_chief_worker_ps_and_evaluator_train_one_model(data_dir, tmp_path):
    train_steps = 200
    model_dir = str(tmp_path / "run")
    chief_port, worker_port, ps_port = free_ports(3)
    cluster = {"chief": ["127.0.0.1:%d" % chief_port],
               "worker": ["127.0.0.1:%d" % worker_port],
               "ps": ["127.0.0.1:%d" % ps_port]}
    argv = [TRAINER, "--problem=" + PROBLEM, "--model=transformer",
            "--hparams_set=transformer_tiny", "--hparams=" + TINY, "--data_dir=" + data_dir,
            "--output_dir=" + model_dir, "--train_steps=%d" % train_steps, "--eval_steps=2",
            "--local_eval_frequency=50", "--log_step_count_steps=25",
            "--eval_throttle_seconds=1", "--schedule=train_and_evaluate"]
    procs, logs = {}, {}
    try:
        # The ps first: the others wait for it at session creation anyway.
        for role in ("ps", "chief", "worker", "evaluator"):
            env = dict(os.environ, TF_CONFIG=json.dumps(
                {"cluster": cluster, "task": {"type": role, "index": 0}}))
            logs[role] = open(tmp_path / ("%s.log" % role), "w+")
            procs[role] = subprocess.Popen(argv, env=env, stdout=logs[role],
                                           stderr=subprocess.STDOUT)
        for role in ("chief", "worker", "evaluator"):
            assert procs[role].wait(timeout=TIMEOUT) == 0, "%s failed:\n%s" % (
                role, read_log(logs[role])[-3000:])
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()  # the ps serves forever
        for proc in procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    chief_log, worker_log, eval_log = (read_log(logs[r])
                                       for r in ("chief", "worker", "evaluator"))
    for log in logs.values():
        log.close()

    final_step = experiment.checkpoint_step(tf.train.latest_checkpoint(model_dir))
    assert final_step >= train_steps
    chief_steps, worker_steps = _done_steps(chief_log), _done_steps(worker_log)
    # Both trained: each counts its own steps, which together cover the shared global step.
    assert worker_steps is not None and worker_steps >= 1, worker_log[-3000:]
    assert chief_steps is not None and chief_steps >= 1, chief_log[-3000:]
    assert chief_steps + worker_steps >= train_steps
    assert os.path.exists(os.path.join(model_dir, "hparams.json"))  # the chief wrote it

    # The global step each evaluation restored, not the checkpoint's name: the chief names a
    # checkpoint when its save begins, and the worker may advance the ps variables meanwhile.
    evaluated = [int(step) for step in re.findall(
        r"Evaluation of model\.ckpt-\d+ at global step (\d+)", eval_log)]
    assert evaluated and max(evaluated) >= train_steps, eval_log[-3000:]
    history_steps, _ = experiment.read_eval_history(os.path.join(model_dir, "eval"), "loss")
    assert max(history_steps) == max(evaluated)


