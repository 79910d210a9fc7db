"""SeqIO packing and mixing: t2t.seqio against seqio 0.0.20 itself, in the same run.

Packing, on 20,000 examples of lognormal lengths, two configurations:

  lm      one feature, {"targets": 256}, lengths lognormal (median 33, mean 45)
  encdec  pairs, {"inputs": 128, "targets": 64}, inputs lognormal (median 20), targets
          about half as long (translation-like)

measures, each consumed in batches of 256 rows as a training loop does:

  seqio_greedy   seqio 0.0.20's `utils.trim_and_pack_dataset` (its tf.while_loop packer)
  t2t_greedy     t2t.seqio's `trim_and_pack_dataset` in compatible mode, which must give
                 the same rows in the same order (a SHA-256 of all rows is compared)
  t2t_first_fit  t2t.seqio's first-fit mode (`use_custom_ops=True`)
  t2t_source     the input alone (an in-memory cache of the examples, filled before timing)

and density (non-padding tokens / row slots). Mixing: `Mixture.get_dataset` over 3 tasks
(TSV lines -> SentencePiece tokenize -> EOS; the same task code run with `seqio` and with
`t2t.seqio`), examples/s.

seqio needs jax/clu/pyglove, so it runs from a separate venv whose python is given by
--ref_python or $SEQIO_REF_PYTHON, e.g. one made outside the repository with

    python3.11 -m venv /work/wt/seqio-ref-venv && /work/wt/seqio-ref-venv/bin/pip install \\
      seqio==0.0.20 jax==0.4.30 jaxlib==0.4.30 tensorflow==2.15.1 "numpy<2" \\
      sentencepiece==0.2.0 tensorflow-text==2.15.0 tensorflow-datasets==4.9.4 \\
      tensorflow-metadata==1.14.0

Without it the seqio rows are reported as absent. Every measurement runs in a fresh worker
process (this script with --worker), t2t and seqio alternating, --repeats times; medians
are reported, in wall seconds and in CPU seconds of the worker (the machine is shared).

    python bench/bench_seqio_packing.py [--examples 20000] [--repeats 3] [--ref_python PY]
    # prints a table and writes bench/results/seqio.json
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CONFIGS = {"lm": {"targets": 256}, "encdec": {"inputs": 128, "targets": 64}}
SEQUENCE_LENGTH = {"inputs": 128, "targets": 64}
ROWS_PER_BATCH = 256
WORDS = ("the of and to in is was for on that with as by at from his her an which it be "
         "are this had were not but they their have one all been has who more when would "
         "time two may after into other some could first new only over also years").split()


# ----------------------------------------------------------------------------- data
def make_lengths(config, num, seed=0):
    """{feature: int lengths [num]} for a configuration (lognormal, deterministic)."""
    rng = np.random.default_rng(seed)
    if config == "lm":
        return {"targets": np.clip(np.round(rng.lognormal(3.5, 0.8, num)), 1, 1024).astype(int)}
    inputs = np.clip(np.round(rng.lognormal(3.0, 0.7, num)), 1, 400).astype(np.int64)
    ratio = rng.lognormal(np.log(0.5), 0.25, num)
    targets = np.clip(np.round(inputs * ratio), 1, 200).astype(np.int64)
    return {"inputs": inputs, "targets": targets}


def write_data(folder, num):
    """Token arrays per configuration, and TSV files + a SentencePiece model for mixing."""
    rng = np.random.default_rng(1)
    for config in CONFIGS:
        arrays = {}
        for key, lengths in make_lengths(config, num).items():
            arrays[key] = rng.integers(1, 32000, lengths.sum(), dtype=np.int64)
            arrays[key + "_len"] = lengths
        np.savez(os.path.join(folder, "tokens_%s.npz" % config), **arrays)
    pairs = make_lengths("encdec", num)
    words = np.array(WORDS)
    for task in range(3):
        lines = []
        for i in range(num // 3):
            j = (task * 7919 + i) % num
            lines.append(" ".join(words[rng.integers(0, len(words), min(pairs["inputs"][j], 60))])
                         + "\t" + " ".join(words[rng.integers(0, len(words),
                                                              min(pairs["targets"][j], 30))]))
        with open(os.path.join(folder, "task%d.tsv" % task), "w") as f:
            f.write("\n".join(lines) + "\n")
    import sentencepiece as spm  # pylint: disable=import-outside-toplevel
    spm.SentencePieceTrainer.train(
        input=os.path.join(folder, "task0.tsv"), model_prefix=os.path.join(folder, "spm"),
        vocab_size=200, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, hard_vocab_limit=False,
        minloglevel=2)


# --------------------------------------------------------------------------- worker
def token_dataset(tf, folder, config, limit=None):
    """The examples as a Task gives them (dicts of 1-D int32 tensors), in an in-memory cache
    (as Task.get_dataset caches small splits) filled before timing: the input then costs a
    few microseconds per example and the packers' own cost shows."""
    data = np.load(os.path.join(folder, "tokens_%s.npz" % config))
    features = {}
    for key in CONFIGS[config]:
        lengths = data[key + "_len"][:limit]
        flat = data[key][:lengths.sum()]
        features[key] = tf.RaggedTensor.from_row_lengths(tf.constant(flat, tf.int32), lengths)
    ds = tf.data.Dataset.from_tensor_slices(features).map(
        lambda ex: {k: tf.identity(v) for k, v in ex.items()}).cache()
    for _ in ds.padded_batch(1024):
        pass
    return ds


def digest(batches, keys):
    """SHA-256 over all rows in order, the number of rows, and the density."""
    sha = hashlib.sha256()
    count = tokens = slots = 0
    for batch in batches:
        for i in range(len(batch[keys[0]])):
            for key in sorted(batch):
                sha.update(key.encode())
                sha.update(np.ascontiguousarray(batch[key][i], np.int32).tobytes())
            count += 1
        for key in keys:
            tokens += int(np.count_nonzero(batch[key + "_segment_ids"]))
            slots += batch[key].size
    return sha.hexdigest(), count, tokens / max(slots, 1)


def define_mixture(seqio, tf, folder):
    """The same task code for seqio and t2t.seqio: 3 TSV tasks, SentencePiece, a Mixture."""
    vocab = seqio.SentencePieceVocabulary(os.path.join(folder, "spm.model"))

    @seqio.map_over_dataset
    def parse_tsv(line):
        inputs, targets = tf.io.decode_csv(line, ["", ""], field_delim="\t")
        return {"inputs": inputs, "targets": targets}

    features = {"inputs": seqio.Feature(vocab), "targets": seqio.Feature(vocab)}
    for task in range(3):
        seqio.TaskRegistry.add(
            "bench_task%d" % task,
            seqio.TextLineDataSource({"train": os.path.join(folder, "task%d.tsv" % task)}),
            preprocessors=[parse_tsv, seqio.preprocessors.tokenize,
                           seqio.preprocessors.append_eos],
            output_features=features)
    return seqio.MixtureRegistry.add(
        "bench_mix", [("bench_task0", 1), ("bench_task1", 2), ("bench_task2", 3)])


def timed(fn):
    start, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - start, time.process_time() - cpu


def worker(lib, mode, config, folder, num):
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    if lib == "seqio":
        import seqio  # pylint: disable=import-outside-toplevel
    else:
        from t2t import seqio  # pylint: disable=import-outside-toplevel
    if mode == "mixture":
        mixture = define_mixture(seqio, tf, folder)
        for _ in mixture.get_dataset(SEQUENCE_LENGTH, seed=1).take(200):
            pass  # warm-up: tokenizer load, tracing
        count, seconds, cpu = timed(lambda: sum(
            1 for _ in mixture.get_dataset(SEQUENCE_LENGTH, seed=1).take(num)))
        return {"seconds": seconds, "cpu_seconds": cpu, "examples": count}
    lengths = CONFIGS[config]
    if mode == "source":
        source = token_dataset(tf, folder, config)
        _, seconds, cpu = timed(lambda: [None for _ in source.padded_batch(ROWS_PER_BATCH)])
        return {"seconds": seconds, "cpu_seconds": cpu, "examples": num}
    custom = mode == "first_fit"
    warm = seqio.utils.trim_and_pack_dataset(token_dataset(tf, folder, config, 500), lengths,
                                             use_custom_ops=custom)
    for _ in warm.batch(ROWS_PER_BATCH):
        pass
    source = token_dataset(tf, folder, config)
    batches, seconds, cpu = timed(lambda: list(seqio.utils.trim_and_pack_dataset(
        source, lengths, use_custom_ops=custom).batch(ROWS_PER_BATCH).as_numpy_iterator()))
    sha, count, density = digest(batches, list(lengths))
    return {"seconds": seconds, "cpu_seconds": cpu, "examples": num, "rows": count,
            "density": density, "sha256": sha}


def run_worker(python, lib, mode, config, folder, num):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=ROOT)
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", lib, "--mode", mode,
                          "--config", config, "--data", folder, "--examples", str(num)],
                         capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError("%s %s worker failed:\n%s" % (lib, mode, out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------- report
def summarize(runs, num):
    table = {}
    for name, items in runs.items():
        seconds = statistics.median(r["seconds"] for r in items)
        cpu = statistics.median(r["cpu_seconds"] for r in items)
        entry = {"median_seconds": round(seconds, 3), "median_cpu_seconds": round(cpu, 3),
                 "examples_per_second": round(items[0]["examples"] / seconds, 1),
                 "examples_per_cpu_second": round(items[0]["examples"] / cpu, 1),
                 "seconds": [round(r["seconds"], 3) for r in items]}
        if "sha256" in items[0]:
            entry.update(rows=items[0]["rows"], density=round(items[0]["density"], 4),
                         sha256=items[0]["sha256"])
            if len({r["sha256"] for r in items}) != 1:
                raise AssertionError("%s: packing is not deterministic" % name)
        table[name] = entry
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=20000)
    parser.add_argument("--mixture_examples", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ref_python", default=os.environ.get("SEQIO_REF_PYTHON"))
    parser.add_argument("--worker", choices=["seqio", "t2t"])
    parser.add_argument("--mode", choices=["source", "greedy", "first_fit", "mixture"])
    parser.add_argument("--config", choices=sorted(CONFIGS), default="lm")
    parser.add_argument("--data")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.mode, args.config, args.data, args.examples)))
        return

    ref = args.ref_python if args.ref_python and os.path.exists(args.ref_python) else None
    if not ref:
        print("seqio 0.0.20 reference: ABSENT (pass --ref_python or set SEQIO_REF_PYTHON to the "
              "python of a venv with seqio==0.0.20; see this script's docstring). Only t2t's "
              "figures are measured.")
    jobs = []
    for config in CONFIGS:
        jobs += [("t2t", "source", config), ("t2t", "greedy", config),
                 ("t2t", "first_fit", config)]
        if ref:
            jobs.append(("seqio", "greedy", config))
    jobs.append(("t2t", "mixture", "-"))
    if ref:
        jobs.append(("seqio", "mixture", "-"))
    runs = {}
    with tempfile.TemporaryDirectory() as folder:
        write_data(folder, args.examples)
        for repeat in range(args.repeats):
            for lib, mode, config in jobs:
                num = args.mixture_examples if mode == "mixture" else args.examples
                run = run_worker(ref if lib == "seqio" else sys.executable, lib, mode,
                                 config if config != "-" else "lm", folder, num)
                name = "%s_%s" % (lib, mode) if mode == "mixture" else "%s/%s_%s" % (
                    config, lib, mode)
                runs.setdefault(name, []).append(run)
                print("  run %d %-24s %7.2fs" % (repeat + 1, name, run["seconds"]), flush=True)
    table = summarize(runs, args.examples)
    results = {"examples": args.examples, "mixture_examples": args.mixture_examples,
               "configs": CONFIGS, "repeats": args.repeats, "rows_per_batch": ROWS_PER_BATCH,
               "reference": "seqio 0.0.20" if ref else "absent", "runs": table,
               "mean_lengths": {c: {k: float(np.minimum(v, CONFIGS[c][k]).mean())
                                    for k, v in make_lengths(c, args.examples).items()}
                                for c in CONFIGS}}
    print("\n%-24s %11s %13s %9s %7s %8s" % ("", "examples/s", "ex/CPU-second", "median s",
                                             "rows", "density"))
    for name, entry in table.items():
        print("%-24s %11.0f %13.0f %9.2f %7s %8s" % (
            name, entry["examples_per_second"], entry["examples_per_cpu_second"],
            entry["median_seconds"], entry.get("rows", ""), entry.get("density", "")))
    summary = {}
    for config in CONFIGS:
        ours = table[config + "/t2t_first_fit"]
        summary[config] = {"first_fit_density": ours["density"],
                           "greedy_density": table[config + "/t2t_greedy"]["density"]}
        if ref:
            theirs, same = table[config + "/seqio_greedy"], table[config + "/t2t_greedy"]
            summary[config].update({
                "same_rows_as_seqio": same["sha256"] == theirs["sha256"],
                "greedy_speedup": round(theirs["median_seconds"] / same["median_seconds"], 1),
                "greedy_cpu_speedup": round(theirs["median_cpu_seconds"] /
                                            same["median_cpu_seconds"], 1),
                "first_fit_speedup": round(theirs["median_seconds"] / ours["median_seconds"], 1),
                "first_fit_cpu_speedup": round(theirs["median_cpu_seconds"] /
                                               ours["median_cpu_seconds"], 1)})
            print("%s: compatible mode gives seqio's rows: %s, %.1fx its speed (%.1fx per CPU-s);"
                  " first-fit density %.3f vs %.3f, %.1fx its speed" % (
                      config, summary[config]["same_rows_as_seqio"],
                      summary[config]["greedy_speedup"], summary[config]["greedy_cpu_speedup"],
                      ours["density"], theirs["density"], summary[config]["first_fit_speedup"]))
        else:
            print("%s: first-fit density %.3f (greedy %.3f)" % (
                config, ours["density"], summary[config]["greedy_density"]))
    if ref:
        summary["mixture_speedup"] = round(table["seqio_mixture"]["median_seconds"] /
                                           table["t2t_mixture"]["median_seconds"], 2)
        summary["mixture_cpu_speedup"] = round(table["seqio_mixture"]["median_cpu_seconds"] /
                                               table["t2t_mixture"]["median_cpu_seconds"], 2)
        print("Mixture.get_dataset, 3 tasks: %.0f examples/s vs seqio %.0f (%.2fx; %.2fx per "
              "CPU-s)" % (table["t2t_mixture"]["examples_per_second"],
                          table["seqio_mixture"]["examples_per_second"],
                          summary["mixture_speedup"], summary["mixture_cpu_speedup"]))
    else:
        print("Mixture.get_dataset, 3 tasks: %.0f examples/s" %
              table["t2t_mixture"]["examples_per_second"])
    results["summary"] = summary
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "seqio.json"), "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    main()
