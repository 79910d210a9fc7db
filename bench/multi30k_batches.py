"""What OpenNMT-tf's training batches hold on Multi30k, with and without --peer_batching=t2t.

OpenNMT-tf batches each pass over the training data into length buckets and repeats the
batched passes, so every pass ends by flushing its part-filled buckets: a run of small
batches (some of one sentence) that it trains on like any other. t2t repeats before it
batches (as T2T did), so its batches stay full. This script builds OpenNMT-tf's training
dataset exactly as its runner does for the bench's config (bench/opennmt_batches_entry.py,
in its venv; nothing is trained), for the default pipeline and for the ablation
`--peer_batching=t2t` (each pass shuffled and repeated before batching), and summarizes the
first `--batches` batches: how many passes they span, how many hold under half the token
budget, and the target tokens per batch.

    python bench/multi30k_batches.py                 # about 2 minutes
    python bench/multi30k_batches.py --batches=200 --out=

Writes "opennmt_tf_batches" into bench/results/multi30k.json (the other keys kept).
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_multi30k  # noqa: E402  (bench/bench_multi30k.py)

multi30k_peers = bench_multi30k.multi30k_peers
log = bench_multi30k.log
BATCH_TOKENS = 4096  # the bench's train.batch_size for every system (tokens)


def batch_summary(rows, batch_tokens, pass_examples):
    """Counts over batch rows [examples, source length, target length, source tokens,
    target tokens]: a batch is "small" when it fills under half of `batch_tokens`, counted
    as OpenNMT-tf counts it (examples x the longer padded side); passes are counted in
    examples (`pass_examples` per pass). For example, two full batches and a flush of one:

        batch_summary([[100, 40, 40, 3800, 3900], [100, 40, 40, 3700, 3800],
                       [1, 4, 4, 4, 4]], 4096, 201)
        # {"batches": 3, "passes": 1.0, "small_batches": 1, "small_batch_steps": [3],
        #  "target_tokens_mean": 2568, "target_tokens_min": 4, ...}
    """
    small = [step for step, (examples, source_length, target_length, _, _)
             in enumerate(rows, 1)
             if examples * max(source_length, target_length) < batch_tokens / 2]
    target_tokens = [row[4] for row in rows]
    return {"batches": len(rows),
            "passes": round(sum(row[0] for row in rows) / pass_examples, 2),
            "small_batches": len(small), "small_batch_steps": small,
            "single_sentence_batches": sum(1 for row in rows if row[0] == 1),
            "target_tokens_mean": round(statistics.mean(target_tokens)),
            "target_tokens_min": min(target_tokens),
            "target_tokens_total": sum(target_tokens)}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], add_help=False)
    parser.add_argument("--batches", type=int, default=500,
                        help="how many batches of each pipeline to read")
    return bench_multi30k.parse_with_own_flags(
        parser, argv, ["--systems=opennmt_tf", "--plot="], "--work_dir, --venv_dir, --out, ...",
        check=check_flags)


def check_flags(own):
    if own.batches < 1:
        sys.exit("multi30k_batches: --batches=%d: give a positive number" % own.batches)


def main(argv=None):
    args = parse_args(argv)
    start = time.monotonic()
    data = bench_multi30k.begin(args)
    with open(os.path.join(data["peer_dir"], "train.src")) as handle:
        pass_examples = sum(1 for _ in handle)
    result = {"date": time.strftime("%Y-%m-%d"), "train_examples": pass_examples}
    for batching in ("default", "t2t"):
        args.peer_batching = batching
        run_dir = os.path.join(args.work_dir, "batches", batching)
        os.makedirs(run_dir, exist_ok=True)
        peer = multi30k_peers.PEERS["opennmt_tf"](args, data, run_dir, log)
        peer.write_config()
        out = os.path.join(run_dir, "batches.json")
        log("opennmt_tf, --peer_batching=%s: reading %d training batches" % (
            batching, args.batches))
        bench_multi30k.run_checked(
            [peer.python, os.path.join(HERE, "opennmt_batches_entry.py"), run_dir,
             str(args.batches), out], env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
            log_path=os.path.join(run_dir, "batches.log"))
        with open(out) as handle:
            rows = json.load(handle)["batches"]
        result[batching] = summary = batch_summary(rows, BATCH_TOKENS, pass_examples)
        log("%s: %d batches over %.2f passes, %d under half the budget (%d of one sentence), "
            "%s target tokens per batch (min %d)" % (
                batching, summary["batches"], summary["passes"], summary["small_batches"],
                summary["single_sentence_batches"],
                "{:,}".format(summary["target_tokens_mean"]), summary["target_tokens_min"]))
    result["version"] = multi30k_peers.OpenNMTTF.version
    if args.out:
        bench_multi30k.write_results(args.out, {"opennmt_tf_batches": result})
    log("done in %.0f s" % (time.monotonic() - start))


if __name__ == "__main__":
    main()
