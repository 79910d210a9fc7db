"""t2t-exporter --export_format=ctranslate2 and t2t-decoder --engine=ctranslate2, as a user
runs them: a folder that decodes without --problem/--model/--data_dir, one-line errors."""
import os
import subprocess
import sys

import pytest

from t2t.model import decoding_assets

from decoding_testing import PROBLEM, copy_as_training_folder, trained_model

pytest.importorskip("ctranslate2")

BIN = os.path.dirname(sys.executable)
WORDS = ["ab", "dcbad", "c", "bbb", "cabd", "dada"]
TIMEOUT = 600


def run(program, *args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([os.path.join(BIN, program)] + list(args), capture_output=True,
                          text=True, env=env, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    trained = trained_model(tmp_path_factory)
    folder = str(tmp_path_factory.mktemp("ct2_cli") / "train")
    return dict(trained, folder=copy_as_training_folder(trained, folder))


def test_export_then_decode_a_file_without_the_training_flags(folder, tmp_path):
    source = tmp_path / "words.txt"
    source.write_text("\n".join(WORDS) + "\n")
    exported = run("t2t-exporter", "--output_dir=" + folder["folder"],
                   "--export_format=ctranslate2", "--quantization=int8")
    assert exported.returncode == 0, exported.stderr[-3000:]
    path = exported.stdout.strip().splitlines()[-1]
    assert path == os.path.join(folder["folder"], "export", "ctranslate2-int8")
    assert decoding_assets.read_decoding_assets(path).export_settings["quantization"] == "int8"

    out_ct2, out_tf = tmp_path / "ct2.txt", tmp_path / "tf.txt"
    decoded = run("t2t-decoder", "--output_dir=" + path, "--engine=ctranslate2",
                  "--decode_hparams=beam_size=1", "--decode_from_file=%s" % source,
                  "--decode_to_file=%s" % out_ct2)
    assert decoded.returncode == 0, decoded.stderr[-3000:]
    assert "decoded 6 lines" in decoded.stdout
    assert "decode words.txt done: 6 sentences" in decoded.stderr
    reference = run("t2t-decoder", "--output_dir=" + folder["folder"],
                    "--decode_hparams=beam_size=1", "--decode_from_file=%s" % source,
                    "--decode_to_file=%s" % out_tf)
    assert reference.returncode == 0, reference.stderr[-3000:]
    ct2_lines, tf_lines = (p.read_text().splitlines() for p in (out_ct2, out_tf))
    assert len(ct2_lines) == len(WORDS)
    assert sum(a == b for a, b in zip(ct2_lines, tf_lines)) >= len(WORDS) - 1  # int8


@pytest.mark.parametrize("args, message", [
    (["--export_format=ctranslate2", "--quantization=int9"],
     "--quantization=int9 is not a CTranslate2 weight type; did you mean int8"),
    (["--export_format=ctranslate2", "--hparams=ffn_layer=conv_relu_conv"],
     "CTranslate2 cannot represent ffn_layer='conv_relu_conv'"),
    (["--quantization=int8"], "--quantization is for --export_format=ctranslate2"),
])
def test_exporter_errors_are_one_line(folder, args, message):
    result = run("t2t-exporter", "--output_dir=" + folder["folder"], *args)
    assert_one_error_line(result, "t2t-exporter", message)


def assert_one_error_line(result, program, message):
    """Exit 2, one error line with `message`, no traceback (INFO lines may come before)."""
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
    assert errors == [errors[0]] and errors[0].startswith(program + ": error: ")
    assert message in errors[0] and "Traceback" not in result.stderr


def test_decoder_errors_are_one_line(folder, tmp_path):
    source = tmp_path / "words.txt"
    source.write_text("ab\n")
    for args, message in (
            (["--decode_from_file=%s" % source, "--decode_hparams=block_size=2"],
             "--decode_hparams block_size=2 have no equivalent in the ctranslate2 engine"),
            ([], "--engine=ctranslate2 decodes --decode_from_file or --decode_interactive")):
        result = run("t2t-decoder", "--output_dir=" + folder["folder"],
                     "--engine=ctranslate2", *args)
        assert_one_error_line(result, "t2t-decoder", message)
    assert PROBLEM  # the folder named its problem: no --problem was needed above
