"""Stanford Sentiment Treebank, binary (GLUE's SST-2; T2T 1.15.7's `sst_binary`).

    t2t-datagen --problem=sentiment_sst_binary --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads GLUE's `SST-2.zip` into --tmp_dir (saved under that name; T2T's URL, a Firebase
link) and extracts it to `SST-2/`, whose `train.tsv` (67,349 sentences) and `dev.tsv` (872)
hold a `sentence<TAB>label` header and then one `sentence<TAB>0|1` line each. Each line is
one example `{"inputs": ids + [EOS], "targets": [label]}` (`class_labels` ["neg", "pos"]);
`test.tsv` has no labels and is not read. The vocabulary is
`vocab.sentiment_sst_binary.16384.subwords`. An `SST-2` folder or `SST-2.zip` in --tmp_dir is
used as it is.
"""
import os

import tensorflow as tf

from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import escaping
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import sentiment
from t2t.problems import spaces
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

# T2T's module-level name: the EOS token's string.
EOS = text_encoder.EOS


@registry.register_problem
class SentimentSSTBinary(sentiment.BinarySentimentProblem):
    """Stanford Sentiment Treebank binary classification: sentence -> neg (0) / pos (1)."""

    # Link to data from GLUE: https://gluebenchmark.com/tasks (T2T's; a subclass or
    # instance may point it elsewhere).
    _SST2_URL = ("https://firebasestorage.googleapis.com/v0/b/"
                 "mtl-sentence-representations.appspot.com/o/"
                 "data%2FSST-2.zip?alt=media&token=aabc5f6b-e466-"
                 "44a2-b9b4-cf6337f84ac8")

    @property
    def approx_vocab_size(self):
        return 2**14

    def _maybe_download_corpora(self, tmp_dir):
        """The path of the extracted `SST-2` folder (downloaded and extracted if missing)."""
        return download.maybe_download_and_extract(tmp_dir, "SST-2.zip", self._SST2_URL,
                                                   os.path.join(tmp_dir, "SST-2"))

    def example_generator(self, filename):
        """{"inputs": sentence, "label": int} of each line after the header."""
        with tf.io.gfile.GFile(filename, "rb") as lines:
            for idx, line in enumerate(lines):
                if idx == 0:
                    continue  # the header
                line = escaping.to_unicode_utf8(line.strip())
                fields = line.split("\t")
                if len(fields) != 2:
                    raise ValueError("%s line %d: %r is not sentence<TAB>label" %
                                     (filename, idx + 1, line[:80]))
                sent, label = fields
                yield {"inputs": sent, "label": int(label)}

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """train.tsv for training, dev.tsv for everything else (test.tsv has no labels)."""
        del data_dir
        sst_binary_dir = self._maybe_download_corpora(tmp_dir)
        filesplit = "train.tsv" if dataset_split == spaces.DatasetSplit.TRAIN else "dev.tsv"
        yield from self.example_generator(os.path.join(sst_binary_dir, filesplit))


@registry.register_problem
class SentimentSSTBinaryCharacters(sentiment.CharacterSentimentMixin, SentimentSSTBinary):
    """Binary Stanford Sentiment Treebank, character level."""
