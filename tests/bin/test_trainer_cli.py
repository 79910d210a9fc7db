"""t2t-trainer: argument folding, one-line errors, and a run killed with SIGKILL that resumes
until SIGTERM stops it (a checkpoint at the current step, exit 143 and one line saying so).

The error runs are independent subprocesses, started together by one module fixture (each
imports TensorFlow, which dominates their time); each test then checks its own.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf
from absl import flags
from absl.testing import flagsaver

from t2t.bin import t2t_trainer
from t2t.core import backend_choice
from t2t.core import errors
from t2t.training import eval_events, trainer_lib

from cluster_testing import wait_for_text

TRAINER = os.path.join(os.path.dirname(sys.executable), "t2t-trainer")
PROBLEM = "algorithmic_reverse_binary40_test"
TINY = "hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,batch_size=128"
BASE_ARGS = ["--problem=" + PROBLEM, "--model=transformer", "--hparams_set=transformer_tiny"]
TIMEOUT = 300

USR_INIT = '''
from t2t.models import transformer
from t2t.utils import registry


@registry.register_hparams
def usr_tiny_transformer():
    hparams = transformer.transformer_tiny()
    hparams.hidden_size = 16
    return hparams
'''


# ----------------------------------------------------------------------------- argv folding
def test_split_hp_args_folds_pairs_into_overrides():
    rest, overrides = t2t_trainer.split_hp_args(
        ["t2t-trainer", "--model=m", "--hp_dropout", "0.3", "--hparams=a=1", "--hp_x=[1,2]"])
    assert rest == ["t2t-trainer", "--model=m", "--hparams=a=1"]
    assert overrides == "dropout=0.3,x=[1,2]"
    assert t2t_trainer.split_hp_args(["t2t-trainer"]) == (["t2t-trainer"], "")
    with pytest.raises(errors.UserError, match="--hp_dropout needs a value"):
        t2t_trainer.split_hp_args(["t2t-trainer", "--hp_dropout"])


def test_set_hparams_from_args_appends_to_the_hparams_flag():
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()
    with flagsaver.flagsaver(hparams="a=1"):
        t2t_trainer.set_hparams_from_args(["--hp_b", "2", "--hp_c=x"])
        assert flags.FLAGS.hparams == "a=1,b=2,c=x"


def test_join_overrides():
    assert t2t_trainer.join_overrides("a=1,", "", ",b=2") == "a=1,b=2"
    assert t2t_trainer.join_overrides("", "") == ""


# ----------------------------------------------------------------------------- errors
def _conflicting_run_dir(path, with_checkpoint=True):
    hparams = trainer_lib.create_hparams("transformer_tiny", "num_hidden_layers=1")
    trainer_lib.save_metadata(str(path), hparams, flags_text="--model=transformer\n")
    if with_checkpoint:  # what makes the folder a run to resume
        (path / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-1"\n')
        (path / "model.ckpt-1.index").write_text("")
    return str(path)


ERROR_CASES = {
    "unknown_model": (["--model=transformerr"], "transformerr never registered with registry models"),
    "unknown_hparams_set": (["--hparams_set=transformer_tinyy"],
                            "transformer_tinyy never registered with registry hparams"),
    "bad_hparams": (["--hparams=num_hidden_layers=two"], "num_hidden_layers"),
    "unknown_hp_arg": (["--hp_hiden_size", "3"],
                       "unknown hyperparameter hiden_size; did you mean hidden_size"),
    "missing_output_dir": (["--output_dir="], "--output_dir is required"),
    "unknown_flag": (["--train_stepz=3"], "train_stepz"),
    "conflict_on_resume": (["--hparams=num_hidden_layers=2"],
                           "num_hidden_layers 1 -> 2"),
    "other_model_on_resume": (["--model=lstm_seq2seq"],
                              "--model=transformer, not lstm_seq2seq"),
    # Metadata without a checkpoint (a first run that never trained) is not a run to
    # resume: other hparams and another model go on to the next check (the data).
    "stale_metadata_is_a_new_run": (["--hparams=num_hidden_layers=2", "--model=lstm_seq2seq"],
                                    "no data files match"),
    "tpu_on_native": (["--backend=native", "--use_tpu"],
                      "--use_tpu needs the Estimator backend (--backend=estimator"),
    "ps_on_native": (["--backend=native"], "parameter servers (a 'ps' task in TF_CONFIG) need "
                                           "the Estimator backend"),
    "unknown_backend": (["--backend=keras"],
                        "--backend=keras is not a backend; use one of auto, estimator, native"),
}
ENVIRONMENTS = {"ps_on_native": {"TF_CONFIG": json.dumps({
    "cluster": {"chief": ["localhost:1"], "ps": ["localhost:2"]},
    "task": {"type": "chief", "index": 0}})}}


@pytest.fixture(scope="module")
def error_runs(tmp_path_factory):
    resume_dir = _conflicting_run_dir(tmp_path_factory.mktemp("resume"))
    stale_dir = _conflicting_run_dir(tmp_path_factory.mktemp("stale"), with_checkpoint=False)
    procs = {}
    for name, (args, _) in ERROR_CASES.items():
        out_dir = resume_dir if "resume" in name else str(tmp_path_factory.mktemp(name))
        out_dir = stale_dir if "stale" in name else out_dir
        argv = [TRAINER] + BASE_ARGS + ["--output_dir=" + out_dir, "--data_dir=" + out_dir,
                                         "--train_steps=1"] + args
        procs[name] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, env=dict(os.environ,
                                                           **ENVIRONMENTS.get(name, {})))
    results = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
        results[name] = (proc.returncode, stdout, stderr)
    return results


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_user_errors_exit_2_with_one_line(error_runs, case):
    returncode, _, stderr = error_runs[case]
    expected = ERROR_CASES[case][1]
    assert returncode == 2, stderr
    assert "Traceback" not in stderr
    error_lines = [line for line in stderr.splitlines() if "error:" in line]
    assert len(error_lines) == 1, stderr
    assert error_lines[0].startswith("t2t-trainer: error: ")
    assert expected in error_lines[0]


def test_registry_help_lists_usr_dir_hparams(tmp_path):
    usr_dir = tmp_path / "my_usr_dir"
    usr_dir.mkdir()
    (usr_dir / "__init__.py").write_text(USR_INIT)
    proc = subprocess.run([TRAINER, "--t2t_usr_dir=%s" % usr_dir, "--registry_help"],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert "usr_tiny_transformer" in proc.stdout
    assert "algorithmic_reverse_binary40_test" in proc.stdout


# ----------------------------------------------------------------------- SIGKILL, resume, SIGTERM
def _listed_checkpoints(model_dir):
    state = tf.train.get_checkpoint_state(model_dir)
    return list(state.all_model_checkpoint_paths) if state else []


def _assert_loadable(paths):
    for path in paths:
        reader = tf.train.load_checkpoint(path)
        assert int(reader.get_tensor("global_step")) == eval_events.checkpoint_step(path)
        assert any(name.startswith("transformer/") for name in
                   reader.get_variable_to_shape_map())


def _wait_for_step(model_dir, proc, step, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        steps = [eval_events.checkpoint_step(p) for p in _listed_checkpoints(model_dir)]
        if steps and max(steps) >= step:
            return
        if proc.poll() is not None:
            raise AssertionError("the trainer exited early with code %s" % proc.returncode)
        time.sleep(0.2)
    raise AssertionError("no checkpoint at step >= %d within %d s" % (step, timeout))


def test_sigkill_then_rerun_resumes_and_sigterm_saves_the_current_step(tmp_path):
    # The killed run trains on the native backend; the rerun on the default one (the
    # Estimator where tf.estimator exists): a native run resumes after kill -9, and its
    # checkpoint trains on with the Estimator.
    data_dir, model_dir = str(tmp_path / "data"), str(tmp_path / "run")
    common = [TRAINER] + BASE_ARGS + [
        "--data_dir=" + data_dir, "--output_dir=" + model_dir, "--hparams=" + TINY,
        "--local_eval_frequency=4", "--keep_checkpoint_max=3", "--schedule=train",
        "--log_step_count_steps=4", "--random_seed=5"]
    first_log = tmp_path / "first.log"
    with open(first_log, "w") as log:
        proc = subprocess.Popen(common + ["--generate_data", "--tmp_dir=%s" % (tmp_path / "tmp"),
                                          "--train_steps=100000", "--backend=native"],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_for_step(model_dir, proc, 8, TIMEOUT)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert sorted(f for f in os.listdir(data_dir) if not f.startswith(".")) == [
        PROBLEM + "-dev-00000-of-00001", PROBLEM + "-train-00000-of-00001"]
    assert os.path.exists(os.path.join(model_dir, "hparams.json"))
    assert "--generate_data" in open(os.path.join(model_dir, "flags.txt")).read()
    assert "Training backend: native (--backend=native" in first_log.read_text()

    killed_at = _listed_checkpoints(model_dir)
    assert 1 <= len(killed_at) <= 3  # --keep_checkpoint_max
    _assert_loadable(killed_at)
    last_step = max(eval_events.checkpoint_step(p) for p in killed_at)

    # The rerun restores hparams.json; the one override it gives agrees with it. It compiles
    # with XLA: the checkpoint of a run without XLA resumes under it (same variables). Once
    # it trains, SIGTERM (to its pid alone) stops it with a checkpoint at the current step.
    rerun_log = tmp_path / "rerun.log"
    with open(rerun_log, "w") as log:
        rerun = subprocess.Popen(common + ["--train_steps=100000", "--hparams=",
                                           "--hp_hidden_size", "16", "--xla_compile"],
                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_for_text(str(rerun_log), "train transformer: step", rerun, TIMEOUT)
            os.kill(rerun.pid, signal.SIGTERM)
            rerun.wait(timeout=TIMEOUT)
        finally:
            if rerun.poll() is None:
                rerun.kill()
            rerun.wait(timeout=60)
    log = rerun_log.read_text()
    assert rerun.returncode == 128 + signal.SIGTERM, log[-3000:]
    assert "Traceback" not in log
    if backend_choice.estimator_available():
        assert "Compiling the model function with XLA" in log
    resumed = re.search(r"resuming at global step (\d+)", log)
    assert resumed and int(resumed.group(1)) == last_step, log[-3000:]
    assert re.search(r"train transformer: step \d+, loss [\d.]+ \(mean of \d+ steps\), "
                     r"[\d.]+ steps/s, [\d,]+ tokens/s", log)
    assert ("Received SIGTERM: saving a checkpoint at the current step, then stopping "
            "(another SIGINT or SIGTERM stops at once, without it)") in log
    after = _listed_checkpoints(model_dir)
    stopped_at = eval_events.checkpoint_step(after[-1])
    done = re.search(r"train transformer done: (\d+) steps", log)
    assert done and int(done.group(1)) == stopped_at - last_step > 0
    assert log.strip().splitlines()[-1] == (
        "t2t-trainer: stopped by SIGTERM at step {:,}; saved {}: rerun the same command to "
        "resume".format(stopped_at, after[-1]))
    # The killed run's checkpoints, then the rerun's (--keep_checkpoint_max of them).
    assert len(after) <= 3 and after == sorted(after, key=eval_events.checkpoint_step)
    assert all(p in killed_at or eval_events.checkpoint_step(p) > last_step for p in after)
    _assert_loadable(after)


@pytest.mark.skipif(not backend_choice.estimator_available(), reason="needs tf.estimator")
def test_create_run_config_reads_the_flags(tmp_path):
    # T2T's t2t_trainer.create_run_config(hp, output_dir=None), for code built on its flags.
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()
    hp = trainer_lib.create_hparams("transformer_tiny")
    with flagsaver.flagsaver(model="transformer", output_dir=str(tmp_path / "out"),
                             local_eval_frequency=7, keep_checkpoint_max=3, worker_gpu=0,
                             random_seed=5):
        config = t2t_trainer.create_run_config(hp)
        other = t2t_trainer.create_run_config(hp, output_dir=str(tmp_path / "other"))
    assert config.model_dir == str(tmp_path / "out") and other.model_dir.endswith("other")
    assert (config.save_checkpoints_steps, config.keep_checkpoint_max) == (7, 3)
    assert config.tf_random_seed == 5 and config.train_distribute is None
    with flagsaver.flagsaver(output_dir=""):
        with pytest.raises(errors.UserError, match="--output_dir is required"):
            t2t_trainer.create_run_config(hp)
