"""RestoreHook: variables under a new scope start from another checkpoint's values, in a
tf.compat.v1 MonitoredSession and (where tf.estimator exists) in Estimator training."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import backend_choice
from t2t.training.restore_hook import RestoreHook, variables_to_restore

_v1 = tf.compat.v1
W = np.arange(6, dtype=np.float32).reshape(2, 3)


def _teacher_checkpoint(tmp_path):
    with tf.Graph().as_default():
        with _v1.variable_scope("teacher"):
            _v1.get_variable("body/w", initializer=W)
            _v1.get_variable("top/b", initializer=np.full([3], 5.0, np.float32))
        with _v1.Session() as sess:
            sess.run(_v1.global_variables_initializer())
            return _v1.train.Saver().save(sess, str(tmp_path / "teacher" / "model.ckpt"))


def _student_variables():
    with _v1.variable_scope("student"):
        with _v1.variable_scope("teacher"):
            w = _v1.get_variable("body/w", [2, 3], initializer=_v1.zeros_initializer())
            b = _v1.get_variable("top/b", [3], initializer=_v1.zeros_initializer())
        own = _v1.get_variable("own", [1], initializer=_v1.ones_initializer())
    return w, b, own


def test_restores_mapped_scopes_in_a_monitored_session(tmp_path):
    checkpoint = _teacher_checkpoint(tmp_path)
    with tf.Graph().as_default():
        w, b, own = _student_variables()
        assert [v.op.name for v in variables_to_restore(exclude=["student/teacher/top"])] == [
            "student/teacher/body/w", "student/own"]
        hook = RestoreHook(checkpoint, new_model_scope="student/", old_model_scope="teacher/",
                           exclude=["student/teacher/top"])
        with _v1.train.SingularMonitoredSession(hooks=[hook]) as sess:
            values = sess.run([w, b, own])
    np.testing.assert_array_equal(values[0], W)
    np.testing.assert_array_equal(values[1], np.zeros(3))  # excluded: its own initializer
    np.testing.assert_array_equal(values[2], [1.0])       # not in the old scope
    with pytest.raises(TypeError, match="include is provided but is not a list"):
        variables_to_restore(include="student")


@pytest.mark.skipif(not backend_choice.estimator_available(), reason="needs tf.estimator")
def test_restores_in_estimator_training(tmp_path):
    checkpoint = _teacher_checkpoint(tmp_path)

    def model_fn(features, labels, mode):
        w, _, _ = _student_variables()
        loss = tf.reduce_sum(w) * 0.0
        step = _v1.train.get_or_create_global_step()
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=_v1.assign_add(step, 1))

    estimator = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "student"))
    hook = RestoreHook(checkpoint, "student/", "teacher/", include=["student/teacher/body"])
    estimator.train(lambda: tf.data.Dataset.from_tensors((0, 0)).repeat(), steps=1,
                    hooks=[hook])
    np.testing.assert_array_equal(estimator.get_variable_value("student/teacher/body/w"), W)
    np.testing.assert_array_equal(estimator.get_variable_value("student/teacher/top/b"),
                                  np.zeros(3))
