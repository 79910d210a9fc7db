"""Whether an evaluation may run under `eval_throttle_seconds`, and one line when it may not.

`continuous_train_and_eval` (both backends) evaluates after a checkpoint only when
`eval_throttle_seconds` (--eval_throttle_seconds, default 600) have passed since the
previous evaluation; a checkpoint saved sooner is not evaluated. That used to be silent, so
a run saving a checkpoint every minute seemed to have lost its evaluations. The first skip
of a run is logged, naming the flag and when the next evaluation can run; later skips are
logged at absl's verbosity 1 (--v=1):

    throttle = EvalThrottle(600)
    throttle.due()                # True: nothing evaluated yet
    throttle.record_evaluation()  # an evaluation runs now (12:00:00)
    throttle.due()                # False until 12:10:00
    throttle.skipped(2000)
    # I... Evaluation skipped at step 2000: --eval_throttle_seconds=600 allows one every
    # 600 s and the last was 35 s ago; the next runs at the first checkpoint saved after
    # 12:10:00, or when training ends (later skips are logged at --v=1)
"""
import time

from absl import logging


class EvalThrottle:
    """The time of the last evaluation and the rule `eval_throttle_seconds` sets.

    Args:
      throttle_secs: seconds from one evaluation (as `record_evaluation` marks it) to the
        next (0 or None: every checkpoint is evaluated).
      clock: monotonic seconds (`time.monotonic`); wall_clock: epoch seconds for the line.
    """

    def __init__(self, throttle_secs, clock=time.monotonic, wall_clock=time.time):
        self.throttle_secs = throttle_secs or 0
        self._clock = clock
        self._wall_clock = wall_clock
        self._last_evaluation = None
        self._skips_logged = 0

    def due(self):
        """Whether an evaluation may run now."""
        return (self._last_evaluation is None or
                self._clock() - self._last_evaluation >= self.throttle_secs)

    def record_evaluation(self):
        """An evaluation runs now: the next one waits `throttle_secs` from here."""
        self._last_evaluation = self._clock()

    def skipped(self, step):
        """Log that the checkpoint of `step` is not evaluated (INFO the first time)."""
        since = self._clock() - self._last_evaluation
        next_time = self._wall_clock() + max(0.0, self.throttle_secs - since)
        args = (step, self.throttle_secs, self.throttle_secs, since,
                time.strftime("%H:%M:%S", time.localtime(next_time)))
        if not self._skips_logged:
            logging.info(_SKIPPED + " (later skips are logged at --v=1)", *args)
        else:
            logging.vlog(1, _SKIPPED, *args)
        self._skips_logged += 1


_SKIPPED = ("Evaluation skipped at step %d: --eval_throttle_seconds=%d allows one every %d s "
            "and the last was %d s ago; the next runs at the first checkpoint saved after %s, "
            "or when training ends")
