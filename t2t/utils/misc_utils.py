"""T2T's `tensor2tensor.utils.misc_utils` path: name-case helpers from `t2t.core.registry`
and `pprint_hparams` from `t2t.core.hparam`.

    from t2t.utils import misc_utils
    misc_utils.camelcase_to_snakecase("LSTMSeq2seq")   # "lstm_seq2seq"
"""
from t2t.core.hparam import pprint_hparams  # noqa: F401
from t2t.core.registry import camelcase_to_snakecase, snakecase_to_camelcase  # noqa: F401
