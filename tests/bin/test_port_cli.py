"""t2t-port end to end: a diff by default (nothing written), --in_place/--backup, the
summary and exit codes, and a ported T2T trainer wrapper script that trains in a subprocess."""
import os
import stat
import subprocess
import sys

import pytest
from absl.testing import flagsaver

from t2t.bin import t2t_port

MODEL = '''from tensor2tensor.layers import common_layers
from tensor2tensor.utils import registry  # the registry
from tensor2tensor.models import transformer


@registry.register_hparams
def my_hparams():
  hparams = transformer.transformer_tiny()
  hparams.add_hparam("f", common_layers.layer_normm)
  return hparams
'''

# A T2T 1.x trainer wrapper as users wrote them: flags of its own, T2T's trainer main.
WRAPPER = '''"""My trainer: a flag of its own and an hparams set, then T2T's trainer."""
import os

from tensor2tensor.bin import t2t_trainer
from tensor2tensor.models import transformer
from tensor2tensor.utils import registry
import tensorflow as tf

flags = tf.flags
FLAGS = flags.FLAGS

flags.DEFINE_string("my_note", "", "Written to <output_dir>/note.txt before training.")


@registry.register_hparams
def my_tiny_transformer():
  hparams = transformer.transformer_tiny()
  return hparams.parse("hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,"
                       "batch_size=128")


def main(argv):
  tf.logging.set_verbosity(tf.logging.INFO)
  tf.gfile.MakeDirs(FLAGS.output_dir)
  with tf.gfile.GFile(os.path.join(FLAGS.output_dir, "note.txt"), "w") as f:
    f.write("%s %s" % (FLAGS.my_note, FLAGS.problem))
  t2t_trainer.main(argv)


if __name__ == "__main__":
  tf.app.run()
'''


def port(capsys, *args):
    """(exit code, stdout, stderr) of t2t-port run in this process."""
    with flagsaver.flagsaver():
        with pytest.raises(SystemExit) as info:
            t2t_port.console_main(["t2t-port"] + [str(a) for a in args])
    out, err = capsys.readouterr()
    return info.value.code or 0, out, err


def user_dir(tmp_path):
    folder = tmp_path / "usr"
    (folder / "sub").mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import model\n")
    (folder / "model.py").write_text(MODEL)
    (folder / "sub" / "done.py").write_text("import os\n")
    (folder / "notes.txt").write_text("not Python, not looked at inside a folder\n")
    return folder


def test_diff_by_default_then_in_place_with_backup_then_nothing_to_do(tmp_path, capsys):
    folder = user_dir(tmp_path)
    model = folder / "model.py"
    model.chmod(0o751)
    code, out, err = port(capsys, folder)
    assert code == 0 and model.read_text() == MODEL  # nothing written
    assert out.startswith("--- %s\n+++ %s\n" % (model, model))
    assert "\n-from tensor2tensor.utils import registry  # the registry\n" in out
    assert "\n+from t2t.utils import registry  # the registry\n" in out
    lines = err.splitlines()
    assert lines[0] == ("%s:9: common_layers.layer_normm is not in t2t; closest: layer_norm"
                        % model)
    assert lines[-1] == "t2t-port: 3 files scanned, 1 to change, 1 name missing in t2t"

    code, out, err = port(capsys, "--in_place", "--backup", folder)
    assert code == 0 and out == ""
    assert err.splitlines()[-1] == "t2t-port: 3 files scanned, 1 changed, 1 name missing in t2t"
    assert (folder / "model.py.orig").read_text() == MODEL
    assert model.read_text() == MODEL.replace("tensor2tensor.", "t2t.")
    assert stat.S_IMODE(model.stat().st_mode) == 0o751
    assert sorted(os.listdir(folder)) == ["__init__.py", "model.py", "model.py.orig",
                                          "notes.txt", "sub"]  # no temporary files left

    code, out, err = port(capsys, "--in_place", model)  # porting again changes nothing
    assert (code, out) == (0, "") and err.splitlines()[-1].startswith(
        "t2t-port: 1 file scanned, 0 changed")


def test_a_file_that_does_not_parse_is_named_and_skipped_exit_1(tmp_path, capsys):
    folder = user_dir(tmp_path)
    (folder / "broken.py").write_text("import os\ndef f(:\n    pass\n")
    (folder / "latin1.py").write_bytes("s = 'caf\u00e9'\n".encode("latin-1"))
    code, out, err = port(capsys, "--tf_upgrade=none", folder)
    assert code == 1 and "+from t2t.layers import common_layers" in out
    assert "%s:2: does not parse (invalid syntax); skipped\n" % (folder / "broken.py") in err
    assert "%s: does not parse (not UTF-8: invalid continuation byte); skipped\n" % (
        folder / "latin1.py") in err
    assert err.splitlines()[-1] == ("t2t-port: 5 files scanned, 1 to change, 1 name missing "
                                    "in t2t; 2 files skipped (does not parse)")


@pytest.mark.parametrize("args,message", [
    (["/no/such/dir"], "/no/such/dir does not exist; give a .py file or a folder of them"),
    (["NOTES"], "NOTES is not a Python file; give .py files or folders of them"),
    ([], "give the files or folders to port: t2t-port DIR_OR_FILE ..."),
    (["--backup", "."], "--backup keeps the originals of files --in_place writes: add "
                        "--in_place"),
    (["--tf_upgrade=2to3", "."], "--tf_upgrade=2to3: use one of auto, tf_upgrade_v2, t2t, "
                                 "none"),
])
def test_bad_arguments_are_one_line_exit_2(args, message, tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("x\n")
    args = [str(notes) if a == "NOTES" else a for a in args]
    message = message.replace("NOTES", str(notes))
    assert port(capsys, *args) == (2, "", "t2t-port: error: %s\n" % message)


def test_a_ported_trainer_wrapper_trains(tmp_path, capsys):
    script = tmp_path / "my_trainer.py"
    script.write_text(WRAPPER)
    code, _, err = port(capsys, "--in_place", script)
    assert code == 0, err
    ported = script.read_text()
    assert "from t2t.bin import t2t_trainer\n" in ported and "tf.compat.v1.app.run()" in ported
    assert "tensor2tensor" not in ported and "tf.gfile" not in ported
    out_dir = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(script), "--problem=algorithmic_reverse_binary40_test",
         "--model=transformer", "--hparams_set=my_tiny_transformer", "--generate_data",
         "--data_dir=%s" % (tmp_path / "data"), "--tmp_dir=%s" % (tmp_path / "tmp"),
         "--output_dir=%s" % out_dir, "--train_steps=1", "--schedule=train",
         "--local_eval_frequency=1", "--my_note=hello", "--hp_learning_rate", "0.3"],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (out_dir / "note.txt").read_text() == "hello algorithmic_reverse_binary40_test"
    assert (out_dir / "model.ckpt-1.index").exists()
    assert '"learning_rate": 0.3' in (out_dir / "hparams.json").read_text()
    assert "--my_note=hello" in (out_dir / "flags.txt").read_text()
