"""fn_with_custom_grad: the forward values are fn's, the gradients grad_fn's."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import custom_gradients

v1 = tf.compat.v1


def triple_grad(inputs, variables, outputs, output_grads):
    del inputs, variables, outputs
    return [output_grads[0] * 3.0], []


def test_custom_gradient_replaces_the_true_one_eagerly():
    assert common_layers.fn_with_custom_grad is custom_gradients.fn_with_custom_grad
    square = custom_gradients.fn_with_custom_grad(triple_grad)(tf.square)
    x = tf.constant([1., 2.])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = square(x)
    np.testing.assert_array_equal(y.numpy(), [1., 4.])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3., 3.])


def test_custom_gradient_reaches_the_variables_fn_creates_in_a_graph():
    def grad_fn(inputs, variables, outputs, output_grads):
        assert [v.op.name for v in variables] == ["w"]
        # The true gradients, computed from fn's own outputs, then scaled by 10.
        grads = tf.gradients(outputs, inputs + variables, output_grads)
        return [grads[0] * 10.0], [grads[1] * 10.0]

    @custom_gradients.fn_with_custom_grad(grad_fn)
    def scale(x):
        w = v1.get_variable("w", [], initializer=v1.constant_initializer(2.0))
        return x * w

    with tf.Graph().as_default():
        x = tf.constant([1., 3.])
        y = scale(x)
        grads = tf.gradients(tf.reduce_sum(y), [x] + v1.trainable_variables())
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            y, (dx, dw) = sess.run([y, grads])
    np.testing.assert_array_equal(y, [2., 6.])
    np.testing.assert_array_equal(dx, [20., 20.])   # 10 * w
    assert dw == pytest.approx(40.0)                 # 10 * sum(x)


def test_no_grad_fn_leaves_fn_unchanged_and_wrong_counts_are_refused():
    assert custom_gradients.fn_with_custom_grad(None)(tf.square)(tf.constant(3.)).numpy() == 9.
    bad = custom_gradients.fn_with_custom_grad(lambda i, v, o, d: ([], []))(tf.square)
    x = tf.constant(2.)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = bad(x)
    with pytest.raises(ValueError, match="returned 0 input and 0 variable gradients"):
        tape.gradient(y, x)


def test_recompute_grad_gives_the_true_gradients_and_recomputes_in_the_backward_pass():
    x_np = np.random.RandomState(0).randn(3, 4).astype(np.float32)

    def block(x):
        w = v1.get_variable("w", [4, 5])
        return tf.nn.relu(tf.matmul(x, w)) * 2.0

    def gradients(fn):
        with tf.Graph().as_default():
            v1.set_random_seed(1)
            x = tf.constant(x_np)
            with v1.variable_scope("block"):
                y = fn(x)
            before = len(tf.compat.v1.get_default_graph().get_operations())
            grads = tf.gradients(tf.reduce_sum(tf.square(y)), [x] + v1.trainable_variables())
            matmuls = [op for op in tf.compat.v1.get_default_graph().get_operations()[before:]
                       if op.type == "MatMul"]
            assert [v.op.name for v in v1.trainable_variables()] == ["block/w"]
            with v1.Session() as sess:
                sess.run(v1.global_variables_initializer())
                return sess.run([y, grads]), len(matmuls)

    (y, grads), plain_matmuls = gradients(block)
    (y_re, grads_re), recomputed_matmuls = gradients(custom_gradients.recompute_grad(block))
    assert common_layers.recompute_grad is custom_gradients.recompute_grad
    np.testing.assert_allclose(y_re, y, rtol=1e-6)
    for got, want in zip(grads_re, grads):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert recomputed_matmuls == plain_matmuls + 1  # the forward matmul, again
