"""Residual Shuffle-Exchange network (Draguns et al. 2020, https://arxiv.org/abs/2004.04662).

T2T 1.15.7's `tensor2tensor.models.research.residual_shuffle_exchange`: the Shuffle-Exchange
network (`shuffle_network`) with its gated Switch layers replaced by Residual Switch Units
(RSU: a two-layer GELU network on each pair of neighbouring positions, added to a learned
fraction of the pair) and without the residual links between Benes blocks. It pads,
infers and computes its loss like `ShuffleNetwork`, with the `shuffle_network_baseline`
hparams (T2T registered no set of its own).

    hp = registry.hparams("shuffle_network_baseline")
    model = ResidualShuffleExchange(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model({"inputs": ids, "targets": ids})

T2T built each RSU from Keras layers inside `tf.scan`, so its TF 1.x checkpoints name the
variables after the Keras layers (numbered per graph) and the while loop, e.g.
"residual_shuffle_exchange/body/benes_block_0/scan/while/forward/rsu/switch/cand1/kernel",
".../benes_block_0/scan_1/while/reverse/rsu_1/layer_normalization_1/bias" and
".../body/rsu_4/last_layer/residual" (2 blocks); t2t creates exactly these names.
"""
import numpy as np
import tensorflow as tf

from t2t.core import registry
from t2t.layers import activations
from t2t.models.research import shuffle_network
from t2t.models.research.shuffle_network import reverse_shuffle_layer, shuffle_layer

_v1 = tf.compat.v1


def keras_name(base, index):
    """The name Keras gave the `index`-th layer named `base` in a graph: rsu, rsu_1, ..."""
    return base if index == 0 else "%s_%d" % (base, index)


def layer_normalization(inputs, axis=1, epsilon=1e-10, name="layer_normalization"):
    """T2T's RSU LayerNormalization: no gain, a bias [1, 1, d] added after centring.

        y = layer_normalization(x)   # x [B, L, d]: (x - mean_1(x) + b) / rms_1(...)

    As in T2T the statistics are over `axis` 1 (the position pairs), not the features.
    """
    with _v1.variable_scope(name):
        bias = _v1.get_variable("bias", [1, 1, inputs.shape.as_list()[-1]],
                                initializer=_v1.zeros_initializer())
    centred = inputs - tf.reduce_mean(inputs, axis=axis, keepdims=True) + bias
    variance = tf.reduce_mean(tf.square(centred), axis=axis, keepdims=True)
    return centred * tf.math.rsqrt(variance + epsilon)


def inv_sigmoid(y):
    """The logit of y in (0, 1): inv_sigmoid(0.9) == log(9)."""
    return np.log(y / (1 - y))


def _dense(inputs, units, name, use_bias=True):
    """Keras Dense's variables (kernel, bias) under scope `name`, on the last axis."""
    initializer = _v1.variance_scaling_initializer(scale=1.0, mode="fan_avg",
                                                   distribution="uniform")
    with _v1.variable_scope(name):
        kernel = _v1.get_variable("kernel", [inputs.shape.as_list()[-1], units],
                                  initializer=initializer)
        outputs = tf.tensordot(inputs, kernel, [[2], [0]])
        if use_bias:
            outputs += _v1.get_variable("bias", [units], initializer=_v1.zeros_initializer())
    return outputs


class RSU:
    """Residual Switch Unit: [B, L, d] -> [B, L, d], mixing positions 2i and 2i + 1.

        rsu = RSU("switch", dropout=0.0, mode=ModeKeys.EVAL, index=0)
        y = rsu(x)      # sigmoid(residual) * x + 0.109 * GELU-MLP(x), per position pair

    `index` numbers the unit in the model (T2T's Keras layer "rsu", "rsu_1", ...): its
    variables are rsu[_index]/<prefix>/{residual, cand1/kernel, cand2/kernel, cand2/bias}
    and rsu[_index]/layer_normalization[_index]/bias.
    """

    def __init__(self, prefix, dropout, mode, index=0):
        self.prefix = prefix
        self.dropout = dropout
        self.mode = mode
        self.index = index
        residual_weight = 0.9
        self.candidate_weight = np.sqrt(1 - residual_weight ** 2) * 0.25
        self.init_value = inv_sigmoid(residual_weight)

    def __call__(self, inputs):
        shape = tf.shape(inputs)
        num_units = inputs.shape.as_list()[2]
        pairs = tf.reshape(inputs, [shape[0], shape[1] // 2, num_units * 2])
        with _v1.variable_scope(keras_name("rsu", self.index)):
            residual_scale = _v1.get_variable(
                self.prefix + "/residual", [num_units * 2],
                initializer=_v1.constant_initializer(self.init_value))
            hidden = _dense(pairs, num_units * 4, self.prefix + "/cand1", use_bias=False)
            hidden = layer_normalization(
                hidden, name=keras_name("layer_normalization", self.index))
            candidate = _dense(activations.gelu(hidden), num_units * 2,
                               self.prefix + "/cand2")
        candidate = tf.sigmoid(residual_scale) * pairs + candidate * self.candidate_weight
        candidate = tf.reshape(candidate, shape)
        return shuffle_network.switch_dropout(candidate, self.dropout, self.mode,
                                              shuffle_network.position_bits(shape[1]))


def _benes_half(inputs, rsu, n_bits, first_layer, scan_scope, step_scope, shuffle_fn):
    """n_bits RSU + shuffle steps with one RSU's weights (T2T's tf.scan and scopes)."""

    def step(state, _):
        with _v1.variable_scope(scan_scope + "/while/" + step_scope):
            return shuffle_fn(rsu(state))

    outputs = tf.scan(step, tf.range(first_layer, first_layer + n_bits), initializer=inputs,
                      parallel_iterations=1, swap_memory=True)
    return outputs[-1]


def forward_part(block_out, hparams, n_bits, index=0):
    """The forward half of a Benes block: RSU "switch" then the perfect shuffle, n_bits
    times; `index` numbers its RSU (2 * block)."""
    rsu = RSU("switch", hparams.dropout, hparams.mode, index)
    return _benes_half(block_out, rsu, n_bits, 0, "scan", "forward", shuffle_layer)


def reverse_part(inputs, hparams, n_bits, index=1):
    """The reverse half: RSU "reverse_switch" then the inverse shuffle, n_bits times;
    `index` numbers its RSU (2 * block + 1)."""
    rsu = RSU("reverse_switch", hparams.dropout, hparams.mode, index)
    return _benes_half(inputs, rsu, n_bits, n_bits, "scan_1", "reverse",
                       reverse_shuffle_layer)


def residual_shuffle_network(inputs, hparams):
    """`hparams.num_hidden_layers` Benes blocks of RSUs and a last RSU: [B, L, d] ->
    [B, L, d], L a power of two (at least 2)."""
    n_bits = shuffle_network.position_bits(tf.shape(inputs)[1])
    block_out = inputs
    for k in range(hparams.num_hidden_layers):
        with _v1.variable_scope("benes_block_%d" % k, reuse=_v1.AUTO_REUSE):
            forward_output = forward_part(block_out, hparams, n_bits, index=2 * k)
            block_out = reverse_part(forward_output, hparams, n_bits, index=2 * k + 1)
    last_layer = RSU("last_layer", hparams.dropout, hparams.mode,
                     index=2 * hparams.num_hidden_layers)
    return last_layer(block_out)


@registry.register_model
class ResidualShuffleExchange(shuffle_network.ShuffleNetwork):
    """Residual Shuffle-Exchange network: ShuffleNetwork's padding, loss and infer."""

    def body(self, features):
        """features["inputs"] [B, L, 1, d] -> [B, L, 1, d]."""
        inputs = tf.squeeze(features["inputs"], axis=2)
        return tf.expand_dims(residual_shuffle_network(inputs, self._hparams), axis=2)
