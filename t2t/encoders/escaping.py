"""Text conversions and the subword escape scheme, shared by `text_encoder` and `subword_build`.

A subword vocabulary only holds characters of its alphabet, so a token is escaped first:
"_" becomes "\\u", "\\" becomes "\\\\", a character outside the alphabet becomes
"\\<code point>;", and a final "_" marks the token's end (T2T 1.15.7's scheme, byte for byte):

    escape_token("a_b", set("ab") | ESCAPE_CHARS)   # 'a\\ub_'
    unescape_token("a\\ub_")                        # 'a_b'
"""
import re

from absl import logging

# Unescaping: "\u" -> "_", "\\" -> "\", "\213;" -> chr(213).
UNESCAPE_REGEX = re.compile(r"\\u|\\\\|\\([0-9]+);")
ESCAPE_CHARS = set("\\_u;0123456789")
LINE_BREAKS = {"\n", "\r"}
UNDEFINED_CHAR = "\u3013"  # GETA MARK: what an escape of an impossible code point decodes to


class UnencodableTextError(AssertionError, ValueError):
    """Text that a subword vocabulary cannot encode, even escaped character by character.

    An AssertionError (as T2T raised once) and a ValueError (as T2T 1.15.7 raises).
    """


def is_unicode(s):
    return isinstance(s, str)


def to_unicode(s, ignore_errors=False):
    """b"caf\\xc3\\xa9" -> "café"; a str is returned unchanged."""
    if is_unicode(s):
        return s
    return s.decode("utf-8", errors="ignore" if ignore_errors else "strict")


def to_unicode_ignore_errors(s):
    return to_unicode(s, ignore_errors=True)


def to_unicode_utf8(s):
    return s.decode("utf-8")


def native_to_unicode(s):
    """str or UTF-8 bytes -> str; invalid bytes are dropped: b"a\\xffb" -> "ab"."""
    if is_unicode(s):
        return s
    try:
        return to_unicode(s)
    except UnicodeDecodeError:
        res = to_unicode(s, ignore_errors=True)
        logging.info("Ignoring Unicode error, outputting: %s", res)
        return res


def unicode_to_native(s):
    """Identity on Python 3 (T2T converted to bytes on Python 2)."""
    return s


def escape_token(token, alphabet):
    r"""Escapes "_", "\" and characters outside `alphabet` (and "\n"), then appends "_".

    With alphabet set("ab") | ESCAPE_CHARS the token  a_b\é  becomes  a\ub\\\233;_
    ("\u" stands for "_", "\\" for "\", "\233;" for "é"), so the only "_" is the last.
    """
    if not isinstance(token, str):
        raise ValueError("Expected string type for token, got %s" % type(token))
    token = token.replace("\\", "\\\\").replace("_", "\\u")
    if "\n" not in token and isinstance(alphabet, (set, frozenset)) and alphabet.issuperset(token):
        return token + "_"  # the common case, without a per-character loop
    return "".join(c if c in alphabet and c != "\n" else "\\%d;" % ord(c) for c in token) + "_"


def _unescape_match(match):
    if match.group(1) is None:
        return "_" if match.group(0) == "\\u" else "\\"
    try:
        return chr(int(match.group(1)))
    except (ValueError, OverflowError):
        return UNDEFINED_CHAR


def unescape_token(escaped_token):
    r"""Inverse of `escape_token`: a\ub\\\233;_ -> a_b\é; \99999999; -> U+3013 (no such char)."""
    trimmed = escaped_token[:-1] if escaped_token.endswith("_") else escaped_token
    if "\\" not in trimmed:
        return trimmed
    return UNESCAPE_REGEX.sub(_unescape_match, trimmed)
