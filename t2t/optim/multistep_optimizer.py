"""Gradient accumulation: apply an optimizer once every n steps on the mean gradient.

Large effective batches on small hardware: with n = 4, four calls of the train op each add
their gradient to an accumulator; the fourth call hands the mean of the four gradients to
the wrapped optimizer and clears the accumulators. The global step still increments on
every call (as T2T), which is why `learning_rate._global_step` divides it by n.

    opt = MultistepOptimizer(tf.compat.v1.train.MomentumOptimizer(0.1, 0.9), n=4)
    train_op = opt.apply_gradients(opt.compute_gradients(loss), global_step=global_step)
    # calls 1-3: variables unchanged, accumulators grow; call 4: one momentum step with
    # (g1 + g2 + g3 + g4) / 4; global_step goes 1, 2, 3, 4.

`MultistepAdamOptimizer(learning_rate, beta1, beta2, epsilon, n=...)` is T2T's name for
Adam wrapped this way: after 4 calls it equals one Adam step on the mean gradient, and
Adam's bias-correction powers advance once per applied step, not per call.
"""
import tensorflow as tf

ACCUMULATOR_SLOT = "grad_acc"


def _dense(gradient):
    # Accumulators are dense; an embedding's IndexedSlices gradient is scattered into one.
    if isinstance(gradient, tf.IndexedSlices):
        return tf.convert_to_tensor(gradient)
    return gradient


class MultistepOptimizer(tf.compat.v1.train.Optimizer):
    """Wraps any `tf.compat.v1.train.Optimizer` to apply it every `n` steps.

    Args:
      optimizer: the optimizer that makes the real updates.
      n: number of calls whose gradients are averaged into one update (>= 1).
      use_locking, name: as `tf.compat.v1.train.Optimizer`.

    Slots: "grad_acc" (one accumulator per variable) plus the wrapped optimizer's slots,
    all reachable through `get_slot`.
    """

    def __init__(self, optimizer, n=1, use_locking=False, name="Multistep"):
        super().__init__(use_locking, name)
        if int(n) != n or n < 1:
            raise ValueError("multistep accumulation steps must be an integer >= 1, got %r; "
                             "set optimizer_multistep_accumulate_steps accordingly" % (n,))
        self._opt = optimizer
        self._n = int(n)

    @property
    def n(self):
        return self._n

    @property
    def optimizer(self):
        """The wrapped optimizer."""
        return self._opt

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def get_slot(self, var, name):
        if name == ACCUMULATOR_SLOT:
            return super().get_slot(var, name)
        return self._opt.get_slot(var, name)

    def get_slot_names(self):
        return sorted(set(super().get_slot_names()) | set(self._opt.get_slot_names()))

    def variables(self):
        return list(super().variables()) + list(self._opt.variables())

    def _counter(self, first_var):
        # Calls since the last applied update; one per graph (returns the existing one).
        return self._create_non_slot_variable(
            initial_value=tf.constant(0, tf.int64), name="iter", colocate_with=first_var)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Accumulate; on every n-th call apply the mean with the wrapped optimizer.

        Returns an op that also increments `global_step` (when given) on every call.
        """
        grads_and_vars = [(_dense(g), v) for g, v in grads_and_vars if g is not None]
        if not grads_and_vars:
            raise ValueError("no gradients to apply: the loss does not depend on any of the "
                             "variables; check the variables passed to the optimizer")
        if self._n == 1:
            return self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)
        variables = [v for _, v in grads_and_vars]
        first_var = min(variables, key=lambda v: v.name)
        # Slots and the counter are created outside any control flow (as the base class does).
        with tf.init_scope():
            accumulators = [self._zeros_slot(v, ACCUMULATOR_SLOT, self._name) for v in variables]
            counter = self._counter(first_var)
        with tf.name_scope(name or self._name):
            accumulate = [acc.assign_add(tf.cast(g, acc.dtype), use_locking=self._use_locking)
                          for acc, (g, _) in zip(accumulators, grads_and_vars)]
            with tf.control_dependencies(accumulate):
                position = counter.read_value() + 1
                applied = tf.cond(tf.equal(position, self._n),
                                  lambda: self._apply_mean(accumulators, variables),
                                  lambda: tf.constant(False))
            with tf.control_dependencies([applied]):
                update_counter = counter.assign(tf.math.floormod(position, self._n),
                                                use_locking=self._use_locking)
            if global_step is None:
                return tf.group(update_counter, applied)
            with tf.control_dependencies([update_counter]):
                increment = tf.compat.v1.assign_add(global_step, 1)
            return tf.group(increment, update_counter, applied)

    def _apply_mean(self, accumulators, variables):
        """Apply the mean accumulated gradient, then zero the accumulators; returns True."""
        mean_grads = [acc.read_value() / tf.cast(self._n, acc.dtype) for acc in accumulators]
        update = self._opt.apply_gradients(list(zip(mean_grads, variables)))
        with tf.control_dependencies([update]):
            clear = [acc.assign(tf.zeros_like(acc), use_locking=self._use_locking)
                     for acc in accumulators]
        with tf.control_dependencies(clear):
            return tf.constant(True)


class MultistepAdamOptimizer(MultistepOptimizer):
    """Adam applied every `n` steps with the mean accumulated gradient (T2T's name).

    Same arguments as `tf.compat.v1.train.AdamOptimizer` plus `n`; `get_slot(var, "m")` and
    `get_slot(var, "v")` give Adam's moments, `get_slot(var, "grad_acc")` the accumulator.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam", n=1):
        adam = tf.compat.v1.train.AdamOptimizer(
            learning_rate=learning_rate, beta1=beta1, beta2=beta2, epsilon=epsilon,
            use_locking=use_locking, name=name)
        super().__init__(adam, n=n, use_locking=use_locking, name=name + "Multistep")

    def _get_beta_accumulators(self):
        """Adam's (beta1_power, beta2_power) variables, as on T2T's class (an AdamOptimizer
        subclass); they advance once per applied step. Exist once `apply_gradients` ran."""
        return self._opt._get_beta_accumulators()
