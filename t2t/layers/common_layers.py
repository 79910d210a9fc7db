"""Layers shared by the models, with T2T 1.15.7's names, signatures and variable names.

Every layer creates its variables with `tf.compat.v1.get_variable` inside a
`tf.compat.v1.variable_scope`, so a body built twice under a reusing scope (training graph,
then the step-by-step decoder in a while_loop) shares its weights, and a layer given no
initializer takes the enclosing scope's (T2TModel sets `hparams.initializer` there).

    x = tf.zeros([2, 5, 16])
    h = dense(x, 32, activation=tf.nn.relu, name="ffn")   # [2, 5, 32], vars ffn/kernel, ffn/bias
    y = layer_norm(h)                                      # [2, 5, 32], zero mean per position

Losses and token weights live in `t2t.layers.losses`, dropout in `t2t.layers.dropout`,
shape helpers in `t2t.layers.shape_utils`, normalisation in `normalization`, convolutions
and their blocks in `conv_layers`, masks and lengths in `masks`, and T2T's smaller building
blocks each in a module of its own (`activations`, `nalu`, `pooling`, `set_layers`,
`recurrent` (sru, conv_gru, conv_lstm, diagonal_conv_gru), `sampling`, `factored`
(FactoredTensor), `custom_gradients`, `discretized_logistic` (dml_loss)); all are re-exported here under T2T's names
(`common_layers.padded_cross_entropy`, `common_layers.conv`, `common_layers.sru`, ...).
"""
import contextlib
import threading

import numpy as np
import tensorflow as tf

from t2t.layers.activations import (belu, brelu, gelu, hard_sigmoid, hard_tanh,
    saturating_sigmoid)
from t2t.layers.conv_layers import (conv, conv1d, conv1d_block, conv_block,
    conv_block_internal, conv_hidden_relu, conv_hidden_relu_memory_efficient,
    maybe_zero_out_padding, separable_conv,
    separable_conv_block, sepconv_relu_sepconv, subseparable_conv, subseparable_conv_block)
from t2t.layers.custom_gradients import fn_with_custom_grad, recompute_grad
from t2t.layers.discretized_logistic import (discretized_mix_logistic_loss, dml_loss,
    sample_from_discretized_mix_logistic, split_to_discretized_mix_logistic_params)
from t2t.layers.dropout import dropout, dropout_no_scaling, dropout_with_broadcast_dims
from t2t.layers.factored import (FactoredTensor, padded_cross_entropy_factored,
    smoothing_cross_entropy_factored)
from t2t.layers.losses import (check_nonnegative, pad_to_same_length, pad_with_zeros,
    padded_cross_entropy, smoothing_cross_entropy, weights_all, weights_concatenated,
    weights_multi_problem, weights_multi_problem_all, weights_multi_problem_input,
    weights_nonzero, weights_prepend_inputs_to_targets)
from t2t.layers.masks import (length_from_embedding, mask_from_embedding, mask_leq,
    mask_pos_gt, mask_pos_lt, ones_matrix_band_part)
from t2t.layers.nalu import nac, nalu
from t2t.layers.normalization import (_check_no_layer_collection, apply_norm, forward_only,
    group_norm, is_forward_only, l2_norm, layer_norm, layer_norm_compute, layer_norm_vars,
    noam_norm)
from t2t.layers.pooling import global_pool_1d, pool, running_global_pool_1d
from t2t.layers.recurrent import conv_gru, conv_lstm, diagonal_conv_gru, sru
from t2t.layers.sampling import _select_top_k, sample_temperature_per_example  # noqa: F401
from t2t.layers.set_layers import linear_set_layer, ravanbakhsh_set_layer
from t2t.layers.shape_utils import (approximate_split, cast_like, expand_squeeze_to_nd,
    flatten4d3d, list_product, reshape_like, shape_list, to_float, variable_dtype)

_v1 = tf.compat.v1


# --------------------------------------------------------------------------- graph context
_jit_scope_state = threading.local()


@contextlib.contextmanager
def xla_jit_scope():
    """`tf.xla.experimental.jit_scope`, and `is_xla_compiled()` answers True inside it.

    Layers then take their static-shape paths (no pad remover, whose data-dependent shapes
    would make XLA recompile at every batch).
    """
    depth = getattr(_jit_scope_state, "depth", 0)
    _jit_scope_state.depth = depth + 1
    try:
        with tf.xla.experimental.jit_scope(compile_ops=True,
                                           separate_compiled_gradients=False):
            yield
    finally:
        _jit_scope_state.depth = depth


def is_xla_compiled():
    """True inside an XLA compilation context (TPU, jit_compile, xla_jit_scope), else False."""
    if getattr(_jit_scope_state, "depth", 0):
        return True
    try:
        from tensorflow.python.ops import control_flow_util
    except ImportError:  # private module moved: assume no XLA, the safe answer here
        return False
    graph = _v1.get_default_graph()
    context = getattr(graph, "_get_control_flow_context", lambda: None)()
    return control_flow_util.GetContainingXLAContext(context) is not None


def should_generate_summaries():
    """Whether layers should add summaries here.

    No in eager mode, inside while loops and other function graphs (summaries there are
    lost or break), and under a reusing variable scope (one summary per layer, not per
    data shard or decoding step).
    """
    if tf.executing_eagerly():
        return False
    graph = _v1.get_default_graph()
    if getattr(graph, "outer_graph", None) is not None:  # a FuncGraph: while/cond/function
        return False
    name_scope = graph.get_name_scope()
    if name_scope and "while/" in name_scope:
        return False
    if _v1.get_variable_scope().reuse:
        return False
    return True


def mixed_precision_is_enabled(activation_dtype=None, weight_dtype=None, hparams=None):
    """True when activations are float16 and weights float32 (from args or hparams)."""
    if hparams is not None and (activation_dtype or weight_dtype):
        raise ValueError("mixed_precision_is_enabled: pass either hparams or the dtypes, "
                         "not both")
    if hparams is not None:
        activation_dtype = hparams.get("activation_dtype")
        weight_dtype = hparams.get("weight_dtype")
    if activation_dtype is None or weight_dtype is None:
        return False
    return (tf.as_dtype(activation_dtype) == tf.float16 and
            tf.as_dtype(weight_dtype) == tf.float32)


def comma_separated_string_to_integer_list(s):
    """"1, 2" -> [1, 2]; "" -> []."""
    return [int(i) for i in s.split(",") if i.strip()]


# --------------------------------------------------------------------------- dense and conv
def dense(x, units, use_bias=True, activation=None, name=None, kernel_initializer=None,
          bias_initializer=None, reuse=None, layer_collection=None, trainable=True,
          kernel_transform=None):
    """Fully connected layer on the last axis of a tensor of any rank >= 2.

        dense(tf.zeros([2, 7, 1, 16]), 8, name="proj")   # [2, 7, 1, 8]; proj/kernel [16, 8]

    Variables are `<scope>/kernel` [depth, units] and `<scope>/bias` [units] (zeros), as
    tf.layers.dense named them. With no `kernel_initializer` the scope's default is used;
    `kernel_transform` (kernel -> kernel) is applied to the kernel before the product.
    """
    _check_no_layer_collection(layer_collection, "dense")
    x = tf.convert_to_tensor(x)
    if x.get_shape().ndims is None or x.get_shape().ndims < 2:
        raise ValueError("dense: input must have rank >= 2, got shape %s" % x.get_shape())
    depth = x.get_shape().as_list()[-1]
    if depth is None:
        raise ValueError("dense: the last dimension of the input must be static, got shape %s"
                         % x.get_shape())
    with _v1.variable_scope(name, default_name="dense", values=[x], reuse=reuse):
        kernel = _v1.get_variable("kernel", [depth, units], dtype=variable_dtype(x),
                                  initializer=kernel_initializer, trainable=trainable)
        kernel = cast_like(kernel, x)
        if kernel_transform is not None:
            kernel = kernel_transform(kernel)
        if x.get_shape().ndims == 2:
            outputs = tf.matmul(x, kernel)
        else:
            # The 2-D MatMul tf.tensordot would run, on the same [rows, depth] matrix (so
            # the same values), without the ~10 small shape ops tensordot builds when a
            # dimension is dynamic (they ran 18 times a step in a Multi30k decode).
            outputs = tf.matmul(tf.reshape(x, [-1, depth]), kernel)
            output_shape = x.get_shape().as_list()[:-1] + [units]
            if None in output_shape:
                output_shape = tf.concat([tf.shape(x)[:-1], [units]], axis=0)
            outputs = tf.reshape(outputs, output_shape)
            outputs.set_shape(x.get_shape()[:-1].concatenate([units]))
        if use_bias:
            bias = _v1.get_variable("bias", [units], dtype=variable_dtype(x),
                                    initializer=bias_initializer or _v1.zeros_initializer(),
                                    trainable=trainable)
            outputs = tf.nn.bias_add(outputs, cast_like(bias, x))
        if activation is not None:
            outputs = activation(outputs)
        return outputs


def dense_dropconnect(inputs, output_size, dropconnect_dropout=0.0, name="dense_dropconnect",
                      **kwargs):
    """`dense` whose kernel entries are dropped at rate `dropconnect_dropout` (DropConnect,
    Wan et al. 2013) each time it runs; 0 (T2T zeroes *dropout hparams outside training)
    is a plain dense. Variables `<name>/kernel` and `<name>/bias`, as T2T's.

        dense_dropconnect(x, 8, dropconnect_dropout=0.5)   # [..., 8]

    T2T passed the dropout as a kernel *regularizer*, which added a dropped copy of the
    kernel to the regularization losses and left the product undropped (t2t_differences).
    """
    if dropconnect_dropout:
        kwargs["kernel_transform"] = lambda kernel: tf.nn.dropout(kernel,
                                                                  rate=dropconnect_dropout)
    return dense(inputs, output_size, use_bias=True, name=name, **kwargs)


def tpu_conv1d(inputs, filters, kernel_size, padding="SAME", name="tpu_conv1d"):
    """A 1-D convolution as a sum of shifted dense layers (T2T's TPU-friendly version).

    padding "SAME" needs an odd kernel; "LEFT" is causal. Output [batch, length, filters].
    """
    if kernel_size == 1:
        return dense(inputs, filters, name=name, use_bias=True)
    if padding == "SAME":
        if kernel_size % 2 != 1:
            raise ValueError("tpu_conv1d: padding 'SAME' needs an odd kernel_size, got %d"
                             % kernel_size)
        first_offset = -((kernel_size - 1) // 2)
    elif padding == "LEFT":
        first_offset = -(kernel_size - 1)
    else:
        raise ValueError("tpu_conv1d: padding must be 'SAME' or 'LEFT', got %r" % padding)
    last_offset = first_offset + kernel_size - 1
    padded = tf.pad(inputs, [[0, 0], [-first_offset, last_offset], [0, 0]])
    results = []
    for i in range(kernel_size):
        shifted = tf.slice(padded, [0, i, 0], shape_list(inputs)) if i else inputs
        shifted.set_shape(inputs.get_shape())
        results.append(dense(shifted, filters, use_bias=(i == 0), name=name + "_%d" % i))
    return tf.add_n(results) * kernel_size ** -0.5


def dense_relu_dense(inputs, filter_size, output_size, output_activation=None, dropout=0.0,
                     dropout_broadcast_dims=None, layer_collection=None, name=None):
    """The Transformer feed-forward block: dense+relu, dropout, dense.

        dense_relu_dense(tf.zeros([2, 5, 16]), 64, 16)   # [2, 5, 16]; vars conv1/*, conv2/*
    """
    _check_no_layer_collection(layer_collection, "dense_relu_dense")
    layer_name = "%s_{}" % name if name else "{}"
    h = dense(inputs, filter_size, use_bias=True, activation=tf.nn.relu,
              name=layer_name.format("conv1"))
    if dropout != 0.0:
        h = dropout_with_broadcast_dims(h, 1.0 - dropout, broadcast_dims=dropout_broadcast_dims)
    return dense(h, output_size, activation=output_activation, use_bias=True,
                 name=layer_name.format("conv2"))


def conv_relu_conv(inputs, filter_size, output_size, first_kernel_size=3,
                   second_kernel_size=3, padding="SAME", nonpadding_mask=None, dropout=0.0,
                   name=None, cache=None, decode_loop_step=None):
    """conv, relu, dropout, conv on [batch, length, depth] (padding "SAME" or "LEFT").

    With `cache` (a dict, for step-by-step decoding with "LEFT" padding), cache["f"] holds
    the last `first_kernel_size` inputs, [batch, first_kernel_size, depth], and `inputs` is
    the new position only.
    """
    with _v1.variable_scope(name, "conv_relu_conv", [inputs]):
        inputs = maybe_zero_out_padding(inputs, first_kernel_size, nonpadding_mask)
        if cache:
            if decode_loop_step is None:
                inputs = cache["f"] = tf.concat([cache["f"], inputs], axis=1)
            else:
                # Fixed-size cache: write the new input at decode_loop_step.
                length = shape_list(cache["f"])[1]
                mask = tf.reshape(tf.one_hot(decode_loop_step, length, dtype=inputs.dtype),
                                  [1, length, 1])
                inputs = cache["f"] = cache["f"] * (1.0 - mask) + inputs * mask
            inputs = cache["f"] = inputs[:, -first_kernel_size:, :]
        h = tpu_conv1d(inputs, filter_size, first_kernel_size, padding=padding, name="conv1")
        if cache:
            h = h[:, -1:, :]
        h = tf.nn.relu(h)
        if dropout != 0.0:
            h = dropout_with_broadcast_dims(h, 1.0 - dropout)
        h = maybe_zero_out_padding(h, second_kernel_size, nonpadding_mask)
        return tpu_conv1d(h, output_size, second_kernel_size, padding=padding, name="conv2")


def zero_add(previous_value, x, name=None, reuse=None):
    """previous_value + gamma * x with a scalar gamma starting at 0 (ReZero-style residual)."""
    with _v1.variable_scope(name, default_name="zero_add", reuse=reuse):
        gamma = _v1.get_variable("gamma", (), initializer=_v1.zeros_initializer())
        return previous_value + cast_like(gamma, x) * x


def layer_prepostprocess(previous_value, x, sequence, dropout_rate, norm_type, depth, epsilon,
                         default_name, name=None, dropout_broadcast_dims=None,
                         layer_collection=None):
    """Apply a sequence of steps to `x`, one letter each (T2T's pre/post-processing).

    "a": add previous_value (residual), "z": zero_add residual, "n": apply_norm,
    "d": dropout with dropout_rate; "none" does nothing. Post-norm Transformers use "dan"
    (dropout, add, norm) after each layer; pre-norm ones "n" before and "da" after.

        y = layer_prepostprocess(x, f_x, "dan", 0.1, "layer", None, 1e-6, "post")
        # layer_norm(x + dropout(f_x))
    """
    with _v1.variable_scope(name, default_name=default_name):
        if sequence == "none":
            return x
        for step in sequence:
            if step == "a":
                x += previous_value
            elif step == "z":
                x = zero_add(previous_value, x)
            elif step == "n":
                x = apply_norm(x, norm_type, depth, epsilon, layer_collection=layer_collection)
            elif step == "d":
                x = dropout_with_broadcast_dims(x, 1.0 - dropout_rate,
                                                broadcast_dims=dropout_broadcast_dims)
            else:
                raise ValueError("unknown step %r in layer pre/postprocess sequence %r; use "
                                 "letters from 'a', 'z', 'n', 'd' or 'none'" % (step, sequence))
        return x


def _prepostprocess_broadcast_dims(hparams):
    return comma_separated_string_to_integer_list(
        getattr(hparams, "layer_prepostprocess_dropout_broadcast_dims", ""))


def layer_preprocess(layer_input, hparams, layer_collection=None):
    """Apply hparams.layer_preprocess_sequence (no residual steps allowed) to layer_input."""
    sequence = hparams.layer_preprocess_sequence
    if "a" in sequence or "z" in sequence:
        raise ValueError("hparams.layer_preprocess_sequence %r has a residual step ('a' or "
                         "'z'); put residuals in layer_postprocess_sequence" % sequence)
    return layer_prepostprocess(
        None, layer_input, sequence=sequence,
        dropout_rate=hparams.layer_prepostprocess_dropout, norm_type=hparams.norm_type,
        depth=None, epsilon=hparams.norm_epsilon,
        dropout_broadcast_dims=_prepostprocess_broadcast_dims(hparams),
        default_name="layer_prepostprocess", layer_collection=layer_collection)


def layer_postprocess(layer_input, layer_output, hparams):
    """Apply hparams.layer_postprocess_sequence ("dan" by default) to a layer's output."""
    return layer_prepostprocess(
        layer_input, layer_output, sequence=hparams.layer_postprocess_sequence,
        dropout_rate=hparams.layer_prepostprocess_dropout, norm_type=hparams.norm_type,
        depth=None, epsilon=hparams.norm_epsilon,
        dropout_broadcast_dims=_prepostprocess_broadcast_dims(hparams),
        default_name="layer_postprocess")


# --------------------------------------------------------------------------- shifting, padding
def shift_right(x, pad_value=None):
    """Shift [batch, length, 1, depth] right by one position along length.

    The first position becomes zeros (or `pad_value`, shaped [batch, 1, 1, depth]);
    the last position falls off. Used to feed targets to an autoregressive decoder.
    """
    if pad_value is None:
        shifted = tf.pad(x, [[0, 0], [1, 0], [0, 0], [0, 0]])[:, :-1, :, :]
    else:
        shifted = tf.concat([pad_value, x], axis=1)[:, :-1, :, :]
    return shifted


def shift_right_3d(x, pad_value=None):
    """shift_right for [batch, length, depth]: [[a, b, c]] -> [[0, a, b]]."""
    if pad_value is None:
        shifted = tf.pad(x, [[0, 0], [1, 0], [0, 0]])[:, :-1, :]
    else:
        shifted = tf.concat([pad_value, x], axis=1)[:, :-1, :]
    return shifted


def shift_right_2d(x, pad_value=None):
    """shift_right for [batch, length]: [[3, 4, 5]] -> [[0, 3, 4]]."""
    if pad_value is None:
        shifted = tf.pad(x, [[0, 0], [1, 0]])[:, :-1]
    else:
        shifted = tf.concat([pad_value, x], axis=1)[:, :-1]
    return shifted


def get_timing_signal(length, min_timescale=1, max_timescale=1e4, num_timescales=16):
    """Sinusoids of `num_timescales` geometric timescales: [length, 2 * num_timescales].

    Row p is sin(p / t) for each timescale t, then cos(p / t) (T2T's 4-D timing signal).
    """
    positions = tf.cast(tf.range(length), tf.float32)
    log_increment = np.log(max_timescale / min_timescale) / max(num_timescales - 1, 1)
    inv_timescales = min_timescale * tf.exp(
        tf.cast(tf.range(num_timescales), tf.float32) * -log_increment)
    scaled_time = tf.expand_dims(positions, 1) * tf.expand_dims(inv_timescales, 0)
    return tf.concat([tf.sin(scaled_time), tf.cos(scaled_time)], axis=1)


def add_timing_signal(x, min_timescale=1, max_timescale=1e4, num_timescales=16):
    """x [batch, length, width, depth] plus `get_timing_signal` along length, zero-padded
    to depth (the first 2 * num_timescales channels), as T2T's SliceNet adds it.

        add_timing_signal(tf.zeros([2, 5, 1, 40]))[0, :, 0, :32]   # the 5 x 32 sinusoids
    """
    length, depth = shape_list(x)[1], shape_list(x)[3]
    signal = get_timing_signal(length, min_timescale, max_timescale, num_timescales)
    signal = tf.pad(signal, [[0, 0], [0, depth - 2 * num_timescales]])
    return x + tf.cast(tf.reshape(signal, [1, length, 1, depth]), x.dtype)


def index_last_dim_with_indices(x, indices):
    """x[..., indices[...]]: pick one element of the last axis per position.

        index_last_dim_with_indices(tf.constant([[1., 2.], [3., 4.]]), tf.constant([1, 0]))
        # [2., 3.]
    """
    if len(x.shape) != len(indices.shape) + 1:
        raise ValueError("index_last_dim_with_indices: x must have one more axis than "
                         "indices, got shapes %s and %s" % (x.shape, indices.shape))
    return tf.gather(x, tf.cast(indices, tf.int32), batch_dims=len(indices.shape))


# --------------------------------------------------------------------------- embeddings
@tf.custom_gradient
def _identity_with_dense_gradient(x):
    def grad(dy):
        return tf.convert_to_tensor(dy)
    return tf.identity(x), grad


_dense_gradients = threading.local()


@contextlib.contextmanager
def dense_gradients_in_functions():
    """Within it `convert_gradient_to_tensor` applies inside tf.functions too.

    For a training step's function, which is run and never saved (the native backend's
    train step): without it a sharded embedding's gradient stays sparse there, through
    the concat of its shards, into a sparse optimizer update.
    """
    previous = getattr(_dense_gradients, "enabled", False)
    _dense_gradients.enabled = True
    try:
        yield
    finally:
        _dense_gradients.enabled = previous


def convert_gradient_to_tensor(x):
    """Identity whose gradient is a dense tensor, not IndexedSlices.

    The gradient of a gather is sparse; densifying it once here (as T2T did) avoids
    repeated sparse aggregation when an embedding matrix is read by several gathers.
    Inside a tf.function `x` is returned as is (unless within
    `dense_gradients_in_functions`): a SavedModel cannot carry this custom gradient (its
    saved form rejects the IndexedSlices a gather produces).
    """
    if is_forward_only() or (getattr(_v1.get_default_graph(), "outer_graph", None) is not None
                              and not getattr(_dense_gradients, "enabled", False)):
        return x
    return _identity_with_dense_gradient(x)


def gather(params, indices, dtype=tf.float32):
    """tf.gather that casts `params` to `dtype` first (embedding look-ups)."""
    return tf.gather(tf.cast(params, dtype) if params.dtype != dtype else params, indices)


def embedding(x, vocab_size, dense_size, name=None, reuse=None, multiplier=1.0,
              symbol_dropout_rate=0.0, embedding_var=None, dtype=tf.float32):
    """Embed int ids: [batch, length(, 1)] -> [batch, length, dense_size].

    Variable `<scope>/kernel` [vocab_size, dense_size]. A 4-D input [B, L, 1, 1] gives
    [B, L, 1, dense_size] (the channel axis is squeezed). `symbol_dropout_rate` replaces
    ids by 0 with that probability before the look-up.
    """
    with _v1.variable_scope(name, default_name="embedding", values=[x], reuse=reuse,
                            dtype=dtype):
        if embedding_var is None:
            embedding_var = _v1.get_variable("kernel", [vocab_size, dense_size])
        if not tf.executing_eagerly():
            embedding_var = convert_gradient_to_tensor(embedding_var)
        x = dropout_no_scaling(x, 1.0 - symbol_dropout_rate)
        emb_x = gather(embedding_var, x, dtype)
        if multiplier != 1.0:
            emb_x *= multiplier
        static_shape = emb_x.shape.as_list()
        if len(static_shape) < 5:
            return emb_x
        # A 4-D input had a channel axis of size 1; drop it.
        return tf.squeeze(emb_x, 3)


# --------------------------------------------------------------------------- sampling
def log_prob_from_logits(logits, reduce_axis=-1):
    """Log-softmax: logits - logsumexp(logits)."""
    return logits - tf.reduce_logsumexp(logits, axis=reduce_axis, keepdims=True)


def top_kth_iterative(x, k):
    """The k-th largest value of the last axis of non-negative `x`, keepdims (no gradient).

        top_kth_iterative(tf.constant([[0.1, 0.5, 0.3]]), 2)   # [[0.3]]
    """
    def next_x(cur_x, _):
        top_x = tf.reduce_max(cur_x, axis=-1, keepdims=True)
        return cur_x * to_float(cur_x < top_x)

    fin_x = tf.stop_gradient(x)
    if isinstance(k, int):
        for _ in range(k - 1):
            fin_x = next_x(fin_x, None)
    else:
        fin_x = tf.foldl(next_x, tf.range(k - 1), initializer=fin_x, parallel_iterations=2,
                         back_prop=False)
    return tf.stop_gradient(tf.reduce_max(fin_x, axis=-1, keepdims=True))


def sample_with_temperature(logits, temperature, sampling_keep_top_k=-1, seed=None):
    """Sample ids from logits [..., vocab]: argmax when temperature is 0.

    sampling_keep_top_k > 0 samples only among the k largest logits. seed: None (a stateful
    random op, as T2T), an int, or a shape-[2] int tensor for a stateless, reproducible draw.
    Returns int64 ids of shape logits.shape[:-1].

        sample_with_temperature(tf.constant([[0., 5., 1.]]), 0.0)        # [1]
        sample_with_temperature(tf.constant([[0., 5., 1.]]), 2.0, 1, 7)  # [1]: only the best
    """
    logits_shape = shape_list(logits)
    if isinstance(temperature, (int, float)) and temperature == 0.0:
        argmax = tf.argmax(tf.reshape(logits, [-1, logits_shape[-1]]), axis=1)
        return tf.reshape(argmax, logits_shape[:-1])
    if isinstance(temperature, (int, float)) and temperature < 0.0:
        raise ValueError("sample_with_temperature: temperature must be >= 0, got %r"
                         % temperature)
    if sampling_keep_top_k != -1:
        if sampling_keep_top_k <= 0:
            raise ValueError("sampling_keep_top_k must be -1 (off) or positive, got %r"
                             % sampling_keep_top_k)
        # Works for logits of any rank (T2T's version assumed [batch, vocab]).
        kth_largest = tf.math.top_k(logits, k=sampling_keep_top_k).values[..., -1:]
        logits = tf.where(logits < kth_largest, tf.ones_like(logits) * -1e6, logits)
    reshaped_logits = tf.reshape(logits, [-1, logits_shape[-1]]) / temperature
    if seed is None:
        choices = tf.random.categorical(reshaped_logits, 1)
    else:
        choices = tf.random.stateless_categorical(
            reshaped_logits, 1, seed=[seed, 0] if isinstance(seed, int) else seed)
    return tf.reshape(choices, logits_shape[:-1])


# --------------------------------------------------------------------------- misc
def relu_density_logit(x, reduce_dims):
    """logit(fraction of x > 0) over reduce_dims: a summary of how many relus fire."""
    frac = tf.reduce_mean(to_float(x > 0.0), reduce_dims)
    return tf.math.log(frac + np.exp(-10)) - tf.math.log((1.0 - frac) + np.exp(-10))


def convert_rgb_to_real(x):
    """Pixel values 0..255 -> floats 0..1."""
    with tf.name_scope("rgb_to_real"):
        return to_float(x) / 255.0


def convert_rgb_to_symmetric_real(x):
    """Pixel values 0..255 -> floats -1..1."""
    with tf.name_scope("rgb_to_real"):
        return (to_float(x) / 127.5) - 1.0


def convert_real_to_rgb(x):
    """Floats 0..1 -> pixel values 0..255 (still float)."""
    with tf.name_scope("real_to_rgb"):
        return x * 255.0


def tpu_safe_image_summary(image):
    """An image tensor acceptable to tf.summary.image (uint8 off TPU)."""
    if is_xla_compiled():
        return image if image.dtype == tf.float32 else to_float(image)
    return tf.cast(image, tf.uint8)


def _global_step_float(step):
    if step is None:
        step = _v1.train.get_global_step()
    if step is None:
        return 0.0
    return to_float(step)


def inverse_exp_decay(max_step, min_value=0.01, step=None):
    """Rises exponentially from min_value to 1.0 at max_step (the global step by default)."""
    inv_base = tf.exp(tf.math.log(min_value) / float(max_step))
    step = _global_step_float(step)
    return inv_base ** tf.maximum(float(max_step) - step, 0.0)


def inverse_lin_decay(max_step, min_value=0.01, step=None):
    """Rises linearly from min_value to 1.0 at max_step (the global step by default)."""
    step = _global_step_float(step)
    progress = tf.minimum(step / float(max_step), 1.0)
    return progress * (1.0 - min_value) + min_value
