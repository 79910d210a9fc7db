"""ROUGE-2 and ROUGE-L F-scores on token lists, and as approximate eval metrics (T2T's).

Sentence-level scores averaged over a batch:

    rouge_l_sentence_level([["a", "c", "e"]], [["a", "b", "c", "d"]])
    # LCS "a c" = 2, recall r = 2/4, precision p = 2/3, beta = p / r = 4/3:
    # (1 + beta^2) r p / (r + beta^2 p) = 0.5495
    rouge_n([["a", "b", "c"]], [["a", "b", "d"]], n=2)
    # bigrams {ab, bc} vs {ab, bd}: p = r = 1/2 -> F1 = 0.5

`rouge_l_fscore(logits, labels)` / `rouge_2_fscore(logits, labels)` are the
`rouge_L_fscore` / `rouge_2_fscore` eval metrics: they score the argmax ids of
teacher-forced logits against the label ids, each cut at EOS/padding as approx BLEU does.
"""
import numpy as np
import tensorflow as tf

from t2t.evaluation.bleu_hook import teacher_forced_token_lists


# --------------------------------------------------------------------------- ROUGE-L
def _len_lcs(x, y):
    """Length of the longest common subsequence of two sequences (O(len x * len y)).

        _len_lcs("abcbdab", "bdcaba")   # 4 ("bcba")
    """
    if len(x) < len(y):
        x, y = y, x  # keep the DP row as short as possible
    previous = [0] * (len(y) + 1)
    for x_item in x:
        current = [0]
        for j, y_item in enumerate(y):
            if x_item == y_item:
                current.append(previous[j] + 1)
            else:
                current.append(max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _f_lcs(llcs, m, n):
    """T2T's LCS-based F-measure with beta = precision / recall.

    Args:
      llcs: length of the LCS.
      m: number of tokens in the reference.
      n: number of tokens in the candidate.

        _f_lcs(2, 4, 3)   # r = 0.5, p = 0.667, beta = 1.333 -> 0.5495
    """
    if m == 0 or n == 0:
        return 0.0  # an empty side shares nothing (T2T divided by zero)
    r_lcs = llcs / m
    p_lcs = llcs / n
    beta = p_lcs / (r_lcs + 1e-12)
    num = (1 + beta ** 2) * r_lcs * p_lcs
    denom = r_lcs + (beta ** 2) * p_lcs
    return num / (denom + 1e-12)


def rouge_l_sentence_level(eval_sentences, ref_sentences):
    """Mean sentence-level ROUGE-L F over sentence pairs, as np.float32.

    Args:
      eval_sentences: candidate sentences, each a sequence of tokens (or ids).
      ref_sentences: reference sentences, one per candidate.

        rouge_l_sentence_level([[1, 2, 3]], [[1, 2, 3]])   # 1.0
    """
    f1_scores = [_f_lcs(_len_lcs(candidate, reference), len(reference), len(candidate))
                 for candidate, reference in zip(eval_sentences, ref_sentences)]
    if not f1_scores:
        return np.float32(0.0)
    return np.mean(f1_scores, dtype=np.float32)


# --------------------------------------------------------------------------- ROUGE-N
def _get_ngrams(n, text):
    """The set of n-grams (tuples) of `text`.

        _get_ngrams(2, ["a", "b", "a", "b"])   # {("a", "b"), ("b", "a")}
    """
    return {tuple(text[i:i + n]) for i in range(len(text) - n + 1)}


def rouge_n(eval_sentences, ref_sentences, n=2):
    """Mean sentence-level ROUGE-N F1 over sentence pairs (n-gram sets), as np.float32.

    Precision and recall count distinct n-grams; a side without n-grams has precision
    (or recall) 0, as in T2T.

        rouge_n([[1, 2, 3, 4]], [[1, 2, 3, 5]], n=2)   # p = r = 2/3 -> 0.6667
    """
    f1_scores = []
    for candidate, reference in zip(eval_sentences, ref_sentences):
        eval_ngrams = _get_ngrams(n, candidate)
        ref_ngrams = _get_ngrams(n, reference)
        overlapping_count = len(eval_ngrams & ref_ngrams)
        precision = overlapping_count / len(eval_ngrams) if eval_ngrams else 0.0
        recall = overlapping_count / len(ref_ngrams) if ref_ngrams else 0.0
        f1_scores.append(2.0 * precision * recall / (precision + recall + 1e-8))
    if not f1_scores:
        return np.float32(0.0)
    return np.mean(f1_scores, dtype=np.float32)


# --------------------------------------------------------------------------- eval metrics
def _teacher_forced_metric(score_fn, predictions, labels, name):
    """(score_fn(hypotheses, references) on this batch, 1.0) through tf.py_function."""
    outputs = tf.cast(tf.argmax(predictions, axis=-1), tf.int32)
    outputs = tf.reshape(outputs, [tf.shape(outputs)[0], -1])
    labels = tf.cast(labels, tf.int32)
    labels = tf.reshape(labels, [tf.shape(labels)[0], -1])

    def batch_score(labels_value, outputs_value):
        references, hypotheses = teacher_forced_token_lists(labels_value.numpy(),
                                                            outputs_value.numpy())
        return score_fn(hypotheses, references)

    score = tf.py_function(batch_score, [labels, outputs], tf.float32, name=name)
    score.set_shape([])
    return score, tf.constant(1.0)


def rouge_l_fscore(predictions, labels, **unused_kwargs):
    """ROUGE-L F of teacher-forced predictions: (batch mean as a float32 scalar, 1.0).

    Args:
      predictions: logits [batch, length, 1, 1, vocab_size].
      labels: int ids [batch, length, 1, 1], 0-padded.

        rouge_l_fscore(tf.one_hot([[[[4]], [[5]]]], 8), tf.constant([[[[4]], [[5]]]]))
        # (1.0, 1.0)
    """
    del unused_kwargs
    return _teacher_forced_metric(rouge_l_sentence_level, predictions, labels, "rouge_l")


def rouge_2_fscore(predictions, labels, **unused_kwargs):
    """ROUGE-2 F1 of teacher-forced predictions: (batch mean as a float32 scalar, 1.0).

    Args:
      predictions: logits [batch, length, 1, 1, vocab_size].
      labels: int ids [batch, length, 1, 1], 0-padded.
    """
    del unused_kwargs
    return _teacher_forced_metric(rouge_n, predictions, labels, "rouge_2")
