"""T2T's `tensor2tensor.utils.t2t_model` path: the code lives in `t2t.model.t2t_model`.

This module is that module (the same object, private names and all), so
`from t2t.utils import t2t_model` and `from t2t.model import t2t_model` are interchangeable.
"""
import sys

from t2t.model import t2t_model as _home

sys.modules[__name__] = _home
