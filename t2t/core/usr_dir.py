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

from t2t.core.errors import UserError


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
        return importlib.import_module(module_name)
    finally:
        sys.path.remove(containing_dir)
