"""t2t's ModeKeys: Estimator's strings, importable without TensorFlow."""
import subprocess
import sys

import pytest

from t2t.core.modes import ModeKeys


def test_mode_strings_are_estimators():
    tf = pytest.importorskip("tensorflow")
    if not hasattr(tf, "estimator"):
        pytest.skip("this TensorFlow has no tf.estimator")
    assert ModeKeys.all() == (tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL,
                              tf.estimator.ModeKeys.PREDICT)


def test_modes_import_without_tensorflow():
    code = ("import sys; from t2t.core.modes import ModeKeys; "
            "assert 'tensorflow' not in sys.modules; print(ModeKeys.PREDICT)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "infer"
