"""The Microsoft Research Paraphrase Corpus (MRPC; T2T 1.15.7's `mrpc`).

    t2t-datagen --problem=msr_paraphrase_corpus --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads three files into --tmp_dir/MRPC/, as T2T: SentEval's `msr_paraphrase_train.txt`
(4,076 pairs) and `msr_paraphrase_test.txt` (1,725) from s3.amazonaws.com, and GLUE's
`dev_ids.tsv` (the `#1 ID<TAB>#2 ID` of the 408 training pairs GLUE holds out as dev; a
Firebase URL). The corpus files hold a `Quality<TAB>#1 ID<TAB>#2 ID<TAB>#1 String<TAB>#2
String` header and then one row each. Training reads the training pairs not in dev_ids.tsv,
dev the ones in it, test the test file; each pair gives two examples, the sentences in both
orders: `{"inputs": string1 $ string2 + [EOS], "targets": [quality]}`, labels
`not_paraphrase` (0) / `paraphrase` (1). The vocabulary is
`vocab.msr_paraphrase_corpus.8192.subwords`. A file already in --tmp_dir/MRPC is not
downloaded.
"""
import os

import tensorflow as tf

from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import text_encoder
from t2t.problems import glue
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

EOS = text_encoder.EOS


@registry.register_problem
class MSRParaphraseCorpus(glue.SentencePairProblem):
    """MSR Paraphrase Identification problems."""

    # Link to data from GLUE: https://gluebenchmark.com/tasks (T2T's URLs; a subclass or
    # instance may point them elsewhere).
    DEV_IDS = ("https://firebasestorage.googleapis.com/v0/b/"
               "mtl-sentence-representations.appspot.com/o/"
               "data%2Fmrpc_dev_ids.tsv?alt=media&token=ec5c0836-31d5-"
               "48f4-b431-7480817f1adc")
    MRPC_TRAIN = ("https://s3.amazonaws.com/senteval/senteval_data/"
                  "msr_paraphrase_train.txt")
    MRPC_TEST = ("https://s3.amazonaws.com/senteval/senteval_data/"
                 "msr_paraphrase_test.txt")
    DATA_DIR = "MRPC"
    CLASS_LABELS = ("not_paraphrase", "paraphrase")
    APPROX_VOCAB_SIZE = 2**13  # 8k vocab suffices for this small dataset.

    @property
    def dataset_splits(self):
        return super().dataset_splits + [{"split": spaces.DatasetSplit.TEST, "shards": 1}]

    def _maybe_download_corpora(self, tmp_dir):
        """tmp_dir/MRPC with the three files, each downloaded unless present."""
        mrpc_dir = os.path.join(tmp_dir, self.DATA_DIR)
        tf.io.gfile.makedirs(mrpc_dir)
        for name, url in (("msr_paraphrase_train.txt", self.MRPC_TRAIN),
                          ("msr_paraphrase_test.txt", self.MRPC_TEST),
                          ("dev_ids.tsv", self.DEV_IDS)):
            download.maybe_download(mrpc_dir, name, url)
        return mrpc_dir

    def example_generator(self, filename, dev_ids, dataset_split):
        """Both orders of each pair of `dataset_split`: training skips the (id1, id2) pairs
        in `dev_ids`, dev keeps only them, test keeps every pair."""
        dev_ids = {tuple(ids) for ids in dev_ids}
        for lineno, (label, id1, id2, s1, s2) in glue.tsv_rows(filename, 5):
            is_dev = (id1, id2) in dev_ids
            if dataset_split == spaces.DatasetSplit.TRAIN and is_dev:
                continue
            if dataset_split == spaces.DatasetSplit.EVAL and not is_dev:
                continue
            yield from glue.both_orders(s1, s2, glue.int_label(filename, lineno, label))

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        mrpc_dir = self._maybe_download_corpora(tmp_dir)
        dev_ids = []
        if dataset_split == spaces.DatasetSplit.TEST:
            filesplit = "msr_paraphrase_test.txt"
        else:
            filesplit = "msr_paraphrase_train.txt"
            with tf.io.gfile.GFile(os.path.join(mrpc_dir, "dev_ids.tsv")) as rows:
                dev_ids = [row.strip().split("\t") for row in rows]
        yield from self.example_generator(os.path.join(mrpc_dir, filesplit), dev_ids,
                                          dataset_split)


@registry.register_problem
class MSRParaphraseCorpusCharacters(text2text.CharactersMixin, MSRParaphraseCorpus):
    """MSR Paraphrase Identification problems, character level."""
    CHARACTERS_TASK_ID = spaces.TaskID.EN_SIM
