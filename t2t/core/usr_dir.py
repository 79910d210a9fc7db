"""Import a user's directory of registrations (`--t2t_usr_dir`).

    import_usr_dir("~/my_t2t")   # imports ~/my_t2t as the package "my_t2t"

The folder is imported as a package, so its `__init__.py` must import the modules
that hold its `@registry.register_*` decorators (as in T2T). An exception raised
by the user's own code is not caught: it surfaces with its real traceback, which
is what T2T users needed when they saw "never registered" instead.
"""
import importlib
import os
import sys
import traceback

from t2t.core import registry
from t2t.core.errors import UserCodeError, UserError

_T2T_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_IMPORTLIB_ROOT = os.path.dirname(os.path.abspath(importlib.__file__)) + os.sep


class UsrDirError(UserError):
    """The usr dir itself is unusable (missing, not a folder); not the user's code failing."""


def import_usr_dir(usr_dir):
    """Import `usr_dir` as a Python package; a no-op for an empty value."""
    if not usr_dir:
        return None
    dir_path = os.path.abspath(os.path.expanduser(usr_dir).rstrip("/"))
    if not os.path.isdir(dir_path):
        raise UsrDirError("--t2t_usr_dir %r is not a folder; give the folder that holds your "
                          "__init__.py" % usr_dir)
    containing_dir, module_name = os.path.split(dir_path)
    if not module_name.isidentifier():
        raise UsrDirError("--t2t_usr_dir %r: the folder name %r must be a valid Python package "
                          "name (letters, digits, underscores)" % (usr_dir, module_name))
    if not os.path.exists(os.path.join(dir_path, "__init__.py")):
        raise UsrDirError("--t2t_usr_dir %r has no __init__.py; add one that imports your "
                          "problem and model modules" % usr_dir)
    if module_name in sys.modules:
        existing = getattr(sys.modules[module_name], "__file__", None) or ""
        if os.path.dirname(os.path.abspath(existing)) == dir_path:
            return sys.modules[module_name]
        raise UsrDirError("--t2t_usr_dir %r: a module named %r is already imported from %s; "
                          "rename your folder" % (usr_dir, module_name, existing))
    sys.path.insert(0, containing_dir)
    try:
        return import_user_module(module_name, "--t2t_usr_dir=%s" % usr_dir)
    finally:
        sys.path.remove(containing_dir)


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
    try:
        return importlib.import_module(name)
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
