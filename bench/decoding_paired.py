"""Decoding speed of this checkout against another one (e.g. a git worktree of main), paired.

Two worker processes, one importing t2t from each checkout, decode the same file with
`decoding.decode_from_file` at the same time (so the machine's load hits both alike),
`--repeats` times each; a worker times the session runs of the predictions (graph
building and checkpoint loading excluded) by wall clock and process CPU time. The
report is the median of the per-repeat ratios (this / baseline; below 1: this checkout
is faster), generated tokens/s and sentences/s, and whether both wrote the same decodes.
Not run by `make bench` (it needs a trained model and a second checkout):

    git worktree add --detach /tmp/t2t-main main
    python bench/decoding_paired.py --baseline=/tmp/t2t-main --model_dir=~/t2t_train/m30k \\
        --data_dir=~/t2t_data --problem=translate_ende_multi30k \\
        --hparams_set=transformer_multi30k --source=test_2016_flickr.en \\
        --decode_hparams=beam_size=4,alpha=0.6,batch_size=32 --repeats=3
    # rep 0: cpu ratio 0.91  wall ratio 0.93 ...
    # median cpu ratio 0.91, wall ratio 0.92; decodes identical: True

`--baseline_decode_hparams` decodes the baseline with other decode hparams (e.g. the same
checkout, `--baseline=.`, T2T's stopping bound against `stopping_bound=current_length`).
`--reference` adds each side's BLEU (`bleu_hook.bleu_wrapper`, as t2t-bleu's uncased
score); `--record=NAME` stores the figures under "paired" / NAME in
bench/results/decoding.json. The decodes stay in the folder printed at the end.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(args):
    """Decode `args.source` `args.repeats` times; print one JSON line per repeat."""
    import tensorflow as tf
    from absl import logging
    from t2t.core import registry
    from t2t.decoding import decoding, predictor
    from t2t.model import model_hparams
    logging.set_verbosity(logging.WARNING)
    hparams = registry.hparams(args.hparams_set)
    hparams.add_hparam("data_dir", os.path.expanduser(args.data_dir))
    model_hparams.add_problem_hparams(hparams, args.problem)
    decode_hp = decoding.decode_hparams(args.decode_hparams + ",log_results=false")
    seconds = [0.0, 0.0]
    session_run = tf.compat.v1.Session.run

    def timed_run(session, fetches, *run_args, **run_kwargs):
        # Only the runs that fetch predictions (not the checkpoint restore).
        if not (isinstance(fetches, dict) and "outputs" in fetches):
            return session_run(session, fetches, *run_args, **run_kwargs)
        wall, cpu = time.perf_counter(), time.process_time()
        result = session_run(session, fetches, *run_args, **run_kwargs)
        seconds[0] += time.perf_counter() - wall
        seconds[1] += time.process_time() - cpu
        return result

    if args.backend == "estimator":
        from tensorflow.python.training import monitored_session
        session_class, session_run = monitored_session.MonitoredSession, \
            monitored_session.MonitoredSession.run
    else:
        session_class = tf.compat.v1.Session
    session_class.run = timed_run
    runner = predictor.create_predictor(args.model, hparams, os.path.expanduser(args.model_dir),
                                        decode_hp, backend=args.backend)
    vocabulary = hparams.problem_hparams.vocabulary["targets"]
    for repeat in range(args.repeats):
        seconds[:] = [0.0, 0.0]
        decodes = decoding.decode_from_file(runner, os.path.expanduser(args.source), hparams,
                                            decode_hp, decode_to_file=args.output)
        tokens = sum(len(vocabulary.encode(line)) + 1 for line in decodes)  # + EOS
        print("RESULT " + json.dumps({"repeat": repeat, "seconds": seconds[0],
                                      "cpu_seconds": seconds[1], "tokens": tokens,
                                      "sentences": len(decodes)}), flush=True)


def _start(checkout, args, output, decode_hparams):
    argv = [sys.executable, os.path.abspath(__file__), "--worker", "--output", output,
            "--decode_hparams=" + decode_hparams]
    for name in ("model", "hparams_set", "problem", "data_dir", "model_dir", "source",
                 "backend"):
        argv.append("--%s=%s" % (name, getattr(args, name)))
    argv.append("--repeats=%d" % args.repeats)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(checkout))
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", help="the other checkout (its folder holding t2t/)")
    parser.add_argument("--model", default="transformer")
    parser.add_argument("--hparams_set", default="transformer_multi30k")
    parser.add_argument("--problem", default="translate_ende_multi30k")
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--decode_hparams", default="beam_size=4,alpha=0.6,batch_size=32")
    parser.add_argument("--baseline_decode_hparams",
                        help="the baseline's decode hparams (default: --decode_hparams)")
    parser.add_argument("--backend", default="native", choices=["native", "estimator"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reference", help="reference translations: report BLEU")
    parser.add_argument("--record", help="store the figures under this name in "
                                         "bench/results/decoding.json")
    parser.add_argument("--note", default="", help="a description stored with --record")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if not args.baseline or not os.path.isdir(os.path.join(args.baseline, "t2t")):
        parser.error("--baseline must be a checkout of t2t (a folder holding t2t/)")
    workdir = tempfile.mkdtemp(prefix="decoding_paired_")
    sides = {"this": os.path.dirname(HERE), "baseline": args.baseline}
    outputs = {side: os.path.join(workdir, side + ".decodes") for side in sides}
    decode_hparams = {"this": args.decode_hparams,
                      "baseline": args.baseline_decode_hparams or args.decode_hparams}
    processes = {side: _start(checkout, args, outputs[side], decode_hparams[side])
                 for side, checkout in sides.items()}
    results = {}
    for side, process in processes.items():
        lines = [json.loads(line[len("RESULT "):]) for line in process.stdout
                 if line.startswith("RESULT ")]
        if process.wait() != 0 or len(lines) != args.repeats:
            sys.exit("decoding_paired: the %s worker failed (exit %s)"
                     % (side, process.returncode))
        results[side] = lines
    ratios = {"cpu": [], "wall": []}
    for this, baseline in zip(results["this"], results["baseline"]):
        ratios["cpu"].append(this["cpu_seconds"] / baseline["cpu_seconds"])
        ratios["wall"].append(this["seconds"] / baseline["seconds"])
        print("repeat %d: cpu ratio %.3f  wall ratio %.3f" % (this["repeat"],
                                                               ratios["cpu"][-1],
                                                               ratios["wall"][-1]))
    for side, lines in results.items():
        seconds = float(np.median([line["seconds"] for line in lines]))
        print("%-8s median %.2f s: %.1f generated tokens/s, %.2f sentences/s" % (
            side, seconds, lines[0]["tokens"] / seconds, lines[0]["sentences"] / seconds))
    with open(outputs["this"]) as this, open(outputs["baseline"]) as baseline:
        this_lines, baseline_lines = this.read().splitlines(), baseline.read().splitlines()
    differing = sum(a != b for a, b in zip(this_lines, baseline_lines))
    print("median cpu ratio %.3f, wall ratio %.3f; decodes identical: %s (%d of %d lines "
          "differ)" % (np.median(ratios["cpu"]), np.median(ratios["wall"]),
                       this_lines == baseline_lines, differing, len(this_lines)))
    bleu = {}
    if args.reference:
        sys.path.insert(0, os.path.dirname(HERE))
        from t2t.evaluation import bleu_hook
        for side in sides:
            bleu[side] = 100 * float(bleu_hook.bleu_wrapper(
                os.path.expanduser(args.reference), outputs[side]))
        print("BLEU (uncased): this %.2f, baseline %.2f" % (bleu["this"], bleu["baseline"]))
    print("decodes in %s" % workdir)
    if args.record:
        _record(args, ratios, results, differing, len(this_lines), bleu)


def _record(args, ratios, results, differing, lines, bleu):
    sys.path.insert(0, os.path.dirname(HERE))
    from t2t.core import atomic_files
    path = os.path.join(HERE, "results", "decoding.json")
    with open(path) as f:
        data = json.load(f)
    data.setdefault("paired", {})[args.record] = {
        "note": args.note, "backend": args.backend, "decode_hparams": args.decode_hparams,
        "baseline_decode_hparams": args.baseline_decode_hparams or args.decode_hparams,
        "source": os.path.basename(args.source), "sentences": lines,
        "repeats": args.repeats,
        "cpu_ratio_median": float(np.median(ratios["cpu"])),
        "wall_ratio_median": float(np.median(ratios["wall"])),
        "cpu_ratios": ratios["cpu"], "wall_ratios": ratios["wall"],
        "seconds": {side: [line["seconds"] for line in lines_]
                    for side, lines_ in results.items()},
        "cpu_seconds": {side: [line["cpu_seconds"] for line in lines_]
                        for side, lines_ in results.items()},
        "differing_lines": differing, "bleu": bleu}
    with atomic_files.atomic_write(path, "w") as f:
        json.dump(data, f, indent=2)
    print("recorded %s in %s" % (args.record, path))


if __name__ == "__main__":
    main()
