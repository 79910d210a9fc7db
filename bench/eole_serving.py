"""`eole serve` under the load bench_serving.py puts on t2t-serve: the peer row of issue 48.

eole 0.6.4's server (FastAPI, its venv from bench_multi30k.py) serves eole's Multi30k model
(a `step_N` folder that `bench/bench_multi30k.py --systems=eole` trained on t2t's subword
ids); this process is the same load generator as bench_serving.py's: per concurrency level
N clients, each on one keep-alive connection, send one-sentence requests (POST /infer) one
after another. eole batches up to `batch_size` *requests* after waiting `batch_timeout`
seconds for the first; as shipped 8 and 0.1 s, here also tuned (`--batch_size`,
`--batch_timeout`). Every request asks for what t2t-serve decodes with: beam 4, GNMT's
length penalty with alpha 0.6, at most 200 tokens.

eole's model reads t2t's subword ids as tokens ("t17 t4 ...", see multi30k_peers), so the
client sends each sentence already encoded by t2t's vocabulary: eole's server does no
subword encoding, t2t-serve does its own inside the measured time. Generated tokens are
counted from the answers (one per token, and one for the end of the sentence, as
t2t-serve's `t2t_serve_tokens_out_total` counts).

    python bench/eole_serving.py --eole_model=/tmp/t2t_bench_multi30k/runs/eole/kept/.../step_500 \\
        --vocab=/work/m30k/data/vocab.translate_ende_multi30k.8192.subwords \\
        --sentences=/work/m30k/data/translate_ende_multi30k.test_2016_flickr.en \\
        --label="eole serve (as shipped)" --clients=1,8,32,64 --total_requests=128
    # adds its run to bench/results/serving.json (--out; one run per --label)
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import bench_serving  # noqa: E402
import multi30k_peers  # noqa: E402


SHIPPED_BATCH_TIMEOUT = 0.1  # eole 0.6.4's, and the only one its config can give


def server_config(path, model, batch_size, beam_size):
    """eole's server_conf.yaml (JSON is YAML): one model, preloaded, on the CPU in float32.
    (Its batch timeout cannot be set here: see eole_entry.py's --serve_batch_timeout.)"""
    config = {"models_root": os.path.dirname(model), "model_policy": "keep_loaded",
              "models": [{"id": "m30k", "path": model, "preload": True, "config": {
                  "batch_size": batch_size, "batch_type": "sents", "beam_size": beam_size, "length_penalty": "wu",
                  "alpha": 0.6, "max_length": 200, "compute_dtype": "fp32", "seed": 1}}]}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=1)
    return path


def start_eole(args, config_path, log_path):
    """`eole serve` (threads as t2t-serve's --threads), once /health answers: (process, URL)."""
    port = bench_serving.free_port()
    url = "http://127.0.0.1:%d" % port
    python = os.path.join(args.venv_dir, "eole", "bin", "python")
    if not os.path.exists(python):
        sys.exit("no eole venv at %s: bench/bench_multi30k.py --systems=eole creates it"
                 % os.path.dirname(os.path.dirname(python)))
    command = [python, os.path.join(HERE, "eole_entry.py"), "--threads=%d" % args.threads]
    if args.batch_timeout != SHIPPED_BATCH_TIMEOUT:
        command.append("--serve_batch_timeout=%r" % args.batch_timeout)
    command += ["--", "serve", "-c", config_path, "--host", "127.0.0.1", "--port", str(port)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS=str(args.threads))
    with open(log_path, "w") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    bench_serving.wait_until_up(
        server, url + "/health", "eole serve did not start (log: %s): %s" % (
            log_path, " ".join(command)), poll=0.5)
    return server, url


def tokens_of(answer):
    """Generated tokens of one /infer answer (its best prediction), the end included."""
    return sum(len(predictions[0].split()) + 1 for predictions in answer["predictions"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eole_model", required=True, help="eole's step_N folder")
    parser.add_argument("--vocab", required=True, help="t2t's subword vocabulary the eole "
                        "model was trained on")
    parser.add_argument("--sentences", required=True, help="one sentence a line")
    parser.add_argument("--label", default="eole serve")
    parser.add_argument("--batch_size", type=int, default=8, help="eole's: requests a batch")
    parser.add_argument("--batch_timeout", type=float, default=SHIPPED_BATCH_TIMEOUT,
                        help="eole's: seconds a batch waits after its first request")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--client_library", choices=("httpx", "http.client"),
                        default="http.client")
    parser.add_argument("--beam_size", type=int, default=4)
    parser.add_argument("--clients", default="1,8,32,64")
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--total_requests", type=int, default=0)
    parser.add_argument("--venv_dir", default=os.path.expanduser("~/.cache/t2t/bench_venvs"))
    parser.add_argument("--work_dir", default="/tmp/t2t_bench_eole_serving")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "serving.json"))
    args = parser.parse_args()
    import httpx
    from t2t.encoders import text_encoder

    encoder = text_encoder.SubwordTextEncoder(args.vocab)
    with open(args.sentences, encoding="utf-8") as handle:
        sentences = [line.strip() for line in handle if line.strip()]
    settings = {"model": "m30k", "beam_size": args.beam_size, "length_penalty": "wu",
                "alpha": 0.6, "max_length": 200}
    bodies = [dict(settings, inputs=multi30k_peers.ids_to_tokens(encoder.encode(s)))
              for s in sentences]
    os.makedirs(args.work_dir, exist_ok=True)
    config_path = server_config(os.path.join(args.work_dir, "server_conf.json"),
                                os.path.abspath(args.eole_model), args.batch_size,
                                args.beam_size)
    server, url = start_eole(args, config_path, os.path.join(args.work_dir, "serve.log"))
    try:
        first = httpx.post(url + "/infer", json=bodies[0], timeout=600)
        if first.status_code != 200:
            sys.exit("eole serve answered %d: %s" % (first.status_code, first.text[:500]))
        sample = encoder.decode(multi30k_peers.tokens_to_ids(first.json()["predictions"][0][0]))
        print("%s -> %s" % (sentences[0], sample), flush=True)
        served = []
        for clients in [int(c) for c in args.clients.split(",") if c.strip()]:
            requests = bench_serving.requests_per_client(args.total_requests, args.requests,
                                                         clients)
            served.append(bench_serving.load_level(httpx, url, bodies, clients, requests,
                                                   path="/infer", tokens_of=tokens_of,
                                                   client_library=args.client_library))
            print("  %d clients done: %s" % (clients, served[-1]["codes"]), flush=True)
    finally:
        server.terminate()
        server.wait(120)
    result = {"label": args.label, "model": args.eole_model, "engine": "eole serve",
              "server": "eole 0.6.4 (torch 2.13.0, CPU)", "quantization": "float32",
              "beam_size": args.beam_size, "eole_batch_size": args.batch_size,
              "eole_batch_timeout_s": args.batch_timeout, "threads": args.threads,
              "client_library": args.client_library,
              "sample": sample, "offline": None, "served": served, "overload": None,
              "machine": bench_serving.machine()}
    print("clients  req/s  tokens/s  p50 ms  p95 ms  p99 ms  codes")
    for level in served:
        print("%7d %6.1f %9.0f %7.1f %7.1f %7.1f  %s" % (
            level["clients"], level["requests_per_second"], level["tokens_per_second"],
            level["p50_ms"], level["p95_ms"], level["p99_ms"], level["codes"]))
    if args.out:
        bench_serving.add_run(args.out, result)


if __name__ == "__main__":
    main()
