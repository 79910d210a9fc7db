"""Adafactor (Shazeer & Stern 2018, arXiv:1804.04235), as T2T 1.15.7's `utils/adafactor.py`.

Adam-like updates with little memory: for a variable of shape [..., R, C] the second
moment is kept as row means `vr` [..., R] and column means `vc` [..., C] instead of a full
[..., R, C] tensor, and the first moment is optional (beta1 = 0 by default).

One step on a variable `x` with gradient `g` (all in float32):

    g2 = g**2 + epsilon1
    vr = decay * vr + (1 - decay) * mean(g2, axis=-1)          # factored, rank >= 2
    vc = decay * vc + (1 - decay) * mean(g2, axis=-2)
    u  = g / sqrt(vr / mean(vr) (x) vc)                          # (x) = outer product
    # (unfactored: v = decay * v + (1 - decay) * g2;  u = g / sqrt(v))
    u /= max(1, rms(u) / clipping_threshold)                     # update clipping
    step = learning_rate * max(rms(x), epsilon2) * u             # relative step size
    m = beta1 * m + (1 - beta1) * step  (if beta1);  x -= m or step

Example: for a [3, 4] variable the slots are "vr" [3] and "vc" [4]; a [4] bias gets "v" [4].

`adafactor_optimizer_from_hparams(hparams, lr)` builds one from the `optimizer_adafactor_*`
hparams; decay "pow" is `1 - (step + 1)**-memory_exponent`, decay "adam" is Adam's bias-
corrected `beta2 * (1 - beta2**(t-1)) / (1 - beta2**t)` with t = step + 1.
"""
import math

import tensorflow as tf


def step_num():
    """The global step as a float32 tensor."""
    return tf.cast(tf.compat.v1.train.get_or_create_global_step(), tf.float32)


def reduce_rms(x):
    """Root mean square of all entries: rms([3., 4.]) = sqrt(12.5) = 3.54."""
    return tf.sqrt(tf.reduce_mean(tf.square(x)))


def adafactor_decay_rate_adam(beta2):
    """Second-moment decay equal to Adam's with bias correction (0 at the first step)."""
    t = step_num() + 1.0
    return beta2 * (1.0 - tf.pow(beta2, t - 1.0)) / (1.0 - tf.pow(beta2, t))


def adafactor_decay_rate_pow(exponent):
    """Second-moment decay `1 - (step + 1)**-exponent` (0 at step 0, towards 1)."""
    return 1.0 - tf.pow(step_num() + 1.0, -exponent)


def quantization_noise_from_step_num():
    """A float32 in [0, 1): frac(phi * (step + 1)) with phi the golden ratio conjugate.

    A low-discrepancy sequence, identical on every replica (unlike a random draw), used as
    the rounding offset of `simulated_quantize`. Computed in float64 to stay exact.
    """
    phi = (math.sqrt(5.0) - 1.0) / 2.0
    step = tf.cast(tf.compat.v1.train.get_or_create_global_step(), tf.float64) + 1.0
    return tf.cast(tf.math.floormod(step * phi, 1.0), tf.float32)


def simulated_quantize(x, num_bits, noise):
    """Round `x` to `num_bits`-bit integers per last-axis row (scale kept in float), then back.

    Each row is scaled so its largest magnitude maps to 2**(num_bits-1) - 1, rounded down
    after adding `noise` in [0, 1) (stochastic-like rounding), and scaled back. Tensors of
    rank < 2 or with a last dimension of 1 are returned unchanged.
    """
    shape = x.shape.as_list()
    if not (len(shape) >= 2 and shape[-1] is not None and shape[-1] > 1):
        return x
    max_abs = tf.reduce_max(tf.abs(x), -1, keepdims=True) + 1e-9
    scale = max_abs / float(2 ** (num_bits - 1) - 1)
    return tf.floor(x / scale + noise) * scale


class AdafactorOptimizer(tf.compat.v1.train.Optimizer):
    """Adafactor as a `tf.compat.v1.train.Optimizer` (T2T's signature and defaults).

    Args:
      multiply_by_parameter_scale: scale steps by max(rms(variable), epsilon2) ("relative
        step size"), so `learning_rate` is a fraction of each variable's magnitude.
      learning_rate: float or scalar tensor; default `min(rsqrt(step + 1), 0.01)` (times
        0.05 when not multiplying by the parameter scale).
      decay_rate: second-moment decay, float or tensor; default
        `adafactor_decay_rate_pow(0.8)`.
      beta1: first-moment decay; 0 keeps no first moment (saves memory).
      clipping_threshold: update clipping threshold on rms(u), or None for no clipping.
      factored: keep factored second moments for variables of rank >= 2.
      simulated_quantize_bits: if set, updated values are quantized to this many bits.
      parameter_encoding: object with `encode(x, noise)` / `decode(x)` for variables stored
        in a compressed dtype (e.g. bfloat16); None stores new values cast to the dtype.
      epsilon1: added to squared gradients. epsilon2: lower bound of the parameter scale.
    """

    def __init__(self, multiply_by_parameter_scale=True, learning_rate=None, decay_rate=None,
                 beta1=0.0, clipping_threshold=1.0, factored=True,
                 simulated_quantize_bits=None, parameter_encoding=None, use_locking=False,
                 name="Adafactor", epsilon1=1e-30, epsilon2=1e-3):
        super().__init__(use_locking, name)
        self._multiply_by_parameter_scale = multiply_by_parameter_scale
        if learning_rate is None:
            learning_rate = self._learning_rate_default(multiply_by_parameter_scale)
        self._learning_rate = learning_rate
        if decay_rate is None:
            decay_rate = self._decay_rate_default()
        self._decay_rate = decay_rate
        self._beta1 = beta1
        self._clipping_threshold = clipping_threshold
        self._factored = factored
        self._simulated_quantize_bits = simulated_quantize_bits
        self._parameter_encoding = parameter_encoding
        self._epsilon1 = epsilon1
        self._epsilon2 = epsilon2

    def _should_use_factored_second_moment_estimate(self, shape):
        """Factored moments for rank >= 2 (e.g. [512, 2048] -> vr [512], vc [2048])."""
        return bool(self._factored) and len(shape) >= 2

    def _create_slots(self, var_list):
        for var in var_list:
            shape = var.shape.as_list()
            if self._beta1:
                self._zeros_slot(var, "m", self._name)
            if self._should_use_factored_second_moment_estimate(shape):
                row_init = tf.zeros(shape[:-1], dtype=tf.float32)
                col_init = tf.zeros(shape[:-2] + shape[-1:], dtype=tf.float32)
                self._get_or_make_slot(var, row_init, "vr", self._name)
                self._get_or_make_slot(var, col_init, "vc", self._name)
            else:
                self._get_or_make_slot(var, tf.zeros(shape, dtype=tf.float32), "v", self._name)

    def _parameter_scale(self, var):
        """max(rms(var), epsilon2): steps are relative to the variable's size."""
        return tf.maximum(reduce_rms(var), self._epsilon2)

    def _apply_dense(self, grad, var):
        return self._resource_apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        return self._apply_dense(tf.convert_to_tensor(grad), var)

    def _resource_apply_sparse(self, grad, handle, indices):
        dense = tf.convert_to_tensor(tf.IndexedSlices(grad, indices, tf.shape(handle)))
        return self._resource_apply_dense(dense, handle)

    def _resource_apply_dense(self, grad, handle):
        var = handle
        grad = tf.cast(grad, tf.float32)
        grad_squared = tf.square(grad) + self._epsilon1
        decay_rate = tf.cast(self._decay_rate, tf.float32)
        mixing_rate = 1.0 - decay_rate
        old_val = tf.convert_to_tensor(var)
        if self._parameter_encoding is not None:
            old_val = self._parameter_encoding.decode(old_val)
        old_val = tf.cast(old_val, tf.float32)
        update_scale = tf.cast(self._learning_rate, tf.float32)
        if self._multiply_by_parameter_scale:
            update_scale *= self._parameter_scale(old_val)
        shape = var.shape.as_list()
        updates = []
        if self._should_use_factored_second_moment_estimate(shape):
            vr = self.get_slot(var, "vr")
            vc = self.get_slot(var, "vc")
            new_vr = decay_rate * vr + mixing_rate * tf.reduce_mean(grad_squared, -1)
            new_vc = decay_rate * vc + mixing_rate * tf.reduce_mean(grad_squared, -2)
            updates += [tf.compat.v1.assign(vr, new_vr, use_locking=self._use_locking),
                        tf.compat.v1.assign(vc, new_vc, use_locking=self._use_locking)]
            # v_hat = vr (x) vc / mean(vr): rows normalised by their mean.
            row_factor = tf.math.rsqrt(new_vr / tf.reduce_mean(new_vr, -1, keepdims=True))
            col_factor = tf.math.rsqrt(new_vc)
            update = grad * tf.expand_dims(row_factor, -1) * tf.expand_dims(col_factor, -2)
        else:
            v = self.get_slot(var, "v")
            new_v = decay_rate * v + mixing_rate * grad_squared
            updates.append(tf.compat.v1.assign(v, new_v, use_locking=self._use_locking))
            update = grad * tf.math.rsqrt(new_v)
        if self._clipping_threshold is not None:
            update /= tf.maximum(1.0, reduce_rms(update) / self._clipping_threshold)
        subtrahend = update_scale * update
        if self._beta1:
            m = self.get_slot(var, "m")
            new_m = self._beta1 * tf.cast(m, tf.float32) + (1.0 - self._beta1) * subtrahend
            subtrahend = new_m
            updates.append(tf.compat.v1.assign(m, tf.cast(new_m, m.dtype),
                                               use_locking=self._use_locking))
        new_val = old_val - subtrahend
        if self._simulated_quantize_bits:
            new_val = simulated_quantize(new_val, self._simulated_quantize_bits,
                                         quantization_noise_from_step_num())
        if self._parameter_encoding is not None:
            new_val = self._parameter_encoding.encode(new_val, quantization_noise_from_step_num())
        new_val = tf.cast(new_val, var.dtype.base_dtype)
        var_update = tf.compat.v1.assign(var, new_val, use_locking=self._use_locking)
        return tf.group(var_update, *updates)

    def _decay_rate_default(self):
        return adafactor_decay_rate_pow(0.8)

    def _learning_rate_default(self, multiply_by_parameter_scale):
        learning_rate = tf.minimum(tf.math.rsqrt(step_num() + 1.0), 0.01)
        if not multiply_by_parameter_scale:
            learning_rate *= 0.05
        return learning_rate


def adafactor_optimizer_from_hparams(hparams, lr):
    """An AdafactorOptimizer from `hparams.optimizer_adafactor_*` with learning rate `lr`.

    Example: basic_params1 gives decay "pow" with exponent 0.8, beta1 0, clipping 1.0,
    factored moments and relative step sizes.
    """
    decay_type = hparams.optimizer_adafactor_decay_type
    if decay_type == "adam":
        decay_rate = adafactor_decay_rate_adam(hparams.optimizer_adafactor_beta2)
    elif decay_type == "pow":
        decay_rate = adafactor_decay_rate_pow(hparams.optimizer_adafactor_memory_exponent)
    else:
        raise ValueError("unknown optimizer_adafactor_decay_type %r; use 'adam' or 'pow'" %
                         (decay_type,))
    return AdafactorOptimizer(
        multiply_by_parameter_scale=hparams.optimizer_adafactor_multiply_by_parameter_scale,
        learning_rate=lr,
        decay_rate=decay_rate,
        beta1=hparams.optimizer_adafactor_beta1,
        clipping_threshold=hparams.optimizer_adafactor_clipping_threshold,
        factored=hparams.optimizer_adafactor_factored,
        simulated_quantize_bits=hparams.get("simulated_parameter_quantize_bits", 0),
        parameter_encoding=None,
        use_locking=False,
        name="Adafactor")
