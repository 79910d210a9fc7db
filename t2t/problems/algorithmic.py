"""Algorithmic problems: copy, shift, reverse, add, multiply and sort symbol sequences.

Each generator yields raw symbols in [0, num_symbols); `AlgorithmicProblem`
shifts them by 2 (past PAD=0 and EOS=1) and appends EOS before writing:

    reverse_binary40 sample   {"inputs": [1, 0, 0], "targets": [0, 0, 1]}
    on disk                   {"inputs": [3, 2, 2, 1], "targets": [2, 2, 3, 1]}

    addition_decimal40 (little-endian digits, 10 separates the numbers):
    21 + 7 -> {"inputs": [1, 2, 10, 7], "targets": [8, 2]}

`generate_data` writes `<name>-train-0000i-of-00010` (100k examples of length
<= 40 by default) and `<name>-dev-00000-of-00001` (10k of length <= 400). Output
is deterministic given the global `random` seed (t2t-datagen's --random_seed).
Problems with `multiprocess_generate` generate each shard as its own task, seeded
by the problem name and task id, so any number of processes gives the same files.
"""
import bisect
import contextlib
import itertools
import os
import random
import shutil
import tempfile
import zlib

import numpy as np
import tensorflow as tf

from t2t.core import registry
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem
from t2t.problems import spaces


@contextlib.contextmanager
def seeded_global_random(seed):
    """Seed `random` and numpy's global state for a block, then restore both.

    Lets a generation task be deterministic by its own seed while the generators
    keep using the module-level `random` functions (as T2T's user code does).
    """
    python_state, numpy_state = random.getstate(), np.random.get_state()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        yield
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)


def own_random_stream(make_generator, seed):
    """Yield from `make_generator()` with a private `random`/numpy state seeded by `seed`.

    The global states are swapped in and out around every step, so the items do not depend
    on what else draws from the global stream, and the caller's stream is left untouched.

        list(own_random_stream(lambda: (random.random() for _ in range(2)), 7))
        # the same two numbers on every call, whatever the global seed
    """
    with seeded_global_random(seed):
        private = random.getstate(), np.random.get_state()
    generator = make_generator()
    while True:
        saved = random.getstate(), np.random.get_state()
        random.setstate(private[0])
        np.random.set_state(private[1])
        try:
            item = next(generator)
        except StopIteration:
            return
        finally:
            private = random.getstate(), np.random.get_state()
            random.setstate(saved[0])
            np.random.set_state(saved[1])
        yield item


def task_seed(name, task_id):
    """A stable seed for one generation task: crc32 of "<name>:<task_id>"."""
    return zlib.crc32(("%s:%d" % (name, task_id)).encode("utf-8"))


def _shift_and_append_eos(cases):
    """Shift every feature's symbols past the reserved ids and append EOS."""
    for case in cases:
        yield {feature: [int(i) + text_encoder.NUM_RESERVED_TOKENS for i in values] +
               [text_encoder.EOS_ID] for feature, values in case.items()}


def split_evenly(total, parts, index):
    """How many of `total` items part `index` of `parts` gets (first parts get extras)."""
    return total // parts + (1 if index < total % parts else 0)


class AlgorithmicProblem(problem.Problem):
    """Base class: subclasses give `num_symbols` and `generator`."""

    @property
    def num_symbols(self):
        raise NotImplementedError()

    def generator(self, nbr_symbols, max_length, nbr_cases):
        """Yield nbr_cases {"inputs": [symbols], "targets": [symbols]} (unshifted)."""
        raise NotImplementedError()

    @property
    def train_length(self):
        return 40

    @property
    def dev_length(self):
        return 400

    @property
    def train_size(self):
        return 100000

    @property
    def dev_size(self):
        return 10000

    @property
    def num_shards(self):
        return 10

    @property
    def num_generate_tasks(self):
        """One task per training shard plus one for the dev shard."""
        return self.num_shards + 1

    def prepare_to_generate(self, data_dir, tmp_dir):
        del tmp_dir
        tf.io.gfile.makedirs(data_dir)

    def generator_eos(self, nbr_symbols, max_length, nbr_cases):
        """`generator` output shifted by NUM_RESERVED_TOKENS with EOS appended."""
        return _shift_and_append_eos(self.generator(nbr_symbols, max_length, nbr_cases))

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        """Write the training and dev shards (one task's shard if task_id >= 0)."""
        tf.io.gfile.makedirs(data_dir)
        if self.multiprocess_generate:
            task_ids = range(self.num_generate_tasks) if task_id < 0 else [task_id]
            for task in task_ids:
                self._generate_task(data_dir, task)
            return
        # Each split draws from its own random stream, seeded from the global one (which
        # datagen seeds), so a rerun that regenerates only the dev file gets the same bytes.
        train_seed, dev_seed = random.getrandbits(31), random.getrandbits(31)
        generator_utils.generate_dataset_and_shuffle(
            own_random_stream(lambda: self.generator_eos(
                self.num_symbols, self.train_length, self.train_size), train_seed),
            self.training_filepaths(data_dir, self.num_shards, shuffled=True),
            own_random_stream(lambda: self.generator_eos(
                self.num_symbols, self.dev_length, self.dev_size), dev_seed),
            self.dev_filepaths(data_dir, 1, shuffled=True),
            shuffle=False)

    def _generate_task(self, data_dir, task_id):
        """Write one shard: train shard `task_id`, or the dev shard for the last task."""
        if not 0 <= task_id < self.num_generate_tasks:
            raise ValueError("problem %s has tasks 0..%d; got task_id %d" %
                             (self.name, self.num_generate_tasks - 1, task_id))
        if task_id < self.num_shards:
            path = self.training_filepaths(data_dir, self.num_shards, shuffled=True)[task_id]
            length, size = self.train_length, split_evenly(self.train_size, self.num_shards,
                                                            task_id)
        else:
            path = self.dev_filepaths(data_dir, 1, shuffled=True)[0]
            length, size = self.dev_length, self.dev_size
        if tf.io.gfile.exists(path):
            return  # Done by an earlier run; generation resumes shard by shard.
        with seeded_global_random(task_seed(self.dataset_filename(), task_id)):
            # Materialised inside the seeded block: generate_files may consume lazily.
            cases = list(self.generator_eos(self.num_symbols, length, size))
        generator_utils.generate_files(iter(cases), [path])

    def hparams(self, defaults, unused_model_hparams):
        p = defaults
        vocab_size = self.num_symbols + text_encoder.NUM_RESERVED_TOKENS
        p.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
        p.vocab_size = {"inputs": vocab_size, "targets": vocab_size}
        p.input_space_id = spaces.SpaceID.DIGIT_0
        p.target_space_id = spaces.SpaceID.DIGIT_1


def _random_length(max_length):
    """A length drawn uniformly from [1, max_length]."""
    return random.randint(1, max_length)


@registry.register_problem
class AlgorithmicIdentityBinary40(AlgorithmicProblem):
    """Copy a binary sequence."""

    @property
    def num_symbols(self):
        return 2

    def generator(self, nbr_symbols, max_length, nbr_cases):
        """Identity: length uniform in [1, max_length], symbols uniform in [0, nbr_symbols).

            {"inputs": [1, 0, 1], "targets": [1, 0, 1]}
        """
        for _ in range(nbr_cases):
            inputs = [random.randrange(nbr_symbols) for _ in range(_random_length(max_length))]
            yield {"inputs": inputs, "targets": inputs}


@registry.register_problem
class AlgorithmicIdentityDecimal40(AlgorithmicIdentityBinary40):
    """Copy a decimal sequence."""

    @property
    def num_symbols(self):
        return 10


@registry.register_problem
class AlgorithmicIdentityVocab95Train20Eval30(AlgorithmicIdentityBinary40):
    """Copy sequences of 95 symbols: 1M training examples of length <= 20, dev <= 30."""

    @property
    def num_symbols(self):
        return 95

    @property
    def train_length(self):
        return 20

    @property
    def dev_length(self):
        return 30

    @property
    def train_size(self):
        return 1000000

    @property
    def multiprocess_generate(self):
        return True


@registry.register_problem
class AlgorithmicShiftDecimal40(AlgorithmicProblem):
    """Add 10 to every symbol: inputs in [0, 10), targets in [10, 20)."""

    @property
    def num_symbols(self):
        return 20

    @property
    def dev_length(self):
        return 80

    def generator(self, nbr_symbols, max_length, nbr_cases):
        """Shift: {"inputs": [3, 0], "targets": [13, 10]} for nbr_symbols 20."""
        shift = 10
        for _ in range(nbr_cases):
            inputs = [random.randrange(nbr_symbols - shift)
                      for _ in range(_random_length(max_length))]
            yield {"inputs": inputs, "targets": [i + shift for i in inputs]}


@registry.register_problem
class AlgorithmicReverseBinary40(AlgorithmicProblem):
    """Reverse a binary sequence."""

    @property
    def num_symbols(self):
        return 2

    def generator(self, nbr_symbols, max_length, nbr_cases):
        """Reverse: {"inputs": [1, 0, 0], "targets": [0, 0, 1]}."""
        for _ in range(nbr_cases):
            inputs = [random.randrange(nbr_symbols) for _ in range(_random_length(max_length))]
            yield {"inputs": inputs, "targets": list(reversed(inputs))}


@registry.register_problem
class AlgorithmicReverseDecimal40(AlgorithmicReverseBinary40):
    """Reverse a decimal sequence."""

    @property
    def num_symbols(self):
        return 10


def zipf_distribution(nbr_symbols, alpha):
    """Cumulative Zipf distribution [0.0, p(0), p(0)+p(1), ..., 1.0] (nbr_symbols + 1 values).

        zipf_distribution(2, 1.0)  # [0.0, 0.666..., 1.0]
    """
    weights = np.power(np.arange(1, nbr_symbols + 1, dtype=np.float64), -alpha)
    cumulative = np.concatenate([[0.0], np.cumsum(weights)])
    return [float(x) for x in cumulative / cumulative[-1]]


def zipf_random_sample(distr_map, sample_len):
    """`sample_len` symbols in [0, len(distr_map) - 1) drawn from a `zipf_distribution`.

    T2T searched the map including its leading 0.0, which gave symbols 1..n and so
    one id past the vocabulary; here symbol i has probability distr_map[i+1] - distr_map[i].
    """
    last = len(distr_map) - 2
    return [min(bisect.bisect_right(distr_map, random.random()) - 1, last)
            for _ in range(sample_len)]


def reverse_generator_nlplike(nbr_symbols, max_length, nbr_cases, scale_std_dev=100,
                              alpha=1.5):
    """Reverse NLP-like sequences: Zipf-distributed symbols, normal lengths.

    The length is |N(max_length / 2, max_length / scale_std_dev)| + 1; symbols follow
    Zipf's law with parameter `alpha` (natural text is about 1.1-1.6).

        {"inputs": [0, 17, 2], "targets": [2, 17, 0]}
    """
    std_dev = max_length / scale_std_dev
    distr_map = zipf_distribution(nbr_symbols, alpha)
    for _ in range(nbr_cases):
        length = int(abs(random.gauss(max_length / 2, std_dev)) + 1)
        inputs = zipf_random_sample(distr_map, length)
        yield {"inputs": inputs, "targets": list(reversed(inputs))}


@registry.register_problem
class AlgorithmicReverseNlplike8k(AlgorithmicProblem):
    """Reverse NLP-like sequences over 8000 symbols (Zipf alpha 1.3), length ~35."""

    @property
    def num_symbols(self):
        return 8000

    def generator(self, nbr_symbols, max_length, nbr_cases):
        return reverse_generator_nlplike(nbr_symbols, max_length, nbr_cases, 10, 1.300)

    @property
    def train_length(self):
        return 70

    @property
    def dev_length(self):
        return 70

    @property
    def multiprocess_generate(self):
        return True


@registry.register_problem
class AlgorithmicReverseNlplike32k(AlgorithmicReverseNlplike8k):
    """Reverse NLP-like sequences over 32000 symbols (Zipf alpha 1.05)."""

    @property
    def num_symbols(self):
        return 32000

    def generator(self, nbr_symbols, max_length, nbr_cases):
        return reverse_generator_nlplike(nbr_symbols, max_length, nbr_cases, 10, 1.050)


def lower_endian_to_number(digits, base):
    """[1, 2] in base 10 -> 21."""
    return sum(d * base**i for i, d in enumerate(digits))


def number_to_lower_endian(n, base):
    """21 in base 10 -> [1, 2]; 0 -> [0]."""
    digits = [n % base]
    n //= base
    while n:
        digits.append(n % base)
        n //= base
    return digits


def random_number_lower_endian(length, base):
    """A random `length`-digit number, little-endian; only a 1-digit number may be 0."""
    if length == 1:
        return [random.randrange(base)]
    prefix = [random.randrange(base) for _ in range(length - 1)]
    return prefix + [random.randrange(base - 1) + 1]


def _two_numbers(base, max_length):
    """(n1, n2) digit lists with len(n1) + 1 + len(n2) <= max_length."""
    if max_length < 3:
        raise ValueError("max_length must be at least 3 for two numbers and a separator; "
                         "got %d" % max_length)
    l1 = random.randrange(max_length // 2) + 1
    l2 = random.randrange(max_length - l1 - 1) + 1
    return random_number_lower_endian(l1, base), random_number_lower_endian(l2, base)


class TwoNumberProblem(AlgorithmicProblem):
    """Base of addition and multiplication: inputs are two numbers joined by `base`."""

    def hparams(self, defaults, unused_model_hparams):
        super().hparams(defaults, unused_model_hparams)
        # The separator symbol `base` needs an id too; T2T's vocab (base + 2) left
        # it out, so the separator was one id past the vocabulary.
        vocab_size = self.num_symbols + 1 + text_encoder.NUM_RESERVED_TOKENS
        defaults.vocab_size = {"inputs": vocab_size, "targets": vocab_size}


@registry.register_problem
class AlgorithmicAdditionBinary40(TwoNumberProblem):
    """Add two binary numbers (little-endian digits, separated by the symbol 2)."""

    @property
    def num_symbols(self):
        return 2

    def generator(self, base, max_length, nbr_cases):
        """Addition in `base`: inputs n1 + [base] + n2, targets the sum's digits.

            base 10, 21 + 7: {"inputs": [1, 2, 10, 7], "targets": [8, 2]}
        """
        for _ in range(nbr_cases):
            n1, n2 = _two_numbers(base, max_length)
            total = lower_endian_to_number(n1, base) + lower_endian_to_number(n2, base)
            yield {"inputs": n1 + [base] + n2, "targets": number_to_lower_endian(total, base)}


@registry.register_problem
class AlgorithmicAdditionDecimal40(AlgorithmicAdditionBinary40):
    """Add two decimal numbers."""

    @property
    def num_symbols(self):
        return 10


@registry.register_problem
class AlgorithmicMultiplicationBinary40(TwoNumberProblem):
    """Multiply two binary numbers (little-endian digits, separated by the symbol 2)."""

    @property
    def num_symbols(self):
        return 2

    def generator(self, base, max_length, nbr_cases):
        """Multiplication in `base`: base 10, 21 * 7 -> {"inputs": [1, 2, 10, 7],
        "targets": [7, 4, 1]}."""
        for _ in range(nbr_cases):
            n1, n2 = _two_numbers(base, max_length)
            product = lower_endian_to_number(n1, base) * lower_endian_to_number(n2, base)
            yield {"inputs": n1 + [base] + n2, "targets": number_to_lower_endian(product, base)}


@registry.register_problem
class AlgorithmicMultiplicationDecimal40(AlgorithmicMultiplicationBinary40):
    """Multiply two decimal numbers."""

    @property
    def num_symbols(self):
        return 10


@registry.register_problem
class AlgorithmicReverseBinary40Test(AlgorithmicReverseBinary40):
    """Tiny reverse problem for tests: 1000 train / 100 dev examples, 1 shard."""

    @property
    def train_length(self):
        return 10

    @property
    def dev_length(self):
        return 10

    @property
    def train_size(self):
        return 1000

    @property
    def dev_size(self):
        return 100

    @property
    def num_shards(self):
        return 1


@registry.register_problem
class AlgorithmicSortProblem(AlgorithmicProblem):
    """Sort numbers in [0, 20): train length <= 10, dev length <= 20."""

    @property
    def num_symbols(self):
        return max(self.train_length, self.dev_length)

    @property
    def train_length(self):
        return 10

    @property
    def dev_length(self):
        return self.train_length * 2

    @property
    def unique(self):
        """Draw the numbers without replacement."""
        return False

    def generator(self, nbr_symbols, max_length, nbr_cases):
        """Sort: {"inputs": [7, 2, 9, 2], "targets": [2, 2, 7, 9]}."""
        for _ in range(nbr_cases):
            length = _random_length(max_length)
            if self.unique:
                inputs = random.sample(range(nbr_symbols), min(length, nbr_symbols))
            else:
                inputs = [random.randrange(nbr_symbols) for _ in range(length)]
            yield {"inputs": inputs, "targets": sorted(inputs)}

    def eval_metrics(self):
        return super().eval_metrics() + ["edit_distance"]


@registry.register_problem
class TinyAlgo(AlgorithmicIdentityBinary40):
    """A small identity problem for tests: 100 train and 100 dev examples, one shard each."""

    data_dir = None

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        del tmp_dir, task_id
        tf.io.gfile.makedirs(data_dir)
        # T2T wrote the raw symbols 0/1 (PAD/EOS) here; they are shifted and
        # EOS-terminated like every other algorithmic problem.
        generator_utils.generate_files(
            itertools.islice(self.generator_eos(self.num_symbols, 40, 100000), 100),
            self.training_filepaths(data_dir, 1, shuffled=True))
        generator_utils.generate_files(
            itertools.islice(self.generator_eos(self.num_symbols, 400, 10000), 100),
            self.dev_filepaths(data_dir, 1, shuffled=True))

    @classmethod
    def setup_for_test(cls):
        """Generate the data into a fresh temporary folder, kept as `cls.data_dir`."""
        if cls.data_dir and os.path.isdir(cls.data_dir):
            shutil.rmtree(cls.data_dir)
        cls.data_dir = tempfile.mkdtemp(prefix="tiny_algo_")
        cls().generate_data(cls.data_dir, None)
