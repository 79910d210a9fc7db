"""T2T 1.15.7's memory-efficient self-attention with its own layer norm:
`common_attention.multihead_self_attention_memory_efficient` (attention one head at a time).
Its feed-forward partner, `common_layers.conv_hidden_relu_memory_efficient` (4 batch
splits), lives in `t2t.layers.conv_layers` beside `conv_hidden_relu`.

    x = tf.zeros([2, 5, 32])
    y = multihead_self_attention_memory_efficient(x, None, num_heads=4)   # [2, 5, 32]
    z = conv_layers.conv_hidden_relu_memory_efficient(x, filter_size=64)  # [2, 5, 32]

Both return f(layer_norm(x)) (no residual) with T2T's variables: `multihead_attention/
{wqkv [heads, 1, d, 3*head], wo [heads, 1, head, d], layer_norm_scale, layer_norm_bias}` and
`ffn2/{f1 [1, d, filter], f2 [1, filter, d], layer_norm_scale, layer_norm_bias}`. T2T also
forgot the forward activations and recomputed them in a Defun gradient; here the forward
graph is differentiated as is (same values and gradients, more activation memory), so
T2T's `forget` argument is accepted and changes nothing. `test_vars` (T2T's, for tests)
gives the four variables instead of creating them.
"""
import tensorflow as tf

from t2t.layers.normalization import layer_norm_compute, layer_norm_vars
from t2t.layers.softmax_attention import scaled_dot_product_attention_simple

_v1 = tf.compat.v1


def multihead_self_attention_memory_efficient(x, bias, num_heads, head_size=None,
                                              epsilon=1e-6, forget=True, test_vars=None,
                                              name=None):
    """x [batch, length, d], bias broadcastable to [batch, 1, length, length] (or None)
    -> sum over heads of attention(layer_norm(x)) projected back to d."""
    io_size = x.get_shape().as_list()[-1]
    if head_size is None:
        if io_size % num_heads:
            raise ValueError("multihead_self_attention_memory_efficient: depth %d is not a "
                             "multiple of num_heads %d; set head_size" % (io_size, num_heads))
        head_size = io_size // num_heads
    if bias is not None:
        bias = tf.squeeze(bias, 1)
    del forget  # the activations are kept: see the module docstring
    with _v1.variable_scope(name, default_name="multihead_attention", values=[x]):
        if test_vars is not None:
            wqkv, wo, norm_scale, norm_bias = test_vars
        else:
            wqkv = _v1.get_variable(
                "wqkv", [num_heads, 1, io_size, 3 * head_size],
                initializer=_v1.random_normal_initializer(stddev=io_size ** -0.5))
            wo = _v1.get_variable(
                "wo", [num_heads, 1, head_size, io_size],
                initializer=_v1.random_normal_initializer(
                    stddev=(head_size * num_heads) ** -0.5))
            norm_scale, norm_bias = layer_norm_vars(io_size)
        n = layer_norm_compute(x, epsilon, norm_scale, norm_bias)
        y = 0
        for wqkv_h, wo_h in zip(tf.unstack(wqkv, num=num_heads),
                                tf.unstack(wo, num=num_heads)):
            q, k, v = tf.split(tf.nn.conv1d(n, wqkv_h, 1, "SAME"), 3, axis=2)
            o = scaled_dot_product_attention_simple(q, k, v, bias)
            y += tf.nn.conv1d(o, wo_h, 1, "SAME")
        y.set_shape(x.get_shape())
        return y
