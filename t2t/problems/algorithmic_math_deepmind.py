"""The DeepMind Mathematics Dataset (T2T 1.15.7's `algorithmic_math_deepmind`).

Saxton et al., github.com/deepmind/mathematics_dataset. `algorithmic_math_deepmind_all`
downloads `mathematics_dataset-v1.0.tar.gz` into --tmp_dir, extracts it once and reads

    mathematics_dataset-v1.0/train-{easy,medium,hard}/*.txt   -> 128 training shards
    mathematics_dataset-v1.0/{interpolate,extrapolate}/*.txt  -> 1 dev shard

each file being question and answer lines in turn:

    Solve -42*r + 27*c = -1167 and 130*r + 4*c = 372 for r.
    4                        ->  {"inputs": "Solve -42*r + ... for r.", "targets": "4"}

byte-encoded (ids = byte + 2, EOS appended). Folders and files are read in sorted order.
An archive, or its extracted folder, already in --tmp_dir is used without a download.
"""
import glob
import os

import tensorflow as tf

from t2t.core import download
from t2t.core import registry
from t2t.problems import spaces
from t2t.problems import text2text

# T2T had https://storage.cloud.google.com/..., the console's address, which asks a browser
# to sign in; this is the same public object's direct address.
_URL = "https://storage.googleapis.com/mathematics-dataset/mathematics_dataset-v1.0.tar.gz"
DATASET_DIR = "mathematics_dataset-v1.0"
_T2T_DATASET_DIR = "v1.0"  # where T2T looked; a folder placed there by hand is still read
TRAIN_DIRS = ("train-easy", "train-medium", "train-hard")
EVAL_DIRS = ("interpolate", "extrapolate")


def _dataset_root(tmp_dir, url):
    """The extracted dataset folder in `tmp_dir`, downloading and extracting it if needed."""
    archive = os.path.join(tmp_dir, os.path.basename(url))
    old_root = os.path.join(tmp_dir, _T2T_DATASET_DIR)
    root = os.path.join(tmp_dir, DATASET_DIR)
    if not os.path.exists(root) and not os.path.exists(archive) and os.path.isdir(old_root):
        return old_root
    return download.maybe_download_and_extract(tmp_dir, os.path.basename(url), url, root)


def question_answer_pairs(path):
    """Yield (question, answer) of a dataset file: its lines in pairs, stripped.

        list(question_answer_pairs("algebra__linear_1d.txt"))  # [("Solve 3*x = 6 for x.", "2")]
    """
    question = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if question is None:
                question = line.strip()
            else:
                yield question, line.strip()
                question = None
    if question is not None:
        raise ValueError("%s ends with a question without an answer; delete it and its "
                         "archive to download them again" % path)


@registry.register_problem
class AlgorithmicMathDeepmindAll(text2text.Text2TextProblem):
    """DeepMind Mathematics Problem, v1.0, all data (every module and difficulty)."""

    # A subclass or instance may point it elsewhere (tests: a local server).
    url = _URL

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 128},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def is_generate_per_split(self):
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """{"inputs": question, "targets": answer} of the split's folders, in sorted order."""
        tf.io.gfile.makedirs(tmp_dir)
        tf.io.gfile.makedirs(data_dir)
        root = _dataset_root(tmp_dir, self.url)
        dirs = TRAIN_DIRS if dataset_split == spaces.DatasetSplit.TRAIN else EVAL_DIRS
        files = [path for d in dirs for path in sorted(glob.glob(os.path.join(root, d, "*.txt")))]
        if not files:
            raise download.DownloadError(
                "%s has no %s/*.txt files; delete it (and its archive) to download them again"
                % (root, "{%s}" % ",".join(dirs)))

        def samples():
            for path in files:
                for question, answer in question_answer_pairs(path):
                    yield {"inputs": question, "targets": answer}

        return samples()
