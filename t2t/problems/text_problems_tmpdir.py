"""Problems over the user's own files in --tmp_dir: train without writing a Problem.

    t2t-datagen --problem=text2text_tmpdir --tmp_dir=~/my_text --data_dir=~/t2t_data
    # reads ~/my_text/{inputs,targets}.{train,eval}.txt, one example per line

    t2t-datagen --problem=text2text_tmpdir_tsv --tmp_dir=~/my_text ...
    # reads ~/my_text/{train,eval}.tsv, "input<TAB>target" lines

Re-exported by `t2t.problems.text_problems` under T2T's names.
"""
import os

import tensorflow as tf

from t2t.core import errors, registry
from t2t.encoders import text_encoder, text_lines
from t2t.problems import spaces, text2text


def _require_file(problem_name, path, contents):
    if not tf.io.gfile.exists(path):
        raise errors.UserError("%s: %s is missing; put %s there (or pass the folder that holds "
                               "it as --tmp_dir)" % (problem_name, path, contents))
    return path


@registry.register_problem
class Text2textTmpdir(text2text.Text2TextProblem):
    """Train on your own parallel text without defining a Problem.

    Put into tmp_dir, one example per line (line i of inputs pairs with line i of
    targets): inputs.train.txt, targets.train.txt, inputs.eval.txt, targets.eval.txt.
    """
    TRAIN_FILES = ("inputs.train.txt", "targets.train.txt")
    EVAL_FILES = ("inputs.eval.txt", "targets.eval.txt")

    @property
    def is_generate_per_split(self):
        return True

    @property
    def _tmp_dir_override(self):
        return None

    def _split_files(self, tmp_dir, names):
        folder = self._tmp_dir_override or tmp_dir
        return [_require_file(self.name, os.path.join(folder, name),
                              "one %s sentence per line" % name.split(".")[0][:-1])
                for name in names]

    def check_files(self, tmp_dir):
        """UserError unless the inputs and targets files of each split have as many lines:
        line i of one pairs with line i of the other, so one extra or missing line would
        shift every pair after it (T2T paired them silently)."""
        for names in (self.TRAIN_FILES, self.EVAL_FILES):
            inputs_file, targets_file = self._split_files(tmp_dir, names)
            inputs_lines = text_lines.count_lines(inputs_file)
            targets_lines = text_lines.count_lines(targets_file)
            if inputs_lines != targets_lines:
                raise errors.UserError(
                    "%s: %s has %d lines but %s has %d; line i of one pairs with line i of "
                    "the other, so find the extra or missing line (nothing was written)" % (
                        self.name, inputs_file, inputs_lines, targets_file, targets_lines))

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        self.check_files(tmp_dir)  # before the vocab or any shard is written
        super().generate_data(data_dir, tmp_dir, task_id)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        is_training = dataset_split == spaces.DatasetSplit.TRAIN
        inputs_file, targets_file = self._split_files(
            tmp_dir, self.TRAIN_FILES if is_training else self.EVAL_FILES)
        return text2text.text2text_txt_iterator(inputs_file, targets_file)


class Text2TextRemotedir(Text2textTmpdir):
    """Text2textTmpdir reading from SRC_REMOTE_DIR (e.g. a gs:// bucket) instead."""
    SRC_REMOTE_DIR = None  # set in a subclass

    @property
    def _tmp_dir_override(self):
        if not self.SRC_REMOTE_DIR:
            raise ValueError("%s must set SRC_REMOTE_DIR" % type(self).__name__)
        return self.SRC_REMOTE_DIR


@registry.register_problem
class Text2textTmpdirTokens(Text2textTmpdir):
    """Text2textTmpdir with a word vocabulary from tmp_dir/vocab.txt (one token a line).

    PAD, EOS and the OOV token "<UNK>" are added for you.
    """

    @property
    def vocab_type(self):
        return text2text.VocabType.TOKEN

    @property
    def oov_token(self):
        return "<UNK>"

    def _generate_vocab(self, tmp_dir):
        vocab_path = _require_file(self.name, os.path.join(tmp_dir, "vocab.txt"),
                                   "your vocabulary, one token per line")
        vocab_list = [self.oov_token]
        vocab_list.extend(line.strip() for line in text_lines.read_lines(vocab_path)
                          if line.strip())
        return text_encoder.TokenTextEncoder(None, vocab_list=vocab_list)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        vocab_path = os.path.join(data_dir, self.vocab_filename)
        if not tf.io.gfile.exists(vocab_path):
            tf.io.gfile.makedirs(data_dir)
            self._generate_vocab(tmp_dir).store_to_file(vocab_path)
        return super().generate_samples(data_dir, tmp_dir, dataset_split)


@registry.register_problem("text2text_tmpdir_tsv")
class Text2textTmpdirTsv(Text2textTmpdir):
    """Train on your own parallel text in two TSV files in tmp_dir.

    train.tsv and eval.tsv hold one "input<TAB>target" pair per line; lines with
    no tab are skipped (see `text2text_txt_tab_iterator` for the warning and the limit).
    A subword vocabulary is built from train.tsv.
    """
    TRAIN_FILE = "train.tsv"
    EVAL_FILE = "eval.tsv"

    def _split_file(self, tmp_dir, name):
        return _require_file(self.name, os.path.join(self._tmp_dir_override or tmp_dir, name),
                             "one input<TAB>target pair per line")

    def check_files(self, tmp_dir):
        """The UserError or warning of `text2text_txt_tab_iterator` for lines without a tab
        or with more than one, before anything is written."""
        for name in (self.TRAIN_FILE, self.EVAL_FILE):
            text2text.check_tsv_file(self._split_file(tmp_dir, name))

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        is_training = dataset_split == spaces.DatasetSplit.TRAIN
        return text2text.text2text_txt_tab_iterator(
            self._split_file(tmp_dir, self.TRAIN_FILE if is_training else self.EVAL_FILE))


