"""Helpers of the tests that start a cluster of t2t-trainer processes (TF_CONFIG)."""
import socket


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
