"""Language models on WikiText-103 (T2T 1.15.7's `wikitext103`).

    t2t-datagen --problem=languagemodel_wikitext103 --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads the corpus zip from research.metamind.io into --tmp_dir, extracts it and reads

    wikitext-103/wiki.{train,valid,test}.tokens        (tokens: 181 MB zip)
    wikitext-103-raw/wiki.{train,valid,test}.raw       (_characters: the raw text, 183 MB zip)

one example per non-blank line, its whitespace collapsed: `{"targets": ids + [EOS]}`, into
10 training shards, 1 dev and 1 test.

| problem                              | vocabulary / example                                  |
|--------------------------------------|-------------------------------------------------------|
| languagemodel_wikitext103            | `vocab.languagemodel_wikitext103.tokens`: every word  |
| languagemodel_wikitext103_characters | bytes                                                 |
| languagemodel_wikitext103_l4k        | its own `.tokens` file; lines joined to < 4,096 words |
| languagemodel_wikitext103_l16k       | the same, < 16,384 words                              |

A token vocabulary is every training word, most frequent first (ties in string order),
after "<pad>" and "<EOS>". An archive or an extracted folder in --tmp_dir is used as it is.
"""
import glob
import os

import tensorflow as tf

from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import text_encoder  # noqa: F401  (T2T's module-level name)
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import ptb
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

# T2T's URLs (local constants of _maybe_download_corpus) and the folders they hold.
TOKENS_URL = "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-v1.zip"
RAW_URL = "https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-raw-v1.zip"
TOKENS_DIR = "wikitext-103"
RAW_DIR = "wikitext-103-raw"


def _build_vocab(filename, vocab_dir, vocab_name):
    """The TokenTextEncoder of `vocab_dir/vocab_name`; written from `filename` if missing."""
    def words():
        with tf.io.gfile.GFile(filename) as f:
            yield from f.read().split()

    return ptb.build_vocab_from_words(words(), vocab_dir, vocab_name)


def _maybe_download_corpus(tmp_dir, vocab_type, urls=(TOKENS_URL, RAW_URL)):
    """(train, valid, test) file paths of the corpus `vocab_type` reads (raw for characters)."""
    tokens_url, raw_url = urls
    if vocab_type == text2text.VocabType.CHARACTER:
        dataset_url, dir_name = raw_url, RAW_DIR
    else:
        dataset_url, dir_name = tokens_url, TOKENS_DIR
    corpus_dir = download.maybe_download_and_extract(
        tmp_dir, os.path.basename(dataset_url), dataset_url, os.path.join(tmp_dir, dir_name))
    found = {}
    for path in sorted(glob.glob(os.path.join(corpus_dir, "*"))):
        fname = os.path.basename(path)
        for split in ("train", "valid", "test"):
            if split in fname:
                found[split] = path
                break
    missing = [split for split in ("train", "valid", "test") if split not in found]
    if missing:
        raise download.DownloadError(
            "wikitext103: no %s file in %s; delete it and %s to download them again"
            % (missing[0], corpus_dir, os.path.basename(dataset_url)))
    return found["train"], found["valid"], found["test"]


@registry.register_problem
class LanguagemodelWikitext103(text2text.Text2SelfProblem):
    """Wikitext103 dataset token-level."""

    # T2T's; a subclass or instance may point them elsewhere (tests: a local server).
    tokens_url = TOKENS_URL
    raw_url = RAW_URL

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1},
                {"split": spaces.DatasetSplit.TEST, "shards": 1}]

    @property
    def is_generate_per_split(self):
        return True

    @property
    def vocab_type(self):
        return text2text.VocabType.TOKEN

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        # Not a generator: the training split writes the vocabulary before it is read.
        train_file, valid_file, test_file = _maybe_download_corpus(
            tmp_dir, self.vocab_type, (self.tokens_url, self.raw_url))
        filepath = {spaces.DatasetSplit.TRAIN: train_file, spaces.DatasetSplit.EVAL: valid_file,
                    spaces.DatasetSplit.TEST: test_file}[dataset_split]
        if self.vocab_type == text2text.VocabType.TOKEN:
            # T2T built it for the training split only, so a dev-only run had none; any split.
            _build_vocab(train_file, data_dir, self.vocab_filename)

        def _generate_samples():
            with tf.io.gfile.GFile(filepath) as f:
                for line in f:
                    line = " ".join(line.split())
                    if line:
                        yield {"targets": line}

        return _generate_samples()


@registry.register_problem
class LanguagemodelWikitext103Characters(LanguagemodelWikitext103):
    """Wikitext-103, character-level."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER


@registry.register_problem
class LanguagemodelWikitext103L4k(LanguagemodelWikitext103):
    """Wikitext-103, token-level, with examples up to 4,096 tokens long.

    Consecutive lines are joined while they stay under `sequence_length` words; a line
    longer than that is an example of its own. (T2T wrote an empty example when the first
    line was that long and dropped the last words of each split.)
    """

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        samples_by_line = super().generate_samples(data_dir, tmp_dir, dataset_split)

        def _generate_samples():
            tokens = []
            for sample in samples_by_line:
                sample_tokens = sample["targets"].split()
                if len(tokens) + len(sample_tokens) < self.sequence_length:
                    tokens.extend(sample_tokens)
                    continue
                if tokens:
                    yield {"targets": " ".join(tokens)}
                tokens = sample_tokens
            if tokens:
                yield {"targets": " ".join(tokens)}

        return _generate_samples()

    def max_length(self, model_hparams):
        return model_hparams.split_to_length or self.sequence_length

    @property
    def sequence_length(self):
        """Length of each example (in tokens)."""
        return 4096


@registry.register_problem
class LanguagemodelWikitext103L16k(LanguagemodelWikitext103L4k):
    """Wikitext-103, token-level, with examples up to 16,384 tokens long."""

    @property
    def sequence_length(self):
        """Length of each example (in tokens)."""
        return 16384
