"""What a model folder records, read in one place (`loading.read_model_folder`), and the
one-line refusals of paths, engines, weight types and search settings that t2t.load,
t2t-decoder and t2t-exporter share. The folders are laid out as the real ones (file names
only: every refusal comes before any weight is read), so no model is trained here."""
import json
import os

import pytest
from absl import flags
from absl.testing import flagsaver

import t2t
from t2t.bin import cli, t2t_decoder, t2t_exporter
from t2t.core import errors
from t2t.decoding import decoding, input_checks
from t2t.inference import file_decoding, loading, tf_engines

FLAGS = flags.FLAGS
ASSETS = {"model": "transformer", "hparams_set": "transformer_tiny",
          "problem": "translate_ende_wmt8k"}


def _write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def training_folder(root):
    folder = str(root / "train")
    _write(os.path.join(folder, "t2t_model.json"), json.dumps(ASSETS))
    _write(os.path.join(folder, "model.ckpt-5.index"))
    _write(os.path.join(folder, "hparams.json"), "{}")
    _write(os.path.join(folder, "flags.txt"), "--model=transformer\n--decoder_only\n")
    return folder


def ctranslate2_export(root):
    folder = str(root / "ct2")
    for name in ("model.bin", "config.json"):
        _write(os.path.join(folder, name))
    _write(os.path.join(folder, "t2t_model.json"), json.dumps(dict(ASSETS, export="ctranslate2")))
    return folder


def saved_model(root):
    folder = str(root / "export" / "1700000000")
    _write(os.path.join(folder, "saved_model.pbtxt"))
    _write(os.path.join(folder, "assets.extra", "t2t_model.json"),
           json.dumps(dict(ASSETS, export="saved_model")))
    return folder


def test_one_frozen_description_of_a_training_folder(tmp_path):
    folder = training_folder(tmp_path)
    record = loading.read_model_folder(folder)
    assert record.assets.problem == "translate_ende_wmt8k"
    assert record.saved_flags == {"model": "transformer"}
    assert record.saved_switches == {"--decoder_only"}
    assert record.hparams_path == os.path.join(folder, "hparams.json")
    source = loading.find_model(folder)
    assert source.record == record and source.kind == "checkpoint"
    assert source.checkpoint_path == os.path.join(folder, "model.ckpt-5")
    with pytest.raises(AttributeError):
        source.record.saved_flags = {}  # frozen
    (tmp_path / "empty").mkdir()
    assert loading.read_model_folder(str(tmp_path / "empty")) == loading.ModelFolder(
        folder=str(tmp_path / "empty"))


def test_load_refuses_in_one_line_what_it_cannot_decode(tmp_path):
    a_file = tmp_path / "model.txt"
    a_file.write_text("")
    with pytest.raises(errors.UserError, match="%s is a file, not a folder; give a "
                       "t2t-trainer --output_dir" % a_file):
        t2t.load(str(a_file))
    ct2 = ctranslate2_export(tmp_path)
    with pytest.raises(errors.UserError, match="%s is a CTranslate2 export; load it with "
                       "engine='ctranslate2'" % ct2):
        t2t.load(ct2, engine="tensorflow")
    exported = saved_model(tmp_path)
    with pytest.raises(errors.UserError) as error:
        t2t.load(exported, engine="ctranslate2")
    assert str(error.value).startswith("%s is a SavedModel;" % exported)
    folder = training_folder(tmp_path)
    for path in (folder, exported):
        with pytest.raises(errors.UserError, match="quantization='int4' is for "
                           "engine='ctranslate2'; the TensorFlow engine"):
            t2t.load(path, quantization="int4")
    with pytest.raises(errors.UserError, match="--quantization=int4 is not a CTranslate2 "
                       "weight type"):
        t2t.load(folder, engine="ctranslate2", quantization="int4")


@pytest.mark.parametrize("beam_size, alpha, message", [
    (0, 0.6, "beam_size=0: give a whole number of hypotheses, 1 (greedy) or more"),
    (-3, 0.6, "beam_size=-3: give a whole number"),
    (2.5, 0.6, "beam_size=2.5: give a whole number"),
    (4, -1, "alpha=-1: give the length penalty's exponent, 0 (none) or more"),
    (4, float("nan"), "alpha=nan: give the length penalty's exponent")])
def test_search_settings_no_search_uses_are_refused_in_one_line(beam_size, alpha, message):
    with pytest.raises(errors.UserError) as error:
        input_checks.check_search_settings(beam_size, alpha)
    assert str(error.value).startswith(message)
    # t2t.load's decode (and the CTranslate2 engine) take DecodeSettings.
    with pytest.raises(errors.UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        tf_engines.DecodeSettings(beam_size=beam_size, alpha=alpha)
    input_checks.check_search_settings(1, 0)
    input_checks.check_search_settings(4.0, 0.6)


@pytest.mark.parametrize("overrides, message", [
    ("beam_size=0", "--decode_hparams='beam_size=0': beam_size=0: give a whole number"),
    ("beam_size=-3", "--decode_hparams='beam_size=-3': beam_size=-3: give a whole number"),
    ("alpha=-1", "--decode_hparams='alpha=-1': alpha=-1.0: give the length penalty's"),
    ("beam_size=2.5", "--decode_hparams='beam_size=2.5': Could not parse hparam 'beam_size'"),
    ("stopping_bound=max_lenght", "--decode_hparams='stopping_bound=max_lenght': "
     "stopping_bound='max_lenght': did you mean max_length? use max_length (T2T's exact "
     "search) or current_length")])
def test_decode_hparams_no_search_uses_are_refused_by_both_programs(overrides, message):
    # t2t-decoder (TensorFlow and CTranslate2 engines) and t2t-exporter parse them here.
    with pytest.raises(errors.UserError) as error:
        t2t_decoder.parse_decode_hparams(overrides)
    assert str(error.value).startswith(message)


def test_ctranslate2_settings_of_decode_hparams_are_checked():
    with pytest.raises(errors.UserError, match="--decode_hparams stopping_bound=current_length "
                       "have no equivalent in the ctranslate2 engine"):
        file_decoding.unsupported_decode_hparams(
            t2t_decoder.parse_decode_hparams("stopping_bound=current_length"), "ctranslate2")
    decode_hp = decoding.decode_hparams()
    decode_hp.alpha = -0.5
    with pytest.raises(errors.UserError, match="alpha=-0.5: give"):
        file_decoding.settings_from_decode_hparams(decode_hp)


def run(program, main, args, capsys):
    """The program in this process as its console script runs it: (exit code, stderr)."""
    with flagsaver.flagsaver():
        with pytest.raises(SystemExit) as stopped:
            cli.run_main(main, program, argv=[program] + args)
    return stopped.value.code, capsys.readouterr().err


@pytest.mark.parametrize("program, main", [("t2t-decoder", t2t_decoder.main),
                                           ("t2t-exporter", t2t_exporter.main)])
def test_an_output_dir_without_a_model_is_t2t_loads_line(tmp_path, capsys, program, main):
    missing = str(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    empty = str(tmp_path / "empty")
    for folder in (missing, empty):
        code, err = run(program, main, ["--output_dir=" + folder], capsys)
        with pytest.raises(errors.UserError) as loaded:
            t2t.load(folder)
        assert code == 2, err
        assert err.strip().splitlines() == ["%s: error: %s" % (program, loaded.value)]
    assert "does not exist" in str(loaded.value) or "holds no t2t model" in str(loaded.value)
    # With checkpoints but no record of the model, the flags must say what it is.
    _write(os.path.join(empty, "model.ckpt-5.index"))
    code, err = run(program, main, ["--output_dir=" + empty], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        "%s: error: missing --problem, --model, --hparams_set; %s needs --problem, --model, "
        "--hparams_set and --output_dir or --checkpoint_path" % (program, program)]


def test_decoder_quantization_needs_the_ctranslate2_engine(tmp_path, capsys):
    code, err = run("t2t-decoder", t2t_decoder.main,
                    ["--output_dir=" + training_folder(tmp_path), "--quantization=int4"],
                    capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        "t2t-decoder: error: --quantization is for --engine=ctranslate2; the TensorFlow "
        "engine decodes the checkpoint's float32 weights"]
