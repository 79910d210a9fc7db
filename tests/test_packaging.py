"""pyproject.toml and what it promises: the distribution name users install, the extras
that error messages and docs name, the `test` extra holding the optional ones, and the
console scripts (scripts/check_package.sh builds and installs the wheel itself)."""
import ast
import glob
import importlib.metadata
import os
import re

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
with open(os.path.join(ROOT, "pyproject.toml"), "rb") as _f:
    PROJECT = tomllib.load(_f)["project"]
DIST = PROJECT["name"]
EXTRAS = PROJECT["optional-dependencies"]


def test_distribution_is_t2t_toolkit_and_the_installed_one_matches():
    # "t2t" on the package index is another project; the import name stays t2t.
    assert DIST == "t2t-toolkit"
    installed = importlib.metadata.distribution(DIST)
    assert installed.version == PROJECT["version"]
    assert {ep.name: ep.value for ep in installed.entry_points
            if ep.group == "console_scripts"} == PROJECT["scripts"]
    assert (installed.read_text("top_level.txt") or "t2t").split() == ["t2t"]


def test_test_extra_holds_every_optional_extra():
    for extra in ("hub", "tfds", "tune", "beam", "ctranslate2", "serve"):
        missing = set(EXTRAS[extra]) - set(EXTRAS["test"])
        assert not missing, "the test extra lacks %s's %s" % (extra, sorted(missing))
    # Tools for docs and releases stay out of the base requirements.
    base = " ".join(PROJECT["dependencies"])
    for tool in ("mkdocs", "build", "twine", "pytest"):
        assert not re.search(r"(^|\s)%s\b" % tool, base), tool


def _source_files():
    for pattern in ("t2t/**/*.py", "README.md", "docs/*.md", "Makefile", "scripts/*"):
        yield from glob.glob(os.path.join(ROOT, pattern), recursive=True)


def test_every_extra_named_for_users_is_this_distributions():
    # e.g. the error "pip install 't2t-toolkit[tune]'": a bare "t2t[tune]" would install
    # the other project.
    named = []
    for path in _source_files():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name, extras in re.findall(r"(?<![\w./-])([\w.-]*t2t[\w.-]*)\[([\w, -]+)\]", text):
            named.append((os.path.relpath(path, ROOT), name, extras))
        for match in re.findall(r"pip install (?:-\w+ )*['\"]?(t2t[\w.-]*)", text):
            assert match == DIST, (path, "pip install " + match)
    assert named, "no extras named anywhere"
    for path, name, extras in named:
        assert name == DIST, (path, "%s[%s]" % (name, extras))
        unknown = {e.strip() for e in extras.split(",")} - set(EXTRAS)
        assert not unknown, (path, unknown)


def test_console_scripts_name_functions_that_exist():
    for script, target in PROJECT["scripts"].items():
        module, function = target.split(":")
        path = os.path.join(ROOT, *module.split(".")) + ".py"
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        assert function in defined, (script, target)
