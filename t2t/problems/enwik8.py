"""Byte-level language models on enwik8 (T2T's `enwik8`).

`t2t-datagen --problem=enwik8_l65k` downloads `enwik8.zip` (mattmahoney.net, the first
10^8 bytes of an English Wikipedia XML dump) into --tmp_dir, extracts the file `enwik8`
once and splits its bytes the standard way: all but the last 10M bytes for training, then
5M for dev and the last 5M for test. Examples are `{"targets": ids}` of `sequence_length`
bytes (the last one of a split may be shorter), without EOS:

    train: windows starting every sequence_length / 4 bytes (each byte in ~4 examples)
    dev, test: consecutive, non-overlapping chunks

| problem                        | sequence_length  | ids                                   |
|--------------------------------|------------------|---------------------------------------|
| enwik8_l65k                    | 65,536           | byte + 2 (ByteTextEncoder's)          |
| enwik8_l{32k,16k,8k,4k,2k,1k,512} | 32,768 ... 512 | the raw bytes 0-255, not shifted   |

(T2T on the unshifted ids: "we do not assume cls or pad are used".)

Files: `<name>-train-000{00..15}-of-00016`, `<name>-dev-00000-of-00001`,
`<name>-test-00000-of-00001`. The archive, or the extracted `enwik8`, already in --tmp_dir
is used without a download.
"""
import os

from absl import logging
import tensorflow as tf

from t2t.core import download
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import spaces
from t2t.problems import text2text

ENWIK8_URL = "http://mattmahoney.net/dc/enwik8.zip"
CORPUS_FILENAME = "enwik8"


def _maybe_download_corpus(tmp_dir, url=ENWIK8_URL):
    """The path of the extracted corpus `tmp_dir/enwik8`, downloaded and extracted once."""
    return download.maybe_download_and_extract(
        tmp_dir, os.path.basename(url), url, os.path.join(tmp_dir, CORPUS_FILENAME))


def split_bytes(data, dataset_split, num_test_bytes):
    """The part of `data` a split reads: train all but the last 2 * num_test_bytes, dev the
    next num_test_bytes, test the last num_test_bytes.

        split_bytes(b"abcdefgh", "eval", 2)   # b"ef" (the dev part)
    """
    if len(data) <= 2 * num_test_bytes:
        raise ValueError("enwik8: the corpus has %d bytes, too few for two held-out parts of "
                         "%d; delete it and enwik8.zip to download them again"
                         % (len(data), num_test_bytes))
    parts = {spaces.DatasetSplit.TRAIN: data[:-2 * num_test_bytes],
             spaces.DatasetSplit.EVAL: data[-2 * num_test_bytes:-num_test_bytes],
             spaces.DatasetSplit.TEST: data[-num_test_bytes:]}
    if dataset_split not in parts:
        raise ValueError("enwik8: undefined dataset_split %r; use train, eval or test"
                         % (dataset_split,))
    return parts[dataset_split]


@registry.register_problem
class Enwik8L65k(text2text.Text2SelfProblem):
    """Enwik8, with examples of up to 65,536 bytes, ids shifted past PAD and EOS."""

    DUPE_FACTOR = 4
    # Bytes held out for dev and for test (T2T's local constant).
    NUM_TEST_BYTES = 5000000
    # A subclass or instance may point it elsewhere (tests: a local server).
    url = ENWIK8_URL

    @property
    def is_generate_per_split(self):
        return True

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER

    def global_task_id(self):
        return spaces.TaskID.EN_CHR

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 16},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1},
                {"split": spaces.DatasetSplit.TEST, "shards": 1}]

    def max_length(self, model_hparams):
        return self.sequence_length

    @property
    def sequence_length(self):
        """Length of each example, in bytes."""
        return 65536

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """{"targets": bytes} windows of the split (see the module docstring)."""
        del data_dir
        with tf.io.gfile.GFile(_maybe_download_corpus(tmp_dir, self.url), "rb") as f:
            data = f.read()
        logging.info("Length of enwik8 = %d", len(data))
        part = split_bytes(data, dataset_split, self.NUM_TEST_BYTES)
        logging.info("Length of split '%s' = %d", dataset_split, len(part))
        length = self.sequence_length
        step = length // self.DUPE_FACTOR if dataset_split == spaces.DatasetSplit.TRAIN else length
        if step < 1:
            raise ValueError("%s: sequence_length %d is below DUPE_FACTOR %d; raise it"
                             % (self.name, length, self.DUPE_FACTOR))

        def samples():
            for start in range(0, len(part), step):
                yield {"targets": part[start:start + length]}

        return samples()

    def encode_bytes(self, chunk):
        """The ids of a chunk of bytes: ByteTextEncoder's, byte + 2."""
        return [b + text_encoder.NUM_RESERVED_TOKENS for b in chunk]

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        for sample in self.generate_samples(data_dir, tmp_dir, dataset_split):
            yield {"targets": self.encode_bytes(sample["targets"])}


@registry.register_problem
class Enwik8L2k(Enwik8L65k):
    """Enwik8, with examples of up to 2,048 bytes; the ids are the bytes, not shifted."""

    @property
    def sequence_length(self):
        return 2048

    def encode_bytes(self, chunk):
        return list(chunk)


@registry.register_problem
class Enwik8L32k(Enwik8L2k):
    """Examples of up to 32,768 bytes, unshifted."""

    @property
    def sequence_length(self):
        return 32768


@registry.register_problem
class Enwik8L16k(Enwik8L2k):
    """Examples of up to 16,384 bytes, unshifted."""

    @property
    def sequence_length(self):
        return 16384


@registry.register_problem
class Enwik8L8k(Enwik8L2k):
    """Examples of up to 8,192 bytes, unshifted."""

    @property
    def sequence_length(self):
        return 8192


@registry.register_problem
class Enwik8L4k(Enwik8L2k):
    """Examples of up to 4,096 bytes, unshifted."""

    @property
    def sequence_length(self):
        return 4096


@registry.register_problem
class Enwik8L1k(Enwik8L2k):
    """Examples of up to 1,024 bytes, unshifted."""

    @property
    def sequence_length(self):
        return 1024


@registry.register_problem
class Enwik8L512(Enwik8L2k):
    """Examples of up to 512 bytes, unshifted."""

    @property
    def sequence_length(self):
        return 512
