"""text2text_copyable_tokens: the user's files in tmp_dir, source OOVs given temporary ids."""
import os

import pytest
import tensorflow as tf

import corpus_testing

from t2t.core import errors, registry
from t2t.problems import pointer_generator_word, spaces, text_problems_tmpdir
from t2t.problems.pointer_generator_word import TokenTextEncoderOov

VOCAB = "the\ncat\nsat\n"  # ids: <pad> 0, <EOS> 1, <UNK> 2, the 3, cat 4, sat 5
FILES = {"inputs.train.txt": "the zebra saw a zebra\nthe cat sat\n",
         "targets.train.txt": "a zebra cat dog\ncat sat\n",
         "inputs.eval.txt": "the gnu\n", "targets.eval.txt": "gnu the\n", "vocab.txt": VOCAB}


def _encoder():
    return TokenTextEncoderOov(None, vocab_list=["<UNK>", "the", "cat", "sat"],
                               replace_oov="<UNK>")


def test_encoder_gives_source_oovs_temporary_ids():
    enc = _encoder()
    assert enc.vocab_size == 6
    ids, ext, oovs, oov_tokens = enc.encode("the zebra saw a zebra")
    assert (ids, ext) == ([3, 2, 2, 2, 2], [3, 6, 7, 8, 6])
    assert oovs == {"zebra": 0, "saw": 1, "a": 2} and oov_tokens == ["zebra", "saw", "a"]
    assert enc.encode_target("a zebra cat dog", oovs) == ([2, 2, 4, 2], [8, 6, 4, 2])
    assert enc.decode_oov([8, 6, 4, 2], oov_tokens) == "a zebra cat <UNK>"
    with pytest.raises(ValueError, match="id 9 is neither in the vocabulary"):
        enc.decode_oov([9], oov_tokens)
    rev = TokenTextEncoderOov(None, vocab_list=["<UNK>", "the"], reverse=True,
                              replace_oov="<UNK>")
    assert rev.encode("the gnu")[:2] == ([2, 3], [4, 3])
    assert rev.decode_list_oov([4, 3], ["gnu"]) == ["the", "gnu"]


def test_generates_the_extended_features(tmp_path):
    for name, text in FILES.items():
        corpus_testing.write_file(tmp_path / "tmp" / name, text)
    problem = registry.problem("text2text_copyable_tokens")
    assert type(problem) is pointer_generator_word.Text2textCopyableTokens
    assert isinstance(problem, text_problems_tmpdir.Text2textTmpdirTokens)
    data_dir = str(tmp_path / "data")
    problem.generate_data(data_dir, str(tmp_path / "tmp"))
    names = sorted(f for f in os.listdir(data_dir) if not f.startswith("."))
    assert names == (["text2text_copyable_tokens-dev-00000-of-00001"] +
                     ["text2text_copyable_tokens-train-%05d-of-00100" % i for i in range(100)] +
                     ["vocab.text2text_copyable_tokens.tokens"])  # T2T's 100 training shards
    train = corpus_testing.read_examples(problem.training_filepaths(data_dir, 100, True))
    assert sorted(train, key=lambda ex: len(ex["inputs"]), reverse=True) == [
        {"inputs": [3, 2, 2, 2, 2, 1], "inputs_extend": [3, 6, 7, 8, 6, 1],
         "targets": [2, 2, 4, 2, 1], "targets_extend": [8, 6, 4, 2, 1]},
        {"inputs": [3, 4, 5, 1], "inputs_extend": [3, 4, 5, 1],
         "targets": [4, 5, 1], "targets_extend": [4, 5, 1]}]
    dev = corpus_testing.read_examples(problem.dev_filepaths(data_dir, 1, True))
    assert dev == [{"inputs": [3, 2, 1], "inputs_extend": [3, 6, 1],
                    "targets": [2, 3, 1], "targets_extend": [6, 3, 1]}]
    encoder = problem.get_feature_encoders(data_dir)["inputs"]
    assert isinstance(encoder, TokenTextEncoderOov) and encoder.vocab_size == 6
    fields, _ = problem.example_reading_spec()
    assert sorted(fields) == ["inputs", "inputs_extend", "targets", "targets_extend"]
    assert all(isinstance(f, tf.io.VarLenFeature) for f in fields.values())
    samples = list(problem.generate_samples(data_dir, str(tmp_path / "tmp"),
                                            spaces.DatasetSplit.EVAL))
    assert samples == [{"inputs": "the gnu", "targets": "gnu the"}]


def test_a_missing_vocabulary_is_a_one_line_error(tmp_path):
    problem = registry.problem("text2text_copyable_tokens")
    with pytest.raises(errors.UserError, match="vocab.text2text_copyable_tokens.tokens of "
                                               "problem text2text_copyable_tokens is missing"):
        problem.get_or_create_vocab(str(tmp_path), None)
    bad = TokenTextEncoderOov(None, vocab_list=["the"], replace_oov="<UNK>")
    with pytest.raises(ValueError, match="replace_oov '<UNK>' is not in the vocabulary"):
        bad.encode("gnu")
