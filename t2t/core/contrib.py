"""T2T's `tensor2tensor.utils.contrib` (also `t2t.utils.contrib`): `tf.contrib` stand-ins as
T2T 1.15.7 gave them on TensorFlow 2 (`is_tf2` is True).

    from t2t.core import contrib
    tfe = contrib.tfe()

    class AddTest(tf.test.TestCase):
        @tfe.run_test_in_graph_and_eager_modes()
        def test_add(self):
            self.assertAllEqual([4, 6], self.evaluate(tf.add([1, 2], [3, 4])))

`tfe()`/`eager()` give TF 2's `run_test_in_graph_and_eager_modes` (T2T's raised ImportError
on TF 2); `framework()` is T2T's TF 2 stand-in. The parts of `tf.contrib` that have no
TensorFlow 2 counterpart (`util`, `nn`, `rnn`, `seq2seq`, `tpu`, `training`, `summary`,
`metrics`, `mixed_precision`, `cluster_resolver`, `distribute`, `tf_prof`, `image`, and
`slim`, `layers`, `opt`, `learn`, which needed tf_slim, tensorflow_addons or the Estimator)
raise ImportError, as T2T's did.
"""
import types

import tensorflow as tf
from tensorflow.python.framework import test_util

is_tf2 = True


def err_if_tf2(msg="err"):
    """ImportError ("contrib is unavailable in tf2."); with any other `msg`, nothing."""
    if msg == "err":
        raise ImportError("contrib is unavailable in tf2.")


def deprecated(reason, date):
    """A decorator that leaves the function as it is."""
    del reason, date
    return lambda fn: fn


def tfe():
    """TF 2's counterparts of `tf.contrib.eager` for tests."""
    return types.SimpleNamespace(
        run_test_in_graph_and_eager_modes=test_util.run_in_graph_and_eager_modes,
        run_all_tests_in_graph_and_eager_modes=(
            test_util.run_all_in_graph_and_eager_modes),
        in_graph_mode=lambda: not tf.executing_eagerly(),
        in_eager_mode=tf.executing_eagerly,
        executing_eagerly=tf.executing_eagerly,
        Variable=tf.Variable,
        defun=tf.function)


eager = tfe


def framework(msg="err"):
    """T2T's TF 2 stand-in for `tf.contrib.framework`."""
    del msg
    return types.SimpleNamespace(
        arg_scope=None,
        get_name_scope=lambda: tf.compat.v1.get_default_graph().get_name_scope(),
        name_scope=tf.name_scope, deprecated=deprecated, nest=tf.nest, argsort=tf.argsort)


def _unavailable(name):
    def unavailable():
        raise ImportError("tf.contrib.%s is not in TensorFlow 2 (contrib is unavailable in "
                          "tf2.)" % name)
    unavailable.__name__ = name
    unavailable.__doc__ = "ImportError: tf.contrib.%s has no TensorFlow 2 counterpart." % name
    return unavailable


util, nn, rnn, seq2seq, tpu, training, summary, metrics, mixed_precision = map(
    _unavailable, ("util", "nn", "rnn", "seq2seq", "tpu", "training", "summary", "metrics",
                   "mixed_precision"))
cluster_resolver, distribute, tf_prof, image, slim, layers, opt, learn = map(
    _unavailable, ("cluster_resolver", "distribute", "tf_prof", "image", "slim", "layers",
                   "opt", "learn"))
