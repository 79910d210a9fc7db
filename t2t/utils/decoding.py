"""T2T's `tensor2tensor.utils.decoding` path: the code lives in `t2t.decoding.decoding`.

This module is that module (the same object, private names and all), so
`from t2t.utils import decoding` and `from t2t.decoding import decoding` are interchangeable.
"""
import sys

from t2t.decoding import decoding as _home

sys.modules[__name__] = _home
