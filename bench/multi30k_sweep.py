"""The same learning-rate sweep for t2t, OpenNMT-tf and eole on Multi30k, chosen on val.

Every system trains once per point of one grid (the Noam schedule's constant x its warmup,
the same grid for all three: all use the same formula) for `--budgets_minutes` of wall
clock, with everything else as in bench_multi30k.py. The last checkpoint written within the
budget decodes val (1,014 sentences) and test_2016_flickr (beam 4, alpha 0.6). A system's
best point is the one with the highest **val** BLEU; test BLEU is reported for every point
and never used to choose.

Points land in bench/results/multi30k.json under "sweep" as each finishes, so a sweep that
was stopped (or runs over several sittings) goes on where it stopped: a point already there
with the same budget is not trained again (--redo trains them all).

The same script runs the ablations at the points given: `--peer_embedding_init=t2t` trains
the peers with t2t's embedding initialization, normal(0, d^-0.5);
`--t2t_hparams_set=transformer_multi30k_glorot_embeddings` trains t2t with theirs (Glorot
uniform; bench/multi30k_ablations); `--peer_biases=t2t` gives the peers t2t's biases;
`--peer_source_eos` ends the peers' source sentences with t2t's EOS id, as t2t's inputs end
(theirs have no end marker by default); `--peer_batching=t2t` has OpenNMT-tf repeat its data
before batching, as t2t does (bench/multi30k_batches.py shows why). Such points are stored
with a "variant" naming the change and are never candidates for a system's best; with
`--max_steps` a point stops at that step (stored with "max_steps"), to be set against
points that decoded the same step.

    python bench/multi30k_sweep.py --systems=eole            # 4 points x 10 min
    python bench/multi30k_sweep.py --learning_rates=1.5,3 --warmups=300,600 \\
        --systems=t2t,opennmt_tf,eole --budgets_minutes=10
    python bench/multi30k_sweep.py --systems=opennmt_tf,eole --learning_rates=1.5 \
        --warmups=300 --peer_embedding_init=t2t                 # an ablation
    python bench/multi30k_sweep.py --systems=t2t --learning_rates=1.5 --warmups=300 \
        --t2t_hparams_set=transformer_multi30k_glorot_embeddings  # and t2t's side
    python bench/multi30k_sweep.py --systems=opennmt_tf,eole --learning_rates=1.5 \
        --warmups=300 --peer_source_eos                         # EOS on the source
    python bench/multi30k_sweep.py --systems=opennmt_tf --learning_rates=1.5 --warmups=300 \
        --peer_embedding_init=t2t --peer_batching=t2t --max_steps=200  # no pass-end flush
    python bench/multi30k_sweep.py --budgets_minutes=1 --checkpoint_steps=10 \
        --test_lines=20 --out=                                  # a smoke run
"""
import argparse
import json
import itertools
import os
import re
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_multi30k  # noqa: E402  (bench/bench_multi30k.py)

log = bench_multi30k.log


def variant(point):
    """What an ablation changed: "default" for each toolkit's own configuration, else
    e.g. "peer_embedding_init=t2t" or "t2t_hparams_set=transformer_multi30k_glorot_..."."""
    return point.get("variant", "default")


def point_key(point):
    return (point["system"], float(point["learning_rate"]), int(point["warmup_steps"]),
            float(point["minutes"]), variant(point), point.get("max_steps", 0))


def candidate(point, budget):
    """A point of `budget` minutes, of the toolkit's own configuration, run to its budget."""
    return (point["minutes"] == budget and variant(point) == "default" and
            not point.get("max_steps"))


def best_points(points, budget):
    """{system: the point of `budget` minutes with the highest val BLEU} (ties: the first),
    among the points of each toolkit's own configuration run to the budget (ablations and
    points stopped at --max_steps are not candidates).

        best_points([{"system": "t2t", "minutes": 10, "val_bleu": 3.0, ...},
                     {"system": "t2t", "minutes": 10, "val_bleu": 5.0, ...}], 10)
        # {"t2t": the second point}
    """
    best = {}
    for point in points:
        if not candidate(point, budget) or point.get("val_bleu") is None:
            continue
        if point["system"] not in best or point["val_bleu"] > best[point["system"]]["val_bleu"]:
            best[point["system"]] = point
    return best


def best_summary(points, budget):
    """{system: its best point's settings and BLEU, and out of how many points}."""
    return {system: dict({k: point[k] for k in ("learning_rate", "warmup_steps", "minutes",
                                                  "val_bleu", "test_bleu")},
                         out_of_points=sum(1 for p in points if p["system"] == system and
                                           candidate(p, budget)))
            for system, point in best_points(points, budget).items()}


def points_to_train(args, points):
    """[(system, learning rate, warmup)] of the grid that `points` doesn't hold yet for this
    budget, variant and --max_steps (all of them with --redo)."""
    done = {point_key(p) for p in points}
    return [(system, learning_rate, warmup) for system in args.systems
            for learning_rate, warmup in args.grid
            if args.redo or (system, learning_rate, warmup, float(args.budgets[0]),
                             bench_multi30k.variant_of(system, args),
                             args.max_steps or 0) not in done]


def run_point(system, learning_rate, warmup, args, data):
    """Train one point, decode val and test at the budget, keep the logs and decodes (the
    checkpoints go: a sweep would fill the disk)."""
    minutes = args.budgets[0]
    args.learning_rate, args.warmup_steps = learning_rate, warmup
    changed = bench_multi30k.variant_of(system, args)
    run_dir = os.path.join(args.work_dir, "sweep", "%s_lr%s_warmup%d_%smin%s%s" % (
        system, learning_rate, warmup, minutes,
        "" if changed == "default" else "_" + re.sub(r"[=,]", "_", changed),
        "_max%d" % args.max_steps if args.max_steps else ""))
    load = os.getloadavg()[0]
    trained = bench_multi30k.train_system(system, args, data, run_dir)
    val = bench_multi30k.decode_budget(trained, minutes, data, "val")
    test = bench_multi30k.decode_budget(trained, minutes, data, "test")
    for name in ("kept", "train", "model"):
        shutil.rmtree(os.path.join(run_dir, name), ignore_errors=True)
    curve = trained["loss"]["curve"]
    point = {"system": system, "learning_rate": learning_rate, "warmup_steps": warmup,
             "minutes": minutes, "step": val["step"], "val_bleu": val["bleu"],
             "test_bleu": test["bleu"], "signature": test.get("signature"),
             "train_tokens_per_sec": trained["train_tokens_per_sec"],
             "final_loss": curve[-1][2] if curve else None, "loss_curve": curve,
             "version": trained["version"], "load_average_at_start": round(load, 2),
             "date": time.strftime("%Y-%m-%d")}
    if changed != "default":
        point["variant"] = changed
    if args.max_steps:  # stopped at a step: set against points of that step, not of a budget
        point["max_steps"] = args.max_steps
    return point


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], add_help=False)
    parser.add_argument("--learning_rates", default="1.5,3",
                        help="comma-separated Noam constants")
    parser.add_argument("--warmups", default="300,600", help="comma-separated warmup steps")
    parser.add_argument("--redo", action="store_true",
                        help="train every point, also those already in --out")
    args = bench_multi30k.parse_with_own_flags(
        parser, argv, ["--budgets_minutes=10", "--plot="],
        "--budgets_minutes takes one budget here", check=grid_of)
    if len(args.budgets) != 1:
        sys.exit("multi30k_sweep: --budgets_minutes=%s: give one budget (e.g. 10)"
                 % args.budgets_minutes)
    args.grid = grid_of(args)
    return args


def grid_of(flags):
    """The (learning rate, warmup) points of --learning_rates x --warmups."""
    try:
        return [(float(lr), int(w)) for lr, w in itertools.product(
            flags.learning_rates.split(","), flags.warmups.split(","))]
    except ValueError:
        sys.exit("multi30k_sweep: --learning_rates=%s --warmups=%s: give numbers like "
                 "1.5,3 and 300,600" % (flags.learning_rates, flags.warmups))


def main(argv=None):
    args = parse_args(argv)
    start = time.monotonic()
    data = bench_multi30k.begin(args)
    sweep = {"points": []}
    if args.out and os.path.exists(args.out):
        sweep = json.load(open(args.out)).get("sweep", sweep)
    minutes = args.budgets[0]
    todo = points_to_train(args, sweep["points"])
    log("sweep: %d points to train (%d already in %s), %s min each" % (
        len(todo), len(args.systems) * len(args.grid) - len(todo), args.out or "-", minutes))
    for number, (system, learning_rate, warmup) in enumerate(todo, 1):
        log("sweep point %d/%d: %s, learning rate %s, warmup %d" % (
            number, len(todo), system, learning_rate, warmup))
        point = run_point(system, learning_rate, warmup, args, data)
        sweep["points"] = [p for p in sweep["points"] if point_key(p) != point_key(point)]
        sweep["points"].append(point)
        sweep.update({"selection": "the highest val BLEU (beam 4, alpha 0.6) at the budget; "
                                   "test BLEU is never used to choose",
                      "val": "Multi30k val (1,014 sentences)", "test": "test_2016_flickr",
                      "best": best_summary(sweep["points"], minutes)})
        if args.out:
            bench_multi30k.write_results(args.out, {"sweep": sweep})
    print("\n%-11s %6s %7s %6s %9s %10s" % ("system", "lr", "warmup", "step", "val BLEU",
                                            "test BLEU"))
    best = best_points(sweep["points"], minutes)
    for point in sorted(sweep["points"], key=point_key):
        if point["minutes"] == minutes:
            print("%-11s %6s %7d %6s %9s %10s%s" % (
                point["system"] + ("*" if variant(point) != "default" else ""),
                point["learning_rate"], point["warmup_steps"], point["step"],
                point["val_bleu"], point["test_bleu"],
                "  <- best on val" if best.get(point["system"]) is point else
                "  (stopped at --max_steps)" if point.get("max_steps") else ""))
    ablations = sorted({variant(p) for p in sweep["points"]} - {"default"})
    if ablations:
        print("(* an ablation: %s)" % ", ".join(ablations))
    log("sweep done: %d points trained, %.1f min" % (len(todo),
                                                     (time.monotonic() - start) / 60))


if __name__ == "__main__":
    main()
