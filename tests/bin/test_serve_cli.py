"""t2t-serve as a program: flag errors are one line (exit 2); SIGTERM finishes the request in
flight and exits 0; a second signal exits at once."""
import concurrent.futures
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from decoding_testing import copy_as_training_folder, trained_model  # noqa: E402
from serve_testing import free_port  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3",
           PYTHONPATH=os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")]
                                                if p]))


def serve(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "t2t.bin.t2t_serve"] + list(args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ENV, **kw)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    trained = trained_model(tmp_path_factory)
    return copy_as_training_folder(trained, str(tmp_path_factory.mktemp("serve_cli") / "train"))


# Each case in one child process that has only t2t-serve's flags (in a test worker another
# program's `--model`, a single string, may already be defined in absl's global FLAGS).
_FLAG_CASES_CHILD = """
import contextlib, io, json, sys
from absl import flags
from t2t.bin import t2t_serve
results = []
for args in json.loads(sys.argv[1]):
    flags.FLAGS.unparse_flags()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            t2t_serve.console_main(["t2t-serve"] + args)
            code = 0
        except SystemExit as stop:
            code = stop.code
    results.append([code, err.getvalue()])
print(json.dumps(results))
"""


def test_bad_flags_are_one_line(tmp_path):
    import json
    cases = (
        ([], "give --model=PATH"),
        (["--model=m=" + str(tmp_path / "nowhere")], "no such file or folder"),
        (["--model=" + str(tmp_path), "--model=" + str(tmp_path)], "two models named"),
        (["--model=" + str(tmp_path), "--engine=tensorflw"], "--engine=tensorflw: use"),
        (["--model=" + str(tmp_path), "--api_keys=" + str(tmp_path / "keys.txt")],
         "cannot be read"))
    child = subprocess.run(
        [sys.executable, "-c", _FLAG_CASES_CHILD, json.dumps([args for args, _ in cases])],
        capture_output=True, text=True, env=ENV, timeout=300)
    assert child.returncode == 0, child.stderr
    for (code, err), (args, message) in zip(json.loads(child.stdout.splitlines()[-1]), cases):
        assert code == 2, (args, err)
        assert err.strip().splitlines() == [err.strip()] and message in err, err
        assert err.startswith("t2t-serve: error: ")


# t2t-serve up to the point it would serve: the models it passes on and how CTranslate2's
# OpenMP threads wait then, with neither variable set and with a user's own.
_SERVE_CHILD = """
import json, os, sys
from absl import flags
import t2t.server.running as running
from t2t.bin import t2t_serve
seen = []
running.serve = lambda loaders, config, **kw: seen.append(
    [sorted(loaders), os.environ.get("OMP_WAIT_POLICY"), os.environ.get("GOMP_SPINCOUNT"),
     config.max_wait_ms]) or 0
for given in ({}, {"OMP_WAIT_POLICY": "PASSIVE"}, {"GOMP_SPINCOUNT": "5"}):
    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        os.environ.pop(name, None)
    os.environ.update(given)
    flags.FLAGS.unparse_flags()
    try:
        t2t_serve.console_main(["t2t-serve"] + sys.argv[1:])
    except SystemExit as stop:
        assert not stop.code, stop.code
print(json.dumps(seen))
"""


def test_engine_threads_spin_briefly_between_batches_unless_told(tmp_path):
    import json
    env = {k: v for k, v in ENV.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    child = subprocess.run([sys.executable, "-c", _SERVE_CHILD, "--model=m=%s" % tmp_path],
                           capture_output=True, text=True, env=env, timeout=300)
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout.splitlines()[-1]) == [
        [["m"], None, "10000", 30.0],  # libgomp spins 10,000 times, then sleeps
        [["m"], "PASSIVE", None, 30.0],  # the user's choices are kept
        [["m"], None, "5", 30.0]]


def wait_ready(url, process, timeout=300):
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, process.communicate()[1][-3000:]
        try:
            if httpx.get(url + "/ready", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "t2t-serve did not get ready"
        time.sleep(0.1)


def test_sigterm_drains_and_a_second_signal_exits_at_once(folder):
    # Batches close after 2 s, so each request is in flight when the signal comes.
    ports = free_port(), free_port()
    processes = [serve("--model=low-up=" + folder, "--port=%d" % port, "--max_wait_ms=2000",
                       "--drain_seconds=60") for port in ports]
    urls = ["http://127.0.0.1:%d" % port for port in ports]
    try:
        for url, process in zip(urls, processes):
            wait_ready(url, process)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            sent = [pool.submit(httpx.post, url + "/v1/translate", json={"inputs": "dcba"},
                                timeout=120) for url in urls]
            time.sleep(1.0)
            drained, killed = processes
            drained.send_signal(signal.SIGTERM)
            killed.send_signal(signal.SIGTERM)
            time.sleep(0.3)
            killed.send_signal(signal.SIGTERM)
            assert killed.wait(30) == 1
            with pytest.raises(httpx.TransportError):
                sent[1].result()
            # The drained server takes no new connection, and answers the one in flight.
            with pytest.raises(httpx.ConnectError):
                httpx.get(urls[0] + "/health", timeout=5)
            answer = sent[0].result()
        assert answer.status_code == 200 and answer.json()["outputs"].isupper()
        assert drained.wait(120) == 0
        err = drained.communicate()[1]
        assert "stopping: finishing the requests in flight" in err
        assert "Traceback" not in err
        assert "second signal" in killed.communicate()[1]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
