"""Imports every module that registers a built-in model or hparams set.

The registry imports this module on the first model or hparams look-up. A module whose
optional dependency is missing is skipped with a warning rather than breaking
every other model.
"""
import importlib
import logging

MODULES = [
    "t2t.layers.common_hparams",
    "t2t.models.basic",
    "t2t.models.lstm",
    "t2t.models.transformer",
    "t2t.models.transformer_encoder_mlm",
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
