"""The discretized mixture of logistics over RGB pixels (PixelCNN++), T2T 1.15.7's
`dml_loss` and its parts (re-exported by `common_layers`; the loss of
`disc_mol_neg_log_perplexity`).

pred [batch, height, width, 10 * num_mixtures] holds, per mixture: one logit, three
locations, three log scales and three channel coefficients; pixels are 0..255, rescaled
to [-1, 1]. Each channel's probability is the logistic CDF over its 1/255-wide bin (the
edge bins take the tails), the channel means depending linearly on the earlier channels.

    num, den = dml_loss(pred, labels)   # labels [batch, height, width, 3] ints 0..255
    # num / den: nats per channel of each pixel (den counts pixels, weight 1/3 each)
"""
import numpy as np
import tensorflow as tf

from t2t.layers.losses import weights_nonzero
from t2t.layers.shape_utils import shape_list, to_float


def split_to_discretized_mix_logistic_params(inputs):
    """(logits [B, H, W, M], locs, log_scales (>= -7), coeffs (tanh)) [B, H, W, M, 3]."""
    batch, height, width, output_dim = shape_list(inputs)
    num_mixtures = output_dim // 10
    logits, locs, log_scales, coeffs = tf.split(
        inputs, num_or_size_splits=[num_mixtures, num_mixtures * 3, num_mixtures * 3,
                                    num_mixtures * 3], axis=-1)
    split_shape = [batch, height, width, num_mixtures, 3]
    locs = tf.reshape(locs, split_shape)
    log_scales = tf.maximum(tf.reshape(log_scales, split_shape), -7.)
    coeffs = tf.tanh(tf.reshape(coeffs, split_shape))
    return logits, locs, log_scales, coeffs


def discretized_mix_logistic_loss(pred, labels):
    """-log p(pixel) [B, H, W] for labels [B, H, W, 3] rescaled to [-1, 1]."""
    logits, locs, log_scales, coeffs = split_to_discretized_mix_logistic_params(pred)
    batch, height, width, num_mixtures = shape_list(logits)
    labels = tf.tile(tf.reshape(labels, [batch, height, width, 1, 3]),
                     [1, 1, 1, num_mixtures, 1])
    # Channel c's mean: its location plus coefficients times the earlier channels' values.
    means_0 = locs[..., 0]
    means_1 = locs[..., 1] + coeffs[..., 0] * labels[..., 0]
    means_2 = locs[..., 2] + coeffs[..., 1] * labels[..., 0] + coeffs[..., 2] * labels[..., 1]
    means = tf.stack([means_0, means_1, means_2], axis=-1)
    centered_labels = labels - means
    inv_stdv = tf.exp(-log_scales)
    plus_in = inv_stdv * (centered_labels + 1. / 255.)
    min_in = inv_stdv * (centered_labels - 1. / 255.)
    cdf_plus = tf.nn.sigmoid(plus_in)
    cdf_min = tf.nn.sigmoid(min_in)
    log_prob_0 = plus_in - tf.nn.softplus(plus_in)      # bin of 0: all mass below
    log_prob_255 = -tf.nn.softplus(min_in)               # bin of 255: all mass above
    prob_event = tf.maximum(cdf_plus - cdf_min, 1e-12)
    log_prob_event = tf.math.log(prob_event)
    # Where the bin's mass underflows, the density at its centre times the bin width.
    mid_in = inv_stdv * centered_labels
    log_prob_event_approx = (mid_in - log_scales - 2. * tf.nn.softplus(mid_in) -
                             np.log(127.5))
    log_probs = tf.where(labels < -0.999, log_prob_0,
                         tf.where(labels > 0.999, log_prob_255,
                                  tf.where(prob_event > 1e-5, log_prob_event,
                                           log_prob_event_approx)))
    log_probs = tf.reduce_sum(log_probs, -1) + tf.nn.log_softmax(logits, axis=-1)
    return -tf.reduce_logsumexp(log_probs, axis=-1)


def _weights_one_third(labels):
    """1/3 per pixel, [B, H, W]: the loss then averages over the three channels."""
    return tf.ones(tf.shape(labels)[:-1]) / 3.


def dml_loss(pred, labels, weights_fn=_weights_one_third, reduce_sum=True):
    """(weights * -log p(pixel), non-zero weights) for pixel labels 0..255 [B, H, W, 3]:
    scalars, or [B, H, W] when not reduce_sum."""
    real_labels = to_float(labels) / 127.5 - 1.0  # 0..255 -> -1..1
    dml_loss_value = discretized_mix_logistic_loss(pred=pred, labels=real_labels)
    weights = weights_fn(labels)
    loss_num = weights * dml_loss_value
    loss_den = weights_nonzero(weights)
    if reduce_sum:
        return tf.reduce_sum(loss_num), tf.reduce_sum(loss_den)
    return loss_num, loss_den


def sample_from_discretized_mix_logistic(pred, seed=None):
    """A sample [B, H, W, 3] in [-1, 1]: a mixture by the Gumbel-max trick, then logistic
    noise per channel (not rounded to the 256 levels)."""
    logits, locs, log_scales, coeffs = split_to_discretized_mix_logistic_params(pred)
    num_mixtures = shape_list(logits)[-1]
    gumbel_noise = -tf.math.log(-tf.math.log(tf.random.uniform(
        tf.shape(logits), minval=1e-5, maxval=1. - 1e-5, seed=seed)))
    sel = tf.one_hot(tf.argmax(logits + gumbel_noise, -1), depth=num_mixtures,
                     dtype=tf.float32)
    sel = tf.expand_dims(sel, -1)
    locs = tf.reduce_sum(locs * sel, 3)
    log_scales = tf.reduce_sum(log_scales * sel, 3)
    coeffs = tf.reduce_sum(coeffs * sel, 3)
    uniform_noise = tf.random.uniform(tf.shape(locs), minval=1e-5, maxval=1. - 1e-5,
                                      seed=seed)
    logistic_noise = tf.math.log(uniform_noise) - tf.math.log1p(-uniform_noise)
    x = locs + tf.exp(log_scales) * logistic_noise
    x0 = x[..., 0]
    x1 = x[..., 1] + coeffs[..., 0] * x0
    x2 = x[..., 2] + coeffs[..., 1] * x0 + coeffs[..., 2] * x1
    return tf.clip_by_value(tf.stack([x0, x1, x2], axis=-1), -1., 1.)
