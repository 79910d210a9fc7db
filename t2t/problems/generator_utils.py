"""T2T's `tensor2tensor.data_generators.generator_utils` path: the code lives in `t2t.data.generator_utils`.

This module is that module (the same object, private names and all), so
`from t2t.problems import generator_utils` and `from t2t.data import generator_utils` are interchangeable.
"""
import sys

from t2t.data import generator_utils as _home

sys.modules[__name__] = _home
