"""The shared base of T2T 1.15.7's chatbot problems (`dialog_abstract`): `DialogAbstract`.

A dialog problem turns each dialog of a corpus into utterance pairs (utterance i as
inputs, utterance i + 1 as targets), writes them as T2T's six text files in `data_dir`
(`trainSource.txt`, `trainTarget.txt`, `devSource.txt`, `devTarget.txt`, `testSource.txt`,
`testTarget.txt`) with a word vocabulary `vocab.chatbot.<targeted_vocab_size>`, and then
the TFRecords of each split (one shard each) from those files. A subclass names its
download and yields the pairs of each dialog:

    class MyDialogs(DialogAbstract):
        URL = "http://example.com/dialogs.zip"
        ZIPPED_DATA = "dialogs.zip"          # saved in tmp_dir
        RAW_DATA = "dialogs"                 # the folder the archive holds

        def dialogs(self, raw_data):
            for line in open(os.path.join(raw_data, "dialogs.txt")):
                utterances = [self.clean_line(u.lower()) for u in line.split("|")]
                yield consecutive_pairs(utterances), utterances

Dialogs are split in turn, 80 of every 100 to train, 10 to dev, 10 to test
(`dataset_split`); the vocabulary counts the words of the training dialogs' vocabulary
texts (the second item yielded): `<pad>`, `<EOS>`, the `targeted_vocab_size - 3` most
common words, `<unk>`. Files already in `data_dir` are used as they are (delete them to
rebuild); an archive or its extracted folder already in `tmp_dir` is not downloaded.
"""
import collections
import os
import re

from absl import logging
import tensorflow as tf

from t2t.core import atomic_files
from t2t.core import download
from t2t.core import errors
from t2t.encoders import text_encoder
from t2t.evaluation import metrics
from t2t.problems import spaces
from t2t.problems import text2text as text_problems

EOS = text_encoder.EOS_ID

# T2T's file names: <mode>Source.txt / <mode>Target.txt, mode per split.
MODES = {spaces.DatasetSplit.TRAIN: "train", spaces.DatasetSplit.EVAL: "dev",
         spaces.DatasetSplit.TEST: "test"}
_VOCAB_RESERVED = ("<pad>", "<EOS>")
_OOV = "<unk>"


def consecutive_pairs(utterances):
    """[(u0, u1), (u1, u2), ...] of a dialog's utterances: consecutive_pairs("abc") -> ab, bc."""
    return list(zip(utterances[:-1], utterances[1:]))


def source_target_paths(data_dir, mode):
    """(data_dir/<mode>Source.txt, data_dir/<mode>Target.txt); mode train, dev or test."""
    return (os.path.join(data_dir, mode + "Source.txt"),
            os.path.join(data_dir, mode + "Target.txt"))


class DialogAbstract(text_problems.Text2TextProblem):
    """Utterance -> next utterance over a dialog corpus, a word vocabulary (T2T's base)."""

    URL = ""          # where the archive is downloaded from
    ZIPPED_DATA = ""  # the archive's file name in raw_data_dir(tmp_dir)
    RAW_DATA = ""     # the folder (under extract_dir) the archive holds

    # -- Subclass interface ----------------------------------------------------

    def dialogs(self, raw_data):
        """Yield (pairs, vocab_texts) per dialog of the extracted corpus `raw_data`."""
        raise NotImplementedError("dialog problem %s must define dialogs(raw_data)" % self.name)

    def raw_data_dir(self, tmp_dir):
        """The folder the archive is downloaded to (T2T: a `raw_data` beside data_dir)."""
        return tmp_dir

    def extract_dir(self, tmp_dir):
        """The folder the archive is extracted into."""
        return self.raw_data_dir(tmp_dir)

    def raw_data(self, tmp_dir):
        """The extracted corpus: the folder RAW_DATA in extract_dir(tmp_dir)."""
        return os.path.join(self.extract_dir(tmp_dir), self.RAW_DATA)

    # -- T2T's properties ------------------------------------------------------

    @property
    def vocab_type(self):
        return text_problems.VocabType.TOKEN

    @property
    def is_generate_per_split(self):
        return True

    @property
    def vocab_filename(self):
        return "vocab.chatbot." + str(self.targeted_vocab_size)

    @property
    def vocab_file(self):
        return self.vocab_filename

    @property
    def oov_token(self):
        return _OOV

    @property
    def use_subword_tokenizer(self):
        return False

    @property
    def input_space_id(self):
        return spaces.SpaceID.EN_TOK

    @property
    def target_space_id(self):
        return spaces.SpaceID.EN_TOK

    @property
    def targeted_vocab_size(self):
        return 2**14

    @property
    def targeted_dataset_size(self):
        """How many utterance pairs to write in all; 0 for the whole corpus."""
        return 0

    @property
    def dataset_split(self):
        return {"train": 80, "val": 10, "test": 10}

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 1},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1},
                {"split": spaces.DatasetSplit.TEST, "shards": 1}]

    def eval_metrics(self):
        return [metrics.Metrics.ACC, metrics.Metrics.ACC_TOP5, metrics.Metrics.ACC_PER_SEQ,
                metrics.Metrics.NEG_LOG_PERPLEXITY, metrics.Metrics.APPROX_BLEU]

    # -- The pipeline ----------------------------------------------------------

    def _data_files(self, data_dir):
        paths = [p for mode in MODES.values() for p in source_target_paths(data_dir, mode)]
        return paths + [os.path.join(data_dir, self.vocab_file)]

    def split_mode(self, dialog_number):
        """"train", "dev" or "test" for the dialog_number-th dialog (from 1), in turns of 100."""
        position = (dialog_number - 1) % 100 + 1
        if position <= self.dataset_split["train"]:
            return "train"
        if position <= self.dataset_split["train"] + self.dataset_split["val"]:
            return "dev"
        return "test"

    def download_and_extract(self, tmp_dir):
        """The extracted corpus folder, downloading and extracting the archive once."""
        if not tmp_dir:
            raise errors.UserError("problem %s needs tmp_dir for its download %s; pass "
                                   "--tmp_dir" % (self.name, self.ZIPPED_DATA))
        raw_data_dir = self.raw_data_dir(tmp_dir)
        extract_dir = self.extract_dir(tmp_dir)
        raw_data = self.raw_data(tmp_dir)
        archive = os.path.join(raw_data_dir, self.ZIPPED_DATA)
        if os.path.exists(raw_data) and not os.path.exists(archive):
            return raw_data
        download.maybe_download(raw_data_dir, self.ZIPPED_DATA, self.URL)
        download.maybe_extract(archive, extract_dir)
        if not os.path.isdir(raw_data):
            raise download.DownloadError("%s holds no %s; delete it to download it again"
                                         % (archive, self.RAW_DATA))
        return raw_data

    def preprocess_data(self, data_dir, tmp_dir):
        """Write the six text files and the vocabulary into data_dir, unless all are there."""
        if all(os.path.isfile(path) for path in self._data_files(data_dir)):
            logging.info("%s: source, target and vocab files exist in %s; delete them to "
                         "rebuild", self.name, data_dir)
            return
        self.create_data(data_dir, self.download_and_extract(tmp_dir))

    def create_data(self, data_dir, raw_data):
        """Split the dialogs of `raw_data` into the six files; count and save the vocab."""
        lines = {path: [] for path in self._data_files(data_dir)[:-1]}
        vocabulary = collections.Counter()
        number_of_pairs = 0
        limit = self.targeted_dataset_size
        for number, (pairs, vocab_texts) in enumerate(self.dialogs(raw_data), 1):
            mode = self.split_mode(number)
            if mode == "train":
                for text in vocab_texts:
                    vocabulary.update(text.split())
            source_path, target_path = source_target_paths(data_dir, mode)
            if limit:
                pairs = pairs[:limit - number_of_pairs]
            for source, target in pairs:
                lines[source_path].append(source + "\n")
                lines[target_path].append(target + "\n")
            number_of_pairs += len(pairs)
            if limit and number_of_pairs >= limit:
                break
        tf.io.gfile.makedirs(data_dir)
        for path, path_lines in lines.items():
            with atomic_files.atomic_write(path, "w", encoding="utf-8") as handle:
                handle.write("".join(path_lines))
        self.save_vocab(data_dir, vocabulary)
        logging.info("%s: %d utterance pairs written to %s", self.name, number_of_pairs, data_dir)

    def save_vocab(self, data_dir, vocab):
        """data_dir/vocab_file: <pad>, <EOS>, the most common words of `vocab`, <unk>."""
        words = [word for word, _ in vocab.most_common(self.targeted_vocab_size - 3)]
        tokens = list(_VOCAB_RESERVED) + words + [_OOV]
        with atomic_files.atomic_write(os.path.join(data_dir, self.vocab_file), "w",
                                       encoding="utf-8") as handle:
            handle.write("\n".join(tokens))

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        self.preprocess_data(data_dir, tmp_dir)
        super().generate_data(data_dir, tmp_dir, task_id)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """{"inputs": utterance, "targets": the next} from data_dir/<mode>{Source,Target}.txt."""
        self.preprocess_data(data_dir, tmp_dir)
        return text_problems.text2text_txt_iterator(
            *source_target_paths(data_dir, MODES[dataset_split]))

    def clean_line(self, line):
        """T2T's cleaning of a lower-cased line: keep a-z 0-9 . ? ! ', split punctuation off.

            clean_line("don't go there!") -> "do n't go there ! "
        """
        line = re.sub("[^a-z .?!'0-9]", "", line)
        line = re.sub("[.]", " . ", line)
        line = re.sub("[?]", " ? ", line)
        line = re.sub("[!]", " ! ", line)
        line = re.sub("[ ]'[ ]", " ", line)
        line = re.sub(" '[a-z]", lambda match: match.group(0).replace("'", ""), line)
        line = re.sub("n't", " n't", line)
        line = re.sub("[^ n]'[^ t]", lambda match: match.group(0).replace("'", " '"), line)
        return line
