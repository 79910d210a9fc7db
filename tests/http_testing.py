"""A local HTTP server for download tests (these machines reach no other host).

    with local_http_server(MyHandler, files={"/a.txt": b"hi"}) as httpd:
        requests.get(httpd.url + "/a.txt")   # the handler reads self.server.files
"""
import contextlib
import http.server
import os
import threading
from unittest import mock

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                    "all_proxy")


class QuietFileHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a directory (functools.partial(QuietFileHandler, directory=...)), no log."""

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def local_http_server(handler, **attributes):
    """A threaded server on 127.0.0.1 with `attributes` set on it and `.url` its base URL.

    Proxy variables are cleared while it runs, so that requests reach it directly.
    """
    environ = {name: value for name, value in os.environ.items()
               if name not in _PROXY_VARIABLES}
    environ["NO_PROXY"] = "127.0.0.1"
    with mock.patch.dict(os.environ, environ, clear=True):
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        for name, value in attributes.items():
            setattr(httpd, name, value)
        httpd.url = "http://127.0.0.1:%d" % httpd.server_address[1]
        thread = threading.Thread(target=httpd.serve_forever,
                                  kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield httpd
        finally:
            httpd.shutdown()
            httpd.server_close()
