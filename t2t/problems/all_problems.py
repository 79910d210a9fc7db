"""T2T's `data_generators/all_problems.py` (importing it registers every built-in Problem),
and T2T's top-level `tensor2tensor/problems.py`: `problem(name)` and `available()`.

    from t2t.problems import all_problems
    all_problems.import_modules(all_problems.ALL_MODULES)

The list itself lives in `t2t.core.builtins.BUILTIN_MODULES["problems"]`.
"""
from t2t.core import builtins
from t2t.core import registry

ALL_MODULES = list(builtins.BUILTIN_MODULES["problems"])
MODULES = ALL_MODULES


def import_modules(modules=None):
    """Import `modules` (default: every built-in problem module)."""
    builtins.import_modules(ALL_MODULES if modules is None else modules)


import_modules()


def problem(name):
    """The registered problem `name` (T2T's `tensor2tensor.problems.problem`).

        problem("algorithmic_reverse_binary40_test").name   # same name back
    """
    return registry.problem(name)


def available():
    """The registered problem names (T2T's `tensor2tensor.problems.available`)."""
    return registry.list_base_problems()
