"""Helpers of the tests that start t2t-trainer processes (a TF_CONFIG cluster, or one to
stop with a signal)."""
import os
import socket
import time


def free_ports(count):
    """`count` distinct ports free on 127.0.0.1 right now (for a TF_CONFIG cluster)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def read_log(log_file):
    """Everything written so far to a process's log file (opened "w+")."""
    log_file.flush()
    log_file.seek(0)
    return log_file.read()


def wait_for_text(path, text, proc, timeout):
    """Wait until the file `path` (a process's log, or a marker) contains `text` ("" for
    the file to exist); fails when `proc` exits first or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path, errors="replace") as log:
                if text in log.read():
                    return
        if proc.poll() is not None:
            raise AssertionError("the process exited (code %s) before %r appeared in %s"
                                 % (proc.returncode, text, path))
        time.sleep(0.2)
    raise AssertionError("%r did not appear in %s within %d s" % (text, path, timeout))
