"""t2t-trainer --hparams_range: an Optuna study of real training runs, killed and resumed.

One study of 4 short trials (learning_rate and hidden_size on a tiny algorithmic problem,
2 at a time) is killed with SIGKILL after 2 trials finished, then the same command is run
again: finished trials are kept, the interrupted one is retried in its own folder, and
the study ends with 4 trials and a best configuration better than the worst.
"""
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import optuna
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.tuning import autotune

TRAINER = os.path.join(os.path.dirname(sys.executable), "t2t-trainer")
PROBLEM = "algorithmic_reverse_binary40_test"
OBJECTIVE = "metrics-%s/neg_log_perplexity" % PROBLEM
TIMEOUT = 600

USR_DIR = '''
from t2t.core import registry


@registry.register_ranged_hparams
def tiny_lr_hidden(rhp):
    # Legacy schedule without decay: Adam's rate is 0.002 * learning_rate.
    rhp.set_float("learning_rate", 0.01, 100.0, scale=rhp.LOG_SCALE)
    rhp.set_discrete("hidden_size", [8, 32])
'''


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("data"))
    registry.problem(PROBLEM).generate_data(path, None)
    return path


@pytest.fixture(scope="module")
def usr_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tune_usr")
    (path / "__init__.py").write_text(USR_DIR)
    return str(path)


def study_command(data_dir, usr_dir, output_dir, *extra):
    return [TRAINER, "--problem=" + PROBLEM, "--model=transformer",
            "--hparams_set=transformer_tiny",
            "--hparams=filter_size=32,num_hidden_layers=1,num_heads=2,batch_size=64,"
            "learning_rate_schedule=legacy,learning_rate_decay_scheme=none,"
            "learning_rate_warmup_steps=1",
            "--data_dir=" + data_dir, "--output_dir=" + output_dir, "--t2t_usr_dir=" + usr_dir,
            "--train_steps=20", "--eval_steps=1", "--local_eval_frequency=10",
            "--random_seed=3", "--hparams_range=tiny_lr_hidden",
            "--autotune_objective=" + OBJECTIVE, "--autotune_max_trials=4",
            "--autotune_parallel_trials=2"] + list(extra)


def _env():
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")


def load(output_dir):
    return optuna.load_study(
        study_name="%s-transformer-transformer_tiny-tiny_lr_hidden" % PROBLEM,
        storage="sqlite:///" + os.path.join(output_dir, "autotune.db"))


def trial_states(path):
    """[(state, has its hparams)] of each trial in an optuna SQLite file, read read-only
    ([] before it exists)."""
    if not os.path.exists(path):
        return []
    try:
        with contextlib.closing(sqlite3.connect("file:%s?mode=ro" % path, uri=True,
                                                timeout=1)) as db:
            return [(state, params > 0) for state, params in db.execute(
                "SELECT t.state, COUNT(p.param_id) FROM trials t "
                "LEFT JOIN trial_params p ON p.trial_id = t.trial_id GROUP BY t.trial_id")]
    except sqlite3.OperationalError:   # tables not created yet, or locked for a moment
        return []


def finished(study):
    return {t.number: t for t in study.trials if t.state.name in ("COMPLETE", "PRUNED")}


def test_a_killed_study_resumes_and_finds_a_better_configuration(data_dir, usr_dir, tmp_path):
    output_dir = str(tmp_path / "search")
    command = study_command(data_dir, usr_dir, output_dir)
    lines = []
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, env=_env())
    reader = threading.Thread(target=lambda: lines.extend(first.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + TIMEOUT
    try:
        # Kill once the study holds 2 ended trials (finished or pruned) and a running one
        # whose hparams are stored (a trial killed before that has none to run again with).
        # The study's database, not the log: a trial's line comes before its state is
        # stored, and which trials get pruned depends on the order parallel trials report.
        # Read-only: opening it with optuna would create its tables while the study does.
        while time.monotonic() < deadline and first.poll() is None:
            states = trial_states(os.path.join(output_dir, "autotune.db"))
            if (sum(state in ("COMPLETE", "PRUNED") for state, _ in states) >= 2 and
                    ("RUNNING", True) in states):
                break
            time.sleep(0.1)
        assert first.poll() is None, "".join(lines)
        os.kill(first.pid, signal.SIGKILL)
    finally:
        if first.poll() is None:
            first.kill()
        first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL

    before = load(output_dir)
    kept = {n: (t.state.name, t.value) for n, t in finished(before).items()}
    interrupted = [t.number for t in before.trials if t.state.name == "RUNNING"]
    assert 2 <= len(kept) < 4 and interrupted, (kept, interrupted)

    rerun = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT,
                           env=_env())
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    after = load(output_dir)
    done = finished(after)
    assert len(done) == 4
    # Finished trials are kept as they were.
    assert {n: (done[n].state.name, done[n].value) for n in kept} == kept
    # Each interrupted trial ran again in its own folder, resuming its checkpoints.
    for number in interrupted:
        retries = [t for t in done.values() if t.user_attrs.get("retry_of") == number]
        assert len(retries) == 1, number
        # The suggestions stored before the kill are the retry's (a trial killed between
        # two suggestions has only the first: the retry suggests the rest anew).
        stored = after.trials[number].params
        assert stored.items() <= retries[0].params.items(), (stored, retries[0].params)
        assert retries[0].user_attrs["trial_dir"].endswith("trial_%d" % number)
    # Each trial is a training run with its own hparams.json.
    for trial in done.values():
        trial_dir = trial.user_attrs["trial_dir"]
        hparams = open(os.path.join(trial_dir, "hparams.json")).read()
        assert '"hidden_size": %d' % trial.params["hidden_size"] in hparams
        assert tf.train.latest_checkpoint(trial_dir)
    # The best beats the worst, and the table says which it is.
    complete = [t for t in done.values() if t.state.name == "COMPLETE"]
    values = [t.value if t.value is not None else
              t.intermediate_values[max(t.intermediate_values)] for t in done.values()]
    best = max(complete, key=lambda t: t.value)
    assert best.value > min(values)
    table = rerun.stdout.splitlines()
    assert table[-1] == "best: trial %d, %s %.4f: %s" % (best.number, OBJECTIVE, best.value,
                                                        best.user_attrs["hparams"])
    header = table.index("trial  state     objective  step    hparams")
    assert len(table) - header - 2 == len(after.trials)


def test_study_errors_are_one_line(data_dir, usr_dir, tmp_path):
    cases = {
        "unknown range": (["--hparams_range=tiny_lr_hiden"], "tiny_lr_hiden never "
                          "registered with registry ranged_hparams; closest registered "
                          "names: tiny_lr_hidden"),
        "no objective": (["--autotune_objective="], "--autotune_objective is required"),
        "nothing to search": (["--hparams=hidden_size=8,learning_rate=1.0"],
                              "leaves nothing to search"),
        # Every trial fails: the error names the tags the evaluations do hold.
        "wrong objective": (["--autotune_objective=metrics-%s/bleu" % PROBLEM,
                             "--autotune_max_trials=1", "--train_steps=2",
                             "--local_eval_frequency=2"],
                            "no trial completed; trial 0: no evaluation of metrics-%s/bleu"
                            % PROBLEM),
    }
    procs = {name: subprocess.Popen(
        study_command(data_dir, usr_dir, str(tmp_path / name.replace(" ", "_"))) + args,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        for name, (args, _) in cases.items()}
    for name, proc in procs.items():
        _, stderr = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 2, (name, stderr[-2000:])
        assert "Traceback" not in stderr
        errors = [line for line in stderr.splitlines() if "error:" in line]
        assert len(errors) == 1 and cases[name][1] in errors[0], (name, stderr[-2000:])
        if name == "wrong objective":
            assert "give --autotune_objective one of loss, metrics-%s/targets/accuracy" % (
                PROBLEM) in errors[0]


def test_read_objective_finds_the_tag_with_or_without_targets(tmp_path):
    eval_dir = tmp_path / "eval"
    with tf.Graph().as_default():
        writer = tf.compat.v1.summary.FileWriter(str(eval_dir))
        for step, value in ((10, 0.5), (20, 0.75)):
            summary = tf.compat.v1.Summary(value=[
                tf.compat.v1.Summary.Value(tag="metrics-p/targets/accuracy",
                                           simple_value=value),
                tf.compat.v1.Summary.Value(tag="loss", simple_value=1 - value)])
            writer.add_summary(summary, step)
        writer.close()
    assert autotune.read_objective(str(tmp_path), "metrics-p/accuracy") == {10: 0.5, 20: 0.75}
    assert autotune.read_objective(str(tmp_path), "loss") == {10: 0.5, 20: 0.25}
    assert autotune.read_objective(str(tmp_path), "metrics-p/bleu") == {}
    assert autotune.eval_tags(str(tmp_path)) == ["loss", "metrics-p/targets/accuracy"]


def test_results_table():
    results = [autotune.TrialResult(0, "COMPLETE", -1.5, 20, "hidden_size=8"),
               autotune.TrialResult(1, "PRUNED", -2.0, 10, "hidden_size=32"),
               autotune.TrialResult(2, "FAIL", None, None, "hidden_size=8"),
               autotune.TrialResult(3, "COMPLETE", -1.25, 20, "hidden_size=32", retry_of=2)]
    assert autotune.results_table(results, "loss", maximize=True).splitlines() == [
        "trial  state     objective  step    hparams",
        "0      COMPLETE  -1.5000    20      hidden_size=8",
        "1      PRUNED    -2.0000    10      hidden_size=32",
        "2      FAIL      -          -       hidden_size=8",
        "3(2)   COMPLETE  -1.2500    20      hidden_size=32",
        "best: trial 3, loss -1.2500: hidden_size=32"]
    assert autotune.best_result(results, maximize=False).number == 0


def test_a_trial_killed_before_its_first_heartbeat_is_retried(tmp_path, monkeypatch):
    # Optuna skips RUNNING trials without a heartbeat when it fails stale ones; a process
    # killed between creating a trial and its first beat leaves one such trial behind.
    monkeypatch.setattr(autotune, "GRACE_SECONDS", 1)
    monkeypatch.setattr(autotune, "HEARTBEAT_SECONDS", 1)
    spec = autotune.StudySpec(output_dir=str(tmp_path), ranges="tiny", objective="loss",
                              study_name="heartbeat")
    study = autotune.create_study(spec)
    orphan = study.ask({"hidden_size": optuna.distributions.CategoricalDistribution([8, 32])})
    assert study.trials[0].state.name == "RUNNING"

    autotune._wait_out_stale_trials(optuna, autotune.create_study(spec))

    trials = autotune.create_study(spec).trials
    assert [t.state.name for t in trials] == ["FAIL", "WAITING"]
    assert trials[1].user_attrs["retry_of"] == orphan.number
    retry = autotune.create_study(spec).ask()
    assert retry.number == 1
    assert retry.suggest_categorical("hidden_size", [8, 32]) == orphan.params["hidden_size"]
