"""metrics: each metric's value on hand-computed logits/labels, the EVAL metric ops, eager sums."""
import importlib
import math

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import hparam
from t2t.layers import common_layers
from t2t.layers.modality_type import ModalityType
from t2t.utils import metrics  # T2T path: the metric functions and the metric ops

v1 = tf.compat.v1


def run_graph(build, feeds_per_step=None):
    """Build in a fresh graph, init local variables, run `build()`'s fetches (once per feed)."""
    with tf.Graph().as_default():
        fetches = build()
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            if feeds_per_step is None:
                return sess.run(fetches)
            return [sess.run(fetches, feed) for feed in feeds_per_step]


def weighted_mean(scores, weights):
    """What tf.compat.v1.metrics.mean(scores, weights) reports for one batch."""
    scores = np.asarray(scores, np.float64)
    weights = np.broadcast_to(np.asarray(weights, np.float64), scores.shape)
    return float(np.sum(scores * weights) / np.sum(weights))


def metric_value(metric_fn, *args, **kwargs):
    """The metric's weighted mean over one batch; args are numpy arrays (or constants)."""
    return weighted_mean(*run_graph(lambda: metric_fn(*args, **kwargs)))


def symbol_logits(ids, vocab_size):
    """One-hot-ish logits [B, L, 1, 1, V] whose argmax is `ids` [B, L]."""
    ids = np.asarray(ids)
    logits = np.full(ids.shape + (vocab_size,), -3.0, np.float32)
    for index in np.ndindex(ids.shape):
        logits[index + (ids[index],)] = 3.0
    return logits[:, :, None, None, :]


def symbol_labels(ids):
    return np.asarray(ids, np.int32)[:, :, None, None]


# Probabilities [1, 3 positions, V=3]; labels 1, 1, PAD.
PROBS = np.array([[[0.1, 0.7, 0.2], [0.1, 0.2, 0.7], [0.8, 0.1, 0.1]]], np.float32)
LOGITS = PROBS[:, :, None, None, :]
LABELS = np.array([[1, 1, 0]], np.int32)[:, :, None, None]


# --------------------------------------------------------------------------- names
def test_metric_names_are_t2ts():
    assert (metrics.Metrics.ACC, metrics.Metrics.ACC_TOP5, metrics.Metrics.ACC_PER_SEQ) == (
        "accuracy", "accuracy_top5", "accuracy_per_sequence")
    assert metrics.Metrics.APPROX_BLEU == "approx_bleu_score"
    assert metrics.Metrics.ROUGE_L_F == "rouge_L_fscore"
    assert metrics.Metrics.R2 == "r_squared"
    assert metrics.Metrics.DMOL_PERPLEXITY == "disc_mol_neg_log_perplexity"
    assert metrics.Metrics.ABS_ERR == "mean_absolute_error"
    names = {v for k, v in vars(metrics.Metrics).items() if k.isupper()}
    assert set(metrics.METRICS_FNS) == names - {"prefix_accuracy"}  # T2T left it out too
    assert all(callable(fn) for fn in metrics.METRICS_FNS.values())


def test_import_builds_nothing_in_the_graph():
    with tf.Graph().as_default() as graph:
        importlib.reload(metrics)
        assert graph.get_operations() == []


# --------------------------------------------------------------------------- symbol metrics
def test_padded_accuracy_ignores_padding():
    scores, weights = run_graph(lambda: metrics.padded_accuracy(np.log(LOGITS), LABELS))
    assert scores.ravel().tolist() == [1.0, 0.0, 1.0]  # the padding position is "right"...
    assert weights.ravel().tolist() == [1.0, 1.0, 0.0]  # ...but weighs nothing
    assert weighted_mean(scores, weights) == 0.5


def test_padded_accuracy_pads_shorter_labels():
    # Logits for 3 positions, labels for 2: labels are zero-padded to 3.
    value = metric_value(metrics.padded_accuracy, np.log(LOGITS), LABELS[:, :2])
    assert value == 0.5


def test_accuracy_top5():
    # Vocab 7; the label's rank among the logits decides.
    logits = np.array([[[7, 6, 5, 4, 3, 2, 1], [7, 6, 5, 4, 3, 2, 1], [1, 2, 3, 4, 5, 6, 7]]],
                      np.float32)[:, :, None, None, :]
    labels = np.array([[4, 5, 2]], np.int32)[:, :, None, None]   # ranks 5, 6, 5
    scores, weights = run_graph(lambda: metrics.padded_accuracy_top5(logits, labels))
    assert scores.ravel().tolist() == [1.0, 0.0, 1.0]
    assert metric_value(metrics.padded_accuracy_topk, logits, labels, 1) == 0.0
    # k larger than the vocabulary: everything is in the top k.
    assert metric_value(metrics.padded_accuracy_topk, logits[..., :3], labels % 2 + 1, 5) == 1


def test_sequence_accuracy_per_sequence():
    predicted = [[3, 4, 9], [3, 2, 0], [5, 5, 5]]
    labels = [[3, 4, 0], [3, 4, 0], [5, 5, 5]]  # row 0 wrong only at padding
    scores, weights = run_graph(lambda: metrics.padded_sequence_accuracy(
        symbol_logits(predicted, 10), symbol_labels(labels)))
    assert scores.tolist() == [1.0, 0.0, 1.0]
    assert weighted_mean(scores, weights) == pytest.approx(2 / 3)


def test_rounding_accuracies_for_real_outputs():
    predictions = np.array([[[[[3.7]]], [[[1.2]]], [[[5.0]]]]], np.float32)  # real outputs
    labels = np.array([[[[3]], [[2]], [[0]]]], np.int32)
    assert metric_value(metrics.padded_accuracy, predictions, labels) == 0.5
    scores, _ = run_graph(lambda: metrics.padded_sequence_accuracy(predictions, labels))
    assert scores.tolist() == [0.0]


def test_neg_log_perplexity_value():
    scores, weights = run_graph(lambda: metrics.padded_neg_log_perplexity(
        np.log(LOGITS), LABELS))
    assert weights.ravel().tolist() == [1.0, 1.0, 0.0]
    expected = (math.log(0.7) + math.log(0.2)) / 2
    assert weighted_mean(scores, weights) == pytest.approx(expected, rel=1e-5)


def test_masked_neg_log_perplexity_uses_targets_mask():
    features = {"targets_mask": np.array([[0.0, 1.0, 0.0]], np.float32)}
    value = metric_value(metrics.padded_neg_log_perplexity_with_masking,
                         np.log(LOGITS), LABELS, features)
    assert value == pytest.approx(math.log(0.2), rel=1e-5)
    # T2T's words first (its own test matches them), then how to add the feature.
    with pytest.raises(ValueError, match="^masked_neg_log_perplexity requires targets_mask "
                                         r"feature \(\[batch, length\] of 0/1 weights\); add"):
        metrics.padded_neg_log_perplexity_with_masking(LOGITS, LABELS, {})


def test_edit_distance_value():
    # Predicted "2 3 (pad)" vs reference "2 4 3" and "5 6" vs "5 6 7 (pad)": 1 + 1 edits
    # over 3 + 3 reference tokens; predicted 0s are dropped, as in T2T.
    predicted = [[2, 3, 0, 0], [5, 6, 0, 8]]
    labels = [[2, 4, 3, 0], [5, 6, 7, 0]]
    score, weight = run_graph(lambda: metrics.sequence_edit_distance(
        symbol_logits(predicted, 10), symbol_labels(labels)))
    assert (score, weight) == (pytest.approx(2 / 6), 6.0)
    with pytest.raises(ValueError, match="only works with weights_fn=common_layers.weights_"):
        metrics.sequence_edit_distance(LOGITS, LABELS, weights_fn=common_layers.weights_all)


def test_edit_distance_of_pure_padding_is_not_nan():
    score, weight = run_graph(lambda: metrics.sequence_edit_distance(
        symbol_logits([[3, 0]], 5), symbol_labels([[0, 0]])))
    assert (score, weight) == (0.0, 0.0)


def test_prefix_accuracy():
    predicted = [[3, 9, 5, 6], [1, 2, 3, 7]]
    labels = [[3, 4, 5, 0], [1, 2, 3, 0]]
    value, weight = run_graph(lambda: metrics.prefix_accuracy(
        symbol_logits(predicted, 10), symbol_labels(labels)))
    # Row 0: 1 right before the first error of 3; row 1: all 3 right (padding not counted).
    # One value for the batch, as T2T's, weighted by the 2 sequences it averages.
    assert value == pytest.approx((1 / 3 + 1.0) / 2)
    assert weight == 2.0


def test_word_error_rate_on_bytes_and_on_subtokens():
    def byte_ids(text):
        return [[ord(c) + 2 for c in text] + [1]]  # EOS

    value, weight = run_graph(lambda: metrics.word_error_rate(
        symbol_logits(byte_ids("the cat sat"), 258), symbol_labels(byte_ids("the hat sat"))))
    assert (value, weight) == (pytest.approx(1 / 3), 3.0)

    lookup = ["<pad>", "<EOS>", "the_", "cat_", "hat_", "sat"]
    value, weight = run_graph(lambda: metrics.word_error_rate(
        symbol_logits([[2, 3, 1, 4]], 6), symbol_labels([[2, 4, 5, 1]]), lookup=lookup))
    # "the cat" (cut at <EOS>) vs "the hat sat": 1 substitution + 1 deletion over 3 words.
    assert (value, weight) == (pytest.approx(2 / 3), 3.0)


# --------------------------------------------------------------------------- regression
def test_rmse_unpadded_mse_and_mean_absolute_error():
    predictions = np.array([[1.0, 2.0, 5.0]], np.float32)
    labels = np.array([[1.0, 4.0, 0.0]], np.float32)
    rmse, weight = run_graph(lambda: metrics.padded_rmse(predictions, labels))
    assert (rmse, weight) == (pytest.approx(math.sqrt((0 + 4 + 25) / 3)), 3.0)
    # With weights_nonzero the label-0 position is padding: sqrt((0 + 4) / 2).
    rmse, weight = run_graph(lambda: metrics.padded_rmse(
        predictions, labels, weights_fn=common_layers.weights_nonzero))
    assert (rmse, weight) == (pytest.approx(math.sqrt(2.0)), 2.0)
    assert metric_value(metrics.unpadded_mse, predictions, labels) == pytest.approx(29 / 3)
    assert metric_value(metrics.padded_mean_absolute_error, predictions, labels) == \
        pytest.approx(7 / 3)
    # Real tops add a trailing axis of 1: [1, 3, 1] against [1, 3].
    assert metric_value(metrics.padded_rmse, predictions[..., None], labels) == \
        pytest.approx(math.sqrt(29 / 3))


def test_abs_error_and_image_rmse():
    scores, weights = run_graph(lambda: metrics.abs_error(
        tf.constant([[2.0], [5.0]]), tf.constant([[[[1.0]]], [[[1.0]]]])))
    assert scores.ravel().tolist() == [1.0, 4.0] and weights.ravel().tolist() == [1.0, 1.0]
    pixel_logits = np.eye(10, dtype=np.float32)[[[[4, 9]]]]   # argmax pixels 4 and 9
    value, _ = run_graph(lambda: metrics.image_rmse(pixel_logits, np.array([[[1, 9]]])))
    assert value == pytest.approx(math.sqrt(9 / 2))


def test_r_squared_and_log_poisson():
    value, weight = run_graph(lambda: metrics.padded_variance_explained(
        tf.constant([[1.0, 2.0, 3.5]]), tf.constant([[1.0, 2.0, 3.0]])))
    assert (value, weight) == (pytest.approx(1 - 0.25 / 2), 3.0)
    log_rates = np.log(np.array([[2.0, 3.0]], np.float32))
    counts = np.array([[1.0, 4.0]], np.float32)
    value = metric_value(metrics.padded_log_poisson, log_rates, counts)
    # exp(log rate) - count * log rate, plus Stirling's log(count!) for counts > 1; the
    # metric is the mean over positions (T2T reported the batch's sum).
    stirling = 4 * math.log(4) - 4 + 0.5 * math.log(2 * math.pi * 4)
    expected = ((2 - math.log(2)) + (3 - 4 * math.log(3) + stirling)) / 2
    assert value == pytest.approx(expected, rel=1e-5)


def test_pearson_batch_and_streaming():
    x1, y1 = np.array([1.0, 2.0, 3.0], np.float32), np.array([1.0, 3.0, 2.0], np.float32)
    x2, y2 = np.array([4.0, 6.0], np.float32), np.array([5.0, 4.0], np.float32)
    value, _ = run_graph(lambda: metrics.pearson_correlation_coefficient(x1, y1))
    assert value == pytest.approx(np.corrcoef(x1, y1)[0, 1], rel=1e-5)

    def build():
        x = v1.placeholder(tf.float32, [None])
        y = v1.placeholder(tf.float32, [None])
        build.x, build.y = x, y
        return metrics.streaming_pearson_correlation(x, y)
    with tf.Graph().as_default():
        value, update = build()
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            sess.run(update, {build.x: x1, build.y: y1})
            last_update = sess.run(update, {build.x: x2, build.y: y2})
            last_value = sess.run(value)
    expected = np.corrcoef(np.concatenate([x1, x2]), np.concatenate([y1, y2]))[0, 1]
    assert last_update == pytest.approx(expected, rel=1e-5)
    assert last_value == pytest.approx(expected, rel=1e-5)


# --------------------------------------------------------------------------- classes and sets
def test_set_precision_and_recall():
    scores = np.array([[0.0, 0.9, 0.8, 0.1], [0.0, 0.0, 0.0, 0.7]], np.float32)
    labels = np.array([[[[1]], [[3]]], [[[3]], [[0]]]], np.int32)   # true sets {1, 3}, {3}
    # Predicted {1, 2} and {3}: precision (1 + 1) / 3, recall (1 + 1) / 3.
    assert metric_value(metrics.set_precision, scores, labels) == pytest.approx(2 / 3)
    assert metric_value(metrics.set_recall, scores, labels) == pytest.approx(2 / 3)
    labels_all_found = np.array([[[[1]], [[2]]], [[[3]], [[0]]]], np.int32)
    assert metric_value(metrics.set_recall, scores, labels_all_found) == 1.0


def test_multilabel_accuracy_match3():
    logits = symbol_logits([[7], [5]], 10)             # predicts 7 and 5
    labels = np.array([[[[7]], [[7]], [[2]], [[0]]], [[[5]], [[5]], [[5]], [[5]]]], np.int32)
    scores, weights = run_graph(lambda: metrics.multilabel_accuracy_match3(logits, labels))
    np.testing.assert_allclose(scores, [2 / 3, 1.0], rtol=1e-6)
    assert weights.tolist() == [1.0, 1.0]


def test_one_hot_classification_metrics():
    logits = np.array([[2.0, 0.0, -1.0], [0.0, 1.0, 3.0], [0.5, 0.2, 0.1]], np.float32)
    labels = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 0]], np.float32)
    assert metric_value(metrics.sigmoid_accuracy_one_hot, logits, labels) == \
        pytest.approx(2 / 3)
    # Argmax classes 0, 2, 0: true positives 2 of 3 predicted, 2 of 3 true labels.
    assert metric_value(metrics.sigmoid_precision_one_hot, logits, labels) == \
        pytest.approx(2 / 3)
    assert metric_value(metrics.sigmoid_recall_one_hot, logits, labels) == pytest.approx(2 / 3)
    log_softmax = logits - np.log(np.sum(np.exp(logits), axis=-1, keepdims=True))
    assert metric_value(metrics.softmax_cross_entropy_one_hot, logits, labels) == \
        pytest.approx(-np.mean(np.sum(labels * log_softmax, axis=-1)), rel=1e-5)
    sigmoid_xent = np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))
    assert metric_value(metrics.sigmoid_cross_entropy_one_hot, logits, labels) == \
        pytest.approx(np.mean(sigmoid_xent), rel=1e-5)
    # Integer labels (T2T's): the argmax classes 0, 2, 0 against 0, 2, 1.
    assert metric_value(metrics.sigmoid_accuracy, logits, np.array([0, 2, 1])) == \
        pytest.approx(2 / 3)


def test_classification_metrics_are_one_value_per_batch_weighted_by_what_it_averages():
    # T2T's return shape: a scalar for the batch. The weight is what it averages (examples,
    # classes, predicted or true labels), so the streaming mean over batches is exact.
    logits = np.array([[-1., 1.], [1., -1.], [1., -1.], [1., -1.]])          # float64
    labels = np.array([[0, 1], [1, 0], [0, 0], [0, 1]])                      # int64
    logits4, labels4 = logits[:, None, None, :], labels[:, None, None, :]
    value, weight = run_graph(lambda: metrics.sigmoid_cross_entropy_one_hot(logits4, labels4))
    xent = np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))
    assert np.shape(value) == () and value == pytest.approx(np.mean(xent), rel=1e-12)
    assert weight == 8.0
    # Argmax classes 1, 0, 0, 0; 3 true labels, 2 of them predicted (rows 0 and 1).
    assert tuple(run_graph(lambda: metrics.sigmoid_precision_one_hot(logits4, labels4))) == \
        (pytest.approx(2 / 4), 4.0)
    assert tuple(run_graph(lambda: metrics.sigmoid_recall_one_hot(logits4, labels4))) == \
        (pytest.approx(2 / 3), 3.0)
    assert tuple(run_graph(lambda: metrics.sigmoid_accuracy_one_hot(logits4, labels4))) == \
        (pytest.approx(3 / 4), 4.0)   # row 2's all-zero label argmaxes to class 0
    assert tuple(run_graph(lambda: metrics.sigmoid_accuracy(logits, np.array([1, 0, 1, 1])))) == \
        (pytest.approx(2 / 4), 4.0)
    # Two batches of different sizes: the EVAL metric is the mean over all 5 examples.
    def build():
        probabilities = v1.placeholder(tf.float32, [None])
        targets = v1.placeholder(tf.int32, [None])
        value, update = v1.metrics.mean(*metrics.two_class_accuracy(probabilities, targets))
        return probabilities, targets, value, update
    with tf.Graph().as_default():
        probabilities, targets, value, update = build()
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            sess.run(update, {probabilities: [0.9], targets: [1]})                  # 1 of 1
            sess.run(update, {probabilities: [0.9, 0.9, 0.1, 0.1], targets: [0, 0, 0, 1]})
            assert sess.run(value) == pytest.approx(2 / 5)                          # 1 of 4


def test_two_class_metrics():
    probabilities = np.array([0.8, 0.4, 0.3], np.float32)
    labels = np.array([1, 0, 1], np.int32)
    assert metric_value(metrics.two_class_accuracy, probabilities, labels) == \
        pytest.approx(2 / 3)
    assert metric_value(metrics.two_class_log_likelihood, probabilities, labels) == \
        pytest.approx(np.mean(np.log([0.8, 0.6, 0.3])), rel=1e-5)
    # Computed in float64, as T2T's.
    value, weight = run_graph(lambda: metrics.two_class_log_likelihood(
        np.array([0.2, 0.4]), np.array([0, 1])))
    assert value.dtype == np.float64 and weight == 2.0
    assert value == pytest.approx(np.mean(np.log([0.8, 0.4])), rel=1e-14)


def test_roc_auc_batch_and_streaming():
    # P(positive) = 0.1, 0.7, 0.4, 0.4 for labels 0, 1, 1, 0: pairs (0.7>0.1), (0.7>0.4),
    # (0.4>0.1), (0.4=0.4 -> 1/2) -> 3.5 / 4.
    logits = np.log(np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.6, 0.4]], np.float32))
    labels = np.array([0, 1, 1, 0], np.int32)
    value, weight = run_graph(lambda: metrics.roc_auc(logits, labels))
    assert (value, weight) == (pytest.approx(0.875), 1.0)
    # One class only: no pairs, weight 0.
    assert run_graph(lambda: metrics.roc_auc(logits[:1], labels[:1])) == (0.0, 0.0)
    # Streaming over two batches: perfectly separated scores give AUC 1.
    batches = [(logits[:2], labels[:2]), (np.log([[0.2, 0.8], [0.95, 0.05]]), [1, 0])]

    def build():
        build.logits = v1.placeholder(tf.float32, [None, 2])
        build.labels = v1.placeholder(tf.int32, [None])
        return metrics.streaming_roc_auc(build.logits, build.labels)[1]
    with tf.Graph().as_default():
        update = build()
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            for batch_logits, batch_labels in batches:
                auc = sess.run(update, {build.logits: batch_logits, build.labels: batch_labels})
    assert auc == pytest.approx(1.0, abs=1e-3)


def test_dmol_perplexity_is_minus_the_per_pixel_dml_loss():
    rng = np.random.RandomState(0)
    pred = rng.randn(1, 2, 2, 10).astype(np.float32)
    pixels = rng.randint(0, 256, size=(1, 2, 2, 3))
    num, den = metrics.dmol_neg_log_perplexity(pred, pixels)
    loss, weights = common_layers.dml_loss(tf.constant(pred), tf.constant(pixels),
                                           reduce_sum=False)
    np.testing.assert_allclose(num.numpy(), -loss.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(den.numpy(), weights.numpy())
    assert num.shape == (1, 2, 2) and (num.numpy() < 0).all()


def test_approx_sari_score_is_the_sari_of_the_argmax_ids():
    # Source [3, 4, 5], label [3, 5]: a model that outputs the label scores 1.0; one that
    # copies the source keeps 4 (should go) and deletes nothing.
    inputs = np.array([[3, 4, 5]], np.int32)[:, :, None, None]
    labels = np.array([[3, 5, 0]], np.int32)[:, :, None, None]
    perfect = np.eye(6, dtype=np.float32)[[[3, 5, 0]]][:, :, None, None, :]
    copy = np.eye(6, dtype=np.float32)[[[3, 4, 5]]][:, :, None, None, :]
    fn = metrics.METRICS_FNS["approx_sari_score"]
    score, weight = fn(tf.constant(perfect), tf.constant(labels), {"inputs": inputs})
    assert score.numpy().tolist() == [1.0] and float(weight) == 1.0
    score, _ = fn(tf.constant(copy), tf.constant(labels), {"inputs": inputs})
    # By hand, n = 1..4: keep 0.8, 0, 0, 1 (mean 0.45); add 1, 0, 1, 1 (0.75); delete 1.
    assert score.numpy()[0] == pytest.approx((0.45 + 0.75 + 1) / 3)
    with pytest.raises(ValueError, match="needs the 'inputs' feature"):
        fn(tf.constant(perfect), tf.constant(labels), {})


# --------------------------------------------------------------------------- EVAL metric ops
class FakeProblem:
    """Just what create_evaluation_metrics reads from a Problem."""

    def __init__(self, name, metric_names, modality=ModalityType.SYMBOL, was_reversed=False):
        self.name = name
        self._metric_names = metric_names
        self._modality = modality
        self.was_reversed = was_reversed

    def eval_metrics(self):
        return list(self._metric_names)

    def get_hparams(self, model_hparams=None):
        del model_hparams
        return hparam.HParams(modality={"inputs": ModalityType.SYMBOL,
                                        "targets": self._modality},
                              vocab_size={"inputs": 10, "targets": 10})


def model_hparams(**overrides):
    return hparam.HParams(weights_fn=overrides.pop("weights_fn", {}), **overrides)


def evaluate(metric_fns, batches):
    """Run every metric's update op over (logits, labels) batches; return the final values."""
    with tf.Graph().as_default():
        logits = v1.placeholder(tf.float32, [None, None, 1, 1, None])
        labels = v1.placeholder(tf.int32, [None, None, 1, 1])
        features = {"targets": labels}
        ops = {name: fn(logits, features, labels) for name, fn in metric_fns.items()}
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            for batch_logits, batch_labels in batches:
                sess.run({name: op[1] for name, op in ops.items()},
                         {logits: batch_logits, labels: batch_labels})
            return sess.run({name: op[0] for name, op in ops.items()})


def test_create_evaluation_metrics_names_and_values():
    problem = FakeProblem("toy_problem", ["accuracy", "accuracy_per_sequence",
                                          "neg_log_perplexity", "edit_distance"])
    fns = metrics.create_evaluation_metrics([problem], model_hparams())
    assert sorted(fns) == ["metrics-toy_problem/targets/accuracy",
                           "metrics-toy_problem/targets/accuracy_per_sequence",
                           "metrics-toy_problem/targets/edit_distance",
                           "metrics-toy_problem/targets/neg_log_perplexity"]
    batch1 = (np.log(LOGITS), LABELS)                              # 1 of 2 right
    batch2 = (np.log(np.array([[[0.1, 0.1, 0.8], [0.9, 0.05, 0.05]]], np.float32)
                     )[:, :, None, None, :], np.array([[2, 0]], np.int32)[:, :, None, None])
    values = evaluate(fns, [batch1, batch2])
    # Accuracy over both batches: (1 + 1) right of 3 non-padding labels.
    assert values["metrics-toy_problem/targets/accuracy"] == pytest.approx(2 / 3)
    assert values["metrics-toy_problem/targets/accuracy_per_sequence"] == pytest.approx(0.5)
    expected_nlp = (math.log(0.7) + math.log(0.2) + math.log(0.8)) / 3
    assert values["metrics-toy_problem/targets/neg_log_perplexity"] == \
        pytest.approx(expected_nlp, rel=1e-5)
    # Edit distances: batch 1 "1 2" vs "1 1" (1 of 2), batch 2 "2" vs "2" (0 of 1),
    # averaged with the reference lengths as weights.
    assert values["metrics-toy_problem/targets/edit_distance"] == pytest.approx(1 / 3)


def test_create_evaluation_metrics_weights_fn_rev_and_overload():
    problem = FakeProblem("toy", ["accuracy"], modality=ModalityType.SYMBOL_WEIGHTS_ALL,
                          was_reversed=True)
    fns = metrics.create_evaluation_metrics([problem], model_hparams())
    assert list(fns) == ["metrics-toy_rev/targets/accuracy"]
    # SYMBOL_WEIGHTS_ALL counts the (correctly predicted) padding position: 2 of 3.
    values = evaluate(fns, [(np.log(LOGITS), LABELS)])
    assert values["metrics-toy_rev/targets/accuracy"] == pytest.approx(2 / 3)

    hp = model_hparams(weights_fn={"targets": common_layers.weights_nonzero},
                       overload_eval_metric_name="renamed")
    fns = metrics.create_evaluation_metrics([problem], hp)
    assert list(fns) == ["metrics-renamed/targets/accuracy"]
    assert evaluate(fns, [(np.log(LOGITS), LABELS)])["metrics-renamed/targets/accuracy"] == 0.5


def test_create_evaluation_metrics_streaming_and_features():
    problem = FakeProblem("cls", ["roc_auc", "masked_neg_log_perplexity"])
    fns = metrics.create_evaluation_metrics([problem], model_hparams())
    with tf.Graph().as_default():
        logits = tf.constant(np.log(np.array([[[[[0.9, 0.1]]]], [[[[0.2, 0.8]]]]], np.float32)))
        labels = tf.constant([[[[0]]], [[[1]]]])
        features = {"targets": labels, "targets_mask": tf.constant([[1.0], [0.0]])}
        auc = fns["metrics-cls/targets/roc_auc"](logits, features, labels)
        nlp = fns["metrics-cls/targets/masked_neg_log_perplexity"](logits, features, labels)
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            sess.run([auc[1], nlp[1]])
            auc_value, nlp_value = sess.run([auc[0], nlp[0]])
    assert auc_value == pytest.approx(1.0, abs=1e-3)
    assert nlp_value == pytest.approx(math.log(0.9), rel=1e-5)  # only example 0 is unmasked


def test_create_evaluation_metrics_image_summary_and_video_shapes():
    problem = FakeProblem("frames", ["image_summary", "accuracy"], modality=ModalityType.IMAGE)
    fns = metrics.create_evaluation_metrics([problem], model_hparams())
    pixels = np.arange(24).reshape([1, 2, 2, 2, 3]) % 7 + 1        # [B, T, H, W, C]
    logits = np.eye(8, dtype=np.float32)[pixels]                    # 6-D: [B, T, H, W, C, 8]
    labels = pixels.copy()
    labels[0, 0, 0, 0, 0] = 5 if pixels[0, 0, 0, 0, 0] != 5 else 6  # one wrong pixel of 24
    with tf.Graph().as_default():
        summary, _ = fns["metrics-frames/targets/image_summary"](
            tf.constant(logits[:, 0]), {}, tf.constant(labels[:, 0]))
        accuracy = fns["metrics-frames/targets/accuracy"](tf.constant(logits), {},
                                                          tf.constant(labels))
        with v1.Session() as sess:
            sess.run(v1.local_variables_initializer())
            sess.run(accuracy[1])
            summary_bytes, accuracy_value = sess.run([summary, accuracy[0]])
    tags = [value.tag for value in tf.compat.v1.Summary.FromString(summary_bytes).value]
    assert tags == ["prediction/image/0", "data/image/0"]
    assert accuracy_value == pytest.approx(23 / 24)   # IMAGE weighs every pixel


def test_create_evaluation_metrics_unknown_name():
    problem = FakeProblem("toy", ["accuracy", "bleu_like_thing"])
    with pytest.raises(ValueError) as error:
        metrics.create_evaluation_metrics([problem], model_hparams())
    message = str(error.value)
    assert "\n" not in message
    assert "problem toy asks for unknown metrics bleu_like_thing" in message
    assert "approx_bleu_score" in message and "accuracy_top5" in message


def test_create_evaluation_metrics_for_a_registered_problem():
    from t2t.core import registry
    problem = registry.problem("algorithmic_reverse_binary40")
    fns = metrics.create_evaluation_metrics([problem], None)
    assert sorted(fns) == sorted("metrics-algorithmic_reverse_binary40/targets/" + name
                                 for name in problem.eval_metrics())


# --------------------------------------------------------------------------- eager metrics
def test_eager_metrics_accumulate_over_batches():
    accum, means = metrics.create_eager_metrics(["accuracy", "accuracy_per_sequence"],
                                                weights_fn=common_layers.weights_nonzero)
    accum(tf.math.log(LOGITS), tf.constant(LABELS))
    accum(tf.constant(np.log(np.array([[[0.1, 0.1, 0.8], [0.9, 0.05, 0.05]]], np.float32)
                             )[:, :, None, None, :]), tf.constant([[[[2]], [[0]]]]))
    result = means()
    assert result["accuracy"] == pytest.approx(2 / 3)
    assert result["accuracy_per_sequence"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="unknown metrics nope; valid names: "):
        metrics.create_eager_metrics(["nope"])


def test_eager_metrics_for_problem_use_the_modality_weights():
    accum, means = metrics.create_eager_metrics_for_problem(FakeProblem("toy", ["accuracy"]))
    accum(tf.math.log(LOGITS), tf.constant(LABELS))
    assert means() == {"accuracy": pytest.approx(0.5)}
