"""t2t-tydi-synthetic: a small TyDi QA-format train and dev set, to try the pipeline offline.

    t2t-tydi-synthetic --tmp_dir=~/tydi_sample
    # writes ~/tydi_sample/tydiqa-v1.0-{train,dev}.jsonl.gz (1,400 and 140 examples in seven
    # scripts; the question is a word of the document, the answer the word after it)
    t2t-datagen --problem=tydiqa_codepoints --data_dir=~/tydi_sample_data --tmp_dir=~/tydi_sample

then train, decode and score as with the released files (`t2t-tydi-eval --gold_path=
~/tydi_sample/tydiqa-v1.0-dev.jsonl.gz`). Also `python -m t2t.bin.t2t_tydi_synthetic`.
"""
import os

from absl import flags

from t2t.bin import cli
from t2t.core import errors
from t2t.tydiqa import synthetic

FLAGS = flags.FLAGS


_define = cli.define_once  # flags other programs in this process define are kept


_define(flags.DEFINE_string, "tmp_dir", None, "Folder to write tydiqa-v1.0-train.jsonl.gz "
        "and tydiqa-v1.0-dev.jsonl.gz into (give it to t2t-datagen as --tmp_dir).")
_define(flags.DEFINE_integer, "num_train", 1400, "Training examples.")
_define(flags.DEFINE_integer, "num_dev", 140, "Dev examples (3 annotators each).")
_define(flags.DEFINE_integer, "random_seed", 1, "Seed: the same seed gives the same files.")


def main(argv):
    cli.reject_extra_args(argv, "t2t-tydi-synthetic")
    if not FLAGS.tmp_dir:
        raise errors.UserError("missing --tmp_dir; give the folder to write the files into")
    if FLAGS.num_train < 1 or FLAGS.num_dev < 1:
        raise errors.UserError("--num_train and --num_dev must be at least 1")
    cli.check_writable_dir("--tmp_dir", FLAGS.tmp_dir)
    paths = synthetic.write_sample(os.path.expanduser(FLAGS.tmp_dir), FLAGS.num_train,
                                   FLAGS.num_dev, FLAGS.random_seed)
    print("t2t-tydi-synthetic: wrote %d train and %d dev examples: %s" % (
        FLAGS.num_train, FLAGS.num_dev, ", ".join(paths)))
    return 0


def console_main():
    """Entry point of the `t2t-tydi-synthetic` console script."""
    cli.run_main(main, "t2t-tydi-synthetic", doc=__doc__)


if __name__ == "__main__":
    console_main()
