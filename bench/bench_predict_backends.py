"""Decoding speed of the two prediction paths: `tf.estimator.Estimator.predict` vs t2t's
Estimator-free `CheckpointPredictor` (a v1 graph restored into a Session), in one run.

A transformer_tiny with random weights (saved as a checkpoint) decodes the same file of
`--lines` binary strings of `algorithmic_reverse_binary40_test` through
`decoding.decode_from_file` (batches of 32, longest first), greedy and beam 4, on each
path. Runs are interleaved (estimator, native, estimator, ...) so machine load hits both
alike; the fastest of `--repeats` is reported by wall clock and by process CPU time, with
native / estimator ratios (below 1: the native path is faster). The decodes of the two
paths must be identical (checked). Needs TensorFlow 2.15 (the Estimator path).

    python bench/bench_predict_backends.py [--lines 256] [--repeats 3]
    # prints seconds per path and writes bench/results/predict_backends.json
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

from t2t.core import backend_choice
from t2t.core import registry
from t2t.decoding import decoding
from t2t.decoding import predictor
from t2t.model import model_hparams

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEM = "algorithmic_reverse_binary40_test"
MODEL = "transformer"


def make_hparams():
    hparams = registry.hparams("transformer_tiny")
    hparams.add_hparam("data_dir", None)
    model_hparams.add_problem_hparams(hparams, PROBLEM)
    return hparams


def save_random_checkpoint(hparams, model_dir):
    """A checkpoint of a freshly initialised model (the PREDICT graph creates every weight)."""
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(1)
        tf.compat.v1.train.get_or_create_global_step()
        inputs = tf.zeros([1, 4, 1, 1], tf.int32)
        predictor.model_predictions(MODEL, hparams, {"inputs": inputs},
                                    decoding.decode_hparams("beam_size=1,extra_length=2"))
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, os.path.join(model_dir, "model.ckpt"), global_step=1)


def run(runner, source, hparams, decode_hp, out):
    wall, cpu = time.perf_counter(), time.process_time()
    decodes = decoding.decode_from_file(runner, source, hparams, decode_hp, decode_to_file=out)
    return time.perf_counter() - wall, time.process_time() - cpu, decodes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not backend_choice.estimator_available():
        sys.exit("bench_predict_backends: needs tf.estimator (TensorFlow 2.15, Python 3.9-3.11)")
    from absl import logging
    logging.set_verbosity(logging.WARNING)
    workdir = tempfile.mkdtemp(prefix="bench_predict_")
    hparams = make_hparams()
    model_dir = os.path.join(workdir, "train")
    save_random_checkpoint(hparams, model_dir)
    rng = np.random.RandomState(0)
    source = os.path.join(workdir, "inputs.txt")
    with open(source, "w") as f:
        for _ in range(args.lines):
            f.write(" ".join(str(b) for b in rng.randint(0, 2, rng.randint(4, 11))) + "\n")
    results = {}
    for name, overrides in (("greedy", "beam_size=1,alpha=0.0,extra_length=20,log_results=false"),
                            ("beam4", "beam_size=4,alpha=0.6,extra_length=20,log_results=false")):
        best = {}
        decodes = {}
        for repeat in range(args.repeats + 1):  # the first round warms up
            for backend in ("estimator", "native"):
                decode_hp = decoding.decode_hparams(overrides)
                # One session config for both, as t2t-decoder gives them.
                runner = predictor.create_predictor(
                    MODEL, hparams, model_dir, decode_hp, backend=backend,
                    session_config=predictor.default_session_config())
                wall, cpu, out = run(runner, source, hparams, decode_hp,
                                     os.path.join(workdir, "%s.%s" % (name, backend)))
                decodes[backend] = out
                if repeat:
                    old = best.get(backend, (float("inf"), float("inf")))
                    best[backend] = (min(old[0], wall), min(old[1], cpu))
        if decodes["estimator"] != decodes["native"]:
            sys.exit("bench_predict_backends: %s decodes differ between the paths" % name)
        results[name] = {
            "estimator_seconds": best["estimator"][0], "native_seconds": best["native"][0],
            "estimator_cpu_seconds": best["estimator"][1],
            "native_cpu_seconds": best["native"][1],
            "native_over_estimator": best["native"][0] / best["estimator"][0],
            "native_over_estimator_cpu": best["native"][1] / best["estimator"][1],
            "identical_decodes": True,
        }
        print("%-6s estimator %.2f s (cpu %.2f)  native %.2f s (cpu %.2f)  native/estimator "
              "%.2f (cpu %.2f)" % (name, best["estimator"][0], best["estimator"][1],
                                   best["native"][0], best["native"][1],
                                   results[name]["native_over_estimator"],
                                   results[name]["native_over_estimator_cpu"]))
    report = {"config": {"model": MODEL, "hparams_set": "transformer_tiny", "problem": PROBLEM,
                         "lines": args.lines, "batch_size": 32, "repeats": args.repeats,
                         "tensorflow": tf.__version__,
                         "load_average": list(os.getloadavg())},
              "results": results}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    path = os.path.join(HERE, "results", "predict_backends.json")
    with open(path + ".tmp", "w") as f:
        json.dump(report, f, indent=2)
    os.replace(path + ".tmp", path)
    print("wrote", path)


if __name__ == "__main__":
    main()
