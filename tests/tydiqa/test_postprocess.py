"""t2t.tydiqa.postprocess: window logits -> official predictions, on constructed logits."""
import numpy as np
import pytest

from t2t.tydiqa import postprocess
from t2t.tydiqa.pipeline import ExampleInfo

L = 12
# Positions 0-3 are [CLS] question [SEP]; 4.. document tokens at bytes 100 + 10 * k.
BYTE_START = np.array([-1] * 4 + [100 + 10 * k for k in range(7)] + [-1])
BYTE_END = np.where(BYTE_START >= 0, BYTE_START + 10, -1)
CANDIDATES = ((100, 140), (140, 170))


def info(index=0, example_id=-(2 ** 63) + 1, candidates=CANDIDATES):
    return ExampleInfo(index, example_id, "thai", candidates, 1)


def logits(start_at=None, end_at=None, cls=0.0):
    start, end = np.zeros(L), np.zeros(L)
    start[0] = end[0] = cls
    if start_at is not None:
        start[start_at] = 5.0
    if end_at is not None:
        end[end_at] = 4.0
    return start, end


TYPE_MINIMAL = np.array([0, 0, 0, 9.0, 0])


def build(config=postprocess.PostprocessConfig(), examples=None):
    return postprocess.PredictionBuilder(examples or [info()], config)


def test_best_span_its_passage_and_score():
    builder = build()
    start, end = logits(5, 6, cls=1.0)
    builder.add(0, start, end, TYPE_MINIMAL, BYTE_START, BYTE_END)
    prediction = builder.predictions()[0]
    assert prediction == {
        "example_id": -(2 ** 63) + 1, "language": "thai", "passage_answer_index": 0,
        "passage_answer_score": 5.0 + 4.0 - 2.0,
        "minimal_answer": {"start_byte_offset": 110, "end_byte_offset": 130},
        "minimal_answer_score": 7.0, "yes_no_answer": "NONE"}


def test_best_window_wins():
    builder = build()
    builder.add(0, *logits(5, 5), TYPE_MINIMAL, BYTE_START, BYTE_END)
    start, end = logits(8, 9)
    start[8] = 7.0
    builder.add(0, start, end, TYPE_MINIMAL, BYTE_START, BYTE_END)
    prediction = builder.predictions()[0]
    assert prediction["minimal_answer"] == {"start_byte_offset": 140, "end_byte_offset": 160}
    assert prediction["passage_answer_index"] == 1 and prediction["minimal_answer_score"] == 11


def test_max_answer_length_is_honoured():
    start, end = logits(4, 7)   # 4 positions: bytes 100..140, all of candidate 0
    builder = build(postprocess.PostprocessConfig(max_answer_length=4))
    builder.add(0, start, end, TYPE_MINIMAL, BYTE_START, BYTE_END)
    assert builder.predictions()[0]["minimal_answer"] == {"start_byte_offset": 100,
                                                          "end_byte_offset": 140}
    builder = build(postprocess.PostprocessConfig(max_answer_length=3))
    builder.add(0, start, end, TYPE_MINIMAL, BYTE_START, BYTE_END)
    narrow = builder.predictions()[0]["minimal_answer"]
    assert 0 < narrow["end_byte_offset"] - narrow["start_byte_offset"] <= 30


def test_spans_crossing_passages_are_not_answers():
    start, end = logits(6, 8)   # bytes 120..160: candidate 0 ends at 140
    builder = build()
    builder.add(0, start, end, TYPE_MINIMAL, BYTE_START, BYTE_END)
    span = builder.predictions()[0]["minimal_answer"]
    assert any(s <= span["start_byte_offset"] and span["end_byte_offset"] <= e
               for s, e in CANDIDATES)


def test_yes_no_from_the_answer_type_head():
    builder = build()
    builder.add(0, *logits(4, 7), np.array([0, 9.0, 0, 1, 0]), BYTE_START, BYTE_END)
    prediction = builder.predictions()[0]
    assert prediction["yes_no_answer"] == "YES"
    assert prediction["minimal_answer"] == {"start_byte_offset": -1, "end_byte_offset": -1}
    assert prediction["passage_answer_index"] == 0


def test_every_example_gets_a_line_null_when_nothing_is_found():
    examples = [info(0), info(1, 42), info(2, 43)]
    builder = build(examples=examples)
    builder.add(1, *logits(5, 5), TYPE_MINIMAL, BYTE_START, BYTE_END)
    # Example 2: only positions without document bytes.
    builder.add(2, *logits(2, 3), TYPE_MINIMAL, np.full(L, -1), np.full(L, -1))
    predictions = builder.predictions()
    assert [p["example_id"] for p in predictions] == [e.example_id for e in examples]
    assert predictions[1]["passage_answer_index"] == 0
    for null in (predictions[0], predictions[2]):
        assert null["passage_answer_index"] == -1
        assert null["minimal_answer"] == {"start_byte_offset": -1, "end_byte_offset": -1}
        assert null["yes_no_answer"] == "NONE"


def test_candidate_beam_limits_the_pairs():
    start, end = np.zeros(L), np.zeros(L)
    start[4:11] = np.arange(7, 0, -1)        # best start 4, then 5, ...
    end[4:11] = np.arange(1, 8)              # best end 10, then 9, ...
    scores, starts, ends = postprocess.window_spans(
        start, end, BYTE_START, BYTE_END, postprocess.PostprocessConfig(candidate_beam=2))
    assert set(starts) <= {4, 5} and set(ends) <= {9, 10}
    assert list(scores) == sorted(scores, reverse=True)


def test_unknown_example_index_is_an_error():
    with pytest.raises(ValueError, match="example index 7"):
        build().add(7, *logits(5, 5), TYPE_MINIMAL, BYTE_START, BYTE_END)
