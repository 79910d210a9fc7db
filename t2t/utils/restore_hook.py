"""T2T's `tensor2tensor.utils.restore_hook` path: the code lives in
`t2t.training.restore_hook`.

This module is that module (the same object, private names and all).
"""
import sys

from t2t.training import restore_hook as _home

sys.modules[__name__] = _home
