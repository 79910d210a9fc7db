"""Tokenizers that keep byte offsets: CANINE-style codepoints and T2T subwords.

Both turn a `preprocess.Context` into positions, each with its id, its context bytes and
its document bytes [start, end) (-1, -1 for markers and joining spaces):

    tok = CodepointTokenizer()
    tok.encode("ไทย")                        # [3652, 3607, 3618]: one id per codepoint
    tok.cls_id, tok.sep_id, tok.q_id         # 0xE000, 0xE001, 0xE005 (private use)
    positions = tok.tokenize_context(entry.context)
    positions.ids[0]                         # 0xE006: the marker of candidate 0
    positions.document_start[2], positions.document_end[2]   # bytes of the 2nd character

    sub = SubwordTokenizer(encoder, max_passages=45)   # encoder: a SubwordTextEncoder
    sub.encode("Bangkok is big")             # subword ids (T2T's tokenization)
    sub.marker_id(3)                         # the reserved id of "[ContextId=3]"

The subword vocabulary reserves, after <pad> and <EOS>, "[CLS]", "[SEP]", "[Q]" and one
"[ContextId=i]" per candidate (`special_tokens`); they are ids only, never produced from
text. A subword's document span covers the characters it was cut from (T2T's escaping
can split one character's escape sequence over two subwords; both then cover it), less
whitespace at the edges of its token (T2T's tokenizer makes "\u0c3f " - a vowel sign and
the space after it - one token); a whitespace-only subword has no span (-1, -1).
"""
import dataclasses
from typing import NamedTuple

import numpy as np

from t2t.core import errors
from t2t.tydiqa import data

CODEPOINT_VOCAB_SIZE = 0x110000


class Positions(NamedTuple):
    """Per position: id, context bytes and document bytes (end-exclusive; -1 for none)."""
    ids: np.ndarray
    context_start: np.ndarray
    context_end: np.ndarray
    document_start: np.ndarray
    document_end: np.ndarray


def _utf8_lengths(codepoints):
    return (1 + (codepoints >= 0x80) + (codepoints >= 0x800) +
            (codepoints >= 0x10000)).astype(np.int64)


def _codepoints(text):
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)


class CodepointTokenizer:
    """Unicode codepoints as ids (CANINE), with private-use ids for the special symbols."""
    kind = "codepoints"
    pad_id = data.PAD_CODEPOINT
    cls_id = data.CLS_CODEPOINT
    sep_id = data.SEP_CODEPOINT
    q_id = data.Q_CODEPOINT
    vocab_size = CODEPOINT_VOCAB_SIZE

    def encode(self, text):
        return _codepoints(text).tolist()

    def marker_id(self, index):
        return ord(data.candidate_marker(index))

    def tokenize_context(self, context):
        """Every character of the context is a position (markers and spaces included)."""
        ids = _codepoints(context.text)
        ends = np.cumsum(_utf8_lengths(ids))
        starts = ends - _utf8_lengths(ids)
        document_start = context.byte_map[starts] if len(ids) else starts
        last = context.byte_map[ends - 1] if len(ids) else ends
        document_end = np.where(last >= 0, last + 1, -1)
        return Positions(ids, starts, ends, document_start, document_end)


def special_tokens(max_passages):
    """The reserved subword tokens after <pad>, <EOS>: [CLS], [SEP], [Q], [ContextId=i]."""
    return ["[CLS]", "[SEP]", "[Q]"] + ["[ContextId=%d]" % i for i in range(max_passages)]


def _text_encoder():
    # Imported on use: T2T's tokenizer builds its character tables at import (~0.4 s),
    # which codepoint-only worker processes need not pay.
    from t2t.encoders import text_encoder
    return text_encoder


def _t2t_tokenizer():
    from t2t.encoders import tokenizer
    return tokenizer


class SubwordTokenizer:
    """T2T subwords (`SubwordTextEncoder`) with byte offsets and reserved special ids."""
    kind = "subwords"
    pad_id = 0

    def __init__(self, encoder, max_passages):
        text_encoder = _text_encoder()
        self._tokenize = _t2t_tokenizer().encode
        from t2t.encoders import escaping  # loaded with text_encoder above
        self._escape = escaping.escape_token
        self.encoder = encoder
        self.max_passages = max_passages
        first = len(text_encoder.RESERVED_TOKENS)
        ids = {}
        for offset, token in enumerate(special_tokens(max_passages)):
            encoded = encoder.encode_without_tokenizing(token)
            if encoded != [first + offset]:
                raise errors.UserError(
                    "subword vocab %s has no reserved id %d for %s (got %s); it was not built "
                    "for TyDi QA with max_passages=%d: delete it and rerun t2t-datagen" %
                    (encoder.filename or "(in memory)", first + offset, token, encoded,
                     max_passages))
            ids[token] = first + offset
        self.cls_id, self.sep_id, self.q_id = ids["[CLS]"], ids["[SEP]"], ids["[Q]"]
        self._marker_ids = [ids["[ContextId=%d]" % i] for i in range(max_passages)]
        self.vocab_size = encoder.vocab_size
        self._cache = {}

    def encode(self, text):
        return self.encoder.encode(text)

    def marker_id(self, index):
        return self._marker_ids[index]

    def _token_pieces(self, token):
        """(subtoken ids, [(start byte, end byte)] inside the token, token bytes), cached."""
        cached = self._cache.get(token)
        if cached is not None:
            return cached
        ids = self.encoder.encode_without_tokenizing(token)
        token_bytes = len(token.encode("utf-8"))
        if len(ids) == 1:
            spans = [(0, token_bytes)]
        else:
            spans = self._subtoken_spans(token, ids)
        stripped = token.strip()
        if len(stripped) != len(token):
            # Whitespace at the token's edges belongs to no answer: "ి " (a vowel sign
            # then a space, one T2T token) covers only its first 3 bytes.
            low = len(token[:len(token) - len(token.lstrip())].encode("utf-8"))
            high = token_bytes - len(token[len(token.rstrip()):].encode("utf-8"))
            spans = [(max(s, low), min(e, high)) if max(s, low) < min(e, high) else (-1, -1)
                     for s, e in spans]
        cached = (ids, spans, token_bytes)
        if len(self._cache) > 500000:
            self._cache.clear()
        self._cache[token] = cached
        return cached

    def _subtoken_spans(self, token, ids):
        # The escaped token is the subtokens joined; map each escaped character back to
        # the token character it escapes (the final "_" belongs to the last character).
        alphabet = self.encoder.alphabet
        escape = self._escape
        owner = []
        for index, char in enumerate(token):
            escaped = escape(char, alphabet)[:-1]
            owner.extend([index] * len(escaped))
        owner.append(len(token) - 1)
        pieces = self.encoder.decode_list(ids)
        char_bytes = np.concatenate([[0], np.cumsum([len(c.encode("utf-8")) for c in token])])
        if sum(len(p) for p in pieces) != len(owner):
            # Cannot happen with T2T's escaping; every subtoken then covers the whole token.
            return [(0, int(char_bytes[-1]))] * len(ids)
        spans, position = [], 0
        for piece in pieces:
            first, last = owner[position], owner[position + len(piece) - 1]
            spans.append((int(char_bytes[first]), int(char_bytes[last + 1])))
            position += len(piece)
        return spans

    def tokenize_text(self, text):
        """(ids, start bytes, end bytes) of `text` (str); offsets relative to its start."""
        ids, starts, ends = [], [], []
        char_position = byte_position = 0
        cache, find = self._cache, text.find
        for token in self._tokenize(text):
            if find(token, char_position) != char_position:
                # A single space between alphanumeric tokens (dropped by the tokenizer).
                byte_position += 1
                char_position += 1
            pieces = cache.get(token) or self._token_pieces(token)
            token_ids, spans, token_bytes = pieces
            ids.extend(token_ids)
            if len(spans) == 1 and spans[0][0] >= 0:
                starts.append(byte_position + spans[0][0])
                ends.append(byte_position + spans[0][1])
            else:
                for start, end in spans:
                    starts.append(byte_position + start if start >= 0 else -1)
                    ends.append(byte_position + end if start >= 0 else -1)
            char_position += len(token)
            byte_position += token_bytes
        return ids, starts, ends

    def tokenize_context(self, context):
        """Each marker is one position; each candidate text its subwords (spaces between
        candidates give none)."""
        ids, ctx_start, ctx_end, doc_start, doc_end = [], [], [], [], []
        for piece in context.pieces:
            ids.append(self.marker_id(piece.candidate_index))
            ctx_start.append(piece.marker_start)
            ctx_end.append(piece.text_start - 1)
            doc_start.append(-1)
            doc_end.append(-1)
            text = context.data[piece.text_start:piece.text_end].decode("utf-8")
            piece_ids, starts, ends = self.tokenize_text(text)
            ids.extend(piece_ids)
            ctx_start.extend(piece.text_start + s if s >= 0 else -1 for s in starts)
            ctx_end.extend(piece.text_start + e if e >= 0 else -1 for e in ends)
            doc_start.extend(piece.document_start + s if s >= 0 else -1 for s in starts)
            doc_end.extend(piece.document_start + e if e >= 0 else -1 for e in ends)
        return Positions(*(np.asarray(values, dtype=np.int64) for values in
                           (ids, ctx_start, ctx_end, doc_start, doc_end)))


def build_subword_encoder(texts, target_size, max_passages, max_subtoken_length=None):
    """A SubwordTextEncoder of about `target_size` subwords over `texts`, with the reserved
    special tokens of `special_tokens(max_passages)`."""
    text_encoder = _text_encoder()
    reserved = text_encoder.RESERVED_TOKENS + special_tokens(max_passages)
    return text_encoder.SubwordTextEncoder.build_from_generator(
        texts, target_size, max_subtoken_length=max_subtoken_length, reserved_tokens=reserved)


@dataclasses.dataclass(frozen=True)
class TokenizerSpec:
    """How to build a tokenizer in any process: kind "codepoints", or "subwords" with the
    vocab file (and the max_passages it reserves markers for)."""
    kind: str
    vocab_file: str = ""
    max_passages: int = 45

    def build(self):
        if self.kind == CodepointTokenizer.kind:
            return CodepointTokenizer()
        if self.kind == SubwordTokenizer.kind:
            if not self.vocab_file:
                raise ValueError("TokenizerSpec(kind='subwords') needs vocab_file")
            return SubwordTokenizer(_text_encoder().SubwordTextEncoder(self.vocab_file),
                                    self.max_passages)
        raise ValueError("unknown tokenizer kind %r; use codepoints or subwords" % self.kind)
