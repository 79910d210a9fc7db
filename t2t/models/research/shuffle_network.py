"""Neural Shuffle-Exchange network (Freivalds, Ozolins, Sostaks, NeurIPS 2019).

T2T 1.15.7's `tensor2tensor.models.research.shuffle_network`: a sequence-to-sequence
model for equal-length input and output that mixes positions in O(n log n): each Benes
block applies log2(n) Switch layers, each followed by a perfect shuffle (a left bit
rotation of the position index), then log2(n) more, each followed by the inverse shuffle.

    hp = registry.hparams("shuffle_network_baseline")        # d=384, 2 Benes blocks
    model = ShuffleNetwork(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model({"inputs": ids, "targets": ids})  # both padded to a power of 2
    model.infer({"inputs": ids})["outputs"]                 # argmax at every position

    shuffle_layer(x)           # x[:, [0, 2, 4, 6, 1, 3, 5, 7]] for a length of 8
    reverse_shuffle_layer(x)   # x[:, [0, 4, 1, 5, 2, 6, 3, 7]]: undoes shuffle_layer

Inputs and targets are padded with 0 to the same power-of-two length (the smallest one
holding both, at least 2; `max_length` when `force_max_length` or without targets), and
the loss is the mean cross-entropy over every padded position, padding included, as in
T2T. Variables keep T2T's names, e.g.
"shuffle_network/body/benes_block_0/forward/switch/cand1/c/CvK".
"""
import math

import tensorflow as tf

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.layers import common_hparams
from t2t.layers import dropout as dropout_lib
from t2t.model import t2t_model

_v1 = tf.compat.v1


def ror(x, n, p=1):
    """Rotate the n-bit integers `x` right by `p` bits: ror(6, 3) == 3 (110 -> 011)."""
    low_bits = tf.bitwise.bitwise_and(x, tf.bitwise.left_shift(1, p) - 1)
    return tf.bitwise.right_shift(x, p) + tf.bitwise.left_shift(low_bits, n - p)


def rol(x, n, p=1):
    """Rotate the n-bit integers `x` left by `p` bits: rol(6, 3) == 5 (110 -> 101)."""
    shifted = tf.bitwise.bitwise_and(tf.bitwise.left_shift(x, p),
                                     tf.bitwise.left_shift(1, n) - 1)
    return tf.bitwise.bitwise_or(shifted, tf.bitwise.right_shift(x, n - p))


def position_bits(length):
    """log2 of a power-of-two `length` (an int32 scalar tensor): the bits of a position.

    T2T computed floor(log2(length - 1)) + 1 in float32, the same for lengths >= 2.
    """
    bits = tf.math.log(tf.cast(length, tf.float32)) / math.log(2.0)
    return tf.cast(tf.round(bits), tf.int32)


def shuffle_layer(inputs, shuffle_fn=rol):
    """Permute positions (axis 1, a power-of-two length): output i = input shuffle_fn(i).

        shuffle_layer(tf.range(8)[None])   # [[0, 2, 4, 6, 1, 3, 5, 7]] (perfect shuffle)
    """
    length = tf.shape(inputs)[1]
    indices = shuffle_fn(tf.range(0, length), position_bits(length))
    return tf.gather(inputs, indices, axis=1)


def reverse_shuffle_layer(inputs):
    """The inverse of `shuffle_layer`, by right rotation (the second half of a Benes block).

        reverse_shuffle_layer(tf.range(8)[None])   # [[0, 4, 1, 5, 2, 6, 3, 7]]
    """
    return shuffle_layer(inputs, ror)


def conv_linear_map(inputs, nin, nout, bias_start, prefix):
    """[B, L, nin] -> [B, L, nout]: inputs @ CvK + CvB + bias_start under scope `prefix`.

        y = conv_linear_map(x, 8, 4, 0.5, "switch/g")   # variables switch/g/CvK, CvB
    """
    with _v1.variable_scope(prefix):
        shape = tf.shape(inputs)
        initializer = _v1.variance_scaling_initializer(scale=1.0, mode="fan_avg",
                                                       distribution="uniform")
        kernel = _v1.get_variable("CvK", [nin, nout], initializer=initializer)
        bias = _v1.get_variable("CvB", [nout], initializer=_v1.constant_initializer(0.0))
        result = tf.matmul(tf.reshape(inputs, [shape[0] * shape[1], nin]), kernel)
        return tf.reshape(result, [shape[0], shape[1], nout]) + bias_start + bias


def switch_dropout(candidate, dropout, mode, n_bits):
    """T2T's Switch-layer regularisation: dropout at `dropout / n_bits`, and in training
    (with dropout) multiplicative noise N(1, 0.001)."""
    if dropout > 0:
        rate = dropout / tf.cast(n_bits, tf.float32)
        candidate = dropout_lib.dropout(candidate, rate=rate)
    if dropout != 0.0 and mode == ModeKeys.TRAIN:
        candidate *= _v1.random_normal(tf.shape(candidate), mean=1.0, stddev=0.001)
    return candidate


class SwitchLayer:
    """A Switch layer: each pair of neighbouring positions is mixed by a gated unit.

        switch = SwitchLayer("switch", dropout=0.0, mode=ModeKeys.EVAL)
        y = switch(x, residual)       # x, residual: [B, L, d], L even -> [B, L, d]
    """

    def __init__(self, prefix, dropout, mode):
        self.prefix = prefix
        self.dropout = dropout
        self.mode = mode
        self.batch_size = None
        self.length = None
        self.num_units = None
        self.n_bits = None

    def linear_map(self, inputs, suffix, bias_start, in_units, out_units):
        """Map each position pair's 2 * in_units features to 2 * out_units."""
        pairs = tf.reshape(inputs, [self.batch_size, self.length // 2, in_units * 2])
        result = conv_linear_map(pairs, in_units * 2, out_units * 2, bias_start,
                                 self.prefix + "/" + suffix)
        return tf.reshape(result, [self.batch_size, self.length, out_units])

    def gated_linear_map(self, inputs, suffix, bias_start_reset, in_units, out_units):
        """tanh of two reset-gated maps of each position pair, one per output position."""
        pairs = tf.reshape(inputs, [self.batch_size, self.length // 2, in_units * 2])

        def reset_gate(name):
            return tf.nn.sigmoid(conv_linear_map(pairs, in_units * 2, in_units * 2,
                                                 bias_start_reset,
                                                 self.prefix + name + suffix))

        reset1 = reset_gate("/reset1/")
        reset2 = reset_gate("/reset2/")
        cand1 = conv_linear_map(pairs * reset1, in_units * 2, out_units, 0.0,
                                self.prefix + "/cand1/" + suffix)
        cand2 = conv_linear_map(pairs * reset2, in_units * 2, out_units, 0.0,
                                self.prefix + "/cand2/" + suffix)
        result = tf.reshape(tf.concat([cand1, cand2], axis=2),
                            [self.batch_size, self.length, out_units])
        return tf.nn.tanh(result)

    def __call__(self, inputs, residual_inputs):
        """inputs, residual_inputs [B, L, d] -> the new state [B, L, d]."""
        shape = tf.shape(inputs)
        self.batch_size, self.length = shape[0], shape[1]
        self.num_units = inputs.shape.as_list()[2]
        self.n_bits = position_bits(self.length)
        residual_scale = _v1.get_variable(self.prefix + "/residual_scale", [self.num_units],
                                          initializer=_v1.constant_initializer(0.5))
        swapped = self.swap_halves(inputs)
        memory = inputs + residual_inputs * residual_scale
        candidate = self.gated_linear_map(memory, "c", 0.5, self.num_units, self.num_units)
        gate = tf.nn.sigmoid(self.linear_map(memory, "g", 0.5, self.num_units,
                                             self.num_units))
        candidate = gate * swapped + (1 - gate) * candidate
        return switch_dropout(candidate, self.dropout, self.mode, self.n_bits)

    def swap_halves(self, inputs):
        """Swap the first half of the features between positions 2i and 2i + 1."""
        partner = tf.bitwise.bitwise_xor(tf.range(0, self.length), 1)
        half = self.num_units // 2
        swapped = tf.gather(inputs[:, :, :half], partner, axis=1)
        return tf.concat([swapped, inputs[:, :, half:]], axis=2)


def shuffle_network(inputs, hparams):
    """Benes blocks with residual links to the previous block: [B, L, d] -> [B, L, d].

    L must be a power of two (at least 2). Layer j of block k gets, as residual input,
    the state after layer j of block k - 1 (zeros in the first block).
    """

    def forward_step(state, layer):
        with _v1.variable_scope("forward"):
            last_state, residuals = state
            switch = SwitchLayer("switch", hparams.dropout, hparams.mode)
            return shuffle_layer(switch(last_state, residuals[layer])), residuals

    def reverse_step(state, layer):
        with _v1.variable_scope("reverse"):
            last_state, residuals = state
            switch = SwitchLayer("reverse_switch", hparams.dropout, hparams.mode)
            return reverse_shuffle_layer(switch(last_state, residuals[layer])), residuals

    shape = tf.shape(inputs)
    n_bits = position_bits(shape[1])
    residuals = tf.zeros([n_bits * 2, shape[0], shape[1], shape[2]])
    block_out = tf.tanh(inputs)
    for k in range(hparams.num_hidden_layers):
        with _v1.variable_scope("benes_block_%d" % k, reuse=_v1.AUTO_REUSE):
            forward_outputs, _ = tf.scan(forward_step, tf.range(0, n_bits),
                                         initializer=(block_out, residuals),
                                         parallel_iterations=1, swap_memory=True)
            forward_outputs = tf.concat([block_out[None], forward_outputs], axis=0)
            reverse_outputs, _ = tf.scan(reverse_step, tf.range(n_bits, n_bits * 2),
                                         initializer=(forward_outputs[-1], residuals),
                                         parallel_iterations=1, swap_memory=True)
            block_out = reverse_outputs[-1]
            residuals = tf.concat([forward_outputs, reverse_outputs], axis=0)
    last_layer = SwitchLayer("last_layer", hparams.dropout, hparams.mode)
    return last_layer(block_out, residuals[n_bits * 2])


def pad_to_length(tensor, pad_len):
    """Pad axis 1 of `tensor` [B, L, ...] with 0 up to `pad_len`."""
    if tensor.shape.rank is None or tensor.shape.rank < 2:
        raise ValueError("ShuffleNetwork pads [batch, length, ...] features; got shape %s"
                         % tensor.shape)
    padding = [[0, 0], [0, pad_len - tf.shape(tensor)[1]]] + [[0, 0]] * (
        tensor.shape.rank - 2)
    return tf.pad(tensor, padding)


@registry.register_model
class ShuffleNetwork(t2t_model.T2TModel):
    """Seq2seq over equal-length (padded) inputs and targets in O(n log n) time."""

    def bottom(self, features):
        """Pad inputs and targets (in `features` itself, which the loss then reads) to
        one power-of-two length, then the modalities' bottoms."""
        pad_len = self.max_pad_length(features)
        features["inputs"] = self.pad(features["inputs"], pad_len)
        if features.get("targets") is not None:
            features["targets"] = self.pad(features["targets"], pad_len)
        return super().bottom(features)

    @staticmethod
    def pad(tensor, pad_len):
        """T2T's name for `pad_to_length`."""
        return pad_to_length(tensor, pad_len)

    def max_pad_length(self, features):
        """The padded length: the smallest power of two >= max(input, target length)
        and >= 2; `hparams.max_length` with force_max_length or without targets."""
        if self._hparams.force_max_length or features.get("targets") is None:
            max_length = self._hparams.max_length
            if max_length < 2 or not math.log(max_length, 2).is_integer():
                raise ValueError("ShuffleNetwork needs hparams.max_length a power of 2 "
                                 "(>= 2); got %s" % max_length)
            return max_length
        length = tf.maximum(tf.shape(features["inputs"])[1],
                            tf.shape(features["targets"])[1])
        bits = tf.math.ceil(tf.math.log(tf.cast(length, tf.float64)) / math.log(2.0) - 1e-9)
        return tf.maximum(tf.bitwise.left_shift(1, tf.cast(bits, tf.int32)), 2)

    def infer(self, features=None, decode_length=50, beam_size=1, top_beams=1, alpha=0.0,
              use_tpu=False):
        """One non-autoregressive pass: {"outputs": argmax ids [B, L], "logits": [B, L, V],
        "scores": None}. The decoding arguments are ignored, as in T2T; L is the padded
        length ("infer_targets", if given, set it like targets)."""
        del decode_length, beam_size, top_beams, alpha, use_tpu
        features = dict(features or {})
        if features.get("targets") is None and features.get("infer_targets") is not None:
            features["targets"] = features["infer_targets"]
        self._hparams.force_full_predict = True
        logits, _ = self(features)
        logits = tf.squeeze(logits, [2, 3])
        outputs = tf.argmax(logits, axis=2, output_type=tf.int32)
        return {"outputs": outputs, "logits": logits, "scores": None}

    def loss(self, logits, features):
        """Mean softmax cross-entropy over every position (padding too), as in T2T."""
        labels = tf.one_hot(features["targets"], self._padded_vocab_size("targets"))
        return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels,
                                                                      logits=logits))

    def body(self, features):
        """features["inputs"] [B, L, 1, d] -> [B, L, 1, d]."""
        inputs = tf.squeeze(features["inputs"], axis=2)
        return tf.expand_dims(shuffle_network(inputs, self._hparams), axis=2)


@registry.register_hparams
def shuffle_network_baseline():
    """T2T's large Shuffle-Exchange set: d=384, 2 Benes blocks, Adam, noam schedule."""
    hparams = common_hparams.basic_params1()
    hparams.hidden_size = 48 * 8
    hparams.num_hidden_layers = 2
    hparams.clip_grad_norm = 0.0
    hparams.optimizer = "adam"
    hparams.optimizer_adam_epsilon = 1e-5
    hparams.learning_rate_schedule = "legacy"
    hparams.learning_rate_decay_scheme = "noam"
    hparams.learning_rate = 0.1
    hparams.initializer_gain = 1.0
    hparams.initializer = "uniform_unit_scaling"
    hparams.optimizer_adam_beta1 = 0.9
    hparams.optimizer_adam_beta2 = 0.999
    hparams.add_hparam("force_max_length", False)
    hparams.max_length = 256
    hparams.dropout = 0.1
    hparams.label_smoothing = 0.0
    hparams.weight_decay = 0.0
    return hparams
