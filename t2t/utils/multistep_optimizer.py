"""T2T's `tensor2tensor.utils.multistep_optimizer` path: the code lives in `t2t.optim.multistep_optimizer`.

This module is that module (the same object, private names and all), so
`from t2t.utils import multistep_optimizer` and `from t2t.optim import multistep_optimizer` are interchangeable.
"""
import sys

from t2t.optim import multistep_optimizer as _home

sys.modules[__name__] = _home
