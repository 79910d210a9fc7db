"""T2T's `tensor2tensor.utils.flags` path: the code lives in `t2t.bin.flags`.

This module is that module (the same object, private names and all), so
`from t2t.utils import flags` and `from t2t.bin import flags` are interchangeable.
"""
import sys

from t2t.bin import flags as _home

sys.modules[__name__] = _home
