"""quiet_deprecations: TF's deprecation notices are not printed while t2t's calls run."""
import logging as std_logging

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
