"""An invertible tokenizer: text <-> alternating runs of alphanumeric / other characters.

T2T 1.15.7's `tokenizer` (same names and results). A token is a maximal run of
alphanumeric characters (Unicode categories L* and N*) or a maximal run of other
characters. A token that is a single space between two alphanumeric tokens is
dropped; `decode` puts it back, so `decode(encode(text)) == text` for any text.

    >>> encode("Dude - that's so cool.")
    ['Dude', ' - ', 'that', "'", 's', 'so', 'cool', '.']
    >>> decode(['Dude', ' - ', 'that', "'", 's', 'so', 'cool', '.'])
    "Dude - that's so cool."
    >>> encode(" a  b ")      # leading, double and trailing spaces are kept
    [' ', 'a', '  ', 'b', ' ']

`corpus_token_counts` and `vocab_token_counts` read files (local paths or any
`tf.io.gfile` URL such as gs://) and count tokens for vocabulary building; their lines end
at "\\n", "\\r\\n" or "\\r" (`text_lines`). The private file helpers here are shared with
`text_encoder` (vocab files are read as T2T's tf.gfile reads them: lines end at "\\n" only,
and every "\\r" is dropped, so T2T's vocab files give T2T's ids).
"""
import collections
import glob
import re
import sys
import unicodedata

from absl import logging

from t2t.core import atomic_files
from t2t.encoders import text_lines


def _alphanumeric_chars():
    category = unicodedata.category
    return frozenset(c for c in map(chr, range(sys.maxunicode))
                     if category(c)[0] in "LN")


# Every letter and number character (T2T computes the same set over sys.maxunicode).
ALPHANUMERIC_CHAR_SET = _alphanumeric_chars()
_ALPHANUMERIC_CHAR_SET = ALPHANUMERIC_CHAR_SET  # T2T's name


def code_point_ranges(chars):
    """`chars` as sorted, merged code-point ranges: [(97, 99), (120, 120)] for "abcx"."""
    ranges = []
    for point in sorted({ord(c) for c in chars}):
        if ranges and point == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], point)
        else:
            ranges.append((point, point))
    return ranges


def _char_class(chars):
    """A regex character class body for `chars`, as code-point ranges: "a-cx" for "abcx"."""
    return "".join(re.escape(chr(start)) if start == end else
                   "%s-%s" % (re.escape(chr(start)), re.escape(chr(end)))
                   for start, end in code_point_ranges(chars))


_ALNUM_CLASS = _char_class(_ALPHANUMERIC_CHAR_SET)
_RUN_RE = re.compile("[%s]+|[^%s]+" % (_ALNUM_CLASS, _ALNUM_CLASS))
# A class with only Basic Multilingual Plane characters compiles to a constant-time lookup
# table (the full class is scanned range by range), so text without astral characters is
# split ~2x faster than T2T's per-character loop.
_BMP_CLASS = _char_class(c for c in _ALPHANUMERIC_CHAR_SET if c <= "\uffff")
_BMP_RUN_RE = re.compile("[%s]+|[^%s]+" % (_BMP_CLASS, _BMP_CLASS))
_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")


def encode(text):
    """Splits unicode `text` into tokens; see the module docstring.

    >>> encode("abc 12,3\\n")
    ['abc', '12', ',', '3', '\\n']
    """
    if not text:
        return []
    runs = (_RUN_RE if _ASTRAL_RE.search(text) else _BMP_RUN_RE).findall(text)
    if len(runs) < 3 or " " not in runs:
        return runs
    # A single space between two alphanumeric runs is implied by decode(); the first and
    # the last runs are kept whatever they are.
    middle = [run for run in runs[1:-1] if run != " "]
    return [runs[0]] + middle + [runs[-1]]


def decode(tokens):
    """Joins tokens, with a space between two adjacent alphanumeric tokens.

    >>> decode(["a", "b", "!", "c"])
    'a b!c'
    """
    alnum = _ALPHANUMERIC_CHAR_SET
    pieces = []
    prev_is_alnum = False
    for token in tokens:
        is_alnum = token[:1] in alnum
        if prev_is_alnum and is_alnum:
            pieces.append(" ")
        pieces.append(token)
        prev_is_alnum = is_alnum
    return "".join(pieces)


_is_url = atomic_files.is_remote_path  # gs://..., not file://


def _glob(filepattern):
    if _is_url(filepattern):
        import tensorflow as tf  # Only remote storage needs TensorFlow's file system.
        return tf.io.gfile.glob(filepattern)
    return glob.glob(atomic_files.local_path(filepattern))


def _open_text(filename):
    """Opens a text file as UTF-8, splitting lines on "\\n" only (as tf.io.gfile does)."""
    if _is_url(filename):
        import tensorflow as tf
        return tf.io.gfile.GFile(filename, "r")
    return open(atomic_files.local_path(filename), "r", encoding="utf-8", newline="\n")


def _gfile_lines(f):
    """The lines of `f` as T2T's tf.gfile reads them: split on "\\n", every "\\r" dropped.

    "a\\rb\\r\\nc" -> ["ab\\n", "c"]. Matching this keeps token counts and vocab files
    identical to T2T's reading of the same file.
    """
    for line in f:
        yield line.replace("\r", "") if "\r" in line else line


def _read_text_lines(filename, what):
    """The lines of the UTF-8 file `filename` (a `what` file), as T2T's tf.gfile gives them."""
    if not atomic_files.path_exists(filename):
        raise ValueError("File %s not found: fix the %s path or build the file first"
                         % (filename, what))
    try:
        with _open_text(filename) as f:
            return list(_gfile_lines(f))
    except UnicodeDecodeError as error:
        raise ValueError("%s file %s is not valid UTF-8 (byte %d): convert it to UTF-8"
                         % (what, filename, error.start)) from None


def _read_filepattern(filepattern, max_lines=None, split_on_newlines=True):
    """Yields the stripped lines (or whole contents) of the files matching `filepattern`.

    Files are read in sorted order; at most `max_lines` lines in total (0/None: all).
    With `split_on_newlines=False` each file is one string (cut at `max_lines`). Lines end
    at "\\n", "\\r\\n" or "\\r", as Python reads text (`text_lines.read_lines`).
    """
    filenames = sorted(_glob(filepattern))
    if not filenames:
        raise ValueError("no file matches %r: check the path or the wildcard" % filepattern)
    lines_read = 0
    for filename in filenames:
        lines = text_lines.read_lines(filename)
        if split_on_newlines:
            for line in lines:
                yield line.strip()
                lines_read += 1
                if max_lines and lines_read >= max_lines:
                    return
            continue
        doc = []
        for line in lines:
            doc.append(line)
            lines_read += 1
            if max_lines and lines_read >= max_lines:
                yield "".join(doc)
                return
        yield "".join(doc)


def corpus_token_counts(text_filepattern, corpus_max_lines, split_on_newlines=True):
    """Counts the tokens of the files matching `text_filepattern`.

    Reads at most `corpus_max_lines` lines (0/None: all). Returns a Counter.
    A file holding "the cat\\nthe dog\\n" gives {"the": 2, "cat": 1, "dog": 1}.
    """
    counts = collections.Counter()
    for doc in _read_filepattern(text_filepattern, max_lines=corpus_max_lines,
                                 split_on_newlines=split_on_newlines):
        counts.update(encode(doc))
    logging.info("corpus_token_counts %s: %d distinct tokens", text_filepattern, len(counts))
    return counts


def vocab_token_counts(text_filepattern, max_lines):
    """Reads "token,count" lines (a CSV of tokens made by `encode`) into a dict.

    The count is after the last comma, so tokens may contain commas:
    a line ",,7" gives {",": 7}. Lines without a comma are skipped with a warning.
    """
    counts = {}
    for i, line in enumerate(_read_filepattern(text_filepattern, max_lines=max_lines)):
        if "," not in line:
            logging.warning("Malformed vocab line #%d '%s'", i, line)
            continue
        token, count = line.rsplit(",", 1)
        try:
            counts[token] = int(count)
        except ValueError:
            raise ValueError("vocab line #%d %r of %s: the count after the last comma must "
                             "be an integer" % (i, line, text_filepattern)) from None
    return counts

