"""Transduction problems: samples, lengths per split, vocab file, shards, encoded records."""
import os
import random

import pytest
from hypothesis import given, settings, strategies as st

import corpus_testing

from t2t.core import registry
from t2t.problems import spaces
from t2t.problems import transduction_problems as tp

TRAIN, EVAL, TEST = spaces.DatasetSplit.TRAIN, spaces.DatasetSplit.EVAL, spaces.DatasetSplit.TEST


def _small(base, train=40, dev=6, shards=3):
    """`base` with few samples and shards, writing files under its registered name."""
    sizes = {TRAIN: train, EVAL: dev, TEST: dev}
    attrs = {"name": base().name, "num_samples": lambda self, split: sizes[split],
             "num_shards": shards}
    return type("Small" + base.__name__, (base,), attrs)


TRANSFORMS = [
    ("copy_sequence", lambda x: x, (8, 64), (65, 128)),
    ("copy_sequence_small", lambda x: x, (4, 16), (17, 32)),
    ("reverse_sequence", lambda x: x[::-1], (8, 64), (65, 128)),
    ("reverse_sequence_small", lambda x: x[::-1], (4, 16), (17, 32)),
    ("flip_bi_gram_sequence",
     lambda x: [x[i + 1] if i % 2 == 0 else x[i - 1] for i in range(len(x))], (8, 64),
     (66, 128)),
]


@pytest.mark.parametrize("name,transform,train_range,eval_range", TRANSFORMS)
def test_samples_follow_the_transform_and_each_splits_lengths(name, transform, train_range,
                                                              eval_range):
    random.seed(1)
    small = _small(type(registry.problem(name)), train=30, dev=30)()
    symbols = set(small.vocab)
    for split, (low, high) in ((TRAIN, train_range), (EVAL, eval_range), (TEST, eval_range)):
        samples = list(small.generate_samples("", None, split))
        assert len(samples) == 30
        for sample in samples:
            inputs, targets = sample["inputs"].split(" "), sample["targets"].split(" ")
            assert low <= len(inputs) <= high
            assert set(inputs) <= symbols
            assert targets == transform(inputs)
            if name.startswith("flip"):
                assert len(inputs) % 2 == 0


def test_flip_bi_gram_known_value():
    p = tp.FlipBiGramSequence()
    assert p.transpose_sequence(["a", "b", "c", "d"]) == ["b", "a", "d", "c"]
    assert tp.ReverseSequence().transpose_sequence(["a", "b", "c"]) == ["c", "b", "a"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=20).map(lambda x: x[:len(x) - len(x) % 2]))
def test_flip_bi_gram_twice_is_the_identity(tokens):
    p = tp.FlipBiGramSequence()
    flipped = p.transpose_sequence(tokens)
    assert p.transpose_sequence(flipped) == tokens
    assert sorted(flipped) == sorted(tokens)


def test_vocab_file_lists_the_symbols_in_string_order(tmp_path):
    p = tp.CopySequenceSmall()
    encoder = p.get_or_create_vocab(str(tmp_path), None)
    path = tmp_path / "vocab.copy_sequence_small.tokens"
    lines = path.read_text().splitlines()
    assert lines[:6] == ["<pad>", "<EOS>", "sym_1", "sym_10", "sym_11", "sym_12"]
    assert len(lines) == 66 and encoder.vocab_size == 66
    assert encoder.encode("sym_1 sym_10 sym_2") == [2, 3, 13]
    # A second call reads the file back; the file ends sym_64, sym_7, sym_8, sym_9.
    assert lines[-4:] == ["sym_64", "sym_7", "sym_8", "sym_9"]
    assert p.get_or_create_vocab(str(tmp_path), None).encode("sym_64 sym_9") == [62, 65]


def test_generate_data_writes_shards_of_encoded_reversals(tmp_path):
    random.seed(2)
    small = _small(tp.ReverseSequenceSmall)
    small().generate_data(str(tmp_path), None)
    names = sorted(n for n in os.listdir(tmp_path) if not n.startswith("."))
    assert names == (["reverse_sequence_small-dev-00000-of-00001"] +
                     ["reverse_sequence_small-train-%05d-of-00003" % i for i in range(3)] +
                     ["vocab.reverse_sequence_small.tokens"])
    train = corpus_testing.read_examples([str(tmp_path / n) for n in names[1:4]])
    dev = corpus_testing.read_examples([str(tmp_path / names[0])])
    assert (len(train), len(dev)) == (40, 6)
    for ex in train + dev:
        assert ex["inputs"][-1] == ex["targets"][-1] == 1
        assert ex["targets"][:-1] == ex["inputs"][:-1][::-1]
        assert all(2 <= i < 66 for i in ex["inputs"][:-1])
    assert all(4 <= len(ex["inputs"]) - 1 <= 16 for ex in train)
    assert all(17 <= len(ex["inputs"]) - 1 <= 32 for ex in dev)
    problem = small()
    problem.get_feature_encoders(str(tmp_path))
    hparams = problem.get_hparams()
    assert hparams.vocab_size == {"inputs": 66, "targets": 66}


def test_rev_suffix_swaps_inputs_and_targets():
    p = registry.problem("copy_sequence_rev")
    assert p._was_reversed
