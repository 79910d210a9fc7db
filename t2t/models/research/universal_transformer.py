"""Universal Transformers (Dehghani et al. 2018, https://arxiv.org/abs/1807.03819).

T2T 1.15.7's `tensor2tensor.models.research.universal_transformer`: a Transformer whose
encoder and decoder apply one shared layer recurrently in depth, optionally with adaptive
computation time (ACT), which lets each position decide how many steps it takes.

    hp = registry.hparams("adaptive_universal_transformer_tiny")   # d=128, ACT, <= 4 steps
    model = UniversalTransformer(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model(features)     # losses["act_loss"]: the ponder cost

The recurrence is in `universal_transformer_util`. With ACT, the body adds
`act_loss_weight * mean(ponder_times + remainders)` of the encoder and of the decoder to
the loss as "act_loss". Decoding re-runs the model per position (greedy or beam search):
there is no cached fast path, as in T2T.
"""
import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers import shape_utils
from t2t.models import transformer
from t2t.models import transformer_hparams
from t2t.models.research import universal_transformer_util


def _act_loss(hparams, *extra_outputs):
    """act_loss_weight * mean(ponder_times + remainders), summed over encoder/decoder."""
    loss = tf.add_n([hparams.act_loss_weight * tf.reduce_mean(ponder_times + remainders)
                     for ponder_times, remainders in extra_outputs])
    if common_layers.should_generate_summaries():
        tf.compat.v1.summary.scalar("act_loss", loss)
    return loss


def _uses_act_loss(hparams):
    return hparams.recurrence_type == "act" and hparams.act_loss_weight != 0


def _encode(model, inputs, target_space, hparams, features):
    """(encoder output [B, L, d], enc-dec attention bias, extra output) through the
    Transformer's encoder preparation with the recurrent encoder."""
    (encoder_output, extra_output), bias = transformer.transformer_encode(
        universal_transformer_util.universal_transformer_encoder, inputs, target_space,
        hparams, attention_weights=model.attention_weights, features=features)
    return encoder_output, bias, extra_output


@registry.register_model
class UniversalTransformer(transformer.Transformer):
    """Universal Transformer: a depth-wise recurrent Transformer."""

    def encode(self, inputs, target_space, hparams, features=None, losses=None, **kwargs):
        """inputs [B, L, 1, d] -> (encoder_output [B, L, d], encoder_decoder_attention_bias,
        encoder_extra_output: (ponder_times, remainders) for ACT)."""
        del losses, kwargs
        return _encode(self, inputs, target_space, hparams, features)

    def decode(self, decoder_input, encoder_output, encoder_decoder_attention_bias,
               decoder_self_attention_bias, hparams, cache=None, decode_loop_step=None,
               nonpadding=None, losses=None, **kwargs):
        """decoder_input [B, L, d] -> (decoder output [B, L, 1, d], extra output).

        `cache` must be None: the Universal Transformer has no incremental decoding.
        """
        del decode_loop_step, losses, kwargs
        if cache is not None:
            raise ValueError("UniversalTransformer.decode has no cached (fast) decoding; "
                             "pass cache=None")
        decoder_input = dropout_lib.dropout(decoder_input,
                                            rate=hparams.layer_prepostprocess_dropout)
        decoder_output, extra_output = universal_transformer_util.universal_transformer_decoder(
            decoder_input, encoder_output, decoder_self_attention_bias,
            encoder_decoder_attention_bias, hparams, nonpadding=nonpadding,
            save_weights_to=self.attention_weights)
        return tf.expand_dims(decoder_output, axis=2), extra_output

    def body(self, features):
        """features["inputs"] [B, Li, 1, d], ["targets"] [B, Lt, 1, d] -> [B, Lt, 1, d]
        (and {"act_loss": scalar} with ACT)."""
        hparams = self._hparams
        if hparams.add_position_timing_signal:
            # Each step adds the positions, so the encoder/decoder preparation does not.
            hparams.pos = None
        encoder_output, encoder_decoder_attention_bias, encoder_extra = None, None, None
        if self.has_input:
            encoder_output, encoder_decoder_attention_bias, encoder_extra = self.encode(
                features["inputs"], features.get("target_space_id"), hparams,
                features=features)
        targets = shape_utils.flatten4d3d(features["targets"])
        decoder_input, decoder_self_attention_bias = transformer.transformer_prepare_decoder(
            targets, hparams, features=features)
        decoder_output, decoder_extra = self.decode(
            decoder_input, encoder_output, encoder_decoder_attention_bias,
            decoder_self_attention_bias, hparams,
            nonpadding=transformer.features_to_nonpadding(features, "targets"))
        if _uses_act_loss(hparams):
            extras = [encoder_extra, decoder_extra] if self.has_input else [decoder_extra]
            return decoder_output, {"act_loss": _act_loss(hparams, *extras)}
        return decoder_output

    # No cache: both decoders re-run the model on the whole prefix at each position.
    def _use_fast_decoding(self):
        return False

    def _greedy_infer(self, features, decode_length, use_tpu=False):
        del use_tpu  # The generic loop has dynamic shapes on every device.
        return self.slow_greedy_infer(features, decode_length)

    def _beam_decode(self, features, decode_length, beam_size, top_beams, alpha,
                     use_tpu=False):
        return self.beam_decode_slow(features, decode_length, beam_size, top_beams, alpha,
                                     use_tpu)


@registry.register_model
class UniversalTransformerEncoder(transformer.Transformer):
    """The Universal Transformer's encoder only (e.g. for classification)."""

    def encode(self, inputs, target_space, hparams, features=None, losses=None):
        """inputs [B, L, 1, d] -> (encoder_output [B, L, d], encoder_extra_output)."""
        del losses
        encoder_output, _, extra_output = _encode(self, inputs, target_space, hparams,
                                                  features)
        return encoder_output, extra_output

    def body(self, features):
        """features["inputs"] [B, L, 1, d] -> [B, L, 1, d] (and {"act_loss"} with ACT)."""
        hparams = self._hparams
        if not self.has_input:
            raise ValueError("universal_transformer_encoder needs a problem with inputs")
        encoder_output, extra_output = self.encode(
            features["inputs"], features.get("target_space_id"), hparams, features=features)
        encoder_output = tf.expand_dims(encoder_output, 2)
        if _uses_act_loss(hparams):
            return encoder_output, {"act_loss": _act_loss(hparams, extra_output)}
        return encoder_output


# ---------------------------------------------------------------------------- hparams
def update_hparams_for_universal_transformer(hparams):
    """Add the Universal Transformer's hparams (T2T's defaults) to a Transformer set.

    num_rec_steps = num_hidden_layers and act_max_steps = 2 * num_hidden_layers at the
    time of the call; positions are added at every step, so `pos` becomes None.
    """
    hparams.daisy_chain_variables = False  # Breaks multi-gpu in while loops.
    # Vanilla Transformer layers mixed in: None, "before_ut", "after_ut" (or both).
    hparams.add_hparam("mix_with_transformer", None)
    hparams.add_hparam("num_mixedin_layers", 2)
    # Transformer layers inside the recurrent block.
    hparams.add_hparam("num_inrecurrence_layers", 1)
    # basic, highway, skip, dwa, act, gru, lstm.
    hparams.add_hparam("recurrence_type", "basic")
    hparams.add_hparam("num_rec_steps", hparams.num_hidden_layers)
    # Positions at every step (horizontal timing); starting at None, "random" or "step".
    hparams.add_hparam("add_position_timing_signal", True)
    if hparams.add_position_timing_signal:
        hparams.pos = None
    hparams.add_hparam("position_start_index", None)
    # The step at every step (vertical timing): "learned" or "sinusoid".
    hparams.add_hparam("add_step_timing_signal", True)
    hparams.add_hparam("step_timing_signal_type", "learned")
    # "add" or "concat" (then projected back) both timing signals.
    hparams.add_hparam("add_or_concat_timing_signal", "add")
    hparams.add_hparam("add_sru", False)
    # "fc" (the Transformer's feed-forward block) or "sepconv" (separable convolutions).
    hparams.add_hparam("transformer_ffn_type", "fc")
    # Highway and skip gates.
    hparams.add_hparam("transform_bias_init", -1.0)
    hparams.add_hparam("couple_carry_transform_gates", True)
    # T2T 1.15.7 read gates_inputs without defining it (highway/skip failed); "i": gates
    # from the first step's input, T2T's earlier default.
    hparams.add_hparam("gates_inputs", "i")
    # Depth-wise attention: a depth embedding, weights per element (not per state).
    hparams.add_hparam("depth_embedding", True)
    hparams.add_hparam("dwa_elements", True)
    # The gates' layer: "dense" or "dense_relu_dense".
    hparams.add_hparam("gate_ffn_layer", "dense")
    # LSTM / GRU transition functions.
    hparams.add_hparam("lstm_forget_bias", 1.0)
    hparams.add_hparam("use_memory_as_final_state", False)
    hparams.add_hparam("add_ffn_unit_to_the_transition_function", False)
    # ACT: basic, accumulated, global (per example, not per position) or random.
    hparams.add_hparam("act_type", "basic")
    hparams.add_hparam("act_max_steps", 2 * hparams.num_hidden_layers)
    hparams.add_hparam("act_halting_bias_init", 1.0)
    hparams.add_hparam("act_epsilon", 0.01)
    hparams.add_hparam("act_loss_weight", 0.01)
    return hparams


def _set(hparams, **values):
    for name, value in values.items():
        setattr(hparams, name, value)
    return hparams


@registry.register_hparams
def universal_transformer_base():
    """d=1024, filter 4096, 16 heads, dropout 0.3 (one shared layer needs a wide one),
    6 steps."""
    hparams = _set(transformer_hparams.transformer_base(), hidden_size=1024, filter_size=4096,
                   num_heads=16, layer_prepostprocess_dropout=0.3)
    return update_hparams_for_universal_transformer(hparams)


@registry.register_hparams
def universal_transformer_base_tpu():
    """universal_transformer_base with the TPU settings, no step timing signal."""
    hparams = transformer_hparams.update_hparams_for_tpu(universal_transformer_base())
    return _set(hparams, add_step_timing_signal=False)


@registry.register_hparams
def universal_transformer_big():
    """d=2048, filter 8192."""
    return _set(universal_transformer_base(), hidden_size=2048, filter_size=8192)


@registry.register_hparams
def universal_transformer_small():
    """transformer_base's sizes (d=512), 6 steps."""
    return update_hparams_for_universal_transformer(transformer_hparams.transformer_base())


@registry.register_hparams
def universal_transformer_tiny():
    """transformer_tiny's sizes (d=128, 4 heads), 8 steps."""
    hparams = update_hparams_for_universal_transformer(transformer_hparams.transformer_tiny())
    return _set(hparams, num_rec_steps=8)


@registry.register_hparams
def transformer_teeny():
    """transformer_base with d=128, filter 128, 2 heads."""
    return _set(transformer_hparams.transformer_base(), hidden_size=128, filter_size=128, num_heads=2)


@registry.register_hparams
def universal_transformer_teeny():
    """transformer_teeny's sizes, 10 steps."""
    hparams = update_hparams_for_universal_transformer(transformer_teeny())
    return _set(hparams, num_rec_steps=10)


@registry.register_hparams
def universal_transformer_tall():
    """universal_transformer_small with 16 steps."""
    return _set(universal_transformer_small(), num_rec_steps=16)


@registry.register_hparams
def adaptive_universal_transformer_base():
    """universal_transformer_base with ACT."""
    return _set(universal_transformer_base(), recurrence_type="act")


@registry.register_hparams
def adaptive_universal_transformer_base_tpu():
    """adaptive_universal_transformer_base with the TPU settings, no step timing signal."""
    hparams = transformer_hparams.update_hparams_for_tpu(adaptive_universal_transformer_base())
    return _set(hparams, add_step_timing_signal=False)


@registry.register_hparams
def adaptive_universal_transformer_small():
    """universal_transformer_small with ACT."""
    return _set(universal_transformer_small(), recurrence_type="act")


@registry.register_hparams
def adaptive_universal_transformer_tiny():
    """universal_transformer_tiny with ACT (at most 4 steps)."""
    return _set(universal_transformer_tiny(), recurrence_type="act")


@registry.register_hparams
def adaptive_universal_transformer_global_base():
    """ACT with one halting probability per example (the mean over positions)."""
    return _set(universal_transformer_base(), recurrence_type="act", act_type="global")


@registry.register_hparams
def adaptive_universal_transformer_global_base_tpu():
    """adaptive_universal_transformer_global_base with the TPU settings."""
    hparams = transformer_hparams.update_hparams_for_tpu(adaptive_universal_transformer_global_base())
    return _set(hparams, add_step_timing_signal=False)


def _tall_act(act_loss_weight=None):
    hparams = _set(universal_transformer_small(), recurrence_type="act",
                   num_hidden_layers=16, batch_size=1024, act_max_steps=24)
    if act_loss_weight is not None:
        hparams.act_loss_weight = act_loss_weight
    return hparams


@registry.register_hparams
def adaptive_universal_transformer_tall():
    """ACT, at most 24 steps, batch 1024."""
    return _tall_act()


@registry.register_hparams
def adaptive_universal_transformer_tall_actlossw0():
    """adaptive_universal_transformer_tall without the ponder loss."""
    return _tall_act(0.0)


@registry.register_hparams
def adaptive_universal_transformer_tall_actlossw001():
    """adaptive_universal_transformer_tall with act_loss_weight 0.001."""
    return _tall_act(0.001)


def _act_dropout(rate):
    return _set(universal_transformer_base(), recurrence_type="act",
                layer_prepostprocess_dropout=rate, attention_dropout=rate, relu_dropout=rate)


@registry.register_hparams
def adaptive_universal_transformer_base_dropout03():
    """ACT base with every dropout 0.3."""
    return _act_dropout(0.3)


@registry.register_hparams
def adaptive_universal_transformer_base_dropout05():
    """ACT base with every dropout 0.5."""
    return _act_dropout(0.5)


@registry.register_hparams
def universal_transformer_skip_base():
    """universal_transformer_base with skip connections (carrying the first input)."""
    return _set(universal_transformer_base(), recurrence_type="skip")


@registry.register_hparams
def universal_transformer_highway_base():
    """universal_transformer_base with highway connections."""
    return _set(universal_transformer_base(), recurrence_type="highway")


@registry.register_hparams
def universal_transformer_dwa_base():
    """universal_transformer_base with depth-wise attention."""
    return _set(universal_transformer_base(), recurrence_type="dwa")


@registry.register_hparams
def universal_transformer_lstm_base():
    """An LSTM over depth (which counts the steps: no step timing signal)."""
    return _set(universal_transformer_base(), recurrence_type="lstm",
                add_step_timing_signal=False)


@registry.register_hparams
def universal_transformer_gru_base():
    """A GRU over depth (which counts the steps: no step timing signal)."""
    return _set(universal_transformer_base(), recurrence_type="gru",
                add_step_timing_signal=False)


@registry.register_hparams
def universal_transformer_lstm_tall():
    """universal_transformer_tall with an LSTM over depth."""
    return _set(universal_transformer_tall(), recurrence_type="lstm",
                add_step_timing_signal=False)


@registry.register_hparams
def universal_transformer_position_random_timing_tiny():
    """Positions start at a random index at every step."""
    return _set(universal_transformer_tiny(), position_start_index="random")


@registry.register_hparams
def universal_transformer_position_step_timing_tiny():
    """Positions start at length * step / num_rec_steps."""
    return _set(universal_transformer_tiny(), position_start_index="step")


@registry.register_hparams
def universal_transformer_step_sinusoid_timing_tiny():
    """A sinusoid step timing signal instead of a learned one."""
    return _set(universal_transformer_tiny(), step_timing_signal_type="sinusoid")


@registry.register_hparams
def adaptive_universal_transformer_position_random_timing_tiny():
    """ACT tiny with positions starting at a random index."""
    return _set(universal_transformer_tiny(), recurrence_type="act",
                position_start_index="random")


@registry.register_hparams
def universal_transformer_mix_before_ut_base():
    """Two vanilla Transformer layers before the recurrence."""
    return _set(universal_transformer_base(), mix_with_transformer="before_ut")


@registry.register_hparams
def universal_transformer_mix_after_ut_base():
    """Two vanilla Transformer layers after the recurrence."""
    return _set(universal_transformer_base(), mix_with_transformer="after_ut")


@registry.register_hparams
def adaptive_universal_transformer_mix_before_ut_base():
    """ACT base with two vanilla Transformer layers before the recurrence."""
    return _set(universal_transformer_base(), mix_with_transformer="before_ut",
                recurrence_type="act")


@registry.register_hparams
def adaptive_universal_transformer_mix_after_ut_base():
    """ACT base with two vanilla Transformer layers after the recurrence."""
    return _set(universal_transformer_base(), mix_with_transformer="after_ut",
                recurrence_type="act")


@registry.register_hparams
def adaptive_universal_transformer_concat_tiny():
    """ACT tiny with the timing signals concatenated (and projected back to d)."""
    return _set(universal_transformer_tiny(), recurrence_type="act",
                add_or_concat_timing_signal="concat")


@registry.register_hparams
def universal_transformer_small_dropconnect():
    """universal_transformer_small whose gates are dense layers with DropConnect (0.5)."""
    hparams = _set(universal_transformer_small(), gate_ffn_layer="dense_dropconnect")
    hparams.add_hparam("dropconnect_dropout", 0.5)
    return hparams


@registry.register_hparams
def adaptive_universal_transformer_multilayer_tpu():
    """ACT on TPU: 2 layers in the recurrence, a Transformer layer before and after it,
    separable-convolution feed-forward blocks."""
    return _set(adaptive_universal_transformer_base_tpu(), num_inrecurrence_layers=2,
                mix_with_transformer="before_ut,after_ut", num_mixedin_layers=1,
                transformer_ffn_type="sepconv")


@registry.register_hparams
def adaptive_universal_transformer_multilayer_hard():
    """The multilayer set with hard attention (top 8) and relative (v2) self-attention."""
    return _set(adaptive_universal_transformer_multilayer_tpu(), batch_size=256,
                hard_attention_k=8, add_step_timing_signal=True,
                self_attention_type="dot_product_relative_v2", max_relative_position=256)


@registry.register_hparams
def adaptive_universal_transformer_sepconv_tiny():
    """ACT tiny with separable-convolution feed-forward blocks."""
    return _set(universal_transformer_tiny(), recurrence_type="act",
                transformer_ffn_type="sepconv")


@registry.register_hparams
def adaptive_universal_transformer_with_sru_base():
    """ACT base with an SRU over the positions before each step."""
    return _set(universal_transformer_base(), recurrence_type="act", add_sru=True)


@registry.register_hparams
def universal_transformer_sepconv_big():
    """universal_transformer_big with separable-convolution feed-forward blocks."""
    return _set(universal_transformer_big(), transformer_ffn_type="sepconv")


@registry.register_hparams
def universal_transformer_sepconv_base():
    """universal_transformer_base with separable-convolution feed-forward blocks."""
    return _set(universal_transformer_base(), transformer_ffn_type="sepconv")


@registry.register_hparams
def universal_transformer_sepconv_tiny():
    """universal_transformer_tiny with separable-convolution feed-forward blocks."""
    return _set(universal_transformer_tiny(), transformer_ffn_type="sepconv")


# ---------------------------------------------------------------------------- search ranges
@registry.register_ranged_hparams
def universal_transformer_base_range(rhp):
    """T2T's range around universal_transformer_base (steps, sizes, heads, ffn type)."""
    rhp.set_discrete("num_rec_steps", [6, 8, 10])
    _shared_range(rhp)


@registry.register_ranged_hparams
def adaptive_universal_transformer_base_range(rhp):
    """T2T's range around the ACT base (max steps, ponder loss weight, sizes, ffn type)."""
    rhp.set_discrete("act_max_steps", [8, 16, 32])
    rhp.set_float("act_loss_weight", 0.0, 0.5)
    _shared_range(rhp)


def _shared_range(rhp):
    rhp.set_discrete("hidden_size", [1024, 2048, 4096])
    rhp.set_discrete("filter_size", [2048, 4096, 8192])
    rhp.set_discrete("num_heads", [8, 16, 32])
    rhp.set_categorical("transformer_ffn_type", ["sepconv", "fc"])
    rhp.set_float("learning_rate", 0.3, 3.0, scale=rhp.LOG_SCALE)
    rhp.set_float("weight_decay", 0.0, 2.0)
