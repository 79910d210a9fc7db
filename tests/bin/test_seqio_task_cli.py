"""t2t-trainer / t2t-decoder --mixture_or_task_name: train on a task registered by a
--module_import module, resume, write task metrics, decode the split and a file; user
errors are one line with exit 2."""
import json
import os
import subprocess
import sys

import pytest

from seqio_training_testing import copy_tasks_module

BIN = os.path.dirname(sys.executable)
TRAINER, DECODER = os.path.join(BIN, "t2t-trainer"), os.path.join(BIN, "t2t-decoder")
TIMEOUT = 300
TINY = "hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,batch_size=256"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("seqio_cli")
    splits = {}
    for split, words in (("train", ["ab", "bca", "cab", "a", "bb"] * 20),
                         ("validation", ["abc", "ca", "b"])):
        path = root / ("%s.tsv" % split)
        path.write_text("".join("%s\t%s\n" % (w, w) for w in words))
        splits[split] = str(path)
    (root / "cli_tasks.py").write_text(copy_tasks_module("cli_copy", splits))
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return root, env


def run(program, args, env):
    return subprocess.run([program] + args, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


def task_args(model_dir):
    return ["--mixture_or_task_name=cli_copy", "--module_import=cli_tasks",
            "--model=transformer", "--hparams_set=transformer_tiny",
            "--output_dir=%s" % model_dir]


def test_train_resume_and_decode(workspace):
    root, env = workspace
    model_dir = root / "model"
    train = task_args(model_dir) + [
        "--task_feature_lengths=inputs=8,targets=8", "--hparams=" + TINY,
        "--local_eval_frequency=10", "--eval_steps=1", "--random_seed=1"]
    first = run(TRAINER, train + ["--train_steps=10", "--schedule=train"], env)
    assert first.returncode == 0, first.stderr[-3000:]
    assert not os.path.exists(model_dir / "inference_eval")
    second = run(TRAINER, train + ["--train_steps=20", "--schedule=train_and_evaluate"], env)
    assert second.returncode == 0, second.stderr[-3000:]
    assert os.path.exists(model_dir / "model.ckpt-20.index")
    saved = json.loads((model_dir / "hparams.json").read_text())
    assert saved["hidden_size"] == 16
    assert "--mixture_or_task_name=cli_copy" in (model_dir / "flags.txt").read_text()
    lines = (model_dir / "inference_eval" / "cli_copy-metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == [20]  # resumed at 10
    assert all(0 <= json.loads(line)["exact_match"] <= 100 for line in lines)
    records = (model_dir / "inference_eval" / "cli_copy-000020.jsonl").read_text()
    assert len(records.splitlines()) == 3

    # A resumed run with other lengths stops before training.
    changed = run(TRAINER, task_args(model_dir) + [
        "--task_feature_lengths=inputs=9,targets=8", "--hparams=" + TINY,
        "--train_steps=30"], env)
    assert changed.returncode == 2 and "task_feature_lengths=inputs=8,targets=8" in \
        changed.stderr.strip().splitlines()[-1]

    out = root / "decodes" / "copy.txt"
    decoded = run(DECODER, task_args(model_dir) + ["--decode_to_file=%s" % out,
                                                  "--decode_hparams=beam_size=1"], env)
    assert decoded.returncode == 0, decoded.stderr[-3000:]
    assert "decoded 3 examples of cli_copy/validation" in decoded.stdout
    assert out.read_text().count("\n") == 3
    assert (root / "decodes" / "copy.txt.targets").read_text() == "ABC\nCA\nB\n"
    assert out.read_text() == out.read_text().upper()  # post-processed

    prompts = root / "prompts.txt"
    prompts.write_text("ab\nc\n")
    from_file = run(DECODER, task_args(model_dir) + [
        "--decode_from_file=%s" % prompts, "--decode_to_file=%s" % (root / "p.out")], env)
    assert from_file.returncode == 0, from_file.stderr[-3000:]
    assert (root / "p.out").read_text().count("\n") == 2


ERROR_CASES = {
    "unknown_task": (["--mixture_or_task_name=cli_copyy", "--module_import=cli_tasks",
                      "--task_feature_lengths=inputs=8,targets=8"],
                     "closest registered names: .*cli_copy"),
    "no_lengths": (["--mixture_or_task_name=cli_copy", "--module_import=cli_tasks"],
                   "--task_feature_lengths is required"),
    "no_module": (["--mixture_or_task_name=cli_copy", "--module_import=no_such_tasks_module",
                   "--task_feature_lengths=inputs=8,targets=8"],
                  "no module named no_such_tasks_module"),
    "with_problem": (["--mixture_or_task_name=cli_copy", "--module_import=cli_tasks",
                      "--problem=x", "--task_feature_lengths=inputs=8"], "not both"),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_user_errors(workspace, name, monkeypatch):
    """The checks run before any TensorFlow work (in-process here; the subprocess run of
    test_train_resume_and_decode shows such an error is one line with exit 2)."""
    from absl import flags
    from absl.testing import flagsaver
    from t2t.bin import t2t_trainer
    from t2t.core import errors
    from t2t import seqio
    root, _ = workspace
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, "cli_tasks", raising=False)  # registers on import
    seqio.TaskRegistry.remove("cli_copy")
    args, message = ERROR_CASES[name]
    argv = ["t2t-trainer"] + args + ["--model=transformer", "--hparams_set=transformer_tiny",
                                     "--output_dir=%s" % (root / ("err_" + name))]
    with flagsaver.flagsaver():
        flags.FLAGS.unparse_flags()
        flags.FLAGS(argv)
        with pytest.raises(errors.UserError, match=message):
            t2t_trainer.main(["t2t-trainer"])
