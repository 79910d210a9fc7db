"""Print a few examples of a generated problem, decoded with its vocabulary (used by `make demo`).

    python scripts/show_examples.py --problem=algorithmic_reverse_binary40 --data_dir=/tmp/d
"""
import argparse
import itertools

from t2t.core import registry
from t2t.core.modes import ModeKeys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", required=True)
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--num_examples", type=int, default=5)
    parser.add_argument("--split", default="eval", choices=["train", "eval"])
    args = parser.parse_args()

    problem = registry.problem(args.problem)
    mode = ModeKeys.TRAIN if args.split == "train" else ModeKeys.EVAL
    encoders = problem.feature_encoders(args.data_dir)
    dataset = problem.dataset(mode, data_dir=args.data_dir, shuffle_files=False)
    for index, example in enumerate(itertools.islice(dataset, args.num_examples)):
        print("example %d" % index)
        for feature in ("inputs", "targets"):
            if feature in example and feature in encoders:
                ids = example[feature].numpy().tolist()
                print("  %-8s %s" % (feature + ":", encoders[feature].decode(ids)))


if __name__ == "__main__":
    main()
