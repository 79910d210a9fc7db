"""Language models on the One Billion Word benchmark (T2T 1.15.7's `lm1b`).

    t2t-datagen --problem=languagemodel_lm1b32k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads the corpus archive from statmt.org (1.7 GB) and the benchmark's word list
(`vocab-2016-09-10.txt`, 793k words, saved as `vocab-2016-09-10.txt.en`) into --tmp_dir,
extracts the archive, and reads, one sentence a line,

    1-billion-word-language-modeling-benchmark-r13output/
      training-monolingual.tokenized.shuffled/news.en-000{01..99}-of-00100   (train)
      heldout-monolingual.tokenized.shuffled/news.en.heldout-00000-of-00050  (dev)

Words outside the word list become "UNK" (for comparison with published results), and each
sentence is one example `{"targets": ids + [EOS]}`. Files already in --tmp_dir (the archive,
its extracted folder or the word list) are used as they are.

| problem                                | vocabulary                                    |
|----------------------------------------|-----------------------------------------------|
| languagemodel_lm1b32k                  | subwords, ~2**15, built from 63,000 sentences |
| languagemodel_lm1b8k                   | subwords, ~2**13                              |
| languagemodel_lm1b{32k,8k}_packed      | that of lm1b32k / lm1b8k; 256-long packs      |
| languagemodel_lm1b_characters(_packed) | bytes; the packed one in 1024-long packs      |

Other problems share the vocabulary the usual way:

    @property
    def use_vocab_from_other_problem(self):
        return lm1b.LanguagemodelLm1b32k()
"""
import os

from absl import logging
import tensorflow as tf

from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import escaping
from t2t.encoders import text_encoder  # noqa: F401  (T2T's module-level name)
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

# T2T's URLs (local constants of its functions); a problem instance may point elsewhere.
CORPUS_URL = ("http://www.statmt.org/lm-benchmark/"
              "1-billion-word-language-modeling-benchmark-r13output.tar.gz")
VOCAB_URL = "http://download.tensorflow.org/models/LM_LSTM_CNN/vocab-2016-09-10.txt"
# T2T saved the word list as basename(url + ".en"); a pre-placed copy keeps that name.
VOCAB_FILENAME = os.path.basename(VOCAB_URL + ".en")
CORPUS_DIR = "1-billion-word-language-modeling-benchmark-r13output"
UNK = "UNK"


def _original_vocab(tmp_dir, vocab_url=VOCAB_URL):
    """The benchmark's word list as a set of strings (downloaded into tmp_dir if missing)."""
    vocab_filepath = download.maybe_download(tmp_dir, VOCAB_FILENAME, vocab_url)
    with tf.io.gfile.GFile(vocab_filepath) as vocab_file:
        return {escaping.native_to_unicode(line.strip()) for line in vocab_file}


def _replace_oov(original_vocab, line):
    """`line`'s words with those outside `original_vocab` replaced by "UNK".

        _replace_oov({"the", "cat"}, "the cat sat\\n") -> "the cat UNK"
    """
    return " ".join(word if word in original_vocab else UNK for word in line.split())


def _train_data_filenames(tmp_dir):
    """The 99 training files (T2T skips shard 00000, the source of the held-out data)."""
    return [os.path.join(tmp_dir, CORPUS_DIR, "training-monolingual.tokenized.shuffled",
                         "news.en-%05d-of-00100" % i) for i in range(1, 100)]


def _dev_data_filenames(tmp_dir):
    """The one held-out file T2T evaluates on."""
    return [os.path.join(tmp_dir, CORPUS_DIR, "heldout-monolingual.tokenized.shuffled",
                         "news.en.heldout-00000-of-00050")]


def _maybe_download_corpus(tmp_dir, corpus_url=CORPUS_URL):
    """Download and extract the corpus once; an extracted copy in tmp_dir is used as it is."""
    download.maybe_download_and_extract(tmp_dir, os.path.basename(corpus_url), corpus_url,
                                        os.path.join(tmp_dir, CORPUS_DIR))
    needed = _train_data_filenames(tmp_dir) + _dev_data_filenames(tmp_dir)
    missing = [path for path in needed if not os.path.isfile(path)]
    if missing:
        raise download.DownloadError(
            "lm1b: %s is missing (%d of the corpus files are); delete %s and its archive "
            "to download it again" % (missing[0], len(missing), os.path.join(tmp_dir, CORPUS_DIR)))


@registry.register_problem
class LanguagemodelLm1b32k(text2text.Text2SelfProblem):
    """A language model on the 1B words corpus.

    Ratio of dev tokens (including eos) to dev words (including eos)
    176923 / 159658 = 1.108137; multiply log_ppl by this to compare results.
    """

    # Where the corpus and the word list come from (a test points them at a local server).
    corpus_url = CORPUS_URL
    vocab_url = VOCAB_URL

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768

    @property
    def max_samples_for_vocab(self):
        return 63000

    @property
    def is_generate_per_split(self):
        # T2T made this a method, which `if` took as True; the same value, as a property.
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        split_files = {
            spaces.DatasetSplit.TRAIN: _train_data_filenames(tmp_dir),
            spaces.DatasetSplit.EVAL: _dev_data_filenames(tmp_dir),
        }
        _maybe_download_corpus(tmp_dir, self.corpus_url)
        original_vocab = _original_vocab(tmp_dir, self.vocab_url)
        for filepath in split_files[dataset_split]:
            logging.info("filepath = %s", filepath)
            with tf.io.gfile.GFile(filepath) as lines:
                for line in lines:
                    yield {"targets": _replace_oov(original_vocab,
                                                   escaping.native_to_unicode(line))}


@registry.register_problem
class LanguagemodelLm1b8k(LanguagemodelLm1b32k):
    """languagemodel_lm1b32k with a vocabulary of ~8k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**13  # 8192


@registry.register_problem
class LanguagemodelLm1b32kPacked(LanguagemodelLm1b32k):
    """Packed into 256-long examples (for TPU training); languagemodel_lm1b32k's vocab."""

    @property
    def packed_length(self):
        return 256

    @property
    def vocab_filename(self):
        return LanguagemodelLm1b32k().vocab_filename


@registry.register_problem
class LanguagemodelLm1b8kPacked(LanguagemodelLm1b8k):
    """Packed version, 8k vocabulary (languagemodel_lm1b8k's).

    Ratio of dev tokens (including eos) to dev words (including eos)
    207351 / 159658 = 1.29872; multiply log-ppl by this to compare results.
    """

    @property
    def packed_length(self):
        return 256

    @property
    def vocab_filename(self):
        return LanguagemodelLm1b8k().vocab_filename


@registry.register_problem
class LanguagemodelLm1bCharacters(LanguagemodelLm1b32k):
    """A language model on the 1B words corpus, character level.

    Ratio of dev chars (including eos) to dev words (including eos)
    826189 / 159658 = 5.174742; multiply log-ppl by this to compare results.
    """

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER

    def global_task_id(self):
        return spaces.TaskID.EN_CHR


@registry.register_problem
class LanguagemodelLm1bCharactersPacked(LanguagemodelLm1bCharacters):
    """languagemodel_lm1b_characters packed into 1024-long examples."""

    @property
    def packed_length(self):
        return 1024
