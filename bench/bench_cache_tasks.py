"""Caching throughput of t2t-cache-tasks: 1 and 2 Beam workers on the same corpus.

The corpus: --shards TSV files of --examples lines in all (word sequences), a Task that
parses them, tokenizes with a SentencePiece model trained here, then CacheDatasetPlaceholder
and append_eos. Each run caches the task into a fresh folder with
`t2t.seqio.cache_tasks.cache_tasks` (what `t2t-cache-tasks` runs):

  direct_1   the DirectRunner, one worker in this process (the default)
  direct_2   the DirectRunner with --direct_num_workers=2,--direct_running_mode=multi_processing
  tfdata     the same preprocessing as a plain tf.data loop in this process (no Beam, no
             files written): the baseline the Beam runs are compared against

alternating, --repeats times; medians of wall seconds, examples/s, and the ratio to tfdata.
Every Beam run must write the same files (a SHA-256 over the cache folder is compared):
the cache does not depend on the number of workers. The wall time of a run includes
Beam's start-up (for direct_2: two worker processes importing TensorFlow), measured apart by
caching a task of 160 examples after each run; "after start-up" figures subtract it.

    python bench/bench_cache_tasks.py [--examples 20000] [--shards 8] [--repeats 3]
    # prints a table and writes bench/results/cache_tasks.json
"""
import argparse
import hashlib
import json
import logging as std_logging
import os
import statistics
import sys
import tempfile
import textwrap
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
MODULE = "t2t_bench_cache_tasks_usr"
TINY = 160  # examples of the start-up run
WORDS = ("the of and to in is was for on that with as by at from his her an which it be "
         "are this had were not but they their have one all been has who more when would "
         "time two may after into other some could first new only over also years").split()

TASK_MODULE = textwrap.dedent('''
    import os
    import tensorflow as tf
    from t2t import seqio

    DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    VOCAB = seqio.SentencePieceVocabulary(os.path.join(DATA, "spm.model"))
    FEATURES = {"inputs": seqio.Feature(VOCAB), "targets": seqio.Feature(VOCAB)}

    def parse_tsv(ds):
        def parse(line):
            parts = tf.strings.split(line, "\\t")
            return {"inputs": parts[0], "targets": parts[1]}
        return ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)

    PREPROCESSORS = [parse_tsv, seqio.preprocessors.tokenize]
    seqio.TaskRegistry.add(
        "bench_cache", seqio.TextLineDataSource({"train": os.path.join(DATA, "train-*.tsv")}),
        FEATURES, preprocessors=PREPROCESSORS + [seqio.CacheDatasetPlaceholder(),
                                                 seqio.preprocessors.append_eos])
    seqio.TaskRegistry.add(
        "bench_cache_tiny", seqio.TextLineDataSource({"train": os.path.join(DATA, "tiny-*.tsv")}),
        FEATURES, preprocessors=PREPROCESSORS + [seqio.CacheDatasetPlaceholder()])
''')


def write_corpus(folder, examples, shards):
    data = os.path.join(folder, MODULE, "data")
    os.makedirs(data)
    with open(os.path.join(folder, MODULE, "__init__.py"), "w") as f:
        f.write(TASK_MODULE)
    rng = np.random.default_rng(0)
    words = np.array(WORDS)
    all_lines = []
    for shard in range(shards):
        lines = []
        for _ in range(examples // shards):
            n_in = int(np.clip(rng.lognormal(3.0, 0.6), 1, 120))
            n_out = max(1, n_in // 2)
            lines.append(" ".join(words[rng.integers(0, len(words), n_in)]) + "\t"
                         + " ".join(words[rng.integers(0, len(words), n_out)]))
        all_lines += lines
        with open(os.path.join(data, "train-%02d.tsv" % shard), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(data, "tiny-%02d.tsv" % shard), "w") as f:
            f.write("\n".join(lines[:TINY // shards]) + "\n")
    with open(os.path.join(folder, "spm_input.txt"), "w") as f:
        f.write("\n".join(all_lines[:3000]) + "\n")
    import sentencepiece as spm
    spm.SentencePieceTrainer.train(
        input=os.path.join(folder, "spm_input.txt"), model_prefix=os.path.join(data, "spm"),
        vocab_size=200, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, hard_vocab_limit=False,
        minloglevel=2)
    return os.path.join(folder, MODULE)


def folder_digest(folder):
    sha = hashlib.sha256()
    for d, _, files in sorted(os.walk(folder)):
        for name in sorted(files):
            path = os.path.join(d, name)
            sha.update(os.path.relpath(path, folder).encode())
            with open(path, "rb") as f:
                sha.update(f.read())
    return sha.hexdigest()


def run_beam(usr_dir, out, options, task="bench_cache"):
    from t2t.seqio import cache_tasks
    start = time.monotonic()
    results = cache_tasks.cache_tasks([task], out, usr_dir=usr_dir, min_shards=8,
                                      base_seed=1, pipeline_options=options, ignore_other_caches=True,
                                      log_fn=lambda line: None)
    seconds = time.monotonic() - start
    return seconds, results[0].examples, folder_digest(os.path.join(out, task))


def run_tfdata(module):
    import tensorflow as tf
    from t2t import seqio
    task = seqio.get_mixture_or_task("bench_cache")
    start = time.monotonic()
    ds = task.source.get_dataset("train", shuffle=False)
    ds = task.preprocess_precache(ds, seed=1)
    count = 0
    for _ in ds.as_numpy_iterator():
        count += 1
    del tf, module
    return time.monotonic() - start, count, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=20000)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=os.path.join(HERE, "results", "cache_tasks.json"))
    args = parser.parse_args()
    std_logging.getLogger("apache_beam").setLevel(std_logging.ERROR)
    from absl import logging
    logging.set_verbosity(logging.WARNING)

    work = tempfile.mkdtemp(prefix="bench_cache_tasks_")
    usr_dir = write_corpus(work, args.examples, args.shards)
    from t2t.core import usr_dir as usr_dir_lib
    module = usr_dir_lib.import_usr_dir(usr_dir)
    options = {"direct_1": ["--runner=DirectRunner"],
               "direct_2": ["--runner=DirectRunner", "--direct_num_workers=2",
                            "--direct_running_mode=multi_processing"]}
    configs = {
        "direct_1": lambda out: run_beam(usr_dir, out, options["direct_1"]),
        "direct_2": lambda out: run_beam(usr_dir, out, options["direct_2"]),
        "tfdata": lambda out: run_tfdata(module),
    }
    times = {name: [] for name in configs}
    startup = {name: [] for name in options}
    digests = set()
    examples = None
    for repeat in range(args.repeats):
        for name, run in configs.items():
            out = os.path.join(work, "cache_%s_%d" % (name, repeat))
            seconds, count, digest = run(out)
            examples = count if examples is None else examples
            assert count == examples, (name, count, examples)
            if digest:
                digests.add(digest)
            times[name].append(seconds)
            print("repeat %d %-9s %6.2f s  %8.0f examples/s" % (repeat, name, seconds,
                                                                count / seconds), flush=True)
            if name in options:  # the same run on TINY examples: Beam's start-up
                tiny, _, _ = run_beam(usr_dir, out + "_tiny", options[name], "bench_cache_tiny")
                startup[name].append(tiny)
    assert len(digests) == 1, "caches differ between runs: %s" % digests
    base = statistics.median(times["tfdata"])
    runs = {}
    print("\n%-9s %10s %12s %14s" % ("run", "median s", "examples/s", "x tf.data"))
    for name, values in times.items():
        median = statistics.median(values)
        runs[name] = {"median_seconds": round(median, 3), "seconds": [round(v, 3) for v in values],
                      "examples_per_second": round(examples / median, 1),
                      "relative_to_tfdata": round(base / median, 3)}
        line = "%-9s %10.2f %12.0f %14.2f" % (name, median, examples / median, base / median)
        if name in startup:
            fixed = statistics.median(startup[name])
            runs[name]["startup_seconds"] = round(fixed, 3)
            runs[name]["examples_per_second_after_startup"] = round(
                (examples - TINY) / max(median - fixed, 1e-6), 1)
            line += "   start-up %.1f s, then %.0f examples/s" % (
                fixed, runs[name]["examples_per_second_after_startup"])
        print(line)
    result = {"examples": examples, "source_shards": args.shards, "output_shards": 8,
              "repeats": args.repeats, "cpu_count": os.cpu_count(),
              "identical_caches": len(digests) == 1, "runs": runs,
              "speedup_2_over_1_workers": round(runs["direct_1"]["median_seconds"]
                                                / runs["direct_2"]["median_seconds"], 3)}
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)
        f.write("\n")
    print("2 workers / 1 worker speed-up: %.2fx; wrote %s" % (
        result["speedup_2_over_1_workers"], args.output))


if __name__ == "__main__":
    main()
