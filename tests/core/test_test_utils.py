"""T2T's test decorators: a decorated tf.test.TestCase method runs eagerly and then in a
graph with a session (or only in a graph), with setUp/tearDown around the graph run, and
its failures are reported."""
import unittest

import pytest
import tensorflow as tf

from t2t.core import test_utils
from t2t.utils import test_utils as t2t_path


def make_case(runs):
    class Decorated(tf.test.TestCase):

        def setUp(self):
            super().setUp()
            runs.append("setUp")

        def tearDown(self):
            runs.append("tearDown")
            super().tearDown()

        @test_utils.run_in_graph_and_eager_modes()
        def test_add(self):
            mode = "eager" if tf.executing_eagerly() else "graph"
            runs.append((mode, self.evaluate(tf.add([1, 2], [3, 4])).tolist()))

        @test_utils.run_in_graph_mode_only
        def test_feed(self):
            x = tf.compat.v1.placeholder(tf.int32, [2])
            runs.append(("feed", tf.compat.v1.get_default_session().run(
                x * 2, {x: [1, 2]}).tolist()))

        @test_utils.run_in_graph_and_eager_modes
        def test_fails_in_graph(self):
            self.assertTrue(tf.executing_eagerly())

    return Decorated


def run(case, name):
    result = unittest.TestResult()
    case(name).run(result)
    return result


def test_graph_and_eager_runs_twice_with_setup_and_teardown():
    runs = []
    case = make_case(runs)
    assert run(case, "test_add").wasSuccessful()
    assert runs == ["setUp", ("eager", [4, 6]), "tearDown", "setUp", ("graph", [4, 6]),
                    "tearDown"]
    runs.clear()
    assert run(case, "test_feed").wasSuccessful()
    assert runs == ["setUp", "tearDown", "setUp", ("feed", [2, 4]), "tearDown"]
    failed = run(case, "test_fails_in_graph")
    assert len(failed.failures) == 1 and "False is not true" in failed.failures[0][1]


def test_needs_eager_outside_and_test_main(monkeypatch):
    case = make_case([])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Must be executing eagerly"):
            case("test_add").test_add()
    calls = []
    monkeypatch.setattr(tf.test, "main", lambda: calls.append(tf.executing_eagerly()))
    t2t_path.test_main()
    assert calls == [True] and t2t_path is test_utils
