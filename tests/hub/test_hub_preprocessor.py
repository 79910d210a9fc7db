"""The TF Hub preprocessor in-process: in-graph tokenization and BERT packing."""
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.core import errors
from t2t.encoders import text_encoder
from t2t.hub import bert_pack, preprocessor
from t2t.problems import masked_lm

EXAMPLES = settings(max_examples=40, deadline=None)


def _vocab(reserved=True):
    vocab = text_encoder.SubwordTextEncoder()
    counts = {w: 3 for w in "the cat sat on a mat big red dog ran under table".split()}
    counts.update({".": 5, ",": 2, "é": 1})
    tokens = text_encoder.RESERVED_TOKENS + (list(masked_lm.SPECIAL_TOKENS) if reserved else [])
    vocab.build_from_token_counts(counts, min_count=2, reserved_tokens=tokens)
    return vocab


VOCAB = _vocab()
PRE = preprocessor.Preprocessor(VOCAB, default_seq_length=12)


def _ragged(rows):
    return tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1) if rows else \
        tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int32), tf.zeros([0], tf.int64))


def _packed(segments_rows, seq_length):
    """Python reference: masked_lm.pack_segments + padding, per row."""
    words, masks, types = [], [], []
    for row in zip(*segments_rows):
        ids, type_ids = masked_lm.pack_segments(list(row), seq_length)
        ids, type_ids = ids[:seq_length], type_ids[:seq_length]
        pad = seq_length - len(ids)
        words.append(ids + [0] * pad)
        masks.append([1] * len(ids) + [0] * pad)
        types.append(type_ids + [0] * pad)
    return {"input_word_ids": words, "input_mask": masks, "input_type_ids": types}


segment_rows = st.lists(st.integers(5, 40), max_size=15)


@EXAMPLES
@given(st.lists(st.tuples(segment_rows, segment_rows), min_size=1, max_size=4),
       st.integers(3, 20), st.booleans())
def test_bert_pack_inputs_matches_round_robin_reference(rows, seq_length, two_segments):
    firsts = [list(r[0]) for r in rows]
    seconds = [list(r[1]) for r in rows]
    segments = [firsts, seconds] if two_segments else [firsts]
    out = bert_pack.bert_pack_inputs([_ragged(s) for s in segments], seq_length,
                                     start_id=2, end_id=3, pad_id=0)
    got = {k: v.numpy().tolist() for k, v in out.items()}
    assert got == _packed(segments, seq_length)


def test_bert_pack_inputs_layout_example():
    a = tf.ragged.constant([[7, 8, 9, 10, 11], [7]])
    b = tf.ragged.constant([[20, 21, 22], [20, 21]])
    out = bert_pack.bert_pack_inputs([a, b], seq_length=8, start_id=2, end_id=3, pad_id=0)
    # Budget 8 - 3 = 5: A keeps 3, B 2; the second row fits whole.
    assert out["input_word_ids"].numpy().tolist() == [[2, 7, 8, 9, 3, 20, 21, 3],
                                                      [2, 7, 3, 20, 21, 3, 0, 0]]
    assert out["input_type_ids"].numpy().tolist() == [[0, 0, 0, 0, 0, 1, 1, 1],
                                                      [0, 0, 0, 1, 1, 1, 0, 0]]
    assert out["input_mask"].numpy().tolist() == [[1, 1, 1, 1, 1, 1, 1, 1],
                                                  [1, 1, 1, 1, 1, 1, 0, 0]]
    assert out["input_word_ids"].dtype == tf.int32 and out["input_word_ids"].shape == [2, 8]
    # Ragged rank 2 (words of pieces) is flattened first: row 0 holds both rows of a.
    words = tf.RaggedTensor.from_row_lengths(a, [2, 0])
    nested = bert_pack.bert_pack_inputs([words], 6, 2, 3, 0)["input_word_ids"]
    assert nested.numpy().tolist() == [[2, 7, 8, 9, 10, 3], [2, 3, 0, 0, 0, 0]]
    with pytest.raises(ValueError, match="1 or 2 segments"):
        bert_pack.bert_pack_inputs([a, a, a], 8, 2, 3, 0)


@EXAMPLES
@given(st.lists(st.text(alphabet="thecasmodgrunbl .,é!\\_", max_size=30), min_size=1,
                max_size=4))
def test_tokenize_is_the_vocabulary_encode(texts):
    tokens = PRE.tokenize(tf.constant(texts))
    assert isinstance(tokens, tf.RaggedTensor) and tokens.dtype == tf.int32
    assert tokens.to_list() == [VOCAB.encode(t) for t in texts]


def test_preprocessor_call_packs_one_segment_at_the_default_length():
    texts = ["the cat sat on the mat .", "", "big red dog ran under the table , the cat sat"]
    out = PRE(tf.constant(texts))
    assert set(out) == {"input_word_ids", "input_mask", "input_type_ids"}
    assert out["input_word_ids"].shape == [3, 12]
    expected = _packed([[VOCAB.encode(t) for t in texts]], 12)
    assert {k: v.numpy().tolist() for k, v in out.items()} == expected
    special = {k: int(v) for k, v in PRE.tokenize.get_special_tokens_dict().items()}
    assert special == {"vocab_size": VOCAB.vocab_size, "start_of_sequence_id": 2,
                       "end_of_segment_id": 3, "padding_id": 0, "mask_id": 4}


def test_bert_pack_inputs_seq_length_is_optional_and_overridable():
    tokens = PRE.tokenize(tf.constant(["the cat sat on the mat", "a dog ran"]))
    assert PRE.bert_pack_inputs([tokens])["input_word_ids"].shape == [2, 12]
    short = PRE.bert_pack_inputs([tokens, tokens], seq_length=tf.constant(7, tf.int32))
    assert short["input_word_ids"].shape[1] == 7
    assert short["input_word_ids"].numpy().tolist() == _packed(
        [tokens.to_list(), tokens.to_list()], 7)["input_word_ids"]


def test_vocabularies_without_bert_tokens_are_user_errors():
    with pytest.raises(errors.UserError, match="no \\[CLS\\] token"):
        preprocessor.Preprocessor(_vocab(reserved=False))
    with pytest.raises(errors.UserError, match="SubwordTextEncoder"):
        preprocessor.Preprocessor(text_encoder.ByteTextEncoder())
    with pytest.raises(errors.UserError, match="at least 3"):
        preprocessor.Preprocessor(VOCAB, default_seq_length=2)


def test_export_saves_without_the_capture_rename_notice(tmp_path):
    """TF logged "Function `__call__` contains input name(s) 17287 with unsupported
    characters ..." for the vocabulary table the preprocessor's signature captures."""
    import logging as std_logging
    from absl import logging as absl_logging
    from t2t.hub import export as hub_export
    messages = []

    class Keep(std_logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    handler, logger = Keep(), absl_logging.get_absl_logger()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(std_logging.INFO)
    try:
        hub_export.save(preprocessor.Preprocessor(_vocab(), 16), str(tmp_path / "ours"))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert not [m for m in messages if "unsupported characters" in m], messages
    loaded = tf.saved_model.load(str(tmp_path / "ours"))
    assert loaded(tf.constant(["a b"]))["input_word_ids"].shape == (1, 16)
