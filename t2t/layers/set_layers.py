"""Layers over sets of vectors, T2T 1.15.7's `linear_set_layer` and the Deep Sets layer
`ravanbakhsh_set_layer` (Ravanbakhsh et al. 2016, arXiv:1611.04500; re-exported by
`common_layers`).

    linear_set_layer(32, x, context=global_pool_1d(x))   # x [B, L, d] -> [B, L, 32]
    ravanbakhsh_set_layer(32, x, mask)                   # the same on x - max over the set
"""
import tensorflow as tf

from t2t.layers.conv_layers import conv1d
from t2t.layers.pooling import global_pool_1d, running_global_pool_1d

_v1 = tf.compat.v1


def linear_set_layer(layer_size, inputs, context=None, activation_fn=tf.nn.relu, dropout=0.0,
                     name=None):
    """The same linear map on every element of inputs [B, L, d] ("set_conv"), plus a
    linear map of context [B, c] ("cont_conv") when given, then activation and dropout."""
    with _v1.variable_scope(name, default_name="linear_set_layer", values=[inputs]):
        outputs = conv1d(inputs, layer_size, 1, activation=None, name="set_conv")
        if context is not None:
            # Adding the mapped context broadcasts it over the set (a concat would not).
            if len(context.get_shape().as_list()) == 2:
                context = tf.expand_dims(context, axis=1)
            outputs += conv1d(context, layer_size, 1, activation=None, name="cont_conv")
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        if dropout != 0.0:
            outputs = tf.nn.dropout(outputs, rate=dropout)
        return outputs


def ravanbakhsh_set_layer(layer_size, inputs, mask=None, sequential=False,
                          activation_fn=tf.nn.tanh, dropout=0.0, name=None):
    """linear_set_layer of each element minus the set's max (global_pool_1d with mask), or
    with `sequential` minus the running max of the elements so far. dropout is unused, as
    in T2T."""
    del dropout
    with _v1.variable_scope(name, "ravanbakhsh_set_layer", [inputs]):
        if sequential:
            pooled = running_global_pool_1d(inputs)
        else:
            pooled = tf.expand_dims(global_pool_1d(inputs, mask=mask), axis=1)
        return linear_set_layer(layer_size, inputs - pooled, activation_fn=activation_fn,
                                name=name)
