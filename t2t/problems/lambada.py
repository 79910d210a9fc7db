"""LAMBADA as a language model and as reading comprehension (T2T 1.15.7's `lambada`).

    t2t-datagen --problem=lambada_lm --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads `lambada-dataset.tar.gz` (Paperno et al. 2016, 334 MB) from clic.cimec.unitn.it
into --tmp_dir, extracts it and the `train-novels.tar` inside, and reads

    train-novels/<genre>/<book>.txt                  (train: the novels, one passage a line)
    lambada_development_plain_text.txt               (dev)
    lambada_test_plain_text.txt                      (test)
    lambada_control_test_data_plain_text.txt         (dev of the _control problems; no test)

| problem            | example                                                        |
|--------------------|----------------------------------------------------------------|
| lambada_lm         | `{"targets": ids of the line + [EOS]}`                         |
| lambada_rc         | `{"inputs": ids of all words but the last + [EOS], "targets": [id of the last word]}` |
| lambada_*_control  | the same, evaluated on the control set                         |

Each problem writes its token vocabulary `vocab.<problem>.tokens`: "<UNK>" (id 0, the word
unknown words become) and the first 60,000 words of the archive's `lambada-vocab-2.txt`
(word<TAB>count, most frequent first), without reserved tokens. lambada_rc's class labels
are words of that vocabulary, so both sides share it. An archive, or the extracted files, in
--tmp_dir are used as they are.
"""
import csv
import glob
import os

import tensorflow as tf

from t2t.core import atomic_files
from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

_UNK = "<UNK>"
_TAR = "lambada-dataset.tar.gz"
_URL = "http://clic.cimec.unitn.it/lambada/" + _TAR
_VOCAB = "lambada-vocab-2.txt"
_TRAIN_TAR = "train-novels.tar"


def _prepare_lambada_data(tmp_dir, data_dir, vocab_size, vocab_filename, url=_URL):
    """Download and extract the corpus (once) and write the vocabulary unless it exists."""
    tf.io.gfile.makedirs(data_dir)
    download.maybe_download_and_extract(tmp_dir, _TAR, url, os.path.join(tmp_dir, _VOCAB))
    train_tar = os.path.join(tmp_dir, _TRAIN_TAR)
    if os.path.isfile(train_tar):
        download.maybe_extract(train_tar, tmp_dir)
    elif not os.path.isdir(os.path.join(tmp_dir, "train-novels")):
        raise download.DownloadError(
            "lambada: %s has neither %s nor its train-novels folder; delete %s to download "
            "it again" % (tmp_dir, _TRAIN_TAR, _TAR))
    vocab_path = os.path.join(data_dir, vocab_filename)
    if not tf.io.gfile.exists(vocab_path):
        # csv's reader, as T2T read it (a quote character starts a quoted field).
        with tf.io.gfile.GFile(os.path.join(tmp_dir, _VOCAB)) as infile:
            words = [row[0] for row in csv.reader(infile, delimiter="\t")]
        with atomic_files.atomic_write(vocab_path, "w") as outfile:
            outfile.write("\n".join([_UNK] + words[:vocab_size]))


def get_dataset_split(tmp_dir, split, use_control_set):
    """The files of `split`: the training novels, or the dev/test (control) set."""
    train = sorted(glob.glob(os.path.join(tmp_dir, "train-novels/*/*.txt")))
    if use_control_set:
        dataset_split = {
            spaces.DatasetSplit.TRAIN: train,
            spaces.DatasetSplit.EVAL: [
                os.path.join(tmp_dir, "lambada_control_test_data_plain_text.txt")],
        }
    else:
        dataset_split = {
            spaces.DatasetSplit.TRAIN: train,
            spaces.DatasetSplit.EVAL: [
                os.path.join(tmp_dir, "lambada_development_plain_text.txt")],
            spaces.DatasetSplit.TEST: [os.path.join(tmp_dir, "lambada_test_plain_text.txt")],
        }
    return dataset_split[split]


class _LambadaData:
    """What both LAMBADA tasks share: splits, token vocabulary, where the data comes from."""

    # T2T's; a subclass or instance may point it elsewhere (tests: a local server).
    url = _URL

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        splits = [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                  {"split": spaces.DatasetSplit.EVAL, "shards": 1}]
        if not self.use_control_set:  # the control set is a dev set only
            splits.append({"split": spaces.DatasetSplit.TEST, "shards": 1})
        return splits

    @property
    def vocab_type(self):
        return text2text.VocabType.TOKEN

    @property
    def vocab_size(self):
        # Similar to the setup of the main paper.
        return 60000

    @property
    def oov_token(self):
        return _UNK

    @property
    def use_control_set(self):
        """If evaluate on control set."""
        return False

    def _split_lines(self, data_dir, tmp_dir, dataset_split):
        """The lines of `dataset_split`'s files, split into words (the vocabulary written)."""
        _prepare_lambada_data(tmp_dir, data_dir, self.vocab_size, self.vocab_filename,
                              self.url)
        files = get_dataset_split(tmp_dir, dataset_split, self.use_control_set)

        def _lines():
            for filepath in files:
                with tf.io.gfile.GFile(filepath) as f:
                    for line in f:
                        yield line.split()

        return _lines()


@registry.register_problem
class LambadaLm(_LambadaData, text2text.Text2SelfProblem):
    """Lambada as language modeling task."""

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        # Not a generator: the vocabulary is written before generate_encoded_samples reads it.
        lines = self._split_lines(data_dir, tmp_dir, dataset_split)
        return ({"targets": " ".join(words)} for words in lines)


@registry.register_problem
class LambadaLmControl(LambadaLm):
    """Lambada as language modeling task on control dataset."""

    @property
    def use_control_set(self):
        # T2T overrode `control_set`, which nothing reads, so it evaluated on the dev set.
        return True


@registry.register_problem
class LambadaRc(_LambadaData, text2text.Text2ClassProblem):
    """Lambada as reading comprehension task: the passage -> its last word."""

    def get_labels_encoder(self, data_dir):
        """The class labels' encoder: the words of the problem's vocabulary."""
        label_filepath = os.path.join(data_dir, self.vocab_filename)
        return text_encoder.TokenTextEncoder(label_filepath, replace_oov=self.oov_token)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        # A blank line has no word to predict (T2T's IndexError): it is skipped.
        lines = self._split_lines(data_dir, tmp_dir, dataset_split)
        return ({"inputs": " ".join(words[:-1]), "label": words[-1]} for words in lines if words)

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        generator = self.generate_samples(data_dir, tmp_dir, dataset_split)
        txt_encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        label_encoder = self.get_labels_encoder(data_dir)
        for sample in generator:
            inputs = txt_encoder.encode(sample["inputs"]) + [text_encoder.EOS_ID]
            yield {"inputs": inputs, "targets": label_encoder.encode(sample["label"])}

    def feature_encoders(self, data_dir):
        txt_encoder = self.get_or_create_vocab(data_dir, None, force_get=True)
        return {"inputs": txt_encoder, "targets": self.get_labels_encoder(data_dir)}

    def hparams(self, defaults, unused_model_hparams):
        p = defaults
        p.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
        p.vocab_size = {"inputs": self._encoders["inputs"].vocab_size,
                        "targets": self._encoders["targets"].vocab_size}


@registry.register_problem
class LambadaRcControl(LambadaRc):
    """Lambada as reading comprehension task on control dataset."""

    @property
    def use_control_set(self):
        # As LambadaLmControl: T2T's `control_set` was never read.
        return True
