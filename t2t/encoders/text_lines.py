"""The lines of a UTF-8 text file, read as Python reads text: the one home for it.

`tf.io.gfile.GFile` ends lines at "\\n" only, so a file with "\\r" line endings (some
public parallel corpora are released that way) reads as one huge line, and a Latin-1 byte
fails with a long UnicodeDecodeError naming neither file nor line. `read_lines` reads
local paths and any `tf.io.gfile` path (gs://...) in bounded binary chunks and gives
what `open(path, encoding="utf-8")` would, plus:

- lines end at "\\n", "\\r\\n" or "\\r" (universal newlines), each given with "\\n";
- a UTF-8 byte order mark at the start of the file is dropped;
- a byte that is not UTF-8 raises one `UserError` line naming the file, the line, the
  column (byte offset in the line, from 1) and the fix.

    # corpus.txt holds b"\\xef\\xbb\\xbfein\\rzwei\\r\\ndrei"
    list(read_lines("corpus.txt"))   # ["ein\\n", "zwei\\n", "drei"]
    count_lines("corpus.txt")        # 3

Memory is one chunk plus the line being read, whatever the file's size.
"""
from typing import Iterator

from t2t.core import atomic_files, errors

CHUNK_SIZE = 1 << 20
_BOM = b"\xef\xbb\xbf"


def _open_binary(path):
    if atomic_files.is_remote_path(path):
        import tensorflow as tf  # Only remote storage needs TensorFlow's file system.
        return tf.io.gfile.GFile(path, "rb")
    return open(atomic_files.local_path(path), "rb")


def _chunks(handle, chunk_size):
    """The file's bytes in chunks, without a byte order mark at its start."""
    head = handle.read(len(_BOM))
    if head and head != _BOM:
        yield head
    while True:
        chunk = handle.read(chunk_size)
        if not chunk:
            return
        yield chunk


def _line_blocks(handle, chunk_size):
    """Blocks of whole lines (each block ends at a line break, but maybe the last).

    A "\\r" that ends a chunk ends its line; a "\\n" right after it (in the next chunk)
    is then dropped, so "\\r\\n" split across chunks is still one line break.
    """
    pending = []  # the start of a line whose end is in a later chunk
    skip_newline = False
    for chunk in _chunks(handle, chunk_size):
        if skip_newline:
            skip_newline = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if cut < 0:
            pending.append(chunk)
            continue
        pending.append(chunk[:cut + 1])
        yield b"".join(pending)
        pending = [chunk[cut + 1:]]
        skip_newline = cut == len(chunk) - 1 and chunk.endswith(b"\r")
    rest = b"".join(pending)
    if rest:
        yield rest


def _line_breaks(data):
    """How many line breaks `data` holds ("\\r\\n" counts once)."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


def _not_utf8(path, block, error, first_line):
    prefix = block[:error.start]
    line = first_line + _line_breaks(prefix)
    column = error.start - max(prefix.rfind(b"\n"), prefix.rfind(b"\r"))
    return errors.UserError(
        "%s line %d, column %d: byte 0x%02x is not UTF-8; re-encode the file as UTF-8 "
        "(e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8 if it is Latin-1)"
        % (path, line, column, block[error.start]))


def read_lines(path: str, chunk_size: int = CHUNK_SIZE) -> Iterator[str]:
    """The lines of the UTF-8 file `path`, each ending "\\n" (the last one maybe not)."""
    line_number = 1
    with _open_binary(path) as handle:
        for block in _line_blocks(handle, chunk_size):
            try:
                text = block.decode("utf-8")
            except UnicodeDecodeError as error:
                raise _not_utf8(path, block, error, line_number) from None
            line_number += _line_breaks(block)
            if "\r" in text:
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            lines = text.split("\n")
            last = lines.pop()
            for line in lines:
                yield line + "\n"
            if last:
                yield last


def count_lines(path: str, chunk_size: int = CHUNK_SIZE) -> int:
    """How many lines `read_lines(path)` gives (without decoding them).

        count_lines(f) for b"a\\nb\\n" -> 2, b"a\\r\\nb" -> 2, b"a\\n\\n" -> 2, b"" -> 0
    """
    count = 0
    with _open_binary(path) as handle:
        for block in _line_blocks(handle, chunk_size):
            count += _line_breaks(block)
            if not block.endswith((b"\n", b"\r")):
                count += 1  # a last line without a line break
    return count
