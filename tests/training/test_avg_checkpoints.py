"""Checkpoint averaging: avg_checkpoints and the t2t-avg-all program."""
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import errors
from t2t.training import avg_checkpoints

STEPS = (100, 200, 300, 400)


def weights_at(step):
    """The variables written at `step`: float32, float64 and int values that differ by step."""
    return {
        "model/w": (np.arange(6).reshape(2, 3) + step / 100.0).astype(np.float32),
        "model/b": np.array([step * 0.5, -step], np.float64),
        "model/count": np.array(step // 100, np.int32),
    }


def write_checkpoints(model_dir):
    """Checkpoints model.ckpt-<s> for STEPS (plus Adam-like float slots), as training does."""
    graph = tf.Graph()
    with graph.as_default():
        values = dict(weights_at(0), global_step=np.array(0, np.int64))
        variables = {name: tf.compat.v1.Variable(value, name=name)
                     for name, value in values.items()}
        placeholders = {name: tf.compat.v1.placeholder(var.dtype, var.shape)
                        for name, var in variables.items()}
        assign = [variables[name].assign(ph) for name, ph in placeholders.items()]
        saver = tf.compat.v1.train.Saver(variables, max_to_keep=10)
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for step in STEPS:
                values = dict(weights_at(step), global_step=np.array(step, np.int64))
                sess.run(assign, {placeholders[n]: v for n, v in values.items()})
                saver.save(sess, os.path.join(model_dir, "model.ckpt"), global_step=step)
    with open(os.path.join(model_dir, "flags.txt"), "w") as f:
        f.write("--model=transformer\n")


def read_checkpoint(path):
    reader = tf.train.load_checkpoint(path)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


@pytest.fixture()
def model_dir(tmp_path):
    path = tmp_path / "train"
    path.mkdir()
    write_checkpoints(str(path))
    return str(path)


def expected_mean(steps):
    values = [weights_at(s) for s in steps]
    return {"model/w": np.mean([v["model/w"] for v in values], axis=0),
            "model/b": np.mean([v["model/b"] for v in values], axis=0),
            "model/count": values[-1]["model/count"]}


def assert_checkpoint_is_mean(path, steps):
    values = read_checkpoint(path)
    expected = expected_mean(steps)
    assert values["model/w"].dtype == np.float32 and values["model/b"].dtype == np.float64
    np.testing.assert_allclose(values["model/w"], expected["model/w"], rtol=1e-6)
    np.testing.assert_allclose(values["model/b"], expected["model/b"], rtol=1e-12)
    assert values["model/count"].dtype == np.int32 and values["model/count"] == expected[
        "model/count"]
    assert values["global_step"] == steps[-1]


def test_last_checkpoints_and_average(model_dir, tmp_path):
    paths = avg_checkpoints.last_checkpoints(model_dir, 3)
    assert [avg_checkpoints.checkpoint_step(p) for p in paths] == [200, 300, 400]
    out = avg_checkpoints.average_checkpoints(paths, str(tmp_path / "avg" / "averaged.ckpt"))
    assert_checkpoint_is_mean(out, [200, 300, 400])
    assert tf.train.latest_checkpoint(str(tmp_path / "avg")) == out
    with pytest.raises(errors.UserError, match="is not a checkpoint"):
        avg_checkpoints.average_checkpoints([str(tmp_path / "nope")], str(tmp_path / "x"))


def test_average_all_slides_a_window(model_dir, tmp_path):
    out_dir = str(tmp_path / "avg")
    written = avg_checkpoints.average_all(model_dir, out_dir, n=2)
    assert [os.path.basename(p) for p in written] == [
        "model.ckpt-200", "model.ckpt-300", "model.ckpt-400"]
    for path, step in zip(written, (200, 300, 400)):
        assert_checkpoint_is_mean(path, [step - 100, step])
    state = tf.train.get_checkpoint_state(out_dir)
    assert list(state.all_model_checkpoint_paths) == written
    assert state.model_checkpoint_path == written[-1]
    assert open(os.path.join(out_dir, "flags.txt")).read() == "--model=transformer\n"
    assert avg_checkpoints.average_all(model_dir, str(tmp_path / "late"), n=2,
                                       min_steps=250) == [
        os.path.join(str(tmp_path / "late"), "model.ckpt-400")]


def test_mismatched_checkpoints_are_user_errors(model_dir, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    with tf.Graph().as_default():
        var = tf.compat.v1.Variable(np.zeros([2, 3], np.float32), name="model/w")
        saver = tf.compat.v1.train.Saver({"model/w": var})
        with tf.compat.v1.Session() as sess:
            sess.run(var.initializer)
            path = saver.save(sess, str(other / "model.ckpt"), global_step=500)
    first = avg_checkpoints.last_checkpoints(model_dir, 1)
    with pytest.raises(errors.UserError, match="lacks variables"):
        avg_checkpoints.average_checkpoints(first + [path], str(tmp_path / "x.ckpt"))


def run_avg_all(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    program = os.path.join(os.path.dirname(sys.executable), "t2t-avg-all")
    return subprocess.run([program] + list(args), capture_output=True, text=True, env=env,
                          timeout=300)


def test_console_script(model_dir, tmp_path):
    out_dir = str(tmp_path / "avg")
    result = run_avg_all("--model_dir=%s" % model_dir, "--output_dir=%s" % out_dir, "--n=4")
    assert result.returncode == 0, result.stderr[-2000:]
    newest = os.path.join(out_dir, "model.ckpt-400")
    assert result.stdout.strip() == ("t2t-avg-all: wrote 1 averaged checkpoints; the newest "
                                     "is %s" % newest)
    assert_checkpoint_is_mean(newest, list(STEPS))
    result = run_avg_all("--model_dir=%s" % model_dir, "--output_dir=%s" % out_dir, "--n=9")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1:] == [
        "t2t-avg-all: error: %s has 4 checkpoints (100, 200, 300, 400) (steps >= 0), fewer "
        "than --n=9; lower --n or wait for more (--wait_minutes)" % model_dir]


def test_a_truncated_checkpoint_is_named_before_anything_is_written(model_dir, tmp_path):
    broken = os.path.join(model_dir, "model.ckpt-300")
    with open(broken + ".data-00000-of-00001", "r+b") as data:
        data.truncate(10)
    out_dir = str(tmp_path / "avg")
    message = ("checkpoint %s cannot be read: model.ckpt-300.data-00000-of-00001 holds 10 "
               "bytes, its index lists 52 (the file is truncated); intact checkpoints in %s: "
               "model.ckpt-400, model.ckpt-200, model.ckpt-100; move %s.* out of the folder "
               "to average the others" % (broken, model_dir, broken))
    with pytest.raises(errors.UserError) as raised:
        avg_checkpoints.average_all(model_dir, out_dir, n=2)
    assert str(raised.value) == message
    assert not os.path.exists(out_dir)
    with pytest.raises(errors.UserError, match="model.ckpt-300 cannot be read"):
        avg_checkpoints.average_checkpoints(avg_checkpoints.last_checkpoints(model_dir, 3),
                                            str(tmp_path / "x.ckpt"))
    result = run_avg_all("--model_dir=%s" % model_dir, "--output_dir=%s" % out_dir, "--n=2")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1:] == ["t2t-avg-all: error: " + message]
