"""SciTail entailment (Khot et al. 2018; T2T 1.15.7's `scitail`).

    t2t-datagen --problem=sci_tail --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads AI2's `SciTailV1.1.zip` into --tmp_dir and extracts `SciTailV1.1/`, whose
`tsv_format/scitail_1.0_train.tsv` (23,596 pairs) and `scitail_1.0_dev.tsv` (1,304) hold one
`premise<TAB>hypothesis<TAB>label` row each, no header. A row is one example
`{"inputs": premise $ hypothesis + [EOS], "targets": [label]}`, labels `neutral` (0) /
`entails` (1); the vocabulary is `vocab.sci_tail.8192.subwords` (`sci_tail_shared_vocab`
names LM1B's, `vocab.languagemodel_lm1b32k.32768.subwords`, as T2T). A `SciTailV1.1` folder
or `SciTailV1.1.zip` in --tmp_dir is used as it is.
"""
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import text_encoder
from t2t.problems import glue
from t2t.problems import lm1b
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

EOS = text_encoder.EOS


@registry.register_problem
class SciTail(glue.SentencePairProblem):
    """SciTail classification problems."""

    # Data from allen institute for AI (T2T's; a subclass or instance may point it elsewhere).
    _SCITAIL_URL = ("http://data.allenai.org.s3.amazonaws.com/"
                    "downloads/SciTailV1.1.zip")
    CLASS_LABELS = ("neutral", "entails")
    APPROX_VOCAB_SIZE = 2**13
    ZIP_NAME, DATA_DIR = "SciTailV1.1.zip", "SciTailV1.1"
    TRAIN_FILE = "tsv_format/scitail_1.0_train.tsv"
    DEV_FILE = "tsv_format/scitail_1.0_dev.tsv"

    def _corpus_url(self):
        return self._SCITAIL_URL

    def example_generator(self, filename):
        """{"inputs": [premise, hypothesis], "label": id} of every row (no header)."""
        for lineno, (premise, hypothesis, label) in glue.tsv_rows(filename, 3,
                                                                  skip_header=False):
            yield {"inputs": [premise, hypothesis],
                   "label": self.label_id(filename, lineno, label)}


@registry.register_problem
class SciTailCharacters(text2text.CharactersMixin, SciTail):
    """SciTail classification problems, character level."""
    CHARACTERS_TASK_ID = spaces.TaskID.EN_NLI


@registry.register_problem
class SciTailSharedVocab(SciTail):
    """SciTail classification problems with the LM1b vocabulary."""

    @property
    def vocab_filename(self):
        return lm1b.LanguagemodelLm1b32k().vocab_filename
