"""T2T's `tensor2tensor.utils.trainer_lib` path: the code lives in `t2t.training.trainer_lib`.

This module is that module (the same object, private names and all), so
`from t2t.utils import trainer_lib` and `from t2t.training import trainer_lib` are interchangeable.
"""
import sys

from t2t.training import trainer_lib as _home

sys.modules[__name__] = _home
