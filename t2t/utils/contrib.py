"""T2T's `tensor2tensor.utils.contrib` path: the code lives in `t2t.core.contrib`.

This module is that module (the same object), so `from t2t.utils import contrib` and
`from t2t.core import contrib` are interchangeable.
"""
import sys

from t2t.core import contrib as _home

sys.modules[__name__] = _home
