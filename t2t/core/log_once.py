"""Details a process has logged once go to the debug level when they come again.

A model is built once per graph it runs in: on the native backend the train step and the
eval step, under an Estimator the train graph and one graph per evaluation, then the
decoding graph. Each build logged the same details ("Transforming feature 'inputs' with
symbol_modality_4_128.bottom", "Building model body", a 40-number "Length buckets" line).
`info_once` logs a message at INFO the first time its text comes in a process, and at
absl's verbosity 1 after that (`--v=1` or `--verbosity=1` on the programs,
`logging.set_verbosity(1)` in Python):

    from t2t.core.log_once import info_once

    info_once("Building model body")                 # I... t2t_model.py:361] Building model body
    info_once("Building model body")                 # only at --v=1
    info_once("Using optimizer %s", "adafactor")     # new text: INFO again

A different text (another modality, another batching scheme) is logged at INFO as it comes.
The line names the caller's file and line, as `logging.info` does.
"""
import threading

from absl import logging

_seen = set()
_seen_lock = threading.Lock()


def info_once(message, *args):
    """`logging.info(message, *args)` the first time this text comes in the process;
    `logging.vlog(1, ...)` after that."""
    text = message % args if args else message
    with _seen_lock:
        first = text not in _seen
        _seen.add(text)
    if first:
        logging.info("%s", text)
    else:
        logging.vlog(1, "%s", text)


# absl names the caller of `info_once` in the line, not this module.
logging.ABSLLogger.register_frame_to_skip(__file__, "info_once")
