"""SliceNet (Kaiser, Gomez, Chollet 2017): sub-separable convolutions with attention.

T2T's `slice_net` model and its hparams sets, with T2T's variable names
(`slice_net/body/slicenet/encoder/layer_0/residual1/conv_block_0_single/...`), so T2T
checkpoints of it load:

    hp = registry.hparams("slicenet_1tiny")         # T2T's slicenet_params1_tiny
    model = SliceNet(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model(features)                # a symbol-to-symbol problem

The encoder is `1.5 * num_hidden_layers` blocks of two sub-separable convolution stacks
with residual connections; the decoder is `num_hidden_layers` such blocks over the shifted
targets (left-padded convolutions, so causal), each followed by self-attention and
attention over the encoded inputs (`attention_type="transformer"`; `"none"` for none).
For a class-label target only the encoder runs.
"""
import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_attention
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers import conv_layers
from t2t.layers import losses
from t2t.layers import normalization
from t2t.layers import shape_utils
from t2t.layers.modality_type import ModalityType
from t2t.model import t2t_model

_v1 = tf.compat.v1

# kernel_scheme / dilation_scheme names -> one (height, width) per layer of the wide stack.
_KERNEL_SCHEMES = {
    "3.3.3.3": [(3, 1), (3, 1), (3, 1), (3, 1)],
    "3.7.7.7": [(3, 1), (7, 1), (7, 1), (7, 1)],
    "3.7.15.15": [(3, 1), (7, 1), (15, 1), (15, 1)],
    "3.7.15.31": [(3, 1), (7, 1), (15, 1), (31, 1)],
    "3.7.15.31.63": [(3, 1), (7, 1), (15, 1), (31, 1), (63, 1)],
}
_DILATION_SCHEMES = {
    "1.1.1.1.1": [(1, 1)] * 5,
    "1.1.1.1": [(1, 1)] * 4,
    "1.1.1.2": [(1, 1), (1, 1), (1, 1), (2, 1)],
    "1.1.2.4": [(1, 1), (1, 1), (2, 1), (4, 1)],
    "1.2.4.8": [(1, 1), (2, 1), (4, 1), (8, 1)],
}


def _norm_fn(hparams):
    def norm(x, name):
        with _v1.variable_scope(name, default_name="norm"):
            return normalization.apply_norm(x, hparams.norm_type, hparams.hidden_size,
                                            hparams.norm_epsilon)
    return norm


def _paired_separabilities(separability, count):
    """T2T's separabilities for `count` layers: a negative one grows towards the last."""
    if separability < 0:
        return [separability - i for i in reversed(range(count))]
    return [separability] * count


def attention(targets_shifted, inputs_encoded, norm_fn, hparams, bias=None):
    """Causal convolutions over the targets, then self-attention and attention to the inputs.

    targets_shifted: [batch, target_length, 1, hidden]; inputs_encoded: [batch, input_length,
    1, hidden]; bias: [batch, input_length, 1, 1], -1e9 at padded inputs (T2T ignored it
    and attended to padding: see docs/t2t_differences.md).
    """
    timed = conv_layers.subseparable_conv_block(
        common_layers.add_timing_signal(targets_shifted), hparams.hidden_size,
        [((1, 1), (5, 1)), ((4, 1), (5, 1))], normalizer_fn=norm_fn, padding="LEFT",
        separabilities=_paired_separabilities(hparams.separability, 2), name="targets_time")
    if hparams.attention_type != "transformer":
        raise ValueError("slicenet: attention_type must be 'transformer' or 'none', got %r"
                         % (hparams.attention_type,))
    timed = tf.squeeze(timed, 2)
    target_length = tf.shape(timed)[1]
    self_bias = common_attention.attention_bias_lower_triangle(target_length)
    memory = shape_utils.flatten4d3d(inputs_encoded)
    if bias is None:
        memory_bias = tf.zeros([tf.shape(memory)[0], 1, 1, tf.shape(memory)[1]])
    else:  # [batch, 1, 1, input_length]: the same for every head and target position
        memory_bias = tf.reshape(bias, [tf.shape(memory)[0], 1, 1, tf.shape(memory)[1]])
    depth = hparams.hidden_size
    x = common_attention.multihead_attention(
        timed, None, self_bias, depth, depth, depth, hparams.num_heads,
        hparams.attention_dropout, name="self_attention")
    x = common_attention.multihead_attention(
        x, memory, memory_bias, depth, depth, depth, hparams.num_heads,
        hparams.attention_dropout, name="encdec_attention")
    return tf.expand_dims(x, 2)


def _layer_kernels(hparams):
    """(dilations and kernels of the narrow stack, of the wide stack) for one block."""
    if (hparams.kernel_scheme in _KERNEL_SCHEMES
            and hparams.dilation_scheme in _DILATION_SCHEMES):
        pairs = list(zip(_DILATION_SCHEMES[hparams.dilation_scheme],
                         _KERNEL_SCHEMES[hparams.kernel_scheme]))
        return pairs[:2], pairs[2:]
    kernel = (hparams.kernel_height, hparams.kernel_width)
    large = (hparams.large_kernel_size, 1)
    return [((1, 1), kernel), ((1, 1), kernel)], [((1, 1), large), ((4, 4), large)]


def multi_conv_res(x, padding, name, layers, hparams, mask=None, source=None):
    """`layers` residual blocks of sub-separable convolutions (+ attention to `source`)."""
    with _v1.variable_scope(name):
        padding_bias = None if mask is None else (1.0 - mask) * -1e9  # over the inputs
        if mask is not None and padding == "LEFT":
            mask = None  # left padding keeps positions causal; nothing to mask
        narrow, wide = _layer_kernels(hparams)
        narrow_separabilities = _paired_separabilities(hparams.separability, len(narrow))
        wide_separabilities = _paired_separabilities(hparams.separability, len(wide))
        norm_fn = _norm_fn(hparams)
        for layer in range(layers):
            with _v1.variable_scope("layer_%d" % layer):
                y = conv_layers.subseparable_conv_block(
                    x, hparams.hidden_size, narrow, normalizer_fn=norm_fn, padding=padding,
                    mask=mask, separabilities=narrow_separabilities, name="residual1")
                x += conv_layers.subseparable_conv_block(
                    x + y, hparams.hidden_size, wide, normalizer_fn=norm_fn,
                    padding=padding, mask=mask, separabilities=wide_separabilities,
                    name="residual2") + y
                if source is not None and hparams.attention_type != "none":
                    x += attention(x, source, norm_fn, hparams, bias=padding_bias)
                if mask is not None:
                    x *= mask
        return tf.nn.dropout(x, rate=hparams.dropout) if hparams.dropout else x


def rank_loss(sentence_emb, image_emb, margin=0.2):
    """Hinge loss on cosine similarities: each row closer to its own pair than to others'.

    sentence_emb, image_emb: [batch, depth]. 0 when every pair beats the others by `margin`.
    """
    with tf.name_scope("rank_loss"):
        sentence_emb = tf.math.l2_normalize(sentence_emb, 1)
        image_emb = tf.math.l2_normalize(image_emb, 1)
        scores = tf.matmul(image_emb, sentence_emb, transpose_b=True)  # [batch, batch]
        diagonal = tf.linalg.diag_part(scores)
        cost_s = tf.maximum(0.0, margin - diagonal + scores)
        cost_im = tf.maximum(0.0, margin - tf.reshape(diagonal, [-1, 1]) + scores)
        off_diagonal = tf.ones_like(cost_s) - tf.eye(tf.shape(sentence_emb)[0])
        return (tf.reduce_mean(cost_s * off_diagonal)
                + tf.reduce_mean(cost_im * off_diagonal))


def similarity_cost(inputs_encoded, targets_encoded):
    """`rank_loss` over every position of two [batch, length, 1, depth] encodings."""
    x, y = losses.pad_to_same_length(inputs_encoded, targets_encoded)
    depth = tf.shape(inputs_encoded)[3]
    return rank_loss(tf.reshape(x, [-1, depth]), tf.reshape(y, [-1, depth]))


def slicenet_middle(inputs_encoded, targets, target_space_emb, mask, hparams):
    """The decoder's start: shifted targets merged with their attention to the inputs.

    Returns (decoder start [batch, target_length, 1, hidden], 0.0): T2T's similarity loss
    here was always 0 (`sim_loss_mult` is unused), and stays so.
    """
    norm_fn = _norm_fn(hparams)
    targets_flat = tf.expand_dims(shape_utils.flatten4d3d(targets), axis=2)
    target_space_emb = tf.tile(target_space_emb, [tf.shape(targets_flat)[0], 1, 1, 1])
    targets_shifted = common_layers.shift_right(targets_flat, pad_value=target_space_emb)
    if hparams.attention_type == "none":
        attended = tf.zeros_like(targets_shifted)
    else:
        attended = attention(targets_shifted, inputs_encoded, norm_fn, hparams,
                             bias=(1.0 - mask) * -1e9)
    kernel = (hparams.kernel_height, hparams.kernel_width)
    merged = conv_layers.subseparable_conv_block(
        tf.concat([attended, targets_shifted], axis=3), hparams.hidden_size,
        [((1, 1), kernel)], normalizer_fn=norm_fn, padding="LEFT", separability=4,
        name="targets_merge")
    return merged, 0.0


def embed_target_space(target_space_id, hidden_size):
    """The target space id's embedding (32 spaces), shaped [1, 1, 1, hidden_size]."""
    emb = common_layers.embedding(target_space_id, 32, hidden_size,
                                  name="target_space_embedding")
    return tf.reshape(emb, [1, 1, 1, -1])


def embedding_to_padding(emb):
    """1.0 where an embedding [..., depth] is all zeros (padding), else 0.0; keeps depth 1."""
    return tf.cast(tf.equal(tf.reduce_sum(tf.abs(emb), axis=-1, keepdims=True), 0.0),
                   tf.float32)


def slicenet_internal(inputs, targets, target_space, hparams, run_decoder=True):
    """The encoder and, when `run_decoder`, the decoder: (decoder output, extra loss)."""
    with _v1.variable_scope("slicenet"):
        if inputs.get_shape().as_list()[-1] != hparams.hidden_size:
            inputs = conv_layers.conv_block(inputs, hparams.hidden_size,
                                            [((1, 1), (3, 3))], first_relu=False,
                                            padding="SAME")
        inputs = tf.expand_dims(shape_utils.flatten4d3d(inputs), axis=2)
        inputs_mask = 1.0 - embedding_to_padding(inputs)
        inputs = common_layers.add_timing_signal(inputs)
        target_space_emb = embed_target_space(target_space, hparams.hidden_size)
        encoded = multi_conv_res(inputs, "SAME", "encoder",
                                 int(hparams.num_hidden_layers * 1.5), hparams,
                                 mask=inputs_mask)
        if not run_decoder:
            return encoded
        start, similarity_loss = slicenet_middle(encoded, targets, target_space_emb,
                                                 inputs_mask, hparams)
        decoded = multi_conv_res(start, "LEFT", "decoder", hparams.num_hidden_layers,
                                 hparams, mask=inputs_mask, source=encoded)
        return decoded, tf.reduce_mean(similarity_loss)


@registry.register_model
class SliceNet(t2t_model.T2TModel):
    """T2T's slicenet: sub-separable convolutions with attention (see the module doc)."""

    def body(self, features):
        target_modality = self._problem_hparams.modality["targets"]
        return slicenet_internal(features["inputs"], features["targets"],
                                 features["target_space_id"], self._hparams,
                                 run_decoder=target_modality != ModalityType.CLASS_LABEL)


@registry.register_hparams("slicenet_1")
def slicenet_params1():
    """T2T's slicenet_1: 4 layers of 768, kernels 3.7.15.31, separability -2, exp decay."""
    hparams = common_hparams.basic_params1()
    hparams.batch_size = 1024
    hparams.hidden_size = 768
    hparams.dropout = 0.5
    hparams.symbol_dropout = 0.2
    hparams.label_smoothing = 0.1
    hparams.clip_grad_norm = 2.0
    hparams.num_hidden_layers = 4
    hparams.kernel_height = 3
    hparams.kernel_width = 1
    hparams.norm_type = "layer"
    hparams.learning_rate_decay_scheme = "exp"
    hparams.learning_rate = 0.05
    hparams.learning_rate_warmup_steps = 3000
    hparams.initializer_gain = 1.0
    hparams.weight_decay = 3.0
    hparams.num_sampled_classes = 0
    hparams.sampling_method = "argmax"
    hparams.optimizer_adam_epsilon = 1e-6
    hparams.optimizer_adam_beta1 = 0.85
    hparams.optimizer_adam_beta2 = 0.997
    hparams.add_hparam("large_kernel_size", 15)
    hparams.add_hparam("separability", -2)
    hparams.add_hparam("dilation_scheme", "1.1.1.1")   # one of _DILATION_SCHEMES
    hparams.add_hparam("kernel_scheme", "3.7.15.31")   # one of _KERNEL_SCHEMES
    hparams.add_hparam("audio_compression", 8)
    hparams.add_hparam("attention_type", "transformer")
    hparams.add_hparam("num_heads", 8)
    hparams.add_hparam("attention_key_channels", 0)
    hparams.add_hparam("attention_value_channels", 0)
    hparams.add_hparam("sim_loss_mult", 0.0)
    hparams.add_hparam("attention_dropout", 0.2)
    hparams.shared_embedding_and_softmax_weights = True
    return hparams


@registry.register_hparams("slicenet_1noam")
def slicenet_params1_noam():
    """slicenet_1 with Noam's learning-rate schedule and Adam settings."""
    hparams = slicenet_params1()
    hparams.learning_rate_decay_scheme = "noam"
    hparams.learning_rate = 1.0
    hparams.learning_rate_warmup_steps = 4000
    hparams.initializer = "uniform_unit_scaling"
    hparams.optimizer_adam_epsilon = 1e-9
    hparams.optimizer_adam_beta1 = 0.9
    hparams.optimizer_adam_beta2 = 0.98
    return hparams


@registry.register_hparams("slicenet_1tiny")
def slicenet_params1_tiny():
    """slicenet_1 for fast local runs: 2 layers of 128, plain (separability 0) convolutions."""
    hparams = slicenet_params1()
    hparams.separability = 0
    hparams.hidden_size = 128
    hparams.num_hidden_layers = 2
    hparams.batch_size = 512
    hparams.learning_rate_warmup_steps = 200
    return hparams


@registry.register_ranged_hparams("slicenet1")
def slicenet_range1(ranged_hparams):
    """T2T's search range: gradient clipping, learning rate, Adam beta2, weight decay."""
    rhp = ranged_hparams
    rhp.set_float("clip_grad_norm", 1.0, 10.0, scale=rhp.LOG_SCALE)
    rhp.set_float("learning_rate", 0.02, 1.0, scale=rhp.LOG_SCALE)
    rhp.set_float("optimizer_adam_beta2", 0.995, 0.998)
    rhp.set_float("weight_decay", 1.0, 5.0)
