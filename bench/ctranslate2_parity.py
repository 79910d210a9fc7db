"""CTranslate2 against TensorFlow on a trained t2t Transformer: the same decodes?

Decodes a test file with `t2t.load(model_dir)` (TensorFlow, the checkpoint) and with its
CTranslate2 conversions (float32 and int8), greedy and beam 4, and reports how many greedy
lines are identical, the BLEU of each, and the decoding time of each (in-process, model
loaded, 2 threads):

    python bench/ctranslate2_parity.py --model_dir=~/t2t_train/m30k \\
        --source=~/t2t_data/m30k/translate_ende_multi30k.test_2016_flickr.en \\
        --reference=~/t2t_data/m30k/translate_ende_multi30k.test_2016_flickr.de
    # writes bench/results/ctranslate2_parity.json

Issue 32's criteria: greedy identical on >= 99% of lines, beam-4 BLEU within 0.2 of
TensorFlow's at float32, int8 BLEU within 0.5 of float32.
"""
import argparse
import json
import os
import platform
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = os.path.dirname(os.path.abspath(__file__))


def read_lines(path):
    with open(os.path.expanduser(path), encoding="utf-8") as handle:
        return handle.read().split("\n")[:-1]


def timed_decode(model, lines, **settings):
    start = time.perf_counter()
    decodes = model.decode(lines, batch_size=32, **settings)
    return decodes, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=os.path.join(HERE, "results",
                                                      "ctranslate2_parity.json"))
    args = parser.parse_args()
    import t2t
    from t2t.core import atomic_files
    from t2t.evaluation import bleu_hook
    sources, references = read_lines(args.source), read_lines(args.reference)
    engines = {"tensorflow": dict(engine="tensorflow"),
               "ctranslate2_float32": dict(engine="ctranslate2", quantization="float32"),
               "ctranslate2_int8": dict(engine="ctranslate2", quantization="int8")}
    results = {"model_dir": args.model_dir, "lines": len(sources), "threads": args.threads,
               "python": platform.python_version(), "load_average": os.getloadavg(),
               "systems": {}}
    decodes = {}
    for name, kwargs in engines.items():
        with t2t.load(args.model_dir, threads=args.threads, **kwargs) as model:
            model.decode(sources[:4], beam_size=1)  # warm-up (graph builds)
            model.decode(sources[:4], beam_size=4)
            entry = {}
            for label, beam in (("greedy", 1), ("beam4", 4)):
                out, seconds = timed_decode(model, sources, beam_size=beam, alpha=0.6)
                decodes[(name, label)] = out
                bleu, signature = bleu_hook.sacrebleu_corpus_score(out, references)
                entry[label] = {"bleu": round(bleu, 2), "seconds": round(seconds, 1),
                                "sentences_per_sec": round(len(out) / seconds, 1)}
                print("%-20s %-6s BLEU %.2f  %.1f s" % (name, label, bleu, seconds),
                      flush=True)
            results["systems"][name] = entry
    results["signature"] = signature
    for name in ("ctranslate2_float32", "ctranslate2_int8"):
        same = sum(a == b for a, b in zip(decodes[(name, "greedy")],
                                          decodes[("tensorflow", "greedy")]))
        results["systems"][name]["greedy_identical_to_tensorflow"] = round(
            same / len(sources), 4)
        print("%s: greedy identical to TensorFlow on %d of %d lines" % (name, same,
                                                                       len(sources)))
    tf_bleu = results["systems"]["tensorflow"]["beam4"]["bleu"]
    f32 = results["systems"]["ctranslate2_float32"]["beam4"]["bleu"]
    i8 = results["systems"]["ctranslate2_int8"]["beam4"]["bleu"]
    results["criteria"] = {
        "greedy_identical_ge_99_percent":
            results["systems"]["ctranslate2_float32"]["greedy_identical_to_tensorflow"] >= 0.99,
        "beam4_bleu_within_0.2_of_tensorflow": abs(f32 - tf_bleu) <= 0.2,
        "int8_bleu_within_0.5_of_float32": abs(i8 - f32) <= 0.5}
    print(json.dumps(results["criteria"]))
    if args.out:
        with atomic_files.atomic_write(args.out, "w") as handle:
            json.dump(results, handle, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
