"""SARI against hand-computed values (Xu et al. 2016 with T2T's conventions)."""
import collections

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t.evaluation import sari_hook


def test_ngram_counter_counts_each_distinct_ngram_once_without_padding():
    assert sari_hook._get_ngram_counter([5, 6, 5, 6, 0, 0], 2) == collections.Counter(
        {(5, 6): 1, (6, 5): 1})
    assert sari_hook._get_ngram_counter([5, 0], 2) == collections.Counter()


def test_unigrams_by_hand():
    # source {1,2,3}, prediction {1,2}, target {1,3}:
    #   keep:   kept {1,2}, should keep {1,3}, right {1}: P=1/2, R=1/2 -> F1 0.5
    #   add:    added {}, should add {}: 0/0 -> 1
    #   delete: deleted {3}, should delete {2}: precision 0/1 -> 0
    assert sari_hook.get_sari_score([1, 2, 3], [1, 2], [[1, 3]], max_gram_size=1) == (
        pytest.approx(0.5), 0.5, 1.0, 0.0)


def test_unigrams_with_an_addition_by_hand():
    # source {1,2}, prediction {1,4,5}, target {1,4}:
    #   keep:   kept {1}, should keep {1}: 1
    #   add:    added {4,5}, should add {4}, right {4}: P=1/2, R=1 -> F1 2/3
    #   delete: deleted {2}, should delete {2}: 1
    sari, keep, add, delete = sari_hook.get_sari_score([1, 2], [1, 4, 5], [[1, 4]], 1)
    assert (keep, add, delete) == (1.0, pytest.approx(2 / 3), 1.0)
    assert sari == pytest.approx((1 + 2 / 3 + 1) / 3)


def test_bigrams_and_two_references_by_hand():
    # n=1: source {1,2,3}, prediction {1,3}; targets {1,3} and {1,2}: weights 1:1, 3:.5, 2:.5
    #   keep: kept {1,3}; source & weighted = {1:1, 2:.5, 3:.5} (total 2);
    #         kept & that = {1:1, 3:.5} (1.5): P = 1.5/2, R = 1.5/2 -> F1 0.75
    #   add: added {}, target - source {} -> 1
    #   delete: deleted {2}; source - weighted = {2:.5, 3:.5}; right = min(1, .5) = .5 -> P .5
    # n=2: source {12, 23}, prediction {13}; targets {13}, {12}: weights 13:.5, 12:.5
    #   keep: kept {} -> P 0/0=1; should keep {12:.5} -> R 0/.5 = 0 -> F1 0
    #   add: added {13}; targets (count 1) {13, 12} - source = {13}; right {13}: P 1, R 1 -> 1
    #   delete: deleted {12, 23}; source - weighted = {12:.5, 23:1}; right 1.5 of 2 -> .75
    sari, keep, add, delete = sari_hook.get_sari_score([1, 2, 3], [1, 3],
                                                       [[1, 3], [1, 2]], max_gram_size=2)
    assert keep == pytest.approx((0.75 + 0) / 2)
    assert add == pytest.approx((1 + 1) / 2)
    assert delete == pytest.approx((0.5 + 0.75) / 2)
    assert sari == pytest.approx((keep + add + delete) / 3)


def test_empty_references_are_ignored_in_the_weights():
    with_empty = sari_hook.get_sari_score([1, 2], [1], [[1], [0, 0]], 1)
    assert with_empty == sari_hook.get_sari_score([1, 2], [1], [[1]], 1)


@settings(max_examples=40, deadline=None)
@given(ids=st.lists(st.integers(1, 6), min_size=1, max_size=8))
def test_an_exact_match_scores_one(ids):
    assert sari_hook.get_sari_score(ids, ids, [ids])[0] == pytest.approx(1.0)


def test_get_sari_runs_per_example_in_the_graph():
    sources = tf.constant([[1, 2, 3], [1, 2, 0]])
    predictions = tf.constant([[1, 2, 0], [1, 4, 5]])
    targets = tf.constant([[[1, 3, 0]], [[1, 4, 0]]])
    sari, keep, add, delete = sari_hook.get_sari(sources, predictions, targets,
                                                 max_gram_size=1)
    np.testing.assert_allclose(sari.numpy(), [0.5, (1 + 2 / 3 + 1) / 3])
    np.testing.assert_allclose(keep.numpy(), [0.5, 1.0])
    np.testing.assert_allclose(add.numpy(), [1.0, 2 / 3])
    np.testing.assert_allclose(delete.numpy(), [0.0, 1.0])
