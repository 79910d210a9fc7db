"""Draw bench_multi30k's plots: `python multi30k_plot.py results.json out.png`.

BLEU against training minutes; beside it, when the results have loss curves, each
system's training loss against steps (less the constant its label smoothing adds, so the
curves are comparable; see bench_multi30k.py).

Run by bench_multi30k.py with the python of a venv that has matplotlib.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def label(row, rows):
    """The system's name, with its stack when the system has rows on several (t2t's two)
    and the ablation's change for a variant."""
    name = row["system"]
    if sum(1 for other in rows if other["system"] == name) > 1 and row.get("stack"):
        name += " (%s)" % row["stack"].split(", ", 1)[-1]
    if row.get("variant"):
        name += " [%s]" % row["variant"]
    if row.get("label_note"):  # e.g. a row measured before a fix of its configuration
        name += ", " + row["label_note"]
    return name


def main(results_path, png_path):
    results = json.load(open(results_path))
    rows = [row for row in results["systems"] if not row.get("tag")]  # e.g. speed checks
    # One colour per row in both panels (a row without a loss curve must not shift them).
    colours = {label(r, rows): "C%d" % i for i, r in enumerate(rows)}
    curves = [(label(r, rows), r["loss"]["curve"]) for r in rows
              if r.get("loss", {}).get("curve")]
    if curves:
        figure, (axes, loss_axes) = plt.subplots(1, 2, figsize=(12.0, 4.2))
        for system, curve in curves:
            loss_axes.plot([point[0] for point in curve], [point[2] for point in curve],
                           marker=".", label=system, color=colours[system])
        loss_axes.set_xlabel("training step")
        loss_axes.set_ylabel("loss less its smoothing entropy (nats)")
        loss_axes.set_title("Training loss")
        loss_axes.set_ylim(bottom=0)
        loss_axes.grid(alpha=0.3)
        loss_axes.legend()
    else:
        figure, axes = plt.subplots(figsize=(6.4, 4.2))
    best = 0.0
    for result in rows:
        points = [(b["minutes"], b["bleu"]) for b in result["budgets"] if b["bleu"] is not None]
        if points:
            best = max([best] + [bleu for _, bleu in points])
            axes.plot(*zip(*points), marker="o", label=label(result, rows),
                      color=colours[label(result, rows)])
    long_run = results.get("long_run") or {}
    if long_run.get("points"):  # bench/multi30k_long.py: test BLEU at each val evaluation
        points = [(p["minutes"], p["test_bleu"]) for p in long_run["points"]]
        best = max([best] + [bleu for _, bleu in points])
        # The long run goes on from its stack's 60-minute row: same colour, dashed.
        start = [r for r in rows
                 if r["system"] == long_run.get("system") and r.get("stack") == long_run.get("stack")]
        stopped = long_run.get("stopped")
        axes.plot(*zip(*points), linestyle="--", marker=".",
                  color=colours[label(start[0], rows)] if start else None,
                  label="t2t, long run (%s)" % ("stopped by %s" % stopped if stopped
                                                else "in progress"))
    axes.set_xlabel("training minutes (wall clock, %d CPU cores)" % results["cpu_count"])
    axes.set_ylabel("BLEU, test_2016_flickr en-de (sacrebleu)")
    axes.set_title("Multi30k: BLEU at equal training time, beam %d" % results["beam_size"])
    axes.set_xlim(left=0)
    axes.set_ylim(0, max(5.0, best * 1.15))
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(png_path, dpi=100, format="png")


if __name__ == "__main__":
    main(*sys.argv[1:3])
