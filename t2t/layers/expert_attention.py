"""T2T 1.15.7's attention over a mixture of experts (`common_attention.local_expert_attention`
and its helpers): a noisy top-k gate sends each position of a flattened batch to k of
`attention_num_experts` experts, and the positions an expert receives attend to each other
(never across examples, and, with mask_right, never to later positions).

    x = tf.zeros([1, 12, 32])                              # [1, batch*length, depth]
    bc = tf.expand_dims(coordinate_tensor(tf.shape(x)[:-1], axis=0), -1)
    y, loss = local_expert_attention(x, k=2, loss_coef=1e-2, attention_num_experts=4,
                                     batch_coordinate=bc)  # y [1, 12, 32], loss scalar

Also `coordinate_tensor` and T2T's strided (de)convolutions `deconv_elems_1d` /
`conv_elems_1d`, which split each position into `factor` smaller ones before the experts
and merge them after (attention_lm_moe's attention_exp_factor). Variables (T2T's names):
`local_expert_attention/local_moe/{w_gate,w_noise}` and each expert's
`.../parallel_<i>/multihead_attention/{q,k,v,output_transform}/kernel`.
"""
import functools

import tensorflow as tf

from t2t.layers import common_attention
from t2t.layers import expert_utils
from t2t.layers.shape_utils import shape_list

_v1 = tf.compat.v1


@expert_utils.add_name_scope()
def coordinate_tensor(shape, axis):
    """An int32 tensor of `shape` whose elements are their coordinate along `axis`.

        coordinate_tensor([2, 3], axis=0)   # [[0, 0, 0], [1, 1, 1]]
    """
    shape = tf.convert_to_tensor(shape)
    rank = tf.size(shape)
    if axis < 0:
        axis = rank + axis
    r_shape = tf.one_hot(axis, rank, on_value=-1, off_value=1, dtype=tf.int32)
    return tf.zeros(shape, dtype=tf.int32) + tf.reshape(tf.range(shape[axis]), r_shape)


def self_attention_expert(x, batch_coordinate, mask_right=True, split_batch=False,
                          attention_num_head=1, attention_kq_size=None,
                          attention_v_size=None):
    """One expert: multihead self-attention among the positions it received.

    x [n, depth] (positions in their original order), batch_coordinate [n, 1] (the example
    of each) -> [n, depth]. Positions of different examples never attend to each other
    (split_batch: each example separately, by map_ids; else a bias); mask_right adds the
    causal mask. An expert that received nothing returns [0, depth].
    """
    depth = x.get_shape().as_list()[-1]
    length = shape_list(batch_coordinate)[0]
    attention_kq_size = attention_kq_size or depth
    attention_v_size = attention_v_size or depth

    def attend(seq, bias_batch):
        seq_length = shape_list(seq)[1]
        bias = None
        if mask_right:
            bias = tf.reshape(common_attention.attention_bias_lower_triangle(seq_length),
                              [seq_length, seq_length])
        if bias_batch is not None:
            bias = bias_batch if bias is None else bias + bias_batch
        if bias is not None:
            bias = tf.reshape(bias, [1, 1, seq_length, seq_length])
        return common_attention.multihead_attention(
            seq, None, bias, total_key_depth=attention_kq_size,
            total_value_depth=attention_v_size, output_depth=depth,
            num_heads=attention_num_head, dropout_rate=0.0)

    def length_not_null():
        if split_batch:
            return expert_utils.map_ids(x, batch_coordinate, lambda s: attend(s, None))
        bias_batch = common_attention.attention_bias_coordinates(batch_coordinate)
        return tf.squeeze(attend(tf.reshape(x, [1, length, depth]), bias_batch), 0)

    return tf.cond(tf.equal(length, 0),
                   lambda: tf.zeros([0, depth], dtype=x.dtype, name="empty_out"),
                   length_not_null)


def local_expert_attention(x, k, loss_coef, attention_num_experts, train=True,
                           batch_coordinate=None, **kwargs):
    """x [batch, length, depth] or [1, batch*length, depth] -> (y like x, load loss).

    The gating is expert_utils.local_moe's (noisy top-k, loss_coef * (cv^2(importance) +
    cv^2(load))); kwargs go to self_attention_expert. batch_coordinate [1, n, 1] int32:
    the example of each position (None: the first axis of x). Remove padding first (all
    padding would otherwise crowd one expert and be attended to).
    """
    if batch_coordinate is None:
        batch_coordinate = tf.expand_dims(
            coordinate_tensor(shape_list(x)[:-1], axis=0), axis=-1)
    with _v1.variable_scope("local_expert_attention"):
        return expert_utils.local_moe(
            x, train, functools.partial(self_attention_expert, **kwargs),
            attention_num_experts, k=k, loss_coef=loss_coef, pass_x=True, pass_gates=False,
            additional_dispatch_params={"batch_coordinate": batch_coordinate})


def _strided_conv(x, factor, out_depth, transpose):
    in_depth = x.get_shape().as_list()[-1]
    out_depth = out_depth or in_depth
    name = "conv2d_transpose" if transpose else "conv2d"
    with _v1.variable_scope(name):
        kernel_shape = ([1, factor, out_depth, in_depth] if transpose
                        else [1, factor, in_depth, out_depth])
        kernel = _v1.get_variable("kernel", kernel_shape,
                                  initializer=_v1.glorot_uniform_initializer())
        bias = _v1.get_variable("bias", [out_depth], initializer=_v1.zeros_initializer())
    x = tf.expand_dims(x, 1)  # [batch, 1, length, depth]
    if transpose:
        batch, _, length = shape_list(x)[:3]
        y = tf.nn.conv2d_transpose(x, kernel, tf.stack([batch, 1, length * factor, out_depth]),
                                   strides=[1, 1, factor, 1], padding="VALID")
    else:
        y = tf.nn.conv2d(x, kernel, strides=[1, 1, factor, 1], padding="VALID")
    return tf.squeeze(tf.nn.bias_add(y, bias), 1)


@expert_utils.add_var_scope()
def deconv_elems_1d(x, factor, out_depth=None):
    """[batch, length, depth] -> [batch, length*factor, out_depth]: each position
    projected into `factor` positions (a transposed convolution, stride = kernel = factor).
    Variables `deconv_elems_1d/conv2d_transpose/{kernel,bias}`."""
    return _strided_conv(x, factor, out_depth, transpose=True)


@expert_utils.add_var_scope()
def conv_elems_1d(x, factor, out_depth=None):
    """[batch, length, depth] -> [batch, length//factor, out_depth]: each `factor`
    positions merged into one (a convolution, stride = kernel = factor; length must be a
    multiple of factor). Variables `conv_elems_1d/conv2d/{kernel,bias}`."""
    return _strided_conv(x, factor, out_depth, transpose=False)
