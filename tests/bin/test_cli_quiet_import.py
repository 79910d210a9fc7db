"""A program's error stays one line on this TensorFlow: its native start-up lines are hidden
(by `import t2t`, `t2t.core.tf_notices`; tested there too)."""
import os
import subprocess
import sys


def test_a_program_error_is_one_line_on_this_tensorflow():
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "t2t-decoder"),
                             "--problem=x"], capture_output=True, text=True, env=env,
                            timeout=600)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "t2t-decoder: error: missing --model, --hparams_set; t2t-decoder needs --problem, "
        "--model, --hparams_set and --output_dir or --checkpoint_path"]
