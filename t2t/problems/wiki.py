"""Language models on the English Wikipedia XML dump (T2T 1.15.7's `wiki`).

The dump `enwiki-20171201-pages-articles.xml.bz2` (archive.org) is decompressed and split
into parts of whole lines of at most 4 MiB (`<dump>.xml-part-00000`, ...); every 5000th part
(parts 0, 5000, ...) is dev data, the others training data. The text is encoded with a
subword vocabulary built from its first `max_chars_for_vocab` characters and chopped into
examples of `sequence_length` ids, regardless of article boundaries:

    t2t-datagen --problem=languagemodel_wiki_noref_v8k_l1k --data_dir=~/t2t_data \\
        --tmp_dir=/tmp/t2t_datagen      # a dump already in tmp_dir is not downloaded

- `languagemodel_wiki_xml_v8k_l1k` (`_l4k`): the raw XML, 1,024 (4,096) ids per example.
- `languagemodel_wiki_noref_v8k_l1k` (`_v8k_l16k`, `_v32k_l1k`, `_v32k_l16k`,
  `_v128k_l1k`): articles only (no ":" in the title, more than 140 characters), their
  references, triple quotes and internal links removed (a link keeps its shown text), each
  behind a header line, as in

      title: "Anarchism" length: 1234
      Anarchism is a political philosophy ...

- `languagemodel_wiki_scramble_l128` (`_l1k`): the raw XML in examples of 128 (1,024) ids
  whose inputs are the targets with half of the positions shuffled among themselves
  (`numpy.random`); leftover ids are dropped.
"""
import bz2
import os

import numpy as np
import tensorflow as tf

from t2t.core import atomic_files
from t2t.core import download
from t2t.core import registry
from t2t.encoders import escaping
from t2t.problems import spaces
from t2t.problems import text2text

CORPUS_URL = ("https://archive.org/download/enwiki-20171201/"
              "enwiki-20171201-pages-articles.xml.bz2")


def split_lines_into_parts(lines, part_prefix, part_bytes):
    """Write the byte `lines` to `part_prefix` + "00000", "00001", ..., each part holding
    whole lines of at most `part_bytes` bytes (a longer line is cut), as GNU
    `split --line-bytes=<part_bytes> --suffix-length=5 --numeric-suffixes`. The parts are
    written under temporary names and renamed when all are done; returns their paths.

        split_lines_into_parts([b"ab\\n", b"cd\\n", b"e\\n"], "/tmp/x-part-", 5)
        # /tmp/x-part-00000 "ab\\n", /tmp/x-part-00001 "cd\\ne\\n"
    """
    pending, out, size = [], None, 0

    def new_part():
        path = "%s%05d" % (part_prefix, len(pending))
        pending.append(path)
        return open(path + ".incomplete", "wb")

    try:
        for line in lines:
            while line:
                if out is None or (size and size + len(line) > part_bytes):
                    if out is not None:
                        out.close()
                    out, size = new_part(), 0
                piece = line[:part_bytes - size]
                out.write(piece)
                size += len(piece)
                line = line[len(piece):]
    finally:
        if out is not None:
            out.close()
    for path in pending:
        atomic_files.commit_file(path + ".incomplete", path)
    return pending


def _dump_to_pages(dump):
    """The text between each "<page>\\n" and the next "</page>\\n" of an XML dump string (an
    unclosed last page is left out)."""
    pages, pos = [], 0
    start_tag, end_tag = "<page>\n", "</page>\n"
    while True:
        start = dump.find(start_tag, pos)
        if start == -1:
            return pages
        start += len(start_tag)
        end = dump.find(end_tag, start)
        if end == -1:
            return pages
        pages.append(dump[start:end])
        pos = end + len(end_tag)


def _page_to_title(page):
    """The text of a page's <title> element."""
    start, end = page.find("<title>"), page.find("</title>")
    if start == -1 or end == -1:
        raise ValueError("Wikipedia page without <title>...</title>: %r; is the file a "
                         "pages-articles XML dump?" % page[:80])
    return page[start + len("<title>"):end]


def _page_to_text(page):
    """The text of a page's <text ...> element ("" when it is not closed)."""
    start = page.find("<text")
    if start == -1:
        raise ValueError("Wikipedia page without <text>: %r; is the file a pages-articles "
                         "XML dump?" % page[:80])
    start = page.find(">", start)
    end = page.find("</text>")
    if start == -1 or end == -1:
        return ""
    return page[start + 1:end]


def _find_and_replace(text, start_string, end_string, replace_fn):
    """Each `start_string` ... `end_string` span replaced by replace_fn(what is between);
    an unclosed `start_string` drops the rest of the text (as T2T).

        _find_and_replace("the [[fat]] cat [[sat]]", "[[", "]]", lambda s: s)  # "the fat cat sat"
    """
    pieces, pos = [], 0
    while True:
        start = text.find(start_string, pos)
        if start == -1:
            pieces.append(text[pos:])
            break
        pieces.append(text[pos:start])
        end = text.find(end_string, start + len(start_string))
        if end == -1:
            break
        pieces.append(replace_fn(text[start + len(start_string):end]))
        pos = end + len(end_string)
    return "".join(pieces)


def _remove_references(text):
    """Drop the escaped <ref ...>...</ref> spans of the dump's text."""
    return _find_and_replace(text, "&lt;ref", "&lt;/ref&gt;", lambda s: "")


def _remove_triple_quotes(text):
    """Keep the text of '''bold''' spans without the quotes."""
    return _find_and_replace(text, "'''", "'''", lambda s: s)


def _remove_double_brackets(text):
    """Internal links [[target|shown]] -> "shown" ([[target]] -> "target"); links with a
    ":" (categories, files, other languages) are dropped."""
    def shown(link):
        if ":" in link:
            return ""
        return link[link.find("|") + 1:] if "|" in link else link
    return _find_and_replace(text, "[[", "]]", shown)


@registry.register_problem
class LanguagemodelWikiXmlV8kL1k(text2text.ChoppedTextProblem):
    """English Wikipedia's XML dump chopped into 1,024-id examples, 8k subword vocabulary."""

    @property
    def corpus_url(self):
        return CORPUS_URL

    @property
    def split_part_bytes(self):
        """The most bytes of lines in one part of the decompressed dump (T2T's 4M)."""
        return 4 * 2**20

    def maybe_prepare_text(self, tmp_dir):
        """The paths of the dump's parts in tmp_dir, made (and the dump downloaded) if
        missing; a decompressed dump in tmp_dir is split without a download."""
        compressed = os.path.join(tmp_dir, os.path.basename(self.corpus_url))
        decompressed = compressed[:-len(".bz2")]
        prefix = decompressed + "-part-"
        parts = sorted(tf.io.gfile.glob(prefix + "?????"))
        if parts:
            return parts
        if os.path.exists(decompressed):
            source = open(decompressed, "rb")
        else:
            download.maybe_download(tmp_dir, os.path.basename(compressed), self.corpus_url)
            source = bz2.open(compressed, "rb")
        with source:
            parts = split_lines_into_parts(source, prefix, self.split_part_bytes)
        if not parts:
            raise ValueError("the Wikipedia dump %s is empty; delete it to download it "
                             "again" % (decompressed if os.path.exists(decompressed)
                                        else compressed))
        return parts

    def train_text_filepaths(self, tmp_dir):
        return [f for i, f in enumerate(self.maybe_prepare_text(tmp_dir))
                if i % self.dev_fraction != 0]

    def dev_text_filepaths(self, tmp_dir):
        return [f for i, f in enumerate(self.maybe_prepare_text(tmp_dir))
                if i % self.dev_fraction == 0]

    @property
    def dev_fraction(self):
        """Every dev_fraction-th part (from the first) is dev data."""
        return 5000

    @property
    def approx_vocab_size(self):
        return 2**13  # 8192

    @property
    def sequence_length(self):
        """Ids per example."""
        return 1024

    @property
    def max_chars_for_vocab(self):
        """Characters of training text the vocabulary is built from (T2T's number)."""
        return 41800829


@registry.register_problem
class LanguagemodelWikiXmlV8kL4k(LanguagemodelWikiXmlV8kL1k):
    """The XML dump in 4,096-id examples."""

    @property
    def sequence_length(self):
        return 4096


class LanguagemodelWikiScramble(LanguagemodelWikiXmlV8kL1k):
    """Targets: `sequence_length` ids of the dump; inputs: the same ids with
    `scramble_fraction` of the positions (chosen at random) permuted among themselves.
    For parallel (non-autoregressive) prediction of the targets from the inputs."""

    def example_generator(self, encoder, tmp_dir, task_id):
        for example in super().example_generator(encoder, tmp_dir, task_id):
            example["inputs"] = self.scramble(example["targets"])
            yield example

    @property
    def scramble_fraction(self):
        """The share of positions whose ids are shuffled."""
        raise NotImplementedError("%s must define scramble_fraction" % type(self).__name__)

    @property
    def has_inputs(self):
        return True

    @property
    def input_space_id(self):
        return spaces.SpaceID.EN_TOK

    def hparams(self, defaults, unused_model_hparams):
        super().hparams(defaults, unused_model_hparams)
        defaults.input_space_id = self.input_space_id

    @property
    def remainder_policy(self):
        return "drop"

    def scramble(self, seq):
        """`seq` (sequence_length ids) with int(sequence_length * scramble_fraction) random
        positions' ids permuted among those positions (numpy's global random state)."""
        seq = np.array(seq)
        num_permute = int(self.sequence_length * self.scramble_fraction)
        positions = np.random.permutation(self.sequence_length)
        mixed = seq[positions]
        mixed = np.concatenate((mixed[:num_permute][np.random.permutation(num_permute)],
                                mixed[num_permute:]))
        return [int(i) for i in mixed[np.argsort(positions)]]


@registry.register_problem
class LanguagemodelWikiScrambleL128(LanguagemodelWikiScramble):
    """128 ids, half of them scrambled."""

    @property
    def sequence_length(self):
        return 128

    @property
    def scramble_fraction(self):
        return 0.5


@registry.register_problem
class LanguagemodelWikiScrambleL1k(LanguagemodelWikiScramble):
    """1,024 ids, half of them scrambled."""

    @property
    def sequence_length(self):
        return 1024

    @property
    def scramble_fraction(self):
        return 0.5


@registry.register_problem
class LanguagemodelWikiNorefV8kL1k(LanguagemodelWikiXmlV8kL1k):
    """Articles without references or link markup, each behind a `title: "..." length: n`
    line (for generating an article of a given title and length), chopped into 1,024-id
    examples. A page split across two parts of the dump is left out (as T2T)."""

    def filepath_to_unicode_strings(self, filepath):
        with tf.io.gfile.GFile(filepath, "rb") as f:
            dump = escaping.to_unicode_ignore_errors(f.read())
        articles = []
        for page in _dump_to_pages(dump):
            title = _page_to_title(page)
            text = _remove_triple_quotes(_remove_double_brackets(_remove_references(
                _page_to_text(page))))
            if ":" in title or len(text) <= 140:  # not an article, or a redirect
                continue
            articles.append('title: "%s" length: %d\n%s\n' % (title, len(text), text))
        yield "".join(articles)

    @property
    def max_chars_for_vocab(self):
        return 21240483


@registry.register_problem
class LanguagemodelWikiNorefV8kL16k(LanguagemodelWikiNorefV8kL1k):
    """Articles in 16,384-id examples."""

    @property
    def sequence_length(self):
        return 2**14


@registry.register_problem
class LanguagemodelWikiNorefV32kL1k(LanguagemodelWikiNorefV8kL1k):
    """Articles, 32k subword vocabulary built from 100M characters."""

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768

    @property
    def max_chars_for_vocab(self):
        return 100 * 10**6


@registry.register_problem
class LanguagemodelWikiNorefV32kL16k(LanguagemodelWikiNorefV32kL1k):
    """Articles, 32k vocabulary, 16,384-id examples."""

    @property
    def sequence_length(self):
        return 2**14


@registry.register_problem
class LanguagemodelWikiNorefV128kL1k(LanguagemodelWikiNorefV8kL1k):
    """Articles, 128k subword vocabulary built from 100M characters."""

    @property
    def approx_vocab_size(self):
        return 2**17  # 131072

    @property
    def max_chars_for_vocab(self):
        return 100 * 10**6
