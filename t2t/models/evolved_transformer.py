"""The Evolved Transformer (So et al. 2019, arxiv.org/abs/1901.11117), as T2T 1.15.7 has it.

    hp = registry.hparams("evolved_transformer_tiny")      # 3 encoder, 4 decoder layers
    model = EvolvedTransformer(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model({"inputs": ids_in, "targets": ids_out})

An encoder layer is a gated linear unit, two convolution branches (dense 4d | conv 3x1,
then a separable conv 9x1), self-attention and a swish-free dense block; a decoder layer is
a 16-head self-attention beside an attention to the encoder, two separable-convolution
branches (11x1 | 7x1, then 7x1), self-attention, a second attention to the encoder and a
swish dense block. Variables keep T2T's names (`conv_branches/separable_conv_9x1/
depthwise_kernel`, `16_head_self_attention/multihead_attention/q/kernel`, ...), so T2T
checkpoints load.

Cached decoding keeps, per decoder layer, the attention keys and values (as the
Transformer) and the last inputs of each causal convolution: a window of 10 positions
before the first branches and 6 before the last convolution. The window never changes
size, so the same cache serves the growing and the fixed-shape (TPU) decoding loops.
"""
import tensorflow as tf
from absl import logging

from t2t.core import registry
from t2t.layers import common_attention
from t2t.layers import common_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers.attention_config import MultiheadAttentionConfig
from t2t.layers.shape_utils import cast_like
from t2t.models import transformer
from t2t.models import transformer_hparams

_v1 = tf.compat.v1

_CONV_BRANCHES_NAME = "conv_branches"
_CONV_BRANCHES_FIRST_LAYER_NAME = _CONV_BRANCHES_NAME + "_first"
_CONV_BRANCHES_SECOND_LAYER_NAME = _CONV_BRANCHES_NAME + "_second"
_FIRST_ATTEND_TO_ENCODER_NAME = "first_attend_to_encoder"
_SECOND_ATTEND_TO_ENCODER_NAME = "second_attend_to_encoder"
_SIXTEEN_HEAD_ATTENTION_NAME = "16_head_self_attention"
_VANILLA_ATTENTION_NAME = "self_attention"

# Causal padding of the decoder's convolutions: the 11x1 branch sees 10 earlier positions,
# the 7x1 ones 6.
_DECODER_LEFT_CONV_PADDING = 10
_DECODER_RIGHT_CONV_PADDING = 6
_DECODER_FINAL_CONV_PADDING = 6


def _capped_double_heads(num_heads, cap=16):
    """Twice `num_heads`, but not above `cap` (and never fewer than num_heads)."""
    return max(min(num_heads * 2, cap), num_heads)


# --------------------------------------------------------------------------- convolutions
# tf.layers' 1-D convolutions, with their variable shapes: kernel [width, in, out];
# separable: depthwise_kernel [width, in, 1], pointwise_kernel [1, in, out].
def _conv1d(x, filters, width, name, activation=None):
    """A 'SAME' 1-D convolution [B, L, C] -> [B, L, filters] (tf.layers.Conv1D)."""
    depth = x.shape.as_list()[-1]
    with _v1.variable_scope(name):
        kernel = _v1.get_variable("kernel", [width, depth, filters])
        bias = _v1.get_variable("bias", [filters], initializer=_v1.zeros_initializer())
        y = tf.nn.conv1d(x, cast_like(kernel, x), stride=1, padding="SAME")
        y = tf.nn.bias_add(y, cast_like(bias, x))
    return activation(y) if activation is not None else y


def _separable_conv1d(x, filters, width, name, padding, activation=None):
    """A depthwise-then-pointwise 1-D convolution (tf.layers.SeparableConv1D)."""
    depth = x.shape.as_list()[-1]
    with _v1.variable_scope(name):
        depthwise = _v1.get_variable("depthwise_kernel", [width, depth, 1])
        pointwise = _v1.get_variable("pointwise_kernel", [1, depth, filters])
        bias = _v1.get_variable("bias", [filters], initializer=_v1.zeros_initializer())
        y = tf.nn.separable_conv2d(
            tf.expand_dims(x, 1), cast_like(tf.expand_dims(depthwise, 0), x),
            cast_like(tf.expand_dims(pointwise, 0), x), strides=[1, 1, 1, 1],
            padding=padding)
        y = tf.nn.bias_add(tf.squeeze(y, 1), cast_like(bias, x))
    return activation(y) if activation is not None else y


def _pad_channels(x, depth):
    """Zero-pad the last axis of x up to `depth` (the narrower branch of a sum)."""
    return tf.pad(x, [[0, 0], [0, 0], [0, depth - x.shape.as_list()[-1]]])


def _dropout(x, hparams):
    return dropout_lib.dropout(x, rate=hparams.layer_prepostprocess_dropout)


def _attention(x, memory, bias, hparams, num_heads=None, cache=None, decode_loop_step=None,
               save_weights_to=None, make_image_summary=True):
    config = MultiheadAttentionConfig.from_hparams(
        hparams, make_image_summary=make_image_summary,
        num_heads=num_heads or hparams.num_heads,
        **({"attention_type": "dot_product"} if memory is not None else {}))
    return common_attention.multihead_attention_with_config(
        x, memory, bias, config, cache=cache, decode_loop_step=decode_loop_step,
        save_weights_to=save_weights_to)


def _causal_window(layer_cache, key, x, padding):
    """x [B, L, C] with `padding` earlier positions in front (zeros, or the cached ones).

    With a cache (one new position per call) the cache keeps the last `padding` inputs.
    """
    if layer_cache is None:
        return tf.pad(x, [[0, 0], [padding, 0], [0, 0]])
    window = tf.concat([layer_cache[key], x], axis=1)
    layer_cache[key] = window[:, 1:, :]
    return window


# --------------------------------------------------------------------------- encoder
def evolved_transformer_encoder(encoder_input, encoder_self_attention_bias, hparams,
                                name="encoder", nonpadding=None, save_weights_to=None,
                                make_image_summary=True, losses=None,
                                attn_bias_for_padding=None):
    """Evolved Transformer encoder: [B, L, d] -> [B, L, d] (no pad remover, as T2T)."""
    del losses
    hidden = encoder_input
    d = hparams.hidden_size
    with _v1.variable_scope(name):
        if nonpadding is None:
            bias = (attn_bias_for_padding if attn_bias_for_padding is not None
                    else encoder_self_attention_bias)
            nonpadding = 1.0 - common_attention.attention_bias_to_padding(bias)
        mask = tf.expand_dims(cast_like(nonpadding, hidden), 2)
        for layer in range(hparams.num_encoder_layers or hparams.num_hidden_layers):
            with _v1.variable_scope("layer_%d" % layer):
                with _v1.variable_scope("gated_linear_unit"):
                    residual = hidden
                    hidden = common_layers.layer_preprocess(hidden, hparams)
                    values = common_layers.dense(hidden, d)
                    gates = common_layers.dense(hidden, d, activation=tf.nn.sigmoid)
                    hidden = common_layers.layer_postprocess(residual, values * gates, hparams)

                with _v1.variable_scope(_CONV_BRANCHES_NAME):
                    residual = hidden
                    hidden = common_layers.layer_preprocess(hidden, hparams) * mask
                    left = _dropout(common_layers.dense(hidden, 4 * d, activation=tf.nn.relu),
                                    hparams)
                    right = _dropout(_conv1d(hidden, d // 2, 3, "standard_conv_3x1",
                                             activation=tf.nn.relu), hparams)
                    hidden = left + _pad_channels(right, 4 * d)
                    hidden = common_layers.layer_preprocess(hidden, hparams) * mask
                    hidden = _separable_conv1d(hidden, d // 2, 9, "separable_conv_9x1", "SAME")
                    hidden = common_layers.layer_postprocess(
                        residual, _pad_channels(hidden, d), hparams)

                if hparams.get("et_encoder_self_attention", True):
                    with _v1.variable_scope("self_attention"):
                        residual = hidden
                        hidden = _attention(common_layers.layer_preprocess(hidden, hparams),
                                            None, encoder_self_attention_bias, hparams,
                                            save_weights_to=save_weights_to,
                                            make_image_summary=make_image_summary)
                        hidden = common_layers.layer_postprocess(residual, hidden, hparams)

                with _v1.variable_scope("dense_layers"):
                    residual = hidden
                    hidden = common_layers.layer_preprocess(hidden, hparams)
                    hidden = _dropout(common_layers.dense(hidden, 4 * d, activation=tf.nn.relu),
                                      hparams)
                    hidden = common_layers.layer_postprocess(
                        residual, common_layers.dense(hidden, d), hparams)
        # Pre-norm stacks grow unnormalised: normalise the output once more.
        return common_layers.layer_preprocess(hidden, hparams)


# --------------------------------------------------------------------------- decoder
def _decoder_layer(hidden, encoder_output, self_bias, encdec_bias, hparams, layer_cache,
                   decode_loop_step, nonpadding, attention_kwargs):
    d = hparams.hidden_size
    cache_of = (lambda name: layer_cache[name]) if layer_cache is not None else (lambda _: None)
    with _v1.variable_scope(_SIXTEEN_HEAD_ATTENTION_NAME):
        residual = hidden
        hidden = common_layers.layer_preprocess(hidden, hparams)
        left = _attention(hidden, None, self_bias, hparams,
                          num_heads=_capped_double_heads(hparams.num_heads),
                          cache=cache_of(_SIXTEEN_HEAD_ATTENTION_NAME),
                          decode_loop_step=decode_loop_step, **attention_kwargs)
    if encoder_output is not None:
        with _v1.variable_scope(_FIRST_ATTEND_TO_ENCODER_NAME):
            right = _attention(hidden, encoder_output, encdec_bias, hparams,
                               cache=cache_of(_FIRST_ATTEND_TO_ENCODER_NAME),
                               **attention_kwargs)
            # T2T sums the two branches without a post-process step here.
            hidden = residual + _dropout(left, hparams) + _dropout(right, hparams)
    else:
        hidden = common_layers.layer_postprocess(residual, left, hparams)

    with _v1.variable_scope(_CONV_BRANCHES_NAME):
        residual = hidden
        hidden = common_layers.layer_preprocess(hidden, hparams)
        if nonpadding is not None:
            hidden *= tf.expand_dims(cast_like(nonpadding, hidden), 2)
        window = _causal_window(layer_cache, _CONV_BRANCHES_FIRST_LAYER_NAME, hidden,
                                _DECODER_LEFT_CONV_PADDING)
        offset = _DECODER_LEFT_CONV_PADDING - _DECODER_RIGHT_CONV_PADDING
        left = _separable_conv1d(window, 2 * d, 11, "separable_conv11x1", "VALID",
                                 activation=tf.nn.relu)
        right = _separable_conv1d(window[:, offset:, :], d // 2, 7, "separable_conv_7x1_1",
                                  "VALID")
        hidden = _dropout(left, hparams) + _pad_channels(_dropout(right, hparams), 2 * d)
        hidden = common_layers.layer_preprocess(hidden, hparams)
        if nonpadding is not None:
            hidden *= tf.expand_dims(cast_like(nonpadding, hidden), 2)
        window = _causal_window(layer_cache, _CONV_BRANCHES_SECOND_LAYER_NAME, hidden,
                                _DECODER_FINAL_CONV_PADDING)
        hidden = _separable_conv1d(window, d, 7, "separable_conv_7x1_2", "VALID")
        hidden = common_layers.layer_postprocess(residual, hidden, hparams)

    with _v1.variable_scope(_VANILLA_ATTENTION_NAME):
        residual = hidden
        hidden = _attention(common_layers.layer_preprocess(hidden, hparams), None, self_bias,
                            hparams, cache=cache_of(_VANILLA_ATTENTION_NAME),
                            decode_loop_step=decode_loop_step, **attention_kwargs)
        hidden = common_layers.layer_postprocess(residual, hidden, hparams)

    if encoder_output is not None:
        with _v1.variable_scope(_SECOND_ATTEND_TO_ENCODER_NAME):
            residual = hidden
            hidden = _attention(common_layers.layer_preprocess(hidden, hparams), encoder_output,
                                encdec_bias, hparams,
                                cache=cache_of(_SECOND_ATTEND_TO_ENCODER_NAME),
                                **attention_kwargs)
            hidden = common_layers.layer_postprocess(residual, hidden, hparams)

    with _v1.variable_scope("dense_layers"):
        residual = hidden
        hidden = common_layers.layer_preprocess(hidden, hparams)
        hidden = _dropout(common_layers.dense(hidden, 4 * d, activation=tf.nn.swish), hparams)
        hidden = common_layers.layer_preprocess(hidden, hparams)
        return common_layers.layer_postprocess(residual, common_layers.dense(hidden, d),
                                               hparams)


def evolved_transformer_decoder(decoder_input, encoder_output, decoder_self_attention_bias,
                                encoder_decoder_attention_bias, hparams, cache=None,
                                decode_loop_step=None, name="decoder", nonpadding=None,
                                save_weights_to=None, make_image_summary=True, losses=None):
    """Evolved Transformer decoder: [B, L, d] -> [B, L, d].

    `cache` (fast decoding) is the dict `init_evolved_transformer_cache` builds. With
    hparams.num_trainable_top_decoder_layers = N >= 0 only the top N decoder layers (and
    the softmax) get gradients, as in T2T.
    """
    del losses
    trainable_top = hparams.get("num_trainable_top_decoder_layers", -1)
    if trainable_top >= 0:
        encoder_output = tf.stop_gradient(encoder_output)
    attention_kwargs = dict(save_weights_to=save_weights_to,
                            make_image_summary=make_image_summary)
    hidden = decoder_input
    with _v1.variable_scope(name):
        num_layers = hparams.num_decoder_layers or hparams.num_hidden_layers
        for layer in range(num_layers):
            if trainable_top == num_layers - layer:
                hidden = tf.stop_gradient(hidden)
            layer_name = "layer_%d" % layer
            with _v1.variable_scope(layer_name):
                hidden = _decoder_layer(
                    hidden, encoder_output, decoder_self_attention_bias,
                    encoder_decoder_attention_bias, hparams,
                    cache[layer_name] if cache is not None else None, decode_loop_step,
                    nonpadding, attention_kwargs)
        output = common_layers.layer_preprocess(hidden, hparams)
    return tf.stop_gradient(output) if trainable_top == 0 else output


# --------------------------------------------------------------------------- decoding cache
def init_evolved_transformer_cache(cache, hparams, batch_size, attention_init_length,
                                   encoder_output, encoder_decoder_attention_bias,
                                   scope_prefix):
    """The fast-decoding cache (T2T's function of the same name; see the module docstring).

        cache = init_evolved_transformer_cache(None, hp, 2, 0, enc_out, enc_bias, "body/")
        cache["layer_0"]["16_head_self_attention"]["k"].shape   # [2, 2 * heads, 0, d/(2h)]
        cache["layer_0"]["conv_branches_first"].shape         # [2, 10, d]
    """
    key_channels = hparams.attention_key_channels or hparams.hidden_size
    value_channels = hparams.attention_value_channels or hparams.hidden_size
    num_layers = hparams.num_decoder_layers or hparams.num_hidden_layers
    vars_3d_num_heads = hparams.num_heads if hparams.get("attention_variables_3d") else 0
    cache = {} if cache is None else cache

    def self_attention_cache(num_heads):
        return {name: common_attention.split_heads(
            tf.zeros([batch_size, attention_init_length, depth]), num_heads)
            for name, depth in (("k", key_channels), ("v", value_channels))}

    for layer in range(num_layers):
        cache["layer_%d" % layer] = {
            _SIXTEEN_HEAD_ATTENTION_NAME: self_attention_cache(
                _capped_double_heads(hparams.num_heads)),
            _VANILLA_ATTENTION_NAME: self_attention_cache(hparams.num_heads),
            _CONV_BRANCHES_FIRST_LAYER_NAME: tf.zeros(
                [batch_size, _DECODER_LEFT_CONV_PADDING, hparams.hidden_size]),
            _CONV_BRANCHES_SECOND_LAYER_NAME: tf.zeros(
                [batch_size, _DECODER_FINAL_CONV_PADDING, hparams.hidden_size * 2]),
        }
    if encoder_output is None:
        return cache
    for layer in range(num_layers):
        layer_name = "layer_%d" % layer
        for attention_name in (_FIRST_ATTEND_TO_ENCODER_NAME, _SECOND_ATTEND_TO_ENCODER_NAME):
            # The scope of that attention in the decoder: the same variables.
            with _v1.variable_scope("%sdecoder/%s/%s/multihead_attention"
                                    % (scope_prefix, layer_name, attention_name)):
                k = common_attention.compute_attention_component(
                    encoder_output, key_channels, name="k", vars_3d_num_heads=vars_3d_num_heads)
                v = common_attention.compute_attention_component(
                    encoder_output, value_channels, name="v",
                    vars_3d_num_heads=vars_3d_num_heads)
            cache[layer_name][attention_name] = {
                "k_encdec": common_attention.split_heads(k, hparams.num_heads),
                "v_encdec": common_attention.split_heads(v, hparams.num_heads)}
    cache["encoder_output"] = encoder_output
    cache["encoder_decoder_attention_bias"] = encoder_decoder_attention_bias
    return cache


# --------------------------------------------------------------------------- model
@registry.register_model
class EvolvedTransformer(transformer.Transformer):
    """The Evolved Transformer from arxiv.org/abs/1901.11117."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._encoder_function = evolved_transformer_encoder
        self._decoder_function = evolved_transformer_decoder
        self._init_cache_fn = init_evolved_transformer_cache

    def set_mode(self, mode):
        """T2TModel.set_mode; with `num_trainable_top_decoder_layers` >= 0, every mode's
        hparams unset shared_embedding_and_softmax_weights (the hparams given, T2T's
        `_original_hparams`, keep theirs, as in T2T)."""
        super().set_mode(mode)
        if (self._hparams.get("num_trainable_top_decoder_layers", -1) >= 0 and
                self._hparams.shared_embedding_and_softmax_weights):
            # Only the top decoder layers and the softmax train, so the softmax may not
            # share the (frozen) embeddings; inputs and targets still share theirs.
            logging.info("Setting shared_embedding_and_softmax_weights to False, because "
                         "num_trainable_top_decoder_layers is set.")
            self._hparams.shared_embedding_and_softmax_weights = False
            self._hparams.shared_embedding = True


# --------------------------------------------------------------------------- hparams
def add_evolved_transformer_hparams(hparams):
    """3 encoder and 4 decoder layers (each about twice a Transformer layer) and the
    Transformer's Adam schedule with a cosine decay in place of rsqrt."""
    hparams.num_encoder_layers = 3
    hparams.num_decoder_layers = 4
    hparams.learning_rate_constant /= hparams.learning_rate_warmup_steps ** 0.5
    hparams.learning_rate_schedule = (
        "constant*linear_warmup*single_cycle_cos_decay*rsqrt_hidden_size")
    return hparams


@registry.register_hparams
def evolved_transformer_tiny():
    """transformer_tiny's sizes, constant * cosine decay."""
    hparams = add_evolved_transformer_hparams(transformer_hparams.transformer_tiny())
    hparams.learning_rate_schedule = "constant*single_cycle_cos_decay"
    return hparams


@registry.register_hparams
def evolved_transformer_base():
    """transformer_base's sizes."""
    return add_evolved_transformer_hparams(transformer_hparams.transformer_base())


@registry.register_hparams
def evolved_transformer_big():
    """transformer_big's sizes (WMT)."""
    return add_evolved_transformer_hparams(transformer_hparams.transformer_big())


@registry.register_hparams
def evolved_transformer_deep():
    """transformer_big with 9 encoder and 10 decoder layers, d=640."""
    hparams = add_evolved_transformer_hparams(transformer_hparams.transformer_big())
    hparams.num_encoder_layers = 9
    hparams.num_decoder_layers = 10
    hparams.hidden_size = 640
    return hparams


def _on_tpu(hparams):
    hparams.learning_rate_constant = 1 / hparams.learning_rate_warmup_steps ** 0.5
    hparams.learning_rate_schedule = "constant*single_cycle_cos_decay"
    return hparams


@registry.register_hparams
def evolved_transformer_base_tpu():
    """evolved_transformer_base on TPU settings."""
    return _on_tpu(add_evolved_transformer_hparams(transformer_hparams.transformer_tpu()))


@registry.register_hparams
def evolved_transformer_big_tpu():
    """evolved_transformer_big on TPU settings."""
    return _on_tpu(add_evolved_transformer_hparams(transformer_hparams.transformer_big_tpu()))


@registry.register_hparams
def evolved_transformer_tpu_basic():
    """transformer_big_tpu with batch 8192, length 256 and num_trainable_top_decoder_layers
    (-1: train every weight; N >= 0: only the top N decoder layers and the softmax)."""
    hparams = transformer_hparams.transformer_big_tpu()
    hparams.add_hparam("print_vars", False)
    hparams.batch_size = 8192
    hparams.max_length = 256
    hparams.add_hparam("num_trainable_top_decoder_layers", -1)
    return hparams
