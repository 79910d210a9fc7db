"""A `--t2t_usr_dir` written for T2T, unchanged: it imports `tensor2tensor.*`, is named
`t2t` (as T2T users often named theirs) and trains through t2t-datagen and t2t-trainer.

One datagen run then one 3-step trainer run (with T2T's `--worker_gpu=0`, a CPU run).
"""
import os
import subprocess
import sys

VENV_BIN = os.path.dirname(sys.executable)
TIMEOUT = 300

USR_INIT = "from . import my_problem\nfrom . import my_hparams\n"
USR_PROBLEM = '''
from tensor2tensor.data_generators import problem, text_problems
from tensor2tensor.utils import registry

WORDS = ["alpha", "beta", "gamma"]


@registry.register_problem
class UsrT2tEcho(text_problems.Text2TextProblem):
    """inputs: "alpha 3", targets: "ALPHA 3"; characters, one shard per split."""
    is_generate_per_split = False
    vocab_type = text_problems.VocabType.CHARACTER
    dataset_splits = [dict(split=problem.DatasetSplit.TRAIN, shards=1),
                      dict(split=problem.DatasetSplit.EVAL, shards=1)]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        texts = ["%s %d" % (WORDS[i % 3], i) for i in range(20)]
        return ({"inputs": text, "targets": text.upper()} for text in texts)
'''
USR_HPARAMS = '''
from tensor2tensor.layers import common_layers
from tensor2tensor.models import transformer
from tensor2tensor.utils import registry


@registry.register_hparams
def usr_t2t_tiny():
    assert callable(common_layers.dense_relu_dense)
    return transformer.transformer_tiny().override_from_dict(dict(
        hidden_size=16, filter_size=32, num_hidden_layers=1, num_heads=2, batch_size=64))
'''


def _run(program, args):
    return subprocess.run([os.path.join(VENV_BIN, program)] + args, capture_output=True,
                          text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def test_a_t2t_usr_dir_importing_tensor2tensor_runs_unchanged(tmp_path):
    usr_dir = tmp_path / "t2t"
    usr_dir.mkdir()
    for name, source in {"__init__.py": USR_INIT, "my_problem.py": USR_PROBLEM,
                         "my_hparams.py": USR_HPARAMS}.items():
        (usr_dir / name).write_text(source)
    data_dir, out_dir = tmp_path / "data", tmp_path / "train"
    common = ["--t2t_usr_dir=%s" % usr_dir, "--problem=usr_t2t_echo",
              "--data_dir=%s" % data_dir]

    datagen = _run("t2t-datagen", common + ["--tmp_dir=%s" % (tmp_path / "tmp")])
    assert datagen.returncode == 0, datagen.stderr
    assert sorted(n for n in os.listdir(data_dir) if not n.startswith(".")) == ["usr_t2t_echo-dev-00000-of-00001",
                                            "usr_t2t_echo-train-00000-of-00001"]
    assert datagen.stderr.count("tensor2tensor imports are served by t2t") == 1

    trainer = _run("t2t-trainer", common + [
        "--model=transformer", "--hparams_set=usr_t2t_tiny", "--output_dir=%s" % out_dir,
        "--train_steps=3", "--schedule=train", "--worker_gpu=0", "--random_seed=1"])
    assert trainer.returncode == 0, trainer.stderr
    checkpoint = (out_dir / "checkpoint").read_text()
    assert 'model_checkpoint_path: "model.ckpt-3"' in checkpoint
