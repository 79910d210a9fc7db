"""Per-window logits -> one official-format prediction per example.

    builder = PredictionBuilder(examples, PostprocessConfig(candidate_beam=30,
                                                            max_answer_length=100))
    for result in model_outputs:      # one dict per window, any order
        builder.add(result["example_index"], result["start_logits"], result["end_logits"],
                    result["answer_type_logits"], result["byte_start"], result["byte_end"])
    builder.predictions()[0]
    # {"example_id": -7844302010475592281, "language": "thai", "passage_answer_index": 2,
    #  "passage_answer_score": 7.1, "minimal_answer": {"start_byte_offset": 1024,
    #  "end_byte_offset": 1051}, "minimal_answer_score": 7.1, "yes_no_answer": "NONE"}

In each window, the `candidate_beam` best start and end positions (position 0, [CLS],
excluded) are paired; a pair is a candidate when end >= start, both positions hold
document bytes, it spans at most `max_answer_length` positions and lies inside one
passage candidate. Its score is start + end logit minus the [CLS] start + end logits (the
reference's). The best candidate over all windows is the minimal answer, the first passage
candidate containing it the passage answer; when the answer-type head of that window says
YES or NO, the prediction is that YES/NO (with a null minimal span, as the format
requires). An example without any candidate (or without windows) gets a null prediction:
passage -1, span (-1, -1), scores 0, never a missing line.

Differences from the reference `postproc.py`: `max_answer_length` is honoured (it
hard-coded 100), windows are joined by example index (it sorted ids cast to int32, which
could merge examples), the answer-type head is used for YES/NO (it was ignored) and spans
that cross two passages are not candidates.
"""
import dataclasses
from typing import Dict, List

import numpy as np

from t2t.tydiqa.data import AnswerType


@dataclasses.dataclass(frozen=True)
class PostprocessConfig:
    candidate_beam: int = 30
    max_answer_length: int = 100

    def __post_init__(self):
        if self.candidate_beam < 1 or self.max_answer_length < 1:
            raise ValueError("candidate_beam=%d, max_answer_length=%d: give positive values" %
                             (self.candidate_beam, self.max_answer_length))


def _top(logits, k):
    """Indices of the k largest logits, position 0 excluded, best first."""
    rest = logits[1:]
    k = min(k, len(rest))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    top = np.argpartition(-rest, k - 1)[:k]
    return top[np.argsort(-rest[top], kind="stable")] + 1


def window_spans(start_logits, end_logits, byte_start, byte_end, config):
    """(scores, start positions, end positions) of a window's valid pairs, best first."""
    start_logits = np.asarray(start_logits, dtype=np.float64)
    end_logits = np.asarray(end_logits, dtype=np.float64)
    byte_start, byte_end = np.asarray(byte_start), np.asarray(byte_end)
    starts = _top(start_logits, config.candidate_beam)
    ends = _top(end_logits, config.candidate_beam)
    starts, ends = starts[byte_start[starts] >= 0], ends[byte_end[ends] >= 0]
    s, e = np.meshgrid(starts, ends, indexing="ij")
    s, e = s.ravel(), e.ravel()
    keep = (e >= s) & (e - s + 1 <= config.max_answer_length)
    s, e = s[keep], e[keep]
    scores = start_logits[s] + end_logits[e] - (start_logits[0] + end_logits[0])
    order = np.argsort(-scores, kind="stable")
    return scores[order], s[order], e[order]


def containing_candidate(candidates, start_byte, end_byte):
    """Index of the first candidate [s, e) with s <= start_byte and end_byte <= e, or -1."""
    for index, (start, end) in enumerate(candidates):
        if start <= start_byte and end_byte <= end:
            return index
    return -1


def null_prediction(info):
    return {"example_id": info.example_id, "language": info.language,
            "passage_answer_index": -1, "passage_answer_score": 0.0,
            "minimal_answer": {"start_byte_offset": -1, "end_byte_offset": -1},
            "minimal_answer_score": 0.0, "yes_no_answer": "NONE"}


class PredictionBuilder:
    """Keeps the best span of each example while windows' outputs arrive."""

    def __init__(self, examples, config=PostprocessConfig()):
        self.examples = list(examples)
        self.config = config
        self._by_index = {info.example_index: info for info in self.examples}
        self._best: Dict[int, tuple] = {}
        self._windows: Dict[int, int] = {}

    def add(self, example_index, start_logits, end_logits, answer_type_logits, byte_start,
            byte_end):
        example_index = int(np.asarray(example_index).reshape(-1)[0])
        info = self._by_index.get(example_index)
        if info is None:
            raise ValueError("model output for example index %d, which the examples file "
                             "does not list; regenerate the data with t2t-datagen" %
                             example_index)
        self._windows[example_index] = self._windows.get(example_index, 0) + 1
        scores, starts, ends = window_spans(start_logits, end_logits, byte_start, byte_end,
                                            self.config)
        best = self._best.get(example_index)
        for score, start, end in zip(scores, starts, ends):
            if best is not None and score <= best[0]:
                return
            start_byte, end_byte = int(byte_start[start]), int(byte_end[end])
            passage = containing_candidate(info.candidates, start_byte, end_byte)
            if passage < 0:
                continue  # crosses two passages
            answer_type = int(np.argmax(answer_type_logits))
            self._best[example_index] = (float(score), start_byte, end_byte, passage,
                                         answer_type)
            return

    def prediction(self, info):
        best = self._best.get(info.example_index)
        if best is None:
            return null_prediction(info)
        score, start_byte, end_byte, passage, answer_type = best
        prediction = {"example_id": info.example_id, "language": info.language,
                      "passage_answer_index": passage, "passage_answer_score": score,
                      "minimal_answer": {"start_byte_offset": start_byte,
                                         "end_byte_offset": end_byte},
                      "minimal_answer_score": score, "yes_no_answer": "NONE"}
        if answer_type in (AnswerType.YES, AnswerType.NO):
            prediction["yes_no_answer"] = AnswerType(answer_type).name
            prediction["minimal_answer"] = {"start_byte_offset": -1, "end_byte_offset": -1}
        return prediction

    def predictions(self) -> List[dict]:
        """One prediction per example, in the examples' order."""
        return [self.prediction(info) for info in self.examples]

    @property
    def num_windows(self):
        return sum(self._windows.values())
