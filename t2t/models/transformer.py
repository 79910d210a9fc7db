"""The Transformer ("Attention Is All You Need"), with T2T 1.15.7's names and hparams sets.

    hp = registry.hparams("transformer_tiny")            # 2 layers, d=128, 4 heads
    model = Transformer(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model({"inputs": ids_in, "targets": ids_out})
    # ids [B, L, 1, 1] int32 -> logits [B, L_out, 1, 1, vocab]

Encoder: embedded inputs + target-space embedding + timing signal, then
`num_encoder_layers` x (self-attention, feed-forward). Decoder: shifted targets + timing
signal, then layers of causal self-attention, encoder-decoder attention and feed-forward.
Problems without inputs get a decoder-only language model.

Packed rows (features `inputs_segmentation` / `inputs_position` / `targets_*`) hold
several examples; attention biases keep each example to its own segment, timing
signals restart at each segment's position 0 and the decoder sees a zero start input at
each segment's first position, so every packed example gets the same loss it gets alone.

Decoding uses T2TModel's generic loops; a cached fast decoder can plug in by defining
`_fast_decode(features, decode_length, beam_size=1, top_beams=1, alpha=1.0,
use_tpu=False)` (see `Transformer._use_fast_decoding`).
"""
import dataclasses

import tensorflow as tf

from t2t.core import registry
from t2t.layers.attention_config import MultiheadAttentionConfig
from t2t.layers import common_attention
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers import expert_utils
from t2t.layers import shape_utils
from t2t.model import t2t_model
from t2t.models import transformer_fast_decode

# T2T's module-level fast-decoding names (the implementation lives in transformer_fast_decode).
fast_decode = transformer_fast_decode.fast_decode
_init_transformer_cache = transformer_fast_decode._init_transformer_cache

_v1 = tf.compat.v1

# Number of target spaces (problem.SpaceID values) the target-space embedding covers.
NUM_TARGET_SPACES = 32


def features_to_nonpadding(features, inputs_or_targets="inputs"):
    """1.0 on real positions of packed rows ([B, L] float), None for unpacked features."""
    key = inputs_or_targets + "_segmentation"
    if features and key in features:
        return tf.minimum(tf.cast(features[key], tf.float32), 1.0)
    return None


def _target_space_embedding(target_space, depth, hparams, reuse):
    """[1, 1, depth] embedding of the target space id (one of 32)."""
    emb = common_layers.embedding(target_space, NUM_TARGET_SPACES, depth,
                                  name="target_space_embedding",
                                  dtype=hparams.get("activation_dtype") or "float32",
                                  reuse=reuse)
    return tf.reshape(emb, [1, 1, -1])


def transformer_prepare_encoder(inputs, target_space, hparams, features=None, type_ids=None,
                                num_types=None, reuse_target_embedding=tf.compat.v1.AUTO_REUSE):
    """Encoder input and attention biases from embedded inputs [B, L, d].

    Returns (encoder_input [B, L, d], encoder_self_attention_bias,
    encoder_decoder_attention_bias): padding biases [B, 1, 1, L], or same-segment biases
    [B, 1, L, L] / [B, 1, L_targets, L] for packed rows.
    """
    ishape_static = inputs.shape.as_list()
    encoder_input = inputs
    unidirectional = hparams.get("unidirectional_encoder")
    if features and "inputs_segmentation" in features:
        # Packed rows: keep the examples from seeing each other.
        inputs_segmentation = features["inputs_segmentation"]
        inputs_position = features["inputs_position"]
        targets_segmentation = features.get("targets_segmentation")
        if unidirectional:
            encoder_self_attention_bias = common_attention.attention_bias_lower_triangle(
                shape_utils.shape_list(inputs)[1]) + (
                    common_attention.attention_bias_same_segment(inputs_segmentation,
                                                                 inputs_segmentation))
        else:
            encoder_self_attention_bias = common_attention.attention_bias_same_segment(
                inputs_segmentation, inputs_segmentation)
        if targets_segmentation is not None:
            encoder_decoder_attention_bias = common_attention.attention_bias_same_segment(
                targets_segmentation, inputs_segmentation)
        else:
            encoder_decoder_attention_bias = common_attention.attention_bias_ignore_padding(
                1.0 - features_to_nonpadding(features, "inputs"))
    else:
        encoder_padding = common_attention.embedding_to_padding(encoder_input)
        ignore_padding = common_attention.attention_bias_ignore_padding(encoder_padding)
        if unidirectional:
            encoder_self_attention_bias = common_attention.attention_bias_lower_triangle(
                shape_utils.shape_list(inputs)[1])
        else:
            encoder_self_attention_bias = ignore_padding
        encoder_decoder_attention_bias = ignore_padding
        inputs_position = None
    if hparams.get("proximity_bias"):
        encoder_self_attention_bias += common_attention.attention_bias_proximal(
            shape_utils.shape_list(inputs)[1])
    if target_space is not None and hparams.get("use_target_space_embedding", True):
        encoder_input += _target_space_embedding(target_space, ishape_static[-1], hparams,
                                                 reuse_target_embedding)
    if type_ids is not None:
        if not num_types:
            raise ValueError("transformer_prepare_encoder: type_ids need num_types (> 0)")
        encoder_input += common_layers.embedding(type_ids, num_types, ishape_static[-1],
                                                 name="type_embedding")
    encoder_input = _add_positions(encoder_input, hparams, inputs_position,
                                   "inputs_positional_embedding")
    encoder_self_attention_bias = shape_utils.cast_like(encoder_self_attention_bias,
                                                          encoder_input)
    encoder_decoder_attention_bias = shape_utils.cast_like(encoder_decoder_attention_bias,
                                                             encoder_input)
    return encoder_input, encoder_self_attention_bias, encoder_decoder_attention_bias


def _add_positions(x, hparams, position, embedding_name):
    """Add the position signal named by hparams.pos ("timing", "emb" or "none")."""
    pos = hparams.get("pos", "timing")
    if pos == "timing":
        if position is not None:
            return common_attention.add_timing_signal_1d_given_position(x, position)
        return common_attention.add_timing_signal_1d(x)
    if pos == "emb":
        return common_attention.add_positional_embedding(x, hparams.max_length, embedding_name,
                                                         position)
    if pos in ("none", None, ""):
        return x
    raise ValueError("unsupported hparams.pos %r; use timing, emb or none" % pos)


def transformer_prepare_decoder(targets, hparams, features=None, pad=None):
    """Decoder input (shifted targets + positions) and self-attention bias.

    targets: [B, L, d] embedded targets. Returns (decoder_input [B, L, d],
    decoder_self_attention_bias [1 or B, 1, L, L]): causal, and same-segment for packed rows.
    """
    length = shape_utils.shape_list(targets)[1]
    if hparams.get("causal_decoder_self_attention", True):
        if hparams.get("prepend_mode") == "prepend_inputs_full_attention":
            decoder_self_attention_bias = (
                common_attention.attention_bias_prepend_inputs_full_attention(
                    common_attention.embedding_to_padding(targets)))
        else:
            decoder_self_attention_bias = common_attention.attention_bias_lower_triangle(
                length)
    else:
        decoder_padding = common_attention.embedding_to_padding(targets)
        decoder_self_attention_bias = common_attention.attention_bias_ignore_padding(
            decoder_padding)
    targets_position = None
    if features and "targets_segmentation" in features:
        # Packed rows: keep the examples from seeing each other.
        targets_segmentation = features["targets_segmentation"]
        targets_position = features["targets_position"]
        decoder_self_attention_bias += common_attention.attention_bias_same_segment(
            targets_segmentation, targets_segmentation)
    if hparams.get("proximity_bias"):
        decoder_self_attention_bias += common_attention.attention_bias_proximal(length)
    decoder_input = common_layers.shift_right_3d(targets, pad)
    if targets_position is not None:
        # Shifting moved each segment's last token into the next segment's first position;
        # an example alone starts from zeros (T2T fed it the previous example's EOS).
        not_segment_start = tf.cast(tf.not_equal(targets_position, 0), decoder_input.dtype)
        decoder_input *= tf.expand_dims(not_segment_start, -1)
    decoder_input = _add_positions(decoder_input, hparams, targets_position,
                                   "targets_positional_embedding")
    if hparams.get("activation_dtype") == "bfloat16":
        decoder_self_attention_bias = tf.cast(decoder_self_attention_bias, tf.bfloat16)
    return decoder_input, decoder_self_attention_bias


def transformer_ffn_layer(x, hparams, pad_remover=None, conv_padding="LEFT",
                          nonpadding_mask=None, losses=None, cache=None, decode_loop_step=None,
                          readout_filter_size=0, layer_collection=None):
    """The position-wise feed-forward block named by hparams.ffn_layer.

    "dense_relu_dense" (alias "conv_hidden_relu"): x [B, L, d] -> [B, L, hidden_size]
    (padding positions skipped when a PadRemover is given); "conv_relu_conv": convolutions
    of width conv_first_kernel and 1; "none": x unchanged.
    """
    del losses, cache, readout_filter_size
    ffn_layer = hparams.ffn_layer
    relu_dropout_broadcast_dims = common_layers.comma_separated_string_to_integer_list(
        hparams.get("relu_dropout_broadcast_dims") or "")
    if ffn_layer == "conv_hidden_relu":
        ffn_layer = "dense_relu_dense"  # T2T's old name.
    if ffn_layer == "dense_relu_dense":
        if pad_remover is not None:
            original_shape = shape_utils.shape_list(x)
            # Collapse x across examples and drop the padding positions.
            x = tf.reshape(x, tf.concat([[-1], original_shape[2:]], axis=0))
            x = tf.expand_dims(pad_remover.remove(x), axis=0)
        output = common_layers.dense_relu_dense(
            x, hparams.filter_size, hparams.hidden_size, dropout=hparams.relu_dropout,
            dropout_broadcast_dims=relu_dropout_broadcast_dims,
            layer_collection=layer_collection)
        if pad_remover is not None:
            output = tf.reshape(pad_remover.restore(tf.squeeze(output, axis=0)),
                                original_shape)
        return output
    if ffn_layer == "conv_relu_conv":
        return common_layers.conv_relu_conv(
            x, hparams.filter_size, hparams.hidden_size,
            first_kernel_size=hparams.get("conv_first_kernel", 3), second_kernel_size=1,
            padding=conv_padding, nonpadding_mask=nonpadding_mask,
            dropout=hparams.relu_dropout, decode_loop_step=decode_loop_step)
    if ffn_layer == "none":
        return x
    raise ValueError("unsupported hparams.ffn_layer %r; use dense_relu_dense, "
                     "conv_relu_conv or none" % ffn_layer)


def transformer_encoder_layer(x, encoder_self_attention_bias, layer, hparams, pad_remover=None,
                              nonpadding=None, save_weights_to=None, make_image_summary=True,
                              losses=None):
    """One encoder layer (scope "layer_<layer>"): self-attention, then feed-forward."""
    with _v1.variable_scope("layer_%d" % layer):
        with _v1.variable_scope("self_attention"):
            y = common_attention.multihead_attention_with_config(
                common_layers.layer_preprocess(x, hparams), None, encoder_self_attention_bias,
                MultiheadAttentionConfig.from_hparams(hparams,
                                                      make_image_summary=make_image_summary),
                save_weights_to=save_weights_to)
            x = common_layers.layer_postprocess(x, y, hparams)
        with _v1.variable_scope("ffn"):
            y = transformer_ffn_layer(common_layers.layer_preprocess(x, hparams), hparams,
                                      pad_remover, conv_padding="SAME",
                                      nonpadding_mask=nonpadding, losses=losses)
            x = common_layers.layer_postprocess(x, y, hparams)
    return x


def transformer_encoder(encoder_input, encoder_self_attention_bias, hparams, name="encoder",
                        nonpadding=None, save_weights_to=None, make_image_summary=True,
                        losses=None, attn_bias_for_padding=None):
    """A stack of encoder layers: [B, L, d] -> [B, L, d] (normalised when pre-norm)."""
    x = encoder_input
    with _v1.variable_scope(name):
        if nonpadding is not None:
            padding = 1.0 - nonpadding
        else:
            attention_bias = encoder_self_attention_bias
            if attn_bias_for_padding is not None:
                attention_bias = attn_bias_for_padding
            padding = common_attention.attention_bias_to_padding(attention_bias)
            nonpadding = 1.0 - padding
        pad_remover = None
        if hparams.get("use_pad_remover") and not common_layers.is_xla_compiled():
            pad_remover = expert_utils.PadRemover(padding)
        num_layers = hparams.get("num_encoder_layers") or hparams.num_hidden_layers
        for layer in range(num_layers):
            x = transformer_encoder_layer(x, encoder_self_attention_bias, layer, hparams,
                                          pad_remover=pad_remover, nonpadding=nonpadding,
                                          save_weights_to=save_weights_to,
                                          make_image_summary=make_image_summary,
                                          losses=losses)
        # With pre-norm ("n" in layer_preprocess_sequence) the sum of layer outputs
        # grows unnormalised, so the output is normalised once more.
        return common_layers.layer_preprocess(x, hparams)


def transformer_decoder_layer(decoder_input, decoder_self_attention_bias, layer_idx, hparams,
                              encoder_output=None, encoder_decoder_attention_bias=None,
                              cache=None, decode_loop_step=None, nonpadding=None,
                              save_weights_to=None, make_image_summary=False, losses=None,
                              layer_collection=None, recurrent_memory_by_layer=None,
                              chunk_number=None):
    """One decoder layer: causal self-attention, encoder-decoder attention, feed-forward.

    `cache` (fast decoding) is a dict {"layer_<i>": {"k", "v", "k_encdec", "v_encdec"}}.
    """
    del chunk_number
    if recurrent_memory_by_layer is not None:
        raise ValueError("recurrent memory is not supported by t2t's Transformer; pass "
                         "recurrent_memory_by_layer=None")
    layer_name = "layer_%d" % layer_idx
    layer_cache = cache[layer_name] if cache is not None else None
    self_attention_config = MultiheadAttentionConfig.from_hparams(
        hparams, make_image_summary=make_image_summary)
    x = decoder_input
    with _v1.variable_scope(layer_name):
        with _v1.variable_scope("self_attention"):
            y = common_attention.multihead_attention_with_config(
                common_layers.layer_preprocess(x, hparams, layer_collection=layer_collection),
                None, decoder_self_attention_bias, self_attention_config,
                save_weights_to=save_weights_to, cache=layer_cache,
                decode_loop_step=decode_loop_step)
            x = common_layers.layer_postprocess(x, y, hparams)
        if encoder_output is not None:
            with _v1.variable_scope("encdec_attention"):
                y = common_attention.multihead_attention_with_config(
                    common_layers.layer_preprocess(x, hparams,
                                                   layer_collection=layer_collection),
                    encoder_output, encoder_decoder_attention_bias,
                    dataclasses.replace(self_attention_config, attention_type="dot_product"),
                    save_weights_to=save_weights_to, cache=layer_cache)
                x = common_layers.layer_postprocess(x, y, hparams)
        with _v1.variable_scope("ffn"):
            y = transformer_ffn_layer(
                common_layers.layer_preprocess(x, hparams, layer_collection=layer_collection),
                hparams, conv_padding="LEFT", nonpadding_mask=nonpadding, losses=losses,
                cache=layer_cache, decode_loop_step=decode_loop_step,
                layer_collection=layer_collection)
            x = common_layers.layer_postprocess(x, y, hparams)
    return x


def transformer_decoder(decoder_input, encoder_output, decoder_self_attention_bias,
                        encoder_decoder_attention_bias, hparams, cache=None,
                        decode_loop_step=None, name="decoder", nonpadding=None,
                        save_weights_to=None, make_image_summary=True, losses=None,
                        layer_collection=None, recurrent_memory_by_layer=None,
                        chunk_number=None):
    """A stack of decoder layers: [B, L, d] -> [B, L, d] (normalised when pre-norm)."""
    x = decoder_input
    with _v1.variable_scope(name):
        num_layers = hparams.get("num_decoder_layers") or hparams.num_hidden_layers
        for layer_idx in range(num_layers):
            x = transformer_decoder_layer(
                x, decoder_self_attention_bias, layer_idx, hparams,
                encoder_output=encoder_output,
                encoder_decoder_attention_bias=encoder_decoder_attention_bias, cache=cache,
                decode_loop_step=decode_loop_step, nonpadding=nonpadding,
                save_weights_to=save_weights_to, make_image_summary=make_image_summary,
                losses=losses, layer_collection=layer_collection,
                recurrent_memory_by_layer=recurrent_memory_by_layer,
                chunk_number=chunk_number)
        return common_layers.layer_preprocess(x, hparams, layer_collection=layer_collection)


def transformer_encode(encoder_function, inputs, target_space, hparams, attention_weights=None,
                       features=None, losses=None, prepare_encoder_fn=None, **kwargs):
    """Embedded inputs [B, L, 1, d] -> (encoder_output [B, L, d], enc-dec attention bias)."""
    inputs = shape_utils.flatten4d3d(inputs)
    prepare_encoder_fn = prepare_encoder_fn or transformer_prepare_encoder
    encoder_input, self_attention_bias, encoder_decoder_attention_bias = prepare_encoder_fn(
        inputs, target_space, hparams, features=features)
    encoder_input = dropout_lib.dropout(encoder_input, rate=hparams.layer_prepostprocess_dropout)
    attn_bias_for_padding = None
    if hparams.get("unidirectional_encoder"):
        # The causal self-attention bias says nothing about padding.
        attn_bias_for_padding = encoder_decoder_attention_bias
    encoder_output = encoder_function(
        encoder_input, self_attention_bias, hparams,
        nonpadding=features_to_nonpadding(features, "inputs"),
        save_weights_to=attention_weights,
        make_image_summary=not common_layers.is_xla_compiled(), losses=losses,
        attn_bias_for_padding=attn_bias_for_padding, **kwargs)
    return encoder_output, encoder_decoder_attention_bias


def transformer_decode(decoder_function, decoder_input, encoder_output,
                       encoder_decoder_attention_bias, decoder_self_attention_bias, hparams,
                       attention_weights=None, cache=None, decode_loop_step=None,
                       nonpadding=None, losses=None, **kwargs):
    """Decoder input [B, L, d] -> decoder output [B, L, 1, d]."""
    decoder_input = dropout_lib.dropout(decoder_input, rate=hparams.layer_prepostprocess_dropout)
    decoder_output = decoder_function(
        decoder_input, encoder_output, decoder_self_attention_bias,
        encoder_decoder_attention_bias, hparams, cache=cache,
        decode_loop_step=decode_loop_step, nonpadding=nonpadding,
        save_weights_to=attention_weights, losses=losses, **kwargs)
    # T2T's bodies return 4-D outputs.
    return tf.expand_dims(decoder_output, axis=2)


@registry.register_model
class Transformer(t2t_model.T2TModel):
    """Attention net. See https://arxiv.org/abs/1706.03762."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.attention_weights = {}  # Filled with every layer's weights, for visualisation.
        self._encoder_function = transformer_encoder
        self._decoder_function = transformer_decoder
        self._prepare_encoder_fn = transformer_prepare_encoder
        self._prepare_decoder_fn = transformer_prepare_decoder

    def encode(self, inputs, target_space, hparams, features=None, losses=None):
        """Encode embedded inputs [B, L, 1, d]; see `transformer_encode`."""
        return transformer_encode(self._encoder_function, inputs, target_space, hparams,
                                  attention_weights=self.attention_weights,
                                  features=features, losses=losses,
                                  prepare_encoder_fn=self._prepare_encoder_fn)

    def decode(self, decoder_input, encoder_output, encoder_decoder_attention_bias,
               decoder_self_attention_bias, hparams, cache=None, decode_loop_step=None,
               nonpadding=None, losses=None, **kwargs):
        """Decode a prepared decoder input [B, L, d] -> [B, L, 1, d]."""
        return transformer_decode(self._decoder_function, decoder_input, encoder_output,
                                  encoder_decoder_attention_bias, decoder_self_attention_bias,
                                  hparams, attention_weights=self.attention_weights,
                                  cache=cache, decode_loop_step=decode_loop_step,
                                  nonpadding=nonpadding, losses=losses, **kwargs)

    def _prepare_inputs_for_body(self, features):
        return features["inputs"]

    def body(self, features):
        """features["inputs"] [B, Li, 1, d], features["targets"] [B, Lt, 1, d] -> [B, Lt, 1, d].

        Without inputs (a decoder-only problem) the decoder attends to the targets only.
        """
        hparams = self._hparams
        losses = []
        if self.has_input:
            inputs = self._prepare_inputs_for_body(features)
            target_space = features.get("target_space_id")
            encoder_output, encoder_decoder_attention_bias = self.encode(
                inputs, target_space, hparams, features=features, losses=losses)
        else:
            encoder_output, encoder_decoder_attention_bias = None, None
        targets = features["targets"]
        targets_shape = shape_utils.shape_list(targets)
        targets = shape_utils.flatten4d3d(targets)
        decoder_input, decoder_self_attention_bias = self._prepare_decoder_fn(
            targets, hparams, features=features)
        decoder_output = self.decode(
            decoder_input, encoder_output, encoder_decoder_attention_bias,
            decoder_self_attention_bias, hparams,
            nonpadding=features_to_nonpadding(features, "targets"), losses=losses)
        output = tf.reshape(decoder_output, targets_shape)
        if losses:
            return output, {"extra_loss": tf.add_n(losses)}
        return output

    # ---- decoding: the generic slow loops unless a fast decoder is plugged in.
    def _use_fast_decoding(self):
        """True when a cached `_fast_decode` exists and the attention type supports it."""
        return (callable(getattr(self, "_fast_decode", None)) and
                self._hparams.self_attention_type in ("dot_product", "dot_product_relative"))

    def _greedy_infer(self, features, decode_length, use_tpu=False):
        if self._use_fast_decoding():
            return self._fast_decode(features, decode_length, use_tpu=use_tpu)
        return super()._greedy_infer(features, decode_length, use_tpu)

    def _beam_decode(self, features, decode_length, beam_size, top_beams, alpha,
                     use_tpu=False):
        if self._use_fast_decoding():
            return self._fast_decode(features, decode_length, beam_size, top_beams, alpha,
                                     use_tpu=use_tpu)
        return super()._beam_decode(features, decode_length, beam_size, top_beams, alpha,
                                    use_tpu)

    def _fast_decode(self, features, decode_length, beam_size=1, top_beams=1, alpha=1.0,
                     use_tpu=False):
        """Cached decoding: encoder once, one decoder position per step (see
        `transformer_fast_decode`); greedy for beam_size 1, else beam search."""
        return transformer_fast_decode.transformer_fast_decode(
            self, features, decode_length, beam_size=beam_size, top_beams=top_beams,
            alpha=alpha, use_tpu=use_tpu)

    def _fast_decode_tpu(self, features, decode_length, beam_size=1, top_beams=1, alpha=1.0):
        """Cached decoding with fixed shapes (preallocated cache, static while_loop state),
        as on TPUs; the same ids as `_fast_decode`, 0-padded to input length +
        decode_length."""
        return transformer_fast_decode.transformer_fast_decode(
            self, features, decode_length, beam_size=beam_size, top_beams=top_beams,
            alpha=alpha, use_tpu=True)


@registry.register_model
class TransformerEncoder(t2t_model.T2TModel):
    """Transformer encoder only: for classification (e.g. a CLASS_LABEL target)."""

    def body(self, features):
        """features["inputs"] [B, L, 1, d] -> encoder output [B, L, 1, d]."""
        hparams = self._hparams
        inputs = shape_utils.flatten4d3d(features["inputs"])
        # T2T passed no features here, so packed rows attended across examples.
        encoder_input, encoder_self_attention_bias, _ = transformer_prepare_encoder(
            inputs, features.get("target_space_id"), hparams, features=features)
        encoder_input = dropout_lib.dropout(encoder_input,
                                              rate=hparams.layer_prepostprocess_dropout)
        encoder_output = transformer_encoder(
            encoder_input, encoder_self_attention_bias, hparams,
            nonpadding=features_to_nonpadding(features, "inputs"))
        return tf.expand_dims(encoder_output, 2)


# ---------------------------------------------------------------------------- hparams
@registry.register_hparams
def transformer_base_v1():
    """The original paper's base model: post-norm, 6 layers, d=512, noam schedule."""
    hparams = common_hparams.basic_params1()
    hparams.norm_type = "layer"
    hparams.hidden_size = 512
    hparams.batch_size = 4096
    hparams.max_length = 256
    hparams.clip_grad_norm = 0.0  # No gradient clipping.
    hparams.optimizer_adam_epsilon = 1e-9
    hparams.learning_rate_schedule = "legacy"
    hparams.learning_rate_decay_scheme = "noam"
    hparams.learning_rate = 0.1
    hparams.learning_rate_warmup_steps = 4000
    hparams.initializer_gain = 1.0
    hparams.num_hidden_layers = 6
    hparams.initializer = "uniform_unit_scaling"
    hparams.weight_decay = 0.0
    hparams.optimizer_adam_beta1 = 0.9
    hparams.optimizer_adam_beta2 = 0.98
    hparams.num_sampled_classes = 0
    hparams.label_smoothing = 0.1
    hparams.shared_embedding_and_softmax_weights = True
    hparams.symbol_modality_num_shards = 16

    hparams.add_hparam("filter_size", 2048)
    # Layer counts; 0 falls back on num_hidden_layers.
    hparams.add_hparam("num_encoder_layers", 0)
    hparams.add_hparam("num_decoder_layers", 0)
    # Attention.
    hparams.add_hparam("num_heads", 8)
    hparams.add_hparam("attention_key_channels", 0)
    hparams.add_hparam("attention_value_channels", 0)
    hparams.add_hparam("ffn_layer", "dense_relu_dense")
    hparams.add_hparam("parameter_attention_key_channels", 0)
    hparams.add_hparam("parameter_attention_value_channels", 0)
    # Every hparam ending in "dropout" is set to 0.0 outside training.
    hparams.add_hparam("attention_dropout", 0.0)
    hparams.add_hparam("attention_dropout_broadcast_dims", "")
    hparams.add_hparam("relu_dropout", 0.0)
    hparams.add_hparam("relu_dropout_broadcast_dims", "")
    hparams.add_hparam("pos", "timing")  # timing, emb, none
    hparams.add_hparam("position_features", "")
    hparams.add_hparam("nbr_decoder_problems", 1)
    hparams.add_hparam("proximity_bias", False)
    hparams.add_hparam("causal_decoder_self_attention", True)
    hparams.add_hparam("use_pad_remover", True)
    hparams.add_hparam("self_attention_type", "dot_product")
    hparams.add_hparam("conv_first_kernel", 3)
    hparams.add_hparam("attention_variables_3d", False)
    hparams.add_hparam("use_target_space_embedding", True)
    # Only used when ffn_layer == "local_moe_tpu".
    hparams.add_hparam("moe_overhead_train", 1.0)
    hparams.add_hparam("moe_overhead_eval", 2.0)
    hparams.moe_num_experts = 16
    hparams.moe_loss_coef = 1e-3
    # If set, used instead of the problem name in metric names.
    hparams.add_hparam("overload_eval_metric_name", "")
    # Masked (causal) attention in the encoder.
    hparams.add_hparam("unidirectional_encoder", False)
    # Hard attention: keep the k largest weights (0 = off).
    hparams.add_hparam("hard_attention_k", 0)
    hparams.add_hparam("gumbel_noise_weight", 0.0)
    return hparams


@registry.register_hparams
def transformer_base_v2():
    """Pre-norm ("n" before, "da" after each layer), dropout everywhere, warmup 8000."""
    hparams = transformer_base_v1()
    hparams.layer_preprocess_sequence = "n"
    hparams.layer_postprocess_sequence = "da"
    hparams.layer_prepostprocess_dropout = 0.1
    hparams.attention_dropout = 0.1
    hparams.relu_dropout = 0.1
    hparams.learning_rate_warmup_steps = 8000
    hparams.learning_rate = 0.2
    return hparams


@registry.register_hparams
def transformer_base_v3():
    """v2 with Adam beta2 0.997 and the factored learning-rate schedule (constant 2.0)."""
    hparams = transformer_base_v2()
    hparams.optimizer_adam_beta2 = 0.997
    # Equivalent to v2's noam schedule, in the new notation.
    hparams.learning_rate_schedule = "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size"
    hparams.learning_rate_constant = 2.0
    return hparams


@registry.register_hparams
def transformer_base():
    """The current base Transformer (= transformer_base_v3)."""
    return transformer_base_v3()


@registry.register_hparams
def transformer_big():
    """d=1024, filter 4096, 16 heads; batch 2048 to fit a 12 GB GPU; dropout 0.3."""
    hparams = transformer_base()
    hparams.hidden_size = 1024
    hparams.filter_size = 4096
    hparams.batch_size = 2048
    hparams.num_heads = 16
    hparams.layer_prepostprocess_dropout = 0.3
    return hparams


@registry.register_hparams
def transformer_small():
    """2 layers, d=256, filter 1024, 4 heads."""
    hparams = transformer_base()
    hparams.num_hidden_layers = 2
    hparams.hidden_size = 256
    hparams.filter_size = 1024
    hparams.num_heads = 4
    return hparams


@registry.register_hparams
def transformer_tiny():
    """2 layers, d=128, filter 512, 4 heads."""
    hparams = transformer_base()
    hparams.num_hidden_layers = 2
    hparams.hidden_size = 128
    hparams.filter_size = 512
    hparams.num_heads = 4
    return hparams


@registry.register_hparams
def transformer_test():
    """For unit tests: 2 layers, d=16, filter 8, 2 heads."""
    hparams = transformer_base()
    hparams.num_hidden_layers = 2
    hparams.hidden_size = 16
    hparams.filter_size = 8
    hparams.num_heads = 2
    return hparams


@registry.register_hparams
def transformer_base_single_gpu():
    """Base model for one GPU: batch 1024, constant 0.1, warmup 16000."""
    hparams = transformer_base()
    hparams.batch_size = 1024
    hparams.learning_rate_schedule = "constant*linear_warmup*rsqrt_decay"
    hparams.learning_rate_constant = 0.1
    hparams.learning_rate_warmup_steps = 16000
    return hparams


@registry.register_hparams
def transformer_big_single_gpu():
    """Big model for one GPU: dropout 0.1, warmup 16000."""
    hparams = transformer_big()
    hparams.layer_prepostprocess_dropout = 0.1
    hparams.learning_rate_warmup_steps = 16000
    return hparams


def update_hparams_for_tpu(hparams):
    """TPU settings: Adafactor with rsqrt decay, one embedding shard, fixed length 64."""
    # Adafactor needs less memory than Adam.
    hparams.optimizer = "Adafactor"
    hparams.learning_rate_schedule = "rsqrt_decay"
    hparams.learning_rate_warmup_steps = 10000
    # Avoid an expensive concat on TPU.
    hparams.symbol_modality_num_shards = 1
    # TPUs need fixed shapes: longer sequences are dropped, shorter ones padded.
    hparams.max_length = 64
    # TPUs have less memory than GPUs.
    if hparams.batch_size > 2048:
        hparams.batch_size = 2048
    # Broadcast dropout noise to save memory.
    hparams.attention_dropout_broadcast_dims = "0,1"  # batch, heads
    hparams.relu_dropout_broadcast_dims = "1"  # length
    hparams.layer_prepostprocess_dropout_broadcast_dims = "1"  # length
    return hparams


@registry.register_hparams
def transformer_tpu():
    """transformer_base with `update_hparams_for_tpu`."""
    return update_hparams_for_tpu(transformer_base())


@registry.register_hparams
def transformer_big_tpu():
    """transformer_big with `update_hparams_for_tpu`."""
    return update_hparams_for_tpu(transformer_big())


@registry.register_hparams
def transformer_tiny_tpu():
    """transformer_tiny with `update_hparams_for_tpu`."""
    return update_hparams_for_tpu(transformer_tiny())


# ---------------------------------------------------------------------------- search ranges
# For t2t-trainer --hparams_range=NAME (T2T's ranges; the search runs on Optuna).
@registry.register_ranged_hparams
def transformer_base_range(rhp):
    """Learning rate, warmup, initializer gain, Adam betas and weight decay around base."""
    rhp.set_float("learning_rate", 0.3, 3.0, scale=rhp.LOG_SCALE)
    rhp.set_discrete("learning_rate_warmup_steps", [1000, 2000, 4000, 8000, 16000])
    rhp.set_float("initializer_gain", 0.5, 2.0)
    rhp.set_float("optimizer_adam_beta1", 0.85, 0.95)
    rhp.set_float("optimizer_adam_beta2", 0.97, 0.99)
    rhp.set_float("weight_decay", 0.0, 1e-4)


@registry.register_ranged_hparams
def transformer_tiny_tpu_range(rhp):
    """Learning rate and weight decay (T2T's range for transformer_tiny_tpu)."""
    rhp.set_float("learning_rate", 0.3, 3.0, scale=rhp.LOG_SCALE)
    rhp.set_float("weight_decay", 0.0, 2.0)


@registry.register_ranged_hparams
def transformer_tpu_range(rhp):
    """transformer_base_range with weight decay up to 2.0 (T2T's range for the TPU sets)."""
    transformer_base_range(rhp)
    rhp.set_float("weight_decay", 0.0, 2.0)
