"""losses: T2T's multi-problem token weights against hand-computed rows."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import losses

TASK = 9
# Row 0: inputs 5 6, task id, targets 7 1, padding. Row 1: another task's row (no 9).
LABELS = tf.constant([[5, 6, TASK, 7, 1, 0], [5, 6, 4, 7, 1, 0]])


def test_weights_multi_problem_weights_targets_after_the_task_id():
    np.testing.assert_array_equal(losses.weights_multi_problem(LABELS, TASK).numpy(),
                                  [[0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 0, 0]])


def test_weights_multi_problem_all_and_input():
    np.testing.assert_array_equal(losses.weights_multi_problem_all(LABELS, TASK).numpy(),
                                  [[1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(losses.weights_multi_problem_input(LABELS, TASK).numpy(),
                                  [[1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0]])
    assert common_layers.weights_multi_problem_input is losses.weights_multi_problem_input


def test_a_negative_task_id_is_refused():
    with pytest.raises(ValueError, match="task id must be >= 0"):
        losses.weights_multi_problem(LABELS)
    with pytest.raises(tf.errors.InvalidArgumentError):
        losses.check_nonnegative(tf.constant(-1))
    assert losses.check_nonnegative(tf.constant(3)).numpy() == 3
