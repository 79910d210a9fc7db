"""GitHub functions and their docstrings (T2T 1.15.7's `function_docstring`).

    t2t-datagen --problem=github_function_docstring --data_dir=~/t2t_data \\
        --tmp_dir=/tmp/t2t_datagen

copies the 100 CSV files `func-doc-pairs-000{00..99}-of-00100.csv` of Kubeflow's code search
example from `gs://kubeflow-examples/t2t-code-search/raw_data` into --tmp_dir (a file
already there is used as it is) and reads each row, two columns and no header,

    "docstring tokens","function tokens"

as one example `{"inputs": docstring, "targets": function, "embed_code": [0]}`: a subword
vocabulary of ~2**13 (`vocab.github_function_docstring.8192.subwords`, from at most 350,000
samples), 100 training shards and one dev shard, the samples spread over both. Outside
training `embed_code` is [0] (the flag Kubeflow's similarity model reads: embed the
docstring, not the code). A subclass points `base_url` at another copy (an http(s) URL,
a local folder or another bucket).
"""
import csv

import tensorflow as tf
from absl import logging

from t2t.core import download
from t2t.core import errors
from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.evaluation import metrics
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)


def _csv_pairs(filename):
    """(docstring, function) of each row of `filename`; a blank line is skipped, and a row
    of other than two columns is a UserError naming the file and the line."""
    with open(filename, "r", encoding="utf-8", newline="") as csv_file:
        reader = csv.reader(csv_file)
        for row in reader:
            if not row:
                continue
            if len(row) != 2:
                raise errors.UserError(
                    "%s line %d: %d comma-separated columns, expected 2 (docstring tokens, "
                    "function tokens): %r" % (filename, reader.line_num, len(row),
                                              ",".join(row)[:80]))
            yield row[0], row[1]


@registry.register_problem
class GithubFunctionDocstring(text2text.Text2TextProblem):
    """Function and Docstring similarity Problem.

    The data are function and docstring pairs as CSV files of two columns, no header:
    the docstring's tokens and the function's tokens, "," between them.
    """

    NUM_SHARDS = 100

    @property
    def base_url(self):
        return "gs://kubeflow-examples/t2t-code-search/raw_data"

    @property
    def pair_files_list(self):
        """[url, (file name,)] of each of the NUM_SHARDS CSV files (T2T's layout)."""
        files = []
        for i in range(self.NUM_SHARDS):
            name = "func-doc-pairs-%05d-of-%05d.csv" % (i, self.NUM_SHARDS)
            files.append(["%s/%s" % (self.base_url, name), (name,)])
        return files

    @property
    def is_generate_per_split(self):
        return False

    @property
    def approx_vocab_size(self):
        return 2**13

    @property
    def max_samples_for_vocab(self):
        return int(3.5e5)  # T2T's cap, against running out of memory

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """{"inputs": docstring tokens, "targets": function tokens, "embed_code": [0]} of
        each row of every CSV file (downloaded into tmp_dir first, all of them)."""
        del data_dir, dataset_split  # one stream, spread over train and dev
        csv_files = [download.maybe_download(tmp_dir, names[0], url)
                     for url, names in self.pair_files_list]
        for pairs_file in csv_files:
            logging.debug("Reading %s", pairs_file)
            for docstring_tokens, function_tokens in _csv_pairs(pairs_file):
                yield {"inputs": docstring_tokens, "targets": function_tokens,
                       "embed_code": [0]}

    def preprocess_example(self, example, mode, hparams):
        """The common preprocessing (truncation, ...; T2T's skipped it), then embed_code
        [0] outside training."""
        example = super().preprocess_example(example, mode, hparams)
        if mode == ModeKeys.TRAIN:
            return example

        def docstring_only(ex):
            ex["embed_code"] = tf.constant([0], tf.int64)
            return ex

        if isinstance(example, tf.data.Dataset):  # hparams.split_to_length
            return example.map(docstring_only)
        return docstring_only(example)

    def eval_metrics(self):
        return [metrics.Metrics.ACC]
