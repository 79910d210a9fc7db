"""The TyDi QA primary-task schema: examples, candidates, annotations, byte helpers.

A line of `tydiqa-v1.0-{train,dev}.jsonl.gz` is one question about one Wikipedia article.
Every offset is a UTF-8 **byte** offset into `document_plaintext`, end-exclusive, and -1
means "none":

    line = {"example_id": -7844302010475592281, "language": "thai",
            "question_text": "...", "document_title": "...", "document_url": "...",
            "document_plaintext": "...",
            "passage_answer_candidates": [{"plaintext_start_byte": 0,
                                           "plaintext_end_byte": 120}, ...],
            "annotations": [{"annotation_id": 1, "passage_answer": {"candidate_index": 0},
                             "minimal_answer": {"plaintext_start_byte": 12,
                                                "plaintext_end_byte": 30},
                             "yes_no_answer": "NONE"}]}
    example = parse_example(line)
    example.document[12:30].decode("utf-8")     # the minimal answer text
    example.candidates[0]                         # Candidate(start_byte=0, end_byte=120)

`document` is kept as bytes so that slicing can never mix up bytes and characters (the
bug of the reference code that sliced a `str` with byte offsets).
"""
import dataclasses
import enum
import gzip
import json
import zlib
from typing import Iterator, Optional, Tuple

from t2t.core import errors


class TydiFormatError(errors.UserError):
    """A jsonl line that does not follow the TyDi QA schema."""


class AnswerType(enum.IntEnum):
    """The label of the answer-type head (the reference's values)."""
    UNKNOWN = 0
    YES = 1
    NO = 2
    MINIMAL = 3
    PASSAGE = 4


class Language(enum.IntEnum):
    """TyDi QA's languages, with the reference's ids (`language_id` feature)."""
    ARABIC = 0
    BENGALI = 1
    FINNISH = 2
    INDONESIAN = 3
    JAPANESE = 4
    SWAHILI = 5
    KOREAN = 6
    RUSSIAN = 7
    TELUGU = 8
    THAI = 9
    ENGLISH = 10


LANGUAGES = tuple(language.name.lower() for language in Language)
YES_NO_VALUES = ("YES", "NO", "NONE")

# CANINE's private-use codepoints (never assigned by Unicode): [CLS], [SEP], [Q] and a
# context marker per passage candidate, CANDIDATE_MARKER_BASE + candidate index.
PAD_CODEPOINT = 0
CLS_CODEPOINT = 0xE000
SEP_CODEPOINT = 0xE001
Q_CODEPOINT = 0xE005
CANDIDATE_MARKER_BASE = 0xE006
MAX_CANDIDATE_MARKERS = 0xF8FF - CANDIDATE_MARKER_BASE + 1  # the end of the BMP private area


def candidate_marker(index):
    """The one-character marker put before candidate `index` in the context: U+E006 + i."""
    if not 0 <= index < MAX_CANDIDATE_MARKERS:
        raise ValueError("candidate index %d has no marker; at most %d candidates (lower "
                         "max_passages)" % (index, MAX_CANDIDATE_MARKERS))
    return chr(CANDIDATE_MARKER_BASE + index)


def language_id(name):
    """"Thai" or "thai" -> 9; an unknown name is a TydiFormatError listing the known ones."""
    try:
        return int(Language[str(name).upper()])
    except KeyError:
        raise TydiFormatError("unknown TyDi QA language %r; expected one of %s" %
                              (name, ", ".join(LANGUAGES))) from None


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A passage answer candidate: document bytes [start_byte, end_byte)."""
    start_byte: int
    end_byte: int


@dataclasses.dataclass(frozen=True)
class Annotation:
    """One annotator's answer; -1 for a missing passage or minimal answer."""
    passage_index: int
    minimal_start_byte: int
    minimal_end_byte: int
    yes_no: str = "NONE"
    annotation_id: int = 0

    @property
    def has_passage(self):
        return self.passage_index >= 0

    @property
    def has_minimal(self):
        return self.minimal_start_byte >= 0


@dataclasses.dataclass(frozen=True)
class TydiExample:
    """One parsed jsonl line. `document` is the UTF-8 bytes of `document_plaintext`."""
    example_id: int
    language: str
    question: str
    document: bytes
    candidates: Tuple[Candidate, ...]
    annotations: Tuple[Annotation, ...] = ()
    title: str = ""
    url: str = ""

    @property
    def language_id(self):
        return language_id(self.language)

    def candidate_bytes(self, index):
        candidate = self.candidates[index]
        return self.document[candidate.start_byte:candidate.end_byte]


# ------------------------------------------------------------------------- byte helpers
def byte_len(text):
    """Length of `text` in UTF-8 bytes: byte_len("ไทย") == 9."""
    return len(text.encode("utf-8"))


def is_char_boundary(data, offset):
    """Whether byte `offset` of UTF-8 `data` starts a character (or is len(data)).

        is_char_boundary("aé".encode(), 2)   # False: the middle of "é"
    """
    if offset < 0 or offset > len(data):
        return False
    return offset == len(data) or (data[offset] & 0xC0) != 0x80


def byte_slice(data, start, end):
    """The text of UTF-8 bytes [start, end); a UnicodeDecodeError when cut mid-character.

    Unlike the reference's `errors="replace"` (which hid misaligned spans behind U+FFFD),
    a span that does not fall on character boundaries is an error.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    return data[start:end].decode("utf-8")


# ------------------------------------------------------------------------- parsing
def _field(mapping, key, where, kind=None):
    if not isinstance(mapping, dict) or key not in mapping:
        raise TydiFormatError("%s: missing field %r; expected a TyDi QA jsonl line "
                              "(see https://github.com/google-research-datasets/tydiqa)" %
                              (where, key))
    value = mapping[key]
    if kind is int and isinstance(value, str) and value.lstrip("-").isdigit():
        value = int(value)  # Some copies of the data store 64-bit ids as strings.
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise TydiFormatError("%s: field %r is %r; expected an integer" % (where, key, value))
    if kind is str and not isinstance(value, str):
        raise TydiFormatError("%s: field %r is %r; expected a string" % (where, key, value))
    return value


def parse_annotation(raw, where="annotation"):
    passage = _field(raw, "passage_answer", where)
    minimal = _field(raw, "minimal_answer", where)
    yes_no = str(raw.get("yes_no_answer", "NONE")).upper()
    if yes_no not in YES_NO_VALUES:
        raise TydiFormatError("%s: yes_no_answer %r; expected YES, NO or NONE" % (where, yes_no))
    return Annotation(
        passage_index=_field(passage, "candidate_index", where + ".passage_answer", int),
        minimal_start_byte=_field(minimal, "plaintext_start_byte",
                                  where + ".minimal_answer", int),
        minimal_end_byte=_field(minimal, "plaintext_end_byte", where + ".minimal_answer", int),
        yes_no=yes_no,
        annotation_id=int(raw.get("annotation_id", 0) or 0))


def parse_example(raw, where="example"):
    """A decoded jsonl dict -> TydiExample; TydiFormatError naming `where` and the field."""
    if not isinstance(raw, dict):
        raise TydiFormatError("%s: expected a JSON object, got %s" % (where, type(raw).__name__))
    example_id = _field(raw, "example_id", where, int)
    where = "%s (example_id %d)" % (where, example_id)
    language = _field(raw, "language", where, str).lower()
    language_id(language)
    candidates = tuple(
        Candidate(_field(c, "plaintext_start_byte", where + ".passage_answer_candidates", int),
                  _field(c, "plaintext_end_byte", where + ".passage_answer_candidates", int))
        for c in _field(raw, "passage_answer_candidates", where))
    annotations = tuple(parse_annotation(a, "%s.annotations[%d]" % (where, i))
                        for i, a in enumerate(raw.get("annotations") or ()))
    return TydiExample(
        example_id=example_id,
        language=language,
        question=_field(raw, "question_text", where, str),
        document=_field(raw, "document_plaintext", where, str).encode("utf-8"),
        candidates=candidates,
        annotations=annotations,
        title=str(raw.get("document_title", "")),
        url=str(raw.get("document_url", "")))


def parse_line(line, where="line"):
    """One jsonl line (bytes or str) -> TydiExample."""
    try:
        raw = json.loads(line)
    except ValueError as error:
        raise TydiFormatError("%s: not JSON (%s); expected one TyDi QA example per line" %
                              (where, error)) from None
    return parse_example(raw, where)


def open_jsonl(path):
    """A binary file object over `path`, gunzipped when it ends in .gz (local or gs://)."""
    if "://" in path:
        import tensorflow as tf  # Only remote files need TensorFlow's file system.
        handle = tf.io.gfile.GFile(path, "rb")
    else:
        handle = open(path, "rb")
    if path.endswith(".gz"):
        return gzip.GzipFile(fileobj=handle, mode="rb")
    return handle


class TruncatedFileError(errors.UserError):
    """A gzipped jsonl file that ends early or is not gzip at all."""


def read_lines(path, max_lines=None) -> Iterator[Tuple[int, bytes]]:
    """(1-based line number, raw line) for every non-blank line of a (gzipped) jsonl file.

    A truncated or damaged .gz file (an interrupted download or copy) is a
    `TruncatedFileError` naming the file and what was read of it:

        list(read_lines("half.jsonl.gz"))
        # TruncatedFileError: half.jsonl.gz is truncated or damaged (Compressed file ended
        # before the end-of-stream marker was reached) after 812 complete lines (1,042,133
        # bytes uncompressed); delete it and download or copy it again
    """
    count, number, read = 0, 0, 0
    try:
        with open_jsonl(path) as handle:
            for number, line in enumerate(handle, 1):
                read += len(line)
                if not line.strip():
                    continue
                yield number, line
                count += 1
                if max_lines and count >= max_lines:
                    return
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:
        raise TruncatedFileError(
            "%s is truncated or damaged (%s) after %d complete lines (%s bytes uncompressed);"
            " delete it and download or copy it again" % (path, error, number, format(
                read, ","))) from None


def read_examples(path, max_examples: Optional[int] = None) -> Iterator[TydiExample]:
    """Parsed examples of a (gzipped) jsonl file, in file order."""
    for number, line in read_lines(path, max_examples):
        yield parse_line(line, "%s:%d" % (path, number))
