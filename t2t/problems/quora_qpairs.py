"""Quora Question Pairs (GLUE's QQP; T2T 1.15.7's `quora_qpairs`).

    t2t-datagen --problem=quora_question_pairs --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads GLUE's `QQP.zip` into --tmp_dir (T2T's Firebase URL) and extracts `QQP/`, whose
`train.tsv` (363,846 pairs) and `dev.tsv` (40,430) hold an
`id<TAB>qid1<TAB>qid2<TAB>question1<TAB>question2<TAB>is_duplicate` header and then one row
each. Each row gives two examples, the questions in both orders (Radford et al. 2018's
augmentation, as T2T): `{"inputs": question1 $ question2 + [EOS], "targets": [label]}`, labels
`not_duplicate` (0) / `duplicate` (1). Rows of fewer than six fields (a few in QQP's train.tsv)
are skipped and counted in one log line per file. The vocabulary is
`vocab.quora_question_pairs.32768.subwords`. A `QQP` folder or `QQP.zip` in --tmp_dir is used
as it is.
"""
import logging

from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import text_encoder
from t2t.problems import glue
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

EOS = text_encoder.EOS

_logger = logging.getLogger(__name__)


@registry.register_problem
class QuoraQuestionPairs(glue.SentencePairProblem):
    """Quora duplicate question pairs binary classification problems."""

    # Link to data from GLUE: https://gluebenchmark.com/tasks (T2T's; a subclass or
    # instance may point it elsewhere).
    _QQP_URL = ("https://firebasestorage.googleapis.com/v0/b/"
                "mtl-sentence-representations.appspot.com/o/"
                "data%2FQQP.zip?alt=media&token=700c6acf-160d-"
                "4d89-81d1-de4191d02cb5")
    CLASS_LABELS = ("not_duplicate", "duplicate")
    APPROX_VOCAB_SIZE = 2**15
    TRAIN_SHARDS = 100
    ZIP_NAME, DATA_DIR = "QQP.zip", "QQP"

    def _corpus_url(self):
        return self._QQP_URL

    def example_generator(self, filename):
        """Both orders of each row's questions, with its is_duplicate label."""
        skipped = 0
        for lineno, fields in glue.tsv_rows(filename):
            if len(fields) < 6:
                skipped += 1
                continue
            if len(fields) > 6:
                raise glue.bad_row(filename, lineno, fields, "expected 6")
            yield from glue.both_orders(fields[3], fields[4],
                                        glue.int_label(filename, lineno, fields[5]))
        if skipped:
            _logger.info("Skipped %d rows of fewer than 6 fields in %s", skipped, filename)


@registry.register_problem
class QuoraQuestionPairsCharacters(text2text.CharactersMixin, QuoraQuestionPairs):
    """Quora duplicate question pairs classification problems, character level."""
    CHARACTERS_TASK_ID = spaces.TaskID.EN_SIM
