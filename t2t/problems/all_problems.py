"""T2T's `data_generators/all_problems.py`: importing it registers every built-in Problem.

    from t2t.problems import all_problems
    all_problems.import_modules(all_problems.ALL_MODULES)

The list itself lives in `t2t.core.builtins.BUILTIN_MODULES["problems"]`.
"""
from t2t.core import builtins

ALL_MODULES = list(builtins.BUILTIN_MODULES["problems"])
MODULES = ALL_MODULES


def import_modules(modules=None):
    """Import `modules` (default: every built-in problem module)."""
    builtins.import_modules(ALL_MODULES if modules is None else modules)


import_modules()
