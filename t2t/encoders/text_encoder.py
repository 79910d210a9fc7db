"""Encoders between text and integer ids (T2T 1.15.7 names, signatures and ids).

* `TextEncoder`: "4 7" <-> [6, 9] (ids are int(token) + 2 reserved ids).
* `ByteTextEncoder`: UTF-8 bytes + 2; "hi" <-> [106, 107]; vocab_size 258.
* `TokenTextEncoder`: whitespace-separated tokens of a vocab file or list.
* `ClassLabelEncoder` / `OneHotClassLabelEncoder`: a label <-> its index (no reserved ids).
* `SubwordTextEncoder`: invertible subword encoding with a T2T vocab file, built from a
  corpus with `build_from_generator` / `build_to_target_size` (fast; same vocab as T2T).
* `RealEncoder`: "1.5 2" <-> [1.5, 2.0].

Ids 0 and 1 are PAD ("<pad>") and EOS ("<EOS>") for every encoder with reserved ids;
`encode` never appends EOS. A `SubwordTextEncoder` loaded from a T2T vocab file gives the
ids T2T gives for that file:

    >>> encoder = SubwordTextEncoder("vocab.translate_ende_wmt32k.32768.subwords")
    >>> encoder.decode(encoder.encode("Hello, world!"))
    'Hello, world!'
"""
import collections
import re
import types

import numpy as np
from absl import logging

from t2t.core import atomic_files
from t2t.core.progress import Progress
from t2t.encoders.escaping import (  # noqa: F401  (T2T's names, public and private)
    ESCAPE_CHARS as _ESCAPE_CHARS, LINE_BREAKS as _LINE_BREAKS, UNDEFINED_CHAR as _UNDEFINED_CHAR,
    UNESCAPE_REGEX as _UNESCAPE_REGEX, UnencodableTextError, escape_token as _escape_token,
    is_unicode, native_to_unicode,
    to_unicode, to_unicode_ignore_errors, to_unicode_utf8, unescape_token as _unescape_token,
    unicode_to_native)
from t2t.encoders import subword_build, tokenizer

# Reserved tokens for things like padding and EOS symbols.
PAD = "<pad>"
EOS = "<EOS>"
RESERVED_TOKENS = [PAD, EOS]
NUM_RESERVED_TOKENS = len(RESERVED_TOKENS)
PAD_ID = RESERVED_TOKENS.index(PAD)  # 0
EOS_ID = RESERVED_TOKENS.index(EOS)  # 1
RESERVED_TOKENS_BYTES = [bytes(PAD, "ascii"), bytes(EOS, "ascii")]

def strip_ids(ids, ids_to_strip):
    """Strips ids_to_strip from the end: strip_ids([5, 1, 0, 0], [0, 1]) -> [5]."""
    ids = list(ids)
    while ids and ids[-1] in ids_to_strip:
        ids.pop()
    return ids


class TextEncoder:
    """Base class: space-separated integers, shifted by the reserved ids.

    >>> TextEncoder().encode("4 7")
    [6, 9]
    >>> TextEncoder().decode([6, 9, 1, 0], strip_extraneous=True)
    '4 7'
    """

    def __init__(self, num_reserved_ids=NUM_RESERVED_TOKENS):
        self._num_reserved_ids = num_reserved_ids

    @property
    def num_reserved_ids(self):
        return self._num_reserved_ids

    def encode(self, s):
        """Transforms a string into a list of ids in [num_reserved_ids, vocab_size); no EOS."""
        return [int(w) + self._num_reserved_ids for w in s.split()]

    def decode(self, ids, strip_extraneous=False):
        """Transforms ids into a string; `strip_extraneous` drops trailing PAD/EOS ids."""
        if strip_extraneous:
            ids = strip_ids(ids, list(range(self._num_reserved_ids or 0)))
        return " ".join(self.decode_list(ids))

    def decode_list(self, ids):
        """One string per id: decode_list([0, 1, 6]) -> ["<pad>", "<EOS>", "4"]."""
        decoded = []
        for id_ in ids:
            if 0 <= id_ < self._num_reserved_ids:
                decoded.append(RESERVED_TOKENS[int(id_)])
            else:
                decoded.append(id_ - self._num_reserved_ids)
        return [str(d) for d in decoded]

    @property
    def vocab_size(self):
        raise NotImplementedError()


class ByteTextEncoder(TextEncoder):
    """Each UTF-8 byte is one id (byte + 2).

    >>> ByteTextEncoder().encode("hé")
    [106, 197, 171]
    >>> ByteTextEncoder().decode([106, 197])    # a cut character decodes as U+FFFD
    'h\\ufffd'
    """

    def encode(self, s):
        data = s if isinstance(s, bytes) else s.encode("utf-8")
        numres = self._num_reserved_ids
        return [b + numres for b in data]

    def _id_to_bytes(self, id_):
        numres = self._num_reserved_ids
        if 0 <= id_ < numres:
            return RESERVED_TOKENS_BYTES[int(id_)]
        byte = int(id_) - numres
        if not 0 <= byte < 256:
            raise ValueError("ByteTextEncoder id %d is outside [0, %d): decode only ids made "
                             "by this encoder" % (id_, self.vocab_size))
        return bytes((byte,))

    def decode(self, ids, strip_extraneous=False):
        if strip_extraneous:
            ids = strip_ids(ids, list(range(self._num_reserved_ids or 0)))
        return b"".join(self._id_to_bytes(id_) for id_ in ids).decode("utf-8", "replace")

    def decode_list(self, ids):
        """One bytes object per id, as T2T: decode_list([106, 1]) -> [b"h", b"<EOS>"]."""
        return [self._id_to_bytes(id_) for id_ in ids]

    @property
    def vocab_size(self):
        return 2**8 + self._num_reserved_ids


class ClassLabelEncoder(TextEncoder):
    """A class label <-> its index in `class_labels` (no reserved ids).

    >>> ClassLabelEncoder(["neg", "pos"]).encode("pos")
    1
    >>> ClassLabelEncoder(["neg", "pos"]).decode([1])
    'pos'
    """

    def __init__(self, class_labels=None, class_labels_fname=None):
        super().__init__(num_reserved_ids=0)
        if class_labels_fname:
            lines = tokenizer._read_text_lines(class_labels_fname, "class labels")
            class_labels = [label.strip() for label in lines]
        if not class_labels:
            raise ValueError("ClassLabelEncoder needs class labels: pass class_labels=[...] "
                             "or a non-empty class_labels_fname")
        self._class_labels = class_labels

    def _label_index(self, label_str):
        try:
            return self._class_labels.index(label_str)
        except ValueError:
            raise ValueError("unknown class label %r: use one of %s"
                             % (label_str, self._class_labels[:20])) from None

    def encode(self, s):
        return self._label_index(s)

    def decode(self, ids, strip_extraneous=False):
        del strip_extraneous
        label_id = ids
        if isinstance(label_id, list):
            if len(label_id) != 1:
                raise ValueError("ClassLabelEncoder.decode takes one id, got %s" % (label_id,))
            label_id, = label_id
        if isinstance(label_id, np.ndarray):
            label_id = np.squeeze(label_id)
        return self._class_labels[label_id]

    def decode_list(self, ids):
        return [self._class_labels[i] for i in ids]

    @property
    def class_labels(self):
        """The labels in id order (a tuple)."""
        return tuple(self._class_labels)

    @property
    def vocab_size(self):
        return len(self._class_labels)


class OneHotClassLabelEncoder(ClassLabelEncoder):
    """A class label <-> a one-hot list: encode("pos") -> [0, 1] for labels ["neg", "pos"]."""

    def encode(self, label_str, on_value=1, off_value=0):  # pylint: disable=arguments-differ
        e = np.full(self.vocab_size, off_value, dtype=np.int32)
        e[self._label_index(label_str)] = on_value
        return e.tolist()

    def decode(self, ids, strip_extraneous=False):
        del strip_extraneous
        label_id = ids
        if isinstance(label_id, np.ndarray):
            label_id = np.squeeze(label_id).astype(np.int8).tolist()
        if not isinstance(label_id, list) or len(label_id) != self.vocab_size:
            raise ValueError("OneHotClassLabelEncoder.decode takes a one-hot list of length %d"
                             % self.vocab_size)
        return self._class_labels[label_id.index(1)]


class OutOfVocabularyError(KeyError):
    """A token missing from a TokenTextEncoder vocab (a KeyError, as in T2T)."""

    def __str__(self):
        return self.args[0] if self.args else ""


class TokenTextEncoder(TextEncoder):
    """Whitespace-separated tokens <-> their line numbers in a vocab file (or list).

    A vocab list gets the reserved tokens added in front; a vocab file is used as is
    (write "<pad>" and "<EOS>" as its first lines).

    >>> encoder = TokenTextEncoder(None, vocab_list=["hello", "world"])
    >>> encoder.encode("world hello")
    [3, 2]
    >>> encoder.decode([3, 2, 1], strip_extraneous=True)
    'world hello'
    """

    def __init__(self, vocab_filename, reverse=False, vocab_list=None, replace_oov=None,
                 num_reserved_ids=NUM_RESERVED_TOKENS):
        super().__init__(num_reserved_ids=num_reserved_ids)
        self._reverse = reverse
        self._replace_oov = replace_oov
        self.filename = vocab_filename or None  # the vocab file read, when there is one
        if vocab_filename:
            self._init_vocab_from_file(vocab_filename)
        elif vocab_list is not None:
            self._init_vocab_from_list(vocab_list)
        else:
            raise ValueError("TokenTextEncoder needs a vocab: pass vocab_filename or vocab_list")

    def encode(self, s):
        """Converts a space-separated string of tokens to a list of ids."""
        tokens = s.strip().split()
        if self._replace_oov is not None:
            tokens = [t if t in self._token_to_id else self._replace_oov for t in tokens]
        try:
            ret = [self._token_to_id[tok] for tok in tokens]
        except KeyError as error:
            if self._replace_oov is None:
                fix = "add it, or pass replace_oov=<a vocab token>"
            else:
                fix = "add it to the vocab (it is the replace_oov token)"
            raise OutOfVocabularyError("token %r is not in the vocab: %s"
                                       % (error.args[0], fix)) from None
        return ret[::-1] if self._reverse else ret

    def decode(self, ids, strip_extraneous=False):
        if strip_extraneous:
            ids = strip_ids(ids, list(range(self._num_reserved_ids or 0)))
        return " ".join(self.decode_list(ids))

    def decode_list(self, ids):
        seq = reversed(ids) if self._reverse else ids
        return [self._safe_id_to_token(i) for i in seq]

    @property
    def vocab_size(self):
        return len(self._id_to_token)

    # Read-only views for in-graph encoders (t2t.encoders.graph_ops) and seqio's bridge.
    @property
    def token_to_id(self):
        return types.MappingProxyType(self._token_to_id)

    @property
    def id_to_token(self):
        return types.MappingProxyType(self._id_to_token)

    @property
    def reverse(self):
        """Whether ids are in reverse token order."""
        return self._reverse

    @property
    def replace_oov(self):
        """The token unknown tokens become (None: they raise OutOfVocabularyError)."""
        return self._replace_oov

    def _safe_id_to_token(self, idx):
        return self._id_to_token.get(idx, "ID_%d" % idx)

    def _init_vocab_from_file(self, filename):
        tokens = [token.strip() for token in tokenizer._read_text_lines(filename, "vocab")]
        self._init_vocab(iter(tokens), add_reserved_tokens=False)

    def _init_vocab_from_list(self, vocab_list):
        """Reserved tokens in `vocab_list` are dropped (they are added in front)."""
        self._init_vocab((t for t in vocab_list if t not in RESERVED_TOKENS))

    def _init_vocab(self, token_generator, add_reserved_tokens=True):
        self._id_to_token = {}
        non_reserved_start_index = 0
        if add_reserved_tokens:
            self._id_to_token.update(enumerate(RESERVED_TOKENS))
            non_reserved_start_index = len(RESERVED_TOKENS)
        self._id_to_token.update(enumerate(token_generator, start=non_reserved_start_index))
        self._token_to_id = {v: k for k, v in self._id_to_token.items()}

    def store_to_file(self, filename):
        """Writes one token per line (reserved tokens included), ending in a newline."""
        with atomic_files.atomic_write(filename, "w") as f:
            f.write("".join(self._id_to_token[i] + "\n" for i in range(len(self._id_to_token))))


def _prefix_table(subtoken_strings):
    """{every prefix of a subtoken: whether it is a subtoken}, for longest-match walks.

    ["ab", "abcd"] -> {"a": False, "ab": True, "abc": False, "abcd": True}
    """
    table = {}
    for s in subtoken_strings:
        for end in range(1, len(s)):
            table.setdefault(s[:end], False)
    for s in subtoken_strings:
        if s:
            table[s] = True
    return table


def _longest_match(prefixes, text, start):
    """End of the longest subtoken that `text[start:]` starts with, or `start` if none."""
    best = start
    end = start + 1
    size = len(text)
    while end <= size:
        is_subtoken = prefixes.get(text[start:end])
        if is_subtoken is None:
            break
        if is_subtoken:
            best = end
        end += 1
    return best


# The characters of the escape scheme itself (whatever `_ESCAPE_CHARS` says the alphabet holds).
_ESCAPE_STRUCTURE = frozenset("\\_u;0123456789")


def _check_reserved_tokens(reserved_tokens):
    if reserved_tokens is None:
        return RESERVED_TOKENS
    for default, proposed in zip(RESERVED_TOKENS, reserved_tokens):
        if default != proposed:
            raise ValueError("RESERVED_TOKENS must be a prefix of reserved_tokens.")
    return reserved_tokens


class SubwordTextEncoder(TextEncoder):
    """Invertible subword encoding with a limited vocabulary (T2T's vocab files and ids).

    Encoding: (1) `tokenizer.encode` splits the text into alphanumeric / other runs;
    (2) `_escape_token` makes each token end in "_" with no other "_"; (3) each escaped
    token is split greedily into the longest subtokens from the start; (4) the subtoken
    ids are concatenated. Decoding splits the joined subtokens at "_" and reverses it.

    >>> encoder = SubwordTextEncoder()
    >>> encoder.build_from_token_counts({"the": 2, "cat": 1, "hat": 1}, min_count=2)
    >>> encoder.encode("the cat")
    [2, 5, 3]                     # "the_", "c", "at_" in this tiny vocab
    >>> encoder.decode(encoder.encode("that cat_\\\\"))
    'that cat_\\\\'
    """

    def __init__(self, filename=None):
        """Loads the vocab file `filename` ("'subtoken'" per line) if given."""
        self._alphabet = frozenset()
        self.filename = filename
        self._init_subtokens_from_list([])
        if filename is not None:
            self._load_from_file(filename)
        super().__init__()

    def encode(self, s):
        """Converts a string (or UTF-8 bytes) to a list of ids in [0, vocab_size)."""
        return self._tokens_to_subtoken_ids(tokenizer.encode(native_to_unicode(s)))

    def encode_without_tokenizing(self, token_text):
        """Encodes `token_text` as one token: "a b" keeps its space inside one token."""
        return self._tokens_to_subtoken_ids([native_to_unicode(token_text)])

    def decode(self, ids, strip_extraneous=False):
        """Converts ids to a string; `strip_extraneous` drops trailing PAD/EOS ids."""
        if strip_extraneous:
            ids = strip_ids(ids, list(range(self._num_reserved_ids or 0)))
        return unicode_to_native(tokenizer.decode(self._subtoken_ids_to_tokens(ids)))

    def decode_list(self, ids):
        """One subtoken string per id: ["the_", "c"] for [2, 5] in the class example."""
        return [self._subtoken_id_to_subtoken_string(s) for s in ids]

    @property
    def vocab_size(self):
        """The subtoken vocabulary size."""
        return len(self._all_subtoken_strings)

    def _tokens_to_subtoken_ids(self, tokens):
        cache = self._cache
        ret = []
        for token in tokens:
            ids = cache.get(token)  # inlined cache hit: most tokens repeat
            ret.extend(self._token_to_subtoken_ids(token) if ids is None else ids)
        return ret

    def _token_to_subtoken_ids(self, token):
        ids = self._cache.get(token)
        if ids is None:
            escaped_token = _escape_token(token, self._alphabet)
            if "_" in token or "\\" in token:
                self._check_escape_markers(token, escaped_token)
            ids = self._escaped_token_to_subtoken_ids(escaped_token)
            if len(self._cache) >= self._cache_size:
                self._cache.clear()
            self._cache[token] = ids
        return ids

    def _subtoken_ids_to_tokens(self, subtokens):
        """Ids -> tokens; ids outside [0, vocab_size) decode to nothing."""
        strings = self._all_subtoken_strings
        size = len(strings)
        concatenated = "".join([strings[i] if 0 <= i < size else "" for i in subtokens])
        ret = []
        for piece in concatenated.split("_"):
            if piece:
                token = _unescape_token(piece + "_")
                if token:
                    ret.append(token)
        return ret

    def _subtoken_id_to_subtoken_string(self, subtoken):
        if 0 <= subtoken < self.vocab_size:
            return self._all_subtoken_strings[subtoken]
        return ""

    def _escaped_token_to_subtoken_strings(self, escaped_token):
        """Greedy longest-prefix split: "cats_" -> ["cat", "s_"] if both are subtokens.

        T2T asserted when a character of the alphabet has no single-character subtoken
        (possible with a vocab file made elsewhere); such a character is escaped as
        "\\<code point>;" instead, so encoding still round-trips.
        """
        if self._prefixes is None:
            self._prefixes = _prefix_table(self._subtoken_string_to_id)
        prefixes = self._prefixes
        ret = []
        start = 0
        original = escaped_token
        while start < len(escaped_token):
            end = _longest_match(prefixes, escaped_token, start)
            if end == start:
                escaped_token = self._escape_unencodable(escaped_token, start, original)
                continue
            ret.append(escaped_token[start:end])
            start = end
        return ret

    def _escape_unencodable(self, escaped_token, position, original):
        """`escaped_token` with the character at `position` written as "\\<code point>;".

        Every character of that escape must itself be a subtoken, so the greedy split
        consumes it and always moves on; otherwise the text cannot be encoded at all and
        `UnencodableTextError` says which character (T2T 1.15.7 looped forever here with
        some vocabularies).
        """
        char = escaped_token[position]
        escape = "\\%d;" % ord(char)
        # "\\", ";", the digits, "u" and "_" may belong to an escape already in the token;
        # writing them as escapes would change what it decodes to.
        if char in _ESCAPE_STRUCTURE or any(c not in self._subtoken_string_to_id
                                            for c in escape):
            raise UnencodableTextError(self._unencodable_message(original))
        return escaped_token[:position] + escape + escaped_token[position + 1:]

    def _check_escape_markers(self, token, escaped_token):
        """"_" is written "\\u" and "\\" is written "\\\\": without those characters in the
        alphabet, escaping would spell the marker itself as a numeric escape, which decodes
        to other text (T2T returned that silently)."""
        for char, marker in (("_", "\\u"), ("\\", "\\\\")):
            missing = sorted({c for c in marker if c not in self._alphabet})
            if char in token and missing:
                raise UnencodableTextError(self._unencodable_message(
                    escaped_token, "%r (U+%04X), as %r needs %s" % (
                        char, ord(char), marker, ", ".join(repr(c) for c in missing))))

    def _unencodable_message(self, escaped_token, detail=None):
        token = _unescape_token(escaped_token)
        subtokens = self._subtoken_string_to_id
        found = detail is not None
        detail = detail or "a character of it"
        for char in ("" if found else token):
            spelled = _escape_token(char, self._alphabet)[:-1]
            if char in self._alphabet and spelled in subtokens:
                continue
            if char in self._alphabet and char not in _ESCAPE_STRUCTURE:
                spelled = "\\%d;" % ord(char)
            missing = sorted({c for c in spelled if c not in subtokens})
            if missing:
                detail = "%r (U+%04X), as %r needs %s" % (
                    char, ord(char), spelled, ", ".join(repr(c) for c in missing))
                break
        return ("Token substring '%s' not found in subtoken vocabulary: subword vocab %s "
                "cannot encode %s, which the vocabulary lacks; rebuild it with "
                "SubwordTextEncoder.build_from_generator (its alphabet then holds \\, _, u, "
                "; and the digits)" % (escaped_token, self.filename or "(in memory)", detail))

    def _escaped_token_to_subtoken_ids(self, escaped_token):
        return [self._subtoken_string_to_id[subtoken]
                for subtoken in self._escaped_token_to_subtoken_strings(escaped_token)]

    @classmethod
    def build_from_generator(cls, generator, target_size, max_subtoken_length=None,
                             reserved_tokens=None):
        """Builds an encoder of about `target_size` subtokens from texts (str or bytes).

        `max_subtoken_length` bounds the subtoken length (and the build's memory, which is
        otherwise quadratic in the longest token). `RESERVED_TOKENS` must be a prefix of
        `reserved_tokens` (default: RESERVED_TOKENS).
        """
        token_counts = collections.Counter()
        progress = Progress("count tokens", unit="texts")
        for item in generator:
            tokens = tokenizer.encode(native_to_unicode(item))
            token_counts.update(tokens)
            progress.update(1, tokens=len(tokens))
        progress.done(distinct_tokens=len(token_counts))
        return cls.build_to_target_size(target_size, token_counts, 1, 1e3,
                                        max_subtoken_length=max_subtoken_length,
                                        reserved_tokens=reserved_tokens)

    @classmethod
    def build_to_target_size(cls, target_size, token_counts, min_val, max_val,
                             max_subtoken_length=None, reserved_tokens=None, num_iterations=4):
        """Bisects min_count in [min_val, max_val] for a vocab_size near `target_size`.

        A size within 1% of the target ends the search; otherwise the half that moves
        toward the target is searched and the closer of the two results is returned.
        E.g. target 8000 on a few MB of text tries min_count 500, 250, 125, 62, ...
        """
        if min_val > max_val:
            raise ValueError("Lower bound for the minimum token count "
                             "is greater than the upper bound.")
        if target_size < 1:
            raise ValueError("Target size must be positive.")
        reserved_tokens = _check_reserved_tokens(reserved_tokens)
        plan = subword_build.BuildPlan(token_counts, reserved_tokens, max_subtoken_length,
                                       escape_chars=_ESCAPE_CHARS)
        progress = Progress("subword vocab (target %d)" % target_size, unit="builds")

        def build(min_count):
            subtokenizer = cls()
            if cls.build_from_token_counts is SubwordTextEncoder.build_from_token_counts:
                subtokenizer._build_from_plan(plan, min_count, num_iterations)
            else:  # A subclass changed the build: honour it.
                subtokenizer.build_from_token_counts(
                    token_counts, min_count, num_iterations,
                    max_subtoken_length=max_subtoken_length, reserved_tokens=reserved_tokens)
            progress.update(1)
            return subtokenizer

        def bisect_min_count(min_val, max_val):
            present_count = (max_val + min_val) // 2
            logging.debug("Trying min_count %d", present_count)
            subtokenizer = build(present_count)
            # Being within 1% of the target size is ok.
            is_ok = abs(subtokenizer.vocab_size - target_size) * 100 < target_size
            if is_ok or min_val >= max_val or present_count < 2:
                return subtokenizer
            if subtokenizer.vocab_size > target_size:
                other = bisect_min_count(present_count + 1, max_val)
            else:
                other = bisect_min_count(min_val, present_count - 1)
            if abs(other.vocab_size - target_size) < abs(subtokenizer.vocab_size - target_size):
                return other
            return subtokenizer

        encoder = bisect_min_count(min_val, max_val)
        progress.done(vocab_size=encoder.vocab_size)
        return encoder

    def build_from_token_counts(self, token_counts, min_count, num_iterations=4,
                                reserved_tokens=None, max_subtoken_length=None):
        """Trains the vocab on {token: count}, keeping subtokens seen >= min_count times.

        Same vocabulary as T2T 1.15.7: start from the alphabet; on each iteration segment
        every escaped token with the current vocab, count every substring from each segment
        start (shorter than max_subtoken_length if set), keep candidates with
        count >= min_count longest first (subtracting a kept one's count from its prefixes),
        then add the alphabet, sort by count and prepend the escaped reserved tokens.
        Unlike T2T's loop, counting is a walk over a sorted suffix list pruned at
        min_count, so a few MB of text build in seconds.
        """
        reserved_tokens = _check_reserved_tokens(reserved_tokens)
        plan = subword_build.BuildPlan(token_counts, reserved_tokens, max_subtoken_length,
                                       escape_chars=_ESCAPE_CHARS)
        self._build_from_plan(plan, min_count, num_iterations)

    def _build_from_plan(self, plan, min_count, num_iterations):
        self._alphabet = frozenset(plan.alphabet)
        # The state before any iteration (T2T's order here depends on set iteration).
        self._init_subtokens_from_list(sorted(self._alphabet), reserved_tokens=plan.reserved)
        min_count = max(min_count, 1)
        segmented_with = None
        for i in range(num_iterations):
            if i == 0:
                cumulative = plan.first_iteration_cumulative()
            else:
                vocab_set = set(self._subtoken_string_to_id)
                if vocab_set == segmented_with:
                    break  # Same segmentation as the last iteration: same result again.
                segmented_with = vocab_set
                cumulative = plan.segment_start_cumulative(vocab_set)
            kept, singles = plan.select_subtokens(cumulative, min_count)
            # Every character stays, whatever its count; then by count, then string.
            kept.extend((singles.get(c, 0), c) for c in self._alphabet)
            kept.sort(reverse=True)
            self._init_subtokens_from_list(plan.escaped_reserved + [s for _, s in kept])
            logging.debug("Iteration %d: vocab_size = %d", i, self.vocab_size)

    @property
    def all_subtoken_strings(self):
        return tuple(self._all_subtoken_strings)

    # Read-only views for in-graph encoders (t2t.encoders.graph_ops) and TyDi QA.
    @property
    def alphabet(self):
        """The characters that need no escaping (a frozenset)."""
        return self._alphabet

    @property
    def subtoken_string_to_id(self):
        return types.MappingProxyType(self._subtoken_string_to_id)

    @property
    def max_subtoken_len(self):
        return self._max_subtoken_len

    def dump(self):
        """Prints "0 : '<pad>_', 1 : '<EOS>_', 2 : 'the_', ..." (debugging)."""
        pairs = sorted((i, s) for s, i in self._subtoken_string_to_id.items())
        print(", ".join("{0} : '{1}'".format(i, s) for i, s in pairs))

    def _init_subtokens_from_list(self, subtoken_strings, reserved_tokens=None):
        """Sets the vocab: `reserved_tokens` (ids only, never matched) + `subtoken_strings`."""
        if reserved_tokens is None:
            reserved_tokens = []
        if reserved_tokens:
            self._all_subtoken_strings = reserved_tokens + subtoken_strings
        else:
            self._all_subtoken_strings = subtoken_strings
        # The longest subtoken bounds the prefix search.
        self._max_subtoken_len = max([len(s) for s in subtoken_strings], default=0)
        self._subtoken_string_to_id = {
            s: i + len(reserved_tokens) for i, s in enumerate(subtoken_strings) if s}
        self._prefixes = None  # built on first encode
        # Token -> ids; emptied when it reaches _cache_size entries.
        self._cache_size = 2**20
        self._cache = {}

    def _init_alphabet_from_tokens(self, tokens):
        """The alphabet: every character of `tokens` plus the escaping characters."""
        self._alphabet = frozenset(c for token in tokens for c in token)
        self._alphabet |= _ESCAPE_CHARS
        self._cache = {}

    def _load_from_file_object(self, f):
        """Reads one subtoken per line; "'x'" and '"x"' lose their quotes, as in T2T."""
        subtoken_strings = []
        for line in f:
            s = native_to_unicode(line).rstrip()
            if (s.startswith("'") and s.endswith("'")) or (s.startswith('"') and s.endswith('"')):
                s = s[1:-1]
            subtoken_strings.append(s)
        if not subtoken_strings:
            raise ValueError("subword vocab %s is empty: rebuild it" % (self.filename or "file"))
        self._init_subtokens_from_list(subtoken_strings)
        self._init_alphabet_from_tokens(subtoken_strings)

    def _load_from_file(self, filename):
        """Loads a vocab file (UTF-8, lines split on "\\n" only)."""
        self._load_from_file_object(tokenizer._read_text_lines(filename, "subword vocab"))

    def store_to_file(self, filename, add_single_quotes=True):
        """Writes "'subtoken'" per line (UTF-8), or bare subtokens if not add_single_quotes."""
        for s in self._all_subtoken_strings:
            if "\n" in s or "\r" in s:
                raise ValueError("subtoken %r has a line break, which a vocab file cannot hold: "
                                 "build the vocab with build_from_generator" % s)
        if add_single_quotes:
            lines = ["'" + s + "'\n" for s in self._all_subtoken_strings]
        else:
            lines = [s + "\n" for s in self._all_subtoken_strings]
        with atomic_files.atomic_write(filename, "w") as f:
            f.write("".join(lines))


class RealEncoder:
    """Space-separated floats <-> a list: encode("1.5 2") -> [1.5, 2.0]; decode -> "1.5 2.0"."""

    def encode(self, s):
        return [float(w) for w in s.split()]

    def decode(self, ids, strip_extraneous=False):
        del strip_extraneous
        return " ".join([str(i) for i in ids])
