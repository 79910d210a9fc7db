"""T2TVocabulary: t2t's encoders (and T2T vocab files) as SeqIO vocabularies."""
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t import seqio
from t2t.encoders import text_encoder

from seqio_testing import corpus_lines


@pytest.fixture(scope="module")
def subword_file(tmp_path_factory):
    encoder = text_encoder.SubwordTextEncoder.build_from_generator(
        corpus_lines(200), target_size=120)
    path = str(tmp_path_factory.mktemp("vocab") / "vocab.test.subwords")
    encoder.store_to_file(path)
    return path


def test_subword_file_python_and_graph_agree(subword_file):
    vocab = seqio.T2TVocabulary(subword_file)
    encoder = text_encoder.SubwordTextEncoder(subword_file)
    assert (vocab.pad_id, vocab.eos_id, vocab.unk_id) == (0, 1, None)
    assert vocab.vocab_size == encoder.vocab_size
    for text in ["the cat sat on a mat", "Zebras, 42!", "", "ünïcode"]:
        ids = vocab.encode(text)
        assert ids == encoder.encode(text)
        assert vocab.encode_tf(tf.constant(text)).numpy().tolist() == ids
        assert vocab.decode(ids + [1, 7, 0]) == text
        assert vocab.decode_tf(tf.constant(ids + [1, 7, 0])).numpy().decode() == text


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=15),
                min_size=1, max_size=3))
def test_subword_decode_tf_round_trip_batched(subword_file, strings):
    vocab = seqio.T2TVocabulary(subword_file)
    rows = [vocab.encode(s) + [1] for s in strings]
    width = max(len(r) for r in rows)
    ids = tf.constant([r + [0] * (width - len(r)) for r in rows])
    assert [x.decode("utf-8") for x in vocab.decode_tf(ids).numpy()] == strings


def test_byte_and_token_encoders(tmp_path):
    byte = seqio.T2TVocabulary(text_encoder.ByteTextEncoder())
    assert byte.encode("hi") == [106, 107]
    assert byte.encode_tf(tf.constant(["hi", "a"])).to_list() == [[106, 107], [99]]
    assert byte.decode_tf(tf.constant([[106, 107, 1, 0], [0, 0, 0, 0]])).numpy().tolist() == \
        [b"hi", b""]
    vocab_file = tmp_path / "tokens.txt"
    vocab_file.write_text("<pad>\n<EOS>\ncat\ndog\n")
    token = seqio.T2TVocabulary.from_token_file(str(vocab_file))
    assert token.encode("dog cat") == [3, 2]
    assert token.decode_tf(tf.constant([3, 2, 1])).numpy() == b"dog cat"


def test_extra_ids_and_equality(subword_file):
    vocab = seqio.T2TVocabulary(subword_file, extra_ids=4)
    base = vocab.vocab_size - 4
    ids = vocab.encode("the dog")
    assert vocab.decode(ids + [base, base + 3]) == "the dog"
    assert vocab.decode_tf(tf.constant(ids + [base + 1, 1])).numpy() == b"the dog"
    assert vocab == seqio.T2TVocabulary(text_encoder.SubwordTextEncoder(subword_file),
                                        extra_ids=4)
    assert vocab != seqio.T2TVocabulary(subword_file)
    assert seqio.T2TVocabulary(text_encoder.ByteTextEncoder()) != seqio.T2TVocabulary(
        subword_file)


def test_custom_encoder_runs_through_numpy_function():
    class Upper(text_encoder.ByteTextEncoder):
        def encode(self, s):
            return super().encode(s.upper())

    vocab = seqio.T2TVocabulary(Upper())
    assert vocab.encode_tf(tf.constant("hi")).numpy().tolist() == vocab.encode("hi") == \
        [74, 75]
    assert vocab.decode_tf(tf.constant([74, 75, 1])).numpy() == b"HI"


def test_bad_arguments():
    with pytest.raises(ValueError, match="no vocab file /nope"):
        seqio.T2TVocabulary("/nope")
    with pytest.raises(TypeError, match="expected a t2t TextEncoder"):
        seqio.T2TVocabulary(42)
