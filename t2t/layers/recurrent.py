"""T2T 1.15.7's recurrent layers (re-exported by `common_layers`): the simple recurrent
unit `sru` and the convolutional cells `conv_gru`, `conv_lstm` and `diagonal_conv_gru`
(one step of a Neural GPU each).

    y = sru(tf.zeros([2, 7, 16]))   # [2, 7, 16]; vars sru/kernel_0/{kernel,bias}, kernel_1/...
    s = conv_gru(tf.zeros([2, 7, 1, 16]), (3, 1), 16)   # vars conv_gru/{reset,gate,candidate}_single/

Each layer computes x', f, r = split(x W + b) with f, r sigmoids, runs the recurrence
c_t = f_t * c_{t-1} + (1 - f_t) * x'_t over time (tf.scan), and outputs
h_t = activation(c_t) * r_t + (1 - r_t) * x_t (Lei et al. 2017, arXiv:1709.02755).
"""
import numpy as np
import tensorflow as tf

from t2t.layers.activations import hard_sigmoid, saturating_sigmoid
from t2t.layers.conv_layers import conv
from t2t.layers.normalization import layer_norm
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


def _gate_conv(x, filters, kernel_size, name, bias_start, padding="SAME",
               dilation_rate=(1, 1)):
    """A convolution of a gate: variables <name>_single/{kernel,bias}, bias = bias_start."""
    return conv(x, filters, kernel_size, padding=padding, dilation_rate=dilation_rate,
                bias_initializer=_v1.constant_initializer(bias_start), name=name)


def _check_state_width(x, filters, what):
    channels = x.get_shape().as_list()[-1]
    if channels != filters:
        raise ValueError("%s: filters (%d) must equal the state's channels (%s); the cell "
                         "mixes its output with the state" % (what, filters, channels))


def conv_gru(x, kernel_size, filters, padding="SAME", dilation_rate=(1, 1), name=None,
             reuse=None):
    """One convolutional GRU step on the state x [batch, height, width, filters].

    reset, gate = saturating_sigmoid(conv(x)) (biases start at 1);
    returns gate * x + (1 - gate) * tanh(conv(reset * x)). Variables
    conv_gru/{reset,gate,candidate}_single/{kernel,bias}.

        conv_gru(tf.zeros([2, 7, 1, 16]), (3, 1), 16)   # [2, 7, 1, 16]
    """
    _check_state_width(x, filters, "conv_gru")
    with _v1.variable_scope(name, default_name="conv_gru", values=[x], reuse=reuse):
        args = (filters, kernel_size)
        kwargs = dict(padding=padding, dilation_rate=dilation_rate)
        reset = saturating_sigmoid(_gate_conv(x, *args, "reset", 1.0, **kwargs))
        gate = saturating_sigmoid(_gate_conv(x, *args, "gate", 1.0, **kwargs))
        candidate = tf.tanh(_gate_conv(reset * x, *args, "candidate", 0.0, **kwargs))
        return gate * x + (1 - gate) * candidate


def conv_lstm(x, kernel_size, filters, padding="SAME", dilation_rate=(1, 1), name=None,
              reuse=None):
    """One convolutional LSTM step on x [batch, height, width, filters] (x is the cell).

    One convolution to 4 * filters, layer-normalised and split into gates g0..g3:
    cell = sigmoid(g0) * x + sigmoid(g1) * tanh(g3); returns sigmoid(g2) * tanh(cell).
    Variables conv_lstm/conv_single/{kernel,bias}, conv_lstm/layer_norm/*.
    """
    _check_state_width(x, filters, "conv_lstm")
    with _v1.variable_scope(name, default_name="conv_lstm", values=[x], reuse=reuse):
        gates = conv(x, 4 * filters, kernel_size, padding=padding, dilation_rate=dilation_rate)
        g = tf.split(layer_norm(gates, 4 * filters), 4, axis=3)
        cell = tf.sigmoid(g[0]) * x + tf.sigmoid(g[1]) * tf.tanh(g[3])
        return tf.sigmoid(g[2]) * tf.tanh(cell)


def diagonal_shift(x):
    """Shift a third of x's channels one position up the height (length) axis and a third
    down (zeros enter); the rest stay. x: [batch, height, width, channels]."""
    channels = x.get_shape().as_list()[-1]
    third = channels // 3
    taps = [[0, 1, 0]] * (channels - 2 * third) + [[1, 0, 0]] * third + [[0, 0, 1]] * third
    kernel = np.transpose(np.array(taps, dtype=np.float32))[:, None, :, None]  # [3, 1, C, 1]
    return tf.nn.depthwise_conv2d(x, tf.constant(kernel, dtype=x.dtype), [1, 1, 1, 1],
                                  padding="SAME")


def diagonal_conv_gru(x, kernel_size, filters, dropout=0.0, name=None, reuse=None):
    """One diagonal convolutional GRU step (Freivalds and Liepins 2017, arXiv:1702.08727).

    reset, gate = hard_sigmoid(conv(x)) (biases start at 0.5 and 0.7);
    returns (gate * diagonal_shift(x) + (1 - gate) * dropout(tanh(conv(reset * x))),
    the mean saturation cost of the two gates). Variables
    diagonal_conv_gru/{reset,gate,candidate}_single/{kernel,bias}.

        state, cost = diagonal_conv_gru(tf.zeros([2, 7, 1, 18]), (3, 1), 18)
    """
    _check_state_width(x, filters, "diagonal_conv_gru")
    with _v1.variable_scope(name, default_name="diagonal_conv_gru", values=[x], reuse=reuse):
        reset, reset_cost = hard_sigmoid(_gate_conv(x, filters, kernel_size, "reset", 0.5))
        gate, gate_cost = hard_sigmoid(_gate_conv(x, filters, kernel_size, "gate", 0.7))
        candidate = tf.tanh(_gate_conv(reset * x, filters, kernel_size, "candidate", 0.0))
        if dropout > 0.0:
            candidate = tf.nn.dropout(candidate, rate=dropout)
        return (gate * diagonal_shift(x) + (1 - gate) * candidate,
                0.5 * (reset_cost + gate_cost))
