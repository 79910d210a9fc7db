"""t2t-serve under load on loopback, beside the same engine's offline throughput.

A `t2t-serve` process serves `--model`; this process is the load generator: for each
concurrency level N in `--clients`, N client threads each send `--requests` one-sentence
requests (bounded: N x M requests in all, sentences taken in turn from `--sentences`) to
POST /v1/translate, each on one keep-alive connection, and time each answer. The clients
use the standard library's http.client by default (`--client_library=httpx`: httpx, whose
Python per request takes more of the cores the server shares with them). Per level: requests/s, generated tokens/s (the
server's t2t_serve_tokens_out_total over the level's wall time), p50/p95/p99 latency, the
mean batch size (t2t_serve_batch_size), why batches closed (t2t_serve_batches_closed_total)
and the answers that were not 200 (429/504 count as answered: no request goes without an
answer; a request with no answer at all counts under "none"). `--overload_clients` adds a
run against a server whose queue holds only `--overload_queue` texts: every request must
get its translation or a 429/504. Beside it, in this process, the same model with the same
engine offline: `t2t.load(...).decode` of the sentences in batches of `--max_batch_size`
(sentences/s, tokens/s), and of one sentence at a time (p50 latency: the direct call the
1-client latency is held against). The JSON records the CPU's vector flags (AVX-512, VNNI,
AMX), which decide what CTranslate2's int8 gains.

    python bench/bench_serving.py --model=~/t2t_train/m30k --sentences=test_2016_flickr.en
    python bench/bench_serving.py --model=/tmp/tiny/train --clients=1,8 --requests=20 --out=
    python bench/bench_serving.py --model=ct2-int8_float32 --clients= ...   # offline only
    # adds its run to bench/results/serving.json (--out; one run per --label) and prints
    # the table
"""
import argparse
import concurrent.futures
import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def requests_per_client(total_requests, requests, clients):
    """--total_requests shared by a level's clients (at least 2 each), else --requests."""
    return max(2, -(-total_requests // clients)) if total_requests else requests


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100.0 * (len(ordered) - 1))))]


def metric_sum(text, name):
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and not line.startswith("#"):
            sample, _, value = line.rpartition(" ")
            if sample.partition("{")[0] == name:
                total += float(value)
    return total


def metric_by_label(text, name, label):
    """{value of `label`: the sum of `name`'s samples with it}."""
    totals = {}
    for line in text.splitlines():
        sample, _, value = line.rpartition(" ")
        if line.startswith("#") or sample.partition("{")[0] != name:
            continue
        key = sample.partition(label + '="')[2].partition('"')[0]
        totals[key] = totals.get(key, 0.0) + float(value)
    return totals


CPU_FLAGS = ("avx2", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "avx512_bf16",
             "amx_tile", "amx_int8", "amx_bf16")


def machine():
    """The CPU (model name, vector flags that CTranslate2's kernels use) and Python."""
    name, flags = platform.processor(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    name = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu": name, "python": platform.python_version(),
            "cpu_flags": {flag: flag in flags for flag in CPU_FLAGS}}


def offline(args, sentences):
    import t2t
    sentences = sentences[:args.offline_count] if args.offline_count else sentences
    with t2t.load(args.model, engine=args.engine, quantization=args.quantization,
                  threads=args.threads) as model:
        model.decode(sentences[:args.max_batch_size], beam_size=args.beam_size)  # warm up
        started = time.perf_counter()
        outputs = model.decode(sentences, beam_size=args.beam_size,
                               batch_size=args.max_batch_size)
        seconds = time.perf_counter() - started
        tokens = sum(len(model.targets_encoder.encode(o)) + 1 for o in outputs)
        single = []
        for sentence in sentences[:args.single_count]:
            started = time.perf_counter()
            model.decode([sentence], beam_size=args.beam_size)
            single.append(time.perf_counter() - started)
    return {"engine": model.engine_name, "sentences": len(sentences),
            "sentences_per_second": len(sentences) / seconds,
            "tokens_per_second": tokens / seconds,
            "single_sentence_p50_ms": 1000 * statistics.median(single)}


class StdlibConnection:
    """One keep-alive HTTP/1.1 connection by the standard library's http.client: a lighter
    client than httpx (less Python per request), so the load generator takes less of the
    cores it shares with the server."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.address = (parts.hostname, parts.port)
        self.connection = None

    def post(self, path, body):
        """(status, parsed JSON answer); raises OSError or HTTPException with no answer."""
        if self.connection is None:
            self.connection = http.client.HTTPConnection(*self.address, timeout=300)
        try:
            self.connection.request("POST", path, body=json.dumps(body).encode(),
                                    headers={"Content-Type": "application/json"})
            answer = self.connection.getresponse()
            return answer.status, json.loads(answer.read() or b"null")
        except (OSError, http.client.HTTPException):
            self.close()
            raise

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def load_level(httpx, url, bodies, clients, requests, path="/v1/translate", tokens_of=None,
               client_library="http.client"):
    """N=`clients` threads, each on one keep-alive connection (`client_library`: "httpx" or
    "http.client"), POST `requests` JSON `bodies` (taken in turn) to `path`, each sent when
    the last is answered. Generated tokens come from t2t-serve's metrics, or from each
    answer by `tokens_of(json)` when given (a server with no such metrics)."""
    latencies, codes, lock = [], {}, threading.Lock()
    answered_tokens = [0]
    before = httpx.get(url + "/metrics").text if tokens_of is None else ""

    def client(number):
        if client_library == "http.client":
            session = StdlibConnection(url)
            post, failures = session.post, (OSError, http.client.HTTPException)
        else:
            session = httpx.Client(timeout=300)

            def post(path, body):
                answer = session.post(url + path, json=body)
                return answer.status_code, answer.json() if tokens_of is not None else None
            failures = httpx.HTTPError
        try:
            for index in range(requests):
                body = bodies[(number * requests + index) % len(bodies)]
                started = time.perf_counter()
                try:
                    code, answer = post(path, body)
                except failures:
                    code = "none"  # no answer at all: what must never happen
                with lock:
                    if code == 200:
                        latencies.append(time.perf_counter() - started)
                        if tokens_of is not None:
                            answered_tokens[0] += tokens_of(answer)
                    codes[code] = codes.get(code, 0) + 1
        finally:
            session.close()

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    seconds = time.perf_counter() - started
    after = httpx.get(url + "/metrics").text if tokens_of is None else ""

    def delta(name):
        return metric_sum(after, name) - metric_sum(before, name)

    batches = delta("t2t_serve_batch_size_count")
    closed_before = metric_by_label(before, "t2t_serve_batches_closed_total", "closed")
    closed = {why: int(count - closed_before.get(why, 0)) for why, count in
              metric_by_label(after, "t2t_serve_batches_closed_total", "closed").items()}
    ok = codes.get(200, 0)
    return {"clients": clients, "requests": clients * requests,
            "answered": sum(n for c, n in codes.items() if c != "none"),
            "codes": {str(k): v for k, v in codes.items()},
            "requests_per_second": clients * requests / seconds,
            "translations_per_second": ok / seconds,
            "tokens_per_second": (answered_tokens[0] if tokens_of is not None else
                                  delta("t2t_serve_tokens_out_total")) / seconds,
            "p50_ms": 1000 * percentile(latencies, 50) if latencies else None,
            "p95_ms": 1000 * percentile(latencies, 95) if latencies else None,
            "p99_ms": 1000 * percentile(latencies, 99) if latencies else None,
            # t2t-serve's batching, from its metrics (None for another server)
            "batches_closed": closed if tokens_of is None else None,
            "mean_batch_size": None if tokens_of is not None else
            delta("t2t_serve_batch_size_sum") / batches if batches else 0,
            "mean_batch_engine_ms": None if tokens_of is not None else
            1000 * delta("t2t_serve_batch_seconds_sum") / batches if batches else 0}


def wait_until_up(server, probe_url, failure, timeout=600, poll=0.2):
    """Polls `probe_url` until it answers 200; exits with `failure` if `server` (a Popen)
    ends or `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(probe_url, timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:  # refused while starting, or 503 (HTTPError) until ready
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            sys.exit(failure)
        time.sleep(poll)


def start_server(args, max_queue):
    """A t2t-serve process serving `args.model` as "bench", once ready: (process, URL)."""
    port = free_port()
    url = "http://127.0.0.1:%d" % port
    command = [sys.executable, "-m", "t2t.bin.t2t_serve", "--model=bench=" + args.model,
               "--port=%d" % port, "--threads=%d" % args.threads,
               "--quantization=" + args.quantization,
               "--max_batch_size=%d" % args.max_batch_size,
               "--max_wait_ms=%g" % args.max_wait_ms, "--max_queue=%d" % max_queue,
               "--request_timeout=%g" % args.request_timeout]
    if args.engine:
        command.append("--engine=" + args.engine)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    wait_until_up(server, url + "/ready",
                  "t2t-serve did not get ready: %s" % " ".join(command))
    return server, url


def serve_levels(args, sentences, levels, max_queue):
    import httpx
    server, url = start_server(args, max_queue)
    try:
        httpx.post(url + "/v1/translate", json={"inputs": sentences[:4],
                                                "beam_size": args.beam_size}, timeout=600)
        results = []
        for clients in levels:
            requests = requests_per_client(args.total_requests, args.requests, clients)
            bodies = [{"inputs": sentence, "beam_size": args.beam_size}
                      for sentence in sentences]
            results.append(load_level(httpx, url, bodies, clients, requests,
                                      client_library=args.client_library))
            print("  %d clients done: %s" % (clients, results[-1]["codes"]), flush=True)
        return results
    finally:
        server.terminate()
        server.wait(120)


def export_quantization(path):
    """The weight type of a CTranslate2 export (its t2t_model.json), else None."""
    try:
        with open(os.path.join(os.path.expanduser(path), "t2t_model.json"),
                  encoding="utf-8") as handle:
            return json.load(handle).get("export_settings", {}).get("quantization")
    except (OSError, ValueError):
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--label", default=None, help="the run's name in the JSON (default: "
                        "the model's path and engine); a run replaces the one of its label")
    parser.add_argument("--engine", default=None)
    parser.add_argument("--quantization", default="float32")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sentences", default=None, help="one sentence a line (default: "
                        "made-up words for the tests' character model)")
    parser.add_argument("--clients", default="1,8,32", help="concurrency levels (empty: "
                        "offline only)")
    parser.add_argument("--requests", type=int, default=50, help="requests per client")
    parser.add_argument("--total_requests", type=int, default=0, help="instead: about this "
                        "many requests per level, shared by its clients (at least 2 each)")
    parser.add_argument("--overload_clients", type=int, default=0, help="then this many "
                        "clients against a server with --max_queue=--overload_queue")
    parser.add_argument("--overload_queue", type=int, default=8)
    parser.add_argument("--request_timeout", type=float, default=30.0)
    parser.add_argument("--client_library", choices=("httpx", "http.client"),
                        default="http.client",
                        help="the load generator's HTTP client (http.client: lighter)")
    parser.add_argument("--beam_size", type=int, default=4)
    parser.add_argument("--max_batch_size", type=int, default=32)
    parser.add_argument("--max_wait_ms", type=float, default=30.0)
    parser.add_argument("--single_count", type=int, default=50)
    parser.add_argument("--offline_count", type=int, default=0, help="sentences decoded "
                        "offline (0: all)")
    parser.add_argument("--note", default="", help="what the model is (kept in the JSON)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results",
                                                      "serving.json"))
    args = parser.parse_args()
    if args.sentences:
        with open(args.sentences, encoding="utf-8") as handle:
            sentences = [line.strip() for line in handle if line.strip()]
    else:
        import random
        rng = random.Random(1)
        sentences = ["".join(rng.choice("abcd") for _ in range(rng.randint(1, 5)))
                     for _ in range(500)]
    levels = [int(c) for c in args.clients.split(",") if c.strip()]
    served = serve_levels(args, sentences, levels, 100000) if levels else []
    overload = None
    if args.overload_clients:
        overload = serve_levels(args, sentences, [args.overload_clients],
                                args.overload_queue)[0]
        overload["max_queue"] = args.overload_queue
        overload["request_timeout"] = args.request_timeout
    direct = offline(args, sentences)
    quantization = export_quantization(args.model) or (
        args.quantization if direct["engine"] == "ctranslate2" else "float32")
    label = args.label or "%s %s" % (args.model, direct["engine"])
    result = {"label": label, "model": args.model, "note": args.note,
              "engine": direct["engine"], "quantization": quantization,
              "beam_size": args.beam_size, "max_batch_size": args.max_batch_size,
              "max_wait_ms": args.max_wait_ms, "threads": args.threads,
              "client_library": args.client_library, "offline": direct,
              "served": served, "overload": overload, "machine": machine()}
    print("%s: offline %.1f sentences/s, %.0f tokens/s; one sentence p50 %.1f ms" % (
        label, direct["sentences_per_second"], direct["tokens_per_second"],
        direct["single_sentence_p50_ms"]))
    print("clients  req/s  tokens/s  vs offline  p50 ms  p95 ms  p99 ms  batch  engine ms  "
          "codes")
    for level in served + ([overload] if overload else []):
        print("%7d %6.1f %9.0f %10.0f%% %7s %7s %7s %6.1f %10.1f  %s %s" % (
            level["clients"], level["requests_per_second"], level["tokens_per_second"],
            100 * level["translations_per_second"] / direct["sentences_per_second"],
            *["%.1f" % level[k] if level[k] is not None else "-"
              for k in ("p50_ms", "p95_ms", "p99_ms")],
            level["mean_batch_size"], level["mean_batch_engine_ms"], level["codes"],
            level["batches_closed"]))
    if args.out:
        add_run(args.out, result)


def add_run(path, result):
    """Add `result` to the JSON at `path` ({"runs": [...]}), replacing the run of its label."""
    from t2t.core import atomic_files
    results = {"runs": []}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            results = json.load(handle)
    results["runs"] = [r for r in results.get("runs", []) if r.get("label") != result["label"]]
    results["runs"].append(result)
    with atomic_files.atomic_write(path, "w") as handle:
        json.dump(results, handle, indent=1)
        handle.write("\n")


if __name__ == "__main__":
    main()
