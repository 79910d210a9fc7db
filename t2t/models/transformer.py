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
from t2t.layers import common_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers import expert_utils
from t2t.layers import shape_utils
from t2t.model import t2t_model
from t2t.models import transformer_fast_decode
from t2t.models.transformer_hparams import (  # noqa: F401  (T2T's transformer.<set> names)
    transformer_base_v1, transformer_base_v2, transformer_base_v3, transformer_base,
    transformer_big, transformer_small, transformer_tiny, transformer_test,
    transformer_base_single_gpu, transformer_big_single_gpu, update_hparams_for_tpu,
    transformer_tpu, transformer_big_tpu, transformer_tiny_tpu, transformer_base_range,
    transformer_tiny_tpu_range, transformer_tpu_range, transformer_l2, transformer_l4,
    transformer_l8, transformer_l10, transformer_h1, transformer_h4, transformer_h16,
    transformer_h32, transformer_k128, transformer_k256, transformer_ff1024,
    transformer_ff4096, transformer_dr0, transformer_dr2, transformer_ls0, transformer_ls2,
    transformer_hs256, transformer_hs1024, transformer_big_dr1, transformer_big_enfr,
    transformer_big_enfr_tpu, transformer_big_dr2, transformer_timeseries,
    transformer_timeseries_tpu, transformer_base_multistep8, transformer_cubbitt,
    transformer_parsing_base, transformer_parsing_big, transformer_parsing_ice,
    transformer_prepend_v2, transformer_prepend_v1, transformer_prepend,
    transformer_relative, transformer_relative_tiny, transformer_relative_big,
    transformer_clean, transformer_clean_big, transformer_clean_big_tpu, transformer_tall,
    transformer_tall_finetune_tied, transformer_tall_train_tied,
    transformer_tall_finetune_uniencdec, transformer_tall_train_uniencdec,
    transformer_tall_finetune_textclass, transformer_tall_pretrain_lm,
    transformer_tall_pretrain_lm_tpu_adafactor,
    transformer_tall_pretrain_lm_tpu_adafactor_large, transformer_tall_pretrain_lm_tpu,
    transformer_tall_big, transformer_lm_tpu_0, transformer_lm_tpu_1,
    transformer_wikitext103_l4k_v0, transformer_mlperf_tpu, transformer_tpu_bf16_activation,
    transformer_fairseq_fp16_activation_big, transformer_packed_tpu, transformer_small_tpu,
    transformer_tpu_with_conv, transformer_tpu_1b, transformer_parameter_attention_a,
    transformer_parameter_attention_b, transformer_supervised_attention)

# T2T's module-level fast-decoding names (the implementation lives in transformer_fast_decode).
fast_decode = transformer_fast_decode.fast_decode
fast_decode_tpu = transformer_fast_decode.fast_decode_tpu
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
    of width conv_first_kernel and 1; "parameter_attention": attention over filter_size
    learned memory rows; "none": x unchanged.
    """
    del losses, cache
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
    if ffn_layer == "parameter_attention":
        return common_attention.parameter_attention(
            x, hparams.parameter_attention_key_channels or hparams.hidden_size,
            hparams.parameter_attention_value_channels or hparams.hidden_size,
            hparams.hidden_size, readout_filter_size or hparams.filter_size, hparams.num_heads,
            hparams.attention_dropout)
    if ffn_layer == "none":
        return x
    raise ValueError("unsupported hparams.ffn_layer %r; use dense_relu_dense, "
                     "conv_relu_conv, parameter_attention or none" % ffn_layer)


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
        self._init_cache_fn = _init_transformer_cache  # the cache self._decoder_function reads

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
        extra_losses = {"extra_loss": tf.add_n(losses)} if losses else {}
        expected_attentions = features.get("expected_attentions")
        if expected_attentions is not None:
            # Supervised attention (transformer_supervised_attention): the encoder-decoder
            # attention is pulled towards the given one. T2T returned only this loss and
            # an unreshaped output here, dropping the other extra losses.
            extra_losses["attention_loss"] = tf.reduce_mean(
                common_attention.encoder_decoder_attention_loss(
                    expected_attentions, self.attention_weights,
                    hparams.get("expected_attention_loss_type", "kl_divergence"),
                    hparams.get("expected_attention_loss_multiplier", 1.0)))
        return (output, extra_losses) if extra_losses else output

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
            alpha=alpha, use_tpu=use_tpu, stopping_bound=self.stopping_bound)

    def _fast_decode_tpu(self, features, decode_length, beam_size=1, top_beams=1, alpha=1.0):
        """Cached decoding with fixed shapes (preallocated cache, static while_loop state),
        as on TPUs; the same ids as `_fast_decode`, 0-padded to input length +
        decode_length."""
        return transformer_fast_decode.transformer_fast_decode(
            self, features, decode_length, beam_size=beam_size, top_beams=top_beams,
            alpha=alpha, use_tpu=True, stopping_bound=self.stopping_bound)


@registry.register_model
class TransformerScorer(Transformer):
    """A Transformer whose PREDICT mode scores given targets instead of decoding.

        scorer = TransformerScorer(hp, ModeKeys.PREDICT, problem_hparams)
        out = scorer.infer({"inputs": ids_in, "targets": ids_out})
        # out["outputs"]: the targets [B, L]; out["scores"]: sum of log p(target) [B]

    Its variables live under "transformer/", so a Transformer checkpoint scores as it is.
    Padding positions (id 0) add nothing to a score (T2T summed their log-probabilities
    too, so a padded target scored lower than the same target alone).
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("name", "transformer")
        super().__init__(*args, **kwargs)

    def infer(self, features=None, decode_length=50, beam_size=1, top_beams=1, alpha=0.0,
              use_tpu=False):
        """{"outputs": targets [B, L], "scores": float [B]}; the decode arguments are unused."""
        del decode_length, beam_size, top_beams, alpha, use_tpu
        if not features or "targets" not in features:
            raise ValueError("TransformerScorer.infer scores given targets: pass "
                             "features['targets'] (int [B, L, 1, 1])")
        self._hparams.force_full_predict = True
        logits, _ = self(features)
        log_probs = common_layers.log_prob_from_logits(tf.squeeze(logits, [2, 3]))
        targets = tf.squeeze(features["targets"], [2, 3])
        token_log_probs = common_layers.index_last_dim_with_indices(log_probs, targets)
        token_log_probs *= tf.cast(tf.not_equal(targets, 0), token_log_probs.dtype)
        return {"outputs": targets, "scores": tf.reduce_sum(token_log_probs, axis=1)}


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


@registry.register_model
class TransformerRegressor(TransformerEncoder):
    """The Transformer encoder for regression: one real value per example.

        model = TransformerRegressor(hp, ModeKeys.TRAIN, problem_hparams)  # REAL_L2_LOSS
        predictions, losses = model({"inputs": ids, "targets": values})  # [B, 1, 1, 1]

    `top` averages the encoder output over the input positions and projects it to one
    number (variables "reg_top_ffn/model_top/{kernel,bias}", T2T's). Padding positions
    (id 0, or outside `inputs_segmentation`) are left out of the average (T2T averaged them
    in, so a padded batch predicted differently from the same sentence alone).
    """

    def top(self, body_output, features):
        with tf.compat.v1.variable_scope("reg_top_ffn"):
            nonpadding = _regressor_nonpadding(features, body_output)
            if nonpadding is None:
                pooled = tf.reduce_mean(body_output, axis=[1, 2], keepdims=True)
            else:
                total = tf.reduce_sum(body_output * nonpadding, axis=[1, 2], keepdims=True)
                count = tf.reduce_sum(nonpadding, axis=[1, 2], keepdims=True)
                pooled = total / tf.maximum(count, 1.0)
            return common_layers.dense(pooled, 1, name="model_top")


def _regressor_nonpadding(features, body_output):
    """[B, L, 1, 1] float 1.0 at real input positions, or None when unknown."""
    nonpadding = features_to_nonpadding(features, "inputs")
    if nonpadding is None:
        ids = features.get("inputs")
        if ids is None or not ids.dtype.is_integer:
            return None
        nonpadding = tf.cast(tf.not_equal(ids, 0), body_output.dtype)
    shape = shape_utils.shape_list(body_output)
    return tf.reshape(tf.cast(nonpadding, body_output.dtype), shape[:2] + [1, 1])
