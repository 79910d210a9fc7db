"""T2T's `tensor2tensor.utils.usr_dir` path: the code lives in `t2t.core.usr_dir`.

This module is that module (the same object, private names and all), so
`from t2t.utils import usr_dir` and `from t2t.core import usr_dir` are interchangeable.
"""
import sys

from t2t.core import usr_dir as _home

sys.modules[__name__] = _home
