"""Progress lines for long work, and the summary line that ends it.

    progress = Progress("datagen algorithmic_reverse_binary40", unit="examples", total=110000)
    for example in examples:
        ...
        progress.update(1, tokens=len(example["inputs"]))
    progress.done(files=11)
    # I datagen algorithmic_reverse_binary40: 52,301/110,000 examples (47.5%), 26,150 examples/s
    # I datagen algorithmic_reverse_binary40 done: 110,000 examples, 2,310,455 tokens, 11 files, 4.2 s

Lines go to absl logging at most every `every_seconds`, so a tight loop costs
one clock read per update.
"""
import time

from absl import logging


def _fmt(value):
    if isinstance(value, float):
        return "%.1f" % value if value < 1000 else "{:,.0f}".format(value)
    if isinstance(value, int):
        return "{:,}".format(value)
    return str(value)


class Progress:
    def __init__(self, description, unit="examples", total=None, every_seconds=5.0,
                 log_fn=None):
        self.description = description
        self.unit = unit
        self.total = total
        self.every_seconds = every_seconds
        self.count = 0
        self.extra = {}
        self._log = log_fn or logging.info
        self._start = time.monotonic()
        self._last = self._start

    @property
    def seconds(self):
        return time.monotonic() - self._start

    def update(self, n=1, **counters):
        self.count += n
        for key, value in counters.items():
            self.extra[key] = self.extra.get(key, 0) + value
        now = time.monotonic()
        if now - self._last >= self.every_seconds:
            self._last = now
            self._log(self.line())

    def line(self):
        elapsed = max(self.seconds, 1e-9)
        done = _fmt(self.count)
        if self.total:
            done += "/%s %s (%.1f%%)" % (_fmt(self.total), self.unit,
                                          100.0 * self.count / self.total)
        else:
            done += " " + self.unit
        return "%s: %s, %s %s/s" % (self.description, done, _fmt(self.count / elapsed), self.unit)

    def done(self, seconds=None, **figures):
        """Log and return the summary line: count, counters, extra figures and seconds
        (`seconds`: the time the work took, when it ended before this call)."""
        parts = ["%s %s" % (_fmt(self.count), self.unit)]
        for key, value in list(self.extra.items()) + list(figures.items()):
            parts.append("%s %s" % (_fmt(value), key))
        parts.append("%.1f s" % (self.seconds if seconds is None else seconds))
        line = "%s done: %s" % (self.description, ", ".join(parts))
        self._log(line)
        return line
