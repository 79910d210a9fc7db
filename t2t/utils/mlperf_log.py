"""T2T's `tensor2tensor.utils.mlperf_log` path: the code lives in `t2t.core.mlperf_log`.

This module is that module (the same object, private names and all).
"""
import sys

from t2t.core import mlperf_log as _home

sys.modules[__name__] = _home
