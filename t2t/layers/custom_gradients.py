"""T2T 1.15.7's `fn_with_custom_grad` and `recompute_grad` (re-exported by
`common_layers`): run a function forward as written and give its inputs and the variables
it creates the gradients a function of your own computes; `recompute_grad` uses that to
recompute the function in the backward pass instead of keeping its activations.

    def grad_fn(inputs, variables, outputs, output_grads):
        return [output_grads[0] * 3.0], []           # d/dx := 3 * dy, whatever fn is

    @fn_with_custom_grad(grad_fn)
    def fn(x):
        return tf.square(x)

    tf.gradients(fn(x), x)   # [3 * ones]
"""
import functools

import tensorflow as tf

_v1 = tf.compat.v1


def fn_with_custom_grad(grad_fn, use_global_vars=False):
    """A decorator: the gradient of fn(*inputs) is grad_fn's.

    grad_fn(inputs, variables, outputs, output_grads) -> (input grads, variable grads),
    lists; `variables` are the trainable variables fn created in the current variable
    scope (all global ones with use_global_vars), and `outputs` fn's own outputs, so
    grad_fn may differentiate them with tf.gradients. grad_fn None: fn is unchanged.
    """
    def dec(fn):
        @functools.wraps(fn)
        def wrapped(*args):
            return _fn_with_custom_grad(fn, args, grad_fn, use_global_vars=use_global_vars)
        return wrapped
    return dec


def _fn_with_custom_grad(fn, inputs, grad_fn, use_global_vars=False):
    scope = _v1.get_variable_scope()
    get_vars_fn = scope.global_variables if use_global_vars else scope.trainable_variables
    len_before_vars = len(get_vars_fn())
    inputs = list(inputs)
    outputs = fn(*inputs)
    train_vars = get_vars_fn()[len_before_vars:]
    if grad_fn is None:
        return outputs
    if not isinstance(outputs, (tuple, list)):
        outputs = [outputs]
    outputs = list(outputs)
    num_inputs, num_vars = len(inputs), len(train_vars)

    # An identity of (inputs, variable values, outputs) whose gradient is grad_fn's: the
    # gradients then reach the inputs and the variables, and nothing flows through fn.
    @tf.custom_gradient
    def identity(*flat):
        def grad(*dys):
            grad_inputs, grad_vars = grad_fn(inputs, train_vars, outputs, list(dys))
            if len(grad_inputs) != num_inputs or len(grad_vars) != num_vars:
                raise ValueError("fn_with_custom_grad: grad_fn returned %d input and %d "
                                 "variable gradients for %d inputs and %d variables"
                                 % (len(grad_inputs), len(grad_vars), num_inputs, num_vars))
            return list(grad_inputs) + list(grad_vars) + [None] * len(outputs)
        return [tf.identity(t) for t in flat[num_inputs + num_vars:]], grad

    flat = ([tf.convert_to_tensor(t) for t in inputs] +
            [tf.convert_to_tensor(v) for v in train_vars] + outputs)
    result = identity(*flat)
    return result[0] if len(result) == 1 else tuple(result)


def recompute_grad(fn):
    """A decorator: fn's activations are not kept for the backward pass but recomputed
    there (reusing fn's variables), trading compute for memory. Graph mode (tf.gradients).

        @recompute_grad
        def block(x):
            return common_layers.dense(x, 64, activation=tf.nn.relu, name="d")
    """
    @functools.wraps(fn)
    def wrapped(*args):
        return _recompute_grad(fn, args)
    return wrapped


def _recompute_grad(fn, args):
    cached_vs = []

    def grad_fn(inputs, variables, outputs, output_grads):
        del outputs
        # After the output gradients exist, so the recomputation happens in the backward pass.
        with tf.control_dependencies(output_grads):
            with _v1.variable_scope(cached_vs[0], reuse=True):
                outputs = fn(*inputs)
        if not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        grads = tf.gradients(list(outputs), inputs + variables, output_grads)
        return grads[:len(inputs)], grads[len(inputs):]

    @fn_with_custom_grad(grad_fn)
    def fn_with_recompute(*args):
        cached_vs.append(_v1.get_variable_scope())
        return fn(*args)

    return fn_with_recompute(*args)
