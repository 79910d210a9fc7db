"""t2t-port: port Tensor2Tensor 1.x code (a --t2t_usr_dir, .py files) to t2t for good.

    t2t-port my_usr_dir/                 # a unified diff on stdout; nothing is written
    t2t-port my_usr_dir/ > port.diff     # the notes and the summary go to stderr
    t2t-port --in_place --backup my_usr_dir/ train.py   # writes them (keeps <file>.orig)
    # my_usr_dir/model.py:12: common_layers.conv_hidden_relu is not in t2t; closest: ...
    # t2t-port: 3 files scanned, 2 changed, 1 name missing in t2t; TensorFlow calls by tf_upgrade_v2

Imports of `tensor2tensor.data_generators.X` become `t2t.problems.X`, `tensor2tensor.utils.X`
`t2t.utils.X`, `tensor2tensor.models(.research).X` `t2t.models.X` (likewise layers, bin,
serving); TensorFlow 1.x calls (`tf.logging`, `tf.app.run`, `tf.flags`, `tf.gfile`, ...)
become TensorFlow 2's, by TensorFlow's tf_upgrade_v2 where it is installed
(--tf_upgrade=auto), else by t2t's rules. Every T2T name the code uses that t2t lacks is
listed with the closest t2t name. Exit code 1 when a file did not parse (named with its
line and skipped), 2 for a path that does not exist or is not Python.
"""
import sys

from absl import flags

from t2t.bin import cli
from t2t.core import errors
from t2t.porting import port_files, tf_calls

FLAGS = flags.FLAGS

_define = cli.define_once  # flags other programs in this process define are kept

_define(flags.DEFINE_bool, "in_place", False,
        "Write the ported files (atomically) instead of printing a diff.")
_define(flags.DEFINE_bool, "backup", False, "With --in_place: keep each changed file's "
        "original as <file>.orig.")
_define(flags.DEFINE_string, "tf_upgrade", "auto", "How TensorFlow 1.x calls are ported: "
        "auto (tf_upgrade_v2 where it is installed, else t2t's rules), tf_upgrade_v2, t2t "
        "(t2t's rules: tf.logging, tf.app, tf.flags, tf.gfile), none.")


def main(argv):
    paths = argv[1:]
    if not paths:
        raise errors.UserError("give the files or folders to port: t2t-port DIR_OR_FILE ...")
    if FLAGS.tf_upgrade not in tf_calls.HOWS:
        raise errors.UserError("--tf_upgrade=%s: use one of %s" % (
            FLAGS.tf_upgrade, ", ".join(tf_calls.HOWS)))
    if FLAGS.backup and not FLAGS.in_place:
        raise errors.UserError("--backup keeps the originals of files --in_place writes: "
                               "add --in_place")
    if FLAGS.tf_upgrade == "tf_upgrade_v2" and tf_calls.upgrader_for("tf_upgrade_v2") is None:
        raise errors.UserError("--tf_upgrade=tf_upgrade_v2: TensorFlow's upgrader does not "
                               "import here; use --tf_upgrade=t2t")
    return port_files.run(paths, tf_upgrade=FLAGS.tf_upgrade, in_place=FLAGS.in_place,
                          backup=FLAGS.backup, out=sys.stdout, err=sys.stderr)


def console_main(argv=None):
    """Entry point of the `t2t-port` console script."""
    cli.run_main(main, "t2t-port", argv=argv, doc=__doc__)


if __name__ == "__main__":
    console_main()
