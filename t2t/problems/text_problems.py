"""T2T's `data_generators/text_problems.py` path: the text Problem base classes and iterators
(`text2text`), `DistributedText2TextProblem` (`text2text_distributed`) and the problems over
a user's own files (`text_problems_tmpdir`).

    from t2t.problems import text_problems
    class MyProblem(text_problems.Text2TextProblem): ...
"""
from t2t.problems import text2text as _text2text
from t2t.problems.text2text import *  # noqa: F401,F403
from t2t.problems.text2text_distributed import DistributedText2TextProblem  # noqa: F401
from t2t.problems.text_problems_tmpdir import (  # noqa: F401
    Text2TextRemotedir, Text2textTmpdir, Text2textTmpdirTokens, Text2textTmpdirTsv)


def __getattr__(name):
    # Private helpers T2T's own code and tests reach for (`text_problems._foo`).
    return getattr(_text2text, name)
