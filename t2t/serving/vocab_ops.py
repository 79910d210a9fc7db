"""The in-graph encoders' former path: the code lives in `t2t.encoders.graph_ops`.

This module is that module (the same object), so code written against
`t2t.serving.vocab_ops` keeps working; t2t's own packages import `t2t.encoders.graph_ops`.
"""
import sys

from t2t.encoders import graph_ops as _home

sys.modules[__name__] = _home
