"""Imports every module that registers a built-in Problem.

The registry imports this module on the first problem look-up. A module whose
optional dependency is missing is skipped with a warning rather than breaking
every other problem.
"""
import importlib
import logging

MODULES = [
    "t2t.problems.algorithmic",
    "t2t.problems.algorithmic_math",
    "t2t.problems.text_problems",
    "t2t.problems.masked_lm",
    "t2t.problems.translate_ende",
]

_logger = logging.getLogger(__name__)


def import_modules(modules=None):
    for module in modules or MODULES:
        try:
            importlib.import_module(module)
        except ImportError as error:
            missing = getattr(error, "name", "") or ""
            if missing.startswith("t2t"):
                raise
            _logger.warning("skipped %s: %s", module, error)


import_modules()
