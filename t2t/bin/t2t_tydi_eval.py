"""t2t-tydi-eval: the official TyDi QA metrics of a predictions file.

    t2t-tydi-eval --gold_path=tydiqa-v1.0-dev.jsonl.gz --predictions_path=predictions.jsonl
    # arabic     passage F1 0.712 P 0.700 R 0.725 (threshold 1.25; R@P0.5 0.801 ...)
    # arabic     minimal F1 0.581 ...
    # ...
    # macro average over 10 languages (English excluded): passage F1 ... minimal F1 ...
    # {"avg_passage_f1": 0.71, "avg_passage_precision": ..., "avg_minimal_recall": ...}

The last line is always the JSON object of the six averages. The rules are
`tydi_eval.py`'s (see `t2t.tydiqa.evaluation`); the flags keep its names.
"""
import json
import sys

from absl import flags, logging

from t2t.bin import cli
from t2t.core import errors
from t2t.tydiqa import evaluation

FLAGS = flags.FLAGS

flags.DEFINE_string("gold_path", None, "TyDi QA jsonl(.gz) with the annotations (a glob may "
                    "name several files).")
flags.DEFINE_string("predictions_path", None, "Predictions jsonl, one line per example (a "
                    "glob reads every file it matches).")
flags.DEFINE_integer("passage_non_null_threshold", 2, "Annotators needed for gold to have a "
                     "passage answer.")
flags.DEFINE_integer("minimal_non_null_threshold", 2, "Annotators needed for gold to have a "
                     "minimal answer.")


def warn(line):
    sys.stderr.write("t2t-tydi-eval: warning: %s\n" % line)
    sys.stderr.flush()


def main(argv):
    cli.reject_extra_args(argv, "t2t-tydi-eval")
    for name in ("gold_path", "predictions_path"):
        if not getattr(FLAGS, name):
            raise errors.UserError("missing --%s; t2t-tydi-eval needs --gold_path and "
                                   "--predictions_path" % name)
    for name in ("passage_non_null_threshold", "minimal_non_null_threshold"):
        if getattr(FLAGS, name) < 1:
            raise errors.UserError("--%s=%d: give at least 1 annotator" %
                                   (name, getattr(FLAGS, name)))
    gold = evaluation.read_gold(FLAGS.gold_path)
    read = evaluation.read_prediction_files(FLAGS.predictions_path)
    for line in read.warnings():
        warn(line)
    predictions = read.predictions
    result = evaluation.evaluate(gold, predictions, FLAGS.passage_non_null_threshold,
                                 FLAGS.minimal_non_null_threshold)
    if result.missing:
        logging.warning("%d gold examples have no prediction (counted as null answers)",
                        result.missing)
    if result.unexpected:
        logging.warning("%d predictions are for examples not in the gold data (ignored)",
                        result.unexpected)
    without = sorted({labels[0].language for labels in gold.values()} -
                     set(result.per_language))
    if without:
        logging.warning("no predictions for the languages %s: they are left out of the "
                        "averages, as tydi_eval does", ", ".join(without))
    print("gold examples: %d, predictions: %d" % (result.num_gold, result.num_predictions))
    for line in evaluation.report_lines(result):
        print(line)
    print(json.dumps(result.averages(), sort_keys=True))
    return 0


def console_main():
    """Entry point of the `t2t-tydi-eval` console script."""
    cli.run_main(main, "t2t-tydi-eval", doc=__doc__)


if __name__ == "__main__":
    console_main()
