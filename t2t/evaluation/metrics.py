"""Evaluation metrics: T2T's metric functions, names and the EVAL metric ops built from them.

Every metric function takes model outputs and labels and returns `(scores, weights)`;
`tf.compat.v1.metrics.mean(scores, weights)` then averages over the whole evaluation, so a
metric is the weighted mean of its scores:

    logits = tf.math.log([[[[[0.1, 0.7, 0.2]]], [[[0.1, 0.2, 0.7]]], [[[0.8, 0.1, 0.1]]]]])
    labels = tf.constant([[[[1]], [[1]], [[0]]]])      # [1, 3, 1, 1], last position is padding
    scores, weights = padded_accuracy(logits, labels)
    # scores [[[[1.]], [[0.]], [[1.]]]], weights [[[[1.]], [[1.]], [[0.]]]] -> accuracy 0.5

`create_evaluation_metrics(problems, hparams)` turns each problem's `eval_metrics()` into
Estimator metric fns named `metrics-<problem>/<target>/<metric>`:

    fns = create_evaluation_metrics([registry.problem("algorithmic_reverse_binary40")], hp)
    value, update_op = fns["metrics-algorithmic_reverse_binary40/targets/accuracy"](
        logits, features, features["targets"])

Shapes (docs/conventions.md): symbol logits `[B, L, 1, 1, V]`, labels int32 `[B, L, 1, 1]`;
class labels `[B, 1, 1, 1]` with logits `[B, 1, 1, 1, V]`; real-valued predictions match
their labels (a trailing axis of size 1 is dropped).
"""
import inspect

import tensorflow as tf

from t2t.evaluation import bleu_hook
from t2t.evaluation import rouge
from t2t.layers import discretized_logistic
from t2t.layers import losses
from t2t.layers import shape_utils

_v1 = tf.compat.v1


class Metrics:
    """Names of the evaluation metrics (the keys of METRICS_FNS), as in T2T 1.15.7."""
    ACC = "accuracy"
    ACC_TOP5 = "accuracy_top5"
    ACC_PER_SEQ = "accuracy_per_sequence"
    ACC_MULTILABEL_MATCH3 = "accuracy_multilabel_match3"
    NEG_LOG_PERPLEXITY = "neg_log_perplexity"
    MASKED_NEG_LOG_PERPLEXITY = "masked_neg_log_perplexity"
    APPROX_BLEU = "approx_bleu_score"
    APPROX_SARI = "approx_sari_score"
    RMSE = "rmse"
    UNPADDED_MSE = "unpadded_mse"
    LOG_POISSON = "log_poisson"
    PEARSON = "pearson"
    R2 = "r_squared"
    ROUGE_2_F = "rouge_2_fscore"
    ROUGE_L_F = "rouge_L_fscore"
    EDIT_DISTANCE = "edit_distance"
    PREFIX_ACCURACY = "prefix_accuracy"
    WORD_ERROR_RATE = "word_error_rate"
    SET_PRECISION = "set_precision"
    SET_RECALL = "set_recall"
    SOFTMAX_CROSS_ENTROPY_ONE_HOT = "softmax_cross_entropy_one_hot"
    SIGMOID_ACCURACY = "sigmoid_accuracy"
    SIGMOID_ACCURACY_ONE_HOT = "sigmoid_accuracy_one_hot"
    SIGMOID_RECALL_ONE_HOT = "sigmoid_recall_one_hot"
    SIGMOID_PRECISION_ONE_HOT = "sigmoid_precision_one_hot"
    SIGMOID_CROSS_ENTROPY_ONE_HOT = "sigmoid_cross_entropy_one_hot"
    TWO_CLASS_ACCURACY = "two_class_accuracy"
    TWO_CLASS_LOG_LIKELIHOOD = "two_class_log_likelihood"
    ROC_AUC = "roc_auc"
    IMAGE_SUMMARY = "image_summary"
    DMOL_PERPLEXITY = "disc_mol_neg_log_perplexity"
    ABS_ERR = "mean_absolute_error"
    IMAGE_RMSE = "image_rmse"


# --------------------------------------------------------------------------- helpers
def _to_float(x):
    return tf.cast(x, tf.float32)


def _argmax_ids(logits):
    return tf.cast(tf.argmax(logits, axis=-1), tf.int32)


def _match_rank(predictions, labels):
    """(predictions, labels) as tensors, without the trailing size-1 axis real tops add.

        _match_rank(tf.zeros([2, 5, 1, 1, 1]), tf.zeros([2, 5, 1, 1]))   # both [2, 5, 1, 1]
    """
    predictions = tf.convert_to_tensor(predictions)
    labels = tf.convert_to_tensor(labels)
    if predictions.shape.rank == labels.shape.rank + 1 and predictions.shape[-1] == 1:
        predictions = tf.squeeze(predictions, axis=-1)
    return predictions, labels


def _pad(logits, labels):
    """common_layers.pad_with_zeros on tensors (numpy inputs are converted)."""
    return losses.pad_with_zeros(tf.convert_to_tensor(logits),
                                        tf.convert_to_tensor(labels))


def _safe_divide(numerator, denominator):
    """numerator / denominator, 0 when the denominator is 0 (a batch of pure padding)."""
    return tf.math.divide_no_nan(numerator, _to_float(denominator))


def _flat_rows(x):
    """[batch, ...] -> [batch, product of the rest]."""
    return tf.reshape(x, [shape_utils.shape_list(x)[0], -1])


def _mean_and_count(scores):
    """(mean of `scores`, number of scores): T2T's scalar value, weighted by the batch size.

    tf.compat.v1.metrics.mean(value, count) then sums value * count over the batches, so
    the evaluation's figure is the exact mean over every example (T2T's weight 1.0
    averaged the batch means).
    """
    return tf.reduce_mean(scores), tf.cast(tf.size(scores), scores.dtype)


def _require_weights_nonzero(weights_fn, metric):
    if weights_fn is not losses.weights_nonzero:
        raise ValueError("%s counts non-padding labels itself and only works with "
                         "weights_fn=common_layers.weights_nonzero, got %r" % (metric, weights_fn))


# --------------------------------------------------------------------------- regression
def padded_rmse(predictions, labels, weights_fn=losses.weights_all):
    """Root mean squared error of this batch over the weighted positions: (rmse, sum of weights).

        padded_rmse(tf.constant([[1.0, 2.0]]), tf.constant([[1.0, 4.0]]))   # (sqrt(2), 2.0)
    """
    predictions, labels = _match_rank(_to_float(predictions), _to_float(labels))
    predictions, labels = losses.pad_with_zeros(predictions, labels)
    weights = weights_fn(labels)
    total_weight = tf.reduce_sum(weights)
    squared_error = tf.square(predictions - labels)
    rmse = tf.sqrt(_safe_divide(tf.reduce_sum(squared_error * weights), total_weight))
    return rmse, total_weight


def unpadded_mse(predictions, labels, weights_fn=losses.weights_all):
    """Mean squared error of this batch (no length padding): (mse, sum of weights).

        unpadded_mse(tf.constant([[1.0, 2.0]]), tf.constant([[1.0, 4.0]]))   # (2.0, 2.0)
    """
    predictions, labels = _match_rank(_to_float(predictions), _to_float(labels))
    weights = weights_fn(labels)
    total_weight = tf.reduce_sum(weights)
    squared_error = tf.square(predictions - labels)
    return _safe_divide(tf.reduce_sum(squared_error * weights), total_weight), total_weight


def padded_mean_absolute_error(predictions, labels, weights_fn=losses.weights_all):
    """|prediction - label| per position, with the positions' weights.

        padded_mean_absolute_error(tf.constant([[1.0, 2.0]]), tf.constant([[1.0, 4.0]]))
        # ([[0., 2.]], [[1., 1.]]) -> mean absolute error 1.0
    """
    predictions, labels = _match_rank(_to_float(predictions), _to_float(labels))
    predictions, labels = losses.pad_with_zeros(predictions, labels)
    return tf.abs(predictions - labels), weights_fn(labels)


def abs_error(predictions, labels, weights_fn=None):
    """|prediction - target| per example for [B, 1, 1, 1]-style labels; every example weighs 1.

        abs_error(tf.constant([[2.0], [5.0]]), tf.constant([[[[1.0]]], [[[[1.0]]]]))
        # ([[1.], [4.]], ones) -> 2.5
    """
    del weights_fn  # every example counts
    targets = _to_float(labels)
    if targets.shape.rank == 4:
        targets = tf.squeeze(targets, axis=[2, 3])
    predictions = _to_float(predictions)
    if predictions.shape.rank != targets.shape.rank:
        predictions = tf.reshape(predictions, shape_utils.shape_list(targets))
    batch_abs_error = tf.abs(predictions - targets)
    return batch_abs_error, tf.ones_like(batch_abs_error)


def padded_log_poisson(predictions, labels, weights_fn=losses.weights_all):
    """Full log-Poisson loss of log-rate predictions per position, with the label weights.

        padded_log_poisson(tf.math.log([[2.0]]), tf.constant([[1.0]]))   # ([[2 - log 2]], 1s)
    """
    predictions, labels = _match_rank(_to_float(predictions), _to_float(labels))
    predictions, labels = losses.pad_with_zeros(predictions, labels)
    lp_loss = tf.nn.log_poisson_loss(labels, predictions, compute_full_loss=True)
    return lp_loss, weights_fn(labels)


def padded_variance_explained(predictions, labels, weights_fn=losses.weights_all):
    """R^2 = 1 - SS_res / SS_tot over the weighted positions: (r2, sum of weights).

        padded_variance_explained(tf.constant([[1.0, 2.0, 3.5]]), tf.constant([[1.0, 2.0, 3.0]]))
        # ybar = 2, SS_tot = 2, SS_res = 0.25 -> (0.875, 3.0)
    """
    predictions, labels = _match_rank(_to_float(predictions), _to_float(labels))
    predictions, labels = losses.pad_with_zeros(predictions, labels)
    weights = weights_fn(labels)
    total_weight = tf.reduce_sum(weights)
    y_bar = _safe_divide(tf.reduce_sum(weights * labels), total_weight)
    tot_ss = tf.reduce_sum(weights * tf.square(labels - y_bar))
    res_ss = tf.reduce_sum(weights * tf.square(labels - predictions))
    return 1.0 - res_ss / tot_ss, total_weight


def image_rmse(predictions, labels, weights_fn=losses.weights_all):
    """padded_rmse of pixel values: predictions with a last axis of 1, or logits to argmax."""
    predictions = tf.convert_to_tensor(predictions)
    if shape_utils.shape_list(predictions)[-1] == 1:
        predictions = tf.squeeze(predictions, axis=[-1])
    else:
        predictions = tf.argmax(predictions, axis=-1)
    return padded_rmse(predictions, labels, weights_fn)


def pearson_correlation_coefficient(predictions, labels, weights_fn=None):
    """Pearson r between predictions and labels over this batch: (r, 1.0).

    Evaluation (`create_evaluation_metrics`) accumulates the sums over all batches
    instead, so the reported value is the r of the whole evaluation set.

        pearson_correlation_coefficient(tf.constant([1.0, 2.0, 3.0]), tf.constant([2., 4., 6.]))
        # (1.0, 1.0)
    """
    del weights_fn
    predictions, labels = _match_rank(predictions, labels)
    x = tf.reshape(_to_float(predictions), [-1])
    y = tf.reshape(_to_float(labels), [-1])
    x_centered = x - tf.reduce_mean(x)
    y_centered = y - tf.reduce_mean(y)
    covariance = tf.reduce_sum(x_centered * y_centered)
    norms = tf.sqrt(tf.reduce_sum(tf.square(x_centered)) * tf.reduce_sum(tf.square(y_centered)))
    return _safe_divide(covariance, norms), tf.constant(1.0)


# --------------------------------------------------------------------------- symbols
def padded_accuracy_topk(predictions, labels, k, weights_fn=losses.weights_nonzero):
    """1.0 where the label is among the k highest logits, with the label weights.

        padded_accuracy_topk(tf.math.log([[[[[0.5, 0.3, 0.2]]]]]), tf.constant([[[[1]]]]), 2)
        # ([[[[1.]]]], [[[[1.]]]])
    """
    with tf.name_scope("padded_accuracy_topk"):
        padded_predictions, padded_labels = _pad(predictions, labels)
        weights = weights_fn(padded_labels)
        vocab_size = shape_utils.shape_list(padded_predictions)[-1]
        effective_k = min(k, vocab_size) if isinstance(vocab_size, int) else tf.minimum(
            k, vocab_size)
        _, outputs = tf.nn.top_k(padded_predictions, k=effective_k)
        padded_labels = tf.expand_dims(tf.cast(padded_labels, tf.int32), axis=-1)
        return tf.reduce_sum(_to_float(tf.equal(outputs, padded_labels)), axis=-1), weights


def padded_accuracy_top5(predictions, labels, weights_fn=losses.weights_nonzero):
    """padded_accuracy_topk with k = 5."""
    return padded_accuracy_topk(predictions, labels, 5, weights_fn)


def rounding_accuracy(predictions, labels, weights_fn=losses.weights_nonzero):
    """Accuracy for L1/L2-trained real outputs: predictions truncated to ints vs labels."""
    predictions, labels = _match_rank(predictions, labels)
    outputs = tf.cast(predictions, tf.int32)
    return _to_float(tf.equal(outputs, tf.cast(labels, tf.int32))), weights_fn(labels)


def padded_accuracy(predictions, labels, weights_fn=losses.weights_nonzero):
    """1.0 where argmax(logits) equals the label, with the label weights (0 at padding).

    Logits with a last axis of 1 are real outputs and go to `rounding_accuracy`.
    """
    if shape_utils.shape_list(predictions)[-1] == 1:
        return rounding_accuracy(predictions, labels, weights_fn=weights_fn)
    with tf.name_scope("padded_accuracy"):
        padded_predictions, padded_labels = _pad(predictions, labels)
        weights = weights_fn(padded_labels)
        outputs = _argmax_ids(padded_predictions)
        return _to_float(tf.equal(outputs, tf.cast(padded_labels, tf.int32))), weights


def rounding_sequence_accuracy(predictions, labels, weights_fn=losses.weights_nonzero):
    """Per-sequence accuracy for real outputs truncated to ints: ([batch], 1.0)."""
    predictions, labels = _match_rank(predictions, labels)
    outputs = tf.cast(predictions, tf.int32)
    weights = weights_fn(labels)
    not_correct = _to_float(tf.not_equal(outputs, tf.cast(labels, tf.int32))) * weights
    axis = list(range(1, outputs.shape.rank))
    return 1.0 - tf.minimum(1.0, tf.reduce_sum(not_correct, axis=axis)), tf.constant(1.0)


def padded_sequence_accuracy(predictions, labels, weights_fn=losses.weights_nonzero):
    """1.0 per sequence whose every weighted position is right: ([batch], 1.0).

        logits = tf.one_hot([[[[3]], [[4]]], [[[3]], [[2]]]], 5)   # predicts 3 4 / 3 2
        padded_sequence_accuracy(logits, tf.constant([[[[3]], [[4]]], [[[3]], [[4]]]]))
        # ([1., 0.], 1.0)
    """
    if shape_utils.shape_list(predictions)[-1] == 1:
        return rounding_sequence_accuracy(predictions, labels, weights_fn=weights_fn)
    with tf.name_scope("padded_sequence_accuracy"):
        padded_predictions, padded_labels = _pad(predictions, labels)
        weights = _flat_rows(weights_fn(padded_labels))
        # Flat [batch, positions, vocab]: argmax on TPUs handles only a few dimensions.
        shape = shape_utils.shape_list(padded_predictions)
        padded_predictions = tf.reshape(padded_predictions, [shape[0], -1, shape[-1]])
        outputs = _argmax_ids(padded_predictions)
        padded_labels = tf.cast(_flat_rows(padded_labels), tf.int32)
        not_correct = _to_float(tf.not_equal(outputs, padded_labels)) * weights
        correct_seq = 1.0 - tf.minimum(1.0, tf.reduce_sum(not_correct, axis=1))
        return correct_seq, tf.constant(1.0)


def prefix_accuracy(predictions, labels, weights_fn=losses.weights_nonzero):
    """Mean over sequences of the fraction right before the first mistake: (mean, batch).

    Grefenstette et al. 2015, "Learning to Transduce with Unbounded Memory", section 4.3.

        logits = tf.one_hot([[[[3]], [[9]], [[5]], [[6]]]], 10)          # predicts 3 9 5 6
        prefix_accuracy(logits, tf.constant([[[[3]], [[4]], [[5]], [[0]]]]))
        # 1 right before the first error, 3 real labels -> (0.3333, 1.0)
    """
    _require_weights_nonzero(weights_fn, Metrics.PREFIX_ACCURACY)
    with tf.name_scope("prefix_accuracy"):
        predictions, labels = _pad(predictions, labels)
        outputs = _flat_rows(_argmax_ids(predictions))
        labels = _flat_rows(tf.cast(labels, tf.int32))
        nonpadding = tf.not_equal(labels, 0)
        correct = _to_float(tf.logical_and(tf.equal(outputs, labels), nonpadding))
        prefix_length = tf.reduce_sum(tf.math.cumprod(correct, axis=1), axis=1)
        sequence_length = tf.reduce_sum(_to_float(nonpadding), axis=1)
        return _mean_and_count(_safe_divide(prefix_length, sequence_length))


def _sparse_nonzero(ids):
    """[batch, length] ids -> SparseTensor of the non-zero ids (0 = padding, dropped)."""
    indices = tf.where(tf.not_equal(ids, 0))
    return tf.SparseTensor(indices, tf.gather_nd(ids, indices), tf.shape(ids, out_type=tf.int64))


def sequence_edit_distance(predictions, labels, weights_fn=losses.weights_nonzero):
    """Edit distance per reference token: (total distance / reference length, reference length).

    Predicted and label ids of 0 are dropped before comparing (T2T's semantics), so the
    metric is the token error rate of the batch, and batches weigh by their length.

        logits = tf.one_hot([[[[2]], [[3]], [[0]]]], 5)                 # predicts 2 3 (pad)
        sequence_edit_distance(logits, tf.constant([[[[2]], [[4]], [[3]]]]))
        # distance("2 3", "2 4 3") = 1, 3 reference tokens -> (0.3333, 3.0)
    """
    _require_weights_nonzero(weights_fn, Metrics.EDIT_DISTANCE)
    with tf.name_scope("edit_distance"):
        outputs = _flat_rows(_argmax_ids(predictions))
        labels = _flat_rows(tf.cast(labels, tf.int32))
        label_sparse = _sparse_nonzero(labels)
        distance = tf.reduce_sum(tf.edit_distance(_sparse_nonzero(outputs), label_sparse,
                                                  normalize=False))
        reference_length = _to_float(tf.size(label_sparse.values))
        return _safe_divide(distance, reference_length), reference_length


def padded_neg_log_perplexity(predictions, labels, weights_fn=losses.weights_nonzero):
    """-cross-entropy per position (no label smoothing), with the label weights.

        logits = tf.math.log([[[[[0.25, 0.5, 0.25]]]]])
        padded_neg_log_perplexity(logits, tf.constant([[[[1]]]]))   # ([[[[log 0.5]]]], 1.0s)
    """
    num, den = losses.padded_cross_entropy(predictions, labels, 0.0,
                                                  weights_fn=weights_fn, reduce_sum=False)
    return -num, den


def padded_neg_log_perplexity_with_masking(predictions, labels, features, weights_fn=None):
    """padded_neg_log_perplexity weighted by `features["targets_mask"]` ([B, L] of 0/1)."""
    del weights_fn
    if "targets_mask" not in features:
        raise ValueError("masked_neg_log_perplexity requires targets_mask feature ([batch, "
                         "length] of 0/1 weights); add it in the problem's preprocess_example")
    mask = _to_float(features["targets_mask"])
    labels = tf.convert_to_tensor(labels)
    # Masks are [B, L]; labels [B, L, 1, 1]: add the trailing axes (features stay untouched).
    mask = tf.reshape(mask, shape_utils.shape_list(mask) + [1] * (labels.shape.rank -
                                                                    mask.shape.rank))
    return padded_neg_log_perplexity(predictions, labels, lambda unused_labels: mask)


def dmol_neg_log_perplexity(predictions, labels, weights_fn=None):
    """-discretized-mixture-of-logistics loss per pixel (common_layers.dml_loss).

    predictions [B, H, W, 10 * mixtures], labels [B, H, W, 3] pixels 0..255.
    """
    del weights_fn
    num, den = discretized_logistic.dml_loss(predictions, labels, reduce_sum=False)
    return -num, den


def word_error_rate(raw_predictions, labels, lookup=None,
                    weights_fn=losses.weights_nonzero):
    """Word edit distance per reference word: (distance / reference words, reference words).

    Without `lookup`, ids are bytes + 2 (`ByteTextEncoder`; 0 = PAD, 1 = EOS are dropped)
    and words are split on whitespace. With `lookup` (a string tensor: id -> subtoken), the
    subtokens are joined, cut at "<EOS>", "_" becomes a space, and the text is split.

        ids = lambda s: [[[[ord(c) + 2]] for c in s]]
        word_error_rate(tf.one_hot(ids("the cat"), 258), tf.constant(ids("the hat")))
        # 1 substituted word of 2 -> (0.5, 2.0)
    """
    _require_weights_nonzero(weights_fn, Metrics.WORD_ERROR_RATE)

    def from_tokens(ids):
        joined = tf.strings.reduce_join(tf.gather(lookup, ids), axis=1)
        joined = tf.strings.regex_replace(joined, "<EOS>.*", "")
        return tf.strings.split(tf.strings.regex_replace(joined, "_", " ")).to_sparse()

    def from_characters(ids):
        # Byte ids are shifted by 2; PAD and EOS map to "" and vanish from the text.
        byte_strings = tf.constant([b""] + [bytes([i]) for i in range(1, 256)])
        joined = tf.strings.reduce_join(tf.gather(byte_strings, tf.clip_by_value(ids - 2, 0,
                                                                                 255)), axis=1)
        return tf.strings.split(joined).to_sparse()

    convert = from_characters if lookup is None else from_tokens
    with tf.name_scope("word_error_rate"):
        outputs = _flat_rows(_argmax_ids(raw_predictions))
        reference = convert(_flat_rows(tf.cast(labels, tf.int32)))
        hypothesis = convert(outputs)
        distance = tf.reduce_sum(tf.edit_distance(hypothesis, reference, normalize=False))
        reference_length = _to_float(tf.size(reference.values))
        return _safe_divide(distance, reference_length), reference_length


# --------------------------------------------------------------------------- labels and sets
def multilabel_accuracy_matchk(predictions, labels, k, weights_fn=losses.weights_nonzero):
    """VQA accuracy: min(#labels equal to the predicted class / k, 1) per example.

    Args:
      predictions: logits [batch, 1, 1, 1, vocab_size].
      labels: [batch, length, 1, 1] ids, each a human answer (0 = padding).
      k: answers needed for full credit.

    Returns:
      ([batch] scores, [batch] ones). Antol et al. 2015, https://arxiv.org/abs/1505.00468.
    """
    predictions = _argmax_ids(predictions)
    scores = _to_float(tf.equal(predictions, tf.cast(labels, tf.int32))) * weights_fn(labels)
    scores = tf.reduce_sum(scores, axis=[1, 2, 3])
    scores = tf.minimum(scores / _to_float(k), 1.0)
    return scores, tf.ones_like(scores)


def multilabel_accuracy_match3(predictions, labels, weights_fn=losses.weights_nonzero):
    """multilabel_accuracy_matchk with k = 3."""
    return multilabel_accuracy_matchk(predictions, labels, 3, weights_fn)


def _label_and_predicted_sets(predictions, labels, weights_fn):
    """([batch, n] 0/1 true set, [batch, n] 0/1 predicted set) for the set metrics."""
    scores = _to_float(predictions)
    num_labels = shape_utils.shape_list(scores)[-1]
    scores = tf.reshape(scores, [shape_utils.shape_list(scores)[0], num_labels])
    labels = _flat_rows(labels)
    weights = weights_fn(labels)  # drops padding ids from the true set
    true_set = tf.reduce_max(tf.one_hot(tf.cast(labels, tf.int32), num_labels) *
                             weights[:, :, tf.newaxis], axis=1)
    return true_set, _to_float(scores > 0.5)


def set_precision(predictions, labels, weights_fn=losses.weights_nonzero):
    """Precision of predicted label sets: fraction of predicted labels that are true.

    Args:
      predictions: [batch, num_labels] scores in [0, 1] (or 0/1); a label is predicted
        when its score exceeds 0.5. [batch, 1, 1, num_labels]-like shapes are flattened.
      labels: [batch, length, 1, 1] ids of the true labels, 0-padded.

    Returns:
      (true-set membership [batch, num_labels], predicted mask as weights).

        set_precision(tf.constant([[0., 1., 1., 0.]]), tf.constant([[[[1]], [[3]]]]))
        # predicted {1, 2}, true {1, 3} -> precision 0.5
    """
    true_set, predicted = _label_and_predicted_sets(predictions, labels, weights_fn)
    return true_set, predicted


def set_recall(predictions, labels, weights_fn=losses.weights_nonzero):
    """Recall of predicted label sets: fraction of true labels that are predicted.

    Same arguments as `set_precision`; returns (predicted mask, true-set membership as
    weights).

        set_recall(tf.constant([[0., 1., 1., 0.]]), tf.constant([[[[1]], [[3]]]]))   # 0.5
    """
    true_set, predicted = _label_and_predicted_sets(predictions, labels, weights_fn)
    return predicted, true_set


def image_summary(predictions, targets, hparams):
    """Image summaries of predicted (argmax) and gold pixels: (summary, zeros)."""
    del hparams
    results = tf.cast(tf.argmax(predictions, axis=-1), tf.uint8)
    gold = tf.cast(targets, tf.uint8)
    summary1 = _v1.summary.image("prediction", results, max_outputs=2)
    summary2 = _v1.summary.image("data", gold, max_outputs=2)
    return _v1.summary.merge([summary1, summary2]), tf.zeros_like(predictions)


# --------------------------------------------------------------------------- classification
# As T2T's: each returns one value for the batch (a scalar), here weighted by how many
# examples (or classes, or predicted / true labels) it averages, so the evaluation's mean
# is exact over all batches.
def _one_hot_like(labels, logits):
    """(logits, labels shaped and typed like the logits) as tensors."""
    logits = tf.convert_to_tensor(logits)
    labels = tf.cast(tf.convert_to_tensor(labels), logits.dtype)
    return logits, tf.reshape(labels, shape_utils.shape_list(logits))


def softmax_cross_entropy_one_hot(logits, labels, weights_fn=None):
    """Mean softmax cross-entropy against one-hot labels: (mean, examples).

        softmax_cross_entropy_one_hot(tf.math.log([[0.5, 0.5]]), tf.constant([[1., 0.]]))
        # (log 2, 1.0)
    """
    del weights_fn
    with tf.name_scope("softmax_cross_entropy_one_hot"):
        logits, labels = _one_hot_like(labels, logits)
        return _mean_and_count(tf.nn.softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))


def sigmoid_accuracy_one_hot(logits, labels, weights_fn=None):
    """Fraction of examples whose highest logit is their one-hot label's class: (mean, examples).

        sigmoid_accuracy_one_hot(tf.constant([[-1., 1.], [1., -1.]]), tf.constant([[0, 1], [0, 1]]))
        # (0.5, 2.0)
    """
    del weights_fn
    with tf.name_scope("sigmoid_accuracy_one_hot"):
        logits, labels = _one_hot_like(labels, logits)
        correct = tf.equal(tf.argmax(labels, -1), tf.argmax(logits, -1))
        return _mean_and_count(_to_float(correct))


def _argmax_one_hot(logits):
    return tf.one_hot(tf.argmax(logits, -1), shape_utils.shape_list(logits)[-1])


def _true_positives(logits, labels):
    """(true positives, predicted labels, true labels), each counted over the batch."""
    logits, labels = _one_hot_like(labels, logits)
    true = _to_float(tf.not_equal(labels, 0))
    predicted = _argmax_one_hot(logits)
    return (tf.reduce_sum(true * predicted), tf.reduce_sum(predicted), tf.reduce_sum(true))


def sigmoid_recall_one_hot(logits, labels, weights_fn=None):
    """Recall of the argmax class against one-hot labels: (recall, true labels).

        sigmoid_recall_one_hot(tf.constant([[2., 0.], [0., 2.]]), tf.constant([[1, 0], [1, 0]]))
        # 1 of 2 true labels predicted -> (0.5, 2.0)
    """
    del weights_fn
    with tf.name_scope("sigmoid_recall_one_hot"):
        hits, _, true = _true_positives(logits, labels)
        return _safe_divide(hits, true), true


def sigmoid_precision_one_hot(logits, labels, weights_fn=None):
    """Precision of the argmax class against one-hot labels: (precision, predicted labels).

        sigmoid_precision_one_hot(tf.constant([[2., 0.], [2., 0.]]), tf.constant([[1, 0], [0, 1]]))
        # 1 of 2 predicted labels true -> (0.5, 2.0)
    """
    del weights_fn
    with tf.name_scope("sigmoid_precision_one_hot"):
        hits, predicted, _ = _true_positives(logits, labels)
        return _safe_divide(hits, predicted), predicted


def sigmoid_cross_entropy_one_hot(logits, labels, weights_fn=None):
    """Sigmoid cross-entropy against 0/1 labels, the mean over every class of every
    example: (mean, examples * classes); computed in the logits' dtype."""
    del weights_fn
    with tf.name_scope("sigmoid_cross_entropy_one_hot"):
        logits, labels = _one_hot_like(labels, logits)
        return _mean_and_count(tf.nn.sigmoid_cross_entropy_with_logits(
            labels=labels, logits=logits))


def sigmoid_accuracy(logits, labels, weights_fn=None):
    """Fraction of examples whose highest logit is their integer label: (mean, examples).

    Logits [batch, ..., classes], labels [batch, ...] class ids (T2T's [batch, 1, 1]).

        sigmoid_accuracy(tf.constant([[-1., 1.], [1., -1.]]), tf.constant([1, 1]))   # (0.5, 2.0)
    """
    del weights_fn
    with tf.name_scope("sigmoid_accuracy"):
        predicted = tf.reshape(tf.argmax(logits, -1), [-1])
        labels = tf.reshape(tf.cast(labels, tf.int64), [-1])
        return _mean_and_count(_to_float(tf.equal(predicted, labels)))


def _positive_scores(logits, labels):
    """(P(label != 0) per example from softmax logits, label != 0), both flat [batch]."""
    logits = _to_float(logits)
    probabilities = tf.reshape(tf.nn.softmax(logits), [-1, shape_utils.shape_list(logits)[-1]])
    return 1.0 - probabilities[:, 0], tf.reshape(tf.not_equal(labels, 0), [-1])


def roc_auc(logits, labels, weights_fn=None):
    """Area under the ROC curve of this batch, "positive" meaning label != 0: (auc, weight).

    Scores are P(class != 0) from the softmax logits; ties count one half. A batch
    without both positives and negatives has weight 0. Evaluation
    (`create_evaluation_metrics`) uses tf.compat.v1.metrics.auc over all batches instead.

        roc_auc(tf.math.log([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4]]), tf.constant([0, 1, 1]))
        # positives score 0.7, 0.4; the negative 0.1 -> both pairs ordered -> (1.0, 1.0)
    """
    del weights_fn
    with tf.name_scope("roc_auc"):
        scores, positives = _positive_scores(logits, labels)
        positive_scores = tf.boolean_mask(scores, positives)
        negative_scores = tf.boolean_mask(scores, tf.logical_not(positives))
        difference = positive_scores[:, tf.newaxis] - negative_scores[tf.newaxis, :]
        ordered = _to_float(difference > 0) + 0.5 * _to_float(tf.equal(difference, 0))
        pairs = tf.size(difference)
        return _safe_divide(tf.reduce_sum(ordered), pairs), _to_float(pairs > 0)


def _two_class_inputs(predictions, labels):
    probabilities = tf.reshape(tf.cast(predictions, tf.float64), [-1])
    return probabilities, tf.reshape(tf.cast(labels, tf.int32), [-1])


def two_class_accuracy(predictions, labels, weights_fn=None):
    """Accuracy of P(class 1) predictions rounded at 0.5 against 0/1 labels: (mean, examples).

        two_class_accuracy(tf.constant([0.8, 0.4, 0.3]), tf.constant([1, 0, 1]))   # (2/3, 3.0)
    """
    del weights_fn
    probabilities, labels = _two_class_inputs(predictions, labels)
    hard_predictions = tf.cast(tf.math.round(probabilities), tf.int32)
    return _mean_and_count(_to_float(tf.equal(hard_predictions, labels)))


def two_class_log_likelihood(predictions, labels, weights_fn=None):
    """Mean log P(label), predictions being P(class 1), in float64: (mean, examples).

        two_class_log_likelihood(tf.constant([0.8, 0.4]), tf.constant([1, 0]))
        # mean(log 0.8, log 0.6) = -0.367, 2.0
    """
    del weights_fn
    probabilities, labels = _two_class_inputs(predictions, labels)
    chosen = tf.where(tf.equal(labels, 1), probabilities, 1.0 - probabilities)
    return _mean_and_count(tf.math.log(chosen))


def _sari_score(predictions, labels, features, **unused_kwargs):
    """approx_sari_score: `sari_hook.sari_score` (SARI of argmax ids against the labels)."""
    from t2t.evaluation import sari_hook
    return sari_hook.sari_score(predictions, labels, features, **unused_kwargs)


# --------------------------------------------------------------------------- registry
# Metric functions take (predictions, labels[, features], weights_fn=...) and return
# (scores, weights) for tf.compat.v1.metrics.mean. Functions with a `features` argument
# (or **kwargs) also get the whole features dict.
METRICS_FNS = {
    Metrics.ACC: padded_accuracy,
    Metrics.ACC_MULTILABEL_MATCH3: multilabel_accuracy_match3,
    Metrics.ACC_TOP5: padded_accuracy_top5,
    Metrics.ACC_PER_SEQ: padded_sequence_accuracy,
    Metrics.APPROX_BLEU: bleu_hook.bleu_score,
    Metrics.APPROX_SARI: _sari_score,
    Metrics.DMOL_PERPLEXITY: dmol_neg_log_perplexity,
    Metrics.EDIT_DISTANCE: sequence_edit_distance,
    Metrics.IMAGE_SUMMARY: image_summary,
    Metrics.IMAGE_RMSE: image_rmse,
    Metrics.LOG_POISSON: padded_log_poisson,
    Metrics.NEG_LOG_PERPLEXITY: padded_neg_log_perplexity,
    Metrics.MASKED_NEG_LOG_PERPLEXITY: padded_neg_log_perplexity_with_masking,
    Metrics.PEARSON: pearson_correlation_coefficient,
    Metrics.RMSE: padded_rmse,
    Metrics.UNPADDED_MSE: unpadded_mse,
    Metrics.R2: padded_variance_explained,
    Metrics.ROC_AUC: roc_auc,
    Metrics.ROUGE_2_F: rouge.rouge_2_fscore,
    Metrics.ROUGE_L_F: rouge.rouge_l_fscore,
    Metrics.SET_PRECISION: set_precision,
    Metrics.SET_RECALL: set_recall,
    Metrics.SIGMOID_ACCURACY: sigmoid_accuracy,
    Metrics.SIGMOID_ACCURACY_ONE_HOT: sigmoid_accuracy_one_hot,
    Metrics.SIGMOID_CROSS_ENTROPY_ONE_HOT: sigmoid_cross_entropy_one_hot,
    Metrics.SIGMOID_PRECISION_ONE_HOT: sigmoid_precision_one_hot,
    Metrics.SIGMOID_RECALL_ONE_HOT: sigmoid_recall_one_hot,
    Metrics.SOFTMAX_CROSS_ENTROPY_ONE_HOT: softmax_cross_entropy_one_hot,
    Metrics.TWO_CLASS_ACCURACY: two_class_accuracy,
    Metrics.TWO_CLASS_LOG_LIKELIHOOD: two_class_log_likelihood,
    Metrics.WORD_ERROR_RATE: word_error_rate,
    Metrics.ABS_ERR: abs_error,
}


def unknown_metrics_error(owner, unknown):
    return ValueError("%s asks for unknown metrics %s; valid names: %s" %
                      (owner, ", ".join(unknown), ", ".join(sorted(METRICS_FNS))))


def takes_features(metric_fn):
    parameters = inspect.signature(metric_fn).parameters.values()
    return any(p.name == "features" or p.kind == p.VAR_KEYWORD for p in parameters)


# --------------------------------------------------------------------------- streaming
def _metric_variable(name, dtype=tf.float64):
    return _v1.get_variable(name, shape=[], dtype=dtype, initializer=_v1.zeros_initializer(),
                            trainable=False, collections=[_v1.GraphKeys.LOCAL_VARIABLES,
                                                          _v1.GraphKeys.METRIC_VARIABLES])


def streaming_pearson_correlation(predictions, labels):
    """(value, update_op) of Pearson r over everything seen since the local variables' init.

    Keeps n, sums of x, y, x^2, y^2 and xy in float64 local variables, like
    tf.contrib.metrics.streaming_pearson_correlation (gone from TF 2).
    """
    predictions, labels = _match_rank(predictions, labels)
    x = tf.cast(tf.reshape(predictions, [-1]), tf.float64)
    y = tf.cast(tf.reshape(labels, [-1]), tf.float64)
    with _v1.variable_scope(None, default_name="pearson"):
        names = ("count", "sum_x", "sum_y", "sum_xx", "sum_yy", "sum_xy")
        sums = [_metric_variable(name) for name in names]
    batch = [tf.cast(tf.size(x), tf.float64), tf.reduce_sum(x), tf.reduce_sum(y),
             tf.reduce_sum(x * x), tf.reduce_sum(y * y), tf.reduce_sum(x * y)]

    def correlation(n, sx, sy, sxx, syy, sxy):
        covariance = sxy - sx * sy / n
        variances = (sxx - sx * sx / n) * (syy - sy * sy / n)
        return tf.cast(tf.math.divide_no_nan(covariance, tf.sqrt(tf.maximum(variances, 0.0))),
                       tf.float32)

    value = correlation(*[total.read_value() for total in sums])
    updated = [_v1.assign_add(total, part) for total, part in zip(sums, batch)]
    return value, correlation(*updated)


def streaming_roc_auc(logits, labels):
    """(value, update_op) of tf.compat.v1.metrics.auc on P(label != 0) over all batches."""
    scores, positives = _positive_scores(logits, labels)
    return _v1.metrics.auc(positives, scores, curve="ROC", name="roc_auc")


# Metrics that are not a weighted mean of per-batch scores: evaluation accumulates them
# exactly with these (value, update_op) functions instead of averaging batch values.
STREAMING_METRICS = {
    Metrics.PEARSON: (pearson_correlation_coefficient, streaming_pearson_correlation),
    Metrics.ROC_AUC: (roc_auc, streaming_roc_auc),
}
