"""Cipher problems: known ciphertexts, files on disk, decryption round trips, determinism."""
import os
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import corpus_testing

from t2t.core import registry
from t2t.problems import cipher


def _small(base, train_size=30, dev_size=5, train_length=12):
    """`base` with small sizes, writing files under its registered name."""
    attrs = {"name": base().name, "train_size": train_size, "dev_size": dev_size,
             "train_length": train_length}
    return type("Small" + base.__name__, (base,), attrs)


def _unshift(ids):
    assert ids[-1] == 1 and all(i >= 2 for i in ids[:-1])
    return [i - 2 for i in ids[:-1]]


def test_known_ciphertexts():
    assert cipher.encipher_shift([[0, 1, 2, 3, 4]], range(5), 1) == [[4, 0, 1, 2, 3]]
    assert cipher.encipher_shift([[0, 1]], range(5), -2) == [[2, 3]]
    assert cipher.encipher_vigenere([[0, 0, 0, 0], [0, 0, 1]], range(5), [1, 3]) == [
        [4, 2, 4, 2], [4, 2, 0]]
    layer = cipher.ShiftEncryptionLayer(["a", "b", "c"], 1)
    assert (layer.encrypt_character("a"), layer.decrypt_character("c")) == ("c", "a")


def test_bad_key_and_distribution_are_one_line_errors():
    with pytest.raises(ValueError, match=r"key \[1, 7\] needs entries in \[0, 5\)"):
        cipher.encipher_vigenere([[0]], range(5), [1, 7])
    with pytest.raises(ValueError, match="distribution has 2 probabilities for 5 symbols"):
        cipher.generate_plaintext_random(range(5), [0.5, 0.5], 1, 1)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(0, n - 1), max_size=20),
    st.integers(-40, 40), st.lists(st.integers(0, n - 1), min_size=1, max_size=4))))
def test_shift_and_vigenere_decrypt_back(case):
    n, plain, shift, key = case
    [code] = cipher.encipher_shift([plain], range(n), shift)
    layer = cipher.ShiftEncryptionLayer(range(n), shift)
    assert [layer.decrypt_character(c) for c in code] == plain
    assert code == [(c - shift) % n for c in plain]
    [vcode] = cipher.encipher_vigenere([plain], range(n), key)
    assert [(c + key[j % len(key)]) % n for j, c in enumerate(vcode)] == plain


def test_registered_names_and_settings():
    expected = {"algorithmic_cipher_shift5": (5, 100), "algorithmic_cipher_vigenere5": (5, 200),
                "algorithmic_cipher_shift200": (200, 100),
                "algorithmic_cipher_vigenere200": (200, 200)}
    for name, (symbols, length) in expected.items():
        p = registry.problem(name)
        assert (p.num_symbols, p.train_length, p.dev_length) == (symbols, length, length)
    assert cipher.AlgorithmicCipherShift200().distribution[0] == 0.0
    assert sum(cipher.AlgorithmicCipherShift200().distribution) == pytest.approx(1.0)


def test_vigenere5_files_hold_fixed_length_ciphertexts(tmp_path):
    random.seed(5)
    small = _small(cipher.AlgorithmicCipherVigenere5)
    small().generate_data(str(tmp_path), None)
    names = sorted(n for n in os.listdir(tmp_path) if not n.startswith("."))
    assert names == (["algorithmic_cipher_vigenere5-dev-00000-of-00001"] +
                     ["algorithmic_cipher_vigenere5-train-%05d-of-00010" % i for i in range(10)])
    train = corpus_testing.read_examples([str(tmp_path / n) for n in names[1:]])
    dev = corpus_testing.read_examples([str(tmp_path / names[0])])
    assert (len(train), len(dev)) == (30, 5)
    for ex in train + dev:
        plain, code = _unshift(ex["inputs"]), _unshift(ex["targets"])
        assert len(plain) == 12
        assert code == [(c - (1, 3)[j % 2]) % 5 for j, c in enumerate(plain)]


def test_generation_is_deterministic_and_matches_one_numpy_draw(tmp_path):
    small = _small(cipher.AlgorithmicCipherShift200, train_size=2500, train_length=3)
    np.random.seed(11)
    cases = list(small().generator(200, 3, 2500))
    np.random.seed(11)
    whole = np.random.choice(200, (2500, 3), p=small().distribution)
    assert [c["inputs"] for c in cases] == whole.tolist()
    assert all(c["targets"] == [(s - 1) % 200 for s in c["inputs"]] for c in cases)
    assert 0 not in {s for c in cases for s in c["inputs"]}
    outputs = []
    for run in ("a", "b"):
        random.seed(8)
        _small(cipher.AlgorithmicCipherShift5)().generate_data(str(tmp_path / run), None)
        outputs.append(corpus_testing.read_examples(
            [str(tmp_path / run / "algorithmic_cipher_shift5-dev-00000-of-00001")]))
    assert outputs[0] == outputs[1]
