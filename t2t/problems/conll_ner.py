"""CoNLL-2002 named entity recognition, Spanish and Dutch (T2T 1.15.7's `conll_ner`).

    t2t-datagen --problem=conll2002_es_ner --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads NLTK's `conll2002.zip` (from the nltk_data repository on GitHub) into --tmp_dir and
extracts `conll2002/`, whose files hold one `word POS tag` line per token and a blank line
after each sentence:

    Sao NC B-LOC
    Paulo VMI I-LOC
    ( Fpa O
                                  -> {"inputs": "Sao Paulo (", "targets": "B-LOC I-LOC O"}

`conll2002_es_ner` trains on `esp.train` and evaluates on `esp.testa` then `esp.testb`;
`conll2002_nl_ner` the same with `ned.*` (whose `-DOCSTART- -DOCSTART- O` lines are sentences
of their own, as in T2T). Inputs and targets share one subword vocabulary,
`vocab.conll2002_es_ner.32768.subwords`. The zip, or its extracted `conll2002` folder, in
--tmp_dir is used as it is. `conll2002_ner` is the registered base of the two and names no
files.
"""
import os

import tensorflow as tf

from t2t.core import download
from t2t.core import errors
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)
from t2t.problems import text_problems_tmpdir

# T2T's; a subclass may point `URL` elsewhere (tests: a local server).
CONLL2002_URL = ("https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/"
                 "corpora/conll2002.zip")


def conll_sentences(filepath):
    """{"inputs": words, "targets": tags} of each sentence of a CoNLL-2002 file, in order.

    A line is `word POS tag` (the tag is the third column); a blank line ends a sentence.
    Blank lines in a row make no empty sentence.
    """
    words, tags = [], []
    with tf.io.gfile.GFile(filepath, "r") as conll_file:
        for line_number, line in enumerate(conll_file, start=1):
            fields = line.split()
            if not fields:
                if words:
                    yield {"inputs": " ".join(words), "targets": " ".join(tags)}
                words, tags = [], []
                continue
            if len(fields) < 3:
                raise errors.UserError("%s line %d: %r is not 'word POS tag'" %
                                 (filepath, line_number, line.strip()[:80]))
            words.append(fields[0])
            tags.append(fields[2])
    if words:
        yield {"inputs": " ".join(words), "targets": " ".join(tags)}


@registry.register_problem
class Conll2002Ner(text_problems_tmpdir.Text2textTmpdir):
    """Base class for CoNLL2002 problems: a sentence's words -> its entity tags."""
    URL = CONLL2002_URL
    TRAIN_FILES = ()
    EVAL_FILES = ()

    def source_data_files(self, dataset_split):
        """Files of `conll2002/` to be passed to generate_samples."""
        is_training = dataset_split == spaces.DatasetSplit.TRAIN
        files = self.TRAIN_FILES if is_training else self.EVAL_FILES
        if not files:
            # T2T raised NotImplementedError (a traceback from t2t-datagen); the base class
            # is registered, so naming it is a user's mistake: one line, before any download.
            raise errors.UserError(
                "%s names no CoNLL-2002 files; generate conll2002_es_ner or conll2002_nl_ner "
                "(or set TRAIN_FILES and EVAL_FILES in a subclass)" % self.name)
        return list(files)

    def check_files(self, tmp_dir):
        """Nothing to pair up: a CoNLL file holds the words and their tags together."""
        del tmp_dir

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        filenames = self.source_data_files(dataset_split)
        conll_dir = download.maybe_download_and_extract(
            tmp_dir, os.path.basename(self.URL), self.URL, os.path.join(tmp_dir, "conll2002"))
        for filename in filenames:
            filepath = os.path.join(conll_dir, filename)
            if not tf.io.gfile.exists(filepath):
                raise errors.UserError("%s: %s is missing; delete %s to download it again"
                                        % (self.name, filepath, conll_dir))
            yield from conll_sentences(filepath)


@registry.register_problem
class Conll2002EsNer(Conll2002Ner):
    """Problem spec for CoNLL2002 Spanish named entity task."""
    TRAIN_FILES = ["esp.train"]
    EVAL_FILES = ["esp.testa", "esp.testb"]


@registry.register_problem
class Conll2002NlNer(Conll2002Ner):
    """Problem spec for CoNLL2002 Dutch named entity task."""
    TRAIN_FILES = ["ned.train"]
    EVAL_FILES = ["ned.testa", "ned.testb"]
