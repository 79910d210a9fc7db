"""rouge: LCS, ROUGE-L and ROUGE-2 values on small examples, and the eval metrics."""
import functools

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t.evaluation import rouge

v1 = tf.compat.v1


def t2t_f_lcs(llcs, m, n):
    """T2T's ROUGE-L F written out: beta = precision / recall."""
    recall, precision = llcs / m, llcs / n
    beta = precision / recall
    return (1 + beta ** 2) * recall * precision / (recall + beta ** 2 * precision)


def test_len_lcs():
    assert rouge._len_lcs("abcbdab", "bdcaba") == 4
    assert rouge._len_lcs([1, 2, 3], []) == 0
    assert rouge._len_lcs([1, 2, 3], [3, 2, 1]) == 1
    assert rouge._len_lcs(["the", "cat", "sat"], ["the", "cat", "sat"]) == 3


def lcs_by_recursion(x, y):
    @functools.lru_cache(maxsize=None)
    def lcs(i, j):
        if i == len(x) or j == len(y):
            return 0
        if x[i] == y[j]:
            return 1 + lcs(i + 1, j + 1)
        return max(lcs(i + 1, j), lcs(i, j + 1))
    return lcs(0, 0)


SENTENCE = st.lists(st.integers(2, 6), max_size=10)


@settings(max_examples=100, deadline=None)
@given(SENTENCE, SENTENCE)
def test_len_lcs_matches_the_recursive_definition(x, y):
    assert rouge._len_lcs(x, y) == lcs_by_recursion(tuple(x), tuple(y)) == rouge._len_lcs(y, x)


def test_rouge_l_sentence_level_values():
    # LCS("a c e", "a b c d") = 2: r = 1/2, p = 2/3.
    value = rouge.rouge_l_sentence_level([["a", "c", "e"]], [["a", "b", "c", "d"]])
    assert value == pytest.approx(t2t_f_lcs(2, 4, 3), rel=1e-6)
    assert value == pytest.approx(0.54945, abs=1e-5)
    assert isinstance(value, np.float32)
    # Mean over sentence pairs; no common token gives 0.
    value = rouge.rouge_l_sentence_level([["a", "c", "e"], ["x"]], [["a", "b", "c", "d"], ["y"]])
    assert value == pytest.approx(t2t_f_lcs(2, 4, 3) / 2, rel=1e-6)


def test_rouge_l_empty_sentences_score_zero():
    assert rouge.rouge_l_sentence_level([[]], [["a"]]) == 0.0
    assert rouge.rouge_l_sentence_level([["a"]], [[]]) == 0.0
    assert rouge.rouge_l_sentence_level([], []) == 0.0


def test_rouge_n_values():
    # Bigrams {ab, bc} vs {ab, bd}: p = r = 1/2.
    assert rouge.rouge_n([["a", "b", "c"]], [["a", "b", "d"]]) == pytest.approx(0.5)
    # Distinct n-grams: "a a a" has the one bigram "a a", found in the reference.
    assert rouge.rouge_n([["a", "a", "a"]], [["a", "a", "b"]]) == pytest.approx(2 / 3)
    # Unigrams: p = 2/3, r = 2/4 -> F1 = 4/7.
    assert rouge.rouge_n([[1, 2, 9]], [[1, 2, 3, 4]], n=1) == pytest.approx(4 / 7)
    # A one-token candidate has no bigram: score 0, as in T2T.
    assert rouge.rouge_n([[1]], [[1, 2]]) == 0.0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(2, 9), min_size=2, max_size=12), min_size=1, max_size=5))
def test_identical_sentences_score_one(sentences):
    assert rouge.rouge_l_sentence_level(sentences, sentences) == pytest.approx(1.0, abs=1e-6)
    assert rouge.rouge_n(sentences, sentences, n=2) == pytest.approx(1.0, abs=1e-6)


@settings(max_examples=100, deadline=None)
@given(SENTENCE, SENTENCE)
def test_scores_are_in_unit_interval(candidate, reference):
    for value in (rouge.rouge_l_sentence_level([candidate], [reference]),
                  rouge.rouge_n([candidate], [reference], n=2)):
        assert 0.0 <= value <= 1.0 + 1e-6


def run_metric(metric_fn, predicted_ids, label_ids, vocab_size=12):
    logits = np.eye(vocab_size, dtype=np.float32)[np.asarray(predicted_ids)]
    labels = np.asarray(label_ids, np.int32)
    with tf.Graph().as_default():
        score, weight = metric_fn(logits[:, :, None, None, :], labels[:, :, None, None])
        with v1.Session() as sess:
            return sess.run([score, weight])


def test_rouge_eval_metrics_strip_eos_and_padding():
    labels = [[5, 6, 7, 8, 1, 0], [4, 9, 2, 1, 0, 0]]
    predicted = [[5, 6, 7, 8, 1, 11], [4, 9, 2, 1, 3, 3]]
    assert run_metric(rouge.rouge_l_fscore, predicted, labels) == [1.0, 1.0]
    assert run_metric(rouge.rouge_2_fscore, predicted, labels) == [1.0, 1.0]

    predicted = [[5, 7, 6, 8, 1, 11], [4, 9, 10, 1, 3, 3]]
    value, weight = run_metric(rouge.rouge_l_fscore, predicted, labels)
    expected = (t2t_f_lcs(3, 4, 4) + t2t_f_lcs(2, 3, 3)) / 2
    assert value == pytest.approx(expected, rel=1e-5) and weight == 1.0
    value, _ = run_metric(rouge.rouge_2_fscore, predicted, labels)
    # Row 0 bigrams {57, 76, 68} vs {56, 67, 78}: none; row 1 {49, 9 10} vs {49, 92}: p=r=1/2.
    assert value == pytest.approx(0.25, rel=1e-5)
