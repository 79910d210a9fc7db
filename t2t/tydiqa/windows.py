"""`[CLS] question [SEP] window [SEP]` features over a context, with labels and byte spans.

    config = WindowConfig(max_seq_length=16, doc_stride=4, max_question_length=4)
    windows = make_windows(entry, CodepointTokenizer(), config, example_index=0,
                           training=False)
    windows[0]["inputs"]        # [0xE000, 0xE005, q.., 0xE001, <up to 16-len(q)-3 context
                                #  ids>, 0xE001, 0, 0, ...]   (length max_seq_length)
    windows[0]["segment_ids"]   # 0 over [CLS] question [SEP], 1 over the window and last [SEP]
    windows[0]["byte_start"]    # document byte where each position starts; -1 for none
    windows[0]["start_position"], windows[0]["end_position"], windows[0]["answer_type"]

Windows: the context positions are cut into windows of `max_seq_length - len(question)
- 3` positions, advancing by `doc_stride` until a window reaches the end: with
2,048-position windows and stride 512, 3,000 positions give [0:2048], [512:2560],
[1024:3000].

The question is `[Q]` followed by the last `max_question_length - 1` question tokens
(the reference cut "[Q] question" from the left, so a long question lost its [Q]).

Labels: a window holding the whole answer gets (start, end, type) with start/end the
positions of the answer's first and last tokens; any other window, or any window of an
UNKNOWN example, gets (0, 0, UNKNOWN) and in training is kept only with probability
`include_unknowns` (negative: never), drawn from the `rng` passed in (the reference used
the unseeded global `random`).
"""
import dataclasses
import random

import numpy as np

from t2t.tydiqa.data import AnswerType
from t2t.tydiqa.preprocess import SkipExample

# Features of every window; EVAL_FEATURES only in eval (dev) files.
SEQUENCE_FEATURES = ("inputs", "input_mask", "segment_ids")
EVAL_SEQUENCE_FEATURES = ("byte_start", "byte_end")
SCALAR_FEATURES = ("example_id", "example_index", "window_index", "language_id",
                   "start_position", "end_position", "answer_type")


@dataclasses.dataclass(frozen=True)
class WindowConfig:
    """Windowing settings; the defaults are the mBERT baseline's."""
    max_seq_length: int = 512
    doc_stride: int = 128
    max_question_length: int = 64
    include_unknowns: float = 0.1

    def __post_init__(self):
        if self.max_question_length < 1:
            raise ValueError("max_question_length=%d: give at least 1 (the [Q] marker)" %
                             self.max_question_length)
        if self.max_seq_length < self.max_question_length + 4:
            raise ValueError("max_seq_length=%d leaves no room for the document after a "
                             "%d-token question and [CLS], [SEP], [SEP]; give at least %d" %
                             (self.max_seq_length, self.max_question_length,
                              self.max_question_length + 4))
        if self.doc_stride < 1:
            raise ValueError("doc_stride=%d: give a positive stride" % self.doc_stride)
        if self.include_unknowns > 1:
            raise ValueError("include_unknowns=%r is a probability; give at most 1 (negative: "
                             "never)" % self.include_unknowns)


def question_ids(tokenizer, question, max_question_length):
    """[Q] and the last `max_question_length - 1` ids of the question."""
    ids = tokenizer.encode(question)
    keep = max_question_length - 1
    return [tokenizer.q_id] + (ids[len(ids) - keep:] if keep and len(ids) > keep else
                               ids if keep else [])


def window_spans(num_positions, window_length, doc_stride):
    """[(start, length)]: windows of `window_length` advancing by `doc_stride` (at most the
    window length) until one reaches the end.

        window_spans(3000, 2048, 512)   # [(0, 2048), (512, 2048), (1024, 1976)]
        window_spans(0, 10, 4)          # []
    """
    if window_length < 1:
        raise ValueError("window_length=%d: no room for the document" % window_length)
    spans, start = [], 0
    while start < num_positions:
        length = min(num_positions - start, window_length)
        spans.append((start, length))
        if start + length == num_positions:
            break
        start += min(length, doc_stride)
    return spans


def answer_positions(entry, positions):
    """(first, last) context positions holding the answer; SkipExample if none does."""
    start, end = entry.answer_context_span
    inside = np.nonzero((positions.context_end > start) & (positions.context_start < end) &
                        (positions.document_start >= 0))[0]
    if not len(inside):
        raise SkipExample("answer_has_no_tokens", "context bytes [%d, %d)" % (start, end))
    return int(inside[0]), int(inside[-1])


@dataclasses.dataclass(frozen=True, eq=False)
class WindowPlan:
    """An example's windows before they become features: compact to send between
    processes (the context once, not once per overlapping window)."""
    example_id: int
    example_index: int
    language_id: int
    head: np.ndarray            # [CLS] [Q] question [SEP]
    ids: np.ndarray             # context positions (int32)
    document_start: np.ndarray  # int32, -1 for none
    document_end: np.ndarray
    windows: tuple              # (window index, start, size, start label, end label, type)
    max_seq_length: int
    sep_id: int
    training: bool


def plan_windows(entry, tokenizer, config, example_index, training, rng=None,
                 positions=None):
    """Which windows an example gives and their labels (see `make_windows`)."""
    if positions is None:
        positions = tokenizer.tokenize_context(entry.context)
    if rng is None:
        rng = random.Random(entry.example.example_id)
    answer_type = entry.answer.type
    first = last = -1
    if answer_type != AnswerType.UNKNOWN:
        first, last = answer_positions(entry, positions)

    question = question_ids(tokenizer, entry.example.question, config.max_question_length)
    doc_offset = len(question) + 2
    window_length = config.max_seq_length - len(question) - 3
    kept = []
    for window_index, (start, size) in enumerate(
            window_spans(len(positions.ids), window_length, config.doc_stride)):
        contains = answer_type != AnswerType.UNKNOWN and start <= first and last < start + size
        if contains:
            label = (first - start + doc_offset, last - start + doc_offset, int(answer_type))
        else:
            if training and (config.include_unknowns < 0 or
                             rng.random() > config.include_unknowns):
                continue
            label = (0, 0, int(AnswerType.UNKNOWN))
        kept.append((window_index, start, size) + label)
    return WindowPlan(
        entry.example.example_id, example_index, entry.example.language_id,
        np.array([tokenizer.cls_id] + question + [tokenizer.sep_id], dtype=np.int64),
        positions.ids.astype(np.int32), positions.document_start.astype(np.int32),
        positions.document_end.astype(np.int32), tuple(kept), config.max_seq_length,
        tokenizer.sep_id, training)


def materialize(plan):
    """The feature dicts of a WindowPlan's windows."""
    length = plan.max_seq_length
    doc_offset = len(plan.head)
    windows = []
    for window_index, start, size, start_label, end_label, answer_type in plan.windows:
        used = doc_offset + size + 1
        inputs = np.zeros(length, dtype=np.int64)
        inputs[:doc_offset] = plan.head
        inputs[doc_offset:doc_offset + size] = plan.ids[start:start + size]
        inputs[doc_offset + size] = plan.sep_id
        mask = np.zeros(length, dtype=np.int64)
        mask[:used] = 1
        segments = np.zeros(length, dtype=np.int64)
        segments[doc_offset:used] = 1
        features = {
            "inputs": inputs, "input_mask": mask, "segment_ids": segments,
            "example_id": np.array([plan.example_id], dtype=np.int64),
            "example_index": np.array([plan.example_index], dtype=np.int64),
            "window_index": np.array([window_index], dtype=np.int64),
            "language_id": np.array([plan.language_id], dtype=np.int64),
            "start_position": np.array([start_label], dtype=np.int64),
            "end_position": np.array([end_label], dtype=np.int64),
            "answer_type": np.array([answer_type], dtype=np.int64),
        }
        if not plan.training:
            byte_start = np.full(length, -1, dtype=np.int64)
            byte_end = np.full(length, -1, dtype=np.int64)
            byte_start[doc_offset:doc_offset + size] = plan.document_start[start:start + size]
            byte_end[doc_offset:doc_offset + size] = plan.document_end[start:start + size]
            features["byte_start"] = byte_start
            features["byte_end"] = byte_end
        windows.append(features)
    return windows


def make_windows(entry, tokenizer, config, example_index, training, rng=None,
                 positions=None):
    """The feature dicts of one example's windows (see the module docstring).

    Args:
      entry: a `preprocess.Entry`.
      tokenizer: a tokenizer of `t2t.tydiqa.tokenizers`.
      config: a WindowConfig.
      example_index: the example's 0-based index in its file (fits int32, unlike ids).
      training: drop windows without the answer (keeping `include_unknowns` of them) and
        leave out the per-position byte spans.
      rng: a `random.Random` for that sampling (default: seeded by the example id).
      positions: the context's `tokenize_context` result, if already computed.

    Returns:
      A list of {feature: int64 numpy array} dicts (scalars as 1-element arrays).
    """
    return materialize(plan_windows(entry, tokenizer, config, example_index, training, rng,
                                    positions))
