"""Optimization: the train op of every model, as T2T 1.15.7's `utils/optimize.py`.

    lr = learning_rate.learning_rate_schedule(hparams)
    train_op = optimize(loss, lr, hparams)        # inside an Estimator model_fn
    sess.run(train_op)                            # one step; evaluates to the total loss

`optimize` adds weight decay (an L2 term on non-bias variables) and weight noise to the
loss, picks the optimizer named by `hparams.optimizer` from the registry (wrapped for
gradient accumulation when `optimizer_multistep_accumulate_steps > 1`), adds gradient
noise, clips gradients by global norm, applies them and increments the global step.
Summaries: "learning_rate" and "global_norm/gradient_norm" (before clipping).

Registered optimizers, each a function `(learning_rate, hparams) -> Optimizer`: adam,
true_adam, multistep_adam, adam_w, momentum, sgd, rms_prop, adagrad, adadelta, ftrl,
proximal_gradient_descent, proximal_adagrad, adafactor. The legacy names "Adam", "SGD",
"Momentum", "RMSProp" and "Adafactor" resolve to them through `registry.optimizer`.
"""
import numpy as np
import tensorflow as tf
from absl import logging

from t2t.core import registry
from t2t.core.log_once import info_once
from t2t.optim import adafactor as adafactor_lib
from t2t.optim import multistep_optimizer

INITIALIZERS = ("orthogonal", "uniform", "normal_unit_scaling", "uniform_unit_scaling", "xavier")


def _should_generate_summaries():
    """Summaries only in graph mode (Estimator model_fns), as T2T; none in eager mode or
    in `tf.function`s (the native backend writes its own)."""
    if tf.executing_eagerly():
        return False
    return getattr(tf.compat.v1.get_default_graph(), "outer_graph", None) is None


def optimize(loss, learning_rate, hparams, use_tpu=False, variables=None):
    """Minimize `loss`; returns the train op (a tensor equal to the total loss).

    Args:
      loss: scalar float tensor.
      learning_rate: float or scalar tensor, e.g. `learning_rate_schedule(hparams)`.
      hparams: HParams from `basic_params1`: optimizer, clip_grad_norm, weight_decay,
        weight_noise, grad_noise_scale, summarize_vars, summarize_grads, ...
      use_tpu: wrap the optimizer in a `CrossShardOptimizer`.
      variables: variables to train (default: all trainable variables).

    Example: with SGD, lr 1.0 and clip_grad_norm 1.0, a gradient [6, 8] (norm 10) moves
    the variable by [-0.6, -0.8].
    """
    loss = weight_decay_and_noise(loss, hparams, learning_rate, var_list=variables)
    loss = tf.identity(loss, name="total_loss")
    if variables is None:
        variables = tf.compat.v1.trainable_variables()
    log_variable_sizes(variables, verbose=hparams.summarize_vars)
    trainable_refs = {v.ref() for v in variables}
    non_trainable = [v for v in tf.compat.v1.global_variables()
                     if v.ref() not in trainable_refs]
    log_variable_sizes(non_trainable, tag="Non-trainable variables",
                       verbose=hparams.summarize_vars)
    if hparams.summarize_vars:
        summarize_variables(variables)
        summarize_variables(non_trainable, tag="Non-trainable variables")
    opt = ConditionalOptimizer(hparams.optimizer, learning_rate, hparams, use_tpu)
    global_step = tf.compat.v1.train.get_or_create_global_step()
    summaries = _should_generate_summaries()
    if summaries:
        tf.compat.v1.summary.scalar("learning_rate", learning_rate)

    update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
    if update_ops:  # e.g. batch-norm moving averages run with every step.
        with tf.control_dependencies(update_ops):
            loss = tf.identity(loss)
    grads_and_vars = opt.compute_gradients(loss, variables, colocate_gradients_with_ops=True)
    grads_and_vars = [(g, v) for g, v in grads_and_vars if g is not None]
    if not grads_and_vars:
        raise ValueError("the loss does not depend on any trainable variable; check that the "
                         "model builds its variables before optimize() is called")
    if hparams.grad_noise_scale:
        info_once("Adding noise to gradients, noise scale: %0.5f", hparams.grad_noise_scale)
        grads_and_vars = _add_gradient_noise(grads_and_vars, hparams.grad_noise_scale)
    gradients = [g for g, _ in grads_and_vars]
    if summaries:
        tf.compat.v1.summary.scalar("global_norm/gradient_norm", tf.linalg.global_norm(gradients))
    if hparams.clip_grad_norm:
        info_once("Clipping gradients, norm: %0.5f", hparams.clip_grad_norm)
        gradients, _ = tf.clip_by_global_norm(gradients, float(hparams.clip_grad_norm))
        grads_and_vars = list(zip(gradients, [v for _, v in grads_and_vars]))
    if summaries and hparams.summarize_grads:
        _summarize_gradients(grads_and_vars, clipped=bool(hparams.clip_grad_norm))
    if summaries:
        tf.compat.v1.summary.scalar("training/loss", loss)
    # The loss is computed before the update, so the train op's value is this step's loss.
    with tf.control_dependencies([loss]):
        apply_op = opt.apply_gradients(grads_and_vars, global_step=global_step, name="train")
    with tf.control_dependencies([apply_op]):
        return tf.identity(loss, name="train_op")


def _add_gradient_noise(grads_and_vars, noise_scale):
    """g + truncated_normal(shape(g)) * noise_scale, for each gradient."""
    noisy = []
    for gradient, variable in grads_and_vars:
        if isinstance(gradient, tf.IndexedSlices):
            gradient = tf.convert_to_tensor(gradient)
        noise = tf.random.truncated_normal(tf.shape(gradient), dtype=gradient.dtype)
        noisy.append((gradient + noise * noise_scale, variable))
    return noisy


def _summarize_gradients(grads_and_vars, clipped):
    for gradient, variable in grads_and_vars:
        values = gradient.values if isinstance(gradient, tf.IndexedSlices) else gradient
        name = variable.name.replace(":", "_")
        tf.compat.v1.summary.histogram("gradients/%s" % name, values)
        tf.compat.v1.summary.scalar("gradient_norm/%s" % name, tf.linalg.global_norm([values]))
    if clipped:
        tf.compat.v1.summary.scalar("global_norm/clipped_gradient_norm",
                                    tf.linalg.global_norm([g for g, _ in grads_and_vars]))


# ----------------------------------------------------------------------------
# Registered optimizers: (learning_rate, hparams) -> tf.compat.v1.train.Optimizer.
# ----------------------------------------------------------------------------
def adam(learning_rate, hparams):
    """Adam with `optimizer_adam_beta1/beta2/epsilon` (T2T's epsilon default is 1e-6)."""
    return tf.compat.v1.train.AdamOptimizer(
        learning_rate, beta1=hparams.optimizer_adam_beta1, beta2=hparams.optimizer_adam_beta2,
        epsilon=hparams.optimizer_adam_epsilon)


def multistep_adam(learning_rate, hparams):
    """Adam applied every `optimizer_multistep_accumulate_steps` steps on the mean gradient."""
    return multistep_optimizer.MultistepAdamOptimizer(
        learning_rate, beta1=hparams.optimizer_adam_beta1, beta2=hparams.optimizer_adam_beta2,
        epsilon=hparams.optimizer_adam_epsilon,
        n=max(1, hparams.optimizer_multistep_accumulate_steps))


class AdamWOptimizer(tf.compat.v1.train.AdamOptimizer):
    """Adam with decoupled weight decay: `var -= weight_decay * var` before each Adam step.

    `weight_decay` is a float or a scalar tensor (e.g. 0.01 * learning_rate, as "adam_w").
    """

    def __init__(self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, use_locking=False, name="AdamW"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)
        self._weight_decay = weight_decay

    def _decay(self, var):
        decay = tf.cast(self._weight_decay, var.dtype.base_dtype)
        return tf.compat.v1.assign_sub(var, decay * tf.convert_to_tensor(var),
                                       use_locking=self._use_locking)

    def _apply_dense(self, grad, var):
        with tf.control_dependencies([self._decay(var)]):
            return super()._apply_dense(grad, var)

    def _resource_apply_dense(self, grad, var):
        with tf.control_dependencies([self._decay(var)]):
            return super()._resource_apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        with tf.control_dependencies([self._decay(var)]):
            return super()._apply_sparse(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        with tf.control_dependencies([self._decay(var)]):
            return super()._resource_apply_sparse(grad, var, indices)


def adam_w(learning_rate, hparams):
    """AdamW with weight decay 0.01 * learning_rate (OpenAI GPT's choice, as T2T)."""
    return AdamWOptimizer(
        0.01 * learning_rate, learning_rate=learning_rate, beta1=hparams.optimizer_adam_beta1,
        beta2=hparams.optimizer_adam_beta2, epsilon=hparams.optimizer_adam_epsilon)


def momentum(learning_rate, hparams):
    """Momentum with `optimizer_momentum_momentum` and `optimizer_momentum_nesterov`."""
    return tf.compat.v1.train.MomentumOptimizer(
        learning_rate, momentum=hparams.optimizer_momentum_momentum,
        use_nesterov=hparams.optimizer_momentum_nesterov)


def adafactor(learning_rate, hparams):
    """Adafactor from the `optimizer_adafactor_*` hparams."""
    return adafactor_lib.adafactor_optimizer_from_hparams(hparams, learning_rate)


def _learning_rate_only(optimizer_class):
    """An optimizer function for a TF optimizer that reads no hparams (TF's defaults)."""
    def make(learning_rate, hparams):
        del hparams
        return optimizer_class(learning_rate)
    make.__name__ = optimizer_class.__name__
    make.__doc__ = "`tf.compat.v1.train.%s(learning_rate)`." % optimizer_class.__name__
    return make


# The registered optimizers: name -> (learning_rate, hparams) -> tf.compat.v1 Optimizer.
# "true_adam" is T2T's name for plain Adam next to its lazy-Adam "adam".
OPTIMIZERS = {
    "adam": adam,
    "true_adam": adam,
    "multistep_adam": multistep_adam,
    "adam_w": adam_w,
    "momentum": momentum,
    "adafactor": adafactor,
}
OPTIMIZERS.update({name: _learning_rate_only(optimizer_class) for name, optimizer_class in (
    ("sgd", tf.compat.v1.train.GradientDescentOptimizer),
    ("rms_prop", tf.compat.v1.train.RMSPropOptimizer),  # decay 0.9, no momentum, eps 1e-10
    ("adagrad", tf.compat.v1.train.AdagradOptimizer),   # initial accumulator 0.1
    ("adadelta", tf.compat.v1.train.AdadeltaOptimizer),
    ("ftrl", tf.compat.v1.train.FtrlOptimizer),
    ("proximal_gradient_descent", tf.compat.v1.train.ProximalGradientDescentOptimizer),
    ("proximal_adagrad", tf.compat.v1.train.ProximalAdagradOptimizer),
)})
for _name, _optimizer_fn in OPTIMIZERS.items():
    registry.register_optimizer(_name)(_optimizer_fn)


def _mixed_precision_is_enabled(hparams):
    return hparams.activation_dtype == "float16" and hparams.weight_dtype == "float32"


class ConditionalOptimizer(tf.compat.v1.train.Optimizer):
    """The optimizer named `optimizer_name`, plus T2T's wrappers, as one Optimizer.

    Wrappers, innermost first: gradient accumulation (`MultistepOptimizer`) when
    `optimizer_multistep_accumulate_steps > 1` and the optimizer does not accumulate by
    itself; dynamic loss scaling for float16 activations; `CrossShardOptimizer` on TPU;
    the automatic-mixed-precision graph rewrite when `gpu_automatic_mixed_precision`.
    Gradients are cast to their variable's dtype; with `optimizer_zero_grads`, variables
    without a gradient get zeros.

    Example: `ConditionalOptimizer("Adam", 0.1, hparams)` is an AdamOptimizer(0.1, ...).
    """

    def __init__(self, optimizer_name, lr, hparams, use_tpu=False):
        super().__init__(use_locking=False, name="ConditionalOptimizer")
        info_once("Using optimizer %s", optimizer_name)
        self._opt = registry.optimizer(optimizer_name)(lr, hparams)
        accumulate_steps = hparams.optimizer_multistep_accumulate_steps
        if accumulate_steps and accumulate_steps > 1 and not isinstance(
                self._opt, multistep_optimizer.MultistepOptimizer):
            info_once("Accumulating gradients over %d steps", accumulate_steps)
            self._opt = multistep_optimizer.MultistepOptimizer(self._opt, accumulate_steps)
        if _mixed_precision_is_enabled(hparams):
            self._opt = _loss_scale_optimizer(self._opt, hparams)
        if use_tpu:
            self._opt = tf.compat.v1.tpu.CrossShardOptimizer(self._opt)
        if hparams.get("gpu_automatic_mixed_precision"):
            info_once("Using GPU automatic mixed precision with dynamic loss scaling")
            self._opt = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(
                self._opt, loss_scale="dynamic")
        self._zero_grads = hparams.optimizer_zero_grads

    @property
    def optimizer(self):
        """The wrapped optimizer."""
        return self._opt

    def compute_gradients(self, loss, var_list=None, **kwargs):  # pylint: disable=arguments-differ
        gradients = self._opt.compute_gradients(loss, var_list, **kwargs)

        def cast_grad(g, v):
            if v is not None and g is not None and g.dtype != v.dtype.base_dtype:
                if isinstance(g, tf.IndexedSlices):
                    g = tf.IndexedSlices(tf.cast(g.values, v.dtype.base_dtype), g.indices,
                                         g.dense_shape)
                else:
                    g = tf.cast(g, v.dtype.base_dtype)
            if self._zero_grads and g is None:
                g = tf.zeros_like(v)
            return (g, v)

        return [cast_grad(g, v) for g, v in gradients]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_slot(self, var, name):
        return self._opt.get_slot(var, name)

    def get_slot_names(self):
        return self._opt.get_slot_names()

    def variables(self):
        return self._opt.variables()


def _loss_scale_optimizer(opt, hparams):
    """Dynamic loss scaling (T2T's exponential-update loss scaler) for float16 training."""
    scaler = hparams.mixed_precision_optimizer_loss_scaler
    if not scaler:
        logging.warning("Using mixed precision without a loss scaler will likely cause "
                        "numerical errors.")
        return opt
    if scaler != "exponential":
        raise ValueError("mixed_precision_optimizer_loss_scaler %r is not supported; use "
                         "'exponential'" % (scaler,))
    init_scale = hparams.mixed_precision_optimizer_init_loss_scale
    logging.info("Using exponential-update loss scaler with initial loss scale %s", init_scale)
    loss_scale = tf.compat.v1.mixed_precision.DynamicLossScale(
        initial_loss_scale=init_scale, increment_period=2000, multiplier=2.0)
    return tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(opt, loss_scale)


# ----------------------------------------------------------------------------
# Weight decay and weight noise.
# ----------------------------------------------------------------------------
def weight_decay_and_noise(loss, hparams, learning_rate, var_list=None):
    """`loss + weight_decay * sum(l2_loss(non-bias vars))`, after applying weight noise.

    Weight noise is added to variables whose name contains "/body/" (the model body).
    """
    if var_list is None:
        var_list = tf.compat.v1.trainable_variables()
    decay_vars = list(var_list)
    noise_vars = [v for v in var_list if "/body/" in v.name]
    weight_decay_loss = weight_decay(hparams.weight_decay, decay_vars)
    if hparams.weight_decay and _should_generate_summaries():
        tf.compat.v1.summary.scalar("losses/weight_decay", weight_decay_loss)
    weight_noise_ops = weight_noise(hparams.weight_noise, learning_rate, noise_vars)
    with tf.control_dependencies(weight_noise_ops):
        loss = tf.identity(loss)
    return loss + weight_decay_loss


def weight_noise(noise_rate, learning_rate, var_list):
    """Ops adding `truncated_normal * noise_rate * learning_rate * 0.001` to each variable."""
    if not noise_rate:
        return [tf.no_op()]
    info_once("Applying weight noise scaled by learning rate, noise_rate: %0.5f", noise_rate)
    noise_ops = []
    for v in var_list:
        with tf.device(v.device):
            scale = noise_rate * learning_rate * 0.001
            if _should_generate_summaries():
                tf.compat.v1.summary.scalar("weight_noise_scale", scale)
            noise = tf.random.truncated_normal(v.shape, dtype=v.dtype.base_dtype) * tf.cast(
                scale, v.dtype.base_dtype)
            noise_ops.append(tf.compat.v1.assign_add(v, noise))
    return noise_ops


def weight_decay(decay_rate, var_list, skip_biases=True):
    """`decay_rate * sum(sum(v**2) / 2)` over `var_list`, skipping 1-D "...bias:0" variables.

    Example: decay 0.1 on w = [[1, 2]] and a bias b = [3]: 0.1 * (1 + 4) / 2 = 0.25.
    """
    if not decay_rate:
        return 0.0
    info_once("Applying weight decay, decay_rate: %0.5f", decay_rate)
    weight_decays = []
    for v in var_list:
        # A heuristic that detects the biases of tf/keras layers.
        is_bias = len(v.shape.as_list()) == 1 and v.name.endswith("bias:0")
        if not (skip_biases and is_bias):
            with tf.device(v.device):
                weight_decays.append(tf.nn.l2_loss(v))
    if not weight_decays:
        return 0.0
    return tf.add_n(weight_decays) * decay_rate


# ----------------------------------------------------------------------------
# Variables: sizes, summaries, initializers.
# ----------------------------------------------------------------------------
def log_variable_sizes(var_list=None, tag=None, verbose=False):
    """Log the total number of parameters (and each variable's shape if `verbose`).

    Returns the total (T2T returned None). Example: variables of shapes [3, 4] and [4]
    log "Trainable Variables Total size: 16" and return 16.
    """
    if var_list is None:
        var_list = tf.compat.v1.trainable_variables()
    if tag is None:
        tag = "Trainable Variables"
    if not var_list:
        return 0
    name_to_var = {v.name: v for v in var_list}
    total_size = 0
    for name in sorted(name_to_var):
        v = name_to_var[name]
        v_size = int(np.prod(np.array(v.shape.as_list())))
        if verbose:
            logging.info("Weight    %s\tshape    %s\tsize    %d", v.name[:-2].ljust(80),
                         str(v.shape).ljust(20), v_size)
        total_size += v_size
    info_once("%s Total size: %d", tag, total_size)
    return total_size


def summarize_variables(var_list=None, tag=None):
    """A histogram summary per variable, named `tag + variable name`."""
    if var_list is None:
        var_list = tf.compat.v1.trainable_variables()
    if tag is None:
        tag = "training_variables/"
    elif not tag.endswith("/"):
        tag += "/"
    name_to_var = {v.name: v for v in var_list}
    for name in name_to_var:
        tf.compat.v1.summary.histogram(tag + name.replace(":", "_"), name_to_var[name])


def get_variable_initializer(hparams):
    """The initializer named by `hparams.initializer`, scaled by `hparams.initializer_gain`.

    "orthogonal": orthogonal with gain; "uniform": U(-0.1 * gain, 0.1 * gain);
    "normal_unit_scaling" / "uniform_unit_scaling": variance scaling (fan_avg) with scale
    gain; "xavier": Glorot uniform. An empty initializer gives None (TF's default).
    """
    if not hparams.initializer:
        return None
    if not tf.executing_eagerly():
        info_once("Using variable initializer: %s", hparams.initializer)
    gain = hparams.initializer_gain
    if hparams.initializer == "orthogonal":
        return tf.compat.v1.orthogonal_initializer(gain=gain)
    if hparams.initializer == "uniform":
        max_val = 0.1 * gain
        return tf.compat.v1.random_uniform_initializer(-max_val, max_val)
    if hparams.initializer == "normal_unit_scaling":
        return tf.compat.v1.variance_scaling_initializer(gain, mode="fan_avg",
                                                         distribution="normal")
    if hparams.initializer == "uniform_unit_scaling":
        return tf.compat.v1.variance_scaling_initializer(gain, mode="fan_avg",
                                                         distribution="uniform")
    if hparams.initializer == "xavier":
        return tf.compat.v1.glorot_uniform_initializer()
    raise ValueError("unknown initializer %r; set hparams.initializer to one of: %s" %
                     (hparams.initializer, ", ".join(INITIALIZERS)))
