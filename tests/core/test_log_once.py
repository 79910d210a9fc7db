"""info_once: INFO the first time a text comes in the process, debug (absl's --v=1) after."""
import logging as std_logging
import os

from absl import logging

from t2t.core.log_once import info_once


def test_a_repeated_text_goes_to_debug_and_names_the_caller(caplog):
    previous = logging.get_verbosity()
    logging.set_verbosity(logging.DEBUG)   # the repeats are emitted, at DEBUG
    try:
        with caplog.at_level(std_logging.DEBUG, logger="absl"):
            info_once("Transforming feature %r with %s.bottom", "inputs", "test_log_once_1")
            info_once("Transforming feature %r with %s.bottom", "inputs", "test_log_once_1")
            info_once("Transforming feature %r with %s.bottom", "inputs", "test_log_once_2")
    finally:
        logging.set_verbosity(previous)
    records = [r for r in caplog.records if "test_log_once_" in r.getMessage()]
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (std_logging.INFO, "Transforming feature 'inputs' with test_log_once_1.bottom"),
        (std_logging.DEBUG, "Transforming feature 'inputs' with test_log_once_1.bottom"),
        (std_logging.INFO, "Transforming feature 'inputs' with test_log_once_2.bottom")]
    assert {os.path.basename(r.pathname) for r in records} == {"test_log_once.py"}
