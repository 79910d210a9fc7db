"""Decoding speed of the Transformer: cached (fast) vs uncached (slow), greedy vs beam 4.

A transformer_tiny (d=128, 2+2 layers, 4 heads, filter 512) with random weights decodes
batches (of 1 and 4) of 8-id inputs to output lengths 16, 64 and 256. The targets' top
never emits EOS, so every run decodes exactly the requested length. The session runs on
one thread; each configuration is built once, warmed up once, then timed `--repeats`
times, interleaved with the others so load changes hit all alike. The fastest run is
reported, by wall clock and by process CPU time (the cost of the decode itself on a
machine shared with others).

    python bench/bench_decoding.py [--lengths 16,64,256] [--batches 1,4] [--repeats 3]
    # prints tokens/s and per-token milliseconds, and per batch size the target checks
    # (by wall clock and by CPU time):
    #   cached per-token cost at 256 / at 16, greedy and beam 4   (target <= 1.5)
    #   uncached / cached time, beam 4, length 256                 (target >= 5)
    # and writes bench/results/decoding.json

A second part times the shape of the README's Multi30k model (transformer_multi30k: 3+3
layers, d=256, filter 1024, 4 heads, a shared 8,079-id vocabulary in 16 shards) with
random weights, as `t2t-decoder` runs it (cached decoding, the decoder's session options,
both cores): beam 4 on batches of 32 and greedy on single sentences, `--m30k_input`
input ids and `--m30k_output` generated ids per sentence (EOS ruled out, so every run
decodes exactly that many). It reports generated tokens/s and sentences/s for beam 4,
milliseconds per sentence for greedy (medians of `--repeats` interleaved runs, wall
clock and process CPU time). docs/decoding_speed.md has the figures of the trained model.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.decoding import predictor
from t2t.layers import modalities
from t2t.model import model_hparams
from t2t.models import transformer

v1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))
INPUT_LENGTH = 8
VOCAB = 64
EOS_ID = 1
M30K_VOCAB = 8079  # translate_ende_multi30k's shared subword vocabulary


@modalities.is_pointwise
def no_eos_top(body_output, targets, model_hparams_, vocab_size):
    """The symbol top with EOS ruled out, so decodes run to the full length."""
    logits = modalities.symbol_top(body_output, targets, model_hparams_, vocab_size)
    return logits - 1e9 * tf.one_hot(EOS_ID, vocab_size, dtype=logits.dtype)


def build_model():
    hparams = registry.hparams("transformer_tiny")
    hparams.top = {"targets": no_eos_top}
    problem_hparams = model_hparams.test_problem_hparams(VOCAB, VOCAB)
    return transformer.Transformer(hparams, ModeKeys.PREDICT, problem_hparams)


def decode_op(model, inputs, length, method, beam_size):
    """The decoding graph: `length` output ids per input (input length + extra)."""
    extra = length - INPUT_LENGTH
    features = {"inputs": inputs}
    if method == "cached":
        out = model._fast_decode(features, extra, beam_size=beam_size, top_beams=1, alpha=0.6)
    elif beam_size == 1:
        out = model._slow_greedy_infer(features, extra)
    else:
        out = model._beam_decode_slow(features, extra, beam_size, 1, 0.6)
    return out["outputs"]


def measure(batch, lengths, repeats):
    """{(method, beam, length): (best wall seconds, best CPU seconds)} for one batch size."""
    configs = [(method, beam) for beam in (1, 4) for method in ("cached", "uncached")]
    rng = np.random.RandomState(0)
    inputs_value = rng.randint(2, VOCAB, size=[batch, INPUT_LENGTH, 1, 1]).astype(np.int32)
    inputs_value[:, -1] = EOS_ID
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(1)
        inputs = v1.placeholder(tf.int32, [None, None, 1, 1], name="inputs")
        model = build_model()
        ops = {(m, b, n): decode_op(model, inputs, n, m, b)
               for n in lengths for (m, b) in configs}
        # One thread: the CPU time of a run is its cost, whatever else loads the machine.
        config = v1.ConfigProto(intra_op_parallelism_threads=1,
                                inter_op_parallelism_threads=1)
        with v1.Session(graph=graph, config=config) as session:
            session.run(v1.global_variables_initializer())
            for key, op in ops.items():
                out = session.run(op, {inputs: inputs_value})  # warm-up (graph optimisation)
                assert out.shape == (batch, key[2]), (key, out.shape)
            wall = {key: [] for key in ops}
            cpu = {key: [] for key in ops}
            for _ in range(repeats):  # Interleaved, so load changes hit every config.
                for key, op in ops.items():
                    start_wall, start_cpu = time.perf_counter(), time.process_time()
                    session.run(op, {inputs: inputs_value})
                    wall[key].append(time.perf_counter() - start_wall)
                    cpu[key].append(time.process_time() - start_cpu)
    return {key: (min(wall[key]), min(cpu[key])) for key in ops}


def measure_multi30k_shape(input_length, output_length, repeats):
    """{name: figures} of beam 4 / batch 32 and greedy / batch 1 on the Multi30k shape."""
    hparams = registry.hparams("transformer_multi30k")
    hparams.top = {"targets": no_eos_top}
    problem_hparams = model_hparams.test_problem_hparams(M30K_VOCAB, M30K_VOCAB)
    configs = {"m30k_beam4_batch32": (4, 32), "m30k_greedy_batch1": (1, 1)}
    rng = np.random.RandomState(0)
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(1)
        inputs = v1.placeholder(tf.int32, [None, None, 1, 1], name="inputs")
        model = transformer.Transformer(hparams, ModeKeys.PREDICT, problem_hparams)
        extra = output_length - input_length
        ops, feeds = {}, {}
        for name, (beam, batch) in configs.items():
            ops[name] = model._fast_decode({"inputs": inputs}, extra, beam_size=beam,
                                           alpha=0.6)["outputs"]
            value = rng.randint(2, M30K_VOCAB, size=[batch, input_length, 1, 1])
            value[:, -1] = EOS_ID
            feeds[name] = value.astype(np.int32)
        with v1.Session(graph=graph, config=predictor.default_session_config()) as session:
            session.run(v1.global_variables_initializer())
            for name, op in ops.items():  # warm-up (graph optimisation)
                out = session.run(op, {inputs: feeds[name]})
                assert out.shape == (configs[name][1], output_length), (name, out.shape)
            wall = {name: [] for name in ops}
            cpu = {name: [] for name in ops}
            for _ in range(repeats):  # Interleaved, so load changes hit both alike.
                for name, op in ops.items():
                    start_wall, start_cpu = time.perf_counter(), time.process_time()
                    session.run(op, {inputs: feeds[name]})
                    wall[name].append(time.perf_counter() - start_wall)
                    cpu[name].append(time.process_time() - start_cpu)
    results = {}
    for name, (beam, batch) in configs.items():
        seconds, cpu_seconds = float(np.median(wall[name])), float(np.median(cpu[name]))
        results[name] = {
            "beam_size": beam, "batch": batch, "input_length": input_length,
            "output_length": output_length, "seconds": seconds, "cpu_seconds": cpu_seconds,
            "tokens_per_second": batch * output_length / seconds,
            "sentences_per_second": batch / seconds,
            "ms_per_sentence": 1000.0 * seconds / batch,
            "cpu_ms_per_sentence": 1000.0 * cpu_seconds / batch}
        print("%-22s %7.1f tokens/s  %6.2f sentences/s  %8.1f ms/sentence  (cpu %8.1f "
              "ms/sentence)" % (name, results[name]["tokens_per_second"],
                                results[name]["sentences_per_second"],
                                results[name]["ms_per_sentence"],
                                results[name]["cpu_ms_per_sentence"]), flush=True)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="16,64,256")
    parser.add_argument("--batches", default="1,4")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--m30k_input", type=int, default=16,
                        help="input ids per sentence (EOS included) of the Multi30k part")
    parser.add_argument("--m30k_output", type=int, default=24,
                        help="generated ids per sentence of the Multi30k part")
    args = parser.parse_args()
    if args.m30k_input >= args.m30k_output:
        parser.error("--m30k_output must be larger than --m30k_input")
    lengths = [int(x) for x in args.lengths.split(",")]
    batches = [int(x) for x in args.batches.split(",")]
    low, high = min(lengths), max(lengths)
    results, checks, met = {}, {}, {}
    for batch in batches:
        times = measure(batch, lengths, args.repeats)
        for (method, beam, n) in sorted(times, key=lambda k: (k[2], k[1], k[0])):
            best_wall, best_cpu = times[(method, beam, n)]
            tokens = batch * n
            name = "batch%d_%s_%s_len%d" % (batch, method, "greedy" if beam == 1 else "beam4",
                                            n)
            results[name] = {"batch": batch, "method": method, "beam_size": beam,
                             "length": n, "seconds": best_wall, "cpu_seconds": best_cpu,
                             "tokens_per_second": tokens / best_wall,
                             "ms_per_token": 1000.0 * best_wall / tokens,
                             "cpu_ms_per_token": 1000.0 * best_cpu / tokens}
            print("%-30s %8.3f s  %8.1f tokens/s  %7.3f ms/token  (cpu %7.3f ms/token)" % (
                name, best_wall, tokens / best_wall, 1000.0 * best_wall / tokens,
                1000.0 * best_cpu / tokens), flush=True)
        for beam_name in ("greedy", "beam4"):
            prefix = "batch%d_" % batch
            cached_low = results[prefix + "cached_%s_len%d" % (beam_name, low)]
            cached_high = results[prefix + "cached_%s_len%d" % (beam_name, high)]
            uncached_high = results[prefix + "uncached_%s_len%d" % (beam_name, high)]
            for clock, field, seconds in (("wall", "ms_per_token", "seconds"),
                                          ("cpu", "cpu_ms_per_token", "cpu_seconds")):
                ratio_key = prefix + "cached_%s_cost_ratio_%d_vs_%d_%s" % (beam_name, high,
                                                                           low, clock)
                checks[ratio_key] = cached_high[field] / cached_low[field]
                met[ratio_key + " <= 1.5"] = checks[ratio_key] <= 1.5
                speedup_key = prefix + "%s_cached_speedup_len%d_%s" % (beam_name, high, clock)
                checks[speedup_key] = uncached_high[seconds] / cached_high[seconds]
                if beam_name == "beam4":
                    met[speedup_key + " >= 5"] = checks[speedup_key] >= 5.0
    multi30k = measure_multi30k_shape(args.m30k_input, args.m30k_output, args.repeats)
    for key, value in sorted(checks.items()):
        print("%-50s %6.2f" % (key, value))
    for key, value in sorted(met.items()):
        print("target %-58s %s" % (key, "met" if value else "NOT met"))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    path = os.path.join(HERE, "results", "decoding.json")
    # decoding_paired.py --record keeps its paired runs under "paired".
    paired = {}
    if os.path.exists(path):
        with open(path) as f:
            paired = json.load(f).get("paired", {})
    with open(path, "w") as f:
        json.dump({"paired": paired, "config": {"hparams_set": "transformer_tiny", "vocab_size": VOCAB,
                              "input_length": INPUT_LENGTH, "batches": batches,
                              "repeats": args.repeats, "lengths": lengths, "threads": 1},
                   "results": results, "checks": checks, "targets_met": met,
                   "multi30k_shape": {"hparams_set": "transformer_multi30k",
                                      "vocab_size": M30K_VOCAB,
                                      "session": "t2t-decoder's (both cores)",
                                      "results": multi30k}}, f, indent=2)
    print("wrote %s" % path)


if __name__ == "__main__":
    main()
