"""`usr_dir.import_usr_dir`: the user's folder of registrations (--t2t_usr_dir).

Each test builds its plugin folder in tmp_path under a unique package name, so tests
neither share `sys.modules` entries nor registry names.
"""
import importlib
import itertools
import os
import sys

import pytest

from t2t.core import errors, registry, usr_dir
# Imported by a test's user code: loaded here so `cleanup` never forgets a t2t module.
from t2t.layers import common_layers  # noqa: F401  pylint: disable=unused-import

_COUNTER = itertools.count()


def make_usr_dir(root, files, name=None):
    """Write a package folder `root/<name>` holding `files` ({relative path: source})."""
    name = name or "usr_dir_test_%d_%d" % (os.getpid(), next(_COUNTER))
    folder = os.path.join(str(root), name)
    os.makedirs(folder)
    for relative, source in files.items():
        with open(os.path.join(folder, relative), "w", encoding="utf-8") as f:
            f.write(source)
    return folder, name


@pytest.fixture
def cleanup():
    """Forget the test's packages and registrations afterwards."""
    modules_before = set(sys.modules)
    problems_before = set(registry.Registries.problems._registry)
    hparams_before = set(registry.Registries.hparams._registry)
    yield
    for module in set(sys.modules) - modules_before:
        del sys.modules[module]
    for name in set(registry.Registries.problems._registry) - problems_before:
        del registry.Registries.problems._registry[name]
    for name in set(registry.Registries.hparams._registry) - hparams_before:
        del registry.Registries.hparams._registry[name]


_HPARAMS_MODULE = '''
from t2t.core.hparam import HParams
from t2t.utils import registry


@registry.register_hparams
def {fn}():
    return HParams(hidden_size=7)
'''


def test_empty_value_is_a_no_op():
    assert usr_dir.import_usr_dir("") is None
    assert usr_dir.import_usr_dir(None) is None


def test_import_registers_the_users_things_and_restores_sys_path(tmp_path, cleanup):
    fn = "usr_hparams_%d" % next(_COUNTER)
    folder, name = make_usr_dir(tmp_path, {
        "__init__.py": "from . import my_hparams\n",
        "my_hparams.py": _HPARAMS_MODULE.format(fn=fn)})
    path_before = list(sys.path)
    module = usr_dir.import_usr_dir(folder + "/")  # a trailing slash is fine
    # A private package name, unique per folder; the folder name is an alias of it.
    assert module.__name__ == usr_dir.private_module_name(folder)
    assert module.__name__.startswith("_t2t_usr_dir_%s_" % name)
    assert importlib.import_module(name) is module
    assert importlib.import_module(name + ".my_hparams") is module.my_hparams
    assert sys.path == path_before
    assert registry.hparams(fn).hidden_size == 7
    # A second import (e.g. by a datagen worker) returns the module, registering nothing twice.
    assert usr_dir.import_usr_dir(folder) is module


def test_tilde_is_expanded(tmp_path, monkeypatch, cleanup):
    monkeypatch.setenv("HOME", str(tmp_path))
    _, name = make_usr_dir(tmp_path, {"__init__.py": "VALUE = 42\n"})
    assert usr_dir.import_usr_dir("~/" + name).VALUE == 42


@pytest.mark.parametrize("kind", ["missing", "file", "no_init", "bad_name"])
def test_unusable_folder_is_a_one_line_user_error(tmp_path, kind):
    if kind == "missing":
        path, expected = str(tmp_path / "nope"), "is not a folder"
    elif kind == "file":
        (tmp_path / "plain.py").write_text("x = 1\n")
        path, expected = str(tmp_path / "plain.py"), "is not a folder"
    elif kind == "no_init":
        (tmp_path / "pkg").mkdir()
        path, expected = str(tmp_path / "pkg"), "has no __init__.py"
    else:
        (tmp_path / "my-problems").mkdir()
        (tmp_path / "my-problems" / "__init__.py").write_text("")
        path, expected = str(tmp_path / "my-problems"), "valid Python package name"
    with pytest.raises(usr_dir.UsrDirError, match=expected) as info:
        usr_dir.import_usr_dir(path)
    assert isinstance(info.value, errors.UserError)
    assert "\n" not in str(info.value)
    assert path in str(info.value)


def test_two_folders_of_one_name_load_as_two_packages(tmp_path, cleanup):
    folder, name = make_usr_dir(tmp_path / "a", {"__init__.py": "WHERE = 'a'\n"})
    first = usr_dir.import_usr_dir(folder)
    other, _ = make_usr_dir(tmp_path / "b", {"__init__.py": "WHERE = 'b'\n"}, name=name)
    second = usr_dir.import_usr_dir(other)
    assert (first.WHERE, second.WHERE) == ("a", "b") and first is not second
    assert importlib.import_module(name) is first  # the folder name stays the first one's


def test_a_folder_named_t2t_loads_with_its_relative_imports(tmp_path, cleanup):
    import t2t
    fn = "usr_hparams_%d" % next(_COUNTER)
    folder, _ = make_usr_dir(tmp_path, {
        "__init__.py": "from . import my_hparams\nfrom .my_hparams import %s\n" % fn,
        "my_hparams.py": _HPARAMS_MODULE.format(fn=fn)}, name="t2t")
    module = usr_dir.import_usr_dir(folder)
    assert registry.hparams(fn).hidden_size == 7
    assert module.my_hparams.__name__ == module.__name__ + ".my_hparams"
    assert sys.modules["t2t"] is t2t  # t2t itself is untouched


def test_user_code_imports_its_own_modules_by_folder_name(tmp_path, cleanup):
    # T2T put the folder's parent on sys.path: `from my_usr_dir import x` worked. Both
    # spellings give the one module (registering nothing twice).
    fn = "usr_hparams_%d" % next(_COUNTER)
    name = "usr_dir_abs_%d_%d" % (os.getpid(), next(_COUNTER))
    folder, _ = make_usr_dir(tmp_path, {
        "__init__.py": "from . import my_hparams\nfrom %s import helpers\n" % name,
        "helpers.py": "from %s import my_hparams\nFN = my_hparams.%s\n" % (name, fn),
        "my_hparams.py": _HPARAMS_MODULE.format(fn=fn)}, name=name)
    module = usr_dir.import_usr_dir(folder)
    assert module.helpers.FN is module.my_hparams.__dict__[fn]
    assert importlib.import_module(name + ".helpers") is module.helpers


def _no_t2t_or_importlib_frames(details):
    assert "importlib" not in details and "/t2t/core/" not in details, details


def test_syntax_error_in_user_code_is_one_line_and_the_users_lines(tmp_path, cleanup):
    folder, name = make_usr_dir(tmp_path, {
        "__init__.py": "from . import broken_problem\n",
        "broken_problem.py": "def oops(:\n    pass\n"})
    path_before = list(sys.path)
    with pytest.raises(errors.UserCodeError) as info:
        usr_dir.import_usr_dir(folder)
    assert str(info.value) == ("--t2t_usr_dir=%s: module %s has a syntax error; fix your "
                               "code (its traceback follows)" % (folder, name))
    assert 'broken_problem.py", line 1' in info.value.details
    assert "def oops(:" in info.value.details and "SyntaxError" in info.value.details
    _no_t2t_or_importlib_frames(info.value.details)
    assert isinstance(info.value.__cause__, SyntaxError)
    assert sys.path == path_before


def test_import_error_inside_user_code_shows_the_users_frame(tmp_path, cleanup):
    folder, name = make_usr_dir(tmp_path, {
        "__init__.py": "import t2t_no_such_dependency_xyz\n"})
    with pytest.raises(errors.UserCodeError, match="module %s failed on import with "
                       "ModuleNotFoundError" % name) as info:
        usr_dir.import_usr_dir(folder)
    assert info.value.details.splitlines() == [
        "Traceback (most recent call last):",
        '  File "%s/__init__.py", line 1, in <module>' % folder,
        "    import t2t_no_such_dependency_xyz",
        "ModuleNotFoundError: No module named 't2t_no_such_dependency_xyz'"]


def test_exception_raised_by_user_code_keeps_only_the_users_frames(tmp_path, cleanup):
    folder, _ = make_usr_dir(tmp_path, {
        "__init__.py": "from . import bad\n",
        "bad.py": "raise RuntimeError('boom from user code')\n"})
    with pytest.raises(errors.UserCodeError, match="RuntimeError") as info:
        usr_dir.import_usr_dir(folder)
    details = info.value.details
    assert '__init__.py", line 1' in details and 'bad.py", line 1' in details
    assert details.endswith("RuntimeError: boom from user code\n")
    _no_t2t_or_importlib_frames(details)


def test_cli_prints_the_line_then_the_users_traceback(tmp_path, cleanup, capsys):
    from t2t.bin import cli
    module = "usr_module_test_%d" % next(_COUNTER)
    (tmp_path / (module + ".py")).write_text("x = 1\nimport t2t_no_such_dependency_xyz\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(SystemExit) as info:
            cli.run_main(lambda argv: usr_dir.import_user_modules([module]), "t2t-trainer",
                         argv=["t2t-trainer"])
    finally:
        sys.path.remove(str(tmp_path))
    lines = capsys.readouterr().err.splitlines()
    assert info.value.code == 2
    assert lines == [
        "t2t-trainer: error: --module_import=%s: module %s failed on import with "
        "ModuleNotFoundError; fix your code (its traceback follows)" % (module, module),
        "Traceback (most recent call last):",
        '  File "%s/%s.py", line 2, in <module>' % (tmp_path, module),
        "    import t2t_no_such_dependency_xyz",
        "ModuleNotFoundError: No module named 't2t_no_such_dependency_xyz'"]


def test_duplicate_registration_names_the_first_registrant(tmp_path, cleanup):
    fn = "usr_hparams_%d" % next(_COUNTER)
    first, first_name = make_usr_dir(tmp_path / "a", {
        "__init__.py": "from . import h\n", "h.py": _HPARAMS_MODULE.format(fn=fn)})
    second, _ = make_usr_dir(tmp_path / "b", {
        "__init__.py": "from . import h\n", "h.py": _HPARAMS_MODULE.format(fn=fn)})
    usr_dir.import_usr_dir(first)
    with pytest.raises(registry.DuplicateNameError, match="already registered") as info:
        usr_dir.import_usr_dir(second)
    assert fn in str(info.value)
    assert usr_dir.private_module_name(first) + ".h" in str(info.value)
    assert first_name in str(info.value)


def test_t2t_code_imports_tensor2tensor_and_a_missing_name_names_the_closest(tmp_path,
                                                                            cleanup):
    fn = "usr_hparams_%d" % next(_COUNTER)
    folder, name = make_usr_dir(tmp_path, {
        "__init__.py": "from . import my_hparams\n",
        "my_hparams.py": _HPARAMS_MODULE.format(fn=fn).replace(
            "from t2t.utils import registry", "from tensor2tensor.utils import registry")})
    usr_dir.import_usr_dir(folder)
    assert registry.hparams(fn).hidden_size == 7  # tensor2tensor's registry is t2t's
    misspelt, _ = make_usr_dir(tmp_path, {
        "__init__.py": "from tensor2tensor.layers.common_layers import dense_relu_densee\n"})
    with pytest.raises(errors.UserCodeError, match="with ImportError") as info:
        usr_dir.import_usr_dir(misspelt)
    assert info.value.details.splitlines()[-1].startswith(
        "ImportError: cannot import name 'dense_relu_densee': t2t has no "
        "common_layers.dense_relu_densee (module t2t.layers.common_layers); closest: "
        "common_layers.dense_relu_dense")
