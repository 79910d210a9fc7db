"""API keys and a request rate per key.

`--api_keys=FILE` holds one key a line (blank lines and `#` comments skipped). A request
without a key is refused with 401, one with a key not in the file with 403; with a rate
(requests per minute per key), a key over it gets 429 and `Retry-After` (a token bucket:
`rate` requests at once, refilled at rate/60 a second).
"""
import math
import threading
import time

from t2t.core import errors


def read_api_keys(path):
    """The keys in `path` (a set); a one-line UserError for a missing or empty file."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError as error:
        raise errors.UserError("--api_keys=%s cannot be read (%s); give a file with one key "
                               "a line" % (path, error.strerror or error)) from None
    keys = {line.strip() for line in lines if line.strip() and not line.strip().startswith("#")}
    if not keys:
        raise errors.UserError("--api_keys=%s holds no key; write one key a line" % path)
    return keys


class Refused(Exception):
    """A request refused by the access rules: `status`, one-line message, Retry-After."""

    def __init__(self, status, message, retry_after=None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class Access:
    """Who may translate: every request (no keys), or those with a listed key, at `rate`
    requests a minute per key (0: no rate)."""

    def __init__(self, keys=None, rate=0.0, clock=time.monotonic):
        self.keys = set(keys) if keys else None
        self.rate = float(rate or 0)
        self._clock = clock
        self._buckets = {}
        self._lock = threading.Lock()

    def check(self, key):
        """Raise `Refused` unless `key` may make a request now."""
        if self.keys is None:
            return
        if not key:
            raise Refused(401, "an API key is needed: send api_key, the X-API-Key header or "
                               "Authorization: Bearer <key>")
        if key not in self.keys:
            raise Refused(403, "the API key is not valid")
        if not self.rate:
            return
        with self._lock:
            now = self._clock()
            tokens, then = self._buckets.get(key, (self.rate, now))
            tokens = min(self.rate, tokens + (now - then) * self.rate / 60.0)
            if tokens < 1:
                self._buckets[key] = (tokens, now)
                wait = (1 - tokens) * 60.0 / self.rate
                raise Refused(429, "the API key made more than %g requests a minute; retry "
                                   "in %d s" % (self.rate, math.ceil(wait)), math.ceil(wait))
            self._buckets[key] = (tokens - 1, now)
