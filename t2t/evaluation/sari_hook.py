"""SARI, the text-simplification score (Xu et al., TACL 2016), on id sequences.

SARI compares a system output with its source and one or more references, n-gram order by
order (1..4), and averages three parts: n-grams rightly *added* (F1), rightly *kept* (F1)
and rightly *deleted* (precision only, beta=0, as in the paper). As T2T's sari_hook:
  * 0/0 counts as 1, so an output that matches its target exactly scores 1.0;
  * the deletion part uses the fix of cocoxu/simplification issue 6;
  * each n-gram counts once per sentence (sets, not multisets); with several references,
    an n-gram's target weight is the share of non-empty references holding it;
  * id 0 (padding) is dropped before counting.

    get_sari_score([1, 2, 3], [1, 2, 3], [[1, 2, 3]], max_gram_size=1)
    # (1.0, 1.0, 1.0, 1.0): sari, keep, add, delete
    get_sari_score([1, 2, 3], [1, 2], [[1, 3]], max_gram_size=1)
    # keep 0.5 (kept {1, 2}; only 1 should stay), add 1.0 (nothing to add, nothing added),
    # delete 0.0 (deleted {3}, which should have stayed): sari 0.5

`sari_score(predictions, labels, features)` is the `approx_sari_score` eval metric: argmax
ids of the logits against the single label sequence, per example, without decoding
subwords (hence "approx"). It returns ([batch] scores, weight 1.0).
"""
import collections

import numpy as np
import tensorflow as tf

# The paper uses only the precision of deleted n-grams; 1 would weigh recall as much.
BETA_FOR_SARI_DELETION_F_MEASURE = 0


def _get_ngram_counter(ids, n):
    """Counter of the distinct n-grams of `ids` (id 0 dropped), each with count 1.

        _get_ngram_counter([5, 6, 5, 6, 0], 2)   # Counter({(5, 6): 1, (6, 5): 1})
    """
    ids = [int(token) for token in ids if token != 0]
    return collections.Counter({gram: 1 for gram in
                                (tuple(ids[i:i + n]) for i in range(len(ids) + 1 - n))})


def _get_fbeta_score(true_positives, selected, relevant, beta=1):
    """F-beta with 0/0 = 1 for precision and recall; beta=0 is precision alone."""
    precision = true_positives / selected if selected > 0 else 1
    if beta == 0:
        return precision
    recall = true_positives / relevant if relevant > 0 else 1
    if precision > 0 and recall > 0:
        beta2 = beta * beta
        return (1 + beta2) * precision * recall / (beta2 * precision + recall)
    return 0


def _total(counter):
    return sum(counter.values())


def get_addition_score(source_counts, prediction_counts, target_counts):
    """F1 of the n-grams the prediction adds (not in the source) against those to add."""
    added = prediction_counts - source_counts
    return _get_fbeta_score(_total(added & target_counts), _total(added),
                            _total(target_counts - source_counts))


def get_keep_score(source_counts, prediction_counts, target_counts):
    """F1 of the source n-grams the prediction keeps against those the targets keep."""
    kept = source_counts & prediction_counts
    to_keep = source_counts & target_counts
    return _get_fbeta_score(_total(kept & to_keep), _total(kept), _total(to_keep))


def get_deletion_score(source_counts, prediction_counts, target_counts, beta=0):
    """F-beta (default: precision) of the source n-grams the prediction deletes."""
    deleted = source_counts - prediction_counts
    to_delete = source_counts - target_counts
    return _get_fbeta_score(_total(deleted & to_delete), _total(deleted), _total(to_delete),
                            beta=beta)


def get_sari_score(source_ids, prediction_ids, list_of_targets, max_gram_size=4,
                   beta_for_deletion=0):
    """(sari, keep, addition, deletion) of one prediction against one or more targets."""
    keep, add, delete = [], [], []
    for n in range(1, max_gram_size + 1):
        source_counts = _get_ngram_counter(source_ids, n)
        prediction_counts = _get_ngram_counter(prediction_ids, n)
        weighted = collections.Counter()
        num_nonempty = 0
        for target_ids in list_of_targets:
            counts = _get_ngram_counter(target_ids, n)
            if counts:
                weighted += counts
                num_nonempty += 1
        for gram in weighted:
            weighted[gram] /= num_nonempty
        target_counts = collections.Counter({gram: 1 for gram in weighted})
        keep.append(get_keep_score(source_counts, prediction_counts, weighted))
        delete.append(get_deletion_score(source_counts, prediction_counts, weighted,
                                         beta_for_deletion))
        add.append(get_addition_score(source_counts, prediction_counts, target_counts))
    avg_keep = sum(keep) / max_gram_size
    avg_add = sum(add) / max_gram_size
    avg_delete = sum(delete) / max_gram_size
    return (avg_keep + avg_add + avg_delete) / 3.0, avg_keep, avg_add, avg_delete


def get_sari(source_ids, prediction_ids, target_ids, max_gram_size=4):
    """Per-example SARI of int tensors: sources and predictions [batch, length], targets
    [batch, num_targets, length]. Returns four float64 [batch] tensors: sari, keep, add,
    delete."""

    def batch_sari(sources, predictions, targets):
        rows = [get_sari_score(s, p, t, max_gram_size, BETA_FOR_SARI_DELETION_F_MEASURE)
                for s, p, t in zip(sources, predictions, targets)]
        columns = np.asarray(rows, dtype=np.float64).reshape([-1, 4])
        return tuple(columns[:, i] for i in range(4))

    results = tf.numpy_function(batch_sari, [source_ids, prediction_ids, target_ids],
                                [tf.float64] * 4)
    for result in results:
        result.set_shape([None])
    return tuple(results)


def sari_score(predictions, labels, features, **unused_kwargs):
    """The approx_sari_score metric: ([batch] SARI of argmax ids vs labels, 1.0).

    Args:
      predictions: logits [batch, length, 1, 1, vocab].
      labels: target ids [batch, length, 1, 1].
      features: needs "inputs" [batch, length, 1, 1], the source.
    """
    if "inputs" not in features:
        raise ValueError("approx_sari_score needs the 'inputs' feature (the source); it "
                         "only applies to problems with inputs")
    inputs = tf.squeeze(features["inputs"], axis=[-1, -2])
    outputs = tf.cast(tf.argmax(predictions, axis=-1), tf.int32)
    outputs = tf.squeeze(outputs, axis=[-1, -2])
    labels = tf.expand_dims(tf.squeeze(labels, axis=[-1, -2]), axis=1)
    score, _, _, _ = get_sari(tf.cast(inputs, tf.int32), outputs, tf.cast(labels, tf.int32))
    return tf.cast(score, tf.float32), tf.constant(1.0)
