"""Question-answering NLI (GLUE's QNLI; T2T 1.15.7's `qnli`).

    t2t-datagen --problem=question_nli --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads GLUE's `QNLI.zip` into --tmp_dir (T2T's Firebase URL) and extracts `QNLI/`, whose
`train.tsv` and `dev.tsv` hold an `index<TAB>question<TAB>sentence<TAB>label` header and then
one row each. A row is one example `{"inputs": question $ sentence + [EOS], "targets": [label]}`,
labels `not_entailment` (0) / `entailment` (1); the vocabulary is
`vocab.question_nli.32768.subwords`. A `QNLI` folder or `QNLI.zip` in --tmp_dir is used as it is.
"""
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import text_encoder
from t2t.problems import glue
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

EOS = text_encoder.EOS


@registry.register_problem
class QuestionNLI(glue.IndexedPairProblem):
    """Question Answering NLI classification problems."""

    # Link to data from GLUE: https://gluebenchmark.com/tasks (T2T's; a subclass or
    # instance may point it elsewhere).
    _QNLI_URL = ("https://firebasestorage.googleapis.com/v0/b/"
                 "mtl-sentence-representations.appspot.com/o/"
                 "data%2FQNLI.zip?alt=media&token=c24cad61-f2df-"
                 "4f04-9ab6-aa576fa829d0")
    CLASS_LABELS = ("not_entailment", "entailment")
    APPROX_VOCAB_SIZE = 2**15
    TRAIN_SHARDS = 100
    ZIP_NAME, DATA_DIR = "QNLI.zip", "QNLI"

    def _corpus_url(self):
        return self._QNLI_URL


@registry.register_problem
class QuestionNLICharacters(text2text.CharactersMixin, QuestionNLI):
    """Question-Answering NLI classification problems, character level."""
    CHARACTERS_TASK_ID = spaces.TaskID.EN_NLI
