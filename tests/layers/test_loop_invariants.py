"""Values built once outside a while loop (`loop_invariants`), and the 2-D dense layer."""
import numpy as np
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import loop_invariants

_v1 = tf.compat.v1


def _loop_sum(hoist):
    """sum over 3 steps of sum(concat([a, b])), the concat built by loop_invariant."""
    built_in = []
    graph = tf.Graph()
    with graph.as_default():
        a = tf.constant([1.0, 2.0])
        b = tf.constant([3.0])

        def body(i, total):
            def build():
                built_in.append(_v1.get_default_graph())
                return tf.concat([a, b], 0)
            # Asked twice a step: built once.
            first = loop_invariants.loop_invariant("ab", build)
            second = loop_invariants.loop_invariant("ab", build)
            return i + 1, total + tf.reduce_sum(first) + tf.reduce_sum(second)

        def run():
            return _v1.while_loop(lambda i, total: i < 3, body, [0, 0.0])[1]

        if hoist:
            with loop_invariants.hoisting_into(graph):
                total = run()
        else:
            total = run()
        with _v1.Session(graph=graph) as session:
            return session.run(total), built_in, graph


def test_loop_invariant_is_built_once_in_the_outer_graph():
    total, built_in, graph = _loop_sum(hoist=True)
    assert total == 36.0
    assert built_in == [graph]


def test_without_hoisting_the_value_is_built_where_asked():
    total, built_in, graph = _loop_sum(hoist=False)
    assert total == 36.0
    assert len(built_in) == 2 and graph not in built_in  # twice, in the loop body


def test_hoisting_ends_with_its_block():
    graph = tf.Graph()
    with graph.as_default():
        with loop_invariants.hoisting_into(graph):
            pass
        first = loop_invariants.loop_invariant("x", lambda: tf.constant(1.0))
        second = loop_invariants.loop_invariant("x", lambda: tf.constant(1.0))
    assert first is not second


def test_dense_on_3d_inputs_equals_tensordot_bit_for_bit():
    rng = np.random.RandomState(0)
    value = rng.randn(5, 7, 16).astype(np.float32)
    with tf.Graph().as_default():
        x = _v1.placeholder(tf.float32, [None, None, 16])
        y = common_layers.dense(x, 24, name="proj")
        with _v1.variable_scope("proj", reuse=True):
            kernel = _v1.get_variable("kernel")
            bias = _v1.get_variable("bias")
        reference = tf.nn.bias_add(tf.tensordot(x, kernel, [[2], [0]]), bias)
        static = common_layers.dense(tf.zeros([2, 3, 16]), 24, name="static")
        assert y.shape.as_list() == [None, None, 24]
        assert static.shape.as_list() == [2, 3, 24]
        with _v1.Session() as session:
            session.run(_v1.global_variables_initializer())
            session.run(bias.assign(rng.randn(24).astype(np.float32)))
            got, want = session.run([y, reference], {x: value})
    assert got.shape == (5, 7, 24)
    np.testing.assert_array_equal(got, want)
