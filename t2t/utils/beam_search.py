"""T2T's `tensor2tensor.utils.beam_search` path: the code lives in `t2t.search.beam_search`.

This module is that module (the same object, private names and all), so
`from t2t.utils import beam_search` and `from t2t.search import beam_search` are interchangeable.
"""
import sys

from t2t.search import beam_search as _home

sys.modules[__name__] = _home
