"""What T2T's GLUE-style classification problems (`multinli`, `mrpc`, `qnli`, `rte`, `cola`,
`scitail`, `wnli`, `stanford_nli`, `quora_qpairs`) share: a zip extracted in --tmp_dir, a
train and a dev file of tab-separated rows, class names listed in id order.

    class Foo(glue.SentencePairProblem):          # ["a", "b"] -> "a $ b" + [EOS] -> class id
        CLASS_LABELS = ("not_entailment", "entailment")
        TRAIN_SHARDS, APPROX_VOCAB_SIZE = 10, 2**13
        ZIP_NAME, DATA_DIR = "FOO.zip", "FOO"     # the download's name, its extracted folder
        def _corpus_url(self): return self._FOO_URL
        def example_generator(self, filename):      # glue.IndexedPairProblem's, for
            for lineno, (_, s1, s2, label) in glue.tsv_rows(filename, 4):   # index, s1, s2, label
                yield {"inputs": [s1, s2], "label": self.label_id(filename, lineno, label)}

    class FooCharacters(text2text.CharactersMixin, Foo):
        CHARACTERS_TASK_ID = spaces.TaskID.EN_NLI

A row that has not the columns its file should is an error naming the file and the line
(T2T's tuple unpacking raised a bare "too many values to unpack").
"""
import os

import tensorflow as tf

from t2t.core import download
from t2t.core import errors
from t2t.encoders import escaping
from t2t.problems import spaces
from t2t.problems import text2text


def tsv_rows(filename, num_fields=None, skip_header=True, min_fields=None):
    """(line number, [fields]) of each line of `filename`, stripped, split at tabs.

    A line of other than `num_fields` fields (or fewer than `min_fields`) raises a UserError
    (a ValueError; t2t-datagen's one-line error, exit 2) naming the file and line. The first
    line is a header unless `skip_header=False`.
    """
    with tf.io.gfile.GFile(filename, "rb") as lines:
        for index, line in enumerate(lines):
            if skip_header and index == 0:
                continue
            fields = escaping.to_unicode_utf8(line.strip()).split("\t")
            if num_fields is not None and len(fields) != num_fields:
                raise bad_row(filename, index + 1, fields, "expected %d" % num_fields)
            if min_fields is not None and len(fields) < min_fields:
                raise bad_row(filename, index + 1, fields, "expected %d or more" % min_fields)
            yield index + 1, fields


def bad_row(filename, lineno, fields, expected):
    """The UserError for a row of the wrong number of fields."""
    return errors.UserError("%s line %d: %d tab-separated fields, %s: %r"
                      % (filename, lineno, len(fields), expected, "\t".join(fields)[:80]))


def int_label(filename, lineno, label, num_classes=2):
    """`label`, a class id written as digits (`0`, `1`); another value raises UserError."""
    if label not in [str(i) for i in range(num_classes)]:
        raise errors.UserError("%s line %d: label %r is not one of %s" % (
            filename, lineno, label, ", ".join(str(i) for i in range(num_classes))))
    return int(label)


def both_orders(first, second, label):
    """The pair in both orders, one example each (Radford et al. 2018's augmentation)."""
    for inputs in ([first, second], [second, first]):
        yield {"inputs": inputs, "label": label}


class GlueClassProblem(text2text.Text2ClassProblem):
    """A text -> class problem over `DATA_DIR/{TRAIN_FILE,DEV_FILE}` of a zip in --tmp_dir.

    Generated per split: `TRAIN_SHARDS` training shards, one dev shard; dev reads DEV_FILE.
    """
    CLASS_LABELS = ()
    TRAIN_SHARDS = 10
    APPROX_VOCAB_SIZE = 2**13
    ZIP_NAME = None
    DATA_DIR = None
    TRAIN_FILE = "train.tsv"
    DEV_FILE = "dev.tsv"

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": self.TRAIN_SHARDS},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def approx_vocab_size(self):
        return self.APPROX_VOCAB_SIZE

    @property
    def num_classes(self):
        return len(self.CLASS_LABELS)

    def class_labels(self, data_dir):
        del data_dir
        return list(self.CLASS_LABELS)

    def label_id(self, filename, lineno, label):
        """The id of class name `label`; an unknown one is a UserError naming the line."""
        labels = self.class_labels(data_dir=None)
        if label not in labels:
            raise errors.UserError("%s line %d: label %r is not one of %s"
                             % (filename, lineno, label, ", ".join(labels)))
        return labels.index(label)

    def _corpus_url(self):
        raise NotImplementedError("%s must define _corpus_url" % type(self).__name__)

    def _maybe_download_corpora(self, tmp_dir):
        """tmp_dir/DATA_DIR, ZIP_NAME downloaded and extracted if that folder is missing."""
        return download.maybe_download_and_extract(
            tmp_dir, self.ZIP_NAME, self._corpus_url(), os.path.join(tmp_dir, self.DATA_DIR))

    def example_generator(self, filename):
        raise NotImplementedError("%s must define example_generator" % type(self).__name__)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """TRAIN_FILE's examples for training, DEV_FILE's for every other split."""
        del data_dir
        corpus_dir = self._maybe_download_corpora(tmp_dir)
        name = self.TRAIN_FILE if dataset_split == spaces.DatasetSplit.TRAIN else self.DEV_FILE
        yield from self.example_generator(os.path.join(corpus_dir, name))


class SentencePairProblem(GlueClassProblem, text2text.TextConcat2ClassProblem):
    """Two texts -> class: `{"inputs": [first, second], "label": id}`, encoded as T2T's
    `first $ second` (CONCAT_TOKEN between them) + [EOS]."""


class IndexedPairProblem(SentencePairProblem):
    """Rows `index<TAB>first<TAB>second<TAB>label` after a header (GLUE's QNLI, RTE, WNLI)."""

    def example_generator(self, filename):
        for lineno, (_, first, second, label) in tsv_rows(filename, 4):
            yield {"inputs": [first, second], "label": self.label_id(filename, lineno, label)}
