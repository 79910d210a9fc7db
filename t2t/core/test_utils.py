"""T2T's test decorators (`tensor2tensor.utils.test_utils`, also `t2t.utils.test_utils`).

Ported T2T test suites (`problem_test` and kin) run their `tf.test.TestCase` methods once
eagerly and once in a graph with a session, or only in a graph:

    class AddTest(tf.test.TestCase):

        @test_utils.run_in_graph_and_eager_modes()
        def test_add(self):
            self.assertAllEqual([4, 6], self.evaluate(tf.add([1, 2], [3, 4])))

        @test_utils.run_in_graph_mode_only
        def test_feed(self):
            x = tf.compat.v1.placeholder(tf.int32, [2])
            session = tf.compat.v1.get_default_session()
            self.assertAllEqual([2, 4], session.run(x * 2, {x: [1, 2]}))

    if __name__ == "__main__":
        test_utils.test_main()

Each decorator works bare (`@run_in_graph_mode_only`) or called
(`@run_in_graph_and_eager_modes(config=..., use_gpu=False)`). Before the graph run the
test's `tearDown` and then `setUp` are called, as in T2T 1.15.7.
"""
import functools

import tensorflow as tf


def _in_graph_with_session(test, method, config, use_gpu, args, kwargs):
    """`method` with a fresh default graph and a session on it (TF1 style)."""
    with tf.Graph().as_default():
        test.setUp()
        with test.session(config=config, use_gpu=use_gpu):
            method(test, *args, **kwargs)


def _decorator_or_decorated(func, make):
    return make(func) if func is not None else make


def run_in_graph_and_eager_modes(func=None, config=None, use_gpu=True):
    """Runs a test method eagerly, then again in a graph with a session.

    Must be used while eager execution is on (TensorFlow 2's default); `config` is the
    session's ConfigProto and `use_gpu` lets ops run on a GPU in the graph run.
    """
    def make(method):
        @functools.wraps(method)
        def decorated(self, *args, **kwargs):
            if not tf.executing_eagerly():
                raise ValueError("Must be executing eagerly when using the "
                                 "run_in_graph_and_eager_modes decorator.")
            method(self, *args, **kwargs)
            self.tearDown()
            _in_graph_with_session(self, method, config, use_gpu, args, kwargs)
        return decorated

    return _decorator_or_decorated(func, make)


def run_in_graph_mode_only(func=None, config=None, use_gpu=True):
    """Runs a test method only in a graph with a session (eager is on by default)."""
    def make(method):
        @functools.wraps(method)
        def decorated(self, *args, **kwargs):
            self.tearDown()
            _in_graph_with_session(self, method, config, use_gpu, args, kwargs)
        return decorated

    return _decorator_or_decorated(func, make)


def test_main():
    """`tf.test.main()` with eager execution on (T2T's test modules end with it)."""
    tf.compat.v1.enable_eager_execution()
    tf.test.main()


test_main.__test__ = False  # a helper named test_*, not a test for pytest to collect
