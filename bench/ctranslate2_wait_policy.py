"""How CTranslate2's OpenMP threads wait between parallel regions, measured side by side.

CTranslate2's wheels carry GNU libgomp. Its threads spin after each parallel region before
they sleep: `OMP_WAIT_POLICY=ACTIVE` spins for good, `PASSIVE` sleeps at once, and with
neither libgomp spins `GOMP_SPINCOUNT` times (300,000 by default). Spinning bridges the
short gaps between the regions of one decode; it also takes a core from whatever runs
after a batch (the server's event loop, TensorFlow in the same process). This decodes the
same sentences with the same export under each setting, each in a fresh process (libgomp
reads its environment once, when it loads), the settings interleaved round by round:
sentences/s in batches of --batch_size, and the p50 of one sentence at a time. With
`--burners=N`, N busy-looping processes share the cores meanwhile (a shared, loaded machine,
where a spinning thread can burn the time slice of the thread it waits for).

    python bench/ctranslate2_wait_policy.py --model=m30k-ct2-float32 --model=m30k-ct2-int8 \\
        --sentences=translate_ende_multi30k.test_2016_flickr.en --rounds=3 [--burners=2]
    # writes bench/results/ctranslate2_wait_policy.json (--out) and prints the medians
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name -> the OpenMP variables the decoding process starts with (the others removed)
SETTINGS = {
    "PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE"},
    "spin 10k": {"GOMP_SPINCOUNT": "10000"},
    "spin 100k": {"GOMP_SPINCOUNT": "100000"},
    "libgomp default (300k)": {},
    "ACTIVE": {"OMP_WAIT_POLICY": "ACTIVE"},
}
OPENMP_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def decode_once(args):
    """In the child: import ctranslate2 first (libgomp reads the environment as it loads),
    then decode; prints one JSON line."""
    import time
    import ctranslate2  # noqa: F401  before t2t, which would set a default of its own
    import t2t
    with open(args.sentences, encoding="utf-8") as handle:
        sentences = [line.strip() for line in handle if line.strip()][:args.count]
    with t2t.load(args.model[0], threads=args.threads) as model:
        model.decode(sentences[:args.batch_size], beam_size=args.beam_size)  # warm up
        started = time.perf_counter()
        model.decode(sentences, beam_size=args.beam_size, batch_size=args.batch_size)
        batched = len(sentences) / (time.perf_counter() - started)
        single = []
        for sentence in sentences[:args.single_count]:
            started = time.perf_counter()
            model.decode([sentence], beam_size=args.beam_size)
            single.append(time.perf_counter() - started)
    print(json.dumps({"sentences_per_second": batched,
                      "single_p50_ms": 1000 * statistics.median(single)}))


def run_child(args, model, variables):
    env = {k: v for k, v in os.environ.items() if k not in OPENMP_VARIABLES}
    env.update(variables)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    command = [sys.executable, os.path.abspath(__file__), "--child", "--model=" + model,
               "--sentences=" + args.sentences, "--count=%d" % args.count,
               "--single_count=%d" % args.single_count, "--threads=%d" % args.threads,
               "--beam_size=%d" % args.beam_size, "--batch_size=%d" % args.batch_size]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("the decoding process failed:\n" + result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", required=True,
                        help="a CTranslate2 export (repeatable)")
    parser.add_argument("--sentences", required=True)
    parser.add_argument("--count", type=int, default=320, help="sentences decoded batched")
    parser.add_argument("--single_count", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--beam_size", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--burners", type=int, default=0, help="busy-looping processes "
                        "beside the decodes (a loaded machine)")
    parser.add_argument("--settings", default=",".join(SETTINGS),
                        help="which of: " + ", ".join(SETTINGS))
    parser.add_argument("--out", default=os.path.join(HERE, "results",
                                                      "ctranslate2_wait_policy.json"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return decode_once(args)
    chosen = [name.strip() for name in args.settings.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in SETTINGS]
    if unknown:
        sys.exit("unknown --settings %s; choose from %s" % (unknown, ", ".join(SETTINGS)))
    runs = {(model, name): [] for model in args.model for name in chosen}
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(args.burners)]
    try:
        for round_number in range(args.rounds):
            for model in args.model:
                for name in chosen:  # interleaved: each round visits every setting once
                    runs[(model, name)].append(run_child(args, model, SETTINGS[name]))
                    print("round %d %s %s: %s" % (round_number + 1, os.path.basename(model),
                                                  name, runs[(model, name)][-1]), flush=True)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    sys.path.insert(0, HERE)
    import bench_serving
    rows = []
    for (model, name), results in runs.items():
        rows.append({"model": model, "setting": name, "variables": SETTINGS[name],
                     "sentences_per_second": [r["sentences_per_second"] for r in results],
                     "single_p50_ms": [r["single_p50_ms"] for r in results],
                     "median_sentences_per_second": statistics.median(
                         r["sentences_per_second"] for r in results),
                     "median_single_p50_ms": statistics.median(
                         r["single_p50_ms"] for r in results)})
    print("%-28s %-24s %14s %12s" % ("model", "setting", "sentences/s", "single p50"))
    for row in rows:
        print("%-28s %-24s %14.1f %10.1f ms" % (
            os.path.basename(row["model"]), row["setting"], row["median_sentences_per_second"],
            row["median_single_p50_ms"]))
    if args.out:  # {"runs": [...]}: one run per number of burners and kind of CPU
        from t2t.core import atomic_files
        results = {"runs": []}
        if os.path.exists(args.out):
            with open(args.out, encoding="utf-8") as handle:
                results = json.load(handle)
        machine = bench_serving.machine()
        results["runs"] = [r for r in results["runs"] if (r["burners"], r["machine"]["cpu_flags"])
                           != (args.burners, machine["cpu_flags"])]
        results["runs"].append({
            "burners": args.burners, "threads": args.threads, "beam_size": args.beam_size,
            "batch_size": args.batch_size, "count": args.count,
            "single_count": args.single_count, "rounds": args.rounds,
            "machine": machine, "rows": rows})
        with atomic_files.atomic_write(args.out, "w") as handle:
            json.dump(results, handle, indent=1)
            handle.write("\n")


if __name__ == "__main__":
    main()
