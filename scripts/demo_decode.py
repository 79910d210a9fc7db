"""Decode the dev set of a trained model and print a few examples and the sequence accuracy.

The last step of `make demo`:

    python scripts/demo_decode.py --problem=P --model=transformer --hparams_set=transformer_tiny \
        --data_dir=/tmp/d --output_dir=/tmp/train
"""
import argparse
import os
import sys


def choose_examples(examples, count):
    """Up to `count` of the (inputs, decode, reference) `examples` that show a reversal:
    inputs that read differently backwards (a palindrome such as "1 1 1" decodes the same
    whether the model reversed or copied it), one per length, spread from the shortest
    length to the longest; the first of each length in decode order (deterministic). Too
    few such examples: the first ones fill in.

    >>> choose_examples([("1", "1", "1"), ("1 0", "0 1", "0 1"), ("1 1 0", "0 1 1", "0 1 1"),
    ...                  ("0 1", "1 0", "1 0")], 2)
    [('1 0', '0 1', '0 1'), ('1 1 0', '0 1 1', '0 1 1')]
    """
    first_of_length = {}
    for example in examples:
        symbols = example[0].split()
        if symbols != symbols[::-1]:
            first_of_length.setdefault(len(symbols), example)
    lengths = sorted(first_of_length)
    if len(lengths) > count > 1:
        lengths = [lengths[round(i * (len(lengths) - 1) / (count - 1))] for i in range(count)]
    chosen = [first_of_length[length] for length in lengths[:count]]
    return chosen + [e for e in examples if e not in chosen][:count - len(chosen)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("problem", "model", "hparams_set", "data_dir", "output_dir"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--hparams", default="")
    parser.add_argument("--num_examples", type=int, default=5)
    args = parser.parse_args()

    print("loading TensorFlow and the model of %s ..." % args.output_dir, flush=True)
    from absl import logging
    logging.set_verbosity(logging.INFO)   # the decode's progress lines (absl, as the programs)
    logging.use_absl_handler()
    from t2t.decoding import decoding, predictor
    from t2t.training import trainer_lib

    hparams = trainer_lib.create_hparams(
        args.hparams_set, args.hparams, data_dir=args.data_dir, problem_name=args.problem,
        hparams_path=os.path.join(args.output_dir, "hparams.json"))
    decode_hp = decoding.decode_hparams("beam_size=1")
    # An Estimator on TensorFlow 2.15, a checkpoint predictor on 2.16+ (same decodes).
    estimator = predictor.create_predictor(args.model, hparams, args.output_dir,
                                           decode_hparams=decode_hp)
    print("decoding the dev set with %s (building the decoding graph, then one batch at a "
          "time) ..." % os.path.basename(estimator.latest_checkpoint() or "?"), flush=True)
    # Every dev example's strings are kept (the demo's dev set has 100), to choose from.
    summary = decoding.decode_dev_sample(estimator, hparams, decode_hp, sys.maxsize)
    chosen = choose_examples(list(zip(summary.inputs, summary.decodes, summary.references)),
                             args.num_examples)
    print("%d dev examples whose inputs are not palindromes, of varied length:" % len(chosen))
    for inputs, decode, reference in chosen:
        print("  inputs:    %s\n  decode:    %s\n  reference: %s\n" % (inputs, decode, reference))
    print("sequence accuracy over %d dev examples: %.3f" % (summary.num_decoded,
                                                           summary.sequence_accuracy))


if __name__ == "__main__":
    main()
