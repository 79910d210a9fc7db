"""In-graph encoders: TF ops that encode and decode exactly as the Python encoders do."""
import os

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import example, given, settings
from hypothesis import strategies as st

from t2t.encoders import graph_ops
from t2t.encoders import text_encoder

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "t2t_vocab")
SUBWORD = text_encoder.SubwordTextEncoder(os.path.join(FIXTURES, "vocab.gen300.subwords"))
TOKENS = text_encoder.TokenTextEncoder(None, vocab_list=["the", "cat", "sat", "on", "mat"])
REVERSED_TOKENS = text_encoder.TokenTextEncoder(None, vocab_list=["a", "b", "c"], reverse=True,
                                                   replace_oov="a")
EXAMPLES = settings(max_examples=25, deadline=None)


def graph_encode(texts, vocab, append_eos=False):
    ids = graph_ops.encode_strings(tf.constant(texts, tf.string), vocab, append_eos=append_eos)
    return [[i for i in row if i] for row in ids.numpy().tolist()]


def graph_decode(rows, vocab):
    """Decode id rows in the graph; each row gets EOS and 0-padding, as model outputs do."""
    rows = [list(row) + [text_encoder.EOS_ID] for row in rows]
    ids = np.zeros([len(rows), max(len(r) for r in rows)], np.int32)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = row
    return [s.decode("utf-8") for s in graph_ops.decode_ids(tf.constant(ids), vocab).numpy()]


@EXAMPLES
@given(st.lists(st.text(max_size=12), min_size=1, max_size=4))
# Noncharacters, which TensorFlow 2.15's unicode_encode replaced with U+FFFD.
@example(["\ufffe", "a\ufdd0b", "\U0010ffff", "\U0001fffe"])
def test_subword_graph_encoding_equals_python(texts):
    assert graph_encode(texts, SUBWORD) == [SUBWORD.encode(t) for t in texts]
    assert graph_decode([SUBWORD.encode(t) for t in texts], SUBWORD) == texts


@EXAMPLES
@given(st.lists(st.lists(st.integers(0, SUBWORD.vocab_size + 3), max_size=10), min_size=1,
                max_size=4))
def test_subword_graph_decoding_of_any_ids_equals_python(rows):
    rows = [[i for i in row if i not in (0, 1)] for row in rows]  # ids before EOS
    expected = [SUBWORD.decode(row).encode("utf-8", "replace").decode("utf-8")
                for row in rows]
    assert graph_decode(rows, SUBWORD) == expected


@EXAMPLES
@given(st.lists(st.text(max_size=10), min_size=1, max_size=4))
@example(["\ufffe", "a\ufdd0b", "\U0010ffff"])
def test_byte_graph_encoding_round_trips(texts):
    vocab = text_encoder.ByteTextEncoder()
    assert graph_encode(texts, vocab) == [vocab.encode(t) for t in texts]
    assert graph_decode([vocab.encode(t) for t in texts], vocab) == texts


@EXAMPLES
@given(st.lists(st.binary(max_size=6), min_size=1, max_size=3))
def test_byte_graph_decoding_replaces_invalid_utf8_as_python(chunks):
    vocab = text_encoder.ByteTextEncoder()
    rows = [[b + 2 for b in chunk] for chunk in chunks]
    assert graph_decode(rows, vocab) == [vocab.decode(row) for row in rows]


@EXAMPLES
@given(st.lists(st.lists(st.integers(0, 50), max_size=6), min_size=1, max_size=3))
def test_integer_and_token_vocabularies(rows):
    texts = [" ".join(str(i) for i in row) for row in rows]
    plain = text_encoder.TextEncoder()
    assert graph_encode(texts, plain) == [plain.encode(t) for t in texts]
    assert graph_decode([plain.encode(t) for t in texts], plain) == texts
    words = [" ".join(TOKENS.decode_list([2 + i % 5 for i in row])) for row in rows]
    assert graph_encode(words, TOKENS) == [TOKENS.encode(w) for w in words]
    ids = [[2 + i for i in row] for row in rows]  # beyond the vocab: "ID_<n>"
    assert graph_decode(ids, TOKENS) == [TOKENS.decode(row) for row in ids]
    letters = [" ".join("abcz"[i % 4] for i in row) for row in rows]
    assert graph_encode(letters, REVERSED_TOKENS) == [REVERSED_TOKENS.encode(t)
                                                            for t in letters]
    assert graph_decode(ids, REVERSED_TOKENS) == [REVERSED_TOKENS.decode(r) for r in ids]


def test_encoding_appends_eos_pads_and_truncates():
    vocab = text_encoder.ByteTextEncoder()
    ids = graph_ops.encode_strings(tf.constant(["hi", "", "abc"]), vocab, max_input_size=3)
    np.testing.assert_array_equal(ids.numpy(), [[106, 107, 1], [1, 0, 0], [99, 100, 1]])
    decoded = graph_ops.decode_ids(tf.constant([[[106, 1, 107]], [[99, 100, 0]],
                                                [[99, 0, 100]]]), vocab)
    # Cut at EOS or PAD, as t2t-decoder cuts each beam: no "<pad>" in a decode.
    assert decoded.numpy().tolist() == [[b"h"], [b"ab"], [b"a"]]
    labels = text_encoder.ClassLabelEncoder(["neg", "pos"])
    assert graph_ops.decode_ids(tf.constant([[1], [0]]), labels).numpy().tolist() == [
        b"pos", b"neg"]


def test_unknown_tokens_and_unsupported_vocabularies_fail_clearly():
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in the vocab"):
        graph_ops.encode_strings(tf.constant(["the dog"]), TOKENS)

    class Custom(text_encoder.TextEncoder):
        def encode(self, s):
            return [5]

    assert "own encode/decode" in graph_ops.unsupported_reason(Custom())
    with pytest.raises(ValueError, match="cannot encode strings in the graph"):
        graph_ops.encode_strings(tf.constant(["x"]), Custom())


def test_the_serving_path_is_the_same_module():
    from t2t.serving import vocab_ops  # T2T-era path, kept for user code
    assert vocab_ops is graph_ops

