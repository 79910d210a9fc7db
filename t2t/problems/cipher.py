"""Cipher problems (T2T 1.15.7's `cipher`): learn a shift or Vigenère cipher.

Plaintexts are fixed-length sequences of symbols drawn from a skewed distribution; the
targets are their ciphertexts. A shift layer of `shift` rotates the alphabet right by
`shift`, so symbol `c` of an alphabet of `n` encrypts to `(c - shift) % n`:

    encipher_shift([[0, 1, 2, 3, 4]], range(5), 1)       # [[4, 0, 1, 2, 3]]
    encipher_vigenere([[0, 0, 0, 0]], range(5), [1, 3])  # [[4, 2, 4, 2]]

| problem                         | symbols | cipher             | length (train = dev) |
|---------------------------------|---------|--------------------|----------------------|
| algorithmic_cipher_shift5       | 5       | shift 1            | 100                  |
| algorithmic_cipher_vigenere5    | 5       | Vigenère key [1,3] | 200                  |
| algorithmic_cipher_shift200     | 200     | shift 1            | 100                  |
| algorithmic_cipher_vigenere200  | 200     | Vigenère key [1,3] | 200                  |

The 5-symbol problems draw symbols with probabilities [0.4, 0.3, 0.2, 0.08, 0.02]; the
200-symbol ones give symbol `v` probability v / sum(0..199) (so 0 never occurs). Files are
those of every `algorithmic` problem: 10 training shards of 100k examples in all and one dev
shard of 10k, symbols shifted past PAD and EOS and EOS appended.
"""
import collections

import numpy as np

from t2t.core import registry
from t2t.problems import algorithmic

# Plaintext rows drawn per numpy call: memory stays bounded and, as numpy's legacy `choice`
# with `p` reads one uniform double per symbol in order, the rows equal one big draw's.
_ROWS_PER_DRAW = 1000

_FIVE_SYMBOL_DISTRIBUTION = [0.4, 0.3, 0.2, 0.08, 0.02]


def _linear_distribution(num_symbols):
    """Symbol v with probability v / sum(range(num_symbols))."""
    total = sum(range(num_symbols))
    return [v / total for v in range(num_symbols)]


class ShiftEncryptionLayer:
    """One shift of the alphabet `vocab`: the symbol at position i encrypts to the one at
    position i - shift (a positive shift rotates the alphabet to the right).

        layer = ShiftEncryptionLayer(range(5), 1)
        layer.encrypt_character(0), layer.decrypt_character(4)   # (4, 0)
    """

    def __init__(self, vocab, shift):
        self.shift = shift
        alphabet = list(vocab)
        shifted = collections.deque(alphabet)
        shifted.rotate(shift)
        self.encrypt = dict(zip(alphabet, shifted))
        self.decrypt = dict(zip(shifted, alphabet))

    def encrypt_character(self, character):
        return self.encrypt[character]

    def decrypt_character(self, character):
        return self.decrypt[character]


def generate_plaintext_random(plain_vocab, distribution, train_samples, length):
    """A (train_samples, length) int array of indices into `plain_vocab`, drawn with numpy's
    global random state by `distribution` (None: uniform).

        generate_plaintext_random(range(5), [1, 0, 0, 0, 0], 2, 3)   # [[0, 0, 0], [0, 0, 0]]
    """
    if distribution is not None and len(distribution) != len(plain_vocab):
        raise ValueError("generate_plaintext_random: distribution has %d probabilities for "
                         "%d symbols; give one per symbol of plain_vocab"
                         % (len(distribution), len(plain_vocab)))
    return np.random.choice(len(plain_vocab), (train_samples, length), p=distribution)


def encipher_shift(plaintext, plain_vocab, shift):
    """Each sentence of `plaintext` (lists of symbols of `plain_vocab`) shift-enciphered.

        encipher_shift([[0, 1]], range(5), 1)   # [[4, 0]]
    """
    layer = ShiftEncryptionLayer(plain_vocab, shift)
    return [[layer.encrypt_character(c) for c in sentence] for sentence in plaintext]


def encipher_vigenere(plaintext, plain_vocab, key):
    """Each sentence of `plaintext` Vigenère-enciphered: position j is shifted by
    key[j % len(key)] (each key entry a shift in [0, len(plain_vocab))).

        encipher_vigenere([[0, 0, 0]], range(5), [1, 3])   # [[4, 2, 4]]
    """
    size = len(plain_vocab)
    bad = [k for k in key if not 0 <= k < size]
    if not key or bad:
        raise ValueError("encipher_vigenere: key %r needs entries in [0, %d) (one shift per "
                         "position); fix the key" % (list(key), size))
    layers = [ShiftEncryptionLayer(plain_vocab, shift) for shift in range(size)]
    return [[layers[key[j % len(key)]].encrypt_character(c) for j, c in enumerate(sentence)]
            for sentence in plaintext]


class _CipherProblem(algorithmic.AlgorithmicProblem):
    """Fixed-length plaintexts of `distribution` -> `encipher(plaintext)`."""

    @property
    def distribution(self):
        return _FIVE_SYMBOL_DISTRIBUTION

    def encipher(self, plaintext, plain_vocab):
        raise NotImplementedError()

    def generator(self, nbr_symbols, max_length, nbr_cases):
        """`nbr_cases` {"inputs": plaintext, "targets": ciphertext}, each `max_length` long."""
        plain_vocab = range(nbr_symbols)
        for start in range(0, nbr_cases, _ROWS_PER_DRAW):
            rows = min(_ROWS_PER_DRAW, nbr_cases - start)
            plains = generate_plaintext_random(plain_vocab, self.distribution, rows, max_length)
            for plain, code in zip(plains, self.encipher(plains, plain_vocab)):
                yield {"inputs": [int(c) for c in plain], "targets": code}

    @property
    def dev_length(self):
        return self.train_length


@registry.register_problem
class AlgorithmicCipherShift5(_CipherProblem):
    """Shift cipher over 5 symbols, shift 1, sequences of 100.

        {"inputs": [0, 1, 0, ...], "targets": [4, 0, 4, ...]}   (before the id shift)
    """

    @property
    def num_symbols(self):
        return 5

    @property
    def shift(self):
        return 1

    def encipher(self, plaintext, plain_vocab):
        return encipher_shift(plaintext, plain_vocab, self.shift)

    @property
    def train_length(self):
        return 100


@registry.register_problem
class AlgorithmicCipherVigenere5(_CipherProblem):
    """Vigenère cipher over 5 symbols, key [1, 3], sequences of 200.

        {"inputs": [0, 0, 1, ...], "targets": [4, 2, 0, ...]}   (before the id shift)
    """

    @property
    def num_symbols(self):
        return 5

    @property
    def key(self):
        return [1, 3]

    def encipher(self, plaintext, plain_vocab):
        return encipher_vigenere(plaintext, plain_vocab, self.key)

    @property
    def train_length(self):
        return 200


@registry.register_problem
class AlgorithmicCipherShift200(AlgorithmicCipherShift5):
    """Shift cipher over 200 symbols (symbol v drawn with probability ~ v)."""

    @property
    def num_symbols(self):
        return 200

    @property
    def distribution(self):
        return _linear_distribution(self.num_symbols)


@registry.register_problem
class AlgorithmicCipherVigenere200(AlgorithmicCipherVigenere5):
    """Vigenère cipher over 200 symbols, key [1, 3] (symbol v drawn with probability ~ v)."""

    @property
    def num_symbols(self):
        return 200

    @property
    def distribution(self):
        return _linear_distribution(self.num_symbols)
