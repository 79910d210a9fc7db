"""When training saves a checkpoint: every N steps or every S seconds, whichever comes first.

Step-based checkpoints (`--local_eval_frequency`, 1,000 steps) are where evaluations
happen; on a slow machine they can be an hour apart, and a run that dies in between
loses all of it. The time-based ones (`--save_checkpoints_secs`, default 600, as
tf.estimator's own default) bound that loss to minutes:

    schedule = CheckpointSchedule(steps=1000, secs=600, start_step=0)
    schedule.due(500)       # None: neither 1,000 steps nor 10 minutes since the last
    schedule.due(1000)      # "steps": an evaluation follows (evaluation_follows("steps"))
    schedule.saved(1000)
    ... 10 minutes later, at step 1,400:
    schedule.due(1400)      # "time": a checkpoint, no evaluation of its own
    schedule.saved(1400)    # the next step-based one is still at 2,000

Without steps (`steps=None`) the time-based checkpoints are the evaluated ones; with
neither, none is due (a run then saves only its final checkpoint, as the Estimator). Both
backends use it: the native training loop directly, the Estimator through
`experiment.TimedCheckpointHook`.
"""
import time


def _now():
    return time.monotonic()


class CheckpointSchedule:
    """Whether a checkpoint is due at a step: see the module doc.

    Args:
      steps: save when the step crosses a multiple of `steps` (None or 0: never).
      secs: save when `secs` seconds have passed since the last save (None or 0: never).
      start_step: the step training starts (or resumes) at; it counts as saved.
    """

    def __init__(self, steps, secs, start_step=0):
        self.steps = steps or None
        self.secs = secs or None
        self._last_step = start_step
        self._last_time = _now()

    def due(self, step):
        """"steps", "time" or None: why a checkpoint is due at `step` (steps first)."""
        if self.steps and step // self.steps > self._last_step // self.steps:
            return "steps"
        if self.secs and _now() - self._last_time >= self.secs:
            return "time"
        return None

    def evaluation_follows(self, reason):
        """Whether an evaluation follows a checkpoint due for `reason` (one of `due`'s):
        the step-based ones, or the time-based ones of a schedule without steps."""
        return reason == "steps" or (reason == "time" and not self.steps)

    def saved(self, step):
        """Record a checkpoint at `step` (now)."""
        self._last_step, self._last_time = step, _now()

    @property
    def last_saved_step(self):
        return self._last_step
