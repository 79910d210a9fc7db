"""Winograd NLI (GLUE's WNLI; T2T 1.15.7's `wnli`).

    t2t-datagen --problem=winograd_nli --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads GLUE's `WNLI.zip` into --tmp_dir (T2T's Firebase URL) and extracts `WNLI/`, whose
`train.tsv` (635 pairs) and `dev.tsv` (71) hold an
`index<TAB>sentence1<TAB>sentence2<TAB>label` header and then one row each, the label `0`
(not_entailment) or `1` (entailment). A row is one example
`{"inputs": sentence1 $ sentence2 + [EOS], "targets": [label]}`, one training shard. The
vocabulary file is T2T's `vocab.wnli.8192` (no `.subwords`). A `WNLI` folder or `WNLI.zip` in
--tmp_dir is used as it is.
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
class WinogradNLI(glue.IndexedPairProblem):
    """Winograd NLI classification problems."""

    # Link to data from GLUE: https://gluebenchmark.com/tasks (T2T's; a subclass or
    # instance may point it elsewhere).
    _WNLI_URL = ("https://firebasestorage.googleapis.com/v0/b/"
                 "mtl-sentence-representations.appspot.com/o/"
                 "data%2FWNLI.zip?alt=media&token=068ad0a0-ded7-"
                 "4bd7-99a5-5e00222e0faf")
    CLASS_LABELS = ("not_entailment", "entailment")
    APPROX_VOCAB_SIZE = 2**13  # 8k vocab suffices for this small dataset.
    TRAIN_SHARDS = 1
    ZIP_NAME, DATA_DIR = "WNLI.zip", "WNLI"

    @property
    def vocab_filename(self):
        return "vocab.wnli.%d" % self.approx_vocab_size

    def label_id(self, filename, lineno, label):
        """WNLI's labels are the ids themselves, `0` or `1`."""
        return glue.int_label(filename, lineno, label)

    def _corpus_url(self):
        return self._WNLI_URL


@registry.register_problem
class WinogradNLICharacters(text2text.CharactersMixin, WinogradNLI):
    """Winograd NLI classification problems, character level."""
    CHARACTERS_TASK_ID = spaces.TaskID.EN_NLI
