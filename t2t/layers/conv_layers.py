"""Convolutions with T2T 1.15.7's names, signatures and variable names (re-exported by
`common_layers`): `conv`, `conv1d`, `separable_conv`, `subseparable_conv`,
`conv_hidden_relu`, `sepconv_relu_sepconv` and the blocks `conv_block`, `conv1d_block`, `separable_conv_block`,
`subseparable_conv_block`.

As in T2T, a convolution named `name` keeps its variables under "<name>_single" (T2T's
conv_internal added the suffix), so `conv(x, 8, (3, 1), name="conv1")` makes
`conv1_single/kernel` and `conv1_single/bias`. Padding "LEFT" pads only before each
axis, so output position i sees inputs <= i (causal in height).

    x = tf.zeros([2, 9, 1, 4])
    conv(x, 6, (3, 1), padding="LEFT")                         # [2, 9, 1, 6]
    separable_conv(x, 6, (3, 1), padding="SAME")               # depthwise + pointwise kernels
    subseparable_conv(x, 6, (3, 1), padding="SAME", separability=2)   # 2 groups, then 1x1
"""
import tensorflow as tf

from t2t.layers.normalization import layer_norm, layer_norm_compute, layer_norm_vars
from t2t.layers.shape_utils import approximate_split, cast_like, shape_list, variable_dtype

_v1 = tf.compat.v1


def _pair(value):
    return tuple(value) if isinstance(value, (list, tuple)) else (value, value)


def _prepare_inputs(inputs, kernel_size, dilation_rate, padding, what):
    """(inputs, padding): rank checked, "LEFT" turned into explicit zeros + "VALID"."""
    inputs = tf.convert_to_tensor(inputs)
    static_shape = inputs.get_shape()
    if static_shape.ndims != 4:
        raise ValueError("%s: inputs must have static rank 4, got shape %s"
                         % (what, static_shape))
    padding = padding.upper()
    if padding == "LEFT":
        height_padding = 2 * (kernel_size[0] // 2) * dilation_rate[0]
        width_padding = 0
        if static_shape.as_list()[2] != 1:
            width_padding = 2 * (kernel_size[1] // 2) * dilation_rate[1]
        inputs = tf.pad(inputs, [[0, 0], [height_padding, 0], [width_padding, 0], [0, 0]])
        inputs.set_shape([static_shape[0], None, None, static_shape[3]])
        padding = "VALID"
    if padding not in ("VALID", "SAME"):
        raise ValueError("%s: padding must be 'VALID', 'SAME' or 'LEFT', got %r"
                         % (what, padding))
    return inputs, padding


def _bias_and_activation(outputs, filters, use_bias, activation, like, bias_initializer=None):
    if use_bias:
        bias = _v1.get_variable("bias", [filters], dtype=variable_dtype(like),
                                initializer=bias_initializer or _v1.zeros_initializer())
        outputs = tf.nn.bias_add(outputs, cast_like(bias, like))
    if activation is not None:
        outputs = activation(outputs)
    return outputs


def _conv2d(inputs, filters, kernel_size, strides, padding, dilation_rate, activation,
            use_bias, kernel_initializer, scope, default_name="conv2d", reuse=None,
            bias_initializer=None):
    """One 2-D convolution (inputs already padded) with variables scope/{kernel,bias}."""
    in_channels = inputs.get_shape().as_list()[-1]
    with _v1.variable_scope(scope, default_name=default_name, values=[inputs], reuse=reuse):
        kernel = _v1.get_variable("kernel", list(kernel_size) + [in_channels, filters],
                                  dtype=variable_dtype(inputs), initializer=kernel_initializer)
        kernel = cast_like(kernel, inputs)
        if tuple(dilation_rate) != (1, 1):
            if tuple(strides) != (1, 1):
                raise ValueError("conv: strides %s with dilation_rate %s; one of them must be"
                                 " 1" % (tuple(strides), tuple(dilation_rate)))
            # Atrous by space-to-batch: TensorFlow's CPU kernel for the input gradient of a
            # dilated conv2d exists only with oneDNN on (off by default on AMD CPUs:
            # "Current CPU implementations do not yet support dilation rates larger than 1").
            outputs = tf.nn.with_space_to_batch(
                inputs, dilation_rate=list(dilation_rate), padding=padding,
                filter_shape=list(kernel_size),
                op=lambda x, _, pad: tf.nn.conv2d(x, kernel, strides=[1, 1, 1, 1],
                                                  padding=pad))
        else:
            outputs = tf.nn.conv2d(inputs, kernel, strides=[1, strides[0], strides[1], 1],
                                   padding=padding)
        return _bias_and_activation(outputs, filters, use_bias, activation, inputs,
                                    bias_initializer)


def _separable_conv2d(inputs, filters, kernel_size, strides, padding, dilation_rate,
                      activation, use_bias, depth_multiplier, scope,
                      default_name="separable_conv2d", reuse=None):
    """A depthwise then pointwise convolution: scope/{depthwise_kernel,pointwise_kernel,bias}
    (Keras' SeparableConv2D names)."""
    in_channels = inputs.get_shape().as_list()[-1]
    dtype = variable_dtype(inputs)
    with _v1.variable_scope(scope, default_name=default_name, values=[inputs], reuse=reuse):
        depthwise = _v1.get_variable(
            "depthwise_kernel", list(kernel_size) + [in_channels, depth_multiplier], dtype=dtype)
        pointwise = _v1.get_variable(
            "pointwise_kernel", [1, 1, in_channels * depth_multiplier, filters], dtype=dtype)
        outputs = tf.nn.separable_conv2d(
            inputs, cast_like(depthwise, inputs), cast_like(pointwise, inputs),
            strides=[1, strides[0], strides[1], 1], padding=padding, dilations=dilation_rate)
        return _bias_and_activation(outputs, filters, use_bias, activation, inputs)


def _scope_name(name):
    return "%s_single" % (name or "conv")


def _scope(name):
    """(scope, default_name) of a layer named `name`: a given name is used as is (a second
    build under a reusing scope finds it); only the default is made unique."""
    return (_scope_name(name) if name else None), _scope_name(name)


def conv(inputs, filters, kernel_size, dilation_rate=(1, 1), strides=(1, 1), padding="VALID",
         activation=None, use_bias=True, name=None, kernel_initializer=None, reuse=None,
         bias_initializer=None):
    """2-D convolution on [batch, height, width, channels]; padding "VALID", "SAME", "LEFT".

    Variables "<name>_single/kernel" [kh, kw, in, filters] and ".../bias" (T2T's names;
    the bias starts at zeros unless `bias_initializer` is given).

        conv(tf.zeros([2, 9, 1, 4]), 6, (3, 1), padding="LEFT")   # [2, 9, 1, 6]
    """
    kernel_size, dilation_rate, strides = (_pair(kernel_size), _pair(dilation_rate),
                                           _pair(strides))
    inputs, padding = _prepare_inputs(inputs, kernel_size, dilation_rate, padding, "conv")
    scope, default_name = _scope(name)
    return _conv2d(inputs, filters, kernel_size, strides, padding, dilation_rate, activation,
                   use_bias, kernel_initializer, scope, default_name=default_name, reuse=reuse,
                   bias_initializer=bias_initializer)


def conv1d(inputs, filters, kernel_size, dilation_rate=1, **kwargs):
    """1-D convolution on [batch, length, channels] (a conv over [B, L, 1, C]).

        conv1d(tf.zeros([2, 9, 4]), 6, 3, padding="SAME")   # [2, 9, 6]
    """
    return tf.squeeze(conv(tf.expand_dims(inputs, 2), filters, (kernel_size, 1),
                           dilation_rate=(dilation_rate, 1), **kwargs), 2)


def separable_conv(inputs, filters, kernel_size, dilation_rate=(1, 1), strides=(1, 1),
                   padding="VALID", activation=None, use_bias=True, depth_multiplier=1,
                   name=None, reuse=None):
    """Depthwise-separable 2-D convolution (a per-channel kxk conv, then a 1x1 conv).

    Variables "<name>_single/depthwise_kernel" [kh, kw, in, depth_multiplier],
    ".../pointwise_kernel" [1, 1, in * depth_multiplier, filters] and ".../bias".
    """
    kernel_size, dilation_rate, strides = (_pair(kernel_size), _pair(dilation_rate),
                                           _pair(strides))
    inputs, padding = _prepare_inputs(inputs, kernel_size, dilation_rate, padding,
                                      "separable_conv")
    scope, default_name = _scope(name)
    return _separable_conv2d(inputs, filters, kernel_size, strides, padding, dilation_rate,
                             activation, use_bias, depth_multiplier, scope,
                             default_name=default_name, reuse=reuse)


def subseparable_conv(inputs, filters, kernel_size, separability=None, dilation_rate=(1, 1),
                      strides=(1, 1), padding="VALID", activation=None, use_bias=True,
                      name=None, reuse=None):
    """A convolution over groups of channels (SliceNet's sub-separable convolution).

    separability 0 or None: one separable_conv. s > 0: the channels split in s groups,
    each a conv to filters // s (under "part_<i>"), then for s > 1 a 1x1 conv mixing
    them (scope "conv2d"). s < 0: |s| groups, each a separable conv to filters // |s|,
    concatenated. Output [batch, h', w', filters].
    """
    kernel_size, dilation_rate, strides = (_pair(kernel_size), _pair(dilation_rate),
                                           _pair(strides))
    inputs, padding = _prepare_inputs(inputs, kernel_size, dilation_rate, padding,
                                      "subseparable_conv")
    scope, default_name = _scope(name)
    common = dict(strides=strides, padding=padding, dilation_rate=dilation_rate,
                  activation=activation, use_bias=use_bias, scope=scope,
                  default_name=default_name)
    if not separability:
        return _separable_conv2d(inputs, filters, kernel_size, depth_multiplier=1,
                                 reuse=reuse, **common)
    groups = abs(separability)
    channels = inputs.get_shape().as_list()[-1]
    if channels % groups or filters % groups:
        raise ValueError("subseparable_conv: separability %d must divide the input channels "
                         "(%d) and filters (%d)" % (separability, channels, filters))
    parts = []
    # `reuse` goes to each layer's own scope: re-entering the current scope would reset its
    # default-name counts, so a second layer's 1x1 conv would collide with the first's.
    for i, split in enumerate(tf.split(inputs, groups, axis=3)):
        with _v1.variable_scope("part_%d" % i, reuse=reuse):
            if separability > 0:
                parts.append(_conv2d(split, filters // groups, kernel_size,
                                     kernel_initializer=None, **common))
            else:
                parts.append(_separable_conv2d(split, filters // groups, kernel_size,
                                               depth_multiplier=1, **common))
    if separability > 1:  # "conv2d", "conv2d_1", ... as T2T's Keras Conv2D layers
        return _conv2d(tf.concat(parts, axis=3), filters, (1, 1), (1, 1), "VALID", (1, 1),
                       None, True, None, None, reuse=reuse)
    return parts[0] if groups == 1 else tf.concat(parts, axis=3)


def maybe_zero_out_padding(inputs, kernel_size, nonpadding_mask):
    """Zero padding positions before a conv wider than 1, so padding does not leak in."""
    if kernel_size not in (1, (1, 1)) and nonpadding_mask is not None:
        while nonpadding_mask.get_shape().ndims < inputs.get_shape().ndims:
            nonpadding_mask = tf.expand_dims(nonpadding_mask, -1)
        return inputs * cast_like(nonpadding_mask, inputs)
    return inputs


def conv_hidden_relu(inputs, hidden_size, output_size, kernel_size=(1, 1),
                     second_kernel_size=(1, 1), dropout=0.0, **kwargs):
    """conv (relu) to hidden_size, dropout, conv to output_size; a 3-D input stays 3-D.

    A kernel of (1, 1) is a plain conv, a larger one a separable conv. Variables
    "conv_hidden_relu/conv1_single/*" and ".../conv2_single/*".

        conv_hidden_relu(tf.zeros([2, 5, 16]), 64, 16)   # [2, 5, 16]
    """
    name = kwargs.pop("name", None)
    with _v1.variable_scope(name, "conv_hidden_relu", [inputs]):
        is_3d = inputs.get_shape().ndims == 3
        if is_3d:
            inputs = tf.expand_dims(inputs, 2)
        conv_f1 = conv if tuple(_pair(kernel_size)) == (1, 1) else separable_conv
        h = conv_f1(inputs, hidden_size, kernel_size, activation=tf.nn.relu, name="conv1",
                    **kwargs)
        if dropout != 0.0:
            h = tf.nn.dropout(h, rate=dropout)
        conv_f2 = conv if tuple(_pair(second_kernel_size)) == (1, 1) else separable_conv
        ret = conv_f2(h, output_size, second_kernel_size, name="conv2", **kwargs)
        return tf.squeeze(ret, 2) if is_3d else ret


def conv_block_internal(conv_fn, inputs, filters, dilation_rates_and_kernel_sizes,
                        first_relu=True, use_elu=False, separabilities=None, **kwargs):
    """A stack of convolutions, each (relu or elu), conv_fn, normalisation.

    dilation_rates_and_kernel_sizes: one (dilation, kernel size) per layer. The first
    layer skips its activation unless first_relu. kwargs: `name` (scope, "conv_block" by
    default), `mask` (multiplied in before each conv), `normalizer_fn` (layer_norm when
    absent, None for none; called as fn(x, name=...)), and anything conv_fn takes.
    Variables "conv_block_<i>_single/*" and "conv_block_norm_<i>/*"; the convs have a bias
    only without normalisation.
    """
    name = kwargs.pop("name", None)
    mask = kwargs.pop("mask", None)
    use_layer_norm = "normalizer_fn" not in kwargs
    norm = kwargs.pop("normalizer_fn", None)
    use_normalizer_fn = use_layer_norm or norm
    if use_layer_norm:
        norm = lambda x, name: layer_norm(x, filters, name=name)  # noqa: E731
    with _v1.variable_scope(name, "conv_block", [inputs]):
        cur = inputs
        for counter, (dilation_rate, kernel_size) in enumerate(dilation_rates_and_kernel_sizes):
            if first_relu or counter > 0:
                cur = tf.nn.elu(cur) if use_elu else tf.nn.relu(cur)
            if mask is not None:
                cur *= mask
            if separabilities:
                kwargs["separability"] = separabilities[counter]
            cur = conv_fn(cur, filters, kernel_size, dilation_rate=dilation_rate,
                          name="conv_block_%d" % counter, use_bias=norm is None, **kwargs)
            if use_normalizer_fn:
                cur = norm(cur, name="conv_block_norm_%d" % counter)
        return cur


def conv_block(inputs, filters, dilation_rates_and_kernel_sizes, **kwargs):
    """A block of 2-D convolutions (see conv_block_internal).

        conv_block(x, 8, [((1, 1), (3, 1)), ((2, 1), (3, 1))], padding="SAME")
    """
    return conv_block_internal(conv, inputs, filters, dilation_rates_and_kernel_sizes, **kwargs)


def conv1d_block(inputs, filters, dilation_rates_and_kernel_sizes, **kwargs):
    """A block of 1-D convolutions on [batch, length, channels]: [(1, 3), (2, 3)] = two
    width-3 convs, the second dilated by 2."""
    return conv_block_internal(conv1d, inputs, filters, dilation_rates_and_kernel_sizes,
                               **kwargs)


def separable_conv_block(inputs, filters, dilation_rates_and_kernel_sizes, **kwargs):
    """A block of separable convolutions."""
    return conv_block_internal(separable_conv, inputs, filters,
                               dilation_rates_and_kernel_sizes, **kwargs)


def subseparable_conv_block(inputs, filters, dilation_rates_and_kernel_sizes, **kwargs):
    """A block of sub-separable convolutions (`separabilities`: one per layer)."""
    return conv_block_internal(subseparable_conv, inputs, filters,
                               dilation_rates_and_kernel_sizes, **kwargs)


def sepconv_relu_sepconv(inputs, filter_size, output_size, first_kernel_size=(1, 1),
                         second_kernel_size=(1, 1), padding="LEFT", nonpadding_mask=None,
                         dropout=0.0, name=None):
    """separable_conv (relu) to filter_size, dropout, separable_conv to output_size, padding
    positions zeroed before each conv wider than 1; a 3-D input stays 3-D. Variables
    "sepconv_relu_sepconv/conv1_single/*" and ".../conv2_single/*"."""
    with _v1.variable_scope(name, "sepconv_relu_sepconv", [inputs]):
        inputs = maybe_zero_out_padding(inputs, first_kernel_size, nonpadding_mask)
        is_3d = inputs.get_shape().ndims == 3
        if is_3d:
            inputs = tf.expand_dims(inputs, 2)
        h = separable_conv(inputs, filter_size, first_kernel_size, activation=tf.nn.relu,
                           padding=padding, name="conv1")
        if dropout != 0.0:
            h = tf.nn.dropout(h, rate=dropout)
        h = maybe_zero_out_padding(h, second_kernel_size, nonpadding_mask)
        ret = separable_conv(h, output_size, second_kernel_size, padding=padding, name="conv2")
        return tf.squeeze(ret, 2) if is_3d else ret


def conv_hidden_relu_memory_efficient(x, filter_size, epsilon=1e-6, forget=True,
                                      test_vars=None, name=None):
    """x [batch, length, d] -> conv(relu(conv(layer_norm(x)))) [batch, length, d], kernel
    size 1, computed over 4 splits of the flattened positions."""
    io_size = x.get_shape().as_list()[-1]
    del forget  # the activations are kept: see t2t.layers.memory_efficient
    with _v1.variable_scope(name, default_name="ffn2", values=[x]):
        if test_vars is not None:
            f1, f2, scale, bias = test_vars
        else:
            f1 = _v1.get_variable("f1", [1, io_size, filter_size])
            f2 = _v1.get_variable("f2", [1, filter_size, io_size])
            scale, bias = layer_norm_vars(io_size)
        x_flat = tf.reshape(x, [-1, 1, io_size])
        ys = []
        for part in approximate_split(x_flat, 4):
            n = layer_norm_compute(part, epsilon, scale, bias)
            ys.append(tf.nn.conv1d(tf.nn.relu(tf.nn.conv1d(n, f1, 1, "SAME")), f2, 1, "SAME"))
        y = tf.reshape(tf.concat(ys, 0), shape_list(x))
        y.set_shape(x.get_shape())
        return y
