"""One decode of bench_inference.py in a process of its own, for the systems with a Python API.

Runs in whichever venv has the engine (it imports neither t2t nor the bench): the t2t venv
for a t2t SavedModel (TensorFlow only), a venv with CTranslate2 4.8 for CTranslate2 models.
It reads the source lines, decodes them in batches of `--batch_size` taken longest first
(t2t-decoder's order), and writes one line per input, in the input's order: the output's
ids, space-separated ("17 4 999"; EOS and padding left out). It prints one JSON line with
the seconds spent in the decode calls alone (a cross-check of the bench's own timing, the
wall time of the whole process):

    python bench/inference_worker.py --engine=ctranslate2 --model=/tmp/ct2 \\
        --source=test.tokens --output=out.ids --beam_size=4 --batch_size=32 --threads=2
    # {"decode_seconds": 12.3, "sentences": 1000}

Sources: t2t subword ids with EOS ("17 4 999 1") for `savedmodel`; the peers' tokens
("t17 t4 t999", one per t2t subword id) for `ctranslate2`, whose models carry the peers'
vocabularies; a CTranslate2 output token that is not t<id> is dropped (as the bench does
with the peers' own decodes).
"""
import argparse
import json
import os
import re
import sys
import time


def batches_longest_first(lines, batch_size):
    """[(indices, lines)] in batches of `batch_size`, longest (most words) first.

        batches_longest_first(["a", "a b c", "a b"], 2)
        # [([1, 2], ["a b c", "a b"]), ([0], ["a"])]
    """
    order = sorted(range(len(lines)), key=lambda i: (-len(lines[i].split()), i))
    return [([i for i in order[k:k + batch_size]], [lines[i] for i in order[k:k + batch_size]])
            for k in range(0, len(order), batch_size)]


def token_ids(tokens):
    """["t17", "t4", "<unk>"] -> [17, 4] (the peers' tokens); ["17", "4"] -> [17, 4]
    (t2t's CTranslate2 export names each id by its number)."""
    return [int(token.lstrip("t")) for token in tokens if re.fullmatch(r"t?\d+", token)]


def savedmodel_decoder(args):
    """A t2t SavedModel's "serialized_example" signature (every t2t export has it; the
    raw-string "serving_default" exists only where the graph can encode the vocabulary,
    which Multi30k's normalizing subword vocabulary it cannot): tf.Examples with int64
    "inputs" (the source ids with EOS) in, ids out (0 after EOS). Beam size and length
    penalty are the decode hparams it was exported with."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    serve = tf.saved_model.load(args.model).signatures["serialized_example"]

    def example(line):
        feature = {"inputs": tf.train.Feature(int64_list=tf.train.Int64List(
            value=[int(i) for i in line.split()]))}
        return tf.train.Example(features=tf.train.Features(
            feature=feature)).SerializeToString()

    def decode(lines):
        serialized = tf.constant([example(line) for line in lines])
        outputs = serve(serialized_example=serialized)["outputs"].numpy()
        results = []
        for row in np.asarray(outputs).reshape(len(lines), -1):
            ids = row.tolist()
            results.append(ids[:ids.index(1)] if 1 in ids else [i for i in ids if i != 0])
        return results
    return decode


def ctranslate2_decoder(args):
    """A CTranslate2 Translator on the CPU, `--threads` intra-op threads, one translation
    at a time (inter_threads=1), batches exactly as given. CTranslate2's default
    min_decoding_length of 1 forbids EOS at the first step; the other decoders allow it
    (a 10-step model's empty outputs came out as one token), so it is 0 here."""
    from t2t.serving import ctranslate2_export

    def max_length(lines):
        """--max_decoding_length, or with --extra_length the batch's longest source +
        extra_length (t2t's decode length: a 500-step model can loop until the cap)."""
        if args.extra_length:
            return max(len(line.split()) for line in lines) + args.extra_length
        return args.max_decoding_length
    # As t2t's engine: built in a passing thread (ctranslate2_export.load_translator).
    translator = ctranslate2_export.load_translator(
        args.model, device="cpu", compute_type=args.compute_type, intra_threads=args.threads,
        inter_threads=1)

    def decode(lines):
        results = translator.translate_batch(
            [line.split() for line in lines], beam_size=args.beam_size,
            length_penalty=args.length_penalty if args.beam_size > 1 else 0.0,
            max_decoding_length=max_length(lines), max_batch_size=len(lines),
            min_decoding_length=0)  # EOS allowed first, as in the other decoders
        return [token_ids(result.hypotheses[0]) for result in results]
    return decode


ENGINES = {"savedmodel": savedmodel_decoder, "ctranslate2": ctranslate2_decoder}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", required=True, choices=sorted(ENGINES))
    parser.add_argument("--model", required=True, help="SavedModel or CTranslate2 folder")
    parser.add_argument("--source", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--beam_size", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--length_penalty", type=float, default=0.6,
                        help="CTranslate2's: the final score is log P / length^this")
    parser.add_argument("--max_decoding_length", type=int, default=200)
    parser.add_argument("--extra_length", type=int, default=0,
                        help="CTranslate2: decode up to the batch's longest source + this "
                             "(t2t's rule) instead of --max_decoding_length")
    parser.add_argument("--compute_type", default="float32", help="CTranslate2's")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    with open(args.source, encoding="utf-8") as handle:
        lines = handle.read().split("\n")[:-1]
    decode = ENGINES[args.engine](args)
    outputs = [None] * len(lines)
    seconds = 0.0
    for indices, batch in batches_longest_first(lines, args.batch_size):
        start = time.perf_counter()
        decoded = decode(batch)
        seconds += time.perf_counter() - start
        for index, ids in zip(indices, decoded):
            outputs[index] = ids
    tmp = args.output + ".tmp"
    with open(tmp, "w") as handle:
        handle.write("".join(" ".join(map(str, ids)) + "\n" for ids in outputs))
    os.replace(tmp, args.output)
    print(json.dumps({"decode_seconds": round(seconds, 3), "sentences": len(lines)}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
