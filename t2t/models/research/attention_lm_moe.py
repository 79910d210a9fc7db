"""T2T 1.15.7's `tensor2tensor.models.research.attention_lm_moe`: AttentionLM whose
attention layers may be a mixture of attention experts.

Each layer is [attention, feed-forward] with the pre/postprocessing of `hparams`. The
attention of a layer is `hparams.attention_type`, or, when `attention_layers` is set (it
then replaces num_hidden_layers), one per character: "h" multihead (local, masked to the
right, with `attention_local`), "f" full multihead, "e" local experts
(expert_attention.local_expert_attention: positions routed by a noisy top-k gate, padding
removed first; its load-balancing loss is the model's "extra" loss), "m" memory-efficient
(memory_efficient.py, needs preprocess "n"). The feed-forward is conv_hidden_relu
(separable, left-padded kernels 3 and 31 with `use_sepconv`) or, with
`memory_efficient_ffn`, conv_hidden_relu_memory_efficient. As in T2T 1.15.7 the
feed-forward is never a mixture of experts: `moe_layers`, `moe_num_experts`,
`moe_hidden_sizes` and `diet_experts` are kept but nothing reads them.

    hp = registry.hparams("attention_lm_attention_moe_tiny")   # local-expert attention
    model = AttentionLmMoe(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model({"targets": ids})    # losses["extra"]: the experts' load loss

With `use_inputs` the model maps "inputs" to "targets" position by position (no shift, no
mask; attention_lm_moe_unscramble_base). Decoding re-runs the model per position (slow
greedy and beam search), as in T2T.

Variables (T2T's names): `attention_lm_moe/body/layer_<i>/attention_multihead/
decoder_self_attention/{q,k,v,output_transform}/kernel`, `.../attention_local_experts/
local_expert_attention/local_moe/{w_gate,w_noise}` and its experts'
`.../parallel_<e>/multihead_attention/*`, `.../ffn/conv_hidden_relu/conv{1,2}_single/*`,
and the normalisations' `layer_prepostprocess/layer_norm/*` or `layer_postprocess/...`.
"""
import functools

import tensorflow as tf

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.layers import common_attention
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers import conv_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers import expert_attention
from t2t.layers import expert_utils
from t2t.layers import memory_efficient
from t2t.layers.shape_utils import reshape_like
from t2t.model import t2t_model
from t2t.models.research import attention_lm

_v1 = tf.compat.v1


class AttentionType:
    """The attention layer types (T2T's strings, used in variable scopes)."""
    MULTIHEAD = "multihead"
    LOCAL_EXPERTS = "local_experts"
    GLOBAL_MOE = "global_experts"
    MEMORY_EFFICIENT = "memory_efficient"
    SPARSE_MULTIHEAD = "sparse_multihead"
    SPARSE_MULTIHEAD_TRUNCATED = "sparse_multihead_truncated"
    MULTIHEAD_REDUCED = "multihead_reduced"
    MULTIHEAD_FULL = "multihead_full"

    @staticmethod
    def get_choices():
        return [AttentionType.MULTIHEAD, AttentionType.LOCAL_EXPERTS,
                AttentionType.MEMORY_EFFICIENT, AttentionType.SPARSE_MULTIHEAD,
                AttentionType.SPARSE_MULTIHEAD_TRUNCATED, AttentionType.MULTIHEAD_REDUCED,
                AttentionType.MULTIHEAD_FULL]


LAYER_SYMBOLS = {
    "h": AttentionType.MULTIHEAD,
    "e": AttentionType.LOCAL_EXPERTS,
    "m": AttentionType.MEMORY_EFFICIENT,
    "s": AttentionType.SPARSE_MULTIHEAD,
    "t": AttentionType.SPARSE_MULTIHEAD_TRUNCATED,
    "r": AttentionType.MULTIHEAD_REDUCED,
    "f": AttentionType.MULTIHEAD_FULL,
}

# Types T2T had whose building blocks (LSH sparse attention, the reduced-memory
# attention) t2t does not have: a one-line error names them.
_NOT_PORTED = {
    AttentionType.SPARSE_MULTIHEAD: "common_attention.multihead_attention_sparse_dot_prod "
                                    "(LSH attention)",
    AttentionType.SPARSE_MULTIHEAD_TRUNCATED: "common_attention."
                                              "multihead_attention_sparse_truncated",
    AttentionType.MULTIHEAD_REDUCED: "common_attention.multihead_self_attention_reduced",
}


def _layer_types(hparams):
    if not hparams.attention_layers:
        return [hparams.attention_type] * hparams.num_hidden_layers
    unknown = sorted(set(hparams.attention_layers) - set(LAYER_SYMBOLS))
    if unknown:
        raise ValueError("attention_lm_moe: unknown attention_layers symbol(s) %s; use %s"
                         % ("".join(unknown), "".join(sorted(LAYER_SYMBOLS))))
    return [LAYER_SYMBOLS[symbol] for symbol in hparams.attention_layers]


def _check_hparams(hparams, layer_types):
    for attention_type in layer_types:
        if attention_type in _NOT_PORTED:
            raise ValueError("attention_lm_moe: attention type %r needs %s, which t2t does "
                             "not port; use one of multihead, multihead_full, local_experts, "
                             "memory_efficient" % (attention_type, _NOT_PORTED[attention_type]))
        if attention_type not in (AttentionType.MULTIHEAD, AttentionType.MULTIHEAD_FULL,
                                  AttentionType.LOCAL_EXPERTS,
                                  AttentionType.MEMORY_EFFICIENT):
            raise ValueError("attention_lm_moe: unknown attention_type %r; use one of %s"
                             % (attention_type, AttentionType.get_choices()))
    needs_n = (AttentionType.MEMORY_EFFICIENT in layer_types or hparams.memory_efficient_ffn)
    if needs_n and hparams.layer_preprocess_sequence != "n":
        raise ValueError("attention_lm_moe: memory_efficient attention/ffn normalise inside; "
                         "set layer_preprocess_sequence='n' (got %r)"
                         % hparams.layer_preprocess_sequence)
    if hparams.batch_size < hparams.max_length:
        raise ValueError("attention_lm_moe: batch_size %d < max_length %d; raise batch_size"
                         % (hparams.batch_size, hparams.max_length))
    if not hparams.use_inputs and hparams.norm_type == "batch":
        raise ValueError("attention_lm_moe: norm_type 'batch' mixes the flattened batch of "
                         "the experts; use layer")


@registry.register_model
class AttentionLmMoe(t2t_model.T2TModel):
    """Self-attention language model with optional attention experts (module docstring)."""

    def body(self, features):
        """features["targets"] (or "inputs" with use_inputs) [B, L, 1, d] -> ([B, L, 1, d],
        the experts' load-balancing loss)."""
        hparams = self._hparams
        layer_types = _layer_types(hparams)
        _check_hparams(hparams, layer_types)
        if hparams.use_inputs:
            decoder_input = tf.squeeze(features["inputs"], 2)
            decoder_self_attention_bias = None
            pad_remover = None
        else:
            targets = tf.squeeze(features["targets"], 2)
            decoder_input, decoder_self_attention_bias, pad_remover = (
                attention_lm_moe_prepare_decoder(targets, hparams))
        x = dropout_lib.dropout(decoder_input, rate=hparams.layer_prepostprocess_dropout)
        preprocess = functools.partial(common_layers.layer_preprocess, hparams=hparams)
        postprocess = functools.partial(common_layers.layer_postprocess, hparams=hparams)
        mode = hparams.mode
        if pad_remover is not None:
            to_experts = functools.partial(remove_pad, pad_remover=pad_remover, mode=mode)
            from_experts = functools.partial(restore_pad, ref_x=x, pad_remover=pad_remover,
                                             mode=mode)
        else:
            to_experts = from_experts = lambda t: t
        factor = hparams.attention_exp_factor
        with tf.name_scope("batch_coordinate_preprocess"):
            batch_coordinate = to_experts(get_batch_coordinate(x))
            if factor:
                batch_coordinate = expand_batch_coordinates(batch_coordinate, factor)
        extra_loss = 0.0
        for layer, attention_type in enumerate(layer_types):
            with _v1.variable_scope("layer_%d" % layer):
                with _v1.variable_scope("attention_%s" % attention_type):
                    if attention_type == AttentionType.LOCAL_EXPERTS:
                        y, loss = _local_experts(preprocess(x), batch_coordinate, to_experts,
                                                 from_experts, hparams)
                        extra_loss += loss
                    elif attention_type == AttentionType.MEMORY_EFFICIENT:
                        y = memory_efficient.multihead_self_attention_memory_efficient(
                            x, decoder_self_attention_bias, hparams.num_heads,
                            name="decoder_self_attention")
                    else:
                        local = (hparams.attention_local
                                 and attention_type == AttentionType.MULTIHEAD)
                        y = common_attention.multihead_attention(
                            preprocess(x), None, decoder_self_attention_bias,
                            hparams.attention_key_channels or hparams.hidden_size,
                            hparams.attention_value_channels or hparams.hidden_size,
                            hparams.hidden_size, hparams.num_heads, hparams.attention_dropout,
                            attention_type="local_mask_right" if local else "dot_product",
                            block_length=hparams.attention_block_length,
                            name="decoder_self_attention")
                    x = postprocess(x, y)
                with _v1.variable_scope("ffn"):
                    x = postprocess(x, _ffn(x, preprocess, hparams))
        return tf.expand_dims(preprocess(x), 2), extra_loss


def _local_experts(x, batch_coordinate, to_experts, from_experts, hparams):
    """The "e" layer: padding removed, optionally split into attention_exp_factor smaller
    positions, sent through local_expert_attention, merged and padding restored."""
    depth = x.get_shape().as_list()[-1]
    x_in = to_experts(x)
    factor = hparams.attention_exp_factor
    if factor:
        x_in = expert_attention.deconv_elems_1d(x_in, factor, hparams.attention_exp_inputdim)
    y, loss = expert_attention.local_expert_attention(
        x_in, k=hparams.attention_moe_k, loss_coef=hparams.attention_load_balance,
        attention_num_experts=hparams.attention_num_experts,
        train=hparams.mode == ModeKeys.TRAIN,
        batch_coordinate=batch_coordinate, mask_right=not hparams.use_inputs,
        split_batch=bool(hparams.attention_split_batch),
        attention_num_head=hparams.attention_num_head,
        attention_kq_size=hparams.attention_kq_size,
        attention_v_size=hparams.attention_v_size)
    if factor:
        y = expert_attention.conv_elems_1d(y, factor, depth)
    return from_experts(y), loss


def _ffn(x, preprocess, hparams):
    if hparams.memory_efficient_ffn:
        return conv_layers.conv_hidden_relu_memory_efficient(x, hparams.filter_size)
    conv_params = {}
    if hparams.use_sepconv:
        conv_params = dict(padding="LEFT", kernel_size=(3, 1), second_kernel_size=(31, 1))
    return conv_layers.conv_hidden_relu(preprocess(x), hparams.filter_size,
                                        hparams.hidden_size, dropout=hparams.relu_dropout,
                                        **conv_params)


def attention_lm_moe_prepare_decoder(targets, hparams):
    """targets [B, L, d] -> (decoder_input, decoder_self_attention_bias, pad_remover):
    attention_lm's shifted input and bias, and a PadRemover of the targets' padding (the
    last id, EOS, counts as padding after the shift; the causal mask never attends to it)."""
    with tf.name_scope("pad_remover"):
        pad_remover = expert_utils.PadRemover(common_attention.embedding_to_padding(targets))
    decoder_input, bias = attention_lm.attention_lm_prepare_decoder(targets, hparams)
    return decoder_input, bias, pad_remover


@expert_utils.add_name_scope()
def get_batch_coordinate(x, axis=0):
    """x [B, L, d] -> int32 [B, L, 1]: each position's coordinate along `axis` (0: its
    example)."""
    return tf.expand_dims(
        expert_attention.coordinate_tensor(tf.shape(x)[:-1], axis=axis), axis=-1)


@expert_utils.add_name_scope()
def expand_batch_coordinates(bc, length_factor):
    """bc [1, n, 1] -> [1, n*length_factor, 1], each element repeated length_factor times.

        expand_batch_coordinates([[[0], [1]]], 2)   # [[[0], [0], [1], [1]]]
    """
    bc = tf.convert_to_tensor(bc) * tf.ones([1, length_factor], dtype=tf.int32)
    return tf.reshape(bc, [1, -1, 1])


@expert_utils.add_name_scope()
def remove_pad(x, pad_remover, mode):
    """x [B, L, d] -> [1, non-padding positions, d] (all positions in PREDICT, where the
    first position, the zero "go" embedding, would look like padding)."""
    x = expert_utils.flatten_all_but_last(x)
    if mode != ModeKeys.PREDICT:
        x = pad_remover.remove(x)
    return tf.expand_dims(x, axis=0)


@expert_utils.add_name_scope()
def restore_pad(x, ref_x, pad_remover, mode):
    """Inverse of remove_pad: [1, n, d] -> the shape of ref_x, zeros at padding."""
    x = tf.squeeze(x, axis=0)
    if mode != ModeKeys.PREDICT:
        x = pad_remover.restore(x)
    return reshape_like(x, ref_x)


# ---------------------------------------------------------------------------- hparams
@registry.register_hparams
def attention_lm_moe_base():
    """4 layers, d=1024, filter 2048, 8 heads, multihead attention; post-norm ("dan"),
    noam learning rate (T2T: ~229M parameters on lm1b_32k, for 1 GPU)."""
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
    hparams.num_hidden_layers = 4
    hparams.initializer = "uniform_unit_scaling"
    hparams.weight_decay = 0.0
    hparams.optimizer_adam_beta1 = 0.9
    hparams.optimizer_adam_beta2 = 0.98
    hparams.label_smoothing = 0.0
    hparams.shared_embedding_and_softmax_weights = False
    hparams.moe_num_experts = 32
    hparams.add_hparam("num_sampled_classes", 0)  # T2T's; no code reads it
    hparams.add_hparam("filter_size", 2048)
    hparams.add_hparam("num_heads", 8)
    hparams.add_hparam("attention_key_channels", 0)  # 0: hidden_size
    hparams.add_hparam("attention_value_channels", 0)
    # Every hparam ending in "dropout" is set to 0.0 outside training.
    hparams.add_hparam("attention_dropout", 0.0)
    hparams.add_hparam("relu_dropout", 0.0)
    hparams.add_hparam("pos", "timing")  # timing or none
    hparams.add_hparam("moe_layers", "2")  # T2T's; the feed-forward is never an MoE
    # One character per layer (LAYER_SYMBOLS); when set, num_hidden_layers is ignored.
    hparams.add_hparam("attention_layers", "")
    hparams.add_hparam("attention_type", AttentionType.MULTIHEAD)
    hparams.add_hparam("attention_local", False)  # "h" layers: local_mask_right
    hparams.add_hparam("attention_moe_k", 2)  # experts per position
    hparams.add_hparam("attention_num_head", 1)  # heads inside each expert
    hparams.add_hparam("attention_num_experts", 16)
    hparams.add_hparam("attention_split_batch", False)
    hparams.add_hparam("attention_red_factor", 3)  # for "r" layers (not ported)
    hparams.add_hparam("attention_block_length", 128)
    hparams.add_hparam("attention_reduction_type", "conv")  # for "r" layers
    hparams.add_hparam("attention_nonlinearity", "none")  # for "r" layers
    # Non-zero: each position is split into attention_exp_factor positions of
    # attention_exp_inputdim before the experts, and merged back after.
    hparams.add_hparam("attention_exp_factor", 0)
    hparams.add_hparam("attention_exp_inputdim", 128)
    hparams.add_hparam("attention_kq_size", 128)  # inside each expert
    hparams.add_hparam("attention_v_size", 256)
    hparams.add_hparam("attention_load_balance", 2e-2)  # the experts' loss coefficient
    hparams.add_hparam("lsh_num_hyperplanes", 4)  # for "s"/"t" layers (not ported)
    hparams.add_hparam("lsh_use_map_fn", False)
    hparams.add_hparam("use_sepconv", False)
    hparams.add_hparam("diet_experts", False)  # T2T's; no code reads it
    hparams.add_hparam("memory_efficient_ffn", False)
    # True: a non-autoregressive model from "inputs" to "targets".
    hparams.add_hparam("use_inputs", False)
    return hparams


@registry.register_hparams
def attention_lm_moe_base_long_seq():
    """For long sequences: max_length = batch_size, separable left-padded feed-forward."""
    hparams = attention_lm_moe_base()
    hparams.max_length = 0  # max_length == batch_size
    hparams.eval_drop_long_sequences = True
    hparams.min_length_bucket = 256
    hparams.use_sepconv = True
    return hparams


@registry.register_hparams
def attention_lm_moe_base_ae():
    """Local-expert attention in every layer."""
    hparams = attention_lm_moe_base_long_seq()
    hparams.attention_type = AttentionType.LOCAL_EXPERTS
    hparams.learning_rate = 0.05
    hparams.learning_rate_warmup_steps = 10000
    return hparams


@registry.register_hparams
def attention_lm_moe_base_local():
    """Local (block, masked to the right) multihead attention."""
    hparams = attention_lm_moe_base_long_seq()
    hparams.attention_local = True
    return hparams


@registry.register_hparams
def attention_lm_moe_base_hybrid():
    """Layers "hehe": local multihead and local experts alternating."""
    hparams = attention_lm_moe_base_long_seq()
    hparams.attention_layers = "hehe"
    hparams.attention_local = True
    return hparams


@registry.register_hparams
def attention_lm_hybrid_v2():
    """Layers "hheh", 6 experts per position, pre-norm ("n" / "da")."""
    hparams = attention_lm_moe_base_long_seq()
    hparams.attention_layers = "hheh"
    hparams.attention_local = True
    hparams.attention_moe_k = 6
    hparams.layer_preprocess_sequence = "n"
    hparams.layer_postprocess_sequence = "da"
    return hparams


@registry.register_hparams
def attention_lm_16k():
    """attention_lm_hybrid_v2, batches of 16384 tokens."""
    hparams = attention_lm_hybrid_v2()
    hparams.batch_size = 16384
    return hparams


@registry.register_hparams
def attention_lm_12k():
    """attention_lm_hybrid_v2, batches of 12000 tokens."""
    hparams = attention_lm_hybrid_v2()
    hparams.batch_size = 12000
    return hparams


@registry.register_hparams
def attention_lm_11k():
    """attention_lm_hybrid_v2, batches of 11500 tokens."""
    hparams = attention_lm_hybrid_v2()
    hparams.batch_size = 11500
    return hparams


@registry.register_hparams
def attention_lm_ae_extended():
    """Layers "eeee", each position split into 4 before the experts."""
    hparams = attention_lm_moe_base_long_seq()
    hparams.attention_layers = "eeee"
    hparams.attention_local = True
    hparams.attention_moe_k = 2
    hparams.attention_exp_factor = 4
    hparams.layer_preprocess_sequence = "n"
    hparams.layer_postprocess_sequence = "da"
    return hparams


@registry.register_hparams
def attention_lm_moe_base_memeff():
    """Memory-efficient attention and feed-forward, pre-norm, no dropout."""
    hparams = attention_lm_moe_base_long_seq()
    hparams.use_sepconv = False
    hparams.diet_experts = True
    hparams.layer_preprocess_sequence = "n"
    hparams.layer_postprocess_sequence = "da"
    hparams.layer_prepostprocess_dropout = 0.0
    hparams.memory_efficient_ffn = True
    hparams.attention_type = AttentionType.MEMORY_EFFICIENT
    hparams.num_heads = 8
    # T2T: factored_logits = True; t2t has no factored-logits top (modalities.symbol_top),
    # so the logits are dense: the same loss, more memory for them.
    hparams.factored_logits = False
    return hparams


@registry.register_hparams
def attention_lm_moe_small():
    """4 layers, d=512, filter 2048 (T2T: eval log-ppl 3.31 on lm1b_32k)."""
    hparams = attention_lm_moe_base()
    hparams.num_hidden_layers = 4
    hparams.hidden_size = 512
    hparams.filter_size = 2048
    hparams.moe_num_experts = 128
    hparams.moe_layers = "2"
    return hparams


@registry.register_hparams
def attention_lm_moe_tiny():
    """attention_lm_moe_small with moe_num_experts 32 (for debugging)."""
    hparams = attention_lm_moe_small()
    hparams.moe_num_experts = 32
    return hparams


@registry.register_hparams
def attention_lm_attention_moe_tiny():
    """attention_lm_moe_small with local-expert attention (128 experts), filter 8192."""
    hparams = attention_lm_moe_small()
    hparams.moe_layers = ""
    hparams.attention_num_experts = 128
    hparams.filter_size = 8192
    hparams.attention_type = AttentionType.LOCAL_EXPERTS
    return hparams


@registry.register_hparams
def attention_lm_no_moe_small():
    """attention_lm_moe_small without experts (T2T: eval log-ppl 3.51 on lm1b_32k)."""
    hparams = attention_lm_moe_small()
    hparams.moe_layers = ""
    return hparams


@registry.register_hparams
def attention_lm_moe_large():
    """5 layers, d=1024, 16 heads, filter 4096, dropout 0.2 (T2T: multi-GPU, eval
    log-ppl 3.18 on lm1b_32k)."""
    hparams = attention_lm_moe_base()
    hparams.num_hidden_layers = 5
    hparams.moe_layers = "3"
    hparams.hidden_size = 1024
    hparams.num_heads = 16
    hparams.filter_size = 4096
    hparams.moe_hidden_sizes = "4096"
    hparams.moe_num_experts = 128
    hparams.layer_prepostprocess_dropout = 0.2
    return hparams


@registry.register_hparams
def attention_lm_moe_large_diet():
    """attention_lm_moe_large with diet_experts."""
    hparams = attention_lm_moe_large()
    hparams.diet_experts = True
    return hparams


@registry.register_hparams
def attention_lm_moe_memory_efficient():
    """attention_lm_moe_large with memory-efficient attention and feed-forward."""
    hparams = attention_lm_moe_large()
    hparams.diet_experts = True
    hparams.layer_preprocess_sequence = "n"
    hparams.layer_postprocess_sequence = "da"
    hparams.layer_prepostprocess_dropout = 0.0
    hparams.memory_efficient_ffn = True
    hparams.attention_type = AttentionType.MEMORY_EFFICIENT
    hparams.num_heads = 8
    # T2T: factored_logits = True; t2t has no factored-logits top (modalities.symbol_top),
    # so the logits are dense: the same loss, more memory for them.
    hparams.factored_logits = False
    return hparams


@registry.register_hparams
def attention_lm_moe_32b_diet():
    """attention_lm_moe_large_diet with 1024 experts of 16384 (T2T's "32B parameters")."""
    hparams = attention_lm_moe_large_diet()
    hparams.moe_hidden_sizes = "16384"
    hparams.moe_num_experts = 1024
    return hparams


@registry.register_hparams
def attention_lm_moe_24b_diet():
    """attention_lm_moe_large_diet with 1024 experts of 12288, batches of 4096."""
    hparams = attention_lm_moe_large_diet()
    hparams.moe_hidden_sizes = "12288"
    hparams.moe_num_experts = 1024
    hparams.batch_size = 4096
    return hparams


@registry.register_hparams
def attention_lm_moe_translation():
    """For sequence-to-sequence problems: targets "inputs 0 targets", 6 layers, pre-norm,
    shared embedding and softmax weights, label smoothing 0.1."""
    hparams = attention_lm_moe_base()
    hparams.layer_preprocess_sequence = "n"
    hparams.layer_postprocess_sequence = "da"
    hparams.learning_rate = 0.4
    hparams.prepend_mode = "prepend_inputs_masked_attention"
    hparams.max_length = 512
    hparams.label_smoothing = 0.1
    hparams.layer_prepostprocess_dropout = 0.2
    hparams.num_hidden_layers = 6
    hparams.moe_layers = "0,1,2,3,4,5"
    hparams.shared_embedding_and_softmax_weights = True
    return hparams


@registry.register_hparams
def attention_lm_moe_unscramble_base():
    """For languagemodel_wiki_scramble1k50: "inputs" to "targets" position by position
    (use_inputs), length 1024, pre-norm."""
    hparams = attention_lm_no_moe_small()
    hparams.use_inputs = True
    hparams.min_length_bucket = 1024
    hparams.max_length = 1024
    hparams.batch_size = 5000
    hparams.layer_prepostprocess_dropout = 0.0
    hparams.layer_preprocess_sequence = "n"
    hparams.layer_postprocess_sequence = "da"
    return hparams
