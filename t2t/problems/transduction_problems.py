"""Sequence transduction problems (T2T 1.15.7's `transduction_problems`).

The benchmarks of Grefenstette et al., "Learning to Transduce with Unbounded Memory"
(arXiv:1506.02516): random sequences of the tokens `sym_1 ... sym_<num_symbols>` and what
an algorithm makes of them. Evaluation sequences are longer than training ones, to test
generalisation:

    copy_sequence          "sym_3 sym_9 sym_1" -> "sym_3 sym_9 sym_1"
    reverse_sequence       "sym_3 sym_9 sym_1" -> "sym_1 sym_9 sym_3"
    flip_bi_gram_sequence  "sym_1 sym_2 sym_3 sym_4" -> "sym_2 sym_1 sym_4 sym_3" (even lengths)

| problem                               | symbols | train: length, samples | dev: length, samples |
|---------------------------------------|---------|------------------------|----------------------|
| copy_sequence, reverse_sequence       | 128     | 8-64, 1,000,000        | 65-128, 10,000       |
| flip_bi_gram_sequence                 | 128     | 8-64 (even), 1,000,000 | 66-128 (even), 10,000|
| copy_sequence_small, reverse_sequence_small | 64 | 4-16, 100,000          | 17-32, 10,000        |

Files: `<name>-train-000{00..09}-of-00010`, `<name>-dev-00000-of-00001` and the token
vocabulary `vocab.<name>.tokens` ("<pad>", "<EOS>", then the symbols in string order:
sym_1, sym_10, sym_100, ...), written on first use. Sequences are drawn with the global
`random` (t2t-datagen's --random_seed).
"""
import os
import random

import tensorflow as tf

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import spaces
from t2t.problems import text2text

MAX_GENERATOR_ATTEMPTS = 100  # T2T's module constant (unused there too).

_TRAIN, _EVAL, _TEST = (spaces.DatasetSplit.TRAIN, spaces.DatasetSplit.EVAL,
                        spaces.DatasetSplit.TEST)


class TransductionProblem(text2text.Text2TextProblem):
    """Base class: `transpose_sequence(tokens)` gives a sequence's target tokens."""

    def __init__(self, was_reversed=False, was_copy=False):
        # T2T passed False for both, so `copy_sequence_rev` was not reversed.
        super().__init__(was_reversed=was_reversed, was_copy=was_copy)
        self.vocab = self.build_vocab()

    @property
    def num_symbols(self):
        """How many distinct tokens a sequence is made of."""
        return 128

    def min_sequence_length(self, dataset_split):
        return {_TRAIN: 8, _EVAL: 65, _TEST: 65}[dataset_split]

    def max_sequence_length(self, dataset_split):
        return {_TRAIN: 64, _EVAL: 128, _TEST: 128}[dataset_split]

    def num_samples(self, dataset_split):
        return {_TRAIN: 1000000, _EVAL: 10000, _TEST: 10000}[dataset_split]

    @property
    def num_shards(self):
        """Training shards (one dev shard)."""
        return 10

    @property
    def dataset_splits(self):
        return [{"split": _TRAIN, "shards": self.num_shards}, {"split": _EVAL, "shards": 1}]

    @property
    def is_generate_per_split(self):
        # T2T's False spread the training samples over the dev shard too, so the longer
        # evaluation lengths and num_shards were never used.
        return True

    @property
    def vocab_type(self):
        return text2text.VocabType.TOKEN

    def sequence_length(self, dataset_split):
        """A length uniform in [min_sequence_length, max_sequence_length]."""
        return random.randint(self.min_sequence_length(dataset_split),
                              self.max_sequence_length(dataset_split))

    def build_vocab(self):
        """["sym_1", ..., "sym_<num_symbols>"]."""
        return ["sym_%d" % i for i in range(1, self.num_symbols + 1)]

    def get_or_create_vocab(self, data_dir, tmp_dir, force_get=False):
        """The TokenTextEncoder of `data_dir/vocab.<name>.tokens`, written if missing."""
        del tmp_dir, force_get
        vocab_path = self._vocab_path(data_dir)
        if tf.io.gfile.exists(vocab_path):
            return text_encoder.TokenTextEncoder(vocab_path, replace_oov=self.oov_token)
        encoder = text_encoder.TokenTextEncoder(None, vocab_list=sorted(self.vocab))
        tf.io.gfile.makedirs(data_dir)
        encoder.store_to_file(vocab_path)
        return encoder

    def generate_random_sequence(self, dataset_split):
        return [random.choice(self.vocab) for _ in range(self.sequence_length(dataset_split))]

    def transpose_sequence(self, input_sequence):
        raise NotImplementedError("%s must define transpose_sequence" % type(self).__name__)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """`num_samples(split)` {"inputs": "sym_a sym_b ...", "targets": "..."}."""
        del data_dir, tmp_dir
        for _ in range(self.num_samples(dataset_split)):
            source = self.generate_random_sequence(dataset_split)
            yield {"inputs": " ".join(source),
                   "targets": " ".join(self.transpose_sequence(source))}


class _SmallSequences:
    """64 symbols; train 4-16 tokens (100k samples), dev and test 17-32 (10k)."""

    @property
    def num_symbols(self):
        return 64

    def min_sequence_length(self, dataset_split):
        return {_TRAIN: 4, _EVAL: 17, _TEST: 17}[dataset_split]

    def max_sequence_length(self, dataset_split):
        return {_TRAIN: 16, _EVAL: 32, _TEST: 32}[dataset_split]

    def num_samples(self, dataset_split):
        return {_TRAIN: 100000, _EVAL: 10000, _TEST: 10000}[dataset_split]


@registry.register_problem
class CopySequence(TransductionProblem):
    """Reproduce the sequence: "sym_3 sym_9" -> "sym_3 sym_9"."""

    def transpose_sequence(self, input_sequence):
        return input_sequence


@registry.register_problem
class CopySequenceSmall(_SmallSequences, CopySequence):
    """CopySequence over 64 symbols and shorter sequences."""


@registry.register_problem
class ReverseSequence(TransductionProblem):
    """Reverse the sequence: "sym_3 sym_9" -> "sym_9 sym_3"."""

    def transpose_sequence(self, input_sequence):
        return input_sequence[::-1]


@registry.register_problem
class ReverseSequenceSmall(_SmallSequences, ReverseSequence):
    """ReverseSequence over 64 symbols and shorter sequences."""


@registry.register_problem
class FlipBiGramSequence(TransductionProblem):
    """Swap each pair of tokens: "sym_1 sym_2 sym_3 sym_4" -> "sym_2 sym_1 sym_4 sym_3"."""

    def sequence_length(self, dataset_split):
        """An even length in [min_sequence_length, max_sequence_length]."""
        low = self.min_sequence_length(dataset_split)
        high = self.max_sequence_length(dataset_split)
        low += low % 2
        high -= high % 2
        if low > high:
            raise ValueError("%s: no even length in [%d, %d] for split %s; widen the range"
                             % (self.name, self.min_sequence_length(dataset_split),
                                self.max_sequence_length(dataset_split), dataset_split))
        length = random.randint(low, high)  # T2T's draw: an odd one rounds down
        return length - length % 2

    def transpose_sequence(self, input_sequence):
        flipped = list(input_sequence)
        flipped[0::2], flipped[1::2] = input_sequence[1::2], input_sequence[0::2]
        return flipped
