"""FactoredTensor equals its product; the factored cross-entropy equals the ordinary one,
values and gradients."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import factored
from t2t.layers import losses

RNG = np.random.RandomState(0)
A = RNG.randn(2, 5, 4).astype(np.float32)
B = RNG.randn(7, 4).astype(np.float32)
LABELS = np.array([[3, 1, 6, 0, 0], [2, 2, 5, 4, 0]], np.int32)


def test_to_tensor_is_the_product_and_converts_implicitly():
    assert common_layers.FactoredTensor is factored.FactoredTensor
    logits = factored.FactoredTensor(tf.constant(A), tf.constant(B))
    np.testing.assert_allclose(logits.to_tensor().numpy(), A @ B.T, rtol=1e-5)
    np.testing.assert_allclose(tf.convert_to_tensor(logits).numpy(), A @ B.T, rtol=1e-5)
    np.testing.assert_allclose((tf.identity(logits) * 1.0).numpy(), A @ B.T, rtol=1e-5)
    with tf.Graph().as_default():
        a = tf.compat.v1.placeholder(tf.float32, [None, 5, 4])
        assert factored.FactoredTensor(a, tf.constant(B)).to_tensor().shape.as_list() == [
            None, 5, 7]


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_factored_cross_entropy_equals_padded_cross_entropy(smoothing):
    a, b = tf.constant(A), tf.constant(B)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        num, den = factored.padded_cross_entropy_factored(
            factored.FactoredTensor(a, b), tf.constant(LABELS), smoothing)
        logits = tf.matmul(a, b, transpose_b=True)
        ref_num, ref_den = losses.padded_cross_entropy(logits, tf.constant(LABELS), smoothing)
    assert num.numpy() == pytest.approx(ref_num.numpy(), rel=1e-5)
    assert den.numpy() == ref_den.numpy() == 7
    for got, want in zip(tape.gradient(num, [a, b]), tape.gradient(ref_num, [a, b])):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-6)
    per_position, weights = factored.padded_cross_entropy_factored(
        factored.FactoredTensor(a, b), tf.constant(LABELS), smoothing, reduce_sum=False)
    assert per_position.shape == (2, 5) and (per_position.numpy()[LABELS == 0] == 0).all()
