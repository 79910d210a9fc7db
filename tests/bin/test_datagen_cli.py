"""t2t-datagen: the CLI helpers, the datagen library, and the real program in subprocesses.

The subprocess runs are independent, so one module fixture starts them all at once (each
imports TensorFlow, which dominates their time) and each test waits for its own.
"""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
import tensorflow as tf
from absl import flags

from t2t.bin import cli
from t2t.core import errors, random_seed, registry
from t2t.data import generator_utils
from t2t.datagen import datagen

VENV_BIN = os.path.dirname(sys.executable)
CONSOLE_SCRIPT = os.path.join(VENV_BIN, "t2t-datagen")
MODULE_COMMAND = [sys.executable, "-m", "t2t.bin.t2t_datagen"]
REVERSE = "algorithmic_reverse_binary40"
SEED, OTHER_SEED = 1234, 4321
SMALL_CASES = 200
KILL_CASES = 8000  # enough that writing the training shards takes a noticeable while
RUN_TIMEOUT = 300

USR_PROBLEM_MODULE = '''
from t2t.problems import problem, text_problems
from t2t.utils import registry


@registry.register_problem
class UsrTinyEcho(text_problems.Text2TextProblem):
    """inputs: "alpha beta 3", targets: "ALPHA BETA 3"."""

    @property
    def is_generate_per_split(self):
        return False

    @property
    def approx_vocab_size(self):
        return 2**8

    @property
    def dataset_splits(self):
        return [{"split": problem.DatasetSplit.TRAIN, "shards": 2},
                {"split": problem.DatasetSplit.EVAL, "shards": 1}]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        words = ["alpha beta", "gamma", "delta epsilon zeta", "eta theta"]
        for i in range(40):
            text = "%s %d" % (words[i % 4], i)
            yield {"inputs": text, "targets": text.upper()}
'''


# ----------------------------------------------------------------------------
# Subprocess runs
# ----------------------------------------------------------------------------
class Run:
    """A datagen subprocess whose stdout/stderr go to files (pipes could fill and block)."""

    def __init__(self, workdir, name, command, args):
        self.name = name
        self.out_path = os.path.join(workdir, name + ".out")
        self.err_path = os.path.join(workdir, name + ".err")
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.process = subprocess.Popen(command + args, stdout=out, stderr=err,
                                            stdin=subprocess.DEVNULL)

    def wait(self):
        """(exit code, stdout, stderr) once the run has ended."""
        returncode = self.process.wait(timeout=RUN_TIMEOUT)
        with open(self.out_path, encoding="utf-8") as out, \
                open(self.err_path, encoding="utf-8") as err:
            return returncode, out.read(), err.read()


def _datagen_args(data_dir, tmp_dir, problem=REVERSE, seed=SEED, max_cases=SMALL_CASES,
                  processes=1, extra=()):
    return ["--problem=%s" % problem, "--data_dir=%s" % data_dir, "--tmp_dir=%s" % tmp_dir,
            "--random_seed=%d" % seed, "--max_cases=%d" % max_cases,
            "--num_concurrent_processes=%d" % processes] + list(extra)


def _write_usr_dir(root, name, files):
    folder = os.path.join(root, name)
    os.makedirs(folder)
    for relative, source in files.items():
        with open(os.path.join(folder, relative), "w", encoding="utf-8") as f:
            f.write(source)
    return folder


def _kill_when_temp_file_appears(run, data_dir, report):
    """SIGKILL `run` as soon as a temporary (incomplete) file shows up in data_dir."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline and run.process.poll() is None:
        names = os.listdir(data_dir) if os.path.isdir(data_dir) else []
        temporaries = [name for name in names if "incomplete" in name or name.startswith(".")]
        if temporaries:
            run.process.send_signal(signal.SIGKILL)
            report["temporaries"] = temporaries
            report["final_before_kill"] = [n for n in names if n not in temporaries]
            return
        time.sleep(0.005)
    report["missed"] = True


@pytest.fixture(scope="module", autouse=True)
def runs(tmp_path_factory):
    """Starts every subprocess run when the module's first test starts."""
    root = str(tmp_path_factory.mktemp("datagen_cli"))
    tmp_dir = os.path.join(root, "tmp")
    d = lambda name: os.path.join(root, name)  # noqa: E731
    usr_ok = _write_usr_dir(root, "usr_ok_plugin", {
        "__init__.py": "from usr_ok_plugin import tiny_echo\n",
        "tiny_echo.py": USR_PROBLEM_MODULE})
    usr_syntax = _write_usr_dir(root, "usr_syntax_plugin", {
        "__init__.py": "from usr_syntax_plugin import broken_problem\n",
        "broken_problem.py": "x = 1\ndef generate_samples(self:\n    pass\n"})
    usr_raise = _write_usr_dir(root, "usr_raise_plugin", {
        "__init__.py": "from usr_raise_plugin import bad_module\n",
        "bad_module.py": "raise RuntimeError('boom from user code')\n"})

    started = {}

    def start(name, args, command=None):
        started[name] = Run(root, name, command or [CONSOLE_SCRIPT], args)

    # The run to be killed first, so it meets the others' start-up load (more time to kill).
    start("killed", _datagen_args(d("killed"), tmp_dir, max_cases=KILL_CASES))
    kill_report = {}
    killer = threading.Thread(target=_kill_when_temp_file_appears,
                              args=(started["killed"], d("killed"), kill_report))
    killer.start()
    start("b", _datagen_args(d("b"), tmp_dir), command=MODULE_COMMAND)
    start("unknown", _datagen_args(d("unknown"), tmp_dir, problem="algorithmic_revers_binary40"))
    start("only_list", _datagen_args(d("only_list"), tmp_dir, problem="algorithmic_*",
                                     extra=["--only_list", "--exclude_problems=nlplike"]))
    # One run for wildcard + comma list + exclude + parallel workers + a usr dir problem
    # (which the spawned workers must re-import): every TensorFlow start-up costs seconds.
    start("wildcard", _datagen_args(
        d("wildcard"), tmp_dir,
        problem="%s*,algorithmic_identity_binary40,usr_tiny_echo" % REVERSE,
        processes=2, extra=["--exclude_problems=_test", "--t2t_usr_dir=%s" % usr_ok]))
    start("usr_syntax", _datagen_args(d("usr_syntax"), tmp_dir,
                                      extra=["--t2t_usr_dir=%s" % usr_syntax]))
    start("usr_raise", _datagen_args(d("usr_raise"), tmp_dir,
                                     extra=["--t2t_usr_dir=%s" % usr_raise]))
    start("usr_missing", _datagen_args(d("usr_missing"), tmp_dir,
                                       extra=["--t2t_usr_dir=%s" % d("no_such_folder")]))
    yield {"root": root, "dir": d, "tmp_dir": tmp_dir, "runs": started,
           "killer": killer, "kill_report": kill_report}
    for run in started.values():
        if run.process.poll() is None:
            run.process.kill()
            run.process.wait()


def _finished(runs, name):
    returncode, out, err = runs["runs"][name].wait()
    return returncode, out, err


def _files(data_dir):
    return sorted(name for name in os.listdir(data_dir) if not name.startswith("."))


def _examples(path):
    result = []
    for record in generator_utils.read_records(path):
        features = tf.train.Example.FromString(record).features.feature
        result.append((list(features["inputs"].int64_list.value),
                       list(features["targets"].int64_list.value)))
    return result


def _bytes(data_dir, names):
    contents = {}
    for name in names:
        with open(os.path.join(data_dir, name), "rb") as f:
            contents[name] = f.read()
    return contents


def _expected_names(problem_name):
    return sorted(["%s-train-%05d-of-00010" % (problem_name, i) for i in range(10)] +
                  ["%s-dev-00000-of-00001" % problem_name])


# ----------------------------------------------------------------------------
# cli helpers, in process
# ----------------------------------------------------------------------------
def _run_main(main_fn, capsys, argv=("prog",)):
    with pytest.raises(SystemExit) as info:
        cli.run_main(main_fn, "prog", argv=list(argv))
    return info.value.code, capsys.readouterr().err


def test_run_main_exit_codes(capsys):
    assert _run_main(lambda argv: None, capsys)[0] in (None, 0)
    assert _run_main(lambda argv: 3, capsys)[0] == 3

    def user_error(argv):
        raise errors.UserError("bad --thing=3\nuse --thing=4")
    code, err = _run_main(user_error, capsys)
    assert (code, err) == (2, "prog: error: bad --thing=3 use --thing=4\n")

    def unknown_name(argv):
        registry.problem("no_such_problem_xyz")
    code, err = _run_main(unknown_name, capsys)
    assert code == 2 and err.startswith("prog: error: no_such_problem_xyz never registered with registry "
                                        "problems")
    assert err.count("\n") == 1

    def interrupted(argv):
        raise KeyboardInterrupt()
    assert _run_main(interrupted, capsys) == (130, "prog: interrupted\n")


def test_run_main_bad_flag_is_one_line(capsys):
    code, err = _run_main(lambda argv: None, capsys, argv=("prog", "--no_such_flag_xyz=1"))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("prog: error:") and "no_such_flag_xyz" in err


def test_run_main_keeps_tracebacks_of_other_errors():
    def bug(argv):
        raise ZeroDivisionError("a real bug")
    with pytest.raises(ZeroDivisionError, match="a real bug"):
        cli.run_main(bug, "prog", argv=["prog"])


def test_common_flags_are_defined_once_and_registry_help_exits(capsys, monkeypatch):
    flag_values = flags.FlagValues()
    cli.define_common_flags(random_seed_default=7, flag_values=flag_values)
    cli.define_common_flags(random_seed_default=8, flag_values=flag_values)  # no clash
    flag_values(["prog"])
    assert (flag_values.random_seed, flag_values.t2t_usr_dir, flag_values.registry_help) == \
        (7, "", False)
    # (help_string itself would import every model; its content is the registry's business.)
    monkeypatch.setattr(registry, "help_string", lambda: "Registry contents:\n  Problems: x")
    with pytest.raises(SystemExit) as info:
        cli.apply_common_flags("", registry_help=True)
    assert info.value.code == 0
    assert capsys.readouterr().out == "Registry contents:\n  Problems: x\n"


def test_set_random_seed_seeds_python_numpy_and_tensorflow():
    import random
    import numpy as np

    def draw():
        return random.random(), float(np.random.rand()), float(tf.random.uniform([]))
    random_seed.set_random_seed(5)
    first = draw()
    random_seed.set_random_seed(5)
    assert draw() == first
    random_seed.set_random_seed(6)
    assert draw() != first


# ----------------------------------------------------------------------------
# datagen library
# ----------------------------------------------------------------------------
def test_resolve_problem_names():
    resolve = datagen.resolve_problem_names
    assert resolve(REVERSE) == [REVERSE]
    assert resolve(" %s , algorithmic_identity_binary40_rev,%s" % (REVERSE, REVERSE)) == \
        [REVERSE, "algorithmic_identity_binary40_rev"]
    assert resolve("%s*" % REVERSE) == [REVERSE, REVERSE + "_test"]
    assert resolve("%s*" % REVERSE, exclude_problems="_test") == [REVERSE]
    assert resolve("translate_ende_wmt8k_copy_rev") == ["translate_ende_wmt8k_copy_rev"]


@pytest.mark.parametrize("value, exclude, error, message", [
    ("", "", errors.UserError, "--problem is required"),
    ("algorithmic_revers_binary40", "", registry.UnknownNameError,
     "closest registered names: algorithmic_reverse_binary40"),
    ("algorithmic_revers_binary40_rev", "", registry.UnknownNameError,
     "algorithmic_revers_binary40 \\(from algorithmic_revers_binary40_rev\\) never registered"),
    ("zzz_nothing*", "", errors.UserError, "matches no registered problem"),
    ("algorithmic_revers*x", "", errors.UserError, "matches no registered problem"),
    (REVERSE, "reverse", errors.UserError, "excludes every problem"),
    (REVERSE + "_rev_rev", "", errors.UserError, "multiple '_rev' instances"),
])
def test_resolve_problem_names_errors(value, exclude, error, message):
    with pytest.raises(error, match=message) as info:
        datagen.resolve_problem_names(value, exclude_problems=exclude)
    assert "\n" not in str(info.value)


def test_derive_seed_is_stable_and_separates_jobs():
    seed = datagen.derive_seed(429459, REVERSE)
    assert seed == datagen.derive_seed(429459, REVERSE, -1)
    assert seed == datagen.derive_seed(429459, REVERSE + "_rev")  # same data files
    assert 0 <= seed < 2**31
    others = {datagen.derive_seed(429459, REVERSE, 0), datagen.derive_seed(429459, REVERSE, 1),
              datagen.derive_seed(429460, REVERSE), datagen.derive_seed(429459, "x")}
    assert seed not in others and len(others) == 4
    # A fixed value: not Python's per-process salted hash(), so every interpreter agrees.
    assert seed == 79219860


def test_count_tfrecords_and_truncation(tmp_path):
    path = str(tmp_path / "records")
    generator_utils.write_records([b"x" * n for n in (0, 1, 300, 70000)], path)
    assert datagen.count_tfrecords(path) == 4
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:-3])
    with pytest.raises(ValueError, match="truncated"):
        datagen.count_tfrecords(path)


def test_max_cases_limit_reaches_generate_files(tmp_path):
    original = generator_utils.generate_files

    def cases(n):
        return ({"inputs": [i + 2, 1], "targets": [i + 2, 1]} for i in range(n))

    with datagen.max_cases_limit(5):
        paths = [str(tmp_path / "p-train-00000-of-00002"), str(tmp_path / "p-train-00001-of-00002")]
        generator_utils.generate_files(cases(100), paths)
        generator_utils.generate_dataset_and_shuffle(
            cases(100), [str(tmp_path / "q-train-00000-of-00001")],
            cases(100), [str(tmp_path / "q-dev-00000-of-00001")], shuffle=False)
        generator_utils.generate_files(cases(100), [str(tmp_path / "r-dev-00000-of-00001")],
                                       max_cases=2)  # a smaller explicit limit wins
    assert generator_utils.generate_files is original
    count = datagen.count_tfrecords
    assert count(paths[0]) + count(paths[1]) == 5
    assert count(str(tmp_path / "q-train-00000-of-00001")) == 5
    assert count(str(tmp_path / "q-dev-00000-of-00001")) == 5
    assert count(str(tmp_path / "r-dev-00000-of-00001")) == 2
    with datagen.max_cases_limit(0):
        assert generator_utils.generate_files is original


def test_generate_problem_in_process_summary_and_flag_errors(tmp_path):
    summary = datagen.generate_problem(REVERSE + "_test", str(tmp_path / "data"),
                                       str(tmp_path / "tmp"), random_seed=3, max_cases=7,
                                       num_concurrent_processes=1)
    assert summary.problem == REVERSE + "_test"
    assert summary.vocab_size == 4
    assert summary.files == len(datagen.final_data_files(
        registry.problem(REVERSE + "_test"), str(tmp_path / "data")))
    assert summary.examples == 7 * sum(1 for _ in ("train", "dev"))
    assert summary.line().startswith("%s_test: %d files, 14 examples, vocab 4, "
                                     % (REVERSE, summary.files))
    with pytest.raises(errors.UserError, match="--num_shards=3 applies only"):
        datagen.generate_problems([REVERSE], str(tmp_path), str(tmp_path), num_shards=3)
    with pytest.raises(errors.UserError, match="--max_cases=-1"):
        datagen.generate_problems([REVERSE], str(tmp_path), str(tmp_path), max_cases=-1)
    nlplike = "algorithmic_reverse_nlplike8k"
    with pytest.raises(errors.UserError, match="give both --task_id_start and --task_id_end"):
        datagen.generate_problems([nlplike], str(tmp_path), str(tmp_path), task_id_start=2)
    with pytest.raises(errors.UserError, match="has tasks 0..10"):
        datagen.generate_problems([nlplike], str(tmp_path), str(tmp_path),
                                  task_id_start=0, task_id_end=12)


# ----------------------------------------------------------------------------
# The program
# ----------------------------------------------------------------------------
def test_generates_t2t_named_shards_of_reversed_sequences(runs):
    returncode, _, err = _finished(runs, "b")
    assert returncode == 0, err
    data_dir = runs["dir"]("b")
    assert _files(data_dir) == _expected_names(REVERSE)
    train = [ex for i in range(10)
             for ex in _examples(os.path.join(data_dir, "%s-train-%05d-of-00010" % (REVERSE, i)))]
    dev = _examples(os.path.join(data_dir, "%s-dev-00000-of-00001" % REVERSE))
    assert (len(train), len(dev)) == (SMALL_CASES, SMALL_CASES)  # --max_cases per split
    for inputs, targets in train + dev:
        assert inputs[-1] == 1 and targets[-1] == 1            # EOS appended
        assert set(inputs[:-1]) <= {2, 3}                       # binary symbols shifted by 2
        assert targets[:-1] == inputs[-2::-1]                   # targets = reversed inputs
    assert max(len(inputs) for inputs, _ in train) <= 41
    assert "%s: 11 files, 400 examples, vocab 4" % REVERSE in err
    assert "datagen done: 1 problems, 11 files, 400 examples" in err
    assert "Traceback" not in err


def _library_run(runs, name, seed, max_cases):
    """The same generation through the library, in this process (no TensorFlow start-up)."""
    data_dir = runs["dir"](name)
    datagen.generate_problem(REVERSE, data_dir, runs["tmp_dir"], random_seed=seed,
                             max_cases=max_cases, num_concurrent_processes=1)
    return data_dir


def test_same_seed_is_byte_identical_even_in_parallel_and_another_seed_differs(runs):
    """Run "wildcard" (console script, 2 worker processes) and run "b" (`python -m`, in
    process) share the seed: jobs are reseeded from (seed, problem, task), so the pool
    worker writes the same bytes. So does the library, called in this process."""
    names = _expected_names(REVERSE)
    same_seed = _bytes(_library_run(runs, "library_same", SEED, SMALL_CASES), names)
    other_seed = _bytes(_library_run(runs, "library_other", OTHER_SEED, SMALL_CASES), names)
    for name in ("b", "wildcard"):
        returncode, _, err = _finished(runs, name)
        assert returncode == 0, err
    b, wildcard = (_bytes(runs["dir"](name), names) for name in ("b", "wildcard"))
    assert wildcard == b
    assert same_seed == b
    assert all(b[name] != other_seed[name] for name in names)


def test_unknown_problem_is_one_line_naming_the_closest(runs):
    returncode, out, err = _finished(runs, "unknown")
    assert returncode == 2
    assert err.count("\n") == 1 and err.endswith("\n")
    assert err.startswith("t2t-datagen: error: algorithmic_revers_binary40 never registered "
                          "with registry problems")
    assert "closest registered names: %s" % REVERSE in err
    assert "Traceback" not in err and out == ""
    assert not os.path.exists(runs["dir"]("unknown"))


def test_only_list_lists_a_wildcard_without_generating(runs):
    returncode, out, err = _finished(runs, "only_list")
    assert returncode == 0, err
    listed = [line.strip()[2:] for line in out.splitlines() if line.strip().startswith("* ")]
    expected = [name for name in registry.list_problems()
                if name.startswith("algorithmic_") and "nlplike" not in name]
    assert listed == expected and REVERSE in listed
    assert not os.path.exists(runs["dir"]("only_list"))


def test_wildcard_comma_list_and_exclude_run_in_parallel(runs):
    returncode, _, err = _finished(runs, "wildcard")
    assert returncode == 0, err
    data_dir = runs["dir"]("wildcard")
    identity = "algorithmic_identity_binary40"
    algorithmic = [name for name in _files(data_dir) if name.startswith("algorithmic_")]
    assert algorithmic == sorted(_expected_names(identity) + _expected_names(REVERSE))
    assert "running 3 jobs in 2 processes" in err
    for name in _expected_names(identity):
        for inputs, targets in _examples(os.path.join(data_dir, name)):
            assert inputs == targets
    assert "%s: 11 files, 400 examples, vocab 4" % identity in err
    assert "datagen done: 3 problems, 25 files, 840 examples" in err


def test_usr_dir_problem_is_generated(runs):
    """usr_tiny_echo was generated by run "wildcard", in a spawned worker process."""
    returncode, _, err = _finished(runs, "wildcard")
    assert returncode == 0, err
    data_dir = runs["dir"]("wildcard")
    usr_files = [name for name in _files(data_dir) if "usr_tiny_echo" in name]
    assert usr_files == ["usr_tiny_echo-dev-00000-of-00001",
                         "usr_tiny_echo-train-00000-of-00002",
                         "usr_tiny_echo-train-00001-of-00002",
                         "vocab.usr_tiny_echo.256.subwords"]
    from t2t.encoders import text_encoder
    encoder = text_encoder.SubwordTextEncoder(
        os.path.join(data_dir, "vocab.usr_tiny_echo.256.subwords"))
    pairs = [(encoder.decode(inputs[:-1]), encoder.decode(targets[:-1]))
             for name in usr_files if "-of-" in name
             for inputs, targets in _examples(os.path.join(data_dir, name))]
    assert len(pairs) == 40
    assert all(target == source.upper() for source, target in pairs)
    assert "alpha beta 0" in {source for source, _ in pairs}
    assert "usr_tiny_echo: 3 files, 40 examples, vocab %d" % encoder.vocab_size in err


def test_usr_dir_syntax_error_shows_the_users_traceback(runs):
    returncode, _, err = _finished(runs, "usr_syntax")
    # One line naming the module, then the user's frames only (issue 20).
    assert returncode == 2
    first, rest = err.split("\n", 1)
    assert first.startswith("t2t-datagen: error: --t2t_usr_dir=") and "syntax error" in first
    assert rest.startswith("Traceback (most recent call last)")
    assert "broken_problem.py\", line 2" in rest
    assert rest.rstrip().splitlines()[-1].startswith("SyntaxError")
    assert "importlib" not in rest and "/t2t/" not in rest


def test_usr_dir_exception_at_import_shows_its_traceback(runs):
    returncode, _, err = _finished(runs, "usr_raise")
    assert returncode == 2
    first, rest = err.split("\n", 1)
    assert first.startswith("t2t-datagen: error: --t2t_usr_dir=") and "RuntimeError" in first
    assert rest.startswith("Traceback (most recent call last)")
    assert "bad_module.py\", line 1" in rest
    assert "importlib" not in rest and "/t2t/" not in rest
    assert err.rstrip().endswith("RuntimeError: boom from user code")


def test_missing_usr_dir_is_one_line(runs):
    returncode, _, err = _finished(runs, "usr_missing")
    assert returncode == 2
    assert err.count("\n") == 1
    assert err.startswith("t2t-datagen: error: --t2t_usr_dir ")
    assert "no_such_folder" in err and "is not a folder" in err


def test_sigkill_leaves_no_partial_file_and_a_rerun_completes_identically(runs):
    runs["killer"].join(timeout=RUN_TIMEOUT)
    report = runs["kill_report"]
    assert not report.get("missed"), "datagen finished before a temporary file was seen"
    returncode, _, _ = _finished(runs, "killed")
    assert returncode == -signal.SIGKILL
    data_dir = runs["dir"]("killed")
    # generate_files' contract: a split's shards are renamed into place together, only
    # when all are complete; so each split is all there (and parseable) or absent.
    final = _files(data_dir)
    expected = _expected_names(REVERSE)
    assert set(final) <= set(expected)
    train = [name for name in final if "-train-" in name]
    assert len(train) in (0, 10)
    for name in final:
        assert len(_examples(os.path.join(data_dir, name))) > 0  # parseable to the end

    rerun = Run(runs["root"], "rerun", [CONSOLE_SCRIPT],
                _datagen_args(data_dir, runs["tmp_dir"], max_cases=KILL_CASES))
    returncode, _, err = rerun.wait()
    assert returncode == 0, err
    assert _files(data_dir) == expected
    reference = _library_run(runs, "reference", SEED, KILL_CASES)  # never interrupted
    assert _bytes(data_dir, expected) == _bytes(reference, expected), (
        "resumed files differ; final files when killed: %s" % report["final_before_kill"])
