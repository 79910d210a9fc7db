"""T2T's `tensor2tensor.utils.registry` path: the code lives in `t2t.core.registry`.

This module is that module (the same object, private names and all), so
`from t2t.utils import registry` and `from t2t.core import registry` are interchangeable.
"""
import sys

from t2t.core import registry as _home

sys.modules[__name__] = _home
