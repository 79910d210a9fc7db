"""Neural stack, queue and deque: the cells' push/pop/read arithmetic on hand-computed
examples, T2T's hparams sets and variable names, padding independence, and a tiny stack
model learning to reverse sequences."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.model import model_hparams
from t2t.models.research import neural_stack

from t2t_model_testing import (PREDICT, TRAIN, batch_features, copy_examples, mean_first, mean_last,
                               session, train_losses)

_v1 = tf.compat.v1


# ------------------------------------------------------------------ cells
class _Scripted:
    """A cell whose controller reads its commands from the input of each step:
    [push strengths (W), pop strengths (W), values to write (W * E)]."""

    def build_controller(self):
        pass

    def call_controller(self, input_value, read_values, prev_state, batch_size):
        del read_values
        heads, width = self._num_write_heads, self._embedding_size
        x = tf.reshape(input_value, [batch_size, -1])
        return neural_stack.NeuralStackControllerInterface(
            push_strengths=tf.reshape(x[:, :heads], [batch_size, heads, 1, 1]),
            pop_strengths=tf.reshape(x[:, heads:2 * heads], [batch_size, heads, 1, 1]),
            write_values=tf.reshape(x[:, 2 * heads:], [batch_size, heads, width]),
            outputs=tf.zeros([batch_size, 1, width]), state=prev_state)


class ScriptedStack(_Scripted, neural_stack.NeuralStackCell):
    pass


class ScriptedQueue(_Scripted, neural_stack.NeuralQueueCell):
    pass


class ScriptedDeque(_Scripted, neural_stack.NeuralDequeCell):
    pass


def _final_state(cell, steps):
    """Run `cell` by dynamic_rnn over one example of scripted steps; the final state."""
    with tf.Graph().as_default():
        inputs = tf.constant([steps], dtype=tf.float32)
        _, state = _v1.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            return sess.run(state)


def _step(push, pop, *values):
    return list(push) + list(pop) + [x for value in values for x in value]


V1, V2, V3 = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]
# Grefenstette et al.'s Fig. 2: push v1 (0.8); pop 0.1, push v2 (0.5); pop 0.9, push v3 (0.9).
PAPER = [_step([0.8], [0.0], V1), _step([0.5], [0.1], V2), _step([0.9], [0.9], V3)]


def test_stack_reads_the_top_of_the_papers_example():
    for steps, strengths, top in [
            (1, [0.8], [0.8, 0.0, 0.0]),
            (2, [0.7, 0.5], [0.5, 0.5, 0.0]),             # 0.5 v2 + min(0.7, 0.5) v1
            (3, [0.3, 0.0, 0.9], [0.1, 0.0, 0.9])]:       # v2 popped, 0.4 of v1 too
        state = _final_state(ScriptedStack(4, 6, 3), PAPER[:steps])
        np.testing.assert_allclose(state.read_values, [[top]], atol=1e-6)
        np.testing.assert_allclose(state.read_strengths[0, 0, :, 0],
                                   strengths + [0.0] * (6 - steps), atol=1e-6)
    # Every step wrote its value, whatever it pushed; the head moved on 3 slots.
    np.testing.assert_allclose(state.memory_values[0], [V1, V2, V3] + [[0.0] * 3] * 3)
    np.testing.assert_allclose(state.write_strengths[0, 0, :, 0], [0, 0, 0, 1, 0, 0])
    assert state.controller_state.shape == (1, 4)


def test_stack_push_push_pop_leaves_the_first_value_on_top():
    # T2T's example: push v1, push v2, pop (v3 is written, not pushed).
    steps = [_step([1.0], [0.0], V1), _step([1.0], [0.0], V2), _step([0.0], [1.0], V3)]
    state = _final_state(ScriptedStack(4, 6, 3), steps)
    np.testing.assert_allclose(state.read_values, [[V1]])
    np.testing.assert_allclose(state.read_strengths[0, 0, :, 0], [1, 0, 0, 0, 0, 0])


def test_queue_reads_the_bottom():
    for steps, strengths, front in [
            (2, [0.7, 0.5], [0.7, 0.3, 0.0]),             # 0.7 v1 + min(0.5, 1 - 0.7) v2
            (3, [0.0, 0.3, 0.9], [0.0, 0.3, 0.7])]:       # v1 gone, 0.2 of v2
        state = _final_state(ScriptedQueue(4, 6, 3), PAPER[:steps])
        np.testing.assert_allclose(state.read_values, [[front]], atol=1e-6)
        np.testing.assert_allclose(state.read_strengths[0, 0, :, 0],
                                   strengths + [0.0] * (6 - steps), atol=1e-6)
    steps = [_step([1.0], [0.0], V1), _step([1.0], [0.0], V2), _step([0.0], [1.0], V3)]
    state = _final_state(ScriptedQueue(4, 6, 3), steps)  # T2T's enqueue, enqueue, dequeue
    np.testing.assert_allclose(state.read_values, [[V2]])


def test_deque_writes_outwards_from_the_middle_and_pops_either_end():
    a, b, zero = [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]
    steps = [_step([1.0, 0.0], [0.0, 0.0], a, zero),     # push a at the bottom (slot 3)
             _step([0.0, 1.0], [0.0, 0.0], zero, b),     # push b at the top (slot 5)
             _step([0.0, 0.0], [1.0, 0.0], zero, zero)]  # pop the bottom
    state = _final_state(ScriptedDeque(4, 8, 2), steps[:2])
    np.testing.assert_allclose(state.read_values, [[a, b]])  # [bottom, top]
    np.testing.assert_allclose(state.read_strengths[0, 0, :, 0], [0, 0, 0, 1, 0, 1, 0, 0])
    state = _final_state(ScriptedDeque(4, 8, 2), steps)
    np.testing.assert_allclose(state.read_values, [[b, b]])
    np.testing.assert_allclose(state.read_strengths[0, 0, :, 0], [0, 0, 0, 0, 0, 1, 0, 0])
    np.testing.assert_allclose(state.memory_values[0, 3:6], [a, zero, b])
    # The bottom head moved down 3 slots from 3, the top head up 3 from 4.
    np.testing.assert_allclose(state.write_strengths[0, :, :, 0],
                               [[1, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 1]])


@pytest.mark.parametrize("cell_class", [neural_stack.NeuralStackCell,
                                        neural_stack.NeuralQueueCell,
                                        neural_stack.NeuralDequeCell])
def test_real_controller_keeps_the_state_shapes(cell_class):
    with tf.Graph().as_default():
        cell = cell_class(8, 6, 3)
        batch = _v1.placeholder_with_default(tf.zeros([5, 1, 3]), [None, 1, 3])
        zero = cell.zero_state(tf.shape(batch)[0], tf.float32)  # a tensor batch size
        outputs, state = cell(batch, zero)
        controller = cell.call_controller(batch, zero.read_values, zero.controller_state, 5)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            outputs, state, zero, controller = sess.run([outputs, state, zero, controller])
    assert outputs.shape == (5, 1, 3)
    for name in neural_stack.NeuralStackState._fields:
        assert getattr(state, name).shape == getattr(zero, name).shape, name
    for field, shape in zip(controller, cell.get_controller_shape(5)):
        assert list(field.shape) == shape
    assert np.all((controller.push_strengths > 0) & (controller.push_strengths < 1))
    with pytest.raises(ValueError, match="Read head index must be"):
        cell.get_read_mask(2)


def test_bad_cell_sizes_fail_naming_the_argument():
    with pytest.raises(ValueError, match="NeuralStackCell: memory_size must be a positive"):
        neural_stack.NeuralStackCell(8, 0, 3)


# ------------------------------------------------------------------ hparams and models
def tiny(name, **values):
    hp = registry.hparams(name)
    if name != "lstm_transduction":
        hp.controller_layer_sizes = [8, 6]
        hp.memory_size, hp.embedding_size, hp.hidden_size = 8, 4, 4
    else:
        hp.hidden_size, hp.num_hidden_layers = 8, 2
    for key, value in values.items():
        setattr(hp, key, value)
    return hp


def test_hparams_sets_have_t2t_values():
    stack, deque, lstm_set = (registry.hparams(n) for n in
                              ("neural_stack", "neural_deque", "lstm_transduction"))
    assert stack.controller_layer_sizes == [256, 512]
    assert (stack.memory_size, stack.embedding_size, stack.hidden_size) == (128, 64, 64)
    assert (deque.memory_size, deque.embedding_size) == (256, 64)
    for hp in (stack, deque, lstm_set):
        assert (hp.optimizer, hp.batch_size, hp.clip_grad_norm) == ("RMSProp", 10, 1.0)
        assert hp.initializer == "uniform_unit_scaling" and hp.daisy_chain_variables is False
    assert stack.learning_rate == deque.learning_rate == 0.0001
    assert (lstm_set.hidden_size, lstm_set.num_hidden_layers, lstm_set.learning_rate) == (
        128, 4, 0.01)
    assert (lstm_set.memory_size, lstm_set.embedding_size) == (128, 32)


@pytest.mark.parametrize("model_name,hparams_name", [
    ("neural_stack_model", "neural_stack"), ("neural_queue_model", "neural_stack"),
    ("neural_deque_model", "neural_deque"), ("lstm_seq2seq", "lstm_transduction")])
def test_every_set_builds_tiny_with_a_finite_loss(model_name, hparams_name):
    feats = batch_features(copy_examples(np.random.RandomState(0), 3, 4, reverse=True))
    with tf.Graph().as_default():
        model = registry.model(model_name)(tiny(hparams_name), TRAIN,
                                           model_hparams.test_problem_hparams(4, 4))
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        names = {v.op.name: v.shape.as_list() for v in _v1.global_variables()}
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            logits, loss = sess.run([logits, losses["training"]])
    assert logits.shape == feats["targets"].shape[:2] + (1, 1, 4)
    assert np.isfinite(loss) and loss > 0
    if model_name == "neural_deque_model":  # two read and two write heads
        scope = "neural_deque_model/body/decoder/rnn/multi_rnn_cell/cell_0/neural_deque_cell/"
        assert names[scope + "input_projection_weights"] == [3 * 4, 8]  # input + 2 reads
        assert names[scope + "push_projection_weights"] == [8, 2]
        assert names[scope + "value_projection_weights"] == [8, 2 * 4]


def test_tiny_model_has_t2t_variable_names():
    feats = batch_features(copy_examples(np.random.RandomState(1), 2, 3))
    with tf.Graph().as_default():
        model = neural_stack.NeuralStackModel(tiny("neural_stack"), TRAIN,
                                              model_hparams.test_problem_hparams(4, 4))
        model({k: tf.constant(v) for k, v in feats.items()})
        found = {v.op.name: v.shape.as_list() for v in _v1.global_variables()
                 if "/body/" in v.op.name}
    expected = {}
    for part in ("encoder", "decoder"):
        for layer, (units, inputs) in enumerate([(8, 4), (6, 4)]):
            scope = "neural_stack_model/body/%s/rnn/multi_rnn_cell/cell_%d/neural_stack_cell/" % (
                part, layer)
            sizes = {"input": (2 * inputs, units), "push": (units, 1), "pop": (units, 1),
                     "value": (units, 4), "output": (units, 4)}
            for name, (rows, cols) in sizes.items():
                expected[scope + name + "_projection_weights"] = [rows, cols]
                expected[scope + name + "_projection_bias"] = [cols]
            expected[scope + "basic_rnn_cell/kernel"] = [2 * units, units]
            expected[scope + "basic_rnn_cell/bias"] = [units]
    assert found == expected


def test_an_example_encodes_the_same_whatever_the_padding_of_its_batch():
    short = {"inputs": np.array([[2, 3, 1]]), "targets": np.array([[3, 2, 1]])}
    padded = {"inputs": np.array([[2, 3, 1, 0, 0], [3, 3, 2, 2, 1]]),
              "targets": np.array([[3, 2, 1], [2, 2, 3]])}
    with tf.Graph().as_default():
        _v1.set_random_seed(2)
        model = neural_stack.NeuralQueueModel(tiny("neural_stack"), TRAIN,
                                              model_hparams.test_problem_hparams(4, 4))
        ph = {k: _v1.placeholder(tf.int32, [None, None, 1, 1]) for k in short}
        logits, _ = model(ph)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            alone, batched = (sess.run(logits, {ph[k]: v[k][:, :, None, None] for k in v})
                              for v in (short, padded))
    np.testing.assert_allclose(alone[0], batched[0], rtol=1e-5, atol=1e-6)


def test_controller_layer_sizes_are_required():
    feats = batch_features(copy_examples(np.random.RandomState(3), 2, 3))
    with tf.Graph().as_default():
        model = neural_stack.NeuralStackModel(tiny("lstm_transduction"), TRAIN,
                                              model_hparams.test_problem_hparams(4, 4))
        with pytest.raises(ValueError, match="needs hparams.controller_layer_sizes; use"):
            model({k: tf.constant(v) for k, v in feats.items()})


def test_tiny_stack_model_learns_to_reverse():
    # A fresh batch each step: 1 to 4 of 4 symbols, so the loss falls by generalising.
    rng = np.random.RandomState(4)
    batches = [batch_features(copy_examples(rng, 32, 4, symbols=(2, 3, 4, 5), reverse=True),
                              inputs_length=5, targets_length=5) for _ in range(120)]
    hp = tiny("neural_stack", controller_layer_sizes=[32], memory_size=8,
              embedding_size=16, hidden_size=16)
    losses = train_losses("neural_stack_model", hp, model_hparams.test_problem_hparams(6, 6),
                          batches, steps=120, learning_rate=0.02)
    # Guessing the symbols costs ln 4 = 1.39 at each of them (EOS is easy to place).
    assert mean_first(losses) > 1.2, losses[:5]
    assert mean_last(losses, 10) < 0.45, losses[-10:]


def test_slow_greedy_and_beam_decoding():
    inputs = batch_features(copy_examples(np.random.RandomState(5), 3, 3))["inputs"]
    with tf.Graph().as_default():
        _v1.set_random_seed(1)
        model = neural_stack.NeuralDequeModel(tiny("neural_deque"), PREDICT,
                                              model_hparams.test_problem_hparams(4, 4))
        greedy = model.infer({"inputs": tf.constant(inputs)}, decode_length=2)
        beam = model.infer({"inputs": tf.constant(inputs)}, decode_length=2, beam_size=2,
                           top_beams=2)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            greedy, beam = sess.run([greedy, beam])
    assert greedy["outputs"].shape[0] == 3 and greedy["outputs"].shape[1] <= inputs.shape[1] + 2
    assert beam["outputs"].shape[:2] == (3, 2)
    assert np.all(beam["scores"][:, 0] >= beam["scores"][:, 1])
    for outputs in (greedy["outputs"], beam["outputs"]):
        assert outputs.min() >= 0 and outputs.max() <= 3


class CountingStack(neural_stack.NeuralStackCell):
    """A controller that looks its commands up by a step counter kept in a variable, as
    T2T's test did: right only if the steps of the while loop run in order."""

    script = np.array([_step([1.0], [0.0], V1), _step([1.0], [0.0], V2),
                       _step([0.0], [1.0], V3)], np.float32)

    def build_controller(self):
        self.current_step = self.add_weight("current_step", [], dtype=tf.int32,
                                            initializer=_v1.constant_initializer(-1),
                                            trainable=False)

    def call_controller(self, input_value, read_values, prev_state, batch_size):
        step = self.current_step.assign_add(1)
        commands = tf.gather(tf.constant(self.script), step)[tf.newaxis]
        return ScriptedStack.call_controller(self, commands, read_values, prev_state,
                                             batch_size)


def test_a_stateful_controller_sees_the_steps_in_order():
    for _ in range(3):
        state = _final_state(CountingStack(4, 6, 3), [[0.0] * 3] * 3)
        np.testing.assert_allclose(state.memory_values[0, :3], [V1, V2, V3])
        np.testing.assert_allclose(state.read_values, [[V1]])
