"""t2t on Multi30k until val BLEU stops improving: the long run beside bench_multi30k.py.

Trains `transformer_multi30k` (the registered set, the 10-minute sweep's best on val) in
segments of --eval_every_steps. After each segment the newest checkpoint decodes val
(1,014 sentences) and test_2016_flickr (beam 4, alpha 0.6, as the bench), and the point
(step, training minutes, val and test BLEU, the segment's last training loss) lands in
the results JSON under "long_run" at once. The run ends when val BLEU has not improved by
more than --min_delta for --patience evaluations in a row, or after --max_hours of
training. The checkpoint of the best val BLEU stays (hard links) in <long_dir>/best;
test BLEU is reported at every point and never chooses.

Stopped (Ctrl-C, SIGTERM), it goes on where it stopped: the trainer resumes from its
newest checkpoint and the curve so far (<long_dir>/curve.json) is kept; the minutes
of a segment cut short are counted. `--from_dir` starts from another run's training
folder (copied once), e.g. the 60-minute bench run's, and `--from_minutes` says how many
training minutes it holds.

Minutes are the trainers' wall clock summed over segments, each restart's graph building
included (under half a minute a segment): a little slower than one uninterrupted run.

    python bench/bench_multi30k.py --systems=t2t --budgets_minutes=10,20,60
    mv /tmp/t2t_bench_multi30k/runs/t2t /tmp/t2t_bench_multi30k/runs/t2t_60min
    python bench/multi30k_long.py \\
        --from_dir=/tmp/t2t_bench_multi30k/runs/t2t_60min/train --from_minutes=60
    python bench/multi30k_long.py --eval_every_steps=4 --patience=1 --test_lines=20 \\
        --long_dir=/tmp/t2t_long_smoke --out=       # a smoke run
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_multi30k  # noqa: E402  (bench/bench_multi30k.py)

log = bench_multi30k.log


def best_index(points, min_delta):
    """The index of the best val BLEU: a later point counts as better only when it beats the
    best so far by more than `min_delta`.

        best_index([{"val_bleu": 30.0}, {"val_bleu": 30.05}, {"val_bleu": 31.0}], 0.1)  # 2
    """
    best = None
    for index, point in enumerate(points):
        if best is None or point["val_bleu"] > points[best]["val_bleu"] + min_delta:
            best = index
    return best


def stop_reason(state, args):
    """Why the run is over ("patience", "max_hours"), or None to train on."""
    points = state["points"]
    if points and len(points) - 1 - best_index(points, args.min_delta) >= args.patience:
        return "patience"
    if state["minutes"] >= args.max_hours * 60:
        return "max_hours"
    return None


def newest_checkpoint(train_dir):
    found = bench_multi30k.t2t_find(train_dir) if os.path.isdir(train_dir) else {}
    return max(found) if found else 0


def save_state(path, state):
    from t2t.core import atomic_files
    with atomic_files.atomic_write(path, "w") as handle:
        json.dump(state, handle, indent=1)


def load_state(args, long_dir, train_dir):
    """The curve so far, or a new one (from --from_dir's checkpoints when given)."""
    path = os.path.join(long_dir, "curve.json")
    if os.path.exists(path):
        with open(path) as handle:
            return json.load(handle)
    os.makedirs(long_dir, exist_ok=True)
    if args.from_dir:
        if not bench_multi30k.t2t_find(args.from_dir):
            sys.exit("multi30k_long: --from_dir=%s has no checkpoint; give a t2t-trainer "
                     "output folder" % args.from_dir)
        tmp = train_dir + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(args.from_dir, tmp)
        os.replace(tmp, train_dir)
    state = {"points": [], "minutes": args.from_minutes if args.from_dir else 0.0,
             "from": {"dir": args.from_dir, "step": newest_checkpoint(train_dir),
                      "minutes": args.from_minutes} if args.from_dir else None}
    save_state(path, state)
    return state


def train_segment(args, data, train_dir, log_path, state, state_path):
    """Train to the next multiple of --eval_every_steps; the minutes go into `state` even
    when the segment is cut short."""
    target = (newest_checkpoint(train_dir) // args.eval_every_steps + 1) * args.eval_every_steps
    command = bench_multi30k.t2t_train_command(args, data, train_dir, target,
                                               args.eval_every_steps)
    log("training to step %d (%.1f training minutes so far)" % (target, state["minutes"]))
    start = time.monotonic()
    with open(log_path, "a") as handle:
        process = subprocess.Popen(command, env=bench_multi30k.T2T_ENV, stdout=handle,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    last_report = start
    try:
        while process.poll() is None:
            time.sleep(1.0)
            if time.monotonic() - last_report >= 120:
                last_report = time.monotonic()
                curve = bench_multi30k.t2t_loss_curve(open(log_path, errors="replace").read())
                if curve:
                    log("step %d of %d, loss %.3f, %.1f min this segment" % (
                        curve[-1][0], target, curve[-1][1], (last_report - start) / 60))
    finally:
        bench_multi30k.stop_process_group(process)
        state["minutes"] = round(state["minutes"] + (time.monotonic() - start) / 60, 2)
        save_state(state_path, state)
    if process.returncode != 0:
        raise RuntimeError("t2t-trainer exited with %d; see %s:\n%s" % (
            process.returncode, log_path, open(log_path, errors="replace").read()[-3000:]))
    return newest_checkpoint(train_dir)


def evaluate(args, data, train_dir, long_dir, step, state):
    """Decode val and test with checkpoint `step`; the curve's point."""
    checkpoint = os.path.join(train_dir, "model.ckpt-%d" % step)
    point = {"step": step, "minutes": state["minutes"], "date": time.strftime("%Y-%m-%d")}
    for split in ("val", "test"):
        references = open(data[split + "_reference"], encoding="utf-8").read().split("\n")[:-1]
        out_path = os.path.join(long_dir, "%s.step%d.de" % (split, step))
        decodes = bench_multi30k.t2t_decode(args, data, train_dir, checkpoint, out_path, split)
        bleu, signature = bench_multi30k.score(decodes, references)
        point[split + "_bleu"] = round(bleu, 2)
        point["signature"] = signature
    point["loss"] = last_loss(os.path.join(long_dir, "train.log"))
    return point


def last_loss(log_path):
    """The newest training loss in the run's log; None before its first segment (a run
    from --from_dir evaluates the copied checkpoint first, with no log of its own yet)."""
    if not os.path.exists(log_path):
        return None
    curve = bench_multi30k.t2t_loss_curve(open(log_path, errors="replace").read())
    return curve[-1][1] if curve else None


def keep_best(train_dir, long_dir, step):
    """Hard-link checkpoint `step` into <long_dir>/best (replacing the one there)."""
    best, tmp = os.path.join(long_dir, "best"), os.path.join(long_dir, "best.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    for path in bench_multi30k.t2t_find(train_dir)[step]:
        bench_multi30k.link_tree(path, os.path.join(tmp, os.path.basename(path)))
    shutil.rmtree(best, ignore_errors=True)
    os.replace(tmp, best)


def results_of(state, args, stopped):
    points = state["points"]
    best = best_index(points, args.min_delta) if points else None
    return {"system": "t2t", "stack": bench_multi30k.t2t_stack(),
            "hparams_set": args.t2t_hparams_set, "learning_rate": args.learning_rate,
            "warmup_steps": args.warmup_steps, "beam_size": args.beam_size,
            "eval_every_steps": args.eval_every_steps, "patience": args.patience,
            "min_delta": args.min_delta, "selection": "val BLEU; test BLEU never chooses",
            "from": state.get("from"), "points": points,
            "best": points[best] if best is not None else None,
            "training_minutes": state["minutes"], "stopped": stopped}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], add_help=False)
    parser.add_argument("--eval_every_steps", type=int, default=500,
                        help="training steps between val evaluations")
    parser.add_argument("--patience", type=int, default=3,
                        help="evaluations without a val BLEU gain of --min_delta before the "
                             "run ends")
    parser.add_argument("--min_delta", type=float, default=0.1)
    parser.add_argument("--max_hours", type=float, default=8.0,
                        help="training hours (all segments) after which the run ends")
    parser.add_argument("--from_dir", default="",
                        help="a t2t-trainer output folder to go on from (copied once)")
    parser.add_argument("--from_minutes", type=float, default=0.0,
                        help="the training minutes --from_dir's checkpoint took")
    parser.add_argument("--long_dir", default="",
                        help="the run's folder (training, curve, best checkpoint); default "
                             "<work_dir>/long")
    return bench_multi30k.parse_with_own_flags(
        parser, argv, ["--systems=t2t", "--plot="],
        "t2t only; --budgets_minutes is not used", check=check_flags)


def check_flags(own):
    if own.eval_every_steps < 1 or own.patience < 1 or own.max_hours <= 0:
        sys.exit("multi30k_long: --eval_every_steps=%d --patience=%d --max_hours=%s: give "
                 "positive numbers" % (own.eval_every_steps, own.patience, own.max_hours))
    if own.from_dir and not os.path.isdir(own.from_dir):
        sys.exit("multi30k_long: --from_dir=%s is not a folder; give a t2t-trainer output "
                 "folder" % own.from_dir)


def main(argv=None):
    args = parse_args(argv)
    data = bench_multi30k.begin(args)
    long_dir = args.long_dir or os.path.join(args.work_dir, "long")
    train_dir = os.path.join(long_dir, "train")
    state_path = os.path.join(long_dir, "curve.json")
    state = load_state(args, long_dir, train_dir)
    log("long run: %d points so far, %.1f training minutes; val every %d steps, patience %d"
        % (len(state["points"]), state["minutes"], args.eval_every_steps, args.patience))
    stopped = stop_reason(state, args)
    while stopped is None:
        step = newest_checkpoint(train_dir)
        if step == 0 or step in {point["step"] for point in state["points"]}:
            before = step
            step = train_segment(args, data, train_dir, os.path.join(long_dir, "train.log"),
                                 state, state_path)
            if step <= before:
                raise RuntimeError("t2t-trainer wrote no checkpoint after step %d; see %s" % (
                    before, os.path.join(long_dir, "train.log")))
        point = evaluate(args, data, train_dir, long_dir, step, state)
        state["points"].append(point)
        if best_index(state["points"], args.min_delta) == len(state["points"]) - 1:
            keep_best(train_dir, long_dir, step)
        save_state(state_path, state)
        log("step %d, %.1f min: val BLEU %.2f, test BLEU %.2f, loss %s" % (
            step, point["minutes"], point["val_bleu"], point["test_bleu"], point["loss"]))
        stopped = stop_reason(state, args)
        if args.out and stopped is None:
            bench_multi30k.write_results(args.out, {"long_run": results_of(state, args, None)})
    if args.out:
        bench_multi30k.write_results(args.out, {"long_run": results_of(state, args, stopped)})
    if not state["points"]:
        log("long run done (%s) before its first point" % stopped)
        return
    best = state["points"][best_index(state["points"], args.min_delta)]
    log("long run done (%s): %d points, %.1f training minutes; best val BLEU %.2f at step %d "
        "(test %.2f)" % (stopped, len(state["points"]), state["minutes"], best["val_bleu"],
                         best["step"], best["test_bleu"]))


if __name__ == "__main__":
    main()
