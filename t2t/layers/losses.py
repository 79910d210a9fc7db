"""Token weights and T2T's label-smoothed cross-entropy (re-exported by `common_layers`).

Losses return a (numerator, denominator) pair; the model divides them (T2T's convention,
which lets sharded or multi-problem losses be summed before averaging):

    logits = tf.constant([[[[[2.0, 0.0, 0.0]]]], [[[[0.0, 0.0, 0.0]]]]])   # [2, 1, 1, 1, 3]
    labels = tf.constant([[[[1]]], [[[0]]]])                              # second is padding
    num, den = padded_cross_entropy(logits, labels, label_smoothing=0.0)
    # num = -log softmax([2, 0, 0])[1] = 2.2395, den = 1.0 (the padding weighs nothing)
"""
import math

import tensorflow as tf

from t2t.layers.shape_utils import shape_list, to_float


def weights_nonzero(labels):
    """1.0 where the label is not padding (id 0), else 0.0.

        weights_nonzero(tf.constant([[3, 1, 0]]))   # [[1., 1., 0.]]
    """
    return to_float(tf.not_equal(labels, 0))


def weights_all(labels):
    """1.0 everywhere: for features without 0-padding."""
    return tf.ones_like(labels, dtype=tf.float32)


def weights_prepend_inputs_to_targets(labels):
    """Weights only the targets part of "inputs 0 targets" rows (T2T's prepend_mode).

    Everything up to and including the first 0 (the separator) is inputs and weighs 0;
    after it, non-padding positions weigh 1.

        weights_prepend_inputs_to_targets(tf.constant([[5, 6, 0, 7, 1, 0]]))
        # [[0., 0., 0., 1., 1., 0.]]
    """
    past_first_zero = tf.cumsum(to_float(tf.equal(labels, 0)), axis=1)
    nonzero = to_float(labels)
    return to_float(tf.not_equal(past_first_zero * nonzero, 0))


def weights_concatenated(labels):
    """Weights for "source EOS target EOS source EOS ..." rows: only the targets count.

    Sentences are split on EOS (id 1); odd-numbered sentences are targets, and their
    first two tokens are boilerplate (as in T2T's concatenated problems), so they are skipped.
    Takes 4-D labels [batch, length, 1, 1].
    """
    eos_mask = tf.cast(tf.equal(labels, 1), tf.int32)
    sentence_num = tf.cumsum(eos_mask, axis=1, exclusive=True)
    in_target = tf.equal(tf.math.floormod(sentence_num, 2), 1)
    sentence_num_plus_one = sentence_num + 1
    shifted = tf.pad(sentence_num_plus_one, [[0, 0], [2, 0], [0, 0], [0, 0]])[:, :-2, :, :]
    nonboilerplate = tf.equal(sentence_num_plus_one, shifted)
    return to_float(tf.logical_and(nonboilerplate, in_target))


def check_nonnegative(value):
    """`value`, checked to be >= 0 (a ValueError for a Python number, an assertion op for a
    tensor)."""
    if isinstance(value, tf.Tensor):
        with tf.control_dependencies([tf.debugging.assert_greater_equal(value, 0)]):
            return tf.identity(value)
    if value < 0:
        raise ValueError("the task id must be >= 0 (the id a multi-problem puts before each "
                         "task's targets), got %r" % (value,))
    return value


def _after_task_id(labels, taskid):
    """1.0 on the non-padding positions after the first `taskid` in each row."""
    is_taskid = to_float(tf.equal(labels, taskid))
    past_taskid = tf.cumsum(is_taskid, axis=1) * (1.0 - is_taskid)
    return to_float(tf.not_equal(past_taskid * to_float(labels), 0))


def weights_multi_problem(labels, taskid=-1):
    """Weights only the targets of "inputs <taskid> targets" rows (T2T's multi-problems).

        weights_multi_problem(tf.constant([[5, 6, 9, 7, 1, 0]]), 9)
        # [[0., 0., 0., 1., 1., 0.]]
    """
    return _after_task_id(labels, check_nonnegative(taskid))


def weights_multi_problem_all(labels, taskid=-1):
    """Weights every non-padding token of the rows that hold `taskid` (then a target).

        weights_multi_problem_all(tf.constant([[5, 9, 7, 0], [5, 6, 7, 0]]), 9)
        # [[1., 1., 1., 0.], [0., 0., 0., 0.]]
    """
    taskid = check_nonnegative(taskid)
    in_task = tf.reduce_sum(_after_task_id(labels, taskid), axis=1) > 0
    return to_float(tf.not_equal(labels, 0)) * tf.expand_dims(to_float(in_task), axis=-1)


def weights_multi_problem_input(labels, taskid=-1):
    """Weights the inputs (and the task id) of the rows of task `taskid`:
    weights_multi_problem_all - weights_multi_problem."""
    taskid = check_nonnegative(taskid)
    return weights_multi_problem_all(labels, taskid) - weights_multi_problem(labels, taskid)


def pad_to_same_length(x, y, final_length_divisible_by=1, axis=1):
    """Zero-pad `x` and `y` along `axis` (1 or 2) to the same length.

        a, b = pad_to_same_length(tf.zeros([2, 3, 4]), tf.zeros([2, 5]))
        # a: [2, 5, 4], b: [2, 5]
    """
    if axis not in (1, 2):
        raise ValueError("pad_to_same_length: axis must be 1 or 2, got %r" % (axis,))
    with tf.name_scope("pad_to_same_length"):
        x_length = shape_list(x)[axis]
        y_length = shape_list(y)[axis]
        if (isinstance(x_length, int) and isinstance(y_length, int) and x_length == y_length
                and final_length_divisible_by == 1):
            return x, y
        max_length = tf.maximum(x_length, y_length)
        if final_length_divisible_by > 1:
            # Round up to the nearest multiple.
            max_length += final_length_divisible_by - 1
            max_length //= final_length_divisible_by
            max_length *= final_length_divisible_by

        def padded(tensor, length):
            rank = len(tensor.get_shape())
            paddings = [[0, 0]] * rank
            paddings[axis] = [0, max_length - length]
            result = tf.pad(tensor, paddings)
            # Static shapes are unchanged except along `axis`.
            static = tensor.shape.as_list()
            static[axis] = None
            result.set_shape(static)
            return result

        return padded(x, x_length), padded(y, y_length)


def pad_with_zeros(logits, labels):
    """Pad logits [B, L1, ..., V] and labels [B, L2, ...] to the same length(s)."""
    with tf.name_scope("pad_with_zeros"):
        logits, labels = pad_to_same_length(logits, labels)
        if len(labels.shape) == 3:  # 2-D labels: pad the second spatial axis too.
            logits, labels = pad_to_same_length(logits, labels, axis=2)
        return logits, labels


def _gaussian_soft_targets(labels, vocab_size, scale):
    """N(label, scale) densities at 0..vocab_size-1, vocab axis last."""
    labels = tf.expand_dims(tf.cast(labels, tf.float32), -1)
    points = tf.cast(tf.range(vocab_size), tf.float32)
    return (tf.exp(-0.5 * tf.square((points - labels) / scale)) /
            (scale * math.sqrt(2.0 * math.pi)))


def smoothing_cross_entropy(logits, labels, vocab_size, confidence, gaussian=False):
    """Cross-entropy against label-smoothed targets, minus its best possible value.

    The true label gets `confidence`, every other id (1 - confidence) / (vocab_size - 1).
    The constant subtracted is the entropy of those soft targets, so predicting them
    exactly gives 0 (it changes no gradient; it makes the loss readable).

        logits = tf.math.log([[0.8, 0.1, 0.1]])
        smoothing_cross_entropy(logits, tf.constant([0]), 3, confidence=0.8)   # [~0.0]

    With `gaussian`, the soft targets are a normal density centred on the label with
    standard deviation `confidence` (for ordinal vocabularies).
    """
    with tf.name_scope("smoothing_cross_entropy"):
        low_confidence = (1.0 - confidence) / to_float(vocab_size - 1)
        normalizing = -(confidence * tf.math.log(confidence) +
                        to_float(vocab_size - 1) * low_confidence *
                        tf.math.log(low_confidence + 1e-20))
        if gaussian and confidence > 0.0:
            soft_targets = _gaussian_soft_targets(labels, vocab_size, confidence)
        else:
            soft_targets = tf.one_hot(tf.cast(labels, tf.int32), depth=vocab_size,
                                      on_value=confidence, off_value=low_confidence)
        xentropy = tf.nn.softmax_cross_entropy_with_logits(logits=logits,
                                                           labels=soft_targets)
        return xentropy - normalizing


def padded_cross_entropy(logits, labels, label_smoothing, weights_fn=weights_nonzero,
                         reduce_sum=True, cutoff=0.0, gaussian=False):
    """Label-smoothed cross-entropy that ignores padding: (sum of loss, sum of weights).

    Args:
      logits: [batch, length, ..., vocab_size] (e.g. [B, L, 1, 1, V] from a symbol top).
      labels: int ids [batch, length, ...] (e.g. [B, L, 1, 1]); lengths may differ from
        the logits', both are zero-padded to the longer one.
      label_smoothing: 0.0 for plain cross-entropy; T2T's default is 0.1.
      weights_fn: labels -> float weights (weights_nonzero ignores id 0).
      reduce_sum: False returns the per-position (loss * weights, weights) instead.
      cutoff: losses below this are treated as 0 (relu(loss - cutoff)).
      gaussian: smooth with a normal density around the label instead of uniformly.
    """
    confidence = 1.0 - label_smoothing
    logits_shape = shape_list(logits)
    vocab_size = logits_shape[-1]
    with tf.name_scope("padded_cross_entropy"):
        if len(logits_shape) == 2:
            # Flat [N, V] logits (no spatial axes): labels must hold N ids.
            labels = tf.reshape(labels, [-1])
        else:
            logits, labels = pad_with_zeros(logits, labels)
        logits = tf.reshape(logits, shape_list(labels) + [vocab_size],
                            name="padded_cross_entropy_size_check")
        logits = tf.cast(logits, tf.float32)
        xent = smoothing_cross_entropy(logits, labels, vocab_size, confidence,
                                       gaussian=gaussian)
        weights = weights_fn(labels)
        if cutoff > 0.0:
            xent = tf.nn.relu(xent - cutoff)
        if not reduce_sum:
            return xent * weights, weights
        return tf.reduce_sum(xent * weights), tf.reduce_sum(weights)
