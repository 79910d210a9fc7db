"""Python examples on the docs pages that no package's tests run, run as written.

(The SeqIO page's examples: tests/seqio/test_docs_seqio.py; its cluster commands:
tests/seqio/test_cache_tasks.py.)
"""
import os
import re
import sys

import pytest

from t2t.core import registry, usr_dir

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "docs")


def python_blocks(page, heading):
    """The ```python blocks of docs/<page> from `heading` to the next heading of its level."""
    with open(os.path.join(DOCS, page), encoding="utf-8") as f:
        text = f.read()
    start = text.index(heading + "\n")
    level = heading.split(" ")[0]
    end = text.find("\n" + level + " ", start + len(heading))
    section = text[start:end if end >= 0 else len(text)]
    return re.findall(r"```python\n(.*?)```", section, re.S)


@pytest.fixture
def forget_registrations(tmp_path):
    """Forget the test's user-dir modules (those under tmp_path) and the hparams sets they
    registered. t2t's own modules a test imported stay imported: imported again by a later
    test in the same process, they would register their names twice."""
    modules_before = set(sys.modules)
    hparams_before = set(registry.Registries.hparams._registry)
    yield
    root = os.path.realpath(str(tmp_path)) + os.sep
    forgotten = set()
    for module in set(sys.modules) - modules_before:
        path = getattr(sys.modules[module], "__file__", None) or ""
        if os.path.realpath(path).startswith(root):
            forgotten.add(module)
            del sys.modules[module]
    hparams = registry.Registries.hparams._registry
    for name in set(hparams) - hparams_before:
        if getattr(hparams[name], "__module__", None) in forgotten:
            del hparams[name]


def test_models_page_hparams_set_in_a_usr_dir(tmp_path, forget_registrations):
    code, = python_blocks("models.md", "## Your own model or hparams set")
    # The layout the example's first line names: my_usr_dir/{__init__,my_hparams}.py.
    folder = tmp_path / "my_usr_dir"
    folder.mkdir()
    (folder / "my_hparams.py").write_text(code)
    (folder / "__init__.py").write_text("from . import my_hparams\n")
    usr_dir.import_usr_dir(str(folder))
    hp = registry.hparams("transformer_tiny_reverse")
    base = registry.hparams("transformer_tiny")
    assert (hp.batch_size, hp.learning_rate_constant, hp.learning_rate_warmup_steps) == \
        (512, 0.003, 100)
    assert hp.learning_rate_schedule == "constant*linear_warmup*single_cycle_cos_decay"
    # Everything else is transformer_tiny's.
    changed = {"batch_size", "learning_rate_schedule", "learning_rate_constant",
               "learning_rate_warmup_steps"}
    assert {k: v for k, v in hp.values().items() if k not in changed} == \
        {k: v for k, v in base.values().items() if k not in changed}
    # The same settings as the README's tour and `make demo` pass with --hparams.
    with open(os.path.join(DOCS, os.pardir, "scripts", "demo.sh"), encoding="utf-8") as f:
        demo_hparams, = re.findall(r'^HPARAMS="(.*)"$', f.read(), re.M)
    assert dict(item.split("=") for item in demo_hparams.split(",")) == {
        name: str(hp.get(name)) for name in changed}
