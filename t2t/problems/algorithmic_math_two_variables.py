"""Mathematical Language Understanding (T2T 1.15.7's `algorithmic_math_two_variables`).

Wangperawong, "Attending to Mathematical Language with Transformers" (arXiv:1812.02825):
two variables x, y in [-1000, 1000) are assigned, in random order, and an expression in
them over {+, -, *} is evaluated. One example per line of the training file:

    y=691,x=-999,y*x:-690309    ->  {"inputs": "y=691,x=-999,y*x", "targets": "-690309"}

`algorithmic_math_two_variables` downloads `mathematical_language_understanding_train.tar.gz`
(art.wangperawong.com; about 12M lines) into --tmp_dir, extracts `symbolic_math_train.txt`
from it and writes the lines, byte-encoded (ids = byte + 2, EOS appended), over 10 training
shards and 1 dev shard (the dev shard takes every 11th line). An archive, or the extracted
text file, already in --tmp_dir is used without a download.
"""
import os

import tensorflow as tf

from t2t.core import download
from t2t.core import registry
from t2t.problems import spaces
from t2t.problems import text2text

_URL = ("https://art.wangperawong.com/mathematical_language_understanding"
        "_train.tar.gz")
TRAIN_FILENAME = "symbolic_math_train.txt"
# T2T sent a browser's User-Agent; the server refuses some clients without one.
_HEADERS = {"User-Agent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_13_1) "
                          "AppleWebKit/537.36 (KHTML, like Gecko) "
                          "Chrome/63.0.3239.132 Safari/537.36"}


def _download_mlu_data(tmp_dir, data_dir, url=_URL):
    """Download and extract the archive into `tmp_dir` (once); returns `tmp_dir`.

        _download_mlu_data("/tmp/t2t", "/data")   # /tmp/t2t/symbolic_math_train.txt exists
    """
    tf.io.gfile.makedirs(data_dir)
    archive_name = os.path.basename(url)
    text_path = os.path.join(tmp_dir, TRAIN_FILENAME)
    if os.path.exists(text_path) and not os.path.exists(os.path.join(tmp_dir, archive_name)):
        return tmp_dir  # extracted by hand
    archive = download.maybe_download(tmp_dir, archive_name, url, headers=_HEADERS)
    download.maybe_extract(archive, tmp_dir)
    if not os.path.exists(text_path):
        raise download.DownloadError("%s holds no %s; delete it to download it again"
                                     % (archive, TRAIN_FILENAME))
    return tmp_dir


def _split_line(line, path, number):
    """"prob:answer" -> (prob, answer); anything else is a one-line error."""
    problem_text, sep, answer = line.rpartition(":")
    if not sep or not problem_text:
        raise ValueError("%s line %d is %r, not 'problem:answer'; fix or delete the file"
                         % (path, number, line))
    return problem_text, answer


@registry.register_problem
class AlgorithmicMathTwoVariables(text2text.Text2TextProblem):
    """Mathematical language understanding, see arxiv.org/abs/1812.02825.

        {"inputs": "x=-995,y=210,x*x", "targets": "990025"}
    """

    # T2T's; a subclass or instance may point it elsewhere (tests: a local server).
    url = _URL

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def is_generate_per_split(self):
        return False

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """Every non-blank line of symbolic_math_train.txt as {"inputs", "targets"}."""
        del dataset_split
        tf.io.gfile.makedirs(tmp_dir)
        path = os.path.join(_download_mlu_data(tmp_dir, data_dir, self.url), TRAIN_FILENAME)

        def samples():
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    line = line.strip()
                    if line:
                        inputs, targets = _split_line(line, path, number)
                        yield {"inputs": inputs, "targets": targets}

        return samples()
