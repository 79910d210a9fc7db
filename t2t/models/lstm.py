"""LSTM sequence-to-sequence models (with and without attention), as T2T 1.15.7's lstm.py.

    hp = registry.hparams("lstm_seq2seq")            # 2 layers of 128 units
    model = LSTMSeq2seq(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model({"inputs": ids_in, "targets": ids_out})   # [B, L, 1, 1, vocab]

The encoder reads the inputs reversed (Sutskever et al.); its final state starts the
decoder, which reads the shifted targets. `LSTMSeq2seqAttention` adds Luong or Bahdanau
attention over the encoder outputs (hparams.attention_mechanism), fed back into the
decoder input as TF's AttentionWrapper did. Every RNN gets per-example sequence lengths
from the non-padding ids, so padding changes no state and gets no attention.

Cells are `tf.compat.v1.nn.rnn_cell` cells run by `dynamic_rnn` in graph mode; variables
are created by `get_variable`, so every call of the model shares them.
"""
import warnings

import tensorflow as tf

from t2t.core.modes import ModeKeys
from t2t.core import registry
from t2t.layers import common_attention
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers import shape_utils
from t2t.model import model_hparams
from t2t.model import t2t_model

_rnn_cell = tf.compat.v1.nn.rnn_cell
_v1 = tf.compat.v1


def _dropout_lstm_cell(hparams, train):
    keep_prob = 1.0 - hparams.dropout if train else 1.0
    with warnings.catch_warnings():
        # The v1 cell is deprecated, but unlike Keras' it creates its variables in the
        # enclosing variable scope, which every graph of the model must share.
        warnings.filterwarnings("ignore", message=".*LSTMCell.* is deprecated",
                                category=UserWarning)
        cell = _rnn_cell.LSTMCell(hparams.hidden_size)
    return _rnn_cell.DropoutWrapper(cell, input_keep_prob=keep_prob)


def _stacked_cell(hparams, train):
    return _rnn_cell.MultiRNNCell([_dropout_lstm_cell(hparams, train)
                                   for _ in range(hparams.num_hidden_layers)])


def lengths_from_ids(ids):
    """Length of each row of right-padded ids [B, L(, 1, 1)]: last non-zero position + 1.

        lengths_from_ids(tf.constant([[4, 5, 1, 0], [3, 0, 0, 0]]))   # [3, 1]
    """
    shape = shape_utils.shape_list(ids)
    ids = tf.reshape(ids, shape[:2])
    positions = tf.range(1, shape[1] + 1)
    nonzero = tf.cast(tf.not_equal(ids, 0), tf.int32)
    return tf.reduce_max(nonzero * positions[tf.newaxis, :], axis=1)


def length_from_embedding(emb):
    """Length of each row of embeddings [B, L, 1, d] whose padding positions are zeros."""
    nonpadding = 1.0 - common_attention.embedding_to_padding(shape_utils.flatten4d3d(emb))
    return lengths_from_ids(nonpadding)


def _decoder_lengths(targets_length, max_length):
    # One position past the targets: its output predicts the next id while decoding.
    return tf.minimum(targets_length + 1, max_length)


def lstm(inputs, sequence_length, hparams, train, name, initial_state=None):
    """A stack of hparams.num_hidden_layers LSTMs over inputs [B, L, d].

    Returns (outputs [B, L, hidden_size], zero past each length; final state per layer).
    """
    with _v1.variable_scope(name):
        return _v1.nn.dynamic_rnn(_stacked_cell(hparams, train), inputs, sequence_length,
                                  initial_state=initial_state, dtype=tf.float32,
                                  time_major=False)


class _AttentionMechanism:
    """Luong (multiplicative) or Bahdanau (additive) attention over a padded memory.

    keys = memory x W_memory (no bias), computed once; per query:
    luong score = query . keys, bahdanau score = v . tanh(keys + query x W_query);
    scores at padding positions are masked, alignments = softmax(scores),
    context = alignments . memory.
    """

    def __init__(self, kind, num_units, memory, memory_length):
        if kind not in ("luong", "bahdanau"):
            raise ValueError("unknown hparams.attention_mechanism %r; use luong or bahdanau"
                             % kind)
        self.kind = kind
        self.num_units = num_units
        self.mask = tf.sequence_mask(memory_length, shape_utils.shape_list(memory)[1])
        self.values = memory * tf.cast(self.mask, memory.dtype)[:, :, tf.newaxis]
        self.keys = common_layers.dense(self.values, num_units, use_bias=False,
                                        name="memory_layer")

    def context(self, query):
        """query [B, d] -> (context [B, memory depth], alignments [B, memory length])."""
        if self.kind == "luong":
            if query.shape[-1] != self.num_units:
                raise ValueError("luong attention needs the decoder size (%s) to equal the "
                                 "attention units (%d)" % (query.shape[-1], self.num_units))
            scores = tf.einsum("bd,bld->bl", query, self.keys)
        else:
            with _v1.variable_scope("bahdanau_attention"):
                processed = common_layers.dense(query, self.num_units, use_bias=False,
                                                name="query_layer")
                v = _v1.get_variable("attention_v", [self.num_units])
                scores = tf.reduce_sum(v * tf.tanh(self.keys + processed[:, tf.newaxis, :]),
                                       axis=2)
        # A large finite negative keeps an all-padding memory from giving NaNs.
        scores = tf.where(self.mask, scores, tf.fill(tf.shape(scores), -1e9))
        alignments = tf.nn.softmax(scores)
        return tf.einsum("bl,bld->bd", alignments, self.values), alignments


class LSTMAttentionCell(_rnn_cell.RNNCell):
    """An RNN cell with attention, as TF's AttentionWrapper (input feeding).

    Each step: cell input = [input, previous attention]; cell output queries the
    memory; attention_h = W_h [cell output, context] (no bias) for each of num_heads
    heads; the cell emits the concatenated attention (output_attention) or the raw
    cell output, and feeds the attention to the next step.
    """

    def __init__(self, cell, mechanism, attention_layer_size, num_heads, output_attention):
        super().__init__()
        self._cell = cell
        self._mechanism = mechanism
        self._attention_layer_size = attention_layer_size
        self._num_heads = num_heads
        self._output_attention = bool(output_attention)

    @property
    def state_size(self):
        return (self._cell.state_size, self._attention_layer_size * self._num_heads)

    @property
    def output_size(self):
        if self._output_attention:
            return self._attention_layer_size * self._num_heads
        return self._cell.output_size

    def call(self, inputs, state):
        cell_state, previous_attention = state
        cell_output, next_cell_state = self._cell(
            tf.concat([inputs, previous_attention], axis=-1), cell_state)
        context, _ = self._mechanism.context(cell_output)
        heads = []
        for head in range(self._num_heads):
            name = "attention_layer" if self._num_heads == 1 else "attention_layer_%d" % head
            heads.append(common_layers.dense(tf.concat([cell_output, context], axis=-1),
                                             self._attention_layer_size, use_bias=False,
                                             name=name))
        attention = tf.concat(heads, axis=-1)
        output = attention if self._output_attention else cell_output
        return output, (next_cell_state, attention)


def lstm_attention_decoder(inputs, hparams, train, name, initial_state, encoder_outputs,
                           encoder_output_length, decoder_input_length):
    """LSTM decoder over inputs [B, L, d] attending to encoder_outputs [B, Le, de].

    Returns [B, L, attention_layer_size * num_heads] (output_attention) or
    [B, L, hidden_size]; multi-head attention outputs are projected to hidden_size.
    """
    if hparams.get("max_area_width", 1) > 1:
        raise ValueError("area attention is not supported by t2t's LSTM; set "
                         "max_area_width=1")
    with _v1.variable_scope(name):
        mechanism = _AttentionMechanism(hparams.attention_mechanism, hparams.hidden_size,
                                        encoder_outputs, encoder_output_length)
        cell = LSTMAttentionCell(_stacked_cell(hparams, train), mechanism,
                                 hparams.attention_layer_size, hparams.num_heads,
                                 hparams.output_attention)
        batch_size = shape_utils.shape_list(inputs)[0]
        zero_state = cell.zero_state(batch_size, tf.float32)
        if initial_state is not None:
            zero_state = (initial_state, zero_state[1])
        output, _ = _v1.nn.dynamic_rnn(cell, inputs, decoder_input_length,
                                       initial_state=zero_state, dtype=tf.float32,
                                       time_major=False)
        if hparams.output_attention and hparams.num_heads > 1:
            output = common_layers.dense(output, hparams.hidden_size, name="output_projection")
        return output


def lstm_seq2seq_internal(inputs, targets, hparams, train, inputs_length=None,
                          targets_length=None):
    """Encoder-decoder LSTM: embedded inputs [B, Li, 1, d] (or None), targets [B, Lt, 1, d]
    -> decoder outputs [B, Lt, 1, hidden_size]. Lengths default to the non-zero embeddings.
    """
    with _v1.variable_scope("lstm_seq2seq"):
        if inputs is not None:
            if inputs_length is None:
                inputs_length = length_from_embedding(inputs)
            inputs = shape_utils.flatten4d3d(inputs)
            inputs = tf.reverse_sequence(inputs, inputs_length, seq_axis=1)
            _, final_encoder_state = lstm(inputs, inputs_length, hparams, train, "encoder")
        else:
            final_encoder_state = None
        if targets_length is None:
            targets_length = length_from_embedding(targets)
        shifted_targets = shape_utils.flatten4d3d(common_layers.shift_right(targets))
        decoder_outputs, _ = lstm(
            shifted_targets,
            _decoder_lengths(targets_length, shape_utils.shape_list(targets)[1]),
            hparams, train, "decoder", initial_state=final_encoder_state)
        return tf.expand_dims(decoder_outputs, axis=2)


def lstm_seq2seq_internal_attention(inputs, targets, hparams, train, inputs_length=None,
                                   targets_length=None):
    """Encoder-decoder LSTM with attention over the (reversed) encoder outputs."""
    inputs_length, targets_length = _default_lengths(inputs, targets, inputs_length,
                                                     targets_length)
    with _v1.variable_scope("lstm_seq2seq_attention"):
        inputs = shape_utils.flatten4d3d(inputs)
        inputs = tf.reverse_sequence(inputs, inputs_length, seq_axis=1)
        encoder_outputs, final_encoder_state = lstm(inputs, inputs_length, hparams, train,
                                                    "encoder")
        shifted_targets = shape_utils.flatten4d3d(common_layers.shift_right(targets))
        decoder_outputs = lstm_attention_decoder(
            shifted_targets, hparams, train, "decoder", final_encoder_state, encoder_outputs,
            inputs_length,
            _decoder_lengths(targets_length, shape_utils.shape_list(targets)[1]))
        return tf.expand_dims(decoder_outputs, axis=2)


def lstm_bid_encoder(inputs, sequence_length, hparams, train, name):
    """Bidirectional LSTM stack: outputs [B, L, 2 * hidden]; per-layer states concatenated
    (fw, bw) so they can start a decoder of size 2 * hidden."""
    with _v1.variable_scope(name):
        (fw_outputs, bw_outputs), (fw_state, bw_state) = _v1.nn.bidirectional_dynamic_rnn(
            _stacked_cell(hparams, train), _stacked_cell(hparams, train), inputs,
            sequence_length, dtype=tf.float32, time_major=False)
        encoder_outputs = tf.concat([fw_outputs, bw_outputs], axis=2)
        states = []
        for fw, bw in zip(fw_state, bw_state):
            states.append(_rnn_cell.LSTMStateTuple(c=tf.concat([fw.c, bw.c], axis=1),
                                                   h=tf.concat([fw.h, bw.h], axis=1)))
        return encoder_outputs, tuple(states)


def _double_hidden(hparams):
    decoder_hparams = model_hparams.copy_hparams(hparams)
    decoder_hparams.hidden_size = 2 * hparams.hidden_size
    return decoder_hparams


def _default_lengths(inputs, targets, inputs_length, targets_length):
    if inputs_length is None:
        inputs_length = length_from_embedding(inputs)
    if targets_length is None:
        targets_length = length_from_embedding(targets)
    return inputs_length, targets_length


def lstm_seq2seq_internal_bid_encoder(inputs, targets, hparams, train, inputs_length=None,
                                      targets_length=None):
    """Bidirectional encoder, decoder of 2 * hidden_size units projected to hidden_size."""
    inputs_length, targets_length = _default_lengths(inputs, targets, inputs_length,
                                                     targets_length)
    with _v1.variable_scope("lstm_seq2seq_bid_encoder"):
        inputs = shape_utils.flatten4d3d(inputs)
        _, final_encoder_state = lstm_bid_encoder(inputs, inputs_length, hparams, train,
                                                  "encoder")
        shifted_targets = shape_utils.flatten4d3d(common_layers.shift_right(targets))
        decoder_outputs, _ = lstm(
            shifted_targets,
            _decoder_lengths(targets_length, shape_utils.shape_list(targets)[1]),
            _double_hidden(hparams), train, "decoder", initial_state=final_encoder_state)
        with _v1.variable_scope("projection"):
            projected = common_layers.dense(decoder_outputs, hparams.hidden_size)
        return tf.expand_dims(projected, axis=2)


def lstm_seq2seq_internal_attention_bid_encoder(inputs, targets, hparams, train,
                                                inputs_length=None, targets_length=None):
    """Bidirectional encoder and an attention decoder of 2 * hidden_size units."""
    inputs_length, targets_length = _default_lengths(inputs, targets, inputs_length,
                                                     targets_length)
    with _v1.variable_scope("lstm_seq2seq_attention_bid_encoder"):
        inputs = shape_utils.flatten4d3d(inputs)
        encoder_outputs, final_encoder_state = lstm_bid_encoder(inputs, inputs_length,
                                                                hparams, train, "encoder")
        shifted_targets = shape_utils.flatten4d3d(common_layers.shift_right(targets))
        decoder_outputs = lstm_attention_decoder(
            shifted_targets, _double_hidden(hparams), train, "decoder", final_encoder_state,
            encoder_outputs, inputs_length,
            _decoder_lengths(targets_length, shape_utils.shape_list(targets)[1]))
        return tf.expand_dims(decoder_outputs, axis=2)


class _LSTMModel(t2t_model.T2TModel):
    """Shared checks and per-example lengths of the LSTM models."""

    def _check_features(self, features, needs_inputs):
        if self._hparams.initializer == "orthogonal":
            # As T2T: these LSTMs do not train with the orthogonal initializer.
            raise ValueError("%s does not train with initializer=orthogonal; use the "
                             "lstm_seq2seq hparams set or initializer=uniform_unit_scaling"
                             % self.name)
        if "inputs_segmentation" in features or "targets_segmentation" in features:
            raise ValueError("%s cannot read packed rows; use a problem without packing "
                             "(pack_dataset=False)" % self.name)
        if needs_inputs and "inputs" not in features:
            raise ValueError("%s needs inputs; use lstm_seq2seq for problems without "
                             "inputs" % self.name)

    @staticmethod
    def _lengths(features, name):
        """Per-example lengths from the raw ids when present, else from the embeddings."""
        raw = features.get(name + "_raw")
        if raw is not None and raw.dtype.is_integer:
            return lengths_from_ids(raw)
        return length_from_embedding(features[name])

    def _targets_lengths(self, features):
        """Per-example target lengths; in PREDICT every position of the decoded prefix
        counts, even a generated 0 (PAD) id, so decoding never stalls on one."""
        if self.is_predicting:
            shape = shape_utils.shape_list(features["targets"])
            return tf.fill([shape[0]], shape[1])
        return self._lengths(features, "targets")

    @property
    def _train(self):
        return self._hparams.mode == ModeKeys.TRAIN


@registry.register_model
class LSTMEncoder(_LSTMModel):
    """LSTM encoder only (e.g. for classification): inputs -> [B, L, 1, hidden_size]."""

    def body(self, features):
        self._check_features(features, needs_inputs=True)
        inputs_length = self._lengths(features, "inputs")
        inputs = shape_utils.flatten4d3d(features["inputs"])
        inputs = tf.reverse_sequence(inputs, inputs_length, seq_axis=1)
        encoder_output, _ = lstm(inputs, inputs_length, self._hparams, self._train, "encoder")
        return tf.expand_dims(encoder_output, axis=2)


@registry.register_model
class LSTMSeq2seq(_LSTMModel):
    """Encoder-decoder LSTM; a plain LSTM language model for problems without inputs."""

    def body(self, features):
        self._check_features(features, needs_inputs=False)
        inputs = features.get("inputs") if self.has_input else None
        inputs_length = self._lengths(features, "inputs") if inputs is not None else None
        return lstm_seq2seq_internal(inputs, features["targets"], self._hparams, self._train,
                                     inputs_length, self._targets_lengths(features))


@registry.register_model
class LSTMSeq2seqAttention(_LSTMModel):
    """Encoder-decoder LSTM with Luong or Bahdanau attention."""

    def body(self, features):
        self._check_features(features, needs_inputs=True)
        return lstm_seq2seq_internal_attention(
            features["inputs"], features["targets"], self._hparams, self._train,
            self._lengths(features, "inputs"), self._targets_lengths(features))


@registry.register_model
class LSTMSeq2seqBidirectionalEncoder(_LSTMModel):
    """Bidirectional LSTM encoder, LSTM decoder."""

    def body(self, features):
        self._check_features(features, needs_inputs=True)
        return lstm_seq2seq_internal_bid_encoder(
            features["inputs"], features["targets"], self._hparams, self._train,
            self._lengths(features, "inputs"), self._targets_lengths(features))


@registry.register_model
class LSTMSeq2seqAttentionBidirectionalEncoder(_LSTMModel):
    """Bidirectional LSTM encoder, LSTM decoder with attention."""

    def body(self, features):
        self._check_features(features, needs_inputs=True)
        return lstm_seq2seq_internal_attention_bid_encoder(
            features["inputs"], features["targets"], self._hparams, self._train,
            self._lengths(features, "inputs"), self._targets_lengths(features))


# ---------------------------------------------------------------------------- hparams
@registry.register_hparams
def lstm_seq2seq():
    """2 LSTM layers of 128 units, batches of 1024 tokens."""
    hparams = common_hparams.basic_params1()
    hparams.daisy_chain_variables = False
    hparams.batch_size = 1024
    hparams.hidden_size = 128
    hparams.num_hidden_layers = 2
    hparams.initializer = "uniform_unit_scaling"
    hparams.initializer_gain = 1.0
    hparams.weight_decay = 0.0
    return hparams


def lstm_attention_base():
    """lstm_seq2seq plus attention layer size, output_attention and num_heads."""
    hparams = lstm_seq2seq()
    hparams.add_hparam("attention_layer_size", hparams.hidden_size)
    hparams.add_hparam("output_attention", True)
    hparams.add_hparam("num_heads", 1)
    return hparams


@registry.register_hparams
def lstm_bahdanau_attention():
    """LSTM with Bahdanau (additive) attention."""
    hparams = lstm_attention_base()
    hparams.add_hparam("attention_mechanism", "bahdanau")
    return hparams


@registry.register_hparams
def lstm_luong_attention():
    """LSTM with Luong (multiplicative) attention."""
    hparams = lstm_attention_base()
    hparams.add_hparam("attention_mechanism", "luong")
    return hparams


@registry.register_hparams
def lstm_attention():
    """For backwards compatibility: Bahdanau attention."""
    return lstm_bahdanau_attention()


@registry.register_hparams
def lstm_seq2seq_attention():
    """The default set for the lstm_seq2seq_attention model (= lstm_attention)."""
    return lstm_attention()


@registry.register_hparams
def lstm_bahdanau_attention_multi():
    """Bahdanau attention with 4 heads."""
    hparams = lstm_bahdanau_attention()
    hparams.num_heads = 4
    return hparams


@registry.register_hparams
def lstm_luong_attention_multi():
    """Luong attention with 4 heads."""
    hparams = lstm_luong_attention()
    hparams.num_heads = 4
    return hparams
