"""Vocabularies: Python and graph encodings agree, decode cuts at EOS, extra ids, equality."""
import pickle

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t import seqio

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


def test_byte_vocabulary_ids_and_eos():
    vocab = seqio.ByteVocabulary(extra_ids=10)
    assert vocab.encode("hé") == [107, 198, 172]
    assert vocab.decode([107, 198, 172, 1, 50, 0]) == "hé"
    assert (vocab.pad_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2)
    assert vocab.vocab_size == 259 + 10
    assert vocab.encode_tf(tf.constant("hé")).numpy().tolist() == [107, 198, 172]
    assert vocab.decode_tf(tf.constant([107, 198, 172, 1, 50])).numpy() == "hé".encode()
    assert vocab == seqio.ByteVocabulary(extra_ids=10) != seqio.ByteVocabulary()


def test_byte_vocabulary_decode_tf_multibyte_batch():
    vocab = seqio.ByteVocabulary()
    out = vocab.decode_tf(tf.constant([[229, 141, 136, 1], [107, 2, 0, 0]])).numpy().tolist()
    assert out == ["⊅".encode(), b"h"]
    # A character cut in half is dropped, in Python and in the graph alike.
    cut = [107, 229, 141]
    assert vocab.decode(cut) == "h" == vocab.decode_tf(tf.constant(cut)).numpy().decode()


@settings(max_examples=30, deadline=None)
@given(st.lists(texts, min_size=1, max_size=4))
def test_byte_vocabulary_round_trip(strings):
    vocab = seqio.ByteVocabulary()
    ids = [vocab.encode(s) + [1] for s in strings]
    width = max(len(i) for i in ids)
    padded = tf.constant([i + [0] * (width - len(i)) for i in ids])
    assert [x.decode("utf-8") for x in vocab.decode_tf(padded).numpy()] == strings
    assert [vocab.decode(i) for i in ids] == strings


def test_passthrough_vocabulary():
    vocab = seqio.PassThroughVocabulary(size=10, eos_id=1)
    assert vocab.encode([3, 4]) == [3, 4]
    assert vocab.decode([3, 1, 5]) == [3, 1]
    assert vocab.vocab_size == 10 and vocab.unk_id is None
    assert vocab == seqio.PassThroughVocabulary(10, 1) != seqio.PassThroughVocabulary(10)


def test_sentencepiece_python_and_graph_agree(spm_model_file):
    vocab = seqio.SentencePieceVocabulary(spm_model_file)
    assert (vocab.pad_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2)
    for text in ["the cat sat on a mat", "a bird sang", "", "zebra 42"]:
        ids = vocab.encode(text)
        assert vocab.encode_tf(tf.constant(text)).numpy().tolist() == ids
        assert vocab.decode(ids + [1, 5, 0]) == vocab.decode(ids)
        assert vocab.decode_tf(tf.constant(ids + [1, 0, 0])).numpy().decode() == \
            vocab.decode(ids)
    assert vocab.decode(vocab.encode("the cat sat")) == "the cat sat"


def test_sentencepiece_extra_ids(spm_model_file):
    plain = seqio.SentencePieceVocabulary(spm_model_file)
    vocab = seqio.SentencePieceVocabulary(spm_model_file, extra_ids=3)
    assert vocab.vocab_size == plain.vocab_size + 3
    # <extra_id_0> has the highest id (reverse_extra_ids, for T5's span corruption).
    assert vocab.encode("<extra_id_0>")[-1] == vocab.vocab_size - 1
    assert vocab.encode("<extra_id_2>")[-1] == plain.vocab_size
    forward = seqio.SentencePieceVocabulary(spm_model_file, extra_ids=3,
                                            reverse_extra_ids=False)
    assert forward.encode("<extra_id_0>")[-1] == plain.vocab_size
    # Ids past the vocabulary decode as UNK (" ⁇ "), not an error.
    assert plain.decode([plain.vocab_size + 5]) == plain.decode([2])


def test_sentencepiece_pickle_and_equality(spm_model_file):
    vocab = seqio.SentencePieceVocabulary(spm_model_file, extra_ids=2)
    vocab.encode("a")
    again = pickle.loads(pickle.dumps(vocab))
    assert again == vocab and again.encode("the dog") == vocab.encode("the dog")
    assert vocab != seqio.SentencePieceVocabulary(spm_model_file)
    assert "spm_md5=" in str(vocab)
    with pytest.raises(ValueError, match="no model file"):
        seqio.SentencePieceVocabulary("/nonexistent.model").encode("a")


def test_decode_tf_empty_and_unk():
    vocab = seqio.ByteVocabulary()
    assert vocab.decode_tf(tf.constant([], tf.int32)).numpy() == b""
    # Ids past the base vocabulary become UNK, which decodes to nothing for bytes.
    assert vocab.decode([107, 300, 108]) == "hi"


def test_unigram_and_codepoint_vocabularies():
    unigram = seqio.UnigramVocabulary(["a", "b"], split_on_space=True)
    assert unigram.encode("b a c") == [2, 1, 3]
    assert unigram.encode_tf(tf.constant("b a c")).numpy().tolist() == [2, 1, 3]
    assert unigram.decode([2, 1]) == "b a"
    full = seqio.FullCodepointVocabulary()
    assert full.encode("hé") == [104, 233]
    assert full.decode_tf(tf.constant([104, 233])).numpy().decode() == "hé"
    partial = seqio.PartialCodepointVocabulary([ord("a"), ord("b")])
    assert partial.encode("abz") == [3, 4, 2]
    assert partial.encode_tf(tf.constant("abz")).numpy().tolist() == [3, 4, 2]
    assert partial.decode([3, 4, 1, 3]) == "ab"
