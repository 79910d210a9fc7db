"""LM1B language modelling and MultiNLI as one multi-task problem (T2T 1.15.7's `lm1b_mnli`).

    t2t-datagen --problem=languagemodel_lm1b_multi_nli_subwords --data_dir=~/t2t_data \\
        --tmp_dir=/tmp/t2t_datagen

generates both tasks' data as they do alone (`languagemodel_lm1b32k` and
`multi_nli_shared_vocab`, which reads lm1b32k's vocabulary; or, for
`languagemodel_lm1b_multi_nli`, `languagemodel_lm1b_characters` and `multi_nli_characters`).
Training mixes the two by `multiproblem_mixing_schedule` (see `multi_problem`): an lm1b
sentence becomes the row `<lm1b task id> sentence ids EOS`, an MNLI pair
`premise $ hypothesis <mnli task id> <label>`, the task ids being the two ids past the
lm1b vocabulary and the label one id past those (subwords) or the digit character.
"""
from t2t.core import registry
from t2t.problems import lm1b
from t2t.problems import multi_problem
from t2t.problems import multinli
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)


@registry.register_problem
class LanguagemodelLm1bMultiNLISubwords(multi_problem.MultiProblem):
    """LM1b and MNLI mixed problem class for multitask learning."""

    def __init__(self, was_reversed=False, was_copy=False):
        super().__init__(was_reversed, was_copy)
        self.task_list.append(lm1b.LanguagemodelLm1b32k())
        self.task_list.append(multinli.MultiNLISharedVocab())

    @property
    def vocab_type(self):
        return text2text.VocabType.SUBWORD


@registry.register_problem
class LanguagemodelLm1bMultiNLI(multi_problem.MultiProblem):
    """LM1b and MNLI mixed problem class for multitask learning, character level."""

    def __init__(self, was_reversed=False, was_copy=False):
        super().__init__(was_reversed, was_copy)
        self.task_list.append(lm1b.LanguagemodelLm1bCharacters())
        self.task_list.append(multinli.MultiNLICharacters())

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER
