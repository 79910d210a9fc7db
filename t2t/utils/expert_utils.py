"""T2T's `tensor2tensor.utils.expert_utils` path: the code lives in `t2t.layers.expert_utils`.

This module is that module (the same object, private names and all).
"""
import sys

from t2t.layers import expert_utils as _home

sys.modules[__name__] = _home
