"""Corpus of Linguistic Acceptability (GLUE's CoLA; T2T 1.15.7's `cola`).

    t2t-datagen --problem=cola --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads GLUE's `CoLA.zip` into --tmp_dir (T2T's Firebase URL) and extracts `CoLA/`, whose
`train.tsv` (8,551 sentences) and `dev.tsv` (1,043) have no header, one
`source<TAB>label<TAB>original mark<TAB>sentence` row each. A row is one example
`{"inputs": sentence + [EOS], "targets": [label]}`, labels `unacceptable` (0) / `acceptable`
(1); the vocabulary is `vocab.cola.8192.subwords`. A `CoLA` folder or `CoLA.zip` in --tmp_dir
is used as it is.
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
class Cola(glue.GlueClassProblem):
    """Corpus of Linguistic Acceptability classification problems."""

    # Link to data from GLUE: https://gluebenchmark.com/tasks (T2T's; a subclass or
    # instance may point it elsewhere).
    _COLA_URL = ("https://firebasestorage.googleapis.com/v0/b/"
                 "mtl-sentence-representations.appspot.com/o/"
                 "data%2FCoLA.zip?alt=media&token=46d5e637-3411-"
                 "4188-bc44-5809b5bfb5f4")
    CLASS_LABELS = ("unacceptable", "acceptable")
    APPROX_VOCAB_SIZE = 2**13  # 8k vocab suffices for this small dataset.
    ZIP_NAME, DATA_DIR = "CoLA.zip", "CoLA"

    def _corpus_url(self):
        return self._COLA_URL

    def example_generator(self, filename):
        """{"inputs": sentence, "label": 0 or 1} of every line (CoLA's files have no header)."""
        for lineno, (_, label, _, sentence) in glue.tsv_rows(filename, 4, skip_header=False):
            yield {"inputs": sentence, "label": glue.int_label(filename, lineno, label)}


@registry.register_problem
class ColaCharacters(text2text.CharactersMixin, Cola):
    """Corpus of Linguistic Acceptability problems, character level."""
    CHARACTERS_TASK_ID = spaces.TaskID.COLA
