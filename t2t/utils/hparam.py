"""T2T's `tensor2tensor.utils.hparam` path: the code lives in `t2t.core.hparam`.

This module is that module (the same object, private names and all), so
`from t2t.utils import hparam` and `from t2t.core import hparam` are interchangeable.
"""
import sys

from t2t.core import hparam as _home

sys.modules[__name__] = _home
