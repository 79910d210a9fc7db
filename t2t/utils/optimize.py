"""T2T's `tensor2tensor.utils.optimize` path: the code lives in `t2t.optim.optimize`.

This module is that module (the same object, private names and all), so
`from t2t.utils import optimize` and `from t2t.optim import optimize` are interchangeable.
"""
import sys

from t2t.optim import optimize as _home

sys.modules[__name__] = _home
