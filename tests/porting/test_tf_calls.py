"""t2t-port's TensorFlow 1.x calls: t2t's rules, tf_upgrade_v2 where it imports (it does on
both stacks), and the ported calls running on the installed TensorFlow."""
import pytest

from t2t.porting import tf_calls

T2T_ERA = '''import os
import tensorflow as tf

flags = tf.flags  # T2T's flags
FLAGS = tf.app.flags.FLAGS


def main(path):
  tf.logging.set_verbosity(tf.logging.INFO)
  if not tf.gfile.Exists(path):
    tf.gfile.MakeDirs(path)
  with tf.gfile.GFile(os.path.join(path, "x.txt"), "w") as f:
    f.write("x")
  tf.logging.info("files: %s", tf.gfile.ListDirectory(path))
  return tf.gfile.ListDirectory(path), tf.app.run
'''


def test_t2t_rules_rename_the_common_calls_and_say_so():
    text, notes, way = tf_calls.port_tf_calls(T2T_ERA, how="t2t")
    assert way == "t2t"
    assert "flags = tf.compat.v1.flags  # T2T's flags\nFLAGS = tf.compat.v1.flags.FLAGS\n" in text
    assert "  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)\n" in text
    assert "  if not tf.io.gfile.exists(path):\n    tf.io.gfile.makedirs(path)\n" in text
    assert "tf.io.gfile.GFile(os.path.join" in text and "tf.compat.v1.app.run\n" in text
    assert (10, "renamed tf.gfile.Exists to tf.io.gfile.exists") in notes
    assert (4, "renamed tf.flags to tf.compat.v1.flags") in notes
    assert tf_calls.port_tf_calls(text, how="t2t")[0] == text  # porting twice = once


def test_contrib_is_named_with_what_to_use_instead():
    _, notes, _ = tf_calls.port_tf_calls(
        "import tensorflow.compat.v1 as tf\nh = tf.contrib.training.HParams(a=1)\n"
        "l = tf.contrib.layers.layer_norm\n", how="t2t")
    assert notes == [
        (2, "tf.contrib.training.HParams is not in TensorFlow 2: use t2t.utils.hparam.HParams"),
        (3, "tf.contrib.layers.layer_norm is not in TensorFlow 2 (tf.contrib is gone): "
            "replace it by hand")]


@pytest.mark.parametrize("text", [
    "import tensorflow.compat.v1 as tf\ntf.logging.info(tf.flags.FLAGS)\n",  # runs on TF 2
    "import os\nos.path.join('a')\n",
    "import numpy as tf\ntf.logging.info(1)\n",
])
def test_code_that_needs_nothing_is_left_alone(text):
    for how in ("t2t", "none"):
        assert tf_calls.port_tf_calls(text, how=how)[:2] == (text, [])


@pytest.mark.parametrize("how", ["t2t", "tf_upgrade_v2"])
def test_ported_calls_run_on_this_tensorflow(how, tmp_path):
    if how == "tf_upgrade_v2" and tf_calls.upgrader_for("tf_upgrade_v2") is None:
        pytest.skip("tf_upgrade_v2 does not import here")
    text, notes, way = tf_calls.port_tf_calls(T2T_ERA, how=how)
    assert way == how and "tf.gfile" not in text and "tf.logging" not in text
    namespace = {}
    exec(compile(text, "ported.py", "exec"), namespace)  # noqa: S102  (the ported module)
    listing, run = namespace["main"](str(tmp_path / "made"))
    assert listing == ["x.txt"] and (tmp_path / "made" / "x.txt").read_text() == "x"
    assert callable(run) and callable(namespace["flags"].DEFINE_string)
    assert namespace["FLAGS"]["logtostderr"].name == "logtostderr"  # absl's flags
    if how == "tf_upgrade_v2":
        assert (10, "tf_upgrade_v2: INFO: Renamed 'tf.gfile.Exists' to 'tf.io.gfile.exists'") \
            in notes
        # tf_upgrade_v2 calls tf.flags removed; t2t ports them to absl's (tf.compat.v1.flags).
        assert not [n for n in notes if "tf.flags" in n[1] and "ERROR" in n[1]]
