"""LM1B language modelling and IMDB sentiment as one multi-task problem (T2T 1.15.7's
`lm1b_imdb`).

    t2t-datagen --problem=languagemodel_lm1b_sentiment_imdb --data_dir=~/t2t_data \\
        --tmp_dir=/tmp/t2t_datagen

generates both tasks' data as they do alone, at the character level
(`languagemodel_lm1b_characters` and `sentiment_imdb_characters`: bytes, no vocabulary file).
Training mixes the two by `multiproblem_mixing_schedule` (see `multi_problem`): an lm1b
sentence becomes the row `<lm1b task id> sentence bytes EOS`, an IMDB review
`review bytes <imdb task id> <label digit>` ("0" neg, "1" pos), the task ids being 258
and 259, the two ids past the 256 bytes and the 2 reserved ids.
"""
from t2t.core import registry
from t2t.problems import imdb
from t2t.problems import lm1b
from t2t.problems import multi_problem
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)


@registry.register_problem
class LanguagemodelLm1bSentimentIMDB(multi_problem.MultiProblem):
    """LM1b and IMDb mixed problem class for multitask learning, character level."""

    def __init__(self, was_reversed=False, was_copy=False):
        super().__init__(was_reversed, was_copy)
        self.task_list.append(lm1b.LanguagemodelLm1bCharacters())
        self.task_list.append(imdb.SentimentIMDBCharacters())

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER
