"""Helpers of the wiki_revision problems (T2T 1.15.7's `wiki_revision_utils`): reading
Wikipedia revision-history dumps, cleaning revision text, aligning two revisions.

    pages = corpus_page_generator(["/dumps/enwiki-latest-pages-meta-history1.xml-p1p9.bz2"],
                                  "/tmp/t2t", max_page_size_exp=26)
    next(pages) -> {"title": "Anarchism", "id": 12, "revisions": ["<id>..</id>...<text ...>...", ...]}
    get_text(revision) -> the revision's prose (templates, references, links' targets removed)

A dump is read as T2T did, page by page, without parsing its XML: a `.7z` file through the
`7z` program (`7z x -so`, as T2T; its absence is a one-line error naming it), a `.bz2` file
(Wikimedia publishes both) with Python's `bz2`, any other file as plain XML.
"""
import bz2
import logging
import math
import os
import random
import re
import shutil
import subprocess
import tempfile

import tensorflow as tf

from t2t.core import download
from t2t.core import errors
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.problems import wiki

_PAGE_START = b"  <page>\n"
_PAGE_END = b"  </page>\n"
_READ_BYTES = 2**20


def include_revision(revision_num, skip_factor=1.1):
    """Whether revision `revision_num` (0-based) is kept: all when skip_factor <= 1, else
    logarithmically many (consecutive kept numbers grow by about `skip_factor`).

        [n for n in range(10) if include_revision(n, 1.5)] -> [0, 1, 2, 4, 6]
    """
    if skip_factor <= 1.0:
        return True
    return (int(math.log1p(revision_num) / math.log(skip_factor))
            != int(math.log(revision_num + 2.0) / math.log(skip_factor)))


def file_page_generator(my_file, max_page_size=2**28):
    """Parsed pages (`parse_page`) of a binary history-dump stream, read 1 MiB at a time.

    A page is the bytes between "  <page>\\n" and "  </page>\\n"; pages of `max_page_size`
    bytes or more are skipped (some have terabytes of revisions), as are non-article pages.

        file_page_generator(open("dump.xml", "rb"), 2**26) -> iterator of page dicts
    """
    buf, skipping = b"", False
    while True:
        chunk = my_file.read(_READ_BYTES)
        if not chunk:
            return
        buf += chunk
        while True:
            if skipping:  # Inside an oversized page: drop everything up to its end.
                end = buf.find(_PAGE_END)
                if end == -1:
                    buf = buf[-(len(_PAGE_END) - 1):]
                    break
                buf, skipping = buf[end + len(_PAGE_END):], False
            start = buf.find(_PAGE_START)
            if start == -1:  # Keep a page start that the next read completes.
                buf = buf[-(len(_PAGE_START) - 1):]
                break
            end = buf.find(_PAGE_END, start)
            if end == -1:
                buf = buf[start:]
                if len(buf) > max_page_size + len(_PAGE_START):
                    buf, skipping = buf[-(len(_PAGE_END) - 1):], True
                break
            raw_page = buf[start + len(_PAGE_START):end]
            buf = buf[end + len(_PAGE_END):]
            if len(raw_page) < max_page_size:
                page = parse_page(raw_page.decode("utf-8", errors="replace"))
                if page:
                    yield page


def get_title(page):
    """The text of a page's <title> element (a ValueError naming the page without one)."""
    return wiki._page_to_title(page)


def get_id(page):
    """The first <id> of a page (its own; the revisions' ids come after it), an int."""
    start, end = page.find("<id>"), page.find("</id>")
    if start == -1 or end == -1:
        raise ValueError("Wikipedia page without <id>...</id>: %r; is the file a history "
                         "XML dump?" % page[:80])
    return int(page[start + len("<id>"):end])


def get_revisions(page):
    """The text between each "    <revision>\\n" and "    </revision>\\n" of a page."""
    start_string, end_string = "    <revision>\n", "    </revision>\n"
    revisions, pos = [], 0
    while True:
        start = page.find(start_string, pos)
        if start == -1:
            return revisions
        end = page.find(end_string, start)
        if end == -1:
            raise ValueError("Wikipedia revision without its end tag in page %r"
                             % page[:80])
        revisions.append(page[start + len(start_string):end])
        pos = end + len(end_string)


def parse_page(raw_page):
    """{"title", "id", "revisions"} of a page's text, or None for a non-article (a ":" in
    its title: Talk:, User:, Category:, ...)."""
    page = {"title": get_title(raw_page), "id": get_id(raw_page)}
    if ":" in page["title"]:
        return None
    page["revisions"] = get_revisions(raw_page)
    return page


def maybe_copy_file_to_directory(source_filepath, target_directory):
    """Copy (local, gs:// or http(s)) `source_filepath` into `target_directory` unless a file
    of its name is there; returns the copy's path."""
    return download.maybe_download(target_directory, os.path.basename(source_filepath),
                                   source_filepath)


def _seven_zip():
    for name in ("7z", "7za"):
        program = shutil.which(name)
        if program:
            return program
    raise errors.UserError("wiki_revision: reading .7z dumps needs the 7z program, which is "
                           "not on PATH; install p7zip (apt-get install p7zip-full) or use "
                           "the .bz2 dumps")


def _dump_pages(filepath, max_page_size):
    if filepath.endswith(".7z"):
        command = [_seven_zip(), "x", "-so", filepath]
        logging.info("Running command: %s", command)
        with tempfile.TemporaryFile() as stderr:  # A file: a full pipe would block 7z.
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr)
            finished = False
            try:
                yield from file_page_generator(process.stdout, max_page_size)
                finished = True
            finally:
                if not finished:
                    process.kill()
                process.stdout.close()
                code = process.wait()
            stderr.seek(0)
            message = stderr.read().decode("utf-8", "replace").strip().splitlines()
        if code != 0:
            raise errors.UserError("wiki_revision: 7z could not extract %s (exit code %d): %s"
                                   % (filepath, code, message[-1] if message else ""))
        return
    opener = bz2.open if filepath.endswith(".bz2") else open
    with opener(filepath, "rb") as dump:
        yield from file_page_generator(dump, max_page_size)


def corpus_page_generator(corpus_files, tmp_dir, max_page_size_exp):
    """The pages of each history dump of `corpus_files`, each first copied into tmp_dir."""
    for remote_filepath in corpus_files:
        filepath = maybe_copy_file_to_directory(remote_filepath, tmp_dir)
        logging.info("Reading from %s", filepath)
        yield from _dump_pages(filepath, 2**max_page_size_exp)


def get_text(revision, strip=True):
    """The text of a revision's <text ...> element ("" when empty), `strip_text`-ed.

        get_text('<text xml:space="preserve">{{Infobox}}Cats [[purr|mew]].</text>')
        -> "Cats mew."
    """
    if revision.find("<text") == -1:
        raise ValueError("Wikipedia revision without <text>: %r" % revision[:80])
    text = wiki._page_to_text(revision)
    if strip:
        text = strip_text(text)
    return text


def strip_text(text):
    """Wikipedia markup mostly removed, leaving prose: templates ({{...}}), references,
    link targets and categories, bold quotes, and lines not starting with a letter or quote.

        strip_text("'''Cats''' [[purr]].\\n* a list\\n== Heading ==") -> "Cats purr."
    """
    return _remove_boring_lines(
        _remove_triple_quotes(
            _remove_double_brackets(
                _remove_references(_remove_curly_braces(text)))))


_find_and_replace = wiki._find_and_replace
_remove_references = wiki._remove_references
_remove_triple_quotes = wiki._remove_triple_quotes
_remove_double_brackets = wiki._remove_double_brackets


def _remove_curly_braces(text):
    """Everything inside (possibly nested) curly braces removed; with unbalanced braces the
    text after the last brace at depth > 0 is dropped, as T2T.

        _remove_curly_braces("a{{b{c}}}d") -> "ad"
    """
    pieces, pos, depth = [], 0, 0
    for match in re.finditer("[{}]", text):
        if depth == 0:
            pieces.append(text[pos:match.start()])
        depth += 1 if match.group() == "{" else -1
        pos = match.end()
    if depth == 0:
        pieces.append(text[pos:])
    return "".join(pieces)


def _remove_boring_lines(text):
    """Only the lines that start with an ASCII letter or a quote."""
    return "\n".join(line for line in text.split("\n") if re.match("[a-zA-Z\"']", line))


def all_corpus_files(data_prefix):
    """The files whose path starts with `data_prefix`, sorted."""
    return sorted(tf.io.gfile.glob(data_prefix + "*"))


def corpus_files_for_shard(shard_num, train_shards, dev_shards, data_prefix):
    """Every (train_shards + dev_shards)-th corpus file, starting with number `shard_num`."""
    total = train_shards + dev_shards
    if not 0 <= shard_num < total:
        raise ValueError("wiki_revision: shard %d is not one of the %d train and %d dev "
                         "shards" % (shard_num, train_shards, dev_shards))
    corpus_files = [name for i, name in enumerate(all_corpus_files(data_prefix))
                    if i % total == shard_num]
    logging.info("Corpus files for shard %s: %s", shard_num, corpus_files)
    return corpus_files


def vocab_filename(approx_vocab_size, strip):
    """"vocab.wiki_revision.strip.32768" (without ".strip" for unstripped text)."""
    return "vocab.wiki_revision%s.%d" % (".strip" if strip else "", approx_vocab_size)


def get_or_generate_vocabulary(data_dir, tmp_dir, data_prefix, max_page_size_exp,
                               approx_vocab_size=32768, strip=True):
    """Load data_dir/`vocab_filename(...)`, or build it from the newest revision of the first
    approx_vocab_size // 3 + 1 pages of the corpus files (last file first, as T2T)."""
    num_pages_for_vocab_generation = approx_vocab_size // 3

    def newest_revisions():
        count = 0
        for page in corpus_page_generator(all_corpus_files(data_prefix)[::-1], tmp_dir,
                                          max_page_size_exp):
            if page["revisions"]:
                yield get_text(page["revisions"][-1], strip=strip)
                count += 1
                if count > num_pages_for_vocab_generation:
                    return

    return generator_utils.get_or_generate_vocab_inner(
        data_dir, vocab_filename(approx_vocab_size, strip), approx_vocab_size,
        newest_revisions())


def get_encoder_from_vocab(vocab_filepath):
    """The SubwordTextEncoder of an existing vocabulary file (a UserError naming a missing one)."""
    if not tf.io.gfile.exists(vocab_filepath):
        raise errors.UserError("wiki_revision: vocab file %s does not exist; check the "
                               "path" % vocab_filepath)
    logging.info("Found vocab file: %s", vocab_filepath)
    return text_encoder.SubwordTextEncoder(vocab_filepath)


def throw_empty_pairs(src_tgt_pairs):
    """The (source, target) pairs whose sides are both non-empty."""
    return [pair for pair in src_tgt_pairs if pair[0] and pair[1]]


def edit_distance_filter(source_target_input, max_equal_to_diff_ratio=0):
    """(pairs with diff chars <= ratio * equal chars, number thrown out); 0 keeps all.

        edit_distance_filter([("abcd", "abcd"), ("abcd", "wxyz")], 1) -> ([("abcd", "abcd")], 1)
    """
    if not max_equal_to_diff_ratio:
        return source_target_input, 0
    kept, thrown_out = [], 0
    for source, target in source_target_input:
        diff_chars = equal_chars = 0
        for tag, i1, i2, j1, j2 in fast_match_sequences(source, target):
            if tag == "diff":
                diff_chars += max(i2 - i1, j2 - j1)  # A substitution counts once.
            else:
                equal_chars += i2 - i1
        if diff_chars <= max_equal_to_diff_ratio * equal_chars:
            kept.append((source, target))
        else:
            thrown_out += 1
    return kept, thrown_out


def introduce_errors(s, corruption_rate=3e-3, infill_marker="|?|", max_infill_len=8,
                     rng=None):
    """(`s` with artificial errors, their number): at each character, with probability
    `corruption_rate`, a deletion, an insertion or replacement by a random character of `s`,
    a transposition, or (with max_infill_len) up to max_infill_len characters replaced by
    `infill_marker`. `rng` is a `random.Random` (default: the `random` module, as T2T).

        introduce_errors("the fat cat", 0.0) -> ("the fat cat", 0)
    """
    rng = rng or random
    operations = ["delete", "insert", "replace", "transpose"]
    if max_infill_len:
        operations.append("infill")
    out, num_errors, pos = [], 0, 0
    while pos < len(s):
        if rng.random() >= corruption_rate:
            out.append(s[pos])
            pos += 1
            continue
        num_errors += 1
        operation = operations[rng.randint(0, len(operations) - 1)]
        if operation == "delete":
            pos += 1
        elif operation == "insert":
            out.append(s[rng.randint(0, len(s) - 1)])
        elif operation == "replace":
            out.append(s[rng.randint(0, len(s) - 1)])
            pos += 1
        elif operation == "transpose":
            out.append(s[pos + 1] if pos + 1 < len(s) else "")
            out.append(s[pos])
            pos += 2
        else:
            out.append(infill_marker)
            pos += rng.randint(0, max_infill_len)
    return "".join(out), num_errors


def fast_match_sequences(a, b, a_start=0, a_end=None, b_start=0, b_end=None,
                         min_match_length=3, max_recursion_depth=128):
    """Alignment of a[a_start:a_end] with b[b_start:b_end]: [(tag, i1, i2, j1, j2), ...],
    tag "equal" or "diff", indices into the whole sequences (like difflib's opcodes).

    The longest match found (each value matched at its first occurrence in b; a match at
    both sequences' start or end counts min_match_length more) splits the problem in two;
    shorter matches than min_match_length are part of the diffs around them.

        fast_match_sequences("the cat", "the dog")
        -> [("equal", 0, 4, 0, 4), ("diff", 4, 7, 4, 7)]
    """
    a_end = len(a) if a_end is None else a_end
    b_end = len(b) if b_end is None else b_end
    if a_start == a_end and b_start == b_end:
        return []
    if a_start == a_end or b_start == b_end:
        return [("diff", a_start, a_end, b_start, b_end)]
    first_in_b = {}
    for j in range(b_end - 1, b_start - 1, -1):
        first_in_b[b[j]] = j
    best_length, best_match = 0, None
    a_pos = a_start
    while a_pos < a_end:
        b_pos = first_in_b.get(a[a_pos])
        if b_pos is None:
            a_pos += 1
            continue
        a1, a2, b1, b2 = a_pos, a_pos + 1, b_pos, b_pos + 1
        while a1 > a_start and b1 > b_start and a[a1 - 1] == b[b1 - 1]:
            a1, b1 = a1 - 1, b1 - 1
        while a2 < a_end and b2 < b_end and a[a2] == b[b2]:
            a2, b2 = a2 + 1, b2 + 1
        length = a2 - a1
        if a1 == 0 and b1 == 0:
            length += min_match_length
        if a2 == len(a) and b2 == len(b):
            length += min_match_length
        if length > best_length:
            best_length, best_match = length, (a1, a2, b1, b2)
        a_pos = a2  # Past this match: do not rediscover it.
    if best_length < min_match_length or max_recursion_depth == 0:
        return [("diff", a_start, a_end, b_start, b_end)]
    a1, a2, b1, b2 = best_match
    return (fast_match_sequences(a, b, a_start, a1, b_start, b1, min_match_length,
                                 max_recursion_depth - 1)
            + [("equal", a1, a2, b1, b2)]
            + fast_match_sequences(a, b, a2, a_end, b2, b_end, min_match_length,
                                   max_recursion_depth - 1))
