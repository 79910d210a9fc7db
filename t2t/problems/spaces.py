"""The ids a Problem names its splits, input/target spaces and tasks with (T2T 1.15.7's).

`t2t.problems.problem` re-exports them, their T2T home:
`problem.SpaceID.EN_TOK == 3`, `problem.DatasetSplit.EVAL == "eval"`.
"""
from t2t.core.modes import ModeKeys

_TRAIN = ModeKeys.TRAIN
_EVAL = ModeKeys.EVAL


class DatasetSplit:
    """Names of the data splits; also the mode names of `ModeKeys`."""
    TRAIN = _TRAIN  # "train"
    EVAL = _EVAL    # "eval"; its files are named "-dev"
    TEST = "test"


class SpaceID:
    """Input and target space ids (T2T 1.15.7's integers)."""
    GENERIC = 0          # generic / unknown output space (default)
    IMAGE_LABEL = 1
    EN_CHR = 2           # English characters
    EN_TOK = 3           # English tokens
    EN_BPE_TOK = 4       # English BPE tokens
    FR_CHR = 5
    FR_TOK = 6
    DE_CHR = 7
    DE_TOK = 8
    DE_BPE_TOK = 9
    DIGIT_0 = 10         # digit cipher lexicon 0
    DIGIT_1 = 11         # digit cipher lexicon 1
    AUDIO_WAV = 12
    AUDIO_SPECTRAL = 13
    PARSE_CHR = 14
    PARSE_TOK = 15
    ZH_TOK = 16
    ICE_CHAR = 17
    ICE_TOK = 18
    ICE_PARSE_TOK = 19
    MK_TOK = 20
    CS_TOK = 21
    CS_CHR = 22
    DNA = 23             # genetic bases (ACTG)
    REAL = 24            # real numbers
    IMAGE = 25
    PEPTIDE = 26
    PY_TOK = 27
    CPP_TOK = 28
    STROKES = 29
    PICKLED_PYTHON = 30


class TaskID:
    """Problem-specific task ids (T2T's)."""
    EN_CHR = 2           # English characters
    EN_CHR_SENT = 3      # English characters sentiment
    EN_PR_HYP = 4        # English premise-hypothesis pair
    EN_NLI = 5
    COLA = 6
    EN_Q_CONT = 7        # English question-context pair
    EN_SIM = 8
    EN_SENT_PAIR = 9
    THREE_CL_NLI = 10
