"""From a parsed example to what the windows are cut from: context, byte map, answer.

    entry = prepare_example(example, max_passages=45)
    entry.context.data        # b"\\xee\\x80\\x86 <candidate 0> \\xee\\x80\\x87 <candidate 1> ..."
    entry.context.byte_map    # int64 array: document byte of each context byte, -1 for
                              # marker bytes and the joining spaces
    entry.answer              # Answer(type=MINIMAL, candidate_index=1, start_byte=57, ...)
    entry.answer_context_span # (83, 101): the same bytes in the context

Worked example (one candidate, document b"Q: x. Bangkok is big."):

    candidates = [Candidate(6, 21)]; minimal answer = bytes [6, 13) ("Bangkok")
    context    = "\\ue006 Bangkok is big."   (marker: 3 bytes, then a space)
    byte_map   = [-1, -1, -1, -1, 6, 7, ..., 20]
    answer_context_span = (4, 11)  and  context.data[4:11] == document[6:13]

What can go wrong is counted, never silently misaligned: `prepare_example` raises
`SkipExample(reason)` with one of `SKIP_REASONS`, and the pipeline counts the reasons.
Fixes over the reference (`baseline/preproc.py`, CANINE's copy): YES/NO labels are kept
(the reference overwrote them with PASSAGE), a minimal answer is checked against the
document bytes and character boundaries (the reference compared two `errors="replace"`
decodings, so a span cut mid-character passed), and only the candidates that are used
must have offsets.
"""
import dataclasses
from typing import Optional, Tuple

import numpy as np

from t2t.tydiqa import data
from t2t.tydiqa.data import AnswerType

SKIP_REASONS = (
    "candidate_offsets_missing",   # a used candidate has offset -1
    "candidate_misaligned",        # a used candidate is empty, outside the document or
                                   # not on character boundaries
    "answer_candidate_missing",    # the annotation names a candidate that does not exist
    "minimal_answer_mismatch",     # the minimal span is not inside its passage on
                                   # character boundaries
    "answer_has_no_tokens",        # the tokenizer gives no position inside the answer
)


class SkipExample(Exception):
    """An example that cannot be used; `reason` is one of SKIP_REASONS."""

    def __init__(self, reason, detail=""):
        super().__init__("%s%s" % (reason, ": " + detail if detail else ""))
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class Answer:
    """The answer to learn, in document bytes [start_byte, end_byte); -1s when UNKNOWN.

    YES / NO / PASSAGE answers span their whole passage candidate.
    """
    type: AnswerType
    candidate_index: int = -1
    start_byte: int = -1
    end_byte: int = -1


UNKNOWN_ANSWER = Answer(AnswerType.UNKNOWN)


@dataclasses.dataclass(frozen=True)
class ContextPiece:
    """Candidate `candidate_index` in the context: its marker at `marker_start` (context
    bytes), its text at context bytes [text_start, text_end), document bytes from
    `document_start`."""
    candidate_index: int
    marker_start: int
    text_start: int
    text_end: int
    document_start: int


@dataclasses.dataclass(frozen=True, eq=False)
class Context:
    """The candidates joined as "marker text marker text ...", with its byte map."""
    data: bytes
    byte_map: np.ndarray  # int64 [len(data)]: document byte, or -1
    pieces: Tuple[ContextPiece, ...]

    @property
    def text(self):
        return self.data.decode("utf-8")


@dataclasses.dataclass(frozen=True, eq=False)
class Entry:
    """A usable example: the context to window and the answer in context bytes."""
    example: data.TydiExample
    context: Context
    answer: Answer
    answer_context_span: Tuple[int, int] = (-1, -1)


def select_annotation(example, max_passages) -> Optional[data.Annotation]:
    """The annotation to learn from, as the reference chooses it.

    Among annotations with a passage answer, by candidate index: the first with a minimal
    answer in the first `max_passages` candidates; else the first passage-only one there;
    else None (the example's answer is UNKNOWN).
    """
    positive = sorted((a for a in example.annotations if a.has_passage),
                      key=lambda a: a.passage_index)
    for annotation in positive:
        if annotation.has_minimal and annotation.passage_index < max_passages:
            return annotation
    for annotation in positive:
        if annotation.passage_index < max_passages:
            return annotation
    return None


def make_answer(example, annotation) -> Answer:
    """The Answer of `annotation` (None -> UNKNOWN), checked against the document bytes."""
    if annotation is None:
        return UNKNOWN_ANSWER
    index = annotation.passage_index
    if index >= len(example.candidates):
        raise SkipExample("answer_candidate_missing", "candidate %d of %d" %
                          (index, len(example.candidates)))
    candidate = example.candidates[index]
    if annotation.has_minimal:
        start, end = annotation.minimal_start_byte, annotation.minimal_end_byte
        document = example.document
        if not (candidate.start_byte <= start < end <= candidate.end_byte and
                data.is_char_boundary(document, start) and data.is_char_boundary(document, end)):
            raise SkipExample("minimal_answer_mismatch", "bytes [%d, %d) in candidate %d "
                              "[%d, %d)" % (start, end, index, candidate.start_byte,
                                            candidate.end_byte))
        return Answer(AnswerType.MINIMAL, index, start, end)
    if annotation.yes_no in ("YES", "NO"):
        return Answer(AnswerType[annotation.yes_no], index, candidate.start_byte,
                      candidate.end_byte)
    return Answer(AnswerType.PASSAGE, index, candidate.start_byte, candidate.end_byte)


def _check_candidates(example, count):
    document = example.document
    for index in range(count):
        candidate = example.candidates[index]
        start, end = candidate.start_byte, candidate.end_byte
        if start < 0 or end < 0:
            raise SkipExample("candidate_offsets_missing", "candidate %d" % index)
        if not (start < end <= len(document) and data.is_char_boundary(document, start) and
                data.is_char_boundary(document, end)):
            raise SkipExample("candidate_misaligned", "candidate %d [%d, %d) of a %d-byte "
                              "document" % (index, start, end, len(document)))


def build_context(example, max_passages) -> Context:
    """Join the first `max_passages` candidates, each after its marker, with spaces."""
    count = min(len(example.candidates), max_passages)
    _check_candidates(example, count)
    parts, pieces = [], []
    position = 0
    for index in range(count):
        candidate = example.candidates[index]
        marker = data.candidate_marker(index).encode("utf-8")
        text = example.document[candidate.start_byte:candidate.end_byte]
        if parts:
            position += 1  # the joining space
        text_start = position + len(marker) + 1
        pieces.append(ContextPiece(index, position, text_start, text_start + len(text),
                                   candidate.start_byte))
        parts.extend((marker, text))
        position = text_start + len(text)
    context = b" ".join(parts)
    byte_map = np.full(len(context), -1, dtype=np.int64)
    for piece in pieces:
        byte_map[piece.text_start:piece.text_end] = np.arange(
            piece.document_start, piece.document_start + piece.text_end - piece.text_start)
    return Context(context, byte_map, tuple(pieces))


def prepare_example(example, max_passages) -> Entry:
    """TydiExample -> Entry (context, byte map, verified answer); SkipExample if unusable."""
    context = build_context(example, max_passages)
    answer = make_answer(example, select_annotation(example, max_passages))
    if answer.type == AnswerType.UNKNOWN:
        return Entry(example, context, answer)
    piece = context.pieces[answer.candidate_index]
    start = piece.text_start + answer.start_byte - piece.document_start
    end = start + answer.end_byte - answer.start_byte
    # By construction the bytes agree; checked anyway, as the pipeline promises.
    if context.data[start:end] != example.document[answer.start_byte:answer.end_byte]:
        raise AssertionError("context bytes [%d, %d) differ from document bytes [%d, %d) in "
                             "example %d" % (start, end, answer.start_byte, answer.end_byte,
                                             example.example_id))
    return Entry(example, context, answer, (start, end))
