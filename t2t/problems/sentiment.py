"""What T2T's sentiment problems (`sentiment_imdb`, `sentiment_sst_binary`, the Yelp ones) share.

    class SentimentFoo(sentiment.BinarySentimentProblem):   # neg (0) / pos (1),
        def generate_samples(self, data_dir, tmp_dir, dataset_split):  # 10 train shards, 1 dev
            yield {"inputs": "a fine film", "label": 1}

    class SentimentFooCharacters(sentiment.CharacterSentimentMixin, SentimentFoo): ...

    class SentimentYelpFoo(sentiment.YelpReviewProblem):    # fast.ai's Yelp CSV archives
        URL = "https://s3.amazonaws.com/fast-ai-nlp/yelp_review_foo_csv.tgz"
        NUM_STARS = 3                                       # classes "1", "2", "3" -> ids 0..2
"""
import csv
import os

import tensorflow as tf

from t2t.core import download
from t2t.core import errors
from t2t.problems import spaces
from t2t.problems import text2text


class BinarySentimentProblem(text2text.Text2ClassProblem):
    """Text -> neg (0) / pos (1); per split, 10 training shards and 1 dev shard (T2T's)."""

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def num_classes(self):
        return 2

    def class_labels(self, data_dir):
        del data_dir
        return ["neg", "pos"]


class CharacterSentimentMixin(text2text.CharactersMixin):
    """The character-level variant: bytes instead of subwords, T2T's EN_CHR_SENT task id."""
    CHARACTERS_TASK_ID = spaces.TaskID.EN_CHR_SENT


class YelpReviewProblem(text2text.Text2ClassProblem):
    """A review -> its star class, from one of fast.ai's Yelp CSV archives (T2T's `yelp_*`).

    `URL`'s archive `<name>.tgz` holds `<name>/train.csv` (training) and `<name>/test.csv`
    (dev), one `"<stars>","<review>"` row each, stars 1..`NUM_STARS`; the classes are
    "1".."NUM_STARS" and a review of s stars has label id s - 1. 10 training shards, 1 dev
    shard, an 8k vocabulary.

        next(problem.generate_samples(None, tmp_dir, spaces.DatasetSplit.EVAL))
        # -> {"inputs": 'Great "tacos".', "label": 1}   for the row "2","Great ""tacos""."
    """
    URL = None
    NUM_STARS = None

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def approx_vocab_size(self):
        return 2**13  # 8k vocab suffices for this small dataset.

    @property
    def num_classes(self):
        return self.NUM_STARS

    def class_labels(self, data_dir):
        del data_dir
        return [str(stars) for stars in range(1, self.NUM_STARS + 1)]

    def doc_generator(self, yelp_dir, dataset, include_label=False):
        """The reviews of `<yelp_dir>/<dataset>.csv` in file order: text, or (text, stars)."""
        file_path = os.path.join(yelp_dir, dataset + ".csv")
        with tf.io.gfile.GFile(file_path, "r") as yelp_f:
            for row_number, row in enumerate(csv.reader(yelp_f), start=1):
                if len(row) != 2 or row[0] not in self.class_labels(None):
                    raise errors.UserError("%s row %d: %r is not \"<stars 1..%d>\",\"<review>\""
                                     % (file_path, row_number, row[:2], self.NUM_STARS))
                doc = row[1].strip()
                yield (doc, int(row[0])) if include_label else doc

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """{"inputs": review, "label": stars - 1}; train reads train.csv, dev test.csv."""
        del data_dir
        archive = os.path.basename(self.URL)
        folder = archive[:-len(".tgz")] if archive.endswith(".tgz") else archive
        yelp_dir = download.maybe_download_and_extract(tmp_dir, archive, self.URL,
                                                       os.path.join(tmp_dir, folder))
        dataset = "train" if dataset_split == spaces.DatasetSplit.TRAIN else "test"
        for doc, stars in self.doc_generator(yelp_dir, dataset, include_label=True):
            yield {"inputs": doc, "label": stars - 1}
