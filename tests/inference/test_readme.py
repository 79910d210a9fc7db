"""README.md's "Use a trained model from Python" runs as written: its shell commands and
Python blocks, on a training folder the tour's programs made under a temporary $HOME (a
short run: the values the README shows come from the tour's 2,000 steps)."""
import contextlib
import io
import os
import re
import subprocess
import sys

import pytest

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
BIN = os.path.dirname(sys.executable)
PROBLEM = "algorithmic_reverse_binary40_test"
TIMEOUT = 600

pytest.importorskip("ctranslate2")


def section_blocks(language):
    text = open(README, encoding="utf-8").read()
    section = text[text.index("## Use a trained model from Python"):]
    section = section[:section.index("\n## ", 3)]
    return re.findall(r"```%s\n(.*?)```" % language, section, re.S)


def run(command, home):
    env = dict(os.environ, HOME=str(home), PATH=BIN + os.pathsep + os.environ["PATH"])
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env,
                            timeout=TIMEOUT)
    assert result.returncode == 0, (command, result.stderr[-3000:])
    return result.stdout


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """$HOME with ~/t2t_train/reverse trained by the tour's programs (a few steps)."""
    home = tmp_path_factory.mktemp("home")
    run("t2t-datagen --problem=%s --data_dir=~/t2t_data --tmp_dir=~/tmp" % PROBLEM, home)
    run("t2t-trainer --problem=%s --model=transformer --hparams_set=transformer_tiny "
        "--data_dir=~/t2t_data --output_dir=~/t2t_train/reverse --train_steps=10 "
        "--schedule=train --random_seed=1 --hparams=hidden_size=16,filter_size=32,"
        "num_heads=2,num_hidden_layers=1,batch_size=256" % PROBLEM, home)
    return home


def test_the_sections_commands_and_python_run_as_written(home, monkeypatch):
    first, second = section_blocks("python")
    (commands,) = section_blocks("sh")
    for line in commands.strip().splitlines():
        printed = run(line.split("#")[0], home).strip()
        assert printed.startswith(str(home / "t2t_train" / "reverse" / "export"))
    export = home / "t2t_train" / "reverse" / "export"
    assert (export / "ctranslate2-int8" / "model.bin").exists()
    assert [name for name in os.listdir(export) if name.isdigit()]

    monkeypatch.setenv("HOME", str(home))
    namespace, out = {}, io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(first, "README.md", "exec"), namespace)  # pylint: disable=exec-used
        exec(compile(second, "README.md", "exec"), namespace)  # pylint: disable=exec-used
    printed = out.getvalue().splitlines()
    assert len(printed) == 3
    decodes, best, fast = printed
    # Binary strings of "0 1" tokens (a 10-step model: not yet their reversals).
    assert re.fullmatch(r"\['[01 ]*', '[01 ]*'\]", decodes)
    assert re.fullmatch(r"[01 ]*", best)
    assert re.fullmatch(r"\['[01 ]*'\]", fast)
    assert namespace["saved_model"].engine_name == "saved_model"
    assert namespace["fast"].engine_name == "ctranslate2"
    for name in ("model", "saved_model", "fast"):
        namespace[name].close()
