"""A BERT-style Transformer encoder pretrained with a masked-LM head (and next-sentence).

    t2t-trainer --problem=masked_lm_tmpdir --model=transformer_encoder_mlm \\
        --hparams_set=transformer_encoder_mlm_tiny --data_dir=~/mlm_data --output_dir=~/mlm

Features (from `MaskedLmProblem`): "inputs" masked ids [B, L, 1, 1], "input_type_ids"
[B, L] (0 for [CLS] A [SEP], 1 for B [SEP]), "targets" [B, L, 1, 1] (the original id at
masked positions, 0 elsewhere) and optionally "next_sentence_label" [B, 1].

    embedded inputs (zero at padding) + type embedding + position signal
      -> num_hidden_layers x transformer_encoder_layer  -> encoder_outputs (one per layer)
      -> final norm (pre-norm sets)                     -> sequence_output [B, L, d]
    pooled_output = tanh(dense(sequence_output[:, 0]))                     [B, d]
    masked LM: layer_norm(gelu(dense(sequence_output))) x embedding^T      [B, L, 1, 1, V]
    next sentence: dense(pooled_output) -> 2 logits (loss weight
        hparams.next_sentence_loss_weight; 0 turns it off)

The masked-LM loss is the symbol modality's: `weights_nonzero` on "targets" counts only
the masked positions, and so do the eval metrics (accuracy = masked-token accuracy).

`TransformerEncoderMlm.encode_ids(word_ids, input_mask, type_ids)` builds the same encoder
on plain int ids (the TF Hub encoder export and its tests use it):

    model = TransformerEncoderMlm(hparams, ModeKeys.EVAL)
    out = model.encode_ids(ids, mask, type_ids)   # int32 [B, L] each
    out["pooled_output"], out["sequence_output"], out["encoder_outputs"]
"""
import tensorflow as tf

from t2t.core.modes import ModeKeys
from t2t.core import registry
from t2t.layers import common_attention
from t2t.layers import common_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers import expert_utils
from t2t.layers import modalities
from t2t.layers import normalization
from t2t.layers import shape_utils
from t2t.model import t2t_model
from t2t.models import transformer
from t2t.models import transformer_hparams
from t2t.optim import optimize as optimize_lib

_v1 = tf.compat.v1
_PREDICT = ModeKeys.PREDICT


def mlm_encode(embedded, type_ids, hparams):
    """The encoder on embedded ids [B, L, d], zero at padding positions.

    Args:
      embedded: float [B, L, d]; rows that are all zero are padding.
      type_ids: int [B, L], each < hparams.num_type_ids.
      hparams: the model hparams (dropouts as the mode wants them).

    Returns:
      {"sequence_output": [B, L, d], "pooled_output": [B, d], "encoder_outputs": a list
      of [B, L, d], one per layer; the last one is sequence_output (normalised with
      pre-norm hparams, as the others are not)}.
    """
    encoder_input, self_attention_bias, _ = transformer.transformer_prepare_encoder(
        embedded, None, hparams, type_ids=type_ids, num_types=hparams.num_type_ids)
    x = dropout_lib.dropout(encoder_input, rate=hparams.layer_prepostprocess_dropout)
    padding = common_attention.attention_bias_to_padding(self_attention_bias)
    nonpadding = 1.0 - padding
    encoder_outputs = []
    with _v1.variable_scope("encoder"):
        pad_remover = None
        if hparams.get("use_pad_remover") and not common_layers.is_xla_compiled():
            pad_remover = expert_utils.PadRemover(padding)
        for layer in range(hparams.get("num_encoder_layers") or hparams.num_hidden_layers):
            x = transformer.transformer_encoder_layer(
                x, self_attention_bias, layer, hparams, pad_remover=pad_remover,
                nonpadding=nonpadding, make_image_summary=False)
            encoder_outputs.append(x)
        sequence_output = common_layers.layer_preprocess(x, hparams)
    encoder_outputs[-1] = sequence_output
    with _v1.variable_scope("pooler"):
        pooled_output = common_layers.dense(sequence_output[:, 0], hparams.hidden_size,
                                            activation=tf.tanh, name="dense")
    return {"sequence_output": sequence_output, "pooled_output": pooled_output,
            "encoder_outputs": encoder_outputs}


def mlm_transform(sequence_output, hparams):
    """The masked-LM head before the (shared) softmax: [B, L, d] -> [B, L, d]."""
    with _v1.variable_scope("mlm"):
        x = common_layers.dense(sequence_output, hparams.hidden_size, activation=tf.nn.gelu,
                                name="transform")
        return normalization.layer_norm(x, name="layer_norm")


def next_sentence_loss(pooled_output, labels):
    """Mean cross-entropy of the 2-way next-sentence logits; labels int [B, 1]."""
    with _v1.variable_scope("next_sentence"):
        logits = common_layers.dense(pooled_output, 2, name="logits")
    labels = tf.reshape(tf.cast(labels, tf.int32), [-1])
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))


def _nonpadding_embedding(embedded, input_mask):
    """Embedded ids [B, L, 1, d] -> [B, L, d], zeroed where input_mask is 0."""
    embedded = shape_utils.flatten4d3d(embedded)
    return embedded * tf.cast(input_mask, embedded.dtype)[:, :, tf.newaxis]


@registry.register_model
class TransformerEncoderMlm(t2t_model.T2TModel):
    """Transformer encoder with type embeddings, a pooler and masked-LM pretraining."""

    def body(self, features):
        hparams = self._hparams
        raw_ids = features.get("inputs_raw")
        if raw_ids is None:
            raise ValueError("transformer_encoder_mlm needs symbol \"inputs\" (a masked-LM "
                             "problem such as masked_lm_tmpdir)")
        raw_ids = tf.reshape(raw_ids, shape_utils.shape_list(raw_ids)[:2])
        type_ids = features.get("input_type_ids")
        if type_ids is None:
            type_ids = tf.zeros_like(raw_ids)
        embedded = _nonpadding_embedding(features["inputs"], tf.not_equal(raw_ids, 0))
        outputs = mlm_encode(embedded, tf.cast(type_ids, tf.int32), hparams)
        self.encoder_outputs = outputs
        losses = {}
        weight = hparams.get("next_sentence_loss_weight", 0.0)
        labels = features.get("next_sentence_label")
        if weight and labels is not None and hparams.mode != _PREDICT:
            losses["next_sentence"] = weight * next_sentence_loss(outputs["pooled_output"],
                                                                  labels)
        return tf.expand_dims(mlm_transform(outputs["sequence_output"], hparams), 2), losses

    def encode_ids(self, input_word_ids, input_mask, input_type_ids):
        """The encoder on int ids [B, L] (each of the three), under the model's variables.

        Builds exactly what `body` builds for its encoder (same variable names, so a
        checkpoint of this model restores into it) and returns `mlm_encode`'s dict.
        """
        hparams = self._hparams
        input_word_ids = tf.convert_to_tensor(input_word_ids)
        modality = self._problem_hparams.modality["inputs"]
        bottom = hparams.bottom.get("inputs", modalities.get_bottom(modality))
        initializer = optimize_lib.get_variable_initializer(hparams)
        with _v1.variable_scope(self.name, reuse=_v1.AUTO_REUSE, use_resource=True,
                                initializer=initializer):
            with _v1.variable_scope(self._modality_name("inputs")):
                embedded = bottom(input_word_ids[:, :, tf.newaxis, tf.newaxis], hparams,
                                  self._padded_vocab_size("inputs"))
            with _v1.variable_scope("body"):
                return mlm_encode(_nonpadding_embedding(embedded, input_mask),
                                  tf.cast(input_type_ids, tf.int32), hparams)

    def infer(self, *args, **kwargs):
        raise ValueError("transformer_encoder_mlm does not decode; export it with "
                         "t2t-exporter --export_as_tfhub and use the encoder")


def _add_mlm_hparams(hparams):
    hparams.label_smoothing = 0.0
    hparams.use_target_space_embedding = False
    hparams.shared_embedding_and_softmax_weights = True
    hparams.symbol_modality_num_shards = 1
    hparams.add_hparam("num_type_ids", 2)
    hparams.add_hparam("next_sentence_loss_weight", 1.0)
    return hparams


@registry.register_hparams
def transformer_encoder_mlm_base():
    """BERT-base sizes: 12 layers, d=768, filter 3072, 12 heads; pre-norm, dropout 0.1."""
    hparams = _add_mlm_hparams(transformer_hparams.transformer_base())
    hparams.hidden_size = 768
    hparams.filter_size = 3072
    hparams.num_heads = 12
    hparams.num_hidden_layers = 12
    hparams.max_length = 512
    hparams.batch_size = 8192
    return hparams


@registry.register_hparams
def transformer_encoder_mlm_tiny():
    """2 layers, d=128, filter 512, 4 heads; warmup 1000 steps to a learning rate of 0.0014."""
    hparams = transformer_encoder_mlm_base()
    hparams.hidden_size = 128
    hparams.filter_size = 512
    hparams.num_heads = 4
    hparams.num_hidden_layers = 2
    hparams.max_length = 128
    hparams.batch_size = 2048
    hparams.learning_rate_warmup_steps = 1000
    hparams.learning_rate_constant = 0.5
    return hparams
