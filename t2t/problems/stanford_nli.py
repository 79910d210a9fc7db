"""The Stanford Natural Language Inference corpus (SNLI 1.0; T2T 1.15.7's `stanford_nli`).

    t2t-datagen --problem=stanford_nli --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads `snli_1.0.zip` from nlp.stanford.edu into --tmp_dir (saved as `SNLI.zip`, T2T's
name) and extracts `snli_1.0/`, whose `snli_1.0_train.txt` (550,152 pairs) and
`snli_1.0_dev.txt` (10,000) hold a header and then one row of 14 tab-separated columns:
gold_label, the binary and full parses, sentence1, sentence2, captionID, pairID, the
annotators' labels. A row is one example `{"inputs": sentence1 $ sentence2 + [EOS],
"targets": [label]}`, labels `contradiction` (0) / `entailment` (1) / `neutral` (2); rows
whose gold label is `-` (no consensus) are left out. The vocabulary is
`vocab.stanford_nli.32768.subwords`; the `_shared_vocab` problems name LM1B's or the English
Wikipedia's vocabulary file, as T2T. A `snli_1.0` folder or `SNLI.zip` in --tmp_dir is used
as it is.
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
from t2t.problems import wiki_lm

EOS = text_encoder.EOS


@registry.register_problem
class StanfordNLI(glue.SentencePairProblem):
    """StanfordNLI classification problems."""

    # T2T's; a subclass or instance may point it elsewhere.
    _SNLI_URL = "https://nlp.stanford.edu/projects/snli/snli_1.0.zip"
    CLASS_LABELS = ("contradiction", "entailment", "neutral")
    APPROX_VOCAB_SIZE = 2**15
    TRAIN_SHARDS = 100
    ZIP_NAME, DATA_DIR = "SNLI.zip", "snli_1.0"
    TRAIN_FILE, DEV_FILE = "snli_1.0_train.txt", "snli_1.0_dev.txt"

    def _corpus_url(self):
        return self._SNLI_URL

    def example_generator(self, filename):
        """{"inputs": [sentence1, sentence2], "label": id} of each row with a gold label."""
        for lineno, fields in glue.tsv_rows(filename, min_fields=7):
            if fields[0] == "-":
                continue
            yield {"inputs": fields[5:7], "label": self.label_id(filename, lineno, fields[0])}


@registry.register_problem
class StanfordNLICharacters(text2text.CharactersMixin, StanfordNLI):
    """StanfordNLI classification problems, character level."""
    CHARACTERS_TASK_ID = spaces.TaskID.THREE_CL_NLI


@registry.register_problem
class StanfordNLISharedVocab(StanfordNLI):
    """StanfordNLI classification problems with the LM1b vocabulary."""

    @property
    def vocab_filename(self):
        return lm1b.LanguagemodelLm1b32k().vocab_filename


@registry.register_problem
class StanfordNLIWikiLMSharedVocab(StanfordNLI):
    """StanfordNLI classification problems with the Wiki vocabulary."""

    @property
    def vocab_filename(self):
        return wiki_lm.LanguagemodelEnWiki32k().vocab_filename


@registry.register_problem
class StanfordNLIWikiLMSharedVocab64k(StanfordNLIWikiLMSharedVocab):
    """StanfordNLI classification problems with the Wiki vocabulary."""

    @property
    def vocab_filename(self):
        return wiki_lm.LanguagemodelEnWiki64k().vocab_filename
