"""t2t-decoder: the console script on a trained model, its modes, and its user errors."""
import glob
import io
import os
import re
import shutil
import subprocess
import sys

import pytest
import tensorflow as tf
from absl import flags
from absl.testing import flagsaver

from t2t.bin import t2t_decoder, t2t_exporter
from t2t.core import backend_choice
from t2t.core import errors, registry
from t2t.decoding import decoding
from t2t.decoding import predictor

from decoding_testing import (DEV_SIZE, HPARAMS, HPARAMS_SET, MODEL, PROBLEM, TRAIN_STEPS,
                              assert_decodes_in_input_order, dev_pairs, make_hparams,
                              trained_model)

FLAGS = flags.FLAGS


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return trained_model(tmp_path_factory)


def common_flags(model):
    return {"problem": PROBLEM, "model": MODEL, "hparams_set": HPARAMS_SET,
            "hparams": HPARAMS, "data_dir": model["data_dir"],
            "output_dir": model["model_dir"], "t2t_usr_dir": model["usr_dir"]}


def run_decoder(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "t2t-decoder")] +
                          list(args), capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture()
def parsed_flags():
    FLAGS.mark_as_parsed()
    with flagsaver.flagsaver():
        yield


def test_decode_from_file_console_script(model, tmp_path):
    words = ["ab", "dcbad", "c", "bbb", "cabd"]
    source = tmp_path / "words.txt"
    source.write_text("\n".join(words) + "\n")
    target = tmp_path / "decoded.txt"
    args = ["--%s=%s" % item for item in common_flags(model).items()]
    result = run_decoder(*args, "--decode_hparams=beam_size=2,alpha=0.6,batch_size=2",
                         "--decode_from_file=%s" % source, "--decode_to_file=%s" % target)
    assert result.returncode == 0, result.stderr[-3000:]
    assert_decodes_in_input_order(target.read_text().split("\n")[:-1], words)
    assert "decoded 5 lines" in result.stdout
    # The progress summary: sentences, tokens and throughput.
    summary = [line for line in result.stderr.splitlines() if "words.txt done:" in line]
    assert summary and "5 sentences" in summary[0] and "tokens/s" in summary[0], summary


def test_user_errors_are_one_line_exit_2(model, tmp_path):
    base = ["--%s=%s" % item for item in common_flags(model).items() if item[0] != "model"]
    result = run_decoder(*base)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "t2t-decoder: error: missing --model; t2t-decoder needs --problem, --model, "
        "--hparams_set and --output_dir or --checkpoint_path"]


def test_unknown_model_names_the_closest(model, parsed_flags):
    for name, value in common_flags(model).items():
        setattr(FLAGS, name, value)
    FLAGS.model = "transformr"
    with pytest.raises(registry.UnknownNameError, match="transformer"):
        t2t_decoder.main(["t2t-decoder"])


def test_decode_dataset_in_process(model, tmp_path, parsed_flags):
    stem = str(tmp_path / "dev")
    for name, value in common_flags(model).items():
        setattr(FLAGS, name, value)
    FLAGS.decode_hparams = "beam_size=1"
    FLAGS.decode_to_file = stem
    assert t2t_decoder.main(["t2t-decoder"]) == 0
    base = "%s.%s.%s.%s.beam1.alpha0.6." % (stem, MODEL, HPARAMS_SET, PROBLEM)
    inputs = open(base + "inputs").read().splitlines()
    targets = open(base + "targets").read().splitlines()
    decodes = open(base + "decodes").read().splitlines()
    assert len(inputs) == len(targets) == len(decodes) == DEV_SIZE
    assert sorted(zip(inputs, targets)) == sorted(dev_pairs(model["data_dir"]))
    assert sum(d == t for d, t in zip(decodes, targets)) >= 0.75 * DEV_SIZE


def test_thread_flags_reach_the_session(model, parsed_flags):
    FLAGS.intra_op_parallelism_threads = 3
    FLAGS.inter_op_parallelism_threads = 1
    made = t2t_decoder.create_estimator(MODEL, make_hparams(model["data_dir"]),
                                        model["model_dir"],
                                        decoding.decode_hparams("beam_size=1"))
    # A CheckpointPredictor (native backend) or a tf.estimator.Estimator (estimator backend).
    config = getattr(made, "session_config", None) or made.config.session_config
    assert (config.intra_op_parallelism_threads, config.inter_op_parallelism_threads) == (3, 1)


def test_interactive_and_checkpoint_path(model, parsed_flags, monkeypatch, capsys):
    for name, value in common_flags(model).items():
        setattr(FLAGS, name, value)
    FLAGS.output_dir = ""
    FLAGS.checkpoint_path = model["model_dir"]  # a folder: its latest checkpoint
    FLAGS.decode_interactive = True
    FLAGS.decode_hparams = "beam_size=1"
    monkeypatch.setattr(sys, "stdin", io.StringIO("bad\nq\n"))
    assert t2t_decoder.main(["t2t-decoder"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "INTERACTIVE MODE" in lines[0]
    assert_decodes_in_input_order([line for line in lines if line.isupper()], ["bad"])


def test_score_file(model, tmp_path, parsed_flags, capsys):
    for name, value in common_flags(model).items():
        setattr(FLAGS, name, value)
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("abc\tABC\nabc\tCBA\n")
    scores = tmp_path / "scores.txt"
    FLAGS.score_file = str(pairs)
    FLAGS.decode_to_file = str(scores)
    assert t2t_decoder.main(["t2t-decoder"]) == 0
    lines = scores.read_text().splitlines()
    assert len(lines) == 2 and all(len(line.split(".")[1]) == 6 for line in lines)
    assert float(lines[0]) < float(lines[1])
    assert "scored 2 lines" in capsys.readouterr().out


def test_resolve_checkpoint(model, tmp_path):
    latest = t2t_decoder.resolve_checkpoint(None, model["model_dir"])
    assert latest[0] == model["model_dir"] and latest[1].endswith("model.ckpt-%d" % TRAIN_STEPS)
    assert t2t_decoder.resolve_checkpoint(latest[1], "") == latest
    with pytest.raises(t2t_decoder.errors.UserError, match="is not a checkpoint"):
        t2t_decoder.resolve_checkpoint(str(tmp_path / "model.ckpt-9"), "")
    with pytest.raises(t2t_decoder.errors.UserError, match="no checkpoint in"):
        t2t_decoder.resolve_checkpoint(None, str(tmp_path))
    with pytest.raises(t2t_decoder.errors.UserError, match="--output_dir"):
        t2t_decoder.resolve_checkpoint(None, "")


@pytest.mark.skipif(not backend_choice.estimator_available(), reason="no tf.estimator")
@pytest.mark.parametrize("decode_hparams", ["beam_size=1", "beam_size=3,alpha=0.6"])
def test_backends_write_identical_decodes(model, tmp_path, parsed_flags, decode_hparams):
    texts = {}
    for backend in ("estimator", "native"):
        for name, value in common_flags(model).items():
            setattr(FLAGS, name, value)
        FLAGS.decode_hparams = decode_hparams
        FLAGS.backend = backend
        FLAGS.decode_to_file = str(tmp_path / backend)
        assert t2t_decoder.main(["t2t-decoder"]) == 0
        beam = decode_hparams.split(",")[0].split("=")[1]
        alpha = "0.6"
        base = "%s.%s.%s.%s.beam%s.alpha%s." % (tmp_path / backend, MODEL, HPARAMS_SET,
                                                PROBLEM, beam, alpha)
        texts[backend] = [open(base + ext).read() for ext in ("decodes", "targets", "inputs")]
    assert texts["estimator"] == texts["native"]
    assert len(texts["native"][0].splitlines()) == DEV_SIZE


def test_estimator_backend_without_tf_estimator_is_a_user_error(model, parsed_flags,
                                                                 monkeypatch):
    monkeypatch.setattr(backend_choice, "estimator_available", lambda: False)
    for name, value in common_flags(model).items():
        setattr(FLAGS, name, value)
    FLAGS.backend = "estimator"
    with pytest.raises(errors.UserError, match="--backend=estimator needs tf.estimator"):
        t2t_decoder.main(["t2t-decoder"])


@pytest.mark.parametrize("program,module,own_flags", [
    ("t2t-decoder", t2t_decoder, t2t_decoder.DECODER_FLAGS),
    ("t2t-exporter", t2t_exporter, t2t_exporter.EXPORTER_FLAGS)])
def test_help_lists_the_flags_the_program_reads(program, module, own_flags, monkeypatch,
                                                capsys):
    # Both define the trainer's flags (one command line serves several programs); --help
    # lists only the program's own (tests/serving/test_export.py checks that they are the
    # ones its runs read), --helpfull all of them.
    monkeypatch.setattr(sys, "argv", [program, "--help"])
    with pytest.raises(SystemExit) as exited:
        module.console_main()
    assert exited.value.code == 0
    text = capsys.readouterr().out
    listed = re.findall(r"^  --(?:\[no\])?(\w+)$", text, re.M)
    assert sorted(listed) == sorted(own_flags)
    assert "train_steps" not in listed and not [n for n in listed if n.startswith("autotune")]
    assert "The training folder (t2t-trainer --output_dir)" in text
    # The usage examples keep their line breaks (a lost "\\" joined two lines).
    assert not re.search(r"\S {4,}--", text), text
    monkeypatch.setattr(sys, "argv", [program, "--helpfull"])
    with pytest.raises(SystemExit):
        module.console_main()
    assert "--train_steps" in capsys.readouterr().out


# ---------------------------------------------------------------------------- broken files
@pytest.fixture(scope="module")
def truncated_run(model, tmp_path_factory):
    """A copy of the trained run whose newest checkpoint, model.ckpt-<TRAIN_STEPS>, has a
    truncated data file; model.ckpt-300 (the same values under another step) reads."""
    model_dir = str(tmp_path_factory.mktemp("truncated") / "train")
    shutil.copytree(model["model_dir"], model_dir)
    newest = os.path.join(model_dir, "model.ckpt-%d" % TRAIN_STEPS)
    intact = os.path.join(model_dir, "model.ckpt-300")
    for name in glob.glob(newest + ".*"):
        shutil.copy(name, name.replace(newest, intact))
    older = [p for p in tf.train.get_checkpoint_state(model_dir).all_model_checkpoint_paths
             if not p.endswith("model.ckpt-%d" % TRAIN_STEPS)]
    tf.compat.v1.train.update_checkpoint_state(
        model_dir, newest, all_model_checkpoint_paths=older + [intact, newest])
    data = newest + ".data-00000-of-00001"
    with open(data, "r+b") as out:
        out.truncate(os.path.getsize(data) // 2)
    return model_dir


def test_a_truncated_checkpoint_is_one_line_naming_it_and_the_intact_ones(model,
                                                                           truncated_run):
    # t2t-decoder on both backends and t2t-exporter, side by side (each starts TensorFlow).
    args = ["--%s=%s" % item for item in dict(common_flags(model),
                                              output_dir=truncated_run).items()]
    bin_dir = os.path.dirname(sys.executable)
    runs = {"native": [os.path.join(bin_dir, "t2t-decoder"), "--backend=native"],
            "exporter": [os.path.join(bin_dir, "t2t-exporter")]}
    if backend_choice.estimator_available():
        runs["estimator"] = [os.path.join(bin_dir, "t2t-decoder"), "--backend=estimator"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    procs = {name: subprocess.Popen(argv + args + ["--decode_hparams=beam_size=1"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=env)
             for name, argv in runs.items()}
    message = re.compile(
        r"checkpoint {0}/model\.ckpt-{1} cannot be read: model\.ckpt-{1}\.data-00000-of-00001 "
        r"holds [\d,]+ bytes, its index lists [\d,]+ \(the file is truncated\); intact "
        r"checkpoints in {0}: model\.ckpt-300(, model\.ckpt-0)?; pass "
        r"--checkpoint_path={0}/model\.ckpt-300$".format(re.escape(truncated_run), TRAIN_STEPS))
    for name, proc in procs.items():
        _, stderr = proc.communicate(timeout=600)
        program = "t2t-exporter" if name == "exporter" else "t2t-decoder"
        assert proc.returncode == 2, (name, stderr[-3000:])
        assert "Traceback" not in stderr
        last = stderr.strip().splitlines()[-1]
        assert last.startswith(program + ": error: ") and message.search(last), (name, last)


def test_checkpoint_predictor_names_a_truncated_checkpoint(model, truncated_run):
    hparams = make_hparams(model["data_dir"])
    checkpoint_predictor = predictor.CheckpointPredictor(MODEL, hparams, truncated_run)
    with pytest.raises(errors.UserError, match=r"model\.ckpt-%d cannot be read: .* "
                                               r"intact checkpoints in .*: model\.ckpt-300"
                       % TRAIN_STEPS):
        next(checkpoint_predictor.predict(lambda: None))
