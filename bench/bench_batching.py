"""Padding efficiency and speed of three ways to batch variable-length examples.

Writes ~20k translation-like examples to TFRecords in a temporary folder, then reads the
same records (TFRecordDataset + parse_single_example, as Problem.dataset does) three ways:

  (a) padded   : plain `padded_batch` of a fixed number of examples, chosen so a batch
                 holds 4096 example-length tokens on average (as a bucketed batch), then
                 the model shapes (`standardize_shapes`)
  (b) sorted   : `data_reader.input_fn` with `token_batching=sorted` (opt-in): length-sorted
                 windows cut into 4096-token batches, max_length 256
  (b') bucketed: `data_reader.input_fn` as it batches by default, T2T's length buckets
                 (`token_batching=buckets`), batch_size 4096 tokens, max_length 256
  (c) packed   : `pack_dataset(length=256)`, then `input_fn`: 4096 // 256 = 16 rows a batch
  fixed_fn     : for reference, (a) through `input_fn` (`use_fixed_batch_size`), which
                 also drops examples longer than max_length

`input_fn` runs in train mode with prevent_repeat and no batch shuffle, so one pass sees
every example once; each timed run reads the records `--epochs` times, for steady-state
figures (training repeats the data). Padding efficiency = real (nonzero) tokens / all positions in the
batches, over inputs and targets together. Speed = examples per second through the whole
pipeline (read, parse, batch, cast, reshape): the median over runs and the best run (least
disturbed by other processes), plus CPU microseconds per example used by this process
(steadier than wall time on a shared machine). Runs are interleaved (a, b, c, a, b, c,
...) so machine load hits all alike; ratios are against (a). The load average is recorded.

    python bench/bench_batching.py [--examples 20000] [--repeats 11] [--epochs 3]
    # prints a table and writes bench/results/batching.json
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

from t2t.core.modes import ModeKeys
from t2t.data import data_reader
from t2t.data import packing
from t2t.data.record_windows import RecordWindows
from t2t.layers import common_hparams

MAX_LENGTH = 256
TOKENS_PER_BATCH = 4096
VOCAB_SIZE = 32000


def example_lengths(num_examples, seed):
    """Lognormal source lengths (median 24) clipped to 3..256; targets ~ source x noise.

    Target/source length ratios of real parallel text spread by roughly +-10-15%; the
    lengths count EOS.
    """
    rng = np.random.RandomState(seed)
    inputs = np.clip(np.round(rng.lognormal(np.log(24), 0.7, num_examples)), 3, MAX_LENGTH)
    ratio = np.exp(rng.normal(0.0, 0.12, num_examples))
    targets = np.clip(np.round(inputs * ratio), 3, MAX_LENGTH)
    return inputs.astype(np.int64), targets.astype(np.int64)


def write_records(path, inputs_lengths, targets_lengths, seed):
    rng = np.random.RandomState(seed + 1)
    with tf.io.TFRecordWriter(path) as writer:
        for n_in, n_tg in zip(inputs_lengths, targets_lengths):
            features = {}
            for name, n in (("inputs", n_in), ("targets", n_tg)):
                ids = rng.randint(2, VOCAB_SIZE, size=n).tolist()
                ids[-1] = 1  # EOS
                features[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=ids))
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())


SPEC = {"inputs": tf.io.VarLenFeature(tf.int64), "targets": tf.io.VarLenFeature(tf.int64)}


def read_dataset(path, epochs=1):
    def parse(record):
        parsed = tf.io.parse_single_example(record, SPEC)
        return {k: tf.sparse.to_dense(v) for k, v in parsed.items()}

    records = tf.data.TFRecordDataset(path).repeat(epochs)
    return records.map(parse, num_parallel_calls=tf.data.AUTOTUNE)


def read_record_windows(path, epochs=1):
    """The records as `Problem.input_fn` hands them to length bucketing and sorted token
    batching: still serialized, parsed a window at a time."""
    return RecordWindows(tf.data.TFRecordDataset(path).repeat(epochs), SPEC)


def make_pipelines(path, padded_batch_examples, epochs=1):
    def hparams(**overrides):
        hp = common_hparams.basic_params1()
        hp.batch_size = TOKENS_PER_BATCH
        hp.max_length = MAX_LENGTH
        hp.batch_shuffle_size = 0
        for name, value in overrides.items():
            setattr(hp, name, value)
        return hp

    def build(hp, pack, windows=False):
        def pipeline():
            dataset = (read_record_windows if windows else read_dataset)(path, epochs)
            if pack and windows:
                dataset = dataset.packed(MAX_LENGTH, ["inputs", "targets"])
            elif pack:
                dataset = packing.pack_dataset(dataset, MAX_LENGTH, keys=["inputs", "targets"])
            return data_reader.input_fn(
                dataset, path, skip_random_fraction_when_training=False,
                batch_size_means_tokens_param=True, batch_size_multiplier=1,
                max_length=MAX_LENGTH, mode=ModeKeys.TRAIN, hparams=hp,
                prevent_repeat=True)
        return pipeline

    def plain_padded_batch():
        def finish(features):
            features = data_reader.standardize_shapes(features)
            return features, features["targets"]
        dataset = data_reader.padded_batch(read_dataset(path, epochs), padded_batch_examples)
        return dataset.map(finish, num_parallel_calls=tf.data.AUTOTUNE).prefetch(
            tf.data.AUTOTUNE)

    return {
        "padded": plain_padded_batch,
        "sorted": build(hparams(token_batching="sorted"), pack=False, windows=True),
        "bucketed": build(hparams(token_batching="buckets"), pack=False, windows=True),
        "bucketed_per_example": build(hparams(token_batching="buckets"), pack=False),
        "packed": build(hparams(pack_dataset=True), pack=True, windows=True),
        "packed_per_example": build(hparams(pack_dataset=True), pack=True),
        "fixed_fn": build(hparams(use_fixed_batch_size=True, batch_size=padded_batch_examples),
                          pack=False),
    }


def measure_efficiency(dataset):
    """(examples, batches, real tokens, all positions, per-feature efficiency)."""
    examples = batches = 0
    real = {"inputs": 0, "targets": 0}
    total = {"inputs": 0, "targets": 0}
    for features, _ in dataset:
        batches += 1
        if "targets_segmentation" in features:
            examples += int(np.sum(np.max(features["targets_segmentation"].numpy(), axis=1)))
        else:
            examples += int(features["targets"].shape[0])
        for name in real:
            values = features[name].numpy()
            real[name] += int(np.count_nonzero(values))
            total[name] += int(values.size)
    return {
        "examples": examples,
        "batches": batches,
        "efficiency": sum(real.values()) / sum(total.values()),
        "efficiency_inputs": real["inputs"] / total["inputs"],
        "efficiency_targets": real["targets"] / total["targets"],
    }


def time_pass(dataset):
    """(wall seconds, CPU seconds of this process) for one pass over the dataset."""
    start, start_cpu = time.perf_counter(), time.process_time()
    for _ in dataset:
        pass
    return time.perf_counter() - start, time.process_time() - start_cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--epochs", type=int, default=3,
                        help="passes over the records in each timed run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "batching.json"))
    args = parser.parse_args(argv)

    inputs_lengths, targets_lengths = example_lengths(args.examples, args.seed)
    mean_length = float(np.mean(np.maximum(inputs_lengths, targets_lengths)))
    padded_batch_examples = max(1, int(round(TOKENS_PER_BATCH / mean_length)))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench-train-00000-of-00001")
        write_records(path, inputs_lengths, targets_lengths, args.seed)
        pipelines = make_pipelines(path, padded_batch_examples)
        figures = {name: measure_efficiency(build()) for name, build in pipelines.items()}
        for name, stats in figures.items():
            if stats["examples"] != args.examples:
                raise RuntimeError("%s produced %d examples, expected %d" %
                                   (name, stats["examples"], args.examples))
        # Timed runs read the records `epochs` times (steady state, as training's repeat()).
        timed = make_pipelines(path, padded_batch_examples, args.epochs)
        datasets = {name: build() for name, build in timed.items()}
        for dataset in datasets.values():
            time_pass(dataset)  # warm-up: tracing and file cache
        seconds = {name: [] for name in datasets}
        cpu_seconds = {name: [] for name in datasets}
        for _ in range(args.repeats):
            for name, dataset in datasets.items():
                wall, cpu = time_pass(dataset)
                seconds[name].append(wall)
                cpu_seconds[name].append(cpu)

    for name, stats in figures.items():
        stats["seconds"] = seconds[name]
        stats["cpu_seconds"] = cpu_seconds[name]
        per_run = args.examples * args.epochs
        stats["examples_per_second"] = per_run / statistics.median(seconds[name])
        stats["best_examples_per_second"] = per_run / min(seconds[name])
        stats["cpu_us_per_example"] = 1e6 * statistics.median(cpu_seconds[name]) / per_run
    base = figures["padded"]
    for stats in figures.values():
        stats["efficiency_vs_padded"] = stats["efficiency"] / base["efficiency"]
        stats["speed_vs_padded"] = stats["examples_per_second"] / base["examples_per_second"]
        stats["best_speed_vs_padded"] = (stats["best_examples_per_second"] /
                                         base["best_examples_per_second"])
        stats["cpu_vs_padded"] = stats["cpu_us_per_example"] / base["cpu_us_per_example"]
        # Runs are interleaved, so run i of every pipeline saw about the same machine load:
        # the median of the per-run ratios is steadier than the ratio of medians.
        stats["speed_vs_padded_paired_median"] = statistics.median(
            padded / own for padded, own in zip(base["seconds"], stats["seconds"]))

    print("%d examples, mean example length %.1f (inputs %.1f, targets %.1f); padded "
          "batches of %d examples; %d timed runs of %d epochs each; load average %.1f" %
          (args.examples, mean_length, inputs_lengths.mean(), targets_lengths.mean(),
           padded_batch_examples, args.repeats, args.epochs, os.getloadavg()[0]))
    header = "%-20s %7s %10s %7s %7s %10s %8s %9s %8s %9s %8s %8s %9s" % (
        "pipeline", "batches", "efficiency", "inputs", "targets", "examples/s", "best",
        "cpu us/ex", "eff/(a)", "speed/(a)", "best/(a)", "cpu/(a)", "paired/(a)")
    print(header)
    print("-" * len(header))
    for name, stats in figures.items():
        print("%-20s %7d %10.4f %7.4f %7.4f %10.0f %8.0f %9.1f %8.2f %9.2f %8.2f %8.2f %9.2f" % (
            name, stats["batches"], stats["efficiency"], stats["efficiency_inputs"],
            stats["efficiency_targets"], stats["examples_per_second"],
            stats["best_examples_per_second"], stats["cpu_us_per_example"],
            stats["efficiency_vs_padded"], stats["speed_vs_padded"],
            stats["best_speed_vs_padded"], stats["cpu_vs_padded"],
            stats["speed_vs_padded_paired_median"]))

    result = {
        "examples": args.examples,
        "repeats": args.repeats,
        "epochs_per_run": args.epochs,
        "seed": args.seed,
        "mean_example_length": mean_length,
        "padded_batch_examples": padded_batch_examples,
        "tokens_per_batch": TOKENS_PER_BATCH,
        "max_length": MAX_LENGTH,
        "cpu_count": os.cpu_count(),
        "load_average_at_end": os.getloadavg()[0],
        "pipelines": figures,
        "targets": {"sorted_efficiency": 0.90, "bucketed_efficiency": 0.90,
                    "packed_efficiency": 0.97, "speed_vs_padded": 1.0},
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".tmp", "w") as handle:
        json.dump(result, handle, indent=2)
    os.replace(args.out + ".tmp", args.out)
    print("wrote %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
