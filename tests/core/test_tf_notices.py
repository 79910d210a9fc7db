"""tf_notices: TensorFlow's C++ start-up lines hidden by `import t2t` unless the user set
TF_CPP_MIN_LOG_LEVEL; its deprecation notices not printed while t2t's calls run."""
import logging as std_logging
import os
import re
import subprocess
import sys

import tensorflow as tf
from tensorflow.python.util import deprecation

from t2t.core import tf_notices


class _Keep(std_logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _notices(call):
    handler, logger = _Keep(), tf.get_logger()
    logger.addHandler(handler)
    try:
        call()
    finally:
        logger.removeHandler(handler)
    return [m for m in handler.messages if "Instructions for updating" in m]


def _deprecated():
    return deprecation.deprecated(None, "Use something else.")(lambda: 3)


def test_notices_are_silenced_inside_and_shown_outside(monkeypatch):
    # A program run in-process earlier (t2t.bin.cli) may have turned TF's notices off.
    monkeypatch.setattr(deprecation, "_PRINT_DEPRECATION_WARNINGS", True)
    quiet = _deprecated()
    assert _notices(lambda: tf_notices.quiet_deprecations(quiet)()) == []
    loud = _deprecated()
    assert len(_notices(loud)) == 1   # the user's own calls still warn


def test_generators_are_silenced_while_iterated():
    inner = _deprecated()

    @tf_notices.quiet_deprecations
    def numbers():
        yield inner()
        yield inner()

    assert _notices(lambda: list(numbers())) == []


# A line of TensorFlow's C++ logging: 2.16+'s absl format, 2.15's own, absl's notice.
NATIVE_LINE = re.compile(r"WARNING: All log messages before absl::InitializeLog|"
                         r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] |"
                         r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] ")
USER_PROGRAM = ("import os, t2t, tensorflow as tf; tf.constant(1) + 1; "
                "print(os.environ['TF_CPP_MIN_LOG_LEVEL'])")


def _run_user_program(**env):
    environ = {k: v for k, v in os.environ.items() if k != tf_notices.LOG_LEVEL_VARIABLE}
    environ.update(env)
    result = subprocess.run([sys.executable, "-c", USER_PROGRAM], capture_output=True,
                            text=True, env=environ, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip(), [line for line in result.stderr.splitlines()
                                   if NATIVE_LINE.match(line)]


def test_import_t2t_hides_the_start_up_lines():
    level, native_lines = _run_user_program()
    assert level == "3"
    assert native_lines == []


def test_a_level_the_user_set_is_respected():
    level, native_lines = _run_user_program(TF_CPP_MIN_LOG_LEVEL="0")
    assert level == "0"
    assert native_lines   # cudart_stub, cuInit, cpu_feature_guard, or a GPU's device lines


def test_native_noise_lines_and_nothing_else(capfd):
    noise = ["WARNING: All log messages before absl::InitializeLog() is called are written to "
             "STDERR",
             "I0000 00:00:1795748666.960172   16230 cudart_stub.cc:31] Could not find cuda "
             "drivers on your machine, GPU will not be used.",
             "E0000 00:00:1795748666.960172   16230 cuda_dnn.cc:8310] Unable to register "
             "cuDNN factory"]
    kept = ["t2t-decoder: error: missing --model", "Traceback (most recent call last):",
            "WARNING: something else", "I0000 is how a line of mine begins"]
    with tf_notices.native_stderr_filtered():
        os.write(2, "".join(line + "\n" for line in noise + kept).encode())
    assert capfd.readouterr().err.splitlines() == kept
