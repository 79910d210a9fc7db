"""OpenAI's Description2Code: a programming problem's description -> a solution
(T2T 1.15.7's `desc2code`).

    t2t-datagen --problem=programming_desc2code_py --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads `description2code_current.zip` from Google Drive into --tmp_dir and extracts
`description2code_current/`, where each problem (CodeChef's and CodeForces', 5,228 in all)
is a folder holding

    description/description.txt      the problem statement
    solutions_python/*.txt           Python solutions (programming_desc2code_py)
    solutions_c++/*.txt              C++ solutions (programming_desc2code_cpp)

A problem with a solution folder of the language is a sample; each of its solutions is one
example `{"inputs": description ids + [EOS], "targets": solution ids + [EOS]}`. Solutions
holding another language's marker (`#include`, `import java.` for Python; `import java.`
for C++) are left out. The problems are sorted, shuffled by `random.Random(7531)` and
split: the first 1/25 is dev, the rest train. Python solutions have tabs replaced by four
spaces; C++ ones lose `//` comments and have all white space runs made one space.

Two subword vocabularies: `vocab.endefr.32768` for the descriptions and `vocab.py.4096` /
`vocab.cpp.4096` for the code, each built from the training split (a file already in
--data_dir is used as it is). The zip, or the extracted folder, in --tmp_dir is used as it is.

    samples = list(generator_samples(tmp_dir, PB_PY))  # CodingPbInfo(desc_file, code_files)
"""
import collections
import os
import random
import re

import tensorflow as tf
from absl import logging

from t2t.core import download
from t2t.core import errors
from t2t.core import registry
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

# End-of-sentence marker.
EOS = text_encoder.EOS_ID

# T2T's; a test may point it at a local server.
_DATASET_URL = "https://drive.google.com/uc?export=download&id=0Bz3fihKG133ceWNFQTQ5S0xhZUk"
_DATASET_FILENAME = "description2code_current.zip"
_DATASET_PB_PATH = "description2code_current/"

_DESC_DIR_NAME = "description"

_VOCAB_EN_FILENAME = "vocab.endefr"

_RE_CPP_INLINE_COMMENT = re.compile("//.*?\n")  # Compiled once

# The seed of the train/dev split (T2T's).
_SPLIT_SEED = 7531

# Constant defined for a language problem
CodingPbConstants = collections.namedtuple("CodingPbConstants", [
    "code_dir_name",
    "vocab_filename",
    "filter_patterns",
    "target_space",
])

PB_PY = CodingPbConstants(
    code_dir_name="solutions_python",
    vocab_filename="vocab.py",
    filter_patterns=["#include", "# include", "import java."],
    target_space=spaces.SpaceID.PY_TOK,
)
PB_CPP = CodingPbConstants(
    code_dir_name="solutions_c++",
    vocab_filename="vocab.cpp",
    filter_patterns=["import java."],
    target_space=spaces.SpaceID.CPP_TOK,
)

# Struct containing a coding problem (contains the paths to the descriptions
# and code files)
CodingPbInfo = collections.namedtuple("CodingPbInfo", "desc_file, code_files")


def _read_text(path):
    """A file's text; the dataset is scraped, so bytes that are not UTF-8 become U+FFFD."""
    with tf.io.gfile.GFile(path, "rb") as handle:
        return handle.read().decode("utf-8", errors="replace")


def _dataset_root(tmp_dir):
    """tmp_dir/description2code_current, downloaded and extracted unless already there."""
    data_rootdir = os.path.join(tmp_dir, _DATASET_PB_PATH)
    zip_path = os.path.join(tmp_dir, _DATASET_FILENAME)
    if tf.io.gfile.isdir(data_rootdir) and not tf.io.gfile.exists(zip_path):
        logging.info("Data already extracted in: %s", data_rootdir)
        return data_rootdir
    zip_path = download.maybe_download_from_drive(tmp_dir, _DATASET_FILENAME, _DATASET_URL)
    download.maybe_extract(zip_path, tmp_dir)
    if not tf.io.gfile.isdir(data_rootdir):
        raise download.DownloadError("%s holds no %s; delete the zip to download it again"
                                     % (zip_path, _DATASET_PB_PATH))
    return data_rootdir


def generator_samples(tmp_dir, pb_cst):
    """A CodingPbInfo for each problem folder with `pb_cst.code_dir_name`, in walk order.

    Downloads and extracts the dataset first if it is not in tmp_dir. `code_files` are the
    sorted solution files without any of `pb_cst.filter_patterns` (the dataset is noisy:
    the language is judged from the content); it may be empty.
    """
    # CodeChef's and CodeForces' problems are merged (there are few of them).
    for subdir, dirs, _ in tf.io.gfile.walk(_dataset_root(tmp_dir)):
        if _DESC_DIR_NAME not in dirs or pb_cst.code_dir_name not in dirs:
            continue
        desc_file = os.path.join(subdir, _DESC_DIR_NAME, "description.txt")
        if not tf.io.gfile.exists(desc_file):
            raise errors.UserError("%s is missing: a problem folder with %s/ needs its "
                                   "statement there" % (desc_file, _DESC_DIR_NAME))
        pattern = os.path.join(subdir, pb_cst.code_dir_name, "*.txt")
        code_files = [path for path in sorted(tf.io.gfile.glob(pattern))
                      if not any(p in _read_text(path) for p in pb_cst.filter_patterns)]
        yield CodingPbInfo(desc_file=desc_file, code_files=code_files)


class Desc2CodeProblem(text2text.Text2TextProblem):
    """Base class for Description2Code problems: `pb_constants` names the language."""

    @property
    def pb_constants(self):
        raise NotImplementedError("%s names no language; subclass it with pb_constants "
                                  "PB_PY or PB_CPP" % type(self).__name__)

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def input_vocab_size(self):
        return 2**15  # 32k

    @property
    def target_vocab_size(self):
        return 2**12  # 4k

    @property
    def vocab_input_filename(self):
        return "{}.{}".format(_VOCAB_EN_FILENAME, self.input_vocab_size)

    @property
    def vocab_target_filename(self):
        return "{}.{}".format(self.pb_constants.vocab_filename, self.target_vocab_size)

    @property
    def is_generate_per_split(self):
        return True

    def preprocess_target(self, target):
        """The code's text as it is trained on (a subclass strips tabs, comments, ...)."""
        return target

    def feature_encoders(self, data_dir):
        encoders = {}
        for feature, filename in (("inputs", self.vocab_input_filename),
                                  ("targets", self.vocab_target_filename)):
            path = os.path.join(data_dir, filename)
            if not tf.io.gfile.exists(path):
                raise errors.UserError("vocabulary %s of problem %s is missing; run "
                                       "t2t-datagen --problem=%s --data_dir=%s first"
                                       % (path, self.name, self.name, data_dir))
            encoders[feature] = text_encoder.SubwordTextEncoder(path)
        return encoders

    def split_samples(self, tmp_dir, dataset_split):
        """The CodingPbInfo of `dataset_split`'s problems: sorted, shuffled, 1/25 dev."""
        samples = sorted(generator_samples(tmp_dir, self.pb_constants),
                         key=lambda sample: sample.desc_file)
        random.Random(_SPLIT_SEED).shuffle(samples)
        # Train: 5019/5228 problems, dev: 209/5228.
        split = len(samples) // 25
        train = dataset_split == spaces.DatasetSplit.TRAIN
        chosen = samples[split:] if train else samples[:split]
        logging.info("Number of samples for %s: %d/%d", "train" if train else "dev",
                     len(chosen), len(samples))
        return chosen

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """{"inputs": description, "targets": preprocessed solution}, one per solution."""
        del data_dir
        for sample in self.split_samples(tmp_dir, dataset_split):
            if not sample.code_files:
                continue
            source = _read_text(sample.desc_file).strip()
            for code_file in sample.code_files:
                yield {"inputs": source,
                       "targets": self.preprocess_target(_read_text(code_file)).strip()}

    def get_or_create_vocabs(self, data_dir, tmp_dir):
        """(description encoder, code encoder), each built from the training split unless
        its file is in data_dir."""
        def texts(feature):
            seen = set()
            for sample in self.generate_samples(data_dir, tmp_dir, spaces.DatasetSplit.TRAIN):
                if feature == "targets" or sample["inputs"] not in seen:
                    seen.add(sample["inputs"])
                    yield sample[feature]

        return tuple(generator_utils.get_or_generate_vocab_inner(
            data_dir=data_dir, vocab_filename=filename, vocab_size=size,
            generator=texts(feature))
            for feature, filename, size in (
                ("inputs", self.vocab_input_filename, self.input_vocab_size),
                ("targets", self.vocab_target_filename, self.target_vocab_size)))

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        source_vocab, target_vocab = self.get_or_create_vocabs(data_dir, tmp_dir)
        for sample in self.generate_samples(data_dir, tmp_dir, dataset_split):
            yield {"inputs": source_vocab.encode(sample["inputs"]) + [EOS],
                   "targets": target_vocab.encode(sample["targets"]) + [EOS]}


@registry.register_problem
class ProgrammingDesc2codePy(Desc2CodeProblem):
    """Description2Code for python problem."""

    @property
    def pb_constants(self):
        return PB_PY

    def preprocess_target(self, target):
        """Simple tab to space replacement."""
        return target.replace("\t", "    ")


@registry.register_problem
class ProgrammingDesc2codeCpp(Desc2CodeProblem):
    """Description2Code for C++ problem."""

    @property
    def pb_constants(self):
        return PB_CPP

    def preprocess_target(self, target):
        """`//` comments removed (also inside a string; `/* */` kept), white space runs
        made one space."""
        target = _RE_CPP_INLINE_COMMENT.sub(" ", target)
        return " ".join(target.split())
