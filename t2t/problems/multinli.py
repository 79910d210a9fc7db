"""The Multi-Genre NLI corpus (GLUE's MNLI; T2T 1.15.7's `multinli`).

    t2t-datagen --problem=multi_nli --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads GLUE's `MNLI.zip` into --tmp_dir (T2T's Firebase URL) and extracts `MNLI/`, whose
`train.tsv` (392,702 pairs) and `dev_matched.tsv` (9,815; the dev split) hold a header and
then one row each: index, promptID, pairID, genre, the binary and full parses, sentence1
(column 8), sentence2 (column 9), on dev the annotators' labels, and gold_label last.
`dev_mismatched.tsv` and the test files are not read.

- `multi_nli` (and `_characters`, `_shared_vocab`, `_wiki_lm_shared_vocab`,
  `_wiki_lm_shared_vocab64k`, `_wiki_lm_multi_vocab64k`): one example a row,
  `{"inputs": sentence1 $ sentence2 + [EOS], "targets": [label]}`, labels `contradiction` (0)
  / `entailment` (1) / `neutral` (2); vocabulary `vocab.multi_nli.32768.subwords`, or that of
  `languagemodel_lm1b32k`, `languagemodel_en_wiki32k`, `_en_wiki64k`,
  `_de_en_fr_ro_wiki64k`.
- `multi_nli_text2text` (and `_multi64k_packed1k`): the text "multinli premise: <sentence1>
  hypothesis: <sentence2>" -> the label's name.

A `MNLI` folder or `MNLI.zip` in --tmp_dir is used as it is.
"""
import os

from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import text_encoder
from t2t.problems import glue
from t2t.problems import lm1b
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)
from t2t.problems import wiki_lm

EOS = text_encoder.EOS

# Link to data from GLUE: https://gluebenchmark.com/tasks (T2T's; point it elsewhere by
# setting this module attribute).
_MNLI_URL = ("https://firebasestorage.googleapis.com/v0/b/"
             "mtl-sentence-representations.appspot.com/o/"
             "data%2FMNLI.zip?alt=media&token=50329ea1-e339-"
             "40e2-809c-10c40afff3ce")


def _maybe_download_corpora(tmp_dir):
    """tmp_dir/MNLI, `MNLI.zip` downloaded from _MNLI_URL and extracted if it is missing."""
    return download.maybe_download_and_extract(tmp_dir, "MNLI.zip", _MNLI_URL,
                                               os.path.join(tmp_dir, "MNLI"))


def _example_generator(filename):
    """{"premise", "hypothesis", "label"} strings of each row after the header (the label
    is the last column: train's and dev's layouts differ before it)."""
    for _, fields in glue.tsv_rows(filename, min_fields=11):
        yield {"premise": fields[8], "hypothesis": fields[9], "label": fields[-1]}


def _mnli_rows(tmp_dir, dataset_split):
    """(filename, example) of train.tsv for training, dev_matched.tsv otherwise."""
    name = "train.tsv" if dataset_split == spaces.DatasetSplit.TRAIN else "dev_matched.tsv"
    filename = os.path.join(_maybe_download_corpora(tmp_dir), name)
    for example in _example_generator(filename):
        yield filename, example


@registry.register_problem
class MultiNLI(glue.SentencePairProblem):
    """MultiNLI classification problems."""
    CLASS_LABELS = ("contradiction", "entailment", "neutral")
    APPROX_VOCAB_SIZE = 2**15
    TRAIN_SHARDS = 100

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        for lineno, (filename, example) in enumerate(_mnli_rows(tmp_dir, dataset_split), 2):
            yield {"inputs": [example["premise"], example["hypothesis"]],
                   "label": self.label_id(filename, lineno, example["label"])}


@registry.register_problem
class MultiNLIText2text(text2text.Text2TextProblem):
    """MultiNLI as text to text: the premise and hypothesis to the label's name."""

    @property
    def is_generate_per_split(self):
        return True

    @property
    def approx_vocab_size(self):
        return 2**15

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        for _, example in _mnli_rows(tmp_dir, dataset_split):
            yield {"inputs": "multinli premise: %s hypothesis: %s" % (
                       example["premise"], example["hypothesis"]),
                   "targets": example["label"]}


@registry.register_problem
class MultiNLIText2textMulti64kPacked1k(wiki_lm.Multi64kPacked1kMixin, MultiNLIText2text):
    """MultiNLI as text to text with the multi-lingual vocabulary, packed."""

    @property
    def num_training_examples(self):
        return 18300


@registry.register_problem
class MultiNLICharacters(text2text.CharactersMixin, MultiNLI):
    """MultiNLI classification problems, character level."""
    CHARACTERS_TASK_ID = spaces.TaskID.THREE_CL_NLI


@registry.register_problem
class MultiNLISharedVocab(MultiNLI):
    """MultiNLI classification problems with the LM1b vocabulary."""

    @property
    def use_vocab_from_other_problem(self):
        return lm1b.LanguagemodelLm1b32k()


@registry.register_problem
class MultiNLIWikiLMSharedVocab(MultiNLI):
    """MultiNLI classification problems with the Wiki vocabulary."""

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelEnWiki32k()


@registry.register_problem
class MultiNLIWikiLMSharedVocab64k(MultiNLIWikiLMSharedVocab):
    """MultiNLI classification problems with the 64k Wiki vocabulary."""

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelEnWiki64k()


@registry.register_problem
class MultiNLIWikiLMMultiVocab64k(MultiNLIWikiLMSharedVocab):
    """MultiNLI classification problems with the multi-lingual vocabulary."""

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()
