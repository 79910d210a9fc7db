"""TensorFlow 2.16+'s native start-up lines are dropped from a program's stderr, nothing else."""
import os
import subprocess
import sys

from t2t.bin import cli


def test_native_noise_lines_and_nothing_else():
    noise = ["WARNING: All log messages before absl::InitializeLog() is called are written to "
             "STDERR",
             "I0000 00:00:1795748666.960172   16230 cudart_stub.cc:31] Could not find cuda "
             "drivers on your machine, GPU will not be used.",
             "E0000 00:00:1795748666.960172   16230 cuda_dnn.cc:8310] Unable to register "
             "cuDNN factory"]
    kept = ["t2t-decoder: error: missing --model", "Traceback (most recent call last):",
            "WARNING: something else", "I0000 is how a line of mine begins"]
    assert all(cli._NATIVE_NOISE.match(line) for line in noise)
    assert not any(cli._NATIVE_NOISE.match(line) for line in kept)


def test_a_program_error_is_one_line_on_this_tensorflow():
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "t2t-decoder"),
                             "--problem=x"], capture_output=True, text=True, env=env,
                            timeout=600)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "t2t-decoder: error: missing --model, --hparams_set; t2t-decoder needs --problem, "
        "--model, --hparams_set and --output_dir or --checkpoint_path"]
