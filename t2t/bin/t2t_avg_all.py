"""t2t-avg-all: average the last --n checkpoints, for every checkpoint of a training run.

    t2t-avg-all --model_dir=train/ --output_dir=train/avg --n=5
    # train/avg/model.ckpt-<s> for each checkpoint step s from the 5th on: the mean of the
    # weights of the 5 checkpoints ending at s; train/avg/checkpoint names the newest, so
    # t2t-decoder --output_dir=train/avg decodes with the average of the last 5.

Flags are T2T 1.15.7's: --model_dir, --output_dir (default "avg/"), --n (default 8),
--min_steps, --wait_minutes (keep averaging new checkpoints as training writes them).
"""
import os

from absl import flags, logging

from t2t.bin import cli
from t2t.core import errors
from t2t.training import avg_checkpoints

FLAGS = flags.FLAGS


_define = cli.define_once  # flags other programs in this process define are kept


_define(flags.DEFINE_string, "model_dir", "", "Directory to load model checkpoints from.")
_define(flags.DEFINE_string, "output_dir", "avg/",
        "Directory to output the averaged checkpoints to.")
_define(flags.DEFINE_integer, "n", 8, "How many checkpoints should be averaged?")
_define(flags.DEFINE_integer, "min_steps", 0, "Ignore checkpoints with less steps.")
_define(flags.DEFINE_integer, "wait_minutes", 0, "Wait up to N minutes for a new checkpoint.")


def main(argv):
    cli.reject_extra_args(argv, "t2t-avg-all")
    logging.set_verbosity(logging.INFO)
    if not FLAGS.model_dir:
        raise errors.UserError("give --model_dir, the folder with the checkpoints")
    model_dir = os.path.expanduser(FLAGS.model_dir)
    if not os.path.isdir(model_dir) and "://" not in model_dir:
        raise errors.UserError("--model_dir %s is not a folder" % model_dir)
    written = avg_checkpoints.average_all(model_dir, os.path.expanduser(FLAGS.output_dir),
                                          n=FLAGS.n, min_steps=FLAGS.min_steps,
                                          wait_minutes=FLAGS.wait_minutes)
    print("t2t-avg-all: wrote %d averaged checkpoints; the newest is %s" % (len(written),
                                                                            written[-1]))
    return 0


def console_main():
    """Entry point of the `t2t-avg-all` console script."""
    cli.run_main(main, "t2t-avg-all", doc=__doc__)


if __name__ == "__main__":
    console_main()
