"""Stopping training with SIGINT or SIGTERM: a checkpoint at the current step, then exit.

Schedulers and preemptible machines stop jobs with SIGTERM (and, a grace period later,
SIGKILL); a terminal stops them with Ctrl-C (SIGINT). While a training loop runs inside
`stop_on_signals()`, either signal only records a request; the loop sees it after the step
in progress, saves a checkpoint at that step (the chief; other tasks of a cluster write
nothing) and raises `TrainingStopped`, whose exit code is the shell's for the signal
(128 + its number: 130 for SIGINT, 143 for SIGTERM), so a scheduler knows the job did not
finish and reruns it; the rerun resumes from that checkpoint.

    with stop_on_signals():
        for step in ...:
            if requested_signal():
                path = save(step)
                raise TrainingStopped(requested_signal(), step, path)
            train_one_step()
    # t2t-trainer then prints, and exits 143:
    # t2t-trainer: stopped by SIGTERM at step 1,234; saved /run/model.ckpt-1234: rerun the
    #   same command to resume

The first signal also puts back the operating system's default action for both signals,
so a second one ends the process at once (a save in progress is then lost, and the
checkpoints before it stay intact), even while Python waits in TensorFlow's C++ code.
Handlers can only be installed in the main thread; elsewhere the context does nothing.
"""
import contextlib
import signal
import threading

from absl import logging

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_state = {"installed": False, "signal": None, "noticed": False}


class TrainingStopped(Exception):
    """Training stopped by a signal after saving a checkpoint (`checkpoint_path`, None on a
    task that saves none). `from_other_task`: this task got no signal itself; another task
    of its cluster did and all of them stopped at the same step."""

    def __init__(self, signum, step=None, checkpoint_path=None, from_other_task=False):
        self.signum = signum
        self.step = step
        self.checkpoint_path = checkpoint_path
        self.from_other_task = from_other_task
        super().__init__(self.message())

    @property
    def exit_code(self):
        """128 + the signal's number, as a shell reports a process the signal ended."""
        return 128 + int(self.signum)

    def message(self):
        name = signal_name(self.signum)
        at = " at step {:,}".format(self.step) if self.step is not None else ""
        if self.from_other_task:
            what = "stopped%s: another task of the cluster got %s" % (at, name)
        else:
            what = "stopped by %s%s" % (name, at)
        if self.checkpoint_path:
            return "%s; saved %s: rerun the same command to resume" % (
                what, self.checkpoint_path)
        return "%s; this task writes no checkpoint (the chief saves them): rerun the same " \
               "command to resume" % what


def signal_name(signum):
    """"SIGTERM" for 15."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "signal %d" % signum


def requested_signal():
    """The first SIGINT/SIGTERM received inside `stop_on_signals()`, or None. Logs, the
    first time it returns one, what happens next."""
    signum = _state["signal"]
    if signum is not None and not _state["noticed"]:
        _state["noticed"] = True
        logging.warning("Received %s: saving a checkpoint at the current step, then stopping "
                        "(another SIGINT or SIGTERM stops at once, without it)",
                        signal_name(signum))
    return signum


def _record(signum, frame):
    del frame
    if _state["signal"] is None:
        _state["signal"] = signum
    for each in SIGNALS:  # the next one ends the process, whatever it is doing
        signal.signal(each, signal.SIG_DFL)


@contextlib.contextmanager
def stop_on_signals():
    """Inside: SIGINT and SIGTERM request a stop (`requested_signal`) instead of ending
    the process. Nested uses and threads other than the main one change nothing."""
    if _state["installed"] or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {each: signal.getsignal(each) for each in SIGNALS}
    _state.update(installed=True, signal=None, noticed=False)
    try:
        for each in SIGNALS:
            signal.signal(each, _record)
        yield
    finally:
        for each, handler in previous.items():
            # None: a handler not set from Python, which cannot be put back.
            signal.signal(each, signal.SIG_DFL if handler is None else handler)
        _state.update(installed=False, signal=None, noticed=False)
