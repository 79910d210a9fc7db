"""Batching across requests: one queue and one engine thread per model.

Requests hand their texts to the model's `Batcher` (`submit`) and await the `Job`'s future
on the event loop; the model's thread takes texts from the queue into batches and decodes
them with `TrainedModel.decode` (which sorts a batch by length), off the event loop. A batch
closes when it holds `max_batch_size` texts or `max_batch_tokens` input ids, or
`max_wait_ms` after its first text was queued (or after the engine finished its last batch,
if later: a batch queued behind a decode waits for the clients that decode answers), or as
soon as no company is on its way (`Traffic`: every request the server is handling has its
texts queued and every client in a loop it just answered is back, so a lone client is never
held for `max_wait_ms`), whichever comes first. Texts with different decode settings never
share a batch: the batch takes the oldest job's settings and the texts queued with the
same. A job larger than a batch is decoded over several batches; its results come back in
its own order. A cancelled job (timed out, client gone) leaves the
queue at once; its texts in a batch already decoding are dropped on return.
"""
import collections
import threading
import time

from absl import logging

from t2t.core import errors
from t2t.core.progress import Progress


# uvicorn's keep-alive timeout (running.py sets it): a connection idle this long is closed.
KEEP_ALIVE_SECONDS = 5.0


class QueueFull(Exception):
    """The queue holds `max_queue` texts: the request should come back later (429)."""


class EngineUnavailable(Exception):
    """The model is still loading, or its engine failed (503)."""


class BadInput(Exception):
    """The engine refused a batch's input (a one-line UserError): 400, the engine stays up."""


class Traffic:
    """The translation requests a server is handling, shared by its batchers.

    A request is in flight from its arrival to its answer (`arrived`, `answered`); its job
    counts as queued while it waits in a batcher's queue. A batch waits for company (up to
    `max_wait_ms`) only while some is on its way:
    - a request in flight has no job queued yet (being read, decoded by another model, or
      its answer being sent);
    - or a client just answered on a kept-alive connection is expected back: a connection
      that has carried more than one request is a client in a loop, and for `max_wait_ms`
      after its answer the batch waits for its next request (without this, clients answered
      together come back a few at a time and split one batch into several small ones).
    When no company is coming (`company_until` is in the past) the batch closes at once, so
    a lone client is never held. A connection the client closes (`closed`, from the server's
    protocol) is not waited for; one idle longer than uvicorn's keep-alive timeout
    (`KEEP_ALIVE_SECONDS`, after which uvicorn closes it) is forgotten.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self.in_flight = 0
        self.queued_jobs = 0
        self._batchers = []
        # connection (host, port) -> [carried more than one request, when last answered]
        self._connections = {}
        # connection -> when answered: the clients in a loop answered that are not back yet
        # (few: at most one per looping client), which `company_until` reads on every look.
        self._awaited = {}
        self._pruned_at = time.monotonic()

    def watch(self, batcher):
        """`batcher` waits for the requests in flight: wake it when one is answered."""
        self._batchers.append(batcher)

    def arrived(self, connection=None):
        with self._lock:
            self.in_flight += 1
            if connection is not None:
                known = self._connections.get(connection)
                self._connections[connection] = [known is not None, None]
                self._awaited.pop(connection, None)
        if connection is not None:  # a batch waiting for this client looks again
            self.wake()

    def answered(self, connection=None):
        now = time.monotonic()
        with self._lock:
            self.in_flight -= 1
            known = self._connections.get(connection)
            if known is not None:
                known[1] = now
                if known[0]:
                    self._awaited[connection] = now
            if now - self._pruned_at > KEEP_ALIVE_SECONDS:
                self._pruned_at = now
                for key, (_, answered_at) in list(self._connections.items()):
                    if answered_at is not None and now - answered_at > KEEP_ALIVE_SECONDS:
                        del self._connections[key]  # idle that long: uvicorn closed it
                        self._awaited.pop(key, None)
        self.wake()  # a batch waiting for this request closes now

    def closed(self, connection):
        """The client closed `connection`: it is not coming back."""
        with self._lock:
            self._connections.pop(connection, None)
            awaited = self._awaited.pop(connection, None)
        if awaited is not None:
            self.wake()

    def wake(self):
        for batcher in self._batchers:
            batcher.wake()

    def jobs(self, change):
        with self._lock:
            self.queued_jobs += change

    def company_until(self, window):
        """Until when a batch should wait for company (the past: none is coming):
        infinity while a request in flight has no job queued, else the end of `window`
        seconds after the last answer to a client in a loop that has not come back."""
        with self._lock:
            if self.in_flight > self.queued_jobs:
                return float("inf")
            if not self._awaited:
                return 0.0
            return max(self._awaited.values()) + window


class Job:
    """One request's texts for one model, with the settings they decode with.

    `tokens[i]` is the number of input ids of `texts[i]` (for `max_batch_tokens`);
    `settings` is a hashable tuple of `decode` keyword arguments. The future (of the event
    loop `loop`) gets, in the texts' order, one list of `Hypothesis` per text.
    """

    def __init__(self, texts, tokens, settings, loop, future):
        self.texts = list(texts)
        self.tokens = list(tokens)
        self.settings = tuple(settings)
        self.loop = loop
        self.future = future
        self.next = 0  # index of the first text not yet taken into a batch
        self.results = [None] * len(self.texts)
        self.left = len(self.texts)
        self.cancelled = False
        self.queued_at = time.monotonic()


def _resolve(job, result=None, error=None):
    def set_it():
        if not job.future.done():
            if error is not None:
                job.future.set_exception(error)
            else:
                job.future.set_result(result)
    job.loop.call_soon_threadsafe(set_it)


class Batcher:
    """The queue and engine thread of one model.

    Args:
      name: the model's name (in the logs and metrics).
      load: a function returning the `TrainedModel`; called in the engine thread, so the
        engine lives in the thread that runs it.
      max_batch_size, max_batch_tokens (0: no token bound), max_wait_ms: when a batch closes.
      max_queue: at most this many texts wait (beyond it `submit` raises `QueueFull`).
      metrics: a `t2t.server.metrics.Metrics` (or None).
      traffic: the server's `Traffic` (None: a batch always waits `max_wait_ms` for company
        unless full).
    """

    def __init__(self, name, load, max_batch_size=32, max_batch_tokens=0, max_wait_ms=30.0,
                 max_queue=1024, metrics=None, traffic=None):
        self.name = name
        self._load = load
        self.max_batch_size = max(1, int(max_batch_size))
        self.max_batch_tokens = int(max_batch_tokens or 0)
        self.max_wait = max(0.0, float(max_wait_ms)) / 1000.0
        self._idle_since = 0.0  # when the engine last finished a batch (engine thread only)
        self.max_queue = int(max_queue)
        self.metrics = metrics
        self.traffic = traffic
        if traffic is not None:
            traffic.watch(self)
        self.model = None
        self.error = None  # why the engine is unavailable, once it failed
        self._pending = collections.deque()
        self._queued = 0  # texts waiting (not yet taken into a batch)
        self._cond = threading.Condition()
        self._stopping = False
        self._loaded = threading.Event()
        self._thread = threading.Thread(target=self._run, name="t2t-serve-" + name,
                                        daemon=True)

    # ------------------------------------------------------------------ state
    def start(self):
        self._thread.start()

    @property
    def ready(self):
        return self.model is not None and self.error is None

    @property
    def queued(self):
        """Texts waiting for a batch."""
        return self._queued

    def wait_loaded(self, timeout=None):
        """True once the model loaded or failed to."""
        return self._loaded.wait(timeout)

    def wake(self):
        """Look at the queue again (a request in flight was answered)."""
        with self._cond:
            self._cond.notify_all()

    def stop(self, timeout=None):
        """Decode what is queued, then end the engine thread and close the model."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(timeout)

    # ------------------------------------------------------------------ requests
    def submit(self, job):
        """Queue `job`; raises `QueueFull` or `EngineUnavailable`."""
        with self._cond:
            if self.error is not None:
                raise EngineUnavailable("model %s failed: %s" % (self.name, self.error))
            if self.model is None:
                raise EngineUnavailable("model %s is still loading" % self.name)
            if self._stopping:
                raise EngineUnavailable("the server is stopping")
            if self._queued + len(job.texts) > self.max_queue:
                raise QueueFull("model %s has %d texts queued (--max_queue=%d)" % (
                    self.name, self._queued, self.max_queue))
            self._pending.append(job)
            self._queued += len(job.texts)
            self._jobs(1)
            self._gauge()
            self._cond.notify_all()

    def cancel(self, job, reason):
        """Take `job` out of the queue (its texts still queued are never decoded)."""
        with self._cond:
            if job.cancelled:
                return
            job.cancelled = True
            if job in self._pending:
                self._pending.remove(job)
                self._queued -= len(job.texts) - job.next
                self._jobs(-1)
                self._gauge()
            self._cond.notify_all()
        if self.metrics is not None:
            self.metrics.dropped.labels(self.name, reason).inc()

    def _jobs(self, change):
        if self.traffic is not None:
            self.traffic.jobs(change)

    def _gauge(self):
        if self.metrics is not None:
            self.metrics.queue_depth.labels(self.name).set(self._queued)

    # ------------------------------------------------------------------ the engine thread
    def _run(self):
        try:
            self.model = self._load()
        except Exception as error:  # a model that cannot load: /ready says why
            logging.error("model %s failed to load: %s", self.name, error)
            self.error = "failed to load: %s" % " ".join(str(error).split())
            self._loaded.set()
            self._fail_pending()
            return
        self._loaded.set()
        logging.info("model %s ready (%s engine)", self.name, self.model.engine_name)
        while True:
            batch = self._next_batch()
            if batch is None:
                break
            self._decode(*batch)
            self._idle_since = time.monotonic()
        self.model.close()

    def _fill(self, settings):
        """(texts, ids) a batch of `settings` would take now, within the bounds."""
        count = tokens = 0
        for job in self._pending:
            if job.settings != settings:
                continue
            for index in range(job.next, len(job.texts)):
                if count >= self.max_batch_size or (
                        self.max_batch_tokens and count and
                        tokens + job.tokens[index] > self.max_batch_tokens):
                    return count, tokens, True
                count += 1
                tokens += job.tokens[index]
        full = count >= self.max_batch_size or (
            self.max_batch_tokens and tokens >= self.max_batch_tokens)
        return count, tokens, full

    def _next_batch(self):
        """Wait for a batch to close; returns (settings, [(job, index)], why it closed:
        "full", "all_in" (no company on its way), "waited" (max_wait_ms) or
        "stopping"), or None to stop."""
        with self._cond:
            while True:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if not self._pending:
                    return None
                first = self._pending[0]
                # From the later of its first text's arrival and the end of the last decode:
                # a batch queued behind a decode can still wait for the clients it answers.
                opened_at = max(first.queued_at, self._idle_since)
                closes_at = opened_at + self.max_wait
                closed = "stopping"
                while not self._stopping:
                    _, _, full = self._fill(first.settings)
                    left = closes_at - time.monotonic()
                    until = (self.traffic.company_until(self.max_wait)
                             if self.traffic is not None else float("inf"))
                    if full:
                        closed = "full"
                    elif until <= time.monotonic():
                        # all in, or the client in a loop it waited for did not come back
                        closed = "waited" if until > opened_at else "all_in"
                    elif left <= 0:
                        closed = "waited"
                    else:
                        self._cond.wait(max(0.0, min(left, until - time.monotonic())))
                        if not self._pending or self._pending[0] is not first:
                            break
                        continue
                    break
                if not self._pending or self._pending[0] is not first:
                    continue  # the first job left the queue: start again
                return first.settings, self._take(first.settings), closed

    def _take(self, settings):
        count, _, _ = self._fill(settings)
        taken = []
        for job in list(self._pending):
            if job.settings != settings:
                continue
            while job.next < len(job.texts) and len(taken) < count:
                taken.append((job, job.next))
                job.next += 1
            if job.next == len(job.texts):
                self._pending.remove(job)
                self._jobs(-1)
            if len(taken) == count:
                break
        self._queued -= len(taken)
        self._gauge()
        return taken

    def _decode(self, settings, taken, closed):
        live = [(job, index) for job, index in taken if not job.cancelled]
        if not live:
            return
        if self.metrics is not None:
            self.metrics.closed.labels(self.name, closed).inc()
        started = time.monotonic()
        # The decode reports the ids it generated (EOS included): the metrics need not
        # encode the outputs again. every_seconds=inf: a batch logs no progress lines.
        generated = Progress("batch", unit="texts", every_seconds=float("inf"))
        try:
            decoded = self.model.decode([job.texts[index] for job, index in live],
                                        batch_size=len(live), progress=generated,
                                        **dict(settings))
        except errors.UserError as error:  # bad input, not a broken engine
            for job in {id(job): job for job, _ in live}.values():
                _resolve(job, error=BadInput(str(error)))
            return
        except Exception as error:  # the engine failed: fail its jobs, /ready goes 503
            logging.error("model %s: the engine failed: %s", self.name, error)
            self.error = "the engine failed: %s" % " ".join(str(error).split())
            failure = EngineUnavailable("model %s failed: %s" % (self.name, self.error))
            for job in {id(job): job for job, _ in live}.values():
                _resolve(job, error=failure)
            self._fail_pending()
            return
        seconds = time.monotonic() - started
        for (job, index), hypotheses in zip(live, decoded):
            job.results[index] = hypotheses
            job.left -= 1
            if job.left == 0 and not job.cancelled:
                _resolve(job, result=job.results)
        if self.metrics is not None:  # after the answers: they need not wait for it
            self.metrics.batch(self.name, len(live), seconds,
                               sum(job.tokens[index] for job, index in live),
                               generated.extra.get("tokens", 0))

    def _fail_pending(self):
        with self._cond:
            failure = EngineUnavailable("model %s failed: %s" % (self.name, self.error))
            for job in self._pending:
                _resolve(job, error=failure)
            self._jobs(-len(self._pending))
            self._pending.clear()
            self._queued = 0
            self._gauge()
