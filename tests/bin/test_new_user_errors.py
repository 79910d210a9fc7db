"""What a new user runs into, as the installed programs answer it: one line, exit 2.

One module fixture generates data, makes a first trainer run fail (no data there), then
trains 2 steps in the same folder with other hparams (the corrected rerun). The cases then
run as subprocesses a few at a time; each test checks its own exit code and message.
"""
import os
import shutil
import stat
import subprocess
import sys
from concurrent import futures

import pytest

from t2t.data import generator_utils

BIN = os.path.dirname(sys.executable)
PROBLEM = "algorithmic_reverse_binary40_test"
MODEL_ARGS = ["--problem=" + PROBLEM, "--model=transformer", "--hparams_set=transformer_tiny"]
TINY = "hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,batch_size=64"
TIMEOUT = 300


def run(program, args, stdin=None, umask=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")

    def preexec():
        if umask is not None:
            os.umask(umask)

    proc = subprocess.run([os.path.join(BIN, program)] + list(args), input=stdin,
                          capture_output=True, text=True, env=env, timeout=TIMEOUT,
                          preexec_fn=preexec)
    return proc.returncode, proc.stdout, proc.stderr


def shard(data_dir, split):
    return os.path.join(data_dir, "%s-%s-00000-of-00001" % (PROBLEM, split))


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("new_user")
    data_dir, run_dir = str(root / "data"), str(root / "run")
    code, _, err = run("t2t-datagen", ["--problem=" + PROBLEM, "--data_dir=" + data_dir,
                                       "--tmp_dir=%s" % (root / "tmp")])
    assert code == 0, err
    # A first run stopped by missing data, with other hparams than the corrected one.
    first = run("t2t-trainer", MODEL_ARGS + [
        "--data_dir=%s" % (root / "no_data"), "--output_dir=" + run_dir,
        "--hparams=hidden_size=32", "--train_steps=2"])
    first_left = sorted(os.listdir(run_dir)) if os.path.isdir(run_dir) else []
    second = run("t2t-trainer", MODEL_ARGS + [
        "--data_dir=" + data_dir, "--output_dir=" + run_dir, "--hparams=" + TINY,
        "--train_steps=2", "--eval_steps=1", "--local_eval_frequency=2"], umask=0o022)
    # Damaged copies of the data.
    damaged = {}
    for name, split, how in (("boundary", "train", "boundary"), ("mid", "dev", "mid"),
                             ("flipped", "dev", "flip")):
        copy = str(root / ("data_" + name))
        shutil.copytree(data_dir, copy)
        path = shard(copy, split)
        data = open(path, "rb").read()
        if how == "boundary":
            records = generator_utils.read_records(path)
            data = data[:sum(len(r) + 16 for r in records[:len(records) // 2])]
        elif how == "mid":
            data = data[:len(data) // 2 + 3]
        else:
            data = bytearray(data)
            data[20] ^= 0xFF  # in the first record: the first eval batch reads it
        open(path, "wb").write(bytes(data))
        damaged[name] = copy
    inputs = root / "inputs"
    inputs.mkdir()
    (inputs / "oov.txt").write_text("0 1\n1 1 0\n0 1 5\n")
    (inputs / "nan.txt").write_text("0 1\n1 x 0\n")
    (inputs / "good.txt").write_text("0 1 1\n1 0\n")
    (inputs / "latin1.txt").write_bytes("0 1\n1 \xe9 0\n".encode("latin-1"))
    a_file = root / "a_file"
    a_file.write_text("")
    return {"root": root, "data_dir": data_dir, "run_dir": run_dir, "first": first,
            "first_left": first_left,
            "second": second, "damaged": damaged, "inputs": inputs, "a_file": str(a_file)}


def decoder_args(setup, *extra):
    return MODEL_ARGS + ["--hparams=" + TINY, "--data_dir=" + setup["data_dir"],
                         "--output_dir=" + setup["run_dir"]] + list(extra)


def trainer_args(setup, data_dir, out_name, *extra):
    return MODEL_ARGS + ["--hparams=" + TINY, "--data_dir=" + data_dir,
                         "--output_dir=%s" % (setup["root"] / out_name), "--train_steps=2",
                         "--eval_steps=1", "--local_eval_frequency=1"] + list(extra)


def cases(setup):
    inputs, a_file = setup["inputs"], setup["a_file"]
    damaged = setup["damaged"]
    return {
        "decode_hparams_name": (
            "t2t-decoder", decoder_args(setup, "--decode_hparams=beam_sze=4"), None,
            "--decode_hparams='beam_sze=4': unknown decode hyperparameter beam_sze; did you "
            "mean beam_size"),
        "decode_hparams_value": (
            "t2t-decoder", decoder_args(setup, "--decode_hparams=beam_size=abc"), None,
            "Could not parse hparam 'beam_size' of type 'int' with value 'abc'"),
        "missing_input_file": (
            "t2t-decoder", decoder_args(setup, "--decode_from_file=%s" % (inputs / "no.txt")),
            None, "--decode_from_file %s does not exist" % (inputs / "no.txt")),
        "token_outside_vocab": (
            "t2t-decoder", decoder_args(setup, "--decode_from_file=%s" % (inputs / "oov.txt"),
                                        "--decode_to_file=%s" % (inputs / "oov.out")), None,
            "%s line 3: token '5' is outside the vocabulary; inputs are space-separated "
            "tokens 0..1" % (inputs / "oov.txt")),
        "token_not_a_number": (
            "t2t-decoder", decoder_args(setup, "--decode_from_file=%s" % (inputs / "nan.txt"),
                                        "--decode_to_file=%s" % (inputs / "nan.out")), None,
            "%s line 2: token 'x' is not a number" % (inputs / "nan.txt")),
        "other_model": (
            "t2t-decoder", decoder_args(setup, "--model=lstm_seq2seq"), None,
            "%s was trained with --model=transformer, not lstm_seq2seq" % setup["run_dir"]),
        "other_hparams_set": (
            "t2t-decoder", decoder_args(setup, "--hparams_set=transformer_small"), None,
            "was trained with --hparams_set=transformer_tiny, not transformer_small"),
        "decode_dev_truncated": (
            "t2t-decoder", MODEL_ARGS + ["--hparams=" + TINY, "--output_dir=" + setup["run_dir"],
                                         "--data_dir=" + damaged["mid"],
                                         "--decode_hparams=beam_size=1"], None,
            "%s has " % shard(damaged["mid"], "dev")),
        "unknown_hparam_far_from_all": (
            "t2t-trainer", trainer_args(setup, setup["data_dir"], "far", "--hparams=zqxw=1"),
            None, "--hparams='zqxw=1': unknown hyperparameter zqxw; no name is close ("),
        "unknown_hparam": (
            "t2t-decoder", decoder_args(setup, "--hparams=hiden_size=16"), None,
            "--hparams='hiden_size=16': unknown hyperparameter hiden_size; did you mean "
            "hidden_size"),
        "decode_file_not_utf8": (
            "t2t-decoder", decoder_args(setup, "--decode_from_file=%s" % (inputs / "latin1.txt"),
                                        "--decode_to_file=%s" % (inputs / "latin1.out")), None,
            "%s line 2: not UTF-8 (byte 0xe9 at column 3); convert it to UTF-8, e.g. iconv -f "
            "latin1 -t utf-8 %s > %s" % (inputs / "latin1.txt", inputs / "latin1.txt",
                                         inputs / "latin1.utf8.txt")),
        "score_file_not_utf8": (
            "t2t-decoder", decoder_args(setup, "--score_file=%s" % (inputs / "latin1.txt"),
                                        "--decode_to_file=%s" % (inputs / "latin1.out")), None,
            "%s line 2: not UTF-8 (byte 0xe9 at column 3)" % (inputs / "latin1.txt")),
        "datagen_data_dir_under_file": (
            "t2t-datagen", ["--problem=" + PROBLEM, "--data_dir=%s/d" % a_file], None,
            "--data_dir=%s/d cannot be created: %s is a file, not a folder" % (a_file, a_file)),
        "datagen_tmp_dir_under_file": (
            "t2t-datagen", ["--problem=" + PROBLEM, "--data_dir=%s" % (setup["root"] / "d2"),
                            "--tmp_dir=%s/t" % a_file], None,
            "--tmp_dir=%s/t cannot be created" % a_file),
        "train_shard_short_on_a_record_boundary": (
            "t2t-trainer", trainer_args(setup, damaged["boundary"], "boundary"), None,
            "%s has " % shard(damaged["boundary"], "train")),
        "eval_shard_damaged_bytes": (
            "t2t-trainer", trainer_args(setup, damaged["flipped"], "flipped"), None,
            "%s is damaged: unreadable after " % shard(damaged["flipped"], "dev")),
    }


@pytest.fixture(scope="module")
def results(setup):
    todo = cases(setup)
    with futures.ThreadPoolExecutor(3) as pool:
        running = {name: pool.submit(run, program, args, stdin)
                   for name, (program, args, stdin, _) in todo.items()}
        return {name: (future.result(), todo[name][3], todo[name][0])
                for name, future in running.items()}


def assert_one_line_error(result, program, expected):
    code, _, stderr = result
    assert code == 2, stderr[-3000:]
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, stderr[-3000:]
    assert errors[0].startswith(program + ": error: "), errors[0]
    assert expected in errors[0], errors[0]
    return errors[0]


@pytest.mark.parametrize("case", [
    "decode_hparams_name", "decode_hparams_value", "missing_input_file", "token_outside_vocab",
    "token_not_a_number", "other_model", "other_hparams_set", "decode_dev_truncated",
    "unknown_hparam_far_from_all", "unknown_hparam", "decode_file_not_utf8",
    "score_file_not_utf8", "datagen_data_dir_under_file", "datagen_tmp_dir_under_file",
    "train_shard_short_on_a_record_boundary", "eval_shard_damaged_bytes"])
def test_one_line_error(results, case):
    result, expected, program = results[case]
    line = assert_one_line_error(result, program, expected)
    if "shard" in case or "truncated" in case:
        assert "delete it and rerun t2t-datagen --problem=%s" % PROBLEM in line


def test_flag_checks_come_before_any_tensorflow_output(results):
    # The whole of stderr is the one error line: nothing was built before the check.
    for case in ("decode_hparams_name", "missing_input_file", "other_model",
                 "decode_file_not_utf8", "score_file_not_utf8", "datagen_data_dir_under_file"):
        (_, _, stderr), _, _ = results[case]
        assert len(stderr.strip().splitlines()) == 1, (case, stderr)


def test_an_unknown_hparam_names_hparams_not_add_hparam(results):
    (_, _, stderr), _, _ = results["unknown_hparam_far_from_all"]
    assert "add_hparam" not in stderr
    assert "e.g. activation_dtype, " in stderr  # names a command-line user can give


def test_a_failed_first_run_does_not_block_the_corrected_one(setup):
    code, _, stderr = setup["first"]
    assert code == 2 and "no data files match" in stderr
    assert "hparams.json" not in setup["first_left"] and "flags.txt" not in setup["first_left"]
    code, _, stderr = setup["second"]
    assert code == 0, stderr[-3000:]
    assert '"hidden_size": 16' in open(os.path.join(setup["run_dir"], "hparams.json")).read()


def test_run_metadata_follows_the_umask(setup):
    for name in ("hparams.json", "flags.txt", "flags_t2t.txt"):
        mode = stat.S_IMODE(os.stat(os.path.join(setup["run_dir"], name)).st_mode)
        assert mode == 0o644, (name, oct(mode))


def test_trainer_hides_tensorflow_deprecation_notices(setup):
    _, _, stderr = setup["second"]
    assert "Instructions for updating" not in stderr
    assert "WARNING:tensorflow:" not in stderr  # one logger, not two
    assert "train transformer done:" in stderr


def test_interactive_decoding_reports_a_bad_line_and_goes_on(setup):
    code, stdout, stderr = run("t2t-decoder", decoder_args(
        setup, "--decode_interactive", "--decode_hparams=beam_size=1,extra_length=2"),
        stdin="0 1\n0 x\n1 1 0\n9\nq\n")
    assert code == 0, stderr[-3000:]
    assert stdout.count("INTERACTIVE MODE") == 1
    reported = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert reported == [
        "error: line 2 '0 x': token 'x' is not a number; inputs are space-separated tokens "
        "0..1; type another line (q quits)",
        "error: line 4 '9': token '9' is outside the vocabulary; inputs are space-separated "
        "tokens 0..1; type another line (q quits)"]
    assert "t2t-decoder: decoded 2 inputs" in stdout  # the two good lines
    assert "Instructions for updating" not in stderr


def test_show_tf_deprecations_brings_the_notices_back(setup, tmp_path):
    # A user module calling a deprecated TensorFlow function: a notice on every stack
    # (TF 2.21's native decoding path itself calls nothing deprecated).
    usr_dir = tmp_path / "usr"
    usr_dir.mkdir()
    (usr_dir / "__init__.py").write_text(
        "from tensorflow.python.util import deprecation\n"
        "deprecation.deprecated(None, 'Use something else.')(lambda: 3)()\n")
    good = str(setup["inputs"] / "good.txt")
    usr = "--t2t_usr_dir=%s" % usr_dir
    with futures.ThreadPoolExecutor(2) as pool:  # two decoder processes at once
        quiet = pool.submit(run, "t2t-decoder", decoder_args(
            setup, "--decode_from_file=" + good, "--decode_to_file=" + good + ".out", usr))
        loud = pool.submit(run, "t2t-decoder", decoder_args(
            setup, "--decode_from_file=" + good, "--decode_to_file=" + good + ".out2", usr,
            "--show_tf_deprecations"))
        quiet, loud = quiet.result(), loud.result()
    assert quiet[0] == loud[0] == 0, quiet[2][-2000:] + loud[2][-2000:]
    assert "Instructions for updating" not in quiet[2]
    assert "Instructions for updating" in loud[2]
    assert open(good + ".out").read() == open(good + ".out2").read()


PROGRAMS = ["t2t-datagen", "t2t-trainer", "t2t-decoder", "t2t-exporter", "t2t-bleu",
            "t2t-avg-all"]


def test_help_prints_the_description_and_own_flags_and_exits_0():
    with futures.ThreadPoolExecutor(3) as pool:
        answers = dict(zip(PROGRAMS, pool.map(lambda p: run(p, ["--help"]), PROGRAMS)))
    own_flag = {"t2t-datagen": "--tmp_dir", "t2t-trainer": "--train_steps",
                "t2t-decoder": "--checkpoint_path", "t2t-exporter": "--export_dir",
                "t2t-bleu": "--translation", "t2t-avg-all": "--model_dir"}
    for program, (code, stdout, stderr) in answers.items():
        assert code == 0, (program, stderr[-2000:])
        assert stdout.startswith(program + ":"), (program, stdout[:200])
        assert "Flags of %s:" % program in stdout
        assert "\n  %s\n" % own_flag[program] in stdout
        assert "\n  --[no]show_tf_deprecations\n" in stdout
        assert "\n  --verbosity\n" not in stdout and "--[no]hbm_oom_exit" not in stdout


def test_make_demo_progress_lines_stream_through_its_pipes():
    # grep and sed buffer a pipe's output in blocks; training progress would then only
    # appear when training ends.
    script = open(os.path.join(os.path.dirname(__file__), "..", "..", "scripts",
                               "demo.sh")).read()
    pipes = [part.split()[0] + " " + " ".join(part.split()[1:3])
             for line in script.splitlines() for part in line.split("|")[1:]
             if part.split()]
    assert any(p.startswith("grep") for p in pipes)
    for pipe in pipes:
        if pipe.startswith("grep"):
            assert "--line-buffered" in pipe, pipe
        if pipe.startswith("sed"):
            assert " -u" in pipe, pipe
    assert "PYTHONUNBUFFERED=1" in script
