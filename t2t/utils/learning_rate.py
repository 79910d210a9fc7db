"""T2T's `tensor2tensor.utils.learning_rate` path: the code lives in `t2t.optim.learning_rate`.

This module is that module (the same object, private names and all), so
`from t2t.utils import learning_rate` and `from t2t.optim import learning_rate` are interchangeable.
"""
import sys

from t2t.optim import learning_rate as _home

sys.modules[__name__] = _home
