"""Subject-verb agreement (Linzen et al. 2016; T2T 1.15.7's `subject_verb_agreement`).

    t2t-datagen --problem=sva_number_prediction --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads `agr_50_mostcommon_10K.tsv.gz` from tallinzen.net into --tmp_dir (a copy already
there is used): one sentence a row, with its verb's 1-based `verb_index` and tag `verb_pos`
(VBZ singular, VBP plural) and counts of the nouns between subject and verb. The rows are
shuffled with `random.Random(1)`; the first 9% are train, the next 1% dev, and of the rest
the rows whose intervening nouns all differ in number (`n_intervening ==
n_diff_intervening`) are test (1, 1 and 10 shards).

| problem               | example                                                        |
|-----------------------|----------------------------------------------------------------|
| sva_number_prediction | `{"inputs": ids of the words before the verb + [EOS], "targets": [0 VBZ / 1 VBP]}` |
| sva_language_modeling | `{"targets": ids of the words up to the verb + [EOS]}`         |

The token vocabulary `vocab.<problem>.tokens` is "<pad>", "<EOS>" and every word of the
file, most frequent first.
"""
import csv
import gzip
import os
import random

from absl import logging

from t2t.core import download
from t2t.core import registry
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import ptb
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

_FILE_NAME = "agr_50_mostcommon_10K"
_TAR = _FILE_NAME + ".tsv.gz"
_URL = "http://tallinzen.net/media/rnn_agreement/" + _TAR
_LABEL_DICT = {"VBZ": 0, "VBP": 1}


def load_examples(tmp_dir, prop_train=0.09, prop_val=0.01, url=_URL):
    """(all rows, train, dev, test): each row a dict, digit strings as ints."""
    infile = download.maybe_download(tmp_dir, _TAR, url)
    logging.info("Loading examples")
    with gzip.open(infile, "rt", encoding="utf-8", newline="") as rows:
        all_examples = [{x: int(y) if y.isdigit() else y for x, y in row.items()}
                        for row in csv.DictReader(rows, delimiter="\t")]
    # T2T reseeded the global `random` with 1; its own Random(1) shuffles the same way.
    random.Random(1).shuffle(all_examples)
    n_train = int(len(all_examples) * prop_train)
    n_val = n_train + int(len(all_examples) * prop_val)
    test = [e for e in all_examples[n_val:] if e["n_intervening"] == e["n_diff_intervening"]]
    return all_examples, all_examples[:n_train], all_examples[n_train:n_val], test


class _SvaData:
    """The splits, proportions and vocabulary both problems share."""

    # T2T's; a subclass or instance may point it elsewhere (tests: a local server).
    url = _URL

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        """This is the setup of the main paper. 10% train/ 90% eval."""
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 1},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1},
                {"split": spaces.DatasetSplit.TEST, "shards": 10}]

    @property
    def train_proportion(self):
        return 0.09

    @property
    def validation_proportion(self):
        return 0.01

    @property
    def vocab_type(self):
        return text2text.VocabType.TOKEN

    def _split_examples(self, data_dir, tmp_dir, dataset_split):
        """The split's rows (the vocabulary of every sentence written first)."""
        all_examples, train, val, test = load_examples(
            tmp_dir, self.train_proportion, self.validation_proportion, self.url)
        ptb.build_vocab_from_words(
            (word for e in all_examples for word in e["sentence"].split()), data_dir,
            self.vocab_filename)
        return {spaces.DatasetSplit.TRAIN: train, spaces.DatasetSplit.EVAL: val,
                spaces.DatasetSplit.TEST: test}[dataset_split]


@registry.register_problem
class SvaNumberPrediction(_SvaData, text2text.Text2ClassProblem):
    """Subject verb agreement as verb number predicion (binary classification)."""

    @property
    def num_classes(self):
        return 2

    def class_labels(self, data_dir):
        del data_dir
        return ["VBZ", "VBP"]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        # Not a generator: the vocabulary is written before generate_encoded_samples reads it.
        examples = self._split_examples(data_dir, tmp_dir, dataset_split)
        return ({"inputs": " ".join(e["sentence"].split()[:int(e["verb_index"]) - 1]),
                 "label": _LABEL_DICT[e["verb_pos"]]} for e in examples)

    def eval_metrics(self):
        return ["accuracy"]


@registry.register_problem
class SvaLanguageModeling(_SvaData, text2text.Text2SelfProblem):
    """Subject verb agreement as language modelling: the sentence up to its verb."""

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        examples = self._split_examples(data_dir, tmp_dir, dataset_split)
        return ({"targets": " ".join(e["sentence"].split()[:int(e["verb_index"])])}
                for e in examples)
