"""BLEU: T2T's corpus BLEU, the approximate-BLEU eval metric, mteval tokenization, files.

Corpus BLEU on token lists (one reference per translation), as T2T computes it:

    compute_bleu([["the", "cat", "sat", "down"]], [["the", "cat", "sat", "up"]])
    # matches 3/4, 2/3, 1/2, 0/1 -> the matchless order is smoothed to 1/(2*1):
    # (0.75 * 0.667 * 0.5 * 0.5) ** 0.25 = 0.5946

Real BLEU of a decode against a reference file (what `t2t-bleu` reports, times 100):

    bleu_tokenize("Hello, world! It costs $3.50 each.")
    # ['Hello', ',', 'world', '!', 'It', 'costs', '$', '3.50', 'each', '.']
    bleu_wrapper("newstest2014.de", "decodes.de")              # e.g. 0.2731
    sacrebleu_corpus_score(["Hello world ."], ["Hello world !"])  # (score 0..100, signature)

`bleu_score(logits, labels)` is the `approx_bleu_score` eval metric: BLEU of the argmax ids of
teacher-forced logits against the label ids (subword ids, not detokenized text, so it reads
higher than real BLEU; see T2T issue #309).
"""
import collections
import functools
import math
import os
import re
import sys
import time
import unicodedata

import numpy as np
import tensorflow as tf
from absl import logging

PAD_ID = 0
EOS_ID = 1


# --------------------------------------------------------------------------- corpus BLEU
def _get_ngrams(segment, max_order):
    """Counter of every n-gram (as a tuple) of `segment` for n = 1..max_order.

        _get_ngrams(["a", "b", "a"], 2)
        # Counter({("a",): 2, ("b",): 1, ("a", "b"): 1, ("b", "a"): 1})
    """
    ngram_counts = collections.Counter()
    for order in range(1, max_order + 1):
        for start in range(len(segment) - order + 1):
            ngram_counts[tuple(segment[start:start + order])] += 1
    return ngram_counts


def compute_bleu(reference_corpus, translation_corpus, max_order=4, use_bp=True):
    """Corpus BLEU of tokenized translations, each against one tokenized reference.

    N-gram matches are clipped by the reference counts and summed over the corpus.
    An order with candidates but no match is smoothed as in mteval ("exp" smoothing:
    1 / (2^k * candidates) for the k-th such order); an order with no candidates at all
    (every translation shorter than n) contributes nothing but still counts in the
    1/max_order exponent, as in T2T.

    Args:
      reference_corpus: list of references, each a list of tokens (or ids).
      translation_corpus: list of translations, each a list of tokens (or ids).
      max_order: the largest n-gram order.
      use_bp: apply the brevity penalty exp(1 - ref_len / hyp_len) when hyp_len < ref_len.

    Returns:
      np.float32 in [0, 1].

        compute_bleu([[1, 2, 3, 4, 5]], [[1, 2, 3, 4, 6]])   # (4/5*3/4*2/3*1/2)**0.25 = 0.6687
    """
    reference_length = 0
    translation_length = 0
    matches_by_order = [0] * max_order
    possible_matches_by_order = [0] * max_order
    for reference, translation in zip(reference_corpus, translation_corpus):
        reference_length += len(reference)
        translation_length += len(translation)
        ref_ngram_counts = _get_ngrams(reference, max_order)
        translation_ngram_counts = _get_ngrams(translation, max_order)
        for ngram, count in ref_ngram_counts.items():
            matches_by_order[len(ngram) - 1] += min(count, translation_ngram_counts[ngram])
        for ngram, count in translation_ngram_counts.items():
            possible_matches_by_order[len(ngram) - 1] += count

    precisions = [0.0] * max_order
    smooth = 1.0
    for i in range(max_order):
        if possible_matches_by_order[i] > 0:
            if matches_by_order[i] > 0:
                precisions[i] = matches_by_order[i] / possible_matches_by_order[i]
            else:
                smooth *= 2
                precisions[i] = 1.0 / (smooth * possible_matches_by_order[i])

    geo_mean = 0.0
    if max(precisions) > 0:
        p_log_sum = sum(math.log(p) for p in precisions if p)
        geo_mean = math.exp(p_log_sum / max_order)

    bp = 1.0
    if use_bp and reference_length:
        ratio = translation_length / reference_length
        if ratio <= 0.0:
            bp = 0.0
        elif ratio < 1.0:
            bp = math.exp(1 - 1.0 / ratio)
    return np.float32(geo_mean * bp)


# --------------------------------------------------------------------------- approx BLEU
def _cut_at_eos_or_pad(ids):
    """The ids before the first EOS (1) or PAD (0)."""
    ids = list(ids)
    for position, token in enumerate(ids):
        if token in (PAD_ID, EOS_ID):
            return ids[:position]
    return ids


def teacher_forced_token_lists(labels, outputs):
    """(references, hypotheses) as id lists from label and predicted-id rows.

    Each reference is its label row up to the first EOS or PAD. Each hypothesis is the
    predicted row over the label's span (positions past the last non-pad label are
    predictions after the target ended, meaningless under teacher forcing), again cut at
    the first EOS or PAD.

        teacher_forced_token_lists([[5, 6, 1, 0]], [[5, 7, 9, 4]])
        # ([[5, 6]], [[5, 7, 9]])
    """
    references, hypotheses = [], []
    for label_row, output_row in zip(np.asarray(labels), np.asarray(outputs)):
        nonpad = np.flatnonzero(label_row != PAD_ID)
        span = int(nonpad[-1]) + 1 if nonpad.size else 0
        references.append(_cut_at_eos_or_pad(label_row.tolist()))
        hypotheses.append(_cut_at_eos_or_pad(output_row[:span].tolist()))
    return references, hypotheses


def _approx_bleu_numpy(labels, outputs):
    references, hypotheses = teacher_forced_token_lists(labels, outputs)
    return compute_bleu(references, hypotheses)


def _ids_2d(x):
    """[batch, length, 1, 1] (or any [batch, ...]) -> [batch, length*...]."""
    return tf.reshape(x, [tf.shape(x)[0], -1])


def bleu_score(predictions, labels, **unused_kwargs):
    """Approximate BLEU of teacher-forced predictions, as a (score, weight) metric pair.

    Args:
      predictions: logits [batch, length, 1, 1, vocab_size].
      labels: int ids [batch, length, 1, 1], 0-padded.

    Returns:
      (bleu of this batch as a float32 scalar in [0, 1], 1.0): each batch weighs the same.

        logits = tf.one_hot([[[[5]], [[6]], [[1]]]], 8)   # predicts 5 6 EOS
        bleu_score(logits, tf.constant([[[[5]], [[6]], [[1]]]]))   # (1.0, 1.0)
    """
    del unused_kwargs
    outputs = _ids_2d(tf.cast(tf.argmax(predictions, axis=-1), tf.int32))
    labels = _ids_2d(tf.cast(labels, tf.int32))

    def batch_bleu(labels_value, outputs_value):
        return _approx_bleu_numpy(labels_value.numpy(), outputs_value.numpy())

    bleu = tf.py_function(batch_bleu, [labels, outputs], tf.float32, name="approx_bleu")
    bleu.set_shape([])
    return bleu, tf.constant(1.0)


# --------------------------------------------------------------------------- tokenization
class UnicodeRegex:
    """Regexes for Unicode punctuation (category P*) and symbols (S*), as mteval-v14 uses.

        UnicodeRegex().symbol_re.sub(r" \\1 ", "5$")   # "5 $ "
    """

    def __init__(self):
        punctuation = self.property_chars("P")
        self.nondigit_punct_re = re.compile(r"([^\d])([" + punctuation + r"])")
        self.punct_nondigit_re = re.compile(r"([" + punctuation + r"])([^\d])")
        self.symbol_re = re.compile("([" + self.property_chars("S") + "])")

    @staticmethod
    def property_chars(prefix):
        """Every character whose Unicode category starts with `prefix`, regex-escaped."""
        return _property_chars(prefix)


@functools.lru_cache(maxsize=None)
def _property_chars(prefix):
    # One scan of all code points (about a second); cached so it happens once per process.
    # Escaped, so "]", "\\", "^" and "-" cannot break the character class.
    return "".join(re.escape(chr(x)) for x in range(sys.maxunicode)
                   if unicodedata.category(chr(x)).startswith(prefix))


@functools.lru_cache(maxsize=1)
def _unicode_regex():
    # Built on first use, not at import: importing the metrics costs nothing.
    return UnicodeRegex()


def bleu_tokenize(string):
    """Tokenize one line as mteval-v14's international tokenization (`--international`).

    Punctuation is split off unless it sits between digits (thousand and decimal
    separators stay); symbols are always split off. As in mteval, punctuation between a
    digit and the end of the line stays attached ("1990." and "20)" are one token).

        bleu_tokenize("Hello, world! 1,000.5 (€20) each.")
        # ['Hello', ',', 'world', '!', '1,000.5', '(', '€', '20', ')', 'each', '.']
    """
    uregex = _unicode_regex()
    string = uregex.nondigit_punct_re.sub(r"\1 \2 ", string)
    string = uregex.punct_nondigit_re.sub(r" \1 \2", string)
    string = uregex.symbol_re.sub(r" \1 ", string)
    return string.split()


def _read_lines(filename):
    with tf.io.gfile.GFile(filename, "rb") as f:
        text = f.read().decode("utf-8")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()  # the final newline ends the last line; it does not start another
    return lines


def bleu_wrapper(ref_filename, hyp_filename, case_sensitive=False):
    """BLEU (0..1) of a hypothesis file against a reference file, one sentence per line.

    Lines are lowercased unless `case_sensitive`, tokenized with `bleu_tokenize` and
    scored with `compute_bleu`. A trailing newline in either file does not count as a line.

        bleu_wrapper("ref.de", "hyp.de")   # e.g. 0.2731 (t2t-bleu prints 27.31)
    """
    ref_lines = _read_lines(ref_filename)
    hyp_lines = _read_lines(hyp_filename)
    if len(ref_lines) != len(hyp_lines):
        raise ValueError("bleu_wrapper: reference %s has %d lines but hypothesis %s has %d; "
                         "give one hypothesis line per reference line" %
                         (ref_filename, len(ref_lines), hyp_filename, len(hyp_lines)))
    if not case_sensitive:
        ref_lines = [line.lower() for line in ref_lines]
        hyp_lines = [line.lower() for line in hyp_lines]
    ref_tokens = [bleu_tokenize(line) for line in ref_lines]
    hyp_tokens = [bleu_tokenize(line) for line in hyp_lines]
    return compute_bleu(ref_tokens, hyp_tokens)


def sacrebleu_corpus_score(hypotheses, references, lowercase=False, tokenize="13a"):
    """Standard, comparable BLEU with sacrebleu: (score in 0..100, signature string).

    Args:
      hypotheses: list of detokenized hypothesis strings.
      references: list of reference strings (one per hypothesis), or a list of such
        lists for several references per hypothesis.
      lowercase: score case-insensitively.
      tokenize: sacrebleu tokenizer name ("13a", "intl", "none", "zh", "char", ...).

        sacrebleu_corpus_score(["the cat sat on the mat"], ["the cat sat on the mat"])
        # (100.0, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0")
    """
    from sacrebleu.metrics import BLEU  # imported on use: only decoding needs it

    hypotheses = list(hypotheses)
    references = list(references)
    if references and isinstance(references[0], str):
        references = [references]
    for stream in references:
        if len(stream) != len(hypotheses):
            raise ValueError("sacrebleu_corpus_score: %d hypotheses but a reference set of %d "
                             "lines; give one reference per hypothesis" %
                             (len(hypotheses), len(stream)))
    try:
        bleu = BLEU(lowercase=lowercase, tokenize=tokenize)
    except (KeyError, ValueError, RuntimeError) as error:  # unknown tokenizer name
        raise ValueError("sacrebleu_corpus_score: bad tokenize=%r (%s); use e.g. '13a', "
                         "'intl', 'none'" % (tokenize, error)) from None
    score = bleu.corpus_score(hypotheses, references)
    return float(score.score), str(bleu.get_signature())


# --------------------------------------------------------------------------- step files
StepFile = collections.namedtuple("StepFile", "filename mtime ctime steps")


def _try_twice_tf_glob(pattern):
    """tf.io.gfile.glob, retried once on NotFoundError.

    The glob can fail when a matching temporary file (e.g. a checkpoint being written)
    disappears mid-listing; Python's glob has no such race but no gs:// support.
    """
    try:
        return tf.io.gfile.glob(pattern)
    except tf.errors.NotFoundError:
        return tf.io.gfile.glob(pattern)


def _file_times(filename):
    """(mtime, ctime) in seconds; remote file systems report the mtime for both."""
    if "://" not in filename:
        return os.path.getmtime(filename), os.path.getctime(filename)
    mtime = tf.io.gfile.stat(filename).mtime_nsec / 1e9
    return mtime, mtime


def _read_stepfiles_list(path_prefix, path_suffix=".index", min_steps=0):
    """StepFiles matching `<path_prefix>*-<steps><path_suffix>`, most steps first.

        _read_stepfiles_list("train/model.ckpt")
        # [StepFile("train/model.ckpt-2000", mtime, ctime, 2000), ...("-1000", ..., 1000)]
    """
    stepfiles = []
    for filename in _try_twice_tf_glob(path_prefix + "*-[0-9]*" + path_suffix):
        basename = filename[:-len(path_suffix)] if path_suffix else filename
        try:
            steps = int(basename.rsplit("-")[-1])
        except ValueError:  # the -[0-9]* part is not an integer
            continue
        if steps < min_steps:
            continue
        try:
            mtime, ctime = _file_times(filename)
        except (OSError, tf.errors.NotFoundError):
            logging.info("%s was deleted, so skipping it", filename)
            continue
        stepfiles.append(StepFile(basename, mtime, ctime, steps))
    return sorted(stepfiles, key=lambda x: -x.steps)


def stepfiles_iterator(path_prefix, wait_minutes=0, min_steps=0, path_suffix=".index",
                       sleep_sec=10):
    """Yield StepFiles (checkpoints, ...) oldest step first, waiting for new ones.

    Files match `path_prefix + "*-[0-9]*" + path_suffix`; a directory prefix gets a
    trailing separator. Every file present is yielded (none is skipped), then the
    iterator waits up to `wait_minutes` after the last file's ctime for one with more
    steps, polling every `sleep_sec` seconds; it ends when none comes. It is up to the
    caller to check that a yielded file still exists (old checkpoints get deleted).

        for stepfile in stepfiles_iterator("train/", wait_minutes=30):
            evaluate(stepfile.filename)    # "train/model.ckpt-1000", then "-2000", ...
    """
    if not path_prefix.endswith(os.sep) and tf.io.gfile.isdir(path_prefix):
        path_prefix += os.sep  # "D*-[0-9]*" would not match "D/x-1"
    stepfiles = _read_stepfiles_list(path_prefix, path_suffix, min_steps)
    logging.info("Found %d files with steps: %s", len(stepfiles),
                 ", ".join(str(x.steps) for x in reversed(stepfiles)))
    exit_time = time.time() + wait_minutes * 60
    while True:
        if not stepfiles and wait_minutes:
            logging.info("Waiting till %s if a new file matching %s*-[0-9]*%s appears",
                         time.asctime(time.localtime(exit_time)), path_prefix, path_suffix)
            while True:
                stepfiles = _read_stepfiles_list(path_prefix, path_suffix, min_steps)
                if stepfiles or time.time() > exit_time:
                    break
                time.sleep(sleep_sec)
        if not stepfiles:
            return
        stepfile = stepfiles.pop()
        exit_time = stepfile.ctime + wait_minutes * 60
        min_steps = stepfile.steps + 1
        yield stepfile
