"""Latency against throughput of bench_serving's runs: `python serving_plot.py serving.json out.png
[TEXT]` (and docs/serving.md's table of them, printed); with TEXT, only the runs whose label
holds it are drawn.

One line per run (engine and weight type) through its concurrency levels: x the served
translations per second, y the latency (p50 solid with the clients beside each point, p99
dashed, log scale); a dotted vertical line at the same engine's offline throughput (what
the served throughput is held against). Only the runs with a "label" (the Multi30k runs) are
drawn. Drawn with Pillow (no matplotlib in this project's venvs).
"""
import json
import math
import sys

from PIL import Image, ImageDraw, ImageFont

COLOURS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189), (255, 127, 14)]
WIDTH, HEIGHT = 1120, 640
LEFT, RIGHT, TOP, BOTTOM = 90, 330, 50, 70


def nice_step(span, ticks=6):
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def dashed(draw, points, fill, width, dash=8):
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        length = math.hypot(x1 - x0, y1 - y0) or 1
        steps = int(length // dash)
        for i in range(0, steps + 1, 2):
            a, b = i / (steps + 1), min(1, (i + 1) / (steps + 1))
            draw.line([(x0 + (x1 - x0) * a, y0 + (y1 - y0) * a),
                       (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b)], fill=fill, width=width)


def plot(runs, out, common=""):
    """`common`: text every label holds, said once in the title instead of in the legend."""
    font = ImageFont.load_default(size=15)
    small = ImageFont.load_default(size=12)
    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    draw = ImageDraw.Draw(image)
    levels = [(run, level) for run in runs for level in run["served"] if level["p50_ms"]]
    xmax = max([l["translations_per_second"] for _, l in levels] +
               [r["offline"]["sentences_per_second"] for r in runs if r["offline"]]) * 1.08
    lats = [l[k] for _, l in levels for k in ("p50_ms", "p99_ms")]
    ymin = 10 ** math.floor(math.log10(min(lats)))
    ymax = 10 ** math.ceil(math.log10(max(lats)))
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP

    def px(x):
        return x0 + (x1 - x0) * x / xmax

    def py(ms):
        return y0 + (y1 - y0) * (math.log10(ms) - math.log10(ymin)) / (
            math.log10(ymax) - math.log10(ymin))

    draw.rectangle([x0, y1, x1, y0], outline="black")
    step = nice_step(xmax)
    tick = 0.0
    while tick <= xmax:
        draw.line([(px(tick), y0), (px(tick), y0 + 5)], fill="black")
        draw.line([(px(tick), y1), (px(tick), y0)], fill=(235, 235, 235))
        draw.text((px(tick), y0 + 8), "%g" % tick, fill="black", font=small, anchor="mt")
        tick += step
    decade = ymin
    while decade <= ymax:
        for m in (1, 2, 5):
            ms = decade * m
            if ms <= ymax:
                draw.line([(x0, py(ms)), (x1, py(ms))], fill=(235, 235, 235))
                draw.text((x0 - 6, py(ms)), "%g" % ms, fill="black", font=small, anchor="rm")
        decade *= 10
    draw.rectangle([x0, y1, x1, y0], outline="black")
    draw.text(((x0 + x1) / 2, HEIGHT - 25), "served translations per second (one sentence "
              "a request)", fill="black", font=font, anchor="mm")
    draw.text((x0, 20), "Serving Multi30k: latency (ms, log) vs throughput, clients "
              "1/8/32/64%s" % (" (%s)" % common.strip(", ") if common else ""),
              fill="black", font=font, anchor="lm")
    for number, run in enumerate(runs):
        colour = COLOURS[number % len(COLOURS)]
        served = [l for l in run["served"] if l["p50_ms"]]
        p50 = [(px(l["translations_per_second"]), py(l["p50_ms"])) for l in served]
        p99 = [(px(l["translations_per_second"]), py(l["p99_ms"])) for l in served]
        if len(p50) > 1:
            draw.line(p50, fill=colour, width=3)
        dashed(draw, p99, colour, 2)
        for (x, y), level in zip(p50, served):
            draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=colour)
            draw.text((x + 6, y - 6), str(level["clients"]), fill=colour, font=small,
                      anchor="lb")
        if run["offline"]:  # another server's run (eole) has no offline figure of ours
            offline = px(run["offline"]["sentences_per_second"])
            dashed(draw, [(offline, y1), (offline, y0)], colour, 1, dash=3)
        ly = TOP + 10 + 52 * number
        draw.line([(x1 + 15, ly), (x1 + 45, ly)], fill=colour, width=3)
        draw.text((x1 + 50, ly), run["label"].replace(common, "") if common else run["label"],
                  fill="black", font=small, anchor="lm")
        draw.text((x1 + 50, ly + 16), "p50 solid, p99 dashed;", fill="black", font=small,
                  anchor="lm")
        draw.text((x1 + 50, ly + 31), "offline %.0f/s dotted" % run["offline"][
            "sentences_per_second"] if run["offline"] else "(another server)", fill="black",
            font=small, anchor="lm")
    image.save(out)


def table(runs):
    """docs/serving.md's table: a row per run and concurrency level (and overload)."""
    lines = ["| run | offline sentences/s | direct 1 sentence p50 ms | clients | served "
             "requests/s | vs offline | tokens/s | p50 / p95 / p99 ms | mean batch | answers |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    def figure(value, form):
        return form % value if value is not None else "-"

    for run in runs:
        off = run["offline"] or {"sentences_per_second": None, "single_sentence_p50_ms": None}
        rows = run["served"] + ([dict(run["overload"], overload=True)]
                                if run.get("overload") else [])
        if not rows:
            lines.append("| %s | %.1f | %.0f | offline only | | | | | | |" % (
                run["label"], off["sentences_per_second"], off["single_sentence_p50_ms"]))
        for level in rows:
            latency = " / ".join("%.0f" % level[k] if level[k] is not None else "-"
                                 for k in ("p50_ms", "p95_ms", "p99_ms"))
            clients = "%d%s" % (level["clients"], " (queue %d)" % level["max_queue"]
                                if level.get("overload") else "")
            offline = off["sentences_per_second"]
            lines.append("| %s | %s | %s | %s | %.1f | %s | %.0f | %s | %s | %s |" % (
                run["label"], figure(offline, "%.1f"),
                figure(off["single_sentence_p50_ms"], "%.0f"), clients,
                level["requests_per_second"],
                figure(offline and 100 * level["translations_per_second"] / offline, "%.0f%%"),
                level["tokens_per_second"], latency, figure(level["mean_batch_size"], "%.1f"),
                ", ".join("%s %s" % kv for kv in sorted(level["codes"].items()))))
    return "\n".join(lines)


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        runs = [r for r in json.load(handle)["runs"] if r.get("label")]
    print(table(runs))
    drawn = sys.argv[3] if len(sys.argv) > 3 else ""
    plot([r for r in runs if r["served"] and drawn in r["label"]], sys.argv[2], drawn)


if __name__ == "__main__":
    main()
