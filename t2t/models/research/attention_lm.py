"""A self-attention language model: the Transformer's decoder alone (no encoder).

T2T 1.15.7's `tensor2tensor.models.research.attention_lm` (T2T marked it deprecated in
favour of a Transformer without inputs, which t2t has too). Each layer is
[self-attention, feed-forward], with the pre/postprocessing of `hparams`; the
feed-forward block is `conv_hidden_relu` (1x1 convolutions).

    hp = registry.hparams("attention_lm_small")       # 4 layers, d=512, filter 2048
    model = AttentionLM(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model({"targets": ids})          # ids int32 [B, L, 1, 1]

The model reads "targets" only. For a problem with inputs, the `attention_lm_translation*`
sets set `prepend_mode`, and the problem's preprocessing makes the targets
"inputs 0 targets" (PREDICT: `partial_targets` = "inputs 0", which decoding continues);
"prepend_inputs_full_attention" lets the positions of the inputs part attend to each
other in both directions. Decoding re-runs the model per position (T2TModel's slow greedy
and beam search): there is no cached fast path, as in T2T.

Variables (T2T's names): `attention_lm/body/decoder/layer_<i>/self_attention/
multihead_attention/{q,k,v,output_transform}/kernel`,
`.../layer_<i>/ffn/conv_hidden_relu/{conv1,conv2}_single/{kernel,bias}` and the
normalisations' `layer_prepostprocess/layer_norm/*` or `layer_postprocess/layer_norm/*`.
"""
import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_attention
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers import conv_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers import shape_utils
from t2t.model import t2t_model

_v1 = tf.compat.v1


@registry.register_model
class AttentionLM(t2t_model.T2TModel):
    """A stack of self-attention and feed-forward layers over the shifted targets."""

    def body(self, features):
        """features["targets"] [B, L, 1, d] (embedded) -> [B, L, 1, d]."""
        hparams = self._hparams
        targets = tf.squeeze(features["targets"], 2)
        decoder_input, decoder_self_attention_bias = attention_lm_prepare_decoder(
            targets, hparams)
        decoder_input = dropout_lib.dropout(decoder_input,
                                            rate=hparams.layer_prepostprocess_dropout)
        decoder_output = attention_lm_decoder(decoder_input, decoder_self_attention_bias,
                                              hparams)
        return tf.expand_dims(decoder_output, 2)


def attention_lm_prepare_decoder(targets, hparams):
    """targets [B, L, d] (embedded, padding all zeros) -> (decoder_input [B, L, d],
    decoder_self_attention_bias).

    The input is the targets shifted right by one (plus the timing signal when
    `hparams.pos == "timing"`). The bias is causal, [1, 1, L, L]; with `prepend_mode`
    "prepend_inputs_full_attention" it is [B, 1, L, L] and lets every position up to the
    first padding (the inputs and their 0 separator) see that whole prefix.
    """
    if hparams.prepend_mode == "prepend_inputs_full_attention":
        decoder_self_attention_bias = (
            common_attention.attention_bias_prepend_inputs_full_attention(
                common_attention.embedding_to_padding(targets)))
    else:
        decoder_self_attention_bias = common_attention.attention_bias_lower_triangle(
            shape_utils.shape_list(targets)[1])
    decoder_input = common_layers.shift_right_3d(targets)
    if hparams.pos == "timing":
        decoder_input = common_attention.add_timing_signal_1d(decoder_input)
    elif hparams.pos not in ("none", None, ""):
        raise ValueError("unsupported hparams.pos %r for attention_lm; use timing or none"
                         % hparams.pos)
    return decoder_input, decoder_self_attention_bias


def attention_lm_decoder(decoder_input, decoder_self_attention_bias, hparams,
                         name="decoder"):
    """num_hidden_layers x [self-attention, conv_hidden_relu], then layer_preprocess.

    decoder_input [B, L, d] -> [B, L, d]; variables under `name`/layer_<i>/.
    """
    x = decoder_input
    with _v1.variable_scope(name):
        for layer in range(hparams.num_hidden_layers):
            with _v1.variable_scope("layer_%d" % layer):
                with _v1.variable_scope("self_attention"):
                    y = common_attention.multihead_attention(
                        common_layers.layer_preprocess(x, hparams), None,
                        decoder_self_attention_bias,
                        hparams.attention_key_channels or hparams.hidden_size,
                        hparams.attention_value_channels or hparams.hidden_size,
                        hparams.hidden_size, hparams.num_heads, hparams.attention_dropout)
                    x = common_layers.layer_postprocess(x, y, hparams)
                with _v1.variable_scope("ffn"):
                    y = conv_layers.conv_hidden_relu(
                        common_layers.layer_preprocess(x, hparams), hparams.filter_size,
                        hparams.hidden_size, dropout=hparams.relu_dropout)
                    x = common_layers.layer_postprocess(x, y, hparams)
        return common_layers.layer_preprocess(x, hparams)


# ---------------------------------------------------------------------------- hparams
@registry.register_hparams
def attention_lm_base():
    """6 layers, d=1024, filter 4096, 8 heads; post-norm ("dan"), noam learning rate."""
    hparams = common_hparams.basic_params1()
    hparams.hidden_size = 1024
    hparams.batch_size = 8192
    hparams.max_length = 256
    hparams.dropout = 0.0
    hparams.clip_grad_norm = 0.0  # No gradient clipping.
    hparams.optimizer_adam_epsilon = 1e-9
    hparams.learning_rate_decay_scheme = "noam"
    hparams.learning_rate = 0.1
    hparams.learning_rate_warmup_steps = 2000
    hparams.initializer_gain = 1.0
    hparams.num_hidden_layers = 6
    hparams.initializer = "uniform_unit_scaling"
    hparams.weight_decay = 0.0
    hparams.optimizer_adam_beta1 = 0.9
    hparams.optimizer_adam_beta2 = 0.98
    hparams.label_smoothing = 0.0
    hparams.shared_embedding_and_softmax_weights = False

    hparams.add_hparam("filter_size", 4096)
    hparams.add_hparam("num_heads", 8)
    hparams.add_hparam("attention_key_channels", 0)  # 0: hidden_size
    hparams.add_hparam("attention_value_channels", 0)
    # Every hparam ending in "dropout" is set to 0.0 outside training.
    hparams.add_hparam("attention_dropout", 0.0)
    hparams.add_hparam("relu_dropout", 0.0)
    hparams.add_hparam("pos", "timing")  # timing or none
    hparams.add_hparam("encoder_full_attention", False)  # T2T's; no code reads it
    return hparams


@registry.register_hparams
def attention_lm_small():
    """4 layers, d=512, filter 2048, dropout 0.5 (T2T: 45M parameters on lm1b_32k)."""
    hparams = attention_lm_base()
    hparams.num_hidden_layers = 4
    hparams.hidden_size = 512
    hparams.filter_size = 2048
    hparams.layer_prepostprocess_dropout = 0.5
    return hparams


@registry.register_hparams
def attention_lm_translation():
    """For sequence-to-sequence problems: targets "inputs 0 targets", causal attention,
    pre-norm ("n" / "da"), shared embedding and softmax weights, label smoothing 0.1."""
    hparams = attention_lm_base()
    hparams.layer_preprocess_sequence = "n"
    hparams.layer_postprocess_sequence = "da"
    hparams.learning_rate = 0.4
    hparams.prepend_mode = "prepend_inputs_masked_attention"
    hparams.max_length = 512
    hparams.label_smoothing = 0.1
    hparams.shared_embedding_and_softmax_weights = True
    return hparams


@registry.register_hparams
def attention_lm_translation_l12():
    """attention_lm_translation with 12 layers and batches of 4096 tokens."""
    hparams = attention_lm_translation()
    hparams.batch_size = 4096
    hparams.num_hidden_layers = 12
    return hparams


@registry.register_hparams
def attention_lm_translation_full_attention():
    """attention_lm_translation whose inputs part attends in both directions."""
    hparams = attention_lm_translation()
    hparams.prepend_mode = "prepend_inputs_full_attention"
    return hparams
