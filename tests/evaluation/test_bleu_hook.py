"""bleu_hook: corpus BLEU against sacrebleu, mteval tokenization, files, the approx-BLEU metric."""
import os
import threading
import time

import numpy as np
import pytest
import sacrebleu
import tensorflow as tf
from hypothesis import assume, given, settings, strategies as st
from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International

from t2t.evaluation import bleu_hook

v1 = tf.compat.v1


def sacrebleu_on_tokens(references, translations):
    """sacrebleu's BLEU (0..1) of pre-tokenized sentences, with mteval's "exp" smoothing."""
    bleu = BLEU(tokenize="none", smooth_method="exp")
    return bleu.corpus_score([" ".join(t) for t in translations],
                             [[" ".join(r) for r in references]]).score / 100


# --------------------------------------------------------------------------- compute_bleu
def test_perfect_match_is_one():
    corpus = [["the", "cat", "sat", "on", "the", "mat"], ["a", "b", "c", "d"]]
    assert bleu_hook.compute_bleu(corpus, corpus) == 1.0
    assert isinstance(bleu_hook.compute_bleu(corpus, corpus), np.float32)


def test_known_small_values():
    # (4/5 * 3/4 * 2/3 * 1/2) ** (1/4)
    value = bleu_hook.compute_bleu([[1, 2, 3, 4, 5]], [[1, 2, 3, 4, 6]])
    assert value == pytest.approx(0.2 ** 0.25, rel=1e-6)
    assert value == pytest.approx(sacrebleu_on_tokens([["1", "2", "3", "4", "5"]],
                                                      [["1", "2", "3", "4", "6"]]), rel=1e-6)
    # No 4-gram match: smoothed to 1 / (2 * 1) as mteval does.
    refs, hyps = [["the", "cat", "sat", "down"]], [["the", "cat", "sat", "up"]]
    assert bleu_hook.compute_bleu(refs, hyps) == pytest.approx(0.125 ** 0.25, rel=1e-6)
    assert bleu_hook.compute_bleu(refs, hyps) == pytest.approx(sacrebleu_on_tokens(refs, hyps),
                                                               rel=1e-6)


def test_brevity_penalty_and_max_order():
    refs = [["a", "b", "c", "d", "e", "f"]]
    hyps = [["a", "b", "c", "d"]]
    assert bleu_hook.compute_bleu(refs, hyps) == pytest.approx(np.exp(1 - 6 / 4), rel=1e-6)
    assert bleu_hook.compute_bleu(refs, hyps, use_bp=False) == 1.0
    # Unigrams only: 3 of 4 tokens match.
    assert bleu_hook.compute_bleu([["x", "y", "z", "w"]], [["x", "y", "z", "q"]],
                                  max_order=1) == pytest.approx(0.75)


def test_degenerate_corpora():
    assert bleu_hook.compute_bleu([], []) == 0.0
    assert bleu_hook.compute_bleu([["a", "b"]], [[]]) == 0.0
    # Short sentences: orders without candidates are skipped but still in the exponent (T2T).
    assert bleu_hook.compute_bleu([["a", "b"]], [["a", "b"]]) == 1.0


TOKENS = st.lists(st.sampled_from("abcdefg"), min_size=4, max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(TOKENS, TOKENS), min_size=1, max_size=6))
def test_matches_sacrebleu_exp_smoothing(pairs):
    references = [list(r) for r, _ in pairs]
    translations = [list(t) for _, t in pairs]
    # sacrebleu returns 0 outright when nothing matches; T2T smooths even that case.
    assume(any(set(r) & set(t) for r, t in zip(references, translations)))
    assert bleu_hook.compute_bleu(references, translations) == pytest.approx(
        sacrebleu_on_tokens(references, translations), rel=1e-5, abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(st.lists(TOKENS, min_size=1, max_size=6))
def test_bleu_of_a_corpus_against_itself_is_one(corpus):
    assert bleu_hook.compute_bleu(corpus, corpus) == pytest.approx(1.0, abs=1e-6)


# --------------------------------------------------------------------------- tokenization
def test_bleu_tokenize_splits_punctuation_as_mteval():
    assert bleu_hook.bleu_tokenize("Hello, world! It costs $3.50 each.") == [
        "Hello", ",", "world", "!", "It", "costs", "$", "3.50", "each", "."]
    # Separators between digits stay; a final dot after a number stays (mteval's quirk).
    assert bleu_hook.bleu_tokenize("1,000.5 in 1990.") == ["1,000.5", "in", "1990."]
    assert bleu_hook.bleu_tokenize("«Grüße» – 5€ (ok)") == [
        "«", "Grüße", "»", "–", "5", "€", "(", "ok", ")"]
    assert bleu_hook.bleu_tokenize("a-b [c]\\d") == ["a", "-", "b", "[", "c", "]", "\\", "d"]


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40))
def test_bleu_tokenize_agrees_with_sacrebleu_intl_on_ascii(text):
    assert bleu_hook.bleu_tokenize(text) == TokenizerV14International()(text).split()


def test_unicode_regex_property_chars():
    punctuation = bleu_hook.UnicodeRegex.property_chars("P")
    assert "\\-" in punctuation and "\\]" in punctuation  # escaped for a character class
    regex = bleu_hook.UnicodeRegex()
    assert regex.symbol_re.sub(r" \1 ", "5$+3") == "5 $  + 3"


# --------------------------------------------------------------------------- files
def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return str(path)


def test_bleu_wrapper_on_files(tmp_path):
    ref = write(tmp_path / "ref.txt", "The cat sat on the mat.\nHello, world!\n")
    hyp = write(tmp_path / "hyp.txt", "the cat sat on the mat.\nhello, world!")  # no final \n
    assert bleu_hook.bleu_wrapper(ref, hyp) == 1.0
    cased = bleu_hook.bleu_wrapper(ref, hyp, case_sensitive=True)
    expected = bleu_hook.compute_bleu(
        [bleu_hook.bleu_tokenize("The cat sat on the mat."), ["Hello", ",", "world", "!"]],
        [bleu_hook.bleu_tokenize("the cat sat on the mat."), ["hello", ",", "world", "!"]])
    assert cased == pytest.approx(expected) and cased < 1.0


def test_bleu_wrapper_line_count_mismatch(tmp_path):
    ref = write(tmp_path / "ref.txt", "a b c d\ne f g h\n")
    hyp = write(tmp_path / "hyp.txt", "a b c d\n")
    with pytest.raises(ValueError) as error:
        bleu_hook.bleu_wrapper(ref, hyp)
    assert "ref.txt has 2 lines but hypothesis" in str(error.value)
    assert "hyp.txt has 1" in str(error.value) and "\n" not in str(error.value)


def test_sacrebleu_corpus_score():
    hyps = ["The cat sat on the mat.", "Hello world"]
    score, signature = bleu_hook.sacrebleu_corpus_score(hyps, hyps)
    assert score == pytest.approx(100.0)
    assert "tok:13a" in signature and "case:mixed" in signature
    assert "version:%s" % sacrebleu.__version__ in signature
    refs = ["The cat is on the mat.", "Hello world"]
    score, _ = bleu_hook.sacrebleu_corpus_score(hyps, refs)
    assert score == pytest.approx(BLEU().corpus_score(hyps, [refs]).score)
    # Two reference sets, lowercased: the second set matches exactly.
    score, signature = bleu_hook.sacrebleu_corpus_score(
        hyps, [refs, [h.upper() for h in hyps]], lowercase=True)
    assert score == pytest.approx(100.0) and "nrefs:2" in signature and "case:lc" in signature
    with pytest.raises(ValueError, match="2 hypotheses but a reference set of 1 lines"):
        bleu_hook.sacrebleu_corpus_score(hyps, ["only one"])
    with pytest.raises(ValueError, match="bad tokenize='nope'"):
        bleu_hook.sacrebleu_corpus_score(hyps, hyps, tokenize="nope")


# --------------------------------------------------------------------------- step files
def make_checkpoints(folder, steps, suffix=".index"):
    for step in steps:
        write(os.path.join(folder, "model.ckpt-%s%s" % (step, suffix)), "")


def test_read_stepfiles_list(tmp_path):
    make_checkpoints(str(tmp_path), [100, 20, 3000])
    make_checkpoints(str(tmp_path), ["12x"])          # not an integer: skipped
    make_checkpoints(str(tmp_path), [500], suffix=".meta")
    prefix = str(tmp_path / "model.ckpt")
    stepfiles = bleu_hook._read_stepfiles_list(prefix)
    assert [s.steps for s in stepfiles] == [3000, 100, 20]
    assert stepfiles[0].filename == prefix + "-3000"
    assert stepfiles[0].mtime > 0 and stepfiles[0].ctime > 0
    assert [s.steps for s in bleu_hook._read_stepfiles_list(prefix, min_steps=100)] == [3000, 100]
    assert [s.steps for s in bleu_hook._read_stepfiles_list(prefix, ".meta")] == [500]


def test_stepfiles_iterator_yields_oldest_first_and_waits_for_new(tmp_path):
    folder = str(tmp_path)
    make_checkpoints(folder, [200, 100])
    # A directory prefix gets its separator; without waiting, only existing files come.
    assert [s.steps for s in bleu_hook.stepfiles_iterator(folder)] == [100, 200]
    assert [s.steps for s in bleu_hook.stepfiles_iterator(folder, min_steps=150)] == [200]

    def write_later():
        time.sleep(0.2)
        make_checkpoints(folder, [300])
    writer = threading.Thread(target=write_later)
    writer.start()
    seen = []
    # A generous wait (the machine may be busy); stop reading once the new file came.
    for stepfile in bleu_hook.stepfiles_iterator(folder, wait_minutes=2, min_steps=150,
                                                 sleep_sec=0.05):
        seen.append(stepfile.steps)
        if stepfile.steps == 300:
            break
    writer.join()
    assert seen == [200, 300]


def test_try_twice_tf_glob_retries_once(monkeypatch, tmp_path):
    calls = []
    real_glob = tf.io.gfile.glob

    def flaky_glob(pattern):
        calls.append(pattern)
        if len(calls) == 1:
            raise tf.errors.NotFoundError(None, None, "temporary file vanished")
        return real_glob(pattern)
    monkeypatch.setattr(tf.io.gfile, "glob", flaky_glob)
    make_checkpoints(str(tmp_path), [7])
    assert bleu_hook._try_twice_tf_glob(str(tmp_path / "*.index")) == [
        str(tmp_path / "model.ckpt-7.index")]
    assert len(calls) == 2


# --------------------------------------------------------------------------- approx BLEU
def run_bleu_score(predicted_ids, label_ids, vocab_size=12):
    logits = np.eye(vocab_size, dtype=np.float32)[np.asarray(predicted_ids)]
    labels = np.asarray(label_ids, np.int32)
    with tf.Graph().as_default():
        bleu, weight = bleu_hook.bleu_score(logits[:, :, None, None, :],
                                            labels[:, :, None, None])
        with v1.Session() as sess:
            return sess.run([bleu, weight])


def test_bleu_score_ignores_padding_and_what_follows_eos():
    labels = [[5, 6, 7, 8, 1, 0, 0], [4, 4, 9, 2, 3, 1, 0]]
    # Right up to EOS; garbage after it (and in padding) does not count.
    predicted = [[5, 6, 7, 8, 1, 3, 9], [4, 4, 9, 2, 3, 1, 11]]
    assert run_bleu_score(predicted, labels) == [1.0, 1.0]
    # Without an EOS the hypothesis runs to the label's length and no further.
    predicted = [[5, 6, 7, 8, 10, 3, 9], [4, 4, 9, 2, 3, 1, 11]]
    expected = bleu_hook.compute_bleu([[5, 6, 7, 8], [4, 4, 9, 2, 3]],
                                      [[5, 6, 7, 8, 10], [4, 4, 9, 2, 3]])
    value, weight = run_bleu_score(predicted, labels)
    assert value == pytest.approx(expected) and value < 1.0 and weight == 1.0


def test_teacher_forced_token_lists():
    assert bleu_hook.teacher_forced_token_lists([[5, 6, 1, 0]], [[5, 7, 9, 4]]) == (
        [[5, 6]], [[5, 7, 9]])
    assert bleu_hook.teacher_forced_token_lists([[0, 0]], [[3, 4]]) == ([[]], [[]])
