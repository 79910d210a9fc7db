"""T2T's `tensor2tensor.data_generators.tokenizer` path: the code lives in `t2t.encoders.tokenizer`.

This module is that module (the same object, private names and all), so
`from t2t.problems import tokenizer` and `from t2t.encoders import tokenizer` are interchangeable.
"""
import sys

from t2t.encoders import tokenizer as _home

sys.modules[__name__] = _home
