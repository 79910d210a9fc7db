"""t2t-serve under load on loopback, beside the same engine's offline throughput.

A `t2t-serve` process serves `--model`; this process is the load generator: for each
concurrency level N in `--clients`, N client threads each send `--requests` one-sentence
requests (bounded: N x M requests in all, sentences taken in turn from `--sentences`) to
POST /v1/translate and time each answer. Per level: requests/s, generated tokens/s (the
server's t2t_serve_tokens_out_total over the level's wall time), p50/p95/p99 latency, the
mean batch size (t2t_serve_batch_size), and the answers that were not 200 (429/504 count as
answered: no request goes without an answer). Beside it, in this process, the same model
with the same engine offline: `t2t.load(...).decode` of all the sentences in batches of
`--max_batch_size` (sentences/s, tokens/s), and of one sentence at a time (p50 latency).

    python bench/bench_serving.py --model=~/t2t_train/m30k --sentences=test_2016_flickr.en
    python bench/bench_serving.py --model=/tmp/tiny/train --clients=1,8 --requests=20 --out=
    # adds its run to bench/results/serving.json (--out; one run per model and engine) and
    # prints the table
"""
import argparse
import concurrent.futures
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


def offline(args, sentences):
    import t2t
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


def load_level(httpx, url, sentences, clients, requests, beam_size):
    latencies, codes, lock = [], {}, threading.Lock()
    before = httpx.get(url + "/metrics").text

    def client(number):
        with httpx.Client(timeout=120) as session:
            for index in range(requests):
                sentence = sentences[(number * requests + index) % len(sentences)]
                started = time.perf_counter()
                answer = session.post(url + "/v1/translate",
                                      json={"inputs": sentence, "beam_size": beam_size})
                with lock:
                    latencies.append(time.perf_counter() - started)
                    codes[answer.status_code] = codes.get(answer.status_code, 0) + 1

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    seconds = time.perf_counter() - started
    after = httpx.get(url + "/metrics").text

    def delta(name):
        return metric_sum(after, name) - metric_sum(before, name)

    batches = delta("t2t_serve_batch_size_count")
    return {"clients": clients, "requests": clients * requests,
            "answered": sum(codes.values()), "codes": {str(k): v for k, v in codes.items()},
            "requests_per_second": clients * requests / seconds,
            "tokens_per_second": delta("t2t_serve_tokens_out_total") / seconds,
            "p50_ms": 1000 * percentile(latencies, 50), "p95_ms": 1000 * percentile(latencies, 95),
            "p99_ms": 1000 * percentile(latencies, 99),
            "mean_batch_size": delta("t2t_serve_batch_size_sum") / batches if batches else 0,
            "mean_batch_engine_ms": 1000 * delta("t2t_serve_batch_seconds_sum") / batches
            if batches else 0}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--engine", default=None)
    parser.add_argument("--quantization", default="float32")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sentences", default=None, help="one sentence a line (default: "
                        "made-up words for the tests' character model)")
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--requests", type=int, default=50, help="requests per client")
    parser.add_argument("--beam_size", type=int, default=4)
    parser.add_argument("--max_batch_size", type=int, default=32)
    parser.add_argument("--max_wait_ms", type=float, default=5.0)
    parser.add_argument("--single_count", type=int, default=50)
    parser.add_argument("--note", default="", help="what the model is (kept in the JSON)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results",
                                                      "serving.json"))
    args = parser.parse_args()
    import httpx
    if args.sentences:
        with open(args.sentences, encoding="utf-8") as handle:
            sentences = [line.strip() for line in handle if line.strip()]
    else:
        import random
        rng = random.Random(1)
        sentences = ["".join(rng.choice("abcd") for _ in range(rng.randint(1, 5)))
                     for _ in range(500)]
    port = free_port()
    url = "http://127.0.0.1:%d" % port
    command = [sys.executable, "-m", "t2t.bin.t2t_serve", "--model=bench=" + args.model,
               "--port=%d" % port, "--threads=%d" % args.threads,
               "--quantization=" + args.quantization,
               "--max_batch_size=%d" % args.max_batch_size,
               "--max_wait_ms=%g" % args.max_wait_ms, "--max_queue=100000"]
    if args.engine:
        command.append("--engine=" + args.engine)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                if httpx.get(url + "/ready", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                sys.exit("t2t-serve did not get ready: %s" % " ".join(command))
            time.sleep(0.2)
        httpx.post(url + "/v1/translate", json={"inputs": sentences[:4],
                                                "beam_size": args.beam_size}, timeout=600)
        levels = [load_level(httpx, url, sentences, int(c), args.requests, args.beam_size)
                  for c in args.clients.split(",")]
    finally:
        server.terminate()
        server.wait(120)
    direct = offline(args, sentences)
    result = {"model": args.model, "note": args.note, "engine": direct["engine"], "beam_size": args.beam_size,
              "max_batch_size": args.max_batch_size, "max_wait_ms": args.max_wait_ms,
              "threads": args.threads, "offline": direct, "served": levels,
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version()}}
    print("offline: %.1f sentences/s, %.0f tokens/s; one sentence p50 %.1f ms" % (
        direct["sentences_per_second"], direct["tokens_per_second"],
        direct["single_sentence_p50_ms"]))
    print("clients  req/s  tokens/s  vs offline  p50 ms  p95 ms  p99 ms  batch  engine ms  "
          "codes")
    for level in levels:
        print("%7d %6.1f %9.0f %10.0f%% %7.1f %7.1f %7.1f %6.1f %10.1f  %s" % (
            level["clients"], level["requests_per_second"], level["tokens_per_second"],
            100 * level["requests_per_second"] / direct["sentences_per_second"],
            level["p50_ms"], level["p95_ms"], level["p99_ms"], level["mean_batch_size"],
            level["mean_batch_engine_ms"], level["codes"]))
    if args.out:  # {"runs": [...]}: this run replaces the one of the same model and engine
        from t2t.core import atomic_files
        runs = []
        if os.path.exists(args.out):
            with open(args.out, encoding="utf-8") as handle:
                runs = json.load(handle).get("runs", [])
        runs = [r for r in runs if (r["model"], r["engine"]) != (args.model, result["engine"])]
        with atomic_files.atomic_write(args.out, "w") as handle:
            json.dump({"runs": runs + [result]}, handle, indent=1)
            handle.write("\n")


if __name__ == "__main__":
    main()
