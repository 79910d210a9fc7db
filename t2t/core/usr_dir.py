"""Import a user's directory of registrations (`--t2t_usr_dir`).

    import_usr_dir("~/my_t2t")   # imports ~/my_t2t as a package; returns it

The folder is imported as a package, so its `__init__.py` must import the modules
that hold its `@registry.register_*` decorators (as in T2T). Its own name is a private,
unique one (`_t2t_usr_dir_my_t2t_<hash of the path>`), so a folder may be called anything,
`t2t` included, and relative imports (`from . import my_problem`) work; its folder name is
an alias of that package too (`from my_t2t import my_problem`, as T2T's `sys.path`
insertion allowed), unless a module of that name is already imported (`t2t`). Importing
the same folder again returns the same module. Code in it that imports `tensor2tensor.*`
is served by t2t (`t2t.core.t2t_import_alias`), and a module of it that calls TensorFlow 1.x
names TensorFlow 2 lacks (`tf.flags`, `tf.logging`, `tf.gfile`, `tf.app`) runs from its text
rewritten in memory by t2t-port's rules (`t2t.core.tf1_import`; its file is not changed).

An exception raised by the user's own code is not caught: it surfaces with its real
traceback, which is what T2T users needed when they saw "never registered" instead.
"""
import hashlib
import importlib
import importlib.util
import os
import sys
import traceback

from t2t.core import module_alias
from t2t.core import registry
from t2t.core import t2t_import_alias
from t2t.core import tf1_import
from t2t.core.errors import UserCodeError, UserError

_T2T_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_IMPORTLIB_ROOT = os.path.dirname(os.path.abspath(importlib.__file__)) + os.sep

# folder name -> the private package name it aliases (the first folder of that name).
_FOLDER_ALIASES = {}


class UsrDirError(UserError):
    """The usr dir itself is unusable (missing, not a folder); not the user's code failing."""


def private_module_name(dir_path):
    """The package name a usr dir is imported under: unique per folder, stable per path.

        private_module_name("/home/me/t2t")   # "_t2t_usr_dir_t2t_<10 hex digits>"
    """
    digest = hashlib.sha1(dir_path.encode("utf-8")).hexdigest()[:10]
    return "_t2t_usr_dir_%s_%s" % (os.path.basename(dir_path), digest)


def import_usr_dir(usr_dir):
    """Import `usr_dir` as a Python package; a no-op for an empty value."""
    if not usr_dir:
        return None
    dir_path = os.path.abspath(os.path.expanduser(usr_dir).rstrip("/"))
    if not os.path.isdir(dir_path):
        raise UsrDirError("--t2t_usr_dir %r is not a folder; give the folder that holds your "
                          "__init__.py" % usr_dir)
    containing_dir, folder_name = os.path.split(dir_path)
    if not folder_name.isidentifier():
        raise UsrDirError("--t2t_usr_dir %r: the folder name %r must be a valid Python package "
                          "name (letters, digits, underscores)" % (usr_dir, folder_name))
    init_path = os.path.join(dir_path, "__init__.py")
    if not os.path.exists(init_path):
        raise UsrDirError("--t2t_usr_dir %r has no __init__.py; add one that imports your "
                          "problem and model modules" % usr_dir)
    name = private_module_name(dir_path)
    if name in sys.modules:
        return sys.modules[name]
    t2t_import_alias.install()
    _alias_folder_name(folder_name, name)
    # As T2T: the folder's siblings are importable while it is imported.
    sys.path.insert(0, containing_dir)
    try:
        return _run_user_import(lambda: _load_package(name, dir_path, init_path), folder_name,
                                "--t2t_usr_dir=%s" % usr_dir)
    finally:
        sys.path.remove(containing_dir)


def _load_package(name, dir_path, init_path):
    # TF 1.x calls (`tf.flags`, `tf.logging`, ...) run through t2t-port's rules, in memory.
    spec = importlib.util.spec_from_file_location(
        name, init_path, loader=tf1_import.RewritingLoader(name, init_path),
        submodule_search_locations=[dir_path])
    tf1_import.install(name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _resolve_folder_alias(fullname):
    folder, dot, rest = fullname.partition(".")
    if folder not in _FOLDER_ALIASES:
        return None
    return [_FOLDER_ALIASES[folder] + dot + rest]


_FOLDER_FINDER = module_alias.AliasFinder(_resolve_folder_alias)


def _alias_folder_name(folder_name, name):
    """Let `import <folder_name>` give the package `name`, when nothing else has that name."""
    if folder_name in _FOLDER_ALIASES or folder_name in sys.modules:
        return
    _FOLDER_ALIASES[folder_name] = name
    _FOLDER_FINDER.install()


def _is_ours(filename):
    return (filename.startswith(_T2T_ROOT) or filename.startswith(_IMPORTLIB_ROOT) or
            filename.startswith("<frozen importlib"))


def user_traceback(error) -> str:
    """`error`'s traceback without t2t's and importlib's frames: the user's own part.

        # my_tasks.py, line 3: `import no_such_dependency`
        user_traceback(error)
        # Traceback (most recent call last):
        #   File "/home/me/my_tasks.py", line 3, in <module>
        #     import no_such_dependency
        # ModuleNotFoundError: No module named 'no_such_dependency'
    """
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not _is_ours(frame.filename)]
    lines = (["Traceback (most recent call last):\n"] + traceback.format_list(frames)
             if frames else [])
    lines += traceback.format_exception_only(type(error), error)
    return "".join(lines)


def import_user_module(name, flag):
    """Import module `name` given by `flag` ("--module_import=my.tasks").

    A module that does not exist is a UserError; one whose own code fails (a syntax
    error, an import of its own that fails, any exception) is a UserCodeError: one line
    naming the module, with the user's frames of the traceback as its `details`.
    """
    return _run_user_import(lambda: importlib.import_module(name), name, flag)


def _run_user_import(load, name, flag):
    """`load()`, its failures mapped as `import_user_module` describes (module `name`)."""
    try:
        return load()
    except ModuleNotFoundError as error:
        if error.name and (name == error.name or name.startswith(error.name + ".")):
            raise UserError("%s: no module named %s (is it on PYTHONPATH, or installed?)"
                            % (flag, error.name)) from None
        raise _code_error(name, flag, error) from error
    except (UserError, registry.UnknownNameError, registry.DuplicateNameError):
        raise  # already one line naming the thing (a name registered twice, ...)
    except Exception as error:  # pylint: disable=broad-except  (the user's code)
        raise _code_error(name, flag, error) from error


def import_user_modules(names, flag_name="--module_import"):
    """Import each module named (seqio's --module_import: they register tasks, mixtures,
    problems), each through `import_user_module`, so a bad one is one line naming it.

        import_user_modules(["my_project.tasks"])
    """
    for name in names or ():
        if name:
            import_user_module(name, "%s=%s" % (flag_name, name))


def _code_error(name, flag, error):
    kind = "has a syntax error" if isinstance(error, SyntaxError) else (
        "failed on import with %s" % type(error).__name__)
    return UserCodeError("%s: module %s %s; fix your code (its traceback follows)"
                         % (flag, name, kind), user_traceback(error))
