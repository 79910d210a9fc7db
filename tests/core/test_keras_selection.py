"""Importing t2t selects Keras 2 (tf-keras) on TensorFlow 2.16+, also after `import tensorflow`;
a process that already used tf.keras as Keras 3 gets one line naming the fix."""
import os
import subprocess
import sys

import pytest
import tensorflow as tf

NEW_TF = tuple(int(p) for p in tf.__version__.split(".")[:2]) >= (2, 16)


def run(code, **env):
    environ = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    environ.update(env, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environ, timeout=300)


def test_t2t_first_gives_keras_2_layers():
    result = run("import t2t, os, tensorflow as tf\n"
                 "print(os.environ.get('TF_USE_LEGACY_KERAS', '-'), "
                 "tf.keras.layers.LSTMCell.__module__)")
    assert result.returncode == 0, result.stderr[-2000:]
    flag, module = result.stdout.split()
    assert flag == ("1" if NEW_TF else "-")  # TF 2.15 is left as it is
    assert module.startswith("tf_keras." if NEW_TF else "keras."), module


def test_tensorflow_imported_first_still_gives_keras_2():
    result = run("import tensorflow as tf\nimport t2t\n"
                 "print(tf.keras.layers.LSTMCell.__module__)")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("tf_keras." if NEW_TF else "keras."), result.stdout


@pytest.mark.skipif(not NEW_TF, reason="TensorFlow 2.15's tf.keras is Keras 2 in any order")
def test_keras_3_already_in_use_is_one_clear_line():
    result = run("import tensorflow as tf\ntf.keras.layers\nimport t2t")
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last == ("t2t.KerasVersionError: t2t needs Keras 2 (tf-keras) but this process "
                    "already uses tf.keras as Keras 3; import t2t before the first use of "
                    "tf.keras, or set TF_USE_LEGACY_KERAS=1 in the environment"), last


@pytest.mark.skipif(not NEW_TF, reason="the variable concerns TensorFlow 2.16+")
def test_tensorflow_first_with_the_variable_set_works():
    result = run("import tensorflow as tf\ntf.keras.layers\nimport t2t\n"
                 "print(tf.keras.layers.LSTMCell.__module__)", TF_USE_LEGACY_KERAS="1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("tf_keras." if NEW_TF else "keras.")
