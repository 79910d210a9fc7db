"""T2T's `tensor2tensor.utils.adafactor` path: the code lives in `t2t.optim.adafactor`.

This module is that module (the same object, private names and all), so
`from t2t.utils import adafactor` and `from t2t.optim import adafactor` are interchangeable.
"""
import sys

from t2t.optim import adafactor as _home

sys.modules[__name__] = _home
