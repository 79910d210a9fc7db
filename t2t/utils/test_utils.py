"""T2T's `tensor2tensor.utils.test_utils` path: the code lives in `t2t.core.test_utils`.

This module is that module (the same object, private names and all), so
`from t2t.utils import test_utils` and `from t2t.core import test_utils` are interchangeable.
"""
import sys

from t2t.core import test_utils as _home

sys.modules[__name__] = _home
