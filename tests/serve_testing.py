"""A t2t-serve server on 127.0.0.1 for tests: uvicorn in a thread of the test process, on a
free port, stopped at the end; and an engine wrapper that holds batches until released or
fails on demand (to see queues, timeouts and engine failures)."""
import contextlib
import socket
import threading
import time

import httpx

from t2t.server import ServerConfig, make_server


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_server(loaders, config=None, ready_timeout=120):
    """Yields (base URL, the app's Service) once /health answers (models may still load)."""
    port = free_port()
    server = make_server(loaders, config or ServerConfig(), port=port)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = "http://127.0.0.1:%d" % port
    deadline = time.monotonic() + ready_timeout
    while True:
        try:
            if httpx.get(url + "/health", timeout=5).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield url, server.service
    finally:
        server.should_exit = True
        thread.join(60)


def wait_ready(url, timeout=120):
    deadline = time.monotonic() + timeout
    while httpx.get(url + "/ready", timeout=5).status_code != 200:
        assert time.monotonic() < deadline, httpx.get(url + "/ready").text
        time.sleep(0.05)


def wait_for(condition, timeout=30, what="the condition"):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.01)


class GatedEngine:
    """A real engine whose batches wait while `gate` is clear, and that raises once `fail`
    is set (as an engine that died)."""

    def __init__(self, engine):
        self.engine = engine
        self.name = engine.name
        self.gate = threading.Event()
        self.gate.set()
        self.fail = threading.Event()
        self.waiting = threading.Event()  # set while a batch waits at the gate
        self.batches = []  # the size of each batch decoded, and its settings
        self.settings = []

    def decode(self, id_lists, settings):
        self.waiting.set()
        self.gate.wait(60)
        self.waiting.clear()
        if self.fail.is_set():
            raise RuntimeError("the engine died")
        self.batches.append(len(id_lists))
        self.settings.append(settings)
        return self.engine.decode(id_lists, settings)

    def close(self):
        self.engine.close()


def metric(text, name, **labels):
    """The value of one sample of a Prometheus exposition (0 when absent)."""
    want = ",".join('%s="%s"' % item for item in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        sample, _, value = line.rpartition(" ")
        if sample.partition("{")[0] != name:
            continue
        got = sample.partition("{")[2].rstrip("}")
        if ",".join(sorted(got.split(","))) == want or (not want and not got):
            return float(value)
    return 0.0
