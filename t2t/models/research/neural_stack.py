"""Neural stacks, queues and deques as encoder-decoder models, as T2T 1.15.7's
`tensor2tensor.models.research.neural_stack` (Grefenstette et al. 2015, "Learning to
Transduce with Unbounded Memory", https://arxiv.org/abs/1506.02516).

    hp = registry.hparams("neural_stack")          # controllers of 256 and 512 units
    model = NeuralStackModel(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model({"inputs": ids_in, "targets": ids_out})

    cell = NeuralStackCell(num_units=8, memory_size=6, embedding_size=3)
    outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)  # x [B, T, 3]
    state.read_values                               # [B, 1, 3]: the soft top of the stack

Each cell is a `tf.compat.v1.nn.rnn_cell.RNNCell` whose controller (a BasicRNNCell) reads
the input and the previous read values and emits push and pop strengths, a value to write
and an output. Every step writes the value at the write head (Eq. 1); the pop strength
removes read strength from the top down (Eq. 2), the push strength adds it at the written
slot, and the read value is the memory weighed by at most one unit of strength counted
from the top (Eq. 3). A queue reads from the bottom; a deque has two heads writing outwards
from the middle of the memory.

The model encodes the inputs reversed and decodes the shifted targets from the encoder's
final state, with stacks of cells of `hparams.controller_layer_sizes` units, in T2T's
variable scopes: `<model>/body/{encoder,decoder}/rnn/multi_rnn_cell/cell_<i>/
neural_stack_cell/{input,push,pop,value,output}_projection_{weights,bias}` and
`.../neural_stack_cell/basic_rnn_cell/{kernel,bias}`.
"""
import collections
import warnings

import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers import masks
from t2t.layers import shape_utils
from t2t.model import t2t_model
from t2t.models import lstm

_rnn_cell = tf.compat.v1.nn.rnn_cell
_v1 = tf.compat.v1

# What the controller hands the memory at each step.
NeuralStackControllerInterface = collections.namedtuple(
    "NeuralStackControllerInterface",
    "push_strengths, pop_strengths, write_values, outputs, state")

# The recurrent state of a neural stack cell.
NeuralStackState = collections.namedtuple(
    "NeuralStackState",
    "controller_state, read_values, memory_values, read_strengths, write_strengths")


def _mask_above(memory_size):
    """[1, 1, M, M]: entry [i, j] is 1.0 where slot i lies above slot j (i > j).

    T2T's `common_layers.mask_pos_lt(M, M)`; t2t's masks have the [target, source] layout
    T2T documented, in which this is `mask_pos_gt`.
    """
    return tf.expand_dims(masks.mask_pos_gt(memory_size, memory_size), axis=0)


def _mask_below(memory_size):
    """[1, 1, M, M]: entry [i, j] is 1.0 where slot i lies below slot j (i < j)."""
    return tf.expand_dims(masks.mask_pos_lt(memory_size, memory_size), axis=0)


def _basic_rnn_cell(num_units):
    with warnings.catch_warnings():
        # The v1 cell creates its variables in the enclosing variable scope, as T2T's.
        warnings.filterwarnings("ignore", message=".*is deprecated", category=UserWarning)
        return _rnn_cell.BasicRNNCell(num_units)


def _linear(x, weights, bias, activation):
    return activation(tf.nn.bias_add(tf.matmul(x, weights), bias))


class NeuralStackCell(_rnn_cell.RNNCell):
    """An RNN cell with a differentiable stack; the base of the queue and the deque.

        cell = NeuralStackCell(8, memory_size=6, embedding_size=3)
        state = cell.zero_state(2, tf.float32)   # write head at slot 0
        output, state = cell(tf.zeros([2, 3]), state)   # output [2, 1, 3]
    """

    def __init__(self, num_units, memory_size, embedding_size, num_read_heads=1,
                 num_write_heads=1, reuse=None):
        """num_units: the controller's size; memory_size: the slots of the memory;
        embedding_size: the width of a value; one read and one write head for a stack."""
        for name, value in (("num_units", num_units), ("memory_size", memory_size),
                            ("embedding_size", embedding_size)):
            if not isinstance(value, int) or value < 1:
                raise ValueError("%s: %s must be a positive int, got %r"
                                 % (type(self).__name__, name, value))
        super().__init__(dtype=tf.float32, _reuse=reuse)
        self._num_units = num_units
        self._embedding_size = embedding_size
        self._memory_size = memory_size
        self._num_read_heads = num_read_heads
        self._num_write_heads = num_write_heads

    @property
    def state_size(self):
        """NeuralStackState of [num_units], [read heads, E], [M, E], [1, M, 1] and
        [write heads, M, 1]."""
        return NeuralStackState(
            controller_state=tf.TensorShape([self._num_units]),
            read_values=tf.TensorShape([self._num_read_heads, self._embedding_size]),
            memory_values=tf.TensorShape([self._memory_size, self._embedding_size]),
            read_strengths=tf.TensorShape([1, self._memory_size, 1]),
            write_strengths=tf.TensorShape([self._num_write_heads, self._memory_size, 1]))

    @property
    def output_size(self):
        return tf.TensorShape([1, self._embedding_size])

    def initial_write_positions(self):
        """The slot each write head starts at: the first slot for a stack or queue."""
        return [0] * self._num_write_heads

    def initialize_write_strengths(self, batch_size):
        """[batch_size, write heads, M, 1]: one-hot at each head's first slot."""
        positions = tf.constant([self.initial_write_positions()], dtype=tf.int32)
        positions = tf.tile(positions, [batch_size, 1])
        return tf.expand_dims(tf.one_hot(positions, depth=self._memory_size,
                                         dtype=tf.float32), axis=3)

    def zero_state(self, batch_size, dtype):
        """Zeros, except the write strengths (initialize_write_strengths); batch_size may
        be a tensor."""
        state = NeuralStackState(*super().zero_state(batch_size, dtype))
        return state._replace(write_strengths=self.initialize_write_strengths(batch_size))

    def get_read_mask(self, read_head_index):
        """[1, 1, M, M]: the slots above each slot (a stack reads from the top)."""
        if read_head_index == 0:
            return _mask_above(self._memory_size)
        raise ValueError("Read head index must be 0 for stack.")

    def get_write_head_offset(self, write_head_index):
        """How far a write head moves each step: 1 for a stack."""
        if write_head_index == 0:
            return 1
        raise ValueError("Write head index must be 0 for stack.")

    def add_scalar_projection(self, name, size):
        """(weights [num_units, size], bias [size]) named <name>_projection_*."""
        weights = self.add_weight(name + "_projection_weights",
                                  shape=[self._num_units, size], dtype=self.dtype)
        bias = self.add_weight(name + "_projection_bias", shape=[size],
                               initializer=_v1.zeros_initializer())
        return weights, bias

    def add_vector_projection(self, name, size):
        """(weights [num_units, size * E], bias [size * E]) named <name>_projection_*."""
        return self.add_scalar_projection(name, size * self._embedding_size)

    def build_controller(self):
        """The controller RNN and its input and output projections."""
        with tf.name_scope("controller"):
            self.rnn = _basic_rnn_cell(self._num_units)
            self._input_proj = self.add_weight(
                "input_projection_weights",
                shape=[self._embedding_size * (self._num_read_heads + 1), self._num_units],
                dtype=self.dtype)
            self._input_bias = self.add_weight(
                "input_projection_bias", shape=[self._num_units],
                initializer=_v1.zeros_initializer())
            self._push_proj, self._push_bias = self.add_scalar_projection(
                "push", self._num_write_heads)
            self._pop_proj, self._pop_bias = self.add_scalar_projection(
                "pop", self._num_write_heads)
            self._value_proj, self._value_bias = self.add_vector_projection(
                "value", self._num_write_heads)
            self._output_proj, self._output_bias = self.add_vector_projection("output", 1)

    def build(self, _):
        self.build_controller()
        self.built = True

    def get_controller_shape(self, batch_size):
        """The shapes of the NeuralStackControllerInterface fields, in order."""
        return ([batch_size, self._num_write_heads, 1, 1],
                [batch_size, self._num_write_heads, 1, 1],
                [batch_size, self._num_write_heads, self._embedding_size],
                [batch_size, 1, self._embedding_size],
                [batch_size, self._num_units])

    def call_controller(self, input_value, read_values, prev_state, batch_size):
        """One controller step (Section 3.1): [input, previous read values] -> tanh
        projection -> BasicRNNCell -> sigmoid push/pop strengths, tanh values and outputs.

        Returns a NeuralStackControllerInterface shaped as get_controller_shape().
        """
        with tf.name_scope("controller"):
            controller_inputs = tf.concat([tf.reshape(input_value, [batch_size, -1]),
                                           tf.reshape(read_values, [batch_size, -1])], axis=1)
            rnn_input = _linear(controller_inputs, self._input_proj, self._input_bias,
                                tf.tanh)
            rnn_output, state = self.rnn(rnn_input, prev_state)
            fields = [_linear(rnn_output, self._push_proj, self._push_bias, tf.sigmoid),
                      _linear(rnn_output, self._pop_proj, self._pop_bias, tf.sigmoid),
                      _linear(rnn_output, self._value_proj, self._value_bias, tf.tanh),
                      _linear(rnn_output, self._output_proj, self._output_bias, tf.tanh),
                      state]
            return NeuralStackControllerInterface(*[
                tf.reshape(field, shape) for field, shape
                in zip(fields, self.get_controller_shape(batch_size))])

    def call(self, inputs, prev_state):
        """One step (Section 3.4): inputs [B, E] (or [B, 1, E]) and a NeuralStackState ->
        (outputs [B, 1, E], the next NeuralStackState)."""
        batch_size = tf.shape(inputs)[0]
        # The controller runs after the previous step is done, so a stateful controller
        # (e.g. one counting steps in a variable) sees the steps of a while loop in order.
        with tf.control_dependencies([prev_state.read_strengths]):
            control = self.call_controller(inputs, prev_state.read_values,
                                           prev_state.controller_state, batch_size)
        # Eq. 1: every step writes its value at the write heads, whatever it pushes.
        memory_values = prev_state.memory_values + tf.reduce_sum(
            tf.expand_dims(control.write_values, axis=2) * prev_state.write_strengths,
            axis=1)
        # Eq. 2: popping takes strength away from the top down (last read head first).
        read_strengths = prev_state.read_strengths
        for head in reversed(range(self._num_read_heads)):
            strength_above = tf.expand_dims(tf.reduce_sum(
                read_strengths * self.get_read_mask(head), axis=2), axis=3)
            pop = control.pop_strengths[:, head:head + 1]
            read_strengths = tf.nn.relu(read_strengths - tf.nn.relu(pop - strength_above))
        # Pushing gives the written slots strength.
        read_strengths += tf.reduce_sum(control.push_strengths * prev_state.write_strengths,
                                        axis=1, keepdims=True)
        # Eq. 3: each head reads at most one unit of strength, from its end of the memory.
        all_masks = tf.concat([self.get_read_mask(head)
                               for head in range(self._num_read_heads)], axis=1)
        strength_above = tf.expand_dims(tf.reduce_sum(read_strengths * all_masks, axis=2),
                                        axis=3)
        weights = tf.minimum(read_strengths, tf.nn.relu(1.0 - strength_above))
        read_values = tf.reduce_sum(weights * tf.expand_dims(memory_values, axis=1), axis=2)
        # Each write head moves on by its offset.
        heads = tf.split(prev_state.write_strengths, self._num_write_heads, axis=1)
        write_strengths = tf.concat([
            tf.roll(head, shift=self.get_write_head_offset(index), axis=2)
            for index, head in enumerate(heads)], axis=1)
        return control.outputs, NeuralStackState(
            controller_state=control.state, read_values=read_values,
            memory_values=memory_values, read_strengths=read_strengths,
            write_strengths=write_strengths)


class NeuralQueueCell(NeuralStackCell):
    """A NeuralStackCell that reads from the bottom: a queue (Section 3.2)."""

    def get_read_mask(self, read_head_index):
        """[1, 1, M, M]: the slots below each slot."""
        if read_head_index == 0:
            return _mask_below(self._memory_size)
        raise ValueError("Read head index must be 0 for queue.")


class NeuralDequeCell(NeuralStackCell):
    """A double-ended queue (Section 3.3): head 0 reads and writes the bottom, head 1 the
    top; unlike the paper they write outwards from the middle of the memory (slots
    M // 2 - 1 and M // 2), so nothing has to be shifted."""

    def __init__(self, num_units, memory_size, embedding_size, reuse=None):
        super().__init__(num_units, memory_size, embedding_size, num_read_heads=2,
                         num_write_heads=2, reuse=reuse)

    def get_read_mask(self, read_head_index):
        if read_head_index == 0:
            return _mask_below(self._memory_size)
        if read_head_index == 1:
            return _mask_above(self._memory_size)
        raise ValueError("Read head index must be either 0 or 1 for deque.")

    def get_write_head_offset(self, write_head_index):
        if write_head_index == 0:
            return -1
        if write_head_index == 1:
            return 1
        raise ValueError("Write head index must be 0 or 1 for deque.")

    def initial_write_positions(self):
        center = self._memory_size // 2
        return [center - 1, center]


@registry.register_model
class NeuralStackModel(t2t_model.T2TModel):
    """Encoder-decoder of NeuralStackCells: inputs read reversed, the decoder starts from
    the encoder's final state. Body output [B, Lt, 1, embedding_size]."""

    def cell(self, hidden_size):
        """The cell of one layer of hidden_size controller units."""
        return NeuralStackCell(hidden_size, self._hparams.memory_size,
                               self._hparams.embedding_size)

    def _rnn(self, inputs, name, initial_state=None, sequence_length=None):
        """dynamic_rnn of a MultiRNNCell of cells over inputs [B, L, E] under `name`."""
        sizes = self._hparams.get("controller_layer_sizes")
        if not sizes:
            raise ValueError("%s needs hparams.controller_layer_sizes; use the neural_stack "
                             "or neural_deque hparams set" % self.name)
        with _v1.variable_scope(name):
            return _v1.nn.dynamic_rnn(
                _rnn_cell.MultiRNNCell([self.cell(size) for size in sizes]), inputs,
                initial_state=initial_state, sequence_length=sequence_length,
                dtype=tf.float32, time_major=False)

    def _inputs_lengths(self, features):
        raw = features.get("inputs_raw")
        if raw is not None and raw.dtype.is_integer:
            return lstm.lengths_from_ids(raw)
        return lstm.length_from_embedding(features["inputs"])

    def body(self, features):
        """features["inputs"] [B, Li, 1, E] (optional), ["targets"] [B, Lt, 1, E]
        -> [B, Lt, 1, E]."""
        inputs = features.get("inputs")
        final_encoder_state = None
        if inputs is not None:
            # Each example reversed within its own length, padding left at the end, so a
            # row's encoding does not depend on the padding of the batch (T2T reversed
            # the padded rows, feeding the padding first).
            lengths = self._inputs_lengths(features)
            reversed_inputs = tf.reverse_sequence(shape_utils.flatten4d3d(inputs), lengths,
                                                  seq_axis=1, batch_axis=0)
            _, final_encoder_state = self._rnn(reversed_inputs, "encoder",
                                               sequence_length=lengths)
        shifted_targets = common_layers.shift_right(features["targets"])
        decoder_outputs, _ = self._rnn(shape_utils.flatten4d3d(shifted_targets), "decoder",
                                       initial_state=final_encoder_state)
        return decoder_outputs


@registry.register_model
class NeuralQueueModel(NeuralStackModel):
    """NeuralStackModel of NeuralQueueCells."""

    def cell(self, hidden_size):
        return NeuralQueueCell(hidden_size, self._hparams.memory_size,
                               self._hparams.embedding_size)


@registry.register_model
class NeuralDequeModel(NeuralStackModel):
    """NeuralStackModel of NeuralDequeCells."""

    def cell(self, hidden_size):
        return NeuralDequeCell(hidden_size, self._hparams.memory_size,
                               self._hparams.embedding_size)


# ---------------------------------------------------------------------------- hparams
def _transduction_base(learning_rate):
    hparams = common_hparams.basic_params1()
    hparams.daisy_chain_variables = False
    hparams.batch_size = 10
    hparams.clip_grad_norm = 1.0
    hparams.initializer = "uniform_unit_scaling"
    hparams.initializer_gain = 1.0
    hparams.optimizer = "RMSProp"
    hparams.learning_rate = learning_rate
    hparams.weight_decay = 0.0
    return hparams


@registry.register_hparams
def lstm_transduction():
    """An LSTM (e.g. lstm_seq2seq) for the transduction tasks: 4 layers of 128 units."""
    hparams = _transduction_base(0.01)
    hparams.hidden_size = 128
    hparams.num_hidden_layers = 4
    hparams.add_hparam("memory_size", 128)
    hparams.add_hparam("embedding_size", 32)
    return hparams


@registry.register_hparams
def neural_stack():
    """Neural stacks and queues: controllers of 256 and 512 units, 128 slots of 64."""
    hparams = _transduction_base(0.0001)
    hparams.add_hparam("controller_layer_sizes", [256, 512])
    hparams.add_hparam("memory_size", 128)
    hparams.add_hparam("embedding_size", 64)
    hparams.hidden_size = hparams.embedding_size
    return hparams


@registry.register_hparams
def neural_deque():
    """Neural deques: as neural_stack with 256 slots."""
    hparams = neural_stack()
    hparams.memory_size = 256
    return hparams
