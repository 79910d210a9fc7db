"""Running the app on uvicorn, and stopping it: SIGTERM (or Ctrl-C) stops accepting
connections, lets the requests in flight finish within `drain_seconds`, then the engines
finish what they hold and the process exits 0; a second signal exits at once (code 1).
"""
import contextlib
import os
import signal
import sys
import threading

import uvicorn
from uvicorn.protocols.http import h11_impl

import t2t.server.app as app_lib
import t2t.server.batching as batching

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class DrainingServer(uvicorn.Server):
    """uvicorn's Server with t2t-serve's signals: the first drains, the second ends."""

    def __init__(self, config, service):
        super().__init__(config)
        self.service = service

    def capture_signals(self):
        @contextlib.contextmanager
        def handled():
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            before = {sig: signal.signal(sig, self.handle_exit) for sig in SIGNALS}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)
        return handled()

    def handle_exit(self, sig, frame):
        if self.should_exit:
            sys.stderr.write("t2t-serve: second signal, exiting now\n")
            sys.stderr.flush()
            os._exit(1)
        sys.stderr.write("t2t-serve: stopping: finishing the requests in flight (up to %g s)"
                         "\n" % self.service.config.drain_seconds)
        sys.stderr.flush()
        self.service.draining = True
        self.should_exit = True


def _protocol_telling(traffic):
    """uvicorn's HTTP/1.1 protocol (h11) that tells `traffic` when a client closes its
    connection, so a batch never waits for a client that has gone."""
    class Protocol(h11_impl.H11Protocol):
        def connection_lost(self, exc):
            if self.client:
                traffic.closed(tuple(self.client))
            super().connection_lost(exc)
    return Protocol


def make_server(loaders, config=None, host="127.0.0.1", port=8000, log_level="warning"):
    """A `DrainingServer` for `loaders` (see `create_app`); `.run()` serves until stopped."""
    config = config or app_lib.ServerConfig()
    application = app_lib.create_app(loaders, config)
    uvicorn_config = uvicorn.Config(application, host=host, port=port, log_level=log_level,
                                    timeout_graceful_shutdown=config.drain_seconds,
                                    timeout_keep_alive=batching.KEEP_ALIVE_SECONDS,
                                    lifespan="on", access_log=False,
                                    http=_protocol_telling(application.state.service.traffic))
    return DrainingServer(uvicorn_config, application.state.service)


def serve(loaders, config=None, host="127.0.0.1", port=8000, log_level="warning"):
    """Serve until SIGTERM/SIGINT; returns 0 after a clean drain."""
    server = make_server(loaders, config, host, port, log_level)
    server.run()
    return 0
