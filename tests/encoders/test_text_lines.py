import io

import pytest
from hypothesis import given, settings, strategies as st

from t2t.core.errors import UserError
from t2t.encoders import text_lines


def write(tmp_path, data, name="f.txt"):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def python_lines(data):
    """What open(..., encoding="utf-8") gives (universal newlines), BOM dropped."""
    return list(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig"))


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab\r\n\u00e9\u20ac ", max_size=40),
       bom=st.booleans(), chunk_size=st.integers(1, 9))
def test_read_lines_is_pythons_universal_newlines_for_any_chunk_size(tmp_path_factory, text,
                                                                    bom, chunk_size):
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    path = write(tmp_path_factory.mktemp("t"), data)
    expected = python_lines(data)
    assert list(text_lines.read_lines(path, chunk_size=chunk_size)) == expected
    assert text_lines.count_lines(path, chunk_size=chunk_size) == len(expected)


def test_cr_only_file_reads_as_its_lines(tmp_path):
    path = write(tmp_path, b"".join(b"line %d\r" % i for i in range(2000)))
    lines = list(text_lines.read_lines(path, chunk_size=1000))
    assert len(lines) == 2000 and lines[1999] == "line 1999\n"
    assert text_lines.count_lines(path) == 2000


def test_bom_is_dropped_at_the_start_only(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbfcaf\xc3\xa9\n\xef\xbb\xbfx\n")
    assert list(text_lines.read_lines(path)) == ["caf\u00e9\n", "\ufeffx\n"]


@pytest.mark.parametrize("chunk_size", [2, 1 << 20])
def test_latin1_byte_names_file_line_column_and_fix(tmp_path, chunk_size):
    path = write(tmp_path, b"ok\r\nfine\rcaf\xe9 au lait\n")
    with pytest.raises(UserError) as error:
        list(text_lines.read_lines(path, chunk_size=chunk_size))
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("%s line 3, column 4: byte 0xe9 is not UTF-8" % path)
    assert "iconv -f latin1 -t utf-8" in message


def test_huge_line_is_read_in_chunks(tmp_path):
    path = write(tmp_path, b"x" * 100000 + b"\ny")
    assert [len(line) for line in text_lines.read_lines(path, chunk_size=4096)] == [100001, 1]
