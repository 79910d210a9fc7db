"""Training tokens/s of t2t, OpenNMT-tf and eole on Multi30k, measured in turn and paired.

The machine is shared: its speed drifts by up to 20% within minutes (the same seeded t2t
run trained its steps 41-60 at 5,600 tokens/s, and at 4,500 when started again ten minutes
later, with nothing of ours beside it). Rates measured an hour apart can't be compared, so this script trains each
system for `--steps` steps in turn — t2t, OpenNMT-tf, eole, then again in a rotated order —
for `--rounds` rounds, and reports each system's median over the rounds and, round by round,
t2t's rate divided by each peer's (runs minutes apart, so drift mostly cancels). Everything
else is bench_multi30k.py's: the same model shape, batch (4,096 tokens), schedule, data and
checkpoints every 50 steps; each rate is the toolkit's own count of non-padding source +
target tokens from its log, the median of its periodic figures after the first.

    python bench/multi30k_speed.py                         # 3 rounds x 3 systems x 100 steps
    python bench/multi30k_speed.py --rounds=1 --steps=20 --checkpoint_steps=10 --out=
                                                           # a smoke run, nothing written

Writes "speed" into bench/results/multi30k.json (the other keys kept).
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_multi30k  # noqa: E402  (bench/bench_multi30k.py)

log = bench_multi30k.log


def round_order(systems, round_index):
    """`systems` rotated by `round_index`, so no system always runs first (or right after
    the same neighbour):

        round_order(["t2t", "opennmt_tf", "eole"], 1)   # ["opennmt_tf", "eole", "t2t"]
    """
    shift = round_index % len(systems)
    return list(systems[shift:]) + list(systems[:shift])


def paired_ratios(rounds, system="t2t"):
    """{peer: [system's rate / peer's rate, one per round both ran in]} from
    [{system: tokens/s, ...}, ...]:

        paired_ratios([{"t2t": 300, "eole": 200}, {"t2t": 330, "eole": 300}])
        # {"eole": [1.5, 1.1]}
    """
    ratios = {}
    for rates in rounds:
        if not rates.get(system):
            continue
        for peer, rate in rates.items():
            if peer != system and rate:
                ratios.setdefault(peer, []).append(round(rates[system] / rate, 3))
    return ratios


def summary(rounds, systems):
    """The medians over rounds, and t2t's paired ratios with their median, min and max."""
    medians = {s: round(statistics.median([r[s] for r in rounds if r.get(s)]))
               for s in systems if any(r.get(s) for r in rounds)}
    ratios = {peer: {"per_round": values, "median": round(statistics.median(values), 3),
                     "min": min(values), "max": max(values)}
              for peer, values in paired_ratios(rounds).items()}
    return medians, ratios


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], add_help=False)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=100,
                        help="training steps per run (a multiple of --checkpoint_steps)")
    # The budget only bounds a run that hangs: each stops at --steps by itself.
    return bench_multi30k.parse_with_own_flags(
        parser, argv,
        lambda own: ["--budgets_minutes=60", "--plot=", "--max_steps=%d" % own.steps],
        "--max_steps is --steps here", check=check_flags)


def check_flags(own):
    if own.rounds < 1 or own.steps < 1:
        sys.exit("multi30k_speed: --rounds=%d --steps=%d: give positive numbers"
                 % (own.rounds, own.steps))


def main(argv=None):
    args = parse_args(argv)
    start = time.monotonic()
    data = bench_multi30k.begin(args)
    rounds, runs = [], []
    for index in range(args.rounds):
        rates = {}
        for system in round_order(args.systems, index):
            log("speed round %d/%d: %s, %d steps" % (index + 1, args.rounds, system,
                                                     args.steps))
            load = os.getloadavg()[0]
            trained = bench_multi30k.train_system(
                system, args, data, os.path.join(args.work_dir, "speed", system))
            rates[system] = trained["train_tokens_per_sec"]
            runs.append({"round": index + 1, "system": system, "version": trained["version"],
                         "tokens_per_sec": rates[system], "steps": trained["steps_trained"],
                         "peak_memory_mb": trained["peak_memory_mb"],
                         "load_average_at_start": round(load, 2)})
            log("%s: %s tokens/s" % (system, "{:,}".format(rates[system] or 0)))
        rounds.append(rates)
    medians, ratios = summary(rounds, args.systems)
    result = {"date": time.strftime("%Y-%m-%d"), "steps_per_run": args.steps,
              "rounds": args.rounds, "order": "rotated each round: " + ", ".join(
                  " ".join(round_order(args.systems, i)) for i in range(args.rounds)),
              "runs": runs, "median_tokens_per_sec": medians,
              "t2t_over_peer": ratios}
    if args.out:
        bench_multi30k.write_results(args.out, {"speed": result})
    print("\n%-11s %s" % ("system", "  ".join("round %d" % (i + 1)
                                               for i in range(args.rounds))) + "   median")
    for system in args.systems:
        print("%-11s %s   %s" % (system, "  ".join(
            "%7s" % "{:,}".format(r.get(system) or 0) for r in rounds),
            "{:,}".format(medians.get(system, 0))))
    for peer, ratio in ratios.items():
        print("t2t / %-10s %s (median; %s..%s over %d rounds)" % (
            peer, ratio["median"], ratio["min"], ratio["max"], len(ratio["per_round"])))
    log("speed done: %d runs, %.1f min" % (len(runs), (time.monotonic() - start) / 60))


if __name__ == "__main__":
    main()
