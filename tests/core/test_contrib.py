"""t2t.core.contrib: T2T's `tf.contrib` stand-ins on TensorFlow 2."""
import pytest
import tensorflow as tf

from t2t.core import contrib


class _AddTest(tf.test.TestCase):
    modes = []

    @contrib.tfe().run_test_in_graph_and_eager_modes()
    def test_add(self):
        _AddTest.modes.append(tf.executing_eagerly())
        self.assertAllEqual([4, 6], self.evaluate(tf.add([1, 2], [3, 4])))


_AddTest.__test__ = False  # run below, not collected on its own


def test_tfe_runs_a_test_in_a_graph_and_eagerly():
    _AddTest.modes = []
    result = _AddTest("test_add").run()
    assert result.wasSuccessful(), result.failures + result.errors
    assert sorted(_AddTest.modes) == [False, True]
    assert contrib.eager is contrib.tfe and contrib.is_tf2


def test_framework_stand_in():
    framework = contrib.framework()
    assert framework.nest is tf.nest and framework.arg_scope is None
    assert framework.deprecated("old", "2019-01-01")(len) is len
    with tf.Graph().as_default(), tf.name_scope("outer"):
        assert framework.get_name_scope() == "outer"


@pytest.mark.parametrize("name", ["rnn", "seq2seq", "slim", "tpu", "image"])
def test_parts_without_a_tf2_counterpart_raise_import_error(name):
    with pytest.raises(ImportError, match=r"tf\.contrib\.%s is not in TensorFlow 2" % name):
        getattr(contrib, name)()
    with pytest.raises(ImportError, match="contrib is unavailable in tf2"):
        contrib.err_if_tf2()
    contrib.err_if_tf2("warn")
