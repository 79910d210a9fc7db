"""Wikipedia language modelling mixed with other text tasks (T2T 1.15.7's `wiki_multi_problems`).

Each problem trains one model on a Wikipedia language model (`wiki_lm`) and one or more
tasks that share its vocabulary: MultiNLI, CNN/Daily Mail summaries, SQuAD, WMT translation.

    t2t-datagen --problem=languagemodel_en_wiki_lm_multi_nli_subwords --data_dir=~/t2t_data \\
        --tmp_dir=/tmp/t2t_datagen

generates `languagemodel_en_wiki32k` (and its vocabulary, `vocab.languagemodel_en_wiki32k.
32000.subwords`) and `multi_nli_wiki_lm_shared_vocab` (encoded with that vocabulary), each as
alone. Two kinds of mixing:

- `multi_problem.MultiProblem` (most of them): every example is a decoder-only row,
  `<wiki task id> text EOS` or `inputs <task id> targets`, mixed by the
  `multiproblem_mixing_schedule` hparams.
- `multi_problem_v2.MultiText2TextProblem` (`..._subwords_v2`, `languagemodel_multi_wiki_
  translate_packed1k` and `_v2`): the problems' examples as they are (the packed1k ones
  are packed text-to-text problems on the four-language 64k vocabulary), drawn by a constant
  schedule: half each for `_v2`; for the packed1k ones in proportion to `rate *
  num_training_examples` (`multi_problem_v2.epoch_rates_to_pmf`), a problem of
  `problems_and_rates` with `also_reverse` appearing twice, forward and reversed.
"""
from t2t.core import registry
from t2t.problems import cnn_dailymail
from t2t.problems import multi_problem
from t2t.problems import multi_problem_v2
from t2t.problems import multinli
from t2t.problems import squad
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)
from t2t.problems import translate_ende
from t2t.problems import translate_enfr
from t2t.problems import translate_enro
from t2t.problems import wiki_lm


class _WikiMultiProblem(multi_problem.MultiProblem):
    """A subword MultiProblem whose task list is `tasks()`, the Wikipedia LM first."""

    def __init__(self, was_reversed=False, was_copy=False):
        super().__init__(was_reversed, was_copy)
        self.task_list.extend(self.tasks())

    def tasks(self):
        """The problems to mix, the primary (vocabulary-giving) one first."""
        raise NotImplementedError("%s must define tasks()" % type(self).__name__)

    @property
    def vocab_type(self):
        return text2text.VocabType.SUBWORD


@registry.register_problem
class LanguagemodelEnWikiLMMultiNLISubwords(_WikiMultiProblem):
    """English Wikipedia LM (32k) and MultiNLI on its vocabulary."""

    def tasks(self):
        return [wiki_lm.LanguagemodelEnWiki32k(), multinli.MultiNLIWikiLMSharedVocab()]


@registry.register_problem
class LanguagemodelEnWikiLMMultiNLISubwordsV2(multi_problem_v2.MultiText2TextProblem):
    """English Wikipedia LM (32k) and MultiNLI, half the draws each; no inputs (an MNLI
    example is `premise $ hypothesis <label id>` in targets, the label id being the class
    number 0-2 itself, as T2T: contradiction's 0 is the padding id)."""

    def __init__(self, was_reversed=False, was_copy=False):
        problems = [wiki_lm.LanguagemodelEnWiki32k(), multinli.MultiNLIWikiLMSharedVocab()]
        super().__init__(problems, multi_problem_v2.constant_schedule([0.5, 0.5]),
                         was_reversed=was_reversed, was_copy=was_copy)

    @property
    def has_inputs(self):
        return False

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelEnWiki32k()

    @property
    def vocab_type(self):
        return text2text.VocabType.SUBWORD


@registry.register_problem
class LanguagemodelMultiWikiTranslatePacked1k(multi_problem_v2.MultiText2TextProblem):
    """Four-language Wikipedia fill-in-the-blanks, WMT En-De / En-Fr / En-Ro translation
    (both directions), CNN/DM, MultiNLI and SQuAD as packed 1k text-to-text problems, each
    drawn so that all go through their training data at the same epoch rate."""

    def __init__(self, was_reversed=False, was_copy=False):
        problems, rates = [], []
        for rate, also_reverse, cls in self.problems_and_rates:
            for reverse in (False, True) if also_reverse else (False,):
                problems.append(cls(was_reversed=reverse))
                rates.append(rate)
        pmf = multi_problem_v2.epoch_rates_to_pmf(problems, epoch_rates=rates)
        super().__init__(problems, multi_problem_v2.constant_schedule(pmf),
                         was_reversed=was_reversed, was_copy=was_copy)

    @property
    def problems_and_rates(self):
        """(epoch rate, also_reverse, problem class) triples."""
        return [
            (1.0, True, wiki_lm.LanguagemodelDeEnFrRoWiki64kFitbPacked1k),
            (1.0, True, translate_ende.TranslateEndeWmtMulti64kPacked1k),
            (1.0, True, translate_enfr.TranslateEnfrWmtMulti64kPacked1k),
            (1.0, True, translate_enro.TranslateEnroWmtMultiTiny64kPacked1k),
            (1.0, True, cnn_dailymail.SummarizeCnnDailymailMulti64kPacked1k),
            (1.0, False, multinli.MultiNLIText2textMulti64kPacked1k),
            (1.0, False, squad.SquadText2textMulti64kPacked1k),
        ]

    @property
    def has_inputs(self):
        return True

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()

    @property
    def vocab_type(self):
        return text2text.VocabType.SUBWORD

    @property
    def packed_length(self):
        return 1024


@registry.register_problem
class LanguagemodelMultiWikiTranslatePacked1kV2(LanguagemodelMultiWikiTranslatePacked1k):
    """`languagemodel_multi_wiki_translate_packed1k` with higher rates for the rarer
    problems (En-De 3, En-Ro 100, MultiNLI and SQuAD 10)."""

    @property
    def problems_and_rates(self):
        return [
            (1.0, True, wiki_lm.LanguagemodelDeEnFrRoWiki64kFitbPacked1k),
            (3.0, True, translate_ende.TranslateEndeWmtMulti64kPacked1k),
            (1.0, True, translate_enfr.TranslateEnfrWmtMulti64kPacked1k),
            (100.0, True, translate_enro.TranslateEnroWmtMultiTiny64kPacked1k),
            (1.0, True, cnn_dailymail.SummarizeCnnDailymailMulti64kPacked1k),
            (10.0, False, multinli.MultiNLIText2textMulti64kPacked1k),
            (10.0, False, squad.SquadText2textMulti64kPacked1k),
        ]


@registry.register_problem
class LanguagemodelEnWikiLMMultiNLISubwords64k(_WikiMultiProblem):
    """English Wikipedia LM (64k) and MultiNLI on its vocabulary."""

    def tasks(self):
        return [wiki_lm.LanguagemodelEnWiki64k(), multinli.MultiNLIWikiLMSharedVocab64k()]


@registry.register_problem
class LanguagemodelEnWikiLMShortMultiNLISubwords64k(_WikiMultiProblem):
    """English Wikipedia LM in shorter examples (3,072 characters, 64k vocab) and MultiNLI."""

    def tasks(self):
        return [wiki_lm.LanguagemodelEnWiki64kShorter(),
                multinli.MultiNLIWikiLMSharedVocab64k()]


@registry.register_problem
class LanguagemodelEnWikiLMSummarizeCnndmSubwords(_WikiMultiProblem):
    """English Wikipedia LM (32k) and CNN/Daily Mail summarization on its vocabulary."""

    def tasks(self):
        return [wiki_lm.LanguagemodelEnWiki32k(),
                cnn_dailymail.SummarizeCnnDailymailWikiLMSharedVocab()]


@registry.register_problem
class LanguagemodelEnWikiLMSummarizeCnndmSubwords64k(_WikiMultiProblem):
    """English Wikipedia LM (64k) and CNN/Daily Mail summarization on its vocabulary."""

    def tasks(self):
        return [wiki_lm.LanguagemodelEnWiki64k(),
                cnn_dailymail.SummarizeCnnDailymailWikiLMSharedVocab64k()]


@registry.register_problem
class LanguagemodelMultiWikiTranslateFr(_WikiMultiProblem):
    """Four-language Wikipedia LM and WMT English-French on its vocabulary."""

    def tasks(self):
        return [wiki_lm.LanguagemodelDeEnFrRoWiki64k(), translate_enfr.TranslateEnfrWmtMulti64k()]


@registry.register_problem
class LanguagemodelMultiWikiTranslate(_WikiMultiProblem):
    """Four-language Wikipedia LM; En-De, En-Fr, En-Ro translation both ways; CNN/DM,
    MultiNLI and SQuAD: ten tasks on the four-language 64k vocabulary."""

    def tasks(self):
        return [
            wiki_lm.LanguagemodelDeEnFrRoWiki64k(),
            translate_ende.TranslateEndeWmtMulti64k(),
            translate_enfr.TranslateEnfrWmtMulti64k(),
            translate_enro.TranslateEnroWmtMultiTiny64k(),
            translate_ende.TranslateEndeWmtMulti64k(was_reversed=True),
            translate_enfr.TranslateEnfrWmtMulti64k(was_reversed=True),
            translate_enro.TranslateEnroWmtMultiTiny64k(was_reversed=True),
            cnn_dailymail.SummarizeCnnDailymailWikiLMMultiVocab64k(),
            multinli.MultiNLIWikiLMMultiVocab64k(),
            squad.SquadConcatMulti64k(),
        ]


def _register_fraction(percent):
    """Register LanguagemodelEnWikiLMSummarizeFrac<percent>CnndmSubwords64k: English
    Wikipedia LM (64k) and `summarize_frac<percent>_cnn_dailymail_wiki_lm_shared_vocab64k`."""
    summarize = getattr(cnn_dailymail,
                        "SummarizeFrac%dCnnDailymailWikiLMSharedVocab64k" % percent)
    name = "LanguagemodelEnWikiLMSummarizeFrac%dCnndmSubwords64k" % percent
    cls = type(name, (_WikiMultiProblem,), {
        "tasks": lambda self: [wiki_lm.LanguagemodelEnWiki64k(), summarize()],
        "__doc__": "English Wikipedia LM (64k) and CNN/Daily Mail summarization on %d%% of "
                   "the training stories." % percent,
        "__module__": __name__})
    return registry.register_problem(cls)


for _percent in (1, 2, 5, 10, 20, 50):
    _cls = _register_fraction(_percent)
    globals()[_cls.__name__] = _cls


@registry.register_problem
class LanguagemodelEnWikiLMSquadConcatSubwords(_WikiMultiProblem):
    """English Wikipedia LM (32k) and SQuAD (question and context concatenated) on its
    vocabulary."""

    def tasks(self):
        # T2T named multinli.SquadConcatSharedVocab, which does not exist (the class is
        # squad's), so this problem could not be built there.
        return [wiki_lm.LanguagemodelEnWiki32k(), squad.SquadConcatSharedVocab()]
