"""The Python API's cost per call: `t2t.load(folder).decode(one sentence)` against the bare
SavedModel signature on the same sentence (issue 32's goal: within 20%).

For a training folder, decodes one short sentence greedily `--calls` times, each engine in
turn (interleaved rounds, after a warm-up call each), and reports the median per-call
latency of:

    api_checkpoint    t2t.load(model_dir).decode(sentence, beam_size=1)
    api_savedmodel    t2t.load(export).decode(sentence)                  (encode + decode text)
    signature         tf.saved_model.load(export).signatures["serialized_example"] on the
                      sentence's ids (encoded once, outside the timing): the floor
    api_ctranslate2   t2t.load(model_dir, engine="ctranslate2").decode(sentence, beam_size=1)

The SavedModel is exported greedy (beam_size=1) into `--work_dir` once.

    python bench/api_latency.py --model_dir=/work/m30k/train --data_dir=/work/m30k/data
    # writes bench/results/api_latency.json
"""
import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import inference_systems

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = os.path.dirname(os.path.abspath(__file__))
SENTENCE = "A man in a blue shirt is standing on a ladder."


def export_greedy(args):
    """The folder of a greedy SavedModel of `--model_dir` (exported once)."""
    found = sorted(glob.glob(os.path.join(args.work_dir, "export", "[0-9]*", "saved_model.pb*")))
    if not found:
        subprocess.run(inference_systems.t2t_export_command(
            os.path.dirname(sys.executable), args.model_dir,
            os.path.join(args.work_dir, "export"), "--decode_hparams=beam_size=1",
            problem=args.problem, hparams_set=args.hparams_set, data_dir=args.data_dir),
            check=True)
        found = sorted(glob.glob(os.path.join(args.work_dir, "export", "[0-9]*",
                                              "saved_model.pb*")))
    return os.path.dirname(found[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model_dir", required=True, help="a t2t training folder")
    parser.add_argument("--data_dir", default="", help="its data folder, if not recorded")
    parser.add_argument("--problem", default="translate_ende_multi30k")
    parser.add_argument("--hparams_set", default="transformer_multi30k")
    parser.add_argument("--work_dir", default="/tmp/t2t_bench_api_latency")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "api_latency.json"))
    args = parser.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    export = export_greedy(args)

    import tensorflow as tf
    import t2t
    from t2t.core import atomic_files
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    data_dir = args.data_dir or None
    api = t2t.load(args.model_dir, data_dir=data_dir, threads=args.threads)
    api_saved = t2t.load(export, threads=args.threads)
    api_ct2 = t2t.load(args.model_dir, data_dir=data_dir, engine="ctranslate2",
                       threads=args.threads)
    signature = tf.saved_model.load(export).signatures["serialized_example"]
    ids = api.encode_inputs([SENTENCE])[0]  # with EOS, as the signature takes them
    example = tf.train.Example(features=tf.train.Features(feature={"inputs": tf.train.Feature(
        int64_list=tf.train.Int64List(value=ids))})).SerializeToString()
    serialized = tf.constant([example])
    calls = {
        "api_checkpoint": lambda: api.decode(SENTENCE, beam_size=1),
        "api_savedmodel": lambda: api_saved.decode(SENTENCE),
        "signature": lambda: signature(serialized_example=serialized)["outputs"].numpy(),
        "api_ctranslate2": lambda: api_ct2.decode(SENTENCE, beam_size=1)}
    outputs = {name: call() for name, call in calls.items()}  # warm-up (graphs, caches)
    times = {name: [] for name in calls}
    for _ in range(args.calls):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) * 1000 for name, t in times.items()}
    for name, ms in medians.items():
        print("%-16s %7.1f ms  (%s)" % (name, ms, outputs[name] if name != "signature"
                                       else "ids"))
    ratio = medians["api_savedmodel"] / medians["signature"]
    print("api_savedmodel / signature: %.2f" % ratio)
    report = {"sentence": SENTENCE, "calls": args.calls, "threads": args.threads,
              "model_dir": args.model_dir, "median_ms": {k: round(v, 2)
                                                         for k, v in medians.items()},
              "api_savedmodel_over_signature": round(ratio, 3),
              "api_checkpoint_over_signature": round(
                  medians["api_checkpoint"] / medians["signature"], 3),
              "python": platform.python_version(), "tensorflow": tf.__version__,
              "load_average": os.getloadavg(), "date": time.strftime("%Y-%m-%d")}
    if args.out:
        with atomic_files.atomic_write(args.out, "w") as handle:
            json.dump(report, handle, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
