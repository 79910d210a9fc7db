"""Real-data text files: CR line ends, BOMs, Latin-1 bytes, misaligned and broken TSV files."""
import os

import pytest
from absl import logging

from t2t.core import errors, registry
from t2t.data import generator_utils
from t2t.encoders import tokenizer
from t2t.problems import spaces, text2text, translate, wiki_lm

TRAIN = spaces.DatasetSplit.TRAIN


def _write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


def _cr_lines(prefix, count):
    return b"".join(b"%s %d\r" % (prefix, i) for i in range(count))


# ----------------------------------------------------------------------------
# 1. CR-only, CRLF and mixed line ends read as Python reads them
# ----------------------------------------------------------------------------
def test_text2text_tmpdir_reads_cr_only_files_as_their_lines(tmp_path):
    _write(tmp_path / "inputs.train.txt", _cr_lines(b"in", 1800))
    _write(tmp_path / "targets.train.txt", _cr_lines(b"out", 1800))
    samples = list(registry.problem("text2text_tmpdir").generate_samples(
        None, str(tmp_path), TRAIN))
    assert len(samples) == 1800
    assert samples[1799] == {"inputs": "in 1799", "targets": "out 1799"}


def test_line_readers_end_lines_at_cr_crlf_and_lf(tmp_path):
    path = _write(tmp_path / "mixed.txt", b"a\rb\r\nc\nd")
    assert list(text2text.txt_line_iterator(path)) == ["a", "b", "c", "d"]
    tsv = _write(tmp_path / "pairs.tsv", b"a\tA\rb\tB\r\nc\tC")
    assert [s["targets"] for s in text2text.text2text_txt_tab_iterator(tsv)] == ["A", "B", "C"]
    counts = tokenizer.corpus_token_counts(path, corpus_max_lines=None)
    assert counts == {"a": 1, "b": 1, "c": 1, "d": 1}
    lm = _write(tmp_path / "wiki.txt", b"\xef\xbb\xbfone two\rthree four\r")
    assert list(wiki_lm.concat_generator(lm, 9, 3)) == [{"targets": "one two"}]


def test_vocab_builders_read_cr_files_line_by_line(tmp_path, monkeypatch):
    monkeypatch.setattr(generator_utils, "get_or_generate_vocab_inner",
                        lambda data_dir, name, size, generator, *args: list(generator))
    _write(tmp_path / "pairs.tsv", b"\xef\xbb\xbfhi\thallo\rcat\tkatze\r")
    assert generator_utils.get_or_generate_tabbed_vocab(
        None, str(tmp_path), "pairs.tsv", 1, "v", 8) == ["hallo", "katze"]
    assert generator_utils.get_or_generate_txt_vocab(
        None, "v", 8, _write(tmp_path / "c.txt", b"x y\rz\r")) == ["x y", "z"]


def test_token_vocab_of_text2text_tmpdir_tokens_reads_cr_lines(tmp_path):
    _write(tmp_path / "vocab.txt", b"\xef\xbb\xbfhello\rworld\r")
    encoder = registry.problem("text2text_tmpdir_tokens")._generate_vocab(str(tmp_path))
    assert encoder.encode("hello world") == [3, 4]


def _corpus(tmp_path, members):
    import io
    import tarfile
    archive = tmp_path / "src" / "corpus.tgz"
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(archive)


def test_compile_data_reads_a_cr_only_corpus_as_its_sentence_pairs(tmp_path):
    archive = _corpus(tmp_path, {"a.en": _cr_lines(b"en", 300), "a.de": _cr_lines(b"de", 300)})
    prefix = translate.compile_data(str(tmp_path / "tmp"), [[archive, ("a.en", "a.de")]], "cr")
    pairs = list(text2text.text2text_txt_iterator(prefix + ".lang1", prefix + ".lang2"))
    assert len(pairs) == 300 and pairs[299] == {"inputs": "en 299", "targets": "de 299"}


# ----------------------------------------------------------------------------
# 2. Parallel files of different lengths: one line, nothing written
# ----------------------------------------------------------------------------
def _parallel(tmp_path, inputs_lines, targets_lines):
    for split in ("train", "eval"):
        _write(tmp_path / "tmp" / ("inputs.%s.txt" % split),
               "".join("in %d\n" % i for i in range(inputs_lines)).encode())
        _write(tmp_path / "tmp" / ("targets.%s.txt" % split),
               "".join("out %d\n" % i for i in range(targets_lines)).encode())


@pytest.mark.parametrize("inputs_lines,targets_lines", [(401, 400), (390, 400)])
def test_text2text_tmpdir_refuses_files_of_different_lengths(tmp_path, inputs_lines,
                                                             targets_lines):
    _parallel(tmp_path, inputs_lines, targets_lines)
    data_dir = tmp_path / "data"
    with pytest.raises(errors.UserError) as raised:
        registry.problem("text2text_tmpdir").generate_data(str(data_dir), str(tmp_path / "tmp"))
    message = str(raised.value)
    assert "\n" not in message
    assert "inputs.train.txt has %d lines" % inputs_lines in message
    assert "targets.train.txt has %d" % targets_lines in message
    assert not data_dir.exists() or not os.listdir(data_dir)


def test_compile_data_names_both_line_counts(tmp_path):
    archive = _corpus(tmp_path, {"a.en": b"1\n2\n3\n", "a.de": b"1\r2\r"})
    with pytest.raises(errors.UserError, match=r"a.en has 3 lines but .*a.de has 2"):
        translate.compile_data(str(tmp_path / "tmp"), [[archive, ("a.en", "a.de")]], "mis")
    assert not os.path.exists(str(tmp_path / "tmp" / "mis.lang1"))


# ----------------------------------------------------------------------------
# 3. and 4. Latin-1 bytes and byte order marks
# ----------------------------------------------------------------------------
def test_latin1_file_is_one_line_naming_file_line_and_column(tmp_path):
    path = _write(tmp_path / "inputs.train.txt", b"ok\ncaf\xe9\n")
    with pytest.raises(errors.UserError) as raised:
        list(text2text.txt_line_iterator(path))
    assert str(raised.value).startswith("%s line 2, column 4: byte 0xe9 is not UTF-8" % path)
    assert "iconv -f latin1 -t utf-8" in str(raised.value)


def test_bom_is_not_part_of_the_first_example_or_the_vocab(tmp_path):
    path = _write(tmp_path / "bom.txt", b"\xef\xbb\xbfhello world\nhello\n")
    assert list(text2text.txt_line_iterator(path)) == ["hello world", "hello"]
    assert tokenizer.corpus_token_counts(path, corpus_max_lines=None) == {"hello": 2, "world": 1}


# ----------------------------------------------------------------------------
# 5. TSV lines without a tab or with several
# ----------------------------------------------------------------------------
def _tsv(tmp_path, good, no_tab=(), extra_tab=(), name="train.tsv"):
    lines = []
    for i in range(good):
        number = len(lines) + 1
        if number in no_tab:
            lines.append("no tab %d" % i)
        elif number in extra_tab:
            lines.append("in %d\tout %d\textra" % (i, i))
        else:
            lines.append("in %d\tout %d" % (i, i))
    return _write(tmp_path / name, ("\n".join(lines) + "\n").encode())


def test_tab_iterator_reports_bad_lines_in_one_warning(tmp_path, monkeypatch):
    warnings = []
    monkeypatch.setattr(logging, "warning", lambda msg, *args: warnings.append(msg % args))
    path = _tsv(tmp_path, 2000, no_tab={3, 50}, extra_tab={7})
    samples = list(text2text.text2text_txt_tab_iterator(path))
    assert len(samples) == 1998
    assert samples[5]["targets"] == "out 6\textra"  # T2T's split, kept
    assert len(warnings) == 1
    assert warnings[0] == ("%s: 2 of 2000 lines have no tab (skipped; lines 3, 50), 1 has "
                           "more than one tab (the target keeps the rest; line 7)" % path)


def test_tab_iterator_refuses_a_file_past_the_threshold_before_writing(tmp_path):
    path = _tsv(tmp_path / "tmp", 100, no_tab=set(range(1, 12)))
    _tsv(tmp_path / "tmp", 10, name="eval.tsv")
    with pytest.raises(errors.UserError) as raised:
        list(text2text.text2text_txt_tab_iterator(path))
    assert "11 of 100 lines have no tab" in str(raised.value)
    data_dir = tmp_path / "data"
    with pytest.raises(errors.UserError, match="11 of 100 lines have no tab"):
        registry.problem("text2text_tmpdir_tsv").generate_data(str(data_dir),
                                                               str(tmp_path / "tmp"))
    assert not data_dir.exists() or not os.listdir(data_dir)


def test_vocab_sampling_of_downloaded_corpora_drops_the_bom(tmp_path):
    path = _write(tmp_path / "corpus.en", b"\xef\xbb\xbfhello\rworld\n")
    assert list(generator_utils._lines_within_budget(path, 1e6)) == ["hello", "world"]
