"""T2T 1.15.7's simple recurrent unit, `sru` (re-exported by `common_layers`).

    y = sru(tf.zeros([2, 7, 16]))   # [2, 7, 16]; vars sru/kernel_0/{kernel,bias}, kernel_1/...

Each layer computes x', f, r = split(x W + b) with f, r sigmoids, runs the recurrence
c_t = f_t * c_{t-1} + (1 - f_t) * x'_t over time (tf.scan), and outputs
h_t = activation(c_t) * r_t + (1 - r_t) * x_t (Lei et al. 2017, arXiv:1709.02755).
"""
import tensorflow as tf

from t2t.layers.shape_utils import shape_list, variable_dtype

_v1 = tf.compat.v1


def _projection(x, units, name):
    """x [..., depth] @ kernel + bias under `name` (Keras Dense's variable names)."""
    depth = x.get_shape().as_list()[-1]
    with _v1.variable_scope(name):
        kernel = _v1.get_variable("kernel", [depth, units], dtype=variable_dtype(x))
        bias = _v1.get_variable("bias", [units], dtype=variable_dtype(x),
                                initializer=_v1.zeros_initializer())
        out = tf.matmul(tf.reshape(x, [-1, depth]), tf.cast(kernel, x.dtype))
        return tf.reshape(out + tf.cast(bias, x.dtype), shape_list(x)[:-1] + [units])


def sru(x, num_layers=2, activation=None, initial_state=None, name=None, reuse=None):
    """SRU over x [batch, ..., channels], every axis between first and last being time.

    num_layers (2 by default: one is too weak, said T2T) layers of the same width;
    activation (e.g. tf.nn.tanh) on the states; initial_state [batch, channels] (zeros by
    default). Returns a tensor of x's shape.
    """
    if num_layers < 1:
        raise ValueError("sru: num_layers must be positive, got %d" % num_layers)
    with _v1.variable_scope(name, default_name="sru", values=[x], reuse=reuse):
        x_shape = shape_list(x)
        x = tf.reshape(x, [x_shape[0], -1, x_shape[-1]])
        x = tf.transpose(x, [1, 0, 2])  # time first, for tf.scan
        if initial_state is None:
            initial_state = tf.zeros([x_shape[0], x_shape[-1]], dtype=x.dtype)

        def next_state(cur_state, args):
            x_times_one_minus_f, f = args
            return f * cur_state + x_times_one_minus_f

        for i in range(num_layers):
            x_orig = x
            x, f, r = tf.split(_projection(x, 3 * x_shape[-1], "kernel_%d" % i), 3, axis=-1)
            f, r = tf.sigmoid(f), tf.sigmoid(r)
            # Everything but the recurrence itself is computed for all steps at once.
            c_states = tf.scan(next_state, (x * (1.0 - f), f), initializer=initial_state,
                               parallel_iterations=2, name="scan_%d" % i)
            if activation is not None:
                c_states = activation(c_states)
            x = c_states * r + (1.0 - r) * x_orig
        return tf.reshape(tf.transpose(x, [1, 0, 2]), x_shape)
