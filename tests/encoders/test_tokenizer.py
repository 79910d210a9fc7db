"""Tests for t2t.encoders.tokenizer: invertibility, T2T's token boundaries, corpus counting."""
import json
import os
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.encoders import tokenizer

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "t2t_vocab")


def _is_alnum(char):
    return unicodedata.category(char)[0] in "LN"


def _spec_encode(text):
    """The tokenizer's definition, one character at a time (T2T's documented rule)."""
    tokens = []
    start = 0
    for pos in range(1, len(text)):
        if _is_alnum(text[pos]) != _is_alnum(text[pos - 1]):
            token = text[start:pos]
            if token != " " or start == 0:
                tokens.append(token)
            start = pos
    if text:
        tokens.append(text[start:])
    return tokens


# Text that stresses the boundaries: letters and digits of several scripts, spaces,
# punctuation, underscores, backslashes, line breaks, combining marks, astral characters.
_tricky_chars = st.sampled_from(list("aZ09 _\\\n\r\t.,'-") + ["é", "ß", "ж", "中", "٣", "²",
                                                             "\u0301", "\u200d", "\U0001F600",
                                                             "\U00010400", "\u3000"])
tricky_text = st.lists(_tricky_chars, max_size=40).map("".join)
any_text = st.one_of(st.text(), tricky_text)


def test_docstring_examples():
    assert tokenizer.encode("Dude - that's so cool.") == [
        "Dude", " - ", "that", "'", "s", "so", "cool", "."]
    assert tokenizer.decode(["Dude", " - ", "that", "'", "s", "so", "cool", "."]) == (
        "Dude - that's so cool.")
    assert tokenizer.encode(" a  b ") == [" ", "a", "  ", "b", " "]
    assert tokenizer.encode("abc 12,3\n") == ["abc", "12", ",", "3", "\n"]
    assert tokenizer.decode(["a", "b", "!", "c"]) == "a b!c"


@pytest.mark.parametrize("text, tokens", [
    ("", []),
    (" ", [" "]),
    ("  ", ["  "]),
    ("a", ["a"]),
    ("a b", ["a", "b"]),
    ("a  b", ["a", "  ", "b"]),
    (" a", [" ", "a"]),
    ("a ", ["a", " "]),
    ("x1y2", ["x1y2"]),                 # digits and letters are one alphanumeric run
    ("foo_bar", ["foo", "_", "bar"]),   # "_" is not alphanumeric
    ("中文 text", ["中文", "text"]),
    ("e\u0301t\u00e9", ["e", "\u0301", "t\u00e9"]),  # a combining mark (Mn) is not L*/N*
    ("½ ²", ["½", "²"]),               # No category counts as a number
    ("a\tb", ["a", "\t", "b"]),
    ("a\U0001F600 b", ["a", "\U0001F600 ", "b"]),  # astral characters take the slow path
    ("\U00010400x 1", ["\U00010400x", "1"]),       # U+10400 is a letter (Lu)
])
def test_encode_cases(text, tokens):
    assert tokenizer.encode(text) == tokens
    assert tokenizer.decode(tokens) == text


def test_matches_t2t_oracle_tokens():
    with open(os.path.join(FIXTURES, "expected.json"), encoding="utf-8") as f:
        expected = json.load(f)
    assert [tokenizer.encode(p) for p in expected["probes"]] == expected["probe_tokens"]


def test_alphanumeric_set_is_letters_and_numbers():
    chars = tokenizer._ALPHANUMERIC_CHAR_SET
    assert len(chars) > 100000
    for code in list(range(0, 0x3000)) + [0x4E2D, 0x1F600, 0x10400, 0x1D7CE, 0xE0001]:
        assert (chr(code) in chars) == _is_alnum(chr(code)), hex(code)


@given(any_text)
@settings(max_examples=300, deadline=None)
def test_round_trip_and_spec(text):
    tokens = tokenizer.encode(text)
    assert tokens == _spec_encode(text)
    assert tokenizer.decode(tokens) == text


@given(any_text)
@settings(max_examples=200, deadline=None)
def test_tokens_alternate_and_are_never_empty(text):
    tokens = tokenizer.encode(text)
    assert all(tokens)
    for i, token in enumerate(tokens):
        kinds = {_is_alnum(c) for c in token}
        assert len(kinds) == 1
        if 0 < i < len(tokens) - 1:
            assert token != " "


def test_decode_of_empty_token_list_and_empty_tokens():
    assert tokenizer.decode([]) == ""
    assert tokenizer.decode(["a", "", "b"]) == "ab"


def _write(path, text, newline="\n"):
    with open(path, "w", encoding="utf-8", newline=newline) as f:
        f.write(text)
    return str(path)


def test_corpus_token_counts_reads_sorted_files_and_max_lines(tmp_path):
    _write(tmp_path / "b.txt", "the dog\n")
    _write(tmp_path / "a.txt", "the cat\n  the  cat \n")
    counts = tokenizer.corpus_token_counts(str(tmp_path / "*.txt"), 0)
    assert counts == {"the": 3, "cat": 2, "dog": 1, "  ": 1}
    # Lines are counted across files in sorted order: a.txt's two lines, then stop.
    counts = tokenizer.corpus_token_counts(str(tmp_path / "*.txt"), 2)
    assert counts == {"the": 2, "cat": 2, "  ": 1}
    counts = tokenizer.corpus_token_counts(str(tmp_path / "*.txt"), 1)
    assert counts == {"the": 1, "cat": 1}


def test_corpus_token_counts_whole_files(tmp_path):
    _write(tmp_path / "doc.txt", "one two\nthree\n")
    counts = tokenizer.corpus_token_counts(str(tmp_path / "doc.txt"), None,
                                           split_on_newlines=False)
    assert counts == {"one": 1, "two": 1, "\n": 2, "three": 1}
    counts = tokenizer.corpus_token_counts(str(tmp_path / "doc.txt"), 1,
                                           split_on_newlines=False)
    assert counts == {"one": 1, "two": 1, "\n": 1}


def test_corpus_lines_end_at_universal_newlines_only(tmp_path):
    # As Python reads text: "\r\n" and "\r" end lines, "\u2028" / "\x85" do not.
    _write(tmp_path / "crlf.txt", "ab\r\ncd\rx\u2028y\x85z\n", newline="")
    assert list(tokenizer._read_filepattern(str(tmp_path / "crlf.txt"))) == [
        "ab", "cd", "x\u2028y\x85z"]
    counts = tokenizer.corpus_token_counts(str(tmp_path / "crlf.txt"), 0)
    assert counts == {"ab": 1, "cd": 1, "x": 1, "\u2028": 1, "y": 1, "\x85": 1, "z": 1}


def test_missing_files_and_bad_utf8_raise_one_line_errors(tmp_path):
    with pytest.raises(ValueError, match="no file matches .*nothing"):
        tokenizer.corpus_token_counts(str(tmp_path / "nothing*"), 0)
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ValueError, match="line 1, column 4: byte 0xe9 is not UTF-8; re-encode"):
        tokenizer.corpus_token_counts(str(tmp_path / "latin1.txt"), 0)


def test_vocab_token_counts(tmp_path):
    _write(tmp_path / "vocab.csv", "the,10\n,,7\na,b,3\nmalformed\ncat,2\n")
    assert tokenizer.vocab_token_counts(str(tmp_path / "vocab.csv"), 0) == {
        "the": 10, ",": 7, "a,b": 3, "cat": 2}
    assert tokenizer.vocab_token_counts(str(tmp_path / "vocab.csv"), 2) == {"the": 10, ",": 7}
    _write(tmp_path / "bad.csv", "the,ten\n")
    with pytest.raises(ValueError, match="count after the last comma"):
        tokenizer.vocab_token_counts(str(tmp_path / "bad.csv"), 0)


@given(st.dictionaries(st.text(min_size=1).filter(lambda t: t == t.strip() and "\n" not in t
                                                  and "\r" not in t),
                       st.integers(0, 10**6), max_size=8))
@settings(max_examples=50, deadline=None)
def test_vocab_token_counts_round_trip(tmp_path_factory, counts):
    path = tmp_path_factory.mktemp("csv") / "counts.csv"
    _write(path, "".join("%s,%d\n" % item for item in counts.items()))
    assert tokenizer.vocab_token_counts(str(path), 0) == counts


@given(st.text(max_size=40))
def test_code_point_ranges_cover_exactly_the_characters(chars):
    ranges = tokenizer.code_point_ranges(chars)
    assert {chr(p) for start, end in ranges for p in range(start, end + 1)} == set(chars)
    assert all(a_end + 1 < b_start for (_, a_end), (b_start, _) in zip(ranges, ranges[1:]))
    assert tokenizer.code_point_ranges("abcx") == [(97, 99), (120, 120)]
