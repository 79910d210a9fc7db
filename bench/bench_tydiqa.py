"""TyDi QA preprocessing benchmark: examples/s and windows/s, 1 process and 2.

Writes a deterministic 2,000-document TyDi QA-format file (seven scripts, 20 passages of
50 words each, ~20 KB of UTF-8 per document), then runs the preprocessing pipeline
(`t2t.tydiqa.pipeline`: parse, contexts and byte maps, tokenization with offsets,
windows with labels, serialized tf.train.Example bytes - what t2t-datagen writes) over it for each tokenizer and split, with 1 and with 2 worker
processes, side by side, `--repeats` times; prints medians (and the seconds to the first
window - process start-up - and the CPU seconds of the parent and of the workers, the
steadier figures on a shared machine) and writes bench/results/tydiqa.json:

    tokenizer   split  procs  examples/s  windows/s  windows  speed-up first_s
    subwords    train      1         ...        ...      ...     1.00x    0.02
    subwords    train      2         ...        ...      ...     1.60x    0.60

Also timed, per window: serializing with TensorFlow's protos (`generator_utils.to_example`,
what a Problem normally does in the parent) against `t2t.tydiqa.records` (the workers').

    python bench/bench_tydiqa.py [--documents 2000] [--repeats 3]
"""
import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from t2t.tydiqa import pipeline, synthetic, tokenizers, windows  # noqa: E402

# ~1,000 words (~20 KB of UTF-8) per document, 20 passage candidates.
NUM_PASSAGES = 20
WORDS_PER_PASSAGE = 50


def _cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime)


def run_once(path, spec, processes):
    """(seconds, seconds to the first window, examples, windows, parent CPU s, worker CPU s)."""
    cpu = _cpu()
    start = time.perf_counter()
    stream = pipeline.FeatureStream(path, spec, num_processes=processes, serialize=True)
    count, first = 0, None
    for _ in stream:
        if first is None:
            first = time.perf_counter() - start
        count += 1
    seconds = time.perf_counter() - start
    parent, workers = (after - before for after, before in zip(_cpu(), cpu))
    return seconds, first, stream.summary.examples, count, parent, workers


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="bench_tydiqa_")
    path = synthetic.write_jsonl_gz(
        os.path.join(workdir, "tydiqa-bench.jsonl.gz"),
        synthetic.learnable_examples(args.documents, seed=7, num_passages=NUM_PASSAGES,
                                     words_per_passage=WORDS_PER_PASSAGE,
                                     words_per_language=1200))
    texts = (line["question_text"] + "\n" + line["document_plaintext"]
             for line in synthetic.learnable_examples(100, seed=7, num_passages=NUM_PASSAGES,
                                                      words_per_passage=WORDS_PER_PASSAGE,
                                                      words_per_language=1200))
    vocab = os.path.join(workdir, "vocab.subwords")
    started = time.perf_counter()
    tokenizers.build_subword_encoder(texts, 8192, 45).store_to_file(vocab)
    vocab_seconds = time.perf_counter() - started
    specs = {"codepoints": tokenizers.TokenizerSpec("codepoints"),
             "subwords": tokenizers.TokenizerSpec("subwords", vocab, 45)}
    config = windows.WindowConfig()  # the reference's 512 / 128 / 64 / 0.1

    rows = []
    print("%-11s %-6s %5s %11s %10s %8s %9s %7s %6s %6s" % (
        "tokenizer", "split", "procs", "examples/s", "windows/s", "windows", "speed-up",
        "first_s", "cpu_p", "cpu_w"))
    for name, tokenizer_spec in specs.items():
        for training in (True, False):
            spec = pipeline.PipelineSpec(tokenizer_spec, config, 45, training, seed=1)
            times, startup, cpu = {1: [], 2: []}, {1: [], 2: []}, {1: [], 2: []}
            for _ in range(args.repeats):
                for processes in (1, 2):  # side by side, so both see the same machine load
                    seconds, first, examples, count, parent, workers = run_once(
                        path, spec, processes)
                    times[processes].append(seconds)
                    startup[processes].append(first)
                    cpu[processes].append((parent, workers))
            base = statistics.median(times[1])
            for processes in (1, 2):
                seconds = statistics.median(times[processes])
                first = statistics.median(startup[processes])
                parent_cpu = statistics.median(c[0] for c in cpu[processes])
                worker_cpu = statistics.median(c[1] for c in cpu[processes])
                row = {"tokenizer": name, "split": "train" if training else "dev",
                       "processes": processes, "examples": examples, "windows": count,
                       "median_seconds": round(seconds, 3),
                       "seconds_to_first_window": round(first, 3),
                       "examples_per_second": round(examples / seconds, 1),
                       "windows_per_second": round(count / seconds, 1),
                       "speedup_vs_1_process": round(base / seconds, 2),
                       "parent_cpu_seconds": round(parent_cpu, 2),
                       "worker_cpu_seconds": round(worker_cpu, 2),
                       "examples_per_cpu_second": round(examples / (parent_cpu + worker_cpu),
                                                        1)}
                rows.append(row)
                print("%-11s %-6s %5d %11.1f %10.1f %8d %8.2fx %7.2f %6.1f %6.1f" % (
                    name, row["split"], processes, row["examples_per_second"],
                    row["windows_per_second"], count, row["speedup_vs_1_process"], first,
                    parent_cpu, worker_cpu))

    # Serialization per window: TensorFlow's protos against t2t.tydiqa.records.
    from t2t.data import generator_utils  # imports TensorFlow
    from t2t.tydiqa import records
    spec = pipeline.PipelineSpec(specs["codepoints"], config, 45, False, seed=1)
    features = list(pipeline.FeatureStream(path, spec, max_examples=100))
    started = time.perf_counter()
    for window in features:
        generator_utils.to_example(window).SerializeToString()
    tf_rate = len(features) / (time.perf_counter() - started)
    started = time.perf_counter()
    for window in features:
        records.serialize_int64_example(window)
    our_rate = len(features) / (time.perf_counter() - started)
    print("serialization of dev windows (512 positions): TensorFlow protos %.0f windows/s, "
          "t2t.tydiqa.records %.0f windows/s" % (tf_rate, our_rate))
    result = {"documents": args.documents, "repeats": args.repeats,
              "window_config": {"max_seq_length": config.max_seq_length,
                                "doc_stride": config.doc_stride,
                                "max_question_length": config.max_question_length,
                                "include_unknowns": config.include_unknowns},
              "file_megabytes": round(os.path.getsize(path) / 1e6, 2),
              "subword_vocab_build_seconds": round(vocab_seconds, 2),
              "rows": rows,
              "serialize_windows_per_second": {"tensorflow_to_example": round(tf_rate, 1),
                                               "t2t_tydiqa_records": round(our_rate, 1)},
              "cpu_count": os.cpu_count()}
    out = os.path.join(HERE, "results", "tydiqa.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out + ".tmp", "w") as handle:
        json.dump(result, handle, indent=1)
    os.replace(out + ".tmp", out)
    print("wrote", out)


if __name__ == "__main__":
    main()
