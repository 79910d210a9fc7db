"""T2T's `tensor2tensor.utils.rouge` path: the code lives in `t2t.evaluation.rouge`.

This module is that module (the same object, private names and all), so
`from t2t.utils import rouge` and `from t2t.evaluation import rouge` are interchangeable.
"""
import sys

from t2t.evaluation import rouge as _home

sys.modules[__name__] = _home
