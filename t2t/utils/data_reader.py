"""T2T's `tensor2tensor.utils.data_reader` path: the code lives in `t2t.data.data_reader`.

This module is that module (the same object, private names and all), so
`from t2t.utils import data_reader` and `from t2t.data import data_reader` are interchangeable.
"""
import sys

from t2t.data import data_reader as _home

sys.modules[__name__] = _home
