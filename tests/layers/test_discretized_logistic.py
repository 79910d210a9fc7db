"""dml_loss against the discretized mixture of logistics computed in numpy."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import discretized_logistic


def logistic_cdf(z):
    return 1 / (1 + np.exp(-z))


def np_pixel_nll(params, pixel):
    """-log p(pixel) of one pixel (3 ints 0..255) under params [10 * M], by the definition:
    per mixture, each channel's logistic mass over its bin, the edge bins open-ended."""
    m = params.size // 10
    logits = params[:m]
    locs, log_scales, coeffs = (params[m + 3 * m * j:m + 3 * m * (j + 1)].reshape(m, 3)
                                for j in range(3))
    log_scales = np.maximum(log_scales, -7.0)
    coeffs = np.tanh(coeffs)
    x = pixel / 127.5 - 1.0
    log_mix = logits - np.log(np.exp(logits).sum())
    total = 0.0
    for k in range(m):
        means = [locs[k, 0], locs[k, 1] + coeffs[k, 0] * x[0],
                 locs[k, 2] + coeffs[k, 1] * x[0] + coeffs[k, 2] * x[1]]
        prob = np.exp(log_mix[k])
        for c in range(3):
            inv_s = np.exp(-log_scales[k, c])
            upper = 1.0 if pixel[c] == 255 else logistic_cdf(inv_s * (x[c] - means[c] + 1 / 255))
            lower = 0.0 if pixel[c] == 0 else logistic_cdf(inv_s * (x[c] - means[c] - 1 / 255))
            prob *= upper - lower
        total += prob
    return -np.log(total)


def test_dml_loss_matches_the_numpy_definition():
    assert common_layers.dml_loss is discretized_logistic.dml_loss
    rng = np.random.RandomState(0)
    pred = (rng.randn(1, 2, 3, 20) * 0.5).astype(np.float32)   # 2 mixtures
    pixels = rng.randint(0, 256, size=(1, 2, 3, 3))
    pixels[0, 0, 0] = [0, 255, 128]                            # the edge bins
    num, den = discretized_logistic.dml_loss(tf.constant(pred), tf.constant(pixels),
                                             reduce_sum=False)
    expected = np.array([[[np_pixel_nll(pred[0, h, w], pixels[0, h, w]) for w in range(3)]
                          for h in range(2)]])
    np.testing.assert_allclose(num.numpy(), expected / 3.0, rtol=1e-4)
    np.testing.assert_array_equal(den.numpy(), np.ones([1, 2, 3]))
    total, count = discretized_logistic.dml_loss(tf.constant(pred), tf.constant(pixels))
    assert total.numpy() == pytest.approx(expected.sum() / 3.0, rel=1e-4)
    assert count.numpy() == 6


def test_samples_lie_in_range_and_follow_a_sharp_mixture():
    pred = np.zeros([1, 1, 1, 10], np.float32)
    pred[..., 1:4] = [0.5, -0.5, 0.0]      # locations
    pred[..., 4:7] = -7.0                  # tiny scales
    sample = discretized_logistic.sample_from_discretized_mix_logistic(
        tf.constant(pred), seed=3).numpy()
    # Coefficients tanh(0) = 0: each channel is its location.
    np.testing.assert_allclose(sample[0, 0, 0], [0.5, -0.5, 0.0], atol=0.05)
