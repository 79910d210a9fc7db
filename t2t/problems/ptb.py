"""Language models on the Penn Treebank (T2T 1.15.7's `ptb`).

    t2t-datagen --problem=languagemodel_ptb10k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads Mikolov's `simple-examples.tgz` (34 MB) into --tmp_dir, extracts it and reads, one
sentence a line,

    simple-examples/data/ptb.train.txt       ptb.valid.txt        (languagemodel_ptb10k)
    simple-examples/data/ptb.char.train.txt  ptb.char.valid.txt   (languagemodel_ptb_characters)

(ptb.test.txt is not read, as in T2T). Each line is one example whose text ends with the
word "<EOS>" (T2T's line ending), then the EOS id: `{"targets": ids("... <EOS>") + [1]}`.

The vocabulary `vocab.lmptb.10000` (both problems write it, from their training file) is
the 10,000 most frequent words, most frequent first, ties in string order, one a line and
without reserved tokens (ids are line numbers, as T2T's TokenTextEncoder read the file):

    words_by_frequency("b a b <EOS>".split()) -> ("b", "<EOS>", "a")

The character problem encodes bytes and does not read it. An archive or an extracted
`simple-examples/data` folder in --tmp_dir is used as it is.
"""
import collections
import glob
import os

import tensorflow as tf

from t2t.core import atomic_files
from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

EOS = text_encoder.EOS
PTB_URL = "http://www.fit.vutbr.cz/~imikolov/rnnlm/simple-examples.tgz"
PTB_DIR = os.path.join("simple-examples", "data")


def words_by_frequency(words):
    """The distinct `words`, most frequent first, ties in string order."""
    counts = collections.Counter(words)
    return tuple(word for word, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0])))


def build_vocab_from_words(words, vocab_dir, vocab_name):
    """The TokenTextEncoder of `vocab_dir/vocab_name`; if missing, written from `words` (an
    iterable, read only then): "<pad>", "<EOS>", then words_by_frequency(words)."""
    vocab_path = os.path.join(vocab_dir, vocab_name)
    if tf.io.gfile.exists(vocab_path):
        return text_encoder.TokenTextEncoder(vocab_path)
    encoder = text_encoder.TokenTextEncoder(None, vocab_list=words_by_frequency(words))
    tf.io.gfile.makedirs(vocab_dir)
    encoder.store_to_file(vocab_path)
    return encoder


def _read_words(filename):
    """The words of `filename`, each line ending in the word EOS."""
    with tf.io.gfile.GFile(filename) as f:
        return f.read().replace("\n", " %s " % EOS).split()


def _build_vocab(filename, vocab_path, vocab_size):
    """Write the `vocab_size` most frequent words of `filename`, one a line."""
    words = words_by_frequency(_read_words(filename))[:vocab_size]
    with atomic_files.atomic_write(vocab_path, "w") as f:
        f.write("\n".join(words))


def _get_token_encoder(vocab_dir, vocab_name, filename):
    """The TokenTextEncoder of `vocab_dir/vocab_name`, built from `filename` if missing."""
    vocab_path = os.path.join(vocab_dir, vocab_name)
    if not tf.io.gfile.exists(vocab_path):
        tf.io.gfile.makedirs(vocab_dir)
        _build_vocab(filename, vocab_path, 10000)
    return text_encoder.TokenTextEncoder(vocab_path)


def _maybe_download_corpus(tmp_dir, vocab_type, url=PTB_URL):
    """The PTB text files of `vocab_type` (paths relative to tmp_dir), downloaded if missing.

    Files with "ptb" and ".txt" in their name are PTB's; those with "char" the characters'.
    """
    data_dir = download.maybe_download_and_extract(
        tmp_dir, os.path.basename(url), url, os.path.join(tmp_dir, PTB_DIR))
    names = sorted(os.path.relpath(path, tmp_dir)
                   for path in glob.glob(os.path.join(data_dir, "*ptb*.txt*")))
    chars = vocab_type == text2text.VocabType.CHARACTER
    return [name for name in names if ("char" in os.path.basename(name)) == chars]


@registry.register_problem
class LanguagemodelPtb10k(text2text.Text2SelfProblem):
    """PTB, 10k vocab."""

    # T2T's; a subclass or instance may point it elsewhere (tests: a local server).
    url = PTB_URL

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def is_generate_per_split(self):
        return True

    @property
    def vocab_filename(self):
        return "vocab.lmptb.10000"

    @property
    def vocab_type(self):
        return text2text.VocabType.TOKEN

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        # Not a generator: the vocabulary must exist before generate_encoded_samples reads it.
        files = _maybe_download_corpus(tmp_dir, self.vocab_type, self.url)
        train_file = valid_file = None
        for filename in files:
            if "train" in filename:
                train_file = os.path.join(tmp_dir, filename)
            elif "valid" in filename:
                valid_file = os.path.join(tmp_dir, filename)
        for found, what in ((train_file, "training"), (valid_file, "validation")):
            if not found:
                raise download.DownloadError(
                    "%s: no %s file in %s; delete it and %s to download them again" % (
                        self.name, what, os.path.join(tmp_dir, PTB_DIR),
                        os.path.basename(self.url)))
        _get_token_encoder(data_dir, self.vocab_filename, train_file)
        filepath = train_file if dataset_split == spaces.DatasetSplit.TRAIN else valid_file

        def _generate_samples():
            with tf.io.gfile.GFile(filepath) as f:
                for line in f:
                    yield {"targets": " ".join(line.replace("\n", " %s " % EOS).split())}

        return _generate_samples()


@registry.register_problem
class LanguagemodelPtbCharacters(LanguagemodelPtb10k):
    """PTB, character-level."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER
