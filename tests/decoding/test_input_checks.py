"""Decoder input checks on plain Python values: UTF-8 text (files and values), and inputs
longer than the model was trained on (the limit, where it comes from, the cut, the warning)."""
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.core import errors, registry
from t2t.decoding import decoding
from t2t.decoding import input_checks
from t2t.encoders import text_encoder
from t2t.model import model_hparams

EXAMPLES = settings(max_examples=30, deadline=None)
LINE = st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)),
               max_size=12)


def hparams_of(hparams_set, **values):
    hparams = registry.hparams(hparams_set)
    for name, value in values.items():
        setattr(hparams, name, value)
    model_hparams.add_problem_hparams(hparams, "algorithmic_reverse_binary40_test")
    return hparams


# ---------------------------------------------------------------------------- UTF-8
@EXAMPLES
@given(st.lists(LINE, max_size=5), st.booleans())
def test_read_text_lines_round_trips_utf8(tmp_path_factory, lines, final_newline):
    path = tmp_path_factory.mktemp("lines") / "in.txt"
    path.write_bytes(("\n".join(lines) + ("\n" if final_newline and lines else "")).encode())
    expected = list(lines)
    if expected and not final_newline and expected[-1] == "":
        expected.pop()  # "a\n" + "" reads as one line, as any editor shows it
    assert input_checks.read_text_lines(str(path)) == expected


@EXAMPLES
@given(st.lists(LINE, min_size=1, max_size=5), st.data())
def test_a_byte_that_is_not_utf8_is_named_by_line_and_column(tmp_path_factory, lines, data):
    number = data.draw(st.integers(0, len(lines) - 1))
    column = data.draw(st.integers(0, len(lines[number])))
    bad = lines[number][:column].encode() + b"\xe9" + lines[number][column:].encode()
    raw = b"\n".join(bad if i == number else line.encode() for i, line in enumerate(lines))
    path = tmp_path_factory.mktemp("latin") / "in.txt"
    path.write_bytes(raw)
    with pytest.raises(errors.UserError) as caught:
        input_checks.read_text_lines(str(path))
    assert str(caught.value) == (
        "%s line %d: not UTF-8 (byte 0xe9 at column %d); convert it to UTF-8, e.g. iconv -f "
        "latin1 -t utf-8 %s > %s" % (path, number + 1, column + 1, path,
                                      path.with_name("in.utf8.txt")))


def test_read_text_lines_with_another_delimiter(tmp_path):
    path = tmp_path / "records"
    path.write_bytes("a b\tc\nd\t".encode())
    assert input_checks.read_text_lines(str(path), "\t") == ["a b", "c\nd"]
    path.write_bytes(b"ok\tline one\nline \xff two\t")
    with pytest.raises(errors.UserError, match=r"records line 2: not UTF-8 \(byte 0xff at "
                                               r"column 6\)"):
        input_checks.read_text_lines(str(path), "\t")


def test_text_of_values():
    assert input_checks.text_of("abc", "input 1") == "abc"
    assert input_checks.text_of("café".encode(), "input 2") == "café"
    with pytest.raises(errors.UserError) as caught:
        input_checks.text_of(b"caf\xe9", "input 3")
    assert str(caught.value) == (
        "input 3: not UTF-8 (byte 0xe9 at column 4); give str or UTF-8 bytes (bytes in "
        "another encoding: decode them first, e.g. value.decode('latin-1'))")
    with pytest.raises(errors.UserError, match=r"^line 2: not UTF-8 \(byte 0xff at column 1\); "
                                               r"type UTF-8 text$"):
        input_checks.text_of(b"\xff", "line 2", fix="type UTF-8 text")
    with pytest.raises(errors.UserError, match="input 4 is a int; give text"):
        input_checks.text_of(7, "input 4")


def test_check_inputs_gives_the_ids():
    vocab = text_encoder.TextEncoder()
    assert input_checks.check_inputs(["0 1", "1"], vocab, 4, "in.txt") == [[2, 3], [3]]


# ---------------------------------------------------------------------------- lengths
def test_the_trained_length_and_where_it_comes_from():
    assert input_checks.trained_input_length(hparams_of("transformer_multi30k")) == (
        128, "hparams.max_length=128: training dropped longer examples")
    assert input_checks.trained_input_length(hparams_of("transformer_tiny", max_length=0)) == (
        4096, "hparams.batch_size=4096 (max_length=0): training dropped longer examples")
    assert input_checks.trained_input_length(hparams_of(
        "transformer_tiny", max_input_seq_length=50)) == (
            50, "hparams.max_input_seq_length=50: training cut inputs there")
    assert input_checks.input_length_limit(
        hparams_of("transformer_multi30k"), decoding.decode_hparams("max_input_size=20")) == (
            20, "--decode_hparams=max_input_size=20")


def test_cut_and_count_long_inputs():
    # The limit counts the EOS the decoder appends: 3 ids fit a limit of 4.
    lists = [[5, 6, 7, 8], [9], [5, 6, 7]]
    assert input_checks.count_long_inputs(lists, 4) == 1
    assert input_checks.cut_long_inputs(lists, 3) == ([[5, 6], [9], [5, 6]], 2)
    assert input_checks.cut_long_inputs(lists, -1) == (lists, 0)
    assert input_checks.count_long_inputs(lists, None) == 0


def test_long_inputs_are_decoded_in_full_with_one_warning(caplog):
    hparams = hparams_of("transformer_multi30k")
    inputs = [[5] * 300, [6] * 127, [7] * 128]
    with caplog.at_level(logging.WARNING):
        kept, line = input_checks.limit_input_lengths(inputs, hparams,
                                                      decoding.decode_hparams(), "in.txt")
    assert kept == inputs
    assert line == (
        "in.txt: 2 of 3 inputs are longer than the 128 ids (EOS included) the model was "
        "trained on (hparams.max_length=128: training dropped longer examples); they are "
        "decoded in full, slowly and likely badly; cut them with "
        "--decode_hparams=max_input_size=128")
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [line]
    assert input_checks.limit_input_lengths([[6] * 127], hparams, decoding.decode_hparams(),
                                            "in.txt") == ([[6] * 127], None)


def test_max_input_size_cuts_and_says_how_many():
    hparams = hparams_of("transformer_multi30k")
    kept, line = input_checks.limit_input_lengths(
        [[5] * 300, [6, 7]], hparams, decoding.decode_hparams("max_input_size=4"), "in.txt")
    assert kept == [[5, 5, 5], [6, 7]]
    assert line == ("in.txt: 1 of 2 inputs were cut to 4 ids (EOS included) by "
                    "--decode_hparams=max_input_size=4")
    _, line = input_checks.limit_input_lengths([[5] * 300], hparams,
                                               decoding.decode_hparams(), "line 3")
    assert line.startswith("line 3: the input is longer than the 128 ids")
    assert line.endswith("it is decoded in full, slowly and likely badly; cut it with "
                         "--decode_hparams=max_input_size=128")
