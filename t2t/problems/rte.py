"""Recognizing Textual Entailment (GLUE's RTE; T2T 1.15.7's `rte`).

    t2t-datagen --problem=rte --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads GLUE's `RTE.zip` into --tmp_dir (T2T's Firebase URL) and extracts `RTE/`, whose
`train.tsv` (2,490 pairs) and `dev.tsv` (277) hold an
`index<TAB>sentence1<TAB>sentence2<TAB>label` header and then one row each. A row is one
example `{"inputs": sentence1 $ sentence2 + [EOS], "targets": [label]}`, labels
`not_entailment` (0) / `entailment` (1), one training shard; the vocabulary is
`vocab.rte.8192.subwords`. An `RTE` folder or `RTE.zip` in --tmp_dir is used as it is.
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
class RTE(glue.IndexedPairProblem):
    """Recognizing Textual Entailment classification problems."""

    # Link to data from GLUE: https://gluebenchmark.com/tasks (T2T's; a subclass or
    # instance may point it elsewhere).
    _RTE_URL = ("https://firebasestorage.googleapis.com/v0/b/"
                "mtl-sentence-representations.appspot.com/o/"
                "data%2FRTE.zip?alt=media&token=5efa7e85-a0bb-"
                "4f19-8ea2-9e1840f077fb")
    CLASS_LABELS = ("not_entailment", "entailment")
    APPROX_VOCAB_SIZE = 2**13  # 8k vocab suffices for this small dataset.
    TRAIN_SHARDS = 1
    ZIP_NAME, DATA_DIR = "RTE.zip", "RTE"

    def _corpus_url(self):
        return self._RTE_URL


@registry.register_problem
class RTECharacters(text2text.CharactersMixin, RTE):
    """Recognizing Textual Entailment classification problems, character level."""
    CHARACTERS_TASK_ID = spaces.TaskID.EN_NLI
