"""T2T's `tensor2tensor.utils.bleu_hook` path: the code lives in `t2t.evaluation.bleu_hook`.

This module is that module (the same object, private names and all), so
`from t2t.utils import bleu_hook` and `from t2t.evaluation import bleu_hook` are interchangeable.
"""
import sys

from t2t.evaluation import bleu_hook as _home

sys.modules[__name__] = _home
