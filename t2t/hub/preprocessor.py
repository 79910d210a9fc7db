"""The TF Hub text preprocessor: strings -> BERT encoder inputs, all in the graph.

A Reusable SavedModel for "Text embeddings with Transformer encoders" (TF Hub's common
SavedModel APIs for text): the problem's own SubwordTextEncoder runs as TensorFlow ops
(`t2t.encoders.graph_ops`), so loading needs TensorFlow only, not t2t nor Python code.

    pre = Preprocessor(vocab, default_seq_length=128)    # vocab: [CLS] [SEP] [MASK] at 2-4
    tf.saved_model.save(pre, "/export/hub/preprocessor")

    pre = hub.load("/export/hub/preprocessor")            # any process, TensorFlow only
    pre(tf.constant(["the cat sat"]))          # {"input_word_ids": [[2, 17, 9, 3, 0, ...]],
                                               #  "input_mask": [[1, 1, 1, 1, 0, ...]],
                                               #  "input_type_ids": [[0, 0, 0, 0, 0, ...]]}
    tokens = pre.tokenize(tf.constant(["the cat", "sat"]))   # int32 ragged [[17, 9], [12]]
    pre.tokenize.get_special_tokens_dict()     # {"vocab_size": 70, "start_of_sequence_id": 2,
                                               #  "end_of_segment_id": 3, "padding_id": 0,
                                               #  "mask_id": 4}
    pre.bert_pack_inputs([tokens, tokens], seq_length=16)   # [CLS] A [SEP] B [SEP], cut
                                                            # round-robin to 16
"""
import tensorflow as tf

from t2t.core import errors
from t2t.encoders import graph_ops
from t2t.encoders import text_encoder
from t2t.hub import bert_pack

SPECIAL_TOKENS = {"start_of_sequence_id": "[CLS]", "end_of_segment_id": "[SEP]",
                  "mask_id": "[MASK]"}
_STRINGS = tf.TensorSpec([None], tf.string)


def special_token_ids(vocabulary):
    """{"vocab_size", "start_of_sequence_id", "end_of_segment_id", "padding_id", "mask_id"}.

    Raises UserError when the vocabulary has no [CLS], [SEP] and [MASK] tokens (a
    masked-LM problem's vocabulary reserves them as ids 2, 3, 4).
    """
    if graph_ops.vocabulary_kind(vocabulary) != "subword":
        raise errors.UserError(
            "the TF Hub preprocessor tokenizes with a SubwordTextEncoder, but the problem's "
            "vocabulary is %s; pretrain on a masked-LM problem such as masked_lm_tmpdir"
            % type(vocabulary).__name__)
    strings = list(vocabulary.all_subtoken_strings)
    ids = {"vocab_size": vocabulary.vocab_size, "padding_id": text_encoder.PAD_ID}
    for key, token in SPECIAL_TOKENS.items():
        if token + "_" not in strings:
            raise errors.UserError(
                "the vocabulary has no %s token, which BERT inputs need; pretrain on a "
                "masked-LM problem (e.g. masked_lm_tmpdir) whose vocabulary reserves "
                "[CLS], [SEP] and [MASK]" % token)
        ids[key] = strings.index(token + "_")
    return ids


class Tokenize(tf.train.Checkpoint):
    """`preprocessor.tokenize`: strings [B] -> int32 RaggedTensor [B, (tokens)]."""

    def __init__(self, vocabulary):
        super().__init__()
        self._special = special_token_ids(vocabulary)
        self._vocabulary = vocabulary
        self._table = graph_ops.subword_table(vocabulary)

    @tf.function(input_signature=[_STRINGS], autograph=False)
    def __call__(self, strings):
        return graph_ops.encode_subwords_ragged(strings, self._vocabulary, self._table)

    @tf.function(input_signature=[], autograph=False)
    def get_special_tokens_dict(self):
        return {key: tf.constant(value, tf.int32) for key, value in self._special.items()}


class BertPackInputs(tf.train.Checkpoint):
    """`preprocessor.bert_pack_inputs(segments, seq_length=default)`: see `bert_pack`.

    Traced for 1 or 2 segments of ragged rank 1 or 2, with seq_length left out (the
    default) or given (an int32 scalar).
    """

    def __init__(self, special_ids, default_seq_length):
        super().__init__()
        self._special = dict(special_ids)
        self._default_seq_length = int(default_seq_length)
        for ragged_rank in (1, 2):
            for num_segments in (1, 2):
                specs = [tf.RaggedTensorSpec([None] * (ragged_rank + 1), tf.int32,
                                             ragged_rank=ragged_rank)] * num_segments
                self.__call__.get_concrete_function(specs)
                self.__call__.get_concrete_function(specs, tf.TensorSpec([], tf.int32))

    @tf.function(autograph=False)
    def __call__(self, inputs, seq_length=None):
        if seq_length is None:
            seq_length = self._default_seq_length
        return bert_pack.bert_pack_inputs(
            list(inputs), seq_length, start_id=self._special["start_of_sequence_id"],
            end_id=self._special["end_of_segment_id"], pad_id=self._special["padding_id"])


class Preprocessor(tf.train.Checkpoint):
    """The preprocessor SavedModel's root: strings [B] -> encoder inputs (default length).

    Attributes `tokenize` and `bert_pack_inputs` (Reusable SavedModels themselves) and
    `vocab_file` (the vocabulary, as an asset, when it has a file).
    """

    def __init__(self, vocabulary, default_seq_length=128):
        super().__init__()
        if default_seq_length < 3:
            raise errors.UserError("--default_seq_length must be at least 3 ([CLS] x [SEP]), "
                                   "got %d" % default_seq_length)
        self.tokenize = Tokenize(vocabulary)
        self.bert_pack_inputs = BertPackInputs(special_token_ids(vocabulary),
                                               default_seq_length)
        if getattr(vocabulary, "filename", None):
            self.vocab_file = tf.saved_model.Asset(vocabulary.filename)

    @tf.function(input_signature=[_STRINGS], autograph=False)
    def __call__(self, strings):
        return self.bert_pack_inputs([self.tokenize(strings)])
