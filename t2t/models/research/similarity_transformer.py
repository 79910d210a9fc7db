"""Two Transformer encoders that embed strings for similarity search (docstring <-> code).

T2T 1.15.7's `tensor2tensor.models.research.similarity_transformer`, the model of
Kubeflow's code search example on the `github_function_docstring` problem. One encoder
embeds the docstring ("inputs"), the other the function ("targets"); each embedding is the
mean of its encoder's outputs, L2-normalised. Training scores every docstring of a batch
against every function of it by cosine similarity: the pairs of one row are positives,
all the others negatives (a sigmoid cross-entropy over the [B, B] matrix).

    hp = registry.hparams("transformer_tiny")       # T2T registered no sets of its own
    model = SimilarityTransformer(hp, ModeKeys.TRAIN, problem_hparams)
    embeddings, losses = model({"inputs": doc_ids, "targets": code_ids})  # [B, d], loss
    # PREDICT: "inputs" holds either; embed_code [B, 1] (1: code, 0: docstring)
    embed = SimilarityTransformer(hp, ModeKeys.PREDICT, problem_hparams)
    code_vectors = embed.infer({"inputs": code_ids, "embed_code": ones})       # [B, d]

Variables (T2T's names): `similarity_transformer/body/string_embedding/encoder/...` and
`.../body/code_embedding/encoder/...` (each with its own `target_space_embedding`), and the
modality's embedding. Embedding code in PREDICT reads "inputs" through the inputs'
modality, as in T2T: keep `shared_embedding_and_softmax_weights` (the Transformer sets'
default) so the code is embedded with the weights it was trained with.
"""
import tensorflow as tf

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.layers import dropout as dropout_lib
from t2t.layers import shape_utils
from t2t.model import t2t_model
from t2t.models import transformer
from t2t.problems import spaces

_v1 = tf.compat.v1


def similarity_loss(string_embedding, code_embedding):
    """Mean sigmoid cross-entropy of the all-pairs cosine matrix: row i's pair positive.

    Both embeddings [B, d], L2-normalised. The logits of a pair are (similarity,
    1 - similarity); a positive's labels are (1, 0), a negative's (0, 1). (T2T gave the
    positives (0, 1), training matching pairs apart; see docs/t2t_differences.md.)
    """
    similarity = tf.matmul(string_embedding, code_embedding, transpose_b=True)
    similarity_flat = tf.reshape(similarity, [-1, 1])
    logits = tf.concat([similarity_flat, 1.0 - similarity_flat], axis=1)
    negatives = 1 - tf.eye(tf.shape(similarity)[0], dtype=tf.int32)
    labels = tf.one_hot(tf.reshape(negatives, [-1]), 2)
    return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels,
                                                                  logits=logits))


@registry.register_model
class SimilarityTransformer(t2t_model.T2TModel):
    """Transformer model for the similarity between two strings (docstring and code)."""

    def top(self, body_output, features):
        """The embeddings are the output: no softmax."""
        del features
        return body_output

    def body(self, features):
        """TRAIN/EVAL: (docstring embeddings [B, d], {"training": loss}); PREDICT: the
        embeddings [B, d] of "inputs", as code where features["embed_code"] > 0."""
        if self._hparams.mode != ModeKeys.PREDICT:
            with _v1.variable_scope("string_embedding"):
                string_embedding = self.encode(features, "inputs")
            with _v1.variable_scope("code_embedding"):
                code_embedding = self.encode(features, "targets")
            string_embedding = tf.nn.l2_normalize(string_embedding, axis=1)
            code_embedding = tf.nn.l2_normalize(code_embedding, axis=1)
            return string_embedding, {
                "training": similarity_loss(string_embedding, code_embedding)}
        # Both encoders run; each row keeps the one its embed_code asks for (T2T took the
        # batch's max of embed_code in a tf.cond, one encoder for the whole batch).
        with _v1.variable_scope("string_embedding"):
            string_embedding = self.encode(features, "inputs")
        with _v1.variable_scope("code_embedding"):
            code_embedding = self.encode(features, "inputs")
        embed_code = features.get("embed_code")
        if embed_code is None:
            raise ValueError("SimilarityTransformer PREDICT needs features['embed_code'] "
                             "([B, 1] ints: 1 embeds 'inputs' as code, 0 as a docstring)")
        batch = shape_utils.shape_list(string_embedding)[0]
        is_code = tf.reshape(tf.reduce_max(tf.reshape(embed_code, [batch, -1]), axis=1) > 0,
                             [batch, 1])
        result = tf.where(tf.tile(is_code, [1, shape_utils.shape_list(code_embedding)[1]]),
                          code_embedding, string_embedding)
        # Each row normalised (T2T normalised the whole batch as one vector).
        return tf.nn.l2_normalize(result, axis=1)

    def encode(self, features, input_key):
        """Mean over positions of a Transformer encoder on features[input_key] -> [B, d]."""
        hparams = self._hparams
        inputs = shape_utils.flatten4d3d(features[input_key])
        encoder_input, encoder_self_attention_bias, _ = transformer.transformer_prepare_encoder(
            inputs, spaces.SpaceID.EN_TOK, hparams)
        encoder_input = dropout_lib.dropout(encoder_input,
                                            rate=hparams.layer_prepostprocess_dropout)
        encoder_output = transformer.transformer_encoder(
            encoder_input, encoder_self_attention_bias, hparams,
            nonpadding=transformer.features_to_nonpadding(features, input_key))
        return tf.reduce_mean(encoder_output, axis=1)

    def infer(self, features=None, decode_length=50, beam_size=1, top_beams=1, alpha=0.0,
              use_tpu=False):
        """The embeddings [B, d] of features["inputs"] (see `body`); nothing is decoded."""
        del decode_length, beam_size, top_beams, alpha, use_tpu
        predictions, _ = self(features)
        return predictions
