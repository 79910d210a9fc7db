"""Subword vocab benchmark: build seconds, encode and decode tokens/s.

Generates a deterministic multi-script corpus (seeded, Zipf-like word frequencies, ~4 MB),
builds `SubwordTextEncoder`s of target size 8k and 32k with `build_from_generator`, and
times encoding and decoding the whole corpus. Prints a table and writes
bench/results/vocab.json:

     target   vocab  build_s  build_cpu_s  enc_cold_tok/s  encode_tok/s  decode_tok/s
       8192    8192      6.0          5.5         250,000       450,000     1,400,000

(wall-clock and CPU seconds: on a shared machine the CPU figure is the steadier one).

Then, side by side in the same run, the 8k build against sentencepiece 0.2.0's unigram
trainer (`SentencePieceTrainer.train(model_type="unigram", vocab_size=8192)`) on the same
text written to a file, at 0.5 MB and 4 MB (--sp_megabytes), runs interleaved (t2t, sp,
t2t, sp, ...; --sp_runs, median reported). Ours counts the tokens of the lines too (what
`build_from_generator` does); sentencepiece reads its file. sentencepiece trains on up to
16 threads (its default) and ours on one, so its CPU seconds can exceed its wall seconds:

      MB  t2t_s  t2t_cpu_s   sp_s  sp_cpu_s  ratio_wall  ratio_cpu
     0.5   0.62       0.61   0.70      0.66        0.89       0.92

With --t2t_oracle DIR (an unpacked tensor2tensor 1.15.7 wheel; TensorFlow and six must be
importable) the first target's build is also timed with T2T's own code in a subprocess,
and the speed-up and whether both vocabularies are identical are reported.

    python bench/bench_vocab.py [--megabytes 4] [--targets 8192,32768] [--t2t_oracle DIR]
        [--sp_megabytes 0.5,4] [--sp_runs 5]
"""
import argparse
import collections
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from t2t.encoders import text_encoder, tokenizer  # noqa: E402

_SCRIPTS = {
    "latin": "aaabcdeeeefghiiijklmnooopqrstuuvwxyz",
    "latin_ext": "aáàâäbcçdeéèêëfghiíîïjklmnñoóôöpqrsßtuúùûüvwxyz",
    "cyrillic": "аабвгдеежзиийклмнооопрстуфхцчшщъыьэюя",
    "greek": "ααβγδεεζηθιικλμνξοοπρσςτυφχψω",
    "cjk": "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过",
    "arabic": "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
}
_PUNCT = [", ", ". ", "! ", "? ", "; ", ": ", " - ", "'", " (", ") ", "\"", "_", "/"]


def make_corpus(megabytes, seed=8191):
    """Deterministic lines of text, about `megabytes` MB of UTF-8 in total."""
    rng = random.Random(seed)
    words = []
    for letters in _SCRIPTS.values():
        syllables = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 3)))
                     for _ in range(400)]
        suffixes = [""] + ["".join(rng.choice(letters) for _ in range(rng.randint(1, 3)))
                           for _ in range(30)]
        for _ in range(6000):
            stem = "".join(rng.choice(syllables) for _ in range(rng.randint(1, 4)))
            for suffix in rng.sample(suffixes, 4):
                words.append(stem + suffix)
    rng.shuffle(words)
    cumulative = []
    total = 0.0
    for rank in range(len(words)):
        total += 1.0 / (rank + 2) ** 0.9
        cumulative.append(total)
    lines = []
    size = 0
    target = megabytes * 1e6
    while size < target:
        parts = []
        for word in rng.choices(words, cum_weights=cumulative, k=rng.randint(4, 25)):
            roll = rng.random()
            if roll < 0.04:
                word = word.capitalize()
            elif roll < 0.07:
                word += str(rng.randint(0, 2024))
            parts.append(word)
            parts.append(rng.choice(_PUNCT) if rng.random() < 0.12 else " ")
        line = "".join(parts).strip()
        lines.append(line)
        size += len(line.encode("utf-8")) + 1
    return lines


_ORACLE_SCRIPT = r"""
import json, sys, time
from tensor2tensor.data_generators import text_encoder
lines = [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8")]
start, cpu_start = time.perf_counter(), time.process_time()
encoder = text_encoder.SubwordTextEncoder.build_from_generator(lines, int(sys.argv[2]))
print(json.dumps({"seconds": time.perf_counter() - start,
                  "cpu_seconds": time.process_time() - cpu_start,
                  "subtokens": list(encoder.all_subtoken_strings)}))
"""


def time_t2t_oracle(oracle_dir, lines, target):
    """Builds with T2T's own code in a subprocess; returns its timings and subtokens."""
    with tempfile.TemporaryDirectory() as tmp:
        corpus_file = os.path.join(tmp, "corpus.txt")
        with open(corpus_file, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(os.environ, PYTHONPATH=oracle_dir, TF_CPP_MIN_LOG_LEVEL="3")
        out = subprocess.run([sys.executable, "-c", _ORACLE_SCRIPT, corpus_file, str(target)],
                             env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def bench_target(lines, target):
    start, cpu_start = time.perf_counter(), time.process_time()
    encoder = text_encoder.SubwordTextEncoder.build_from_generator(lines, target)
    build_seconds = time.perf_counter() - start
    build_cpu_seconds = time.process_time() - cpu_start

    num_tokens = sum(len(tokenizer.encode(line)) for line in lines)
    start = time.perf_counter()
    encoded = [encoder.encode(line) for line in lines]
    encode_cold_seconds = time.perf_counter() - start
    start = time.perf_counter()
    encoded = [encoder.encode(line) for line in lines]
    encode_seconds = time.perf_counter() - start
    start = time.perf_counter()
    decoded = [encoder.decode(ids) for ids in encoded]
    decode_seconds = time.perf_counter() - start
    if decoded != lines:
        raise AssertionError("decode(encode(line)) != line for target %d" % target)
    return encoder, {
        "target_size": target,
        "vocab_size": encoder.vocab_size,
        "build_seconds": round(build_seconds, 2),
        "build_cpu_seconds": round(build_cpu_seconds, 2),
        "tokens": num_tokens,
        "subtoken_ids": sum(len(ids) for ids in encoded),
        "encode_tokens_per_second_cold_cache": round(num_tokens / encode_cold_seconds),
        "encode_tokens_per_second": round(num_tokens / encode_seconds),
        "decode_tokens_per_second": round(num_tokens / decode_seconds),
    }


def _timed(fn):
    start, cpu_start = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - start, time.process_time() - cpu_start


def compare_with_sentencepiece(megabytes, runs, target=8192):
    """Median wall and CPU seconds of our 8k build and sentencepiece's unigram trainer."""
    import sentencepiece as spm

    lines = make_corpus(megabytes)
    times = {"t2t": [], "t2t_cpu": [], "sp": [], "sp_cpu": []}
    with tempfile.TemporaryDirectory() as tmp:
        corpus_file = os.path.join(tmp, "corpus.txt")
        with open(corpus_file, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        for _ in range(runs):
            encoder, wall, cpu = _timed(
                lambda: text_encoder.SubwordTextEncoder.build_from_generator(lines, target))
            times["t2t"].append(wall)
            times["t2t_cpu"].append(cpu)
            _, wall, cpu = _timed(lambda: spm.SentencePieceTrainer.train(
                input=corpus_file, model_prefix=os.path.join(tmp, "sp"), vocab_size=target,
                model_type="unigram", minloglevel=2))
            times["sp"].append(wall)
            times["sp_cpu"].append(cpu)
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {"megabytes": megabytes, "runs": runs, "t2t_vocab_size": encoder.vocab_size,
            "t2t_seconds": round(medians["t2t"], 3),
            "t2t_cpu_seconds": round(medians["t2t_cpu"], 3),
            "sentencepiece_seconds": round(medians["sp"], 3),
            "sentencepiece_cpu_seconds": round(medians["sp_cpu"], 3),
            "ratio_wall": round(medians["t2t"] / medians["sp"], 2),
            "ratio_cpu": round(medians["t2t_cpu"] / medians["sp_cpu"], 2)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=4.0)
    parser.add_argument("--targets", default="8192,32768")
    parser.add_argument("--t2t_oracle", default=os.environ.get("T2T_ORACLE_DIR", ""),
                        help="unpacked tensor2tensor 1.15.7 wheel, to time T2T's own build")
    parser.add_argument("--output", default=os.path.join(HERE, "results", "vocab.json"))
    parser.add_argument("--sp_megabytes", default="0.5,4",
                        help="corpus sizes of the side-by-side run against sentencepiece")
    parser.add_argument("--sp_runs", type=int, default=5)
    args = parser.parse_args()

    start = time.perf_counter()
    lines = make_corpus(args.megabytes)
    corpus_bytes = sum(len(line.encode("utf-8")) + 1 for line in lines)
    print("corpus: %d lines, %.2f MB, %d distinct tokens (generated in %.1f s)"
          % (len(lines), corpus_bytes / 1e6,
             len(collections.Counter(t for line in lines for t in tokenizer.encode(line))),
             time.perf_counter() - start))
    results = {"corpus_lines": len(lines), "corpus_megabytes": round(corpus_bytes / 1e6, 2),
               "python": sys.version.split()[0], "runs": []}
    built = {}
    header = ("target", "vocab", "build_s", "build_cpu_s", "enc_cold_tok/s", "encode_tok/s",
              "decode_tok/s")
    print("%7s %7s %8s %11s %15s %13s %13s" % header)
    for target in [int(t) for t in args.targets.split(",") if t]:
        encoder, run = bench_target(lines, target)
        built[target] = encoder
        results["runs"].append(run)
        print("%7d %7d %8.1f %11.1f %15s %13s %13s" % (
            target, run["vocab_size"], run["build_seconds"], run["build_cpu_seconds"],
            "{:,}".format(run["encode_tokens_per_second_cold_cache"]),
            "{:,}".format(run["encode_tokens_per_second"]),
            "{:,}".format(run["decode_tokens_per_second"])))

    if args.t2t_oracle:
        first = results["runs"][0]
        target = first["target_size"]
        t2t = time_t2t_oracle(args.t2t_oracle, lines, target)
        same = t2t["subtokens"] == list(built[target].all_subtoken_strings)
        results["t2t_oracle"] = {
            "target_size": target,
            "t2t_build_seconds": round(t2t["seconds"], 2),
            "t2t_build_cpu_seconds": round(t2t["cpu_seconds"], 2),
            "speedup_wall": round(t2t["seconds"] / first["build_seconds"], 1),
            "speedup_cpu": round(t2t["cpu_seconds"] / first["build_cpu_seconds"], 1),
            "identical_vocab": same}
        print("T2T 1.15.7 build (target %d): %.1f s (%.1f s CPU); ours %.1f s (%.1f s CPU): "
              "%.1fx less CPU; identical vocab: %s"
              % (target, t2t["seconds"], t2t["cpu_seconds"], first["build_seconds"],
                 first["build_cpu_seconds"], results["t2t_oracle"]["speedup_cpu"], same))

    if args.sp_megabytes:
        import sentencepiece
        results["sentencepiece_version"] = sentencepiece.__version__
        results["versus_sentencepiece"] = []
        print("8k vocab vs sentencepiece %s unigram (median of %d interleaved runs):"
              % (sentencepiece.__version__, args.sp_runs))
        print("%6s %7s %10s %7s %9s %11s %10s" % ("MB", "t2t_s", "t2t_cpu_s", "sp_s",
                                                  "sp_cpu_s", "ratio_wall", "ratio_cpu"))
        for megabytes in [float(m) for m in args.sp_megabytes.split(",") if m]:
            row = compare_with_sentencepiece(megabytes, args.sp_runs)
            results["versus_sentencepiece"].append(row)
            print("%6.1f %7.2f %10.2f %7.2f %9.2f %11.2f %10.2f" % (
                megabytes, row["t2t_seconds"], row["t2t_cpu_seconds"],
                row["sentencepiece_seconds"], row["sentencepiece_cpu_seconds"],
                row["ratio_wall"], row["ratio_cpu"]))

    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    print("wrote", args.output)


if __name__ == "__main__":
    main()
