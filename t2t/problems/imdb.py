"""IMDB movie-review sentiment classification (T2T 1.15.7's `imdb`).

    t2t-datagen --problem=sentiment_imdb --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads `aclImdb_v1.tar.gz` (Maas et al. 2011, 84 MB) from ai.stanford.edu into --tmp_dir
and extracts it; each review is one file,

    aclImdb/train/pos/<id>_<stars>.txt   aclImdb/train/neg/...   (25,000: train)
    aclImdb/test/pos/...                 aclImdb/test/neg/...    (25,000: dev)

and one example `{"inputs": ids of the review + [EOS], "targets": [label]}`, label 1 for
pos and 0 for neg (`class_labels` is ["neg", "pos"]). The vocabulary,
`vocab.sentiment_imdb.8192.subwords`, is built from the training reviews; `aclImdb/train/unsup`
is not read. An archive or an extracted `aclImdb` folder in --tmp_dir is used as it is.
"""
import os

from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import sentiment
from t2t.problems import spaces
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)


@registry.register_problem
class SentimentIMDB(sentiment.BinarySentimentProblem):
    """IMDB sentiment classification: review -> neg (0) / pos (1)."""
    # T2T's; a subclass or instance may point it elsewhere (tests: a local server).
    URL = "http://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"

    @property
    def approx_vocab_size(self):
        return 2**13  # 8k vocab suffices for this small dataset.

    def doc_generator(self, imdb_dir, dataset, include_label=False):
        """The reviews of `dataset` ("train" or "test"): pos first, then neg.

        Yields the text, or (text, is_positive) with include_label. Files are read in
        sorted order (T2T took os.listdir's, which differs between file systems).
        """
        dirs = [(os.path.join(imdb_dir, dataset, "pos"), True),
                (os.path.join(imdb_dir, dataset, "neg"), False)]
        for directory, label in dirs:
            for filename in sorted(os.listdir(directory)):
                with open(os.path.join(directory, filename), encoding="utf-8") as imdb_f:
                    doc = imdb_f.read().strip()
                yield (doc, label) if include_label else doc

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """{"inputs": review, "label": 0 or 1}; train reads aclImdb/train, dev aclImdb/test."""
        del data_dir
        imdb_dir = download.maybe_download_and_extract(
            tmp_dir, os.path.basename(self.URL), self.URL, os.path.join(tmp_dir, "aclImdb"))
        dataset = "train" if dataset_split == spaces.DatasetSplit.TRAIN else "test"
        for doc, label in self.doc_generator(imdb_dir, dataset, include_label=True):
            yield {"inputs": doc, "label": int(label)}


@registry.register_problem
class SentimentIMDBCharacters(sentiment.CharacterSentimentMixin, SentimentIMDB):
    """IMDB sentiment classification, character level."""
