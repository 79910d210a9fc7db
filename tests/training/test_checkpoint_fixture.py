"""A checkpoint the Estimator backend wrote on TensorFlow 2.15, on whichever stack runs this.

tests/fixtures/estimator_tf215_checkpoint/ (made by tests/fixtures/make_estimator_checkpoint.py
with t2t-trainer --backend=estimator on Python 3.11 / TF 2.15) holds a tiny Transformer's
model.ckpt-N, its hparams.json, a few inputs and their greedy decodes. Here, through the
programs a user runs:
(a) t2t-decoder decodes the inputs to exactly the recorded decodes: on the default backend
    (native on TF 2.16+, the Estimator on 2.15) and, on 2.15, on the native one too;
(b) t2t-trainer resumes from it on the default backend: 2 more steps from the restored
    weights, optimizer slots and step, a checkpoint with the same names, that decodes;
(c) on TF 2.15, a native checkpoint (the fixture resumed with --backend=native) decodes
    identically with --backend=estimator and --backend=native.
    (test_native.py::test_checkpoints_cross_between_backends evaluates a native checkpoint
    with the Estimator, in process; this decodes one with t2t-decoder.)

The programs run as subprocesses, started together by one module fixture (each one's time
is mostly importing TensorFlow and building its graph); each test checks its own.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import backend_choice
from t2t.datagen import datagen
from t2t.training import eval_events

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "fixtures", "estimator_tf215_checkpoint")
BIN = os.path.dirname(sys.executable)
TIMEOUT = 300
MORE_STEPS = 2
HAS_ESTIMATOR = backend_choice.estimator_available()
needs_estimator = pytest.mark.skipif(not HAS_ESTIMATOR,
                                     reason="this TensorFlow has no tf.estimator")

with open(os.path.join(FIXTURE, "fixture.json")) as _f:
    MANIFEST = json.load(_f)
STEP = MANIFEST["step"]
NAMES = ["--problem=" + MANIFEST["problem"], "--model=" + MANIFEST["model"],
         "--hparams_set=" + MANIFEST["hparams_set"]]


def read_lines(path):
    with open(path) as f:
        return f.read().splitlines()


INPUTS = read_lines(os.path.join(FIXTURE, "inputs.txt"))
DECODES = read_lines(os.path.join(FIXTURE, "decodes.txt"))


class Runs:
    """Programs running side by side, each logging into its own file."""

    def __init__(self, root):
        self.root = root
        self.procs = {}
        self.results = {}

    def copy_fixture(self, name):
        path = os.path.join(self.root, name)
        shutil.copytree(FIXTURE, path)
        return path

    def start(self, name, program, *args):
        log = open(os.path.join(self.root, name + ".log"), "w")
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        self.procs[name] = (subprocess.Popen([os.path.join(BIN, program)] + list(args),
                                             stdout=log, stderr=subprocess.STDOUT, env=env),
                            log)

    def decode(self, name, model_dir, backend=None):
        out = os.path.join(self.root, name + ".decodes")
        self.start(name, "t2t-decoder", *NAMES, "--output_dir=" + model_dir,
                   "--decode_hparams=" + MANIFEST["decode_hparams"],
                   "--decode_from_file=" + os.path.join(FIXTURE, "inputs.txt"),
                   "--decode_to_file=" + out, *(["--backend=" + backend] if backend else []))

    def resume(self, name, data_dir, backend=None):
        model_dir = self.copy_fixture(name)
        self.start(name, "t2t-trainer", *NAMES, "--data_dir=" + data_dir,
                   "--output_dir=" + model_dir, "--train_steps=%d" % (STEP + MORE_STEPS),
                   "--schedule=train", "--random_seed=%d" % MANIFEST["random_seed"],
                   *(["--backend=" + backend] if backend else []))
        return model_dir

    def wait(self, name):
        if name not in self.results:
            proc, log = self.procs[name]
            try:
                proc.wait(timeout=TIMEOUT)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                log.close()
            with open(log.name) as f:
                self.results[name] = (proc.returncode, f.read())
        return self.results[name]

    def decodes(self, name):
        returncode, log = self.wait(name)
        assert returncode == 0, log[-3000:]
        return read_lines(os.path.join(self.root, name + ".decodes"))

    def wait_all(self):
        for name in list(self.procs):
            self.wait(name)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    runs = Runs(str(tmp_path_factory.mktemp("fixture_runs")))
    try:
        runs.decode("decode_default", runs.copy_fixture("decode_default"))
        if HAS_ESTIMATOR:
            runs.decode("decode_native", runs.copy_fixture("decode_native"), "native")
        # The fixture's training data (t2t-datagen --random_seed=1 writes the same bytes).
        data_dir = os.path.join(runs.root, "data")
        datagen.generate_problems([MANIFEST["problem"]], data_dir,
                                  os.path.join(runs.root, "tmp"),
                                  random_seed=MANIFEST["random_seed"], num_concurrent_processes=1)
        runs.resumed_dir = runs.resume("resume_default", data_dir)
        if HAS_ESTIMATOR:
            runs.native_dir = runs.resume("resume_native", data_dir, "native")
        if runs.wait("resume_default")[0] == 0:
            runs.decode("decode_resumed", runs.resumed_dir)
        if HAS_ESTIMATOR and runs.wait("resume_native")[0] == 0:
            for backend in ("estimator", "native"):
                runs.decode("decode_native_ckpt_" + backend, runs.native_dir, backend)
        yield runs
    finally:
        for proc, _ in runs.procs.values():
            if proc.poll() is None:
                proc.kill()
        runs.wait_all()


def test_the_fixture_is_tiny_and_complete():
    names = sorted(os.listdir(FIXTURE))
    assert names == sorted(["checkpoint", "decodes.txt", "fixture.json", "hparams.json",
                            "inputs.txt", "model.ckpt-%d.data-00000-of-00001" % STEP,
                            "model.ckpt-%d.index" % STEP])
    assert sum(os.path.getsize(os.path.join(FIXTURE, n)) for n in names) < 100 * 1024
    assert read_lines(os.path.join(FIXTURE, "checkpoint"))[0] == \
        'model_checkpoint_path: "model.ckpt-%d"' % STEP            # relative: movable
    assert MANIFEST["backend"] == "estimator" and MANIFEST["tensorflow"].startswith("2.15.")
    assert len(DECODES) == len(INPUTS) and all(DECODES)


# ----------------------------------------------------------------------------- (a) decodes
@pytest.mark.parametrize("run", ["decode_default", "decode_native"])
def test_decodes_the_recorded_inputs_exactly(runs, run):
    if run == "decode_native" and not HAS_ESTIMATOR:
        pytest.skip("the default backend is the native one here")
    assert runs.decodes(run) == DECODES


# ----------------------------------------------------------------------------- (b) resume
def assert_resumed_from_fixture(model_dir, log):
    """model_dir's newest checkpoint is 2 steps on from the fixture's, from its values."""
    resumed = re.search(r"resuming at global step (\d+)", log)
    assert resumed and int(resumed.group(1)) == STEP, log[-3000:]
    latest = tf.train.latest_checkpoint(model_dir)
    assert eval_events.checkpoint_step(latest) == STEP + MORE_STEPS
    before, after = tf.train.load_checkpoint(FIXTURE), tf.train.load_checkpoint(latest)
    assert int(after.get_tensor("global_step")) == STEP + MORE_STEPS
    # The same variables and optimizer slots, named and shaped as in the fixture.
    assert dict(tf.train.list_variables(latest)) == dict(tf.train.list_variables(FIXTURE))

    # Adam's state went on from the fixture's: beta2_power is beta2^(step+1) (0.011 at
    # 1500, 0.991 in a fresh run), and every second-moment slot decays from its value.
    with open(os.path.join(FIXTURE, "hparams.json")) as f:
        beta2 = json.load(f)["optimizer_adam_beta2"]
    assert after.get_tensor("beta2_power") == pytest.approx(
        before.get_tensor("beta2_power") * beta2 ** MORE_STEPS, rel=1e-5)
    names = sorted(before.get_variable_to_shape_map())
    for name in (n for n in names if n.endswith("/Adam_1")):
        assert np.all(after.get_tensor(name) >= before.get_tensor(name) * beta2 ** MORE_STEPS
                      * (1 - 1e-5)), name
    # The weights moved, a little: Adam steps each by about the learning rate (0.02).
    weights = [n for n in names if n.startswith("transformer/") and "/Adam" not in n
               and before.get_tensor(n).size]
    moves = {n: float(np.max(np.abs(after.get_tensor(n) - before.get_tensor(n))))
             for n in weights}
    assert 0 < max(moves.values()) < 0.1, moves
    assert sum(move > 0 for move in moves.values()) > len(weights) // 2, moves
    # And the model is the trained one: its loss goes on near the fixture's last (an
    # untrained model starts near ln 4 = 1.39 on this 4-symbol vocabulary).
    loss = re.search(r"train transformer done: .*?([\d.]+) final loss", log)
    assert loss and float(loss.group(1)) < MANIFEST["final_loss"] + 0.4, log[-3000:]


def test_training_resumes_from_the_fixture(runs):
    returncode, log = runs.wait("resume_default")
    assert returncode == 0, log[-3000:]
    assert "Training backend: %s (--backend=auto" % backend_choice.resolve_backend("auto") in log
    assert "Restored hparam hidden_size: 128 -> 16" in log   # from the fixture's hparams.json
    assert_resumed_from_fixture(runs.resumed_dir, log)
    decodes = runs.decodes("decode_resumed")
    assert len(decodes) == len(INPUTS) and all(decodes)


# ----------------------------------------------------------------------------- (c) native ckpt
@needs_estimator
def test_a_native_checkpoint_decodes_identically_on_both_backends(runs):
    returncode, log = runs.wait("resume_native")
    assert returncode == 0, log[-3000:]
    assert "Training backend: native (--backend=native" in log
    assert_resumed_from_fixture(runs.native_dir, log)
    estimator = runs.decodes("decode_native_ckpt_estimator")
    native = runs.decodes("decode_native_ckpt_native")
    assert len(native) == len(INPUTS) and all(native)
    assert estimator == native
