"""The native backend's cluster: a chief and a worker training one model synchronously
(MultiWorkerMirroredStrategy from TF_CONFIG) and an evaluator following its checkpoints.

The cluster is three `t2t-trainer --backend=native` processes, each given its TF_CONFIG as
tf.estimator users write it: the cluster holds the training tasks (chief, worker) and the
evaluator is a task type outside it ("the evaluator is not part of the training cluster").
Without dropout, two workers of one replica each train exactly the model that one process
with two replicas (--worker_gpu=2 on two CPU devices) trains: same batches, same weights.

In-process, with the placement given: a chief in a cluster leaves evaluation to the
evaluator task (tf.estimator's rule), and the evaluator evaluates each checkpoint once.
"""
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import tensorflow as tf

from t2t.training import eval_events, run_config, trainer_lib
from t2t.training.native import experiment as native_experiment
from t2t.training.native import strategies

from cluster_testing import free_ports, read_log

TRAINER = os.path.join(os.path.dirname(sys.executable), "t2t-trainer")
PROBLEM = "algorithmic_reverse_binary40_test"
# No dropout: the cluster's weights can then be compared with one process's.
TINY = ("hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,batch_size=128,"
        "layer_prepostprocess_dropout=0.0,attention_dropout=0.0,relu_dropout=0.0")
TIMEOUT = 480      # for all processes: the machine may be loaded (quiet: about 1 min)
TRAIN_STEPS = 60
ROLES = ("chief", "worker", "evaluator")
STEP_LINE = re.compile(r"train transformer: step (\d+), loss ([\d.]+) \(mean of (\d+) steps\)")
DONE_LINE = re.compile(r"train transformer done: ([\d,]+) steps, ([\d,]+) tokens")






def _done(log):
    """(steps, tokens) of the log's summary line (None without one)."""
    match = DONE_LINE.search(log)
    return match and tuple(int(group.replace(",", "")) for group in match.groups())


def _trainer_argv(data_dir, model_dir, schedule):
    return [TRAINER, "--backend=native", "--problem=" + PROBLEM, "--model=transformer",
            "--hparams_set=transformer_tiny", "--hparams=" + TINY, "--data_dir=" + data_dir,
            "--output_dir=" + model_dir, "--train_steps=%d" % TRAIN_STEPS, "--eval_steps=2",
            "--local_eval_frequency=20", "--log_step_count_steps=10", "--random_seed=1",
            "--eval_throttle_seconds=1", "--schedule=" + schedule]


def _event_file_pids(folder):
    """The process ids in the names of `folder`'s event files (".v2" files, one per
    writer: events.out.tfevents.<time>.<host>.<pid>.<n>.v2)."""
    return {int(name.split(".")[-3]) for name in os.listdir(folder)
            if name.startswith("events.out.tfevents.")}


def test_chief_worker_and_evaluator_train_one_model(data_dir, tmp_path):
    model_dir = str(tmp_path / "run")
    chief_port, worker_port = free_ports(2)
    cluster = {"chief": ["127.0.0.1:%d" % chief_port],
               "worker": ["127.0.0.1:%d" % worker_port]}
    local_dir = str(tmp_path / "local")
    argv = _trainer_argv(data_dir, model_dir, "train_and_evaluate")
    procs, logs = {}, {}
    try:
        for role in ROLES + ("local",):
            if role == "local":
                # Meanwhile, for comparison: one process with two replicas on two CPUs.
                env = {name: value for name, value in os.environ.items()
                       if name != "TF_CONFIG"}
                argv = _trainer_argv(data_dir, local_dir, "train") + ["--worker_gpu=2"]
            else:
                env = dict(os.environ, TF_CONFIG=json.dumps(
                    {"cluster": cluster, "task": {"type": role, "index": 0}}))
            logs[role] = open(tmp_path / ("%s.log" % role), "w+")
            procs[role] = subprocess.Popen(argv, env=env, stdout=logs[role],
                                           stderr=subprocess.STDOUT)
        deadline = time.monotonic() + TIMEOUT
        for role in ROLES + ("local",):
            try:
                code = procs[role].wait(timeout=max(deadline - time.monotonic(), 1))
            except subprocess.TimeoutExpired:
                code = "no exit in %d s" % TIMEOUT
            assert code == 0, "%s: %s\n%s" % (role, code, "\n".join(
                "--- %s:\n%s" % (r, read_log(logs[r])[-2500:]) for r in logs))
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    chief_log, worker_log, eval_log, local_log = (read_log(logs[role]) for role in logs)
    for log in logs.values():
        log.close()

    # Both training tasks are the two replicas of one MultiWorkerMirroredStrategy.
    for log in (chief_log, worker_log):
        assert "MultiWorkerMirroredStrategy: 2 replicas" in log, log[-3000:]

    # The chief alone writes the run's files; the final checkpoint is at train_steps.
    assert os.path.exists(os.path.join(model_dir, "hparams.json"))
    assert "Saved checkpoint at step %d" % TRAIN_STEPS in chief_log
    for log in (worker_log, eval_log):
        assert "Saved checkpoint" not in log
    assert _event_file_pids(model_dir) == {procs["chief"].pid}
    final = tf.train.latest_checkpoint(model_dir)
    assert eval_events.checkpoint_step(final) == TRAIN_STEPS
    assert int(tf.train.load_checkpoint(final).get_tensor("global_step")) == TRAIN_STEPS

    # Synchronous: every step is a step of both tasks, and both log the mean loss of the two
    # replicas (one model) at the same global steps.
    chief_done = _done(chief_log)
    assert chief_done is not None and chief_done[0] == TRAIN_STEPS, chief_log[-3000:]
    assert _done(worker_log) == chief_done
    chief_lines = STEP_LINE.findall(chief_log)
    assert [int(step) for step, _, _ in chief_lines] == list(range(10, TRAIN_STEPS + 1, 10))
    assert STEP_LINE.findall(worker_log) == chief_lines
    losses = [float(loss) for _, loss, _ in chief_lines]
    assert losses[-1] < losses[0], losses

    # The evaluator evaluated the final checkpoint once, wrote eval/ events and stopped;
    # the chief (in a cluster, as tf.estimator's) evaluated nothing.
    assert "Evaluation of" not in chief_log
    assert "evaluations are the evaluator task's" in chief_log
    assert len(re.findall(r"Evaluation of model\.ckpt-%d at global step %d" % (
        TRAIN_STEPS, TRAIN_STEPS), eval_log)) == 1, eval_log[-3000:]
    assert "Evaluated the final checkpoint (step %d)" % TRAIN_STEPS in eval_log
    eval_dir = os.path.join(model_dir, "eval")
    assert procs["evaluator"].pid in _event_file_pids(eval_dir)
    evaluations = eval_events.read_eval_metrics(eval_dir)
    assert TRAIN_STEPS in evaluations and evaluations[TRAIN_STEPS]["loss"] > 0

    # One process with two replicas trains the same model: the workers read disjoint
    # batches (each its share of the seeded input, not both all of it), in that order.
    assert "MirroredStrategy on /cpu:0, /cpu:1" in local_log
    assert _done(local_log) == chief_done
    assert STEP_LINE.findall(local_log) == chief_lines
    cluster_values = tf.train.load_checkpoint(final)
    local_values = tf.train.load_checkpoint(tf.train.latest_checkpoint(local_dir))
    names = sorted(local_values.get_variable_to_shape_map())
    assert names == sorted(cluster_values.get_variable_to_shape_map())
    for name in names:
        np.testing.assert_allclose(cluster_values.get_tensor(name), local_values.get_tensor(name),
                                   rtol=1e-5, atol=1e-7, err_msg=name)


def _experiment(data_dir, model_dir, placement, train_steps=4):
    hparams = trainer_lib.create_hparams("transformer_tiny", TINY, data_dir=data_dir,
                                         problem_name=PROBLEM)
    run_spec = run_config.RunConfigSpec(model_dir=model_dir, save_checkpoints_steps=2,
                                        random_seed=1)
    spec = trainer_lib.ExperimentSpec("transformer", PROBLEM, data_dir, train_steps=train_steps,
                                      eval_steps=1, eval_throttle_seconds=0)
    return native_experiment.native_experiment(run_spec, hparams, spec, placement=placement)


def test_evaluation_is_the_evaluators_and_once_per_checkpoint(data_dir, tmp_path, monkeypatch):
    model_dir = str(tmp_path)
    default = tf.distribute.get_strategy()
    written = []
    write = eval_events.write_eval_summary
    monkeypatch.setattr(eval_events, "write_eval_summary", lambda eval_dir, metrics, step, **kw: (
        written.append(step), write(eval_dir, metrics, step, **kw)))

    # A chief in a TF_CONFIG cluster leaves every evaluation to the evaluator task.
    chief = strategies.Placement(default, is_chief=True, in_cluster=True)
    _experiment(data_dir, model_dir, chief).train_and_evaluate()
    assert tf.train.latest_checkpoint(model_dir).endswith("model.ckpt-4")
    assert written == []

    # The evaluator told of model.ckpt-2 while model.ckpt-4 is the newest evaluates 4, the
    # final one, and stops there: not 4 again when told of it next.
    announced = []

    def next_checkpoint(folder, timeout_mins, **kwargs):
        del timeout_mins, kwargs
        for step in (2, 4):
            announced.append(step)
            yield os.path.join(folder, "model.ckpt-%d" % step)

    monkeypatch.setattr(eval_events, "next_checkpoint", next_checkpoint)
    evaluator = strategies.Placement(default, is_chief=False, is_evaluator=True,
                                     in_cluster=True)
    metrics = _experiment(data_dir, model_dir, evaluator).continuous_eval()
    assert metrics["global_step"] == 4
    assert (written, announced) == ([4], [2])
