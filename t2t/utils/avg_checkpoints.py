"""T2T's `tensor2tensor.utils.avg_checkpoints` path: the code lives in `t2t.training.avg_checkpoints`.

This module is that module (the same object, private names and all), so
`from t2t.utils import avg_checkpoints` and `from t2t.training import avg_checkpoints` are interchangeable.
"""
import sys

from t2t.training import avg_checkpoints as _home

sys.modules[__name__] = _home
