"""T2T's `tensor2tensor.data_generators.text_encoder` path: the code lives in `t2t.encoders.text_encoder`.

This module is that module (the same object, private names and all), so
`from t2t.problems import text_encoder` and `from t2t.encoders import text_encoder` are interchangeable.
"""
import sys

from t2t.encoders import text_encoder as _home

sys.modules[__name__] = _home
