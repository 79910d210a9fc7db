"""What both training backends log: tokens per batch, the step lines and the summary line.

    log = TrainingLog(every_n_steps=100, description="train transformer", start_step=0)
    for step in range(1, 1001):
        ...                                   # one training step
        log.after_step(step, tokens=3456, examples=128, loss=1.23)
    log.end()
    # I train transformer: step 100, loss 1.2300 (mean of 100 steps), 12.30 steps/s, 42,509 tokens/s
    # I train transformer done: 1,000 steps, 3,456,000 tokens, 1,000 final step, 12.3 steps/s, ...
    log.summary    # {"steps": 1000, "tokens": 3456000, "tokens_per_sec": ..., ...}

The Estimator backend feeds it from a SessionRunHook (`experiment.TrainingLogHook`), the
native backend from its training loop, so the lines are the same on both.
"""
import time

import tensorflow as tf
from absl import logging

from t2t.core.progress import Progress


def count_tokens(features):
    """Non-padding ids in `inputs` and `targets` (all elements of float features).

        count_tokens({"inputs": [[[[3]], [[1]], [[0]]]], "targets": [[[[2]], [[1]], [[0]]]]})
        # 4 (int64): two ids each, padding 0 not counted
    """
    total = tf.constant(0, tf.int64)
    for name in ("inputs", "targets"):
        feature = features.get(name) if hasattr(features, "get") else None
        if feature is None:
            continue
        feature = tf.convert_to_tensor(feature)
        if feature.dtype.is_integer:
            count = tf.math.count_nonzero(feature, dtype=tf.int64)
        else:
            count = tf.cast(tf.reduce_prod(tf.shape(feature)[:2]), tf.int64)
        total += count
    return total


def count_examples(features):
    """Examples in the batch: the first dimension of `targets` (else `inputs`), int64."""
    for name in ("targets", "inputs"):
        feature = features.get(name) if hasattr(features, "get") else None
        if feature is not None:
            return tf.cast(tf.shape(feature)[0], tf.int64)
    return tf.constant(0, tf.int64)


def format_metrics(metrics):
    """Metrics as one sorted line, global_step left out.

        format_metrics({"loss": 1.23456, "global_step": 10, "acc": 0.5})
        # "acc 0.5000, loss 1.2346"
    """
    parts = []
    for name in sorted(metrics):
        if name == "global_step":
            continue
        value = metrics[name]
        try:
            parts.append("%s %.4f" % (name, float(value)))
        except (TypeError, ValueError):
            parts.append("%s %s" % (name, value))
    return ", ".join(parts)


class TrainingLog:
    """Step lines every `every_n_steps` global steps and a summary line at `end()`.

    Args:
      every_n_steps: log a line when the global step crosses a multiple of this.
      description: the lines' prefix, e.g. "train transformer".
      start_step: the global step training resumes at (a line says so when > 0).
      count_tokens: whether tokens are counted (tokens/s is left out otherwise).
      log_fn: where lines go (absl's logging.info).
    """

    def __init__(self, every_n_steps=100, description="train", start_step=0,
                 count_tokens=True, log_fn=None, num_replicas=1):
        self._every_n_steps = max(int(every_n_steps or 100), 1)
        self._description = description
        self._log = log_fn or logging.info
        self._count_tokens = count_tokens
        self.num_replicas = num_replicas
        self.start_step = int(start_step)
        if self.start_step > 0:
            logging.info("%s: resuming at global step %d", description, self.start_step)
        else:  # said before the first step line, `every_n_steps` away
            logging.info("%s: session ready, training from step 0 (a line every %d steps)",
                         description, self._every_n_steps)
        self._examples = 0
        self._progress = Progress(description, unit="steps", every_seconds=float("inf"),
                                  log_fn=self._log)
        self._window_start = time.monotonic()
        self._window_steps = 0
        self._window_tokens = 0
        self._window_losses = []
        self.last_step = self.start_step
        self.last_loss = None
        self.summary = None
        self._last_step_at = None  # when the last step ended

    def after_step(self, step, tokens=0, examples=0, loss=None):
        """Record one finished step; `step` is the global step after it."""
        tokens = int(tokens)
        self._last_step_at = time.monotonic()
        self._examples += int(examples)
        self._progress.update(1, tokens=tokens)
        self._window_steps += 1
        self._window_tokens += tokens
        if loss is not None:
            self.last_loss = float(loss)
            self._window_losses.append(self.last_loss)
        crossed = step // self._every_n_steps > self.last_step // self._every_n_steps
        self.last_step = step
        if crossed:
            self._log(self._window_line(step))
            self._window_start = time.monotonic()
            self._window_steps = self._window_tokens = 0
            self._window_losses = []

    def _window_line(self, step):
        seconds = max(time.monotonic() - self._window_start, 1e-9)
        parts = ["step %d" % step]
        if self._window_losses:
            parts.append("loss %.4f (mean of %d steps)" % (
                sum(self._window_losses) / len(self._window_losses), len(self._window_losses)))
        parts.append("%.2f steps/s" % (self._window_steps / seconds))
        if self._count_tokens:
            parts.append("{:,.0f} tokens/s".format(self._window_tokens / seconds))
        return "%s: %s" % (self._description, ", ".join(parts))

    def end(self):
        """Log the summary line; returns (and keeps in `summary`) the run's figures.

        Timed up to the last step: the Estimator backend calls this from a hook's end(),
        after the final checkpoint's evaluation, which is not training time."""
        seconds = self._progress.seconds
        if self._last_step_at is not None:
            seconds -= time.monotonic() - self._last_step_at
        seconds = max(seconds, 1e-9)
        steps = self._progress.count
        self.summary = {
            "steps": steps,
            "start_step": self.start_step,
            "final_step": self.last_step,
            "seconds": seconds,
            "steps_per_sec": steps / seconds,
            "tokens": self._progress.extra.get("tokens", 0),
            "tokens_per_sec": self._progress.extra.get("tokens", 0) / seconds,
            "examples": self._examples,
            "replicas": self.num_replicas,
            "final_loss": self.last_loss,
        }
        figures = {"final step": self.last_step,
                   "steps/s": round(steps / seconds, 2),
                   "tokens/s": int(self.summary["tokens_per_sec"])}
        if self.last_loss is not None:
            figures["final loss"] = "%.4f" % self.last_loss
        self._progress.done(seconds=seconds, **figures)
        return self.summary
