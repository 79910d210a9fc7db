"""The Neural GPU (Kaiser and Sutskever 2015, arXiv:1511.08228) and its diagonal variant
(Freivalds and Liepins 2017, arXiv:1702.08727).

T2T's `neural_gpu` and `diagonal_neural_gpu` models and the `neural_gpu` hparams set, with
T2T's variable names (`neural_gpu/body/neural_gpu/cgru_0/reset_single/kernel`,
`diagonal_neural_gpu/body/diagonal_neural_gpu/dcgru_0/...`), so T2T checkpoints load:

    hp = registry.hparams("neural_gpu")     # one (3, 1) convolutional GRU, hidden 256
    model = NeuralGPU(hp, ModeKeys.TRAIN, problem_hparams)  # e.g. algorithmic_reverse_binary40
    logits, losses = model(features)

The state starts as the embedded inputs [batch, length, 1, hidden] and runs one step per
input position through `num_hidden_layers` convolutional GRUs; a step at a padding input
position (an all-zero embedding) leaves the state as it was. The final state, one output
per input position, is fitted to the targets' length (cut, or zero-padded: zero logits,
as T2T's loss padded them), so the model decodes greedily like the others. The diagonal
variant's GRUs shift a third of the state's channels up and a third down each step and add
twice the mean gate saturation cost as the "extra" loss.
"""
import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_hparams
from t2t.layers import recurrent
from t2t.layers import shape_utils
from t2t.model import t2t_model

_v1 = tf.compat.v1


def _is_padding(inp):
    """[batch, 1, 1, 1] True where this step's input [batch, 1, hidden] is all zeros."""
    padding = tf.less(tf.reduce_sum(tf.abs(inp), axis=[1, 2]), 0.00001)
    return tf.reshape(padding, [-1, 1, 1, 1])


def _steps(inputs):
    """The inputs [batch, length, 1, hidden] as one [batch, 1, hidden] per position."""
    return tf.transpose(inputs, [1, 0, 2, 3])


def neural_gpu_body(inputs, hparams, name=None):
    """The Neural GPU: `length` steps of `num_hidden_layers` conv_grus over the state.

    inputs: [batch, length, 1, hidden_size] (the state's shape too); returns the final
    state. Variables <name or neural_gpu>/cgru_<layer>/{reset,gate,candidate}_single/*.
    """
    kernel = (hparams.kernel_height, hparams.kernel_width)
    with _v1.variable_scope(name, "neural_gpu") as scope:

        def step(state, inp):
            with _v1.variable_scope(scope, reuse=_v1.AUTO_REUSE):
                x = state
                if hparams.dropout:
                    x = tf.nn.dropout(x, rate=hparams.dropout)
                for layer in range(hparams.num_hidden_layers):
                    x = recurrent.conv_gru(x, kernel, hparams.hidden_size,
                                           name="cgru_%d" % layer)
                return tf.where(_is_padding(inp), state, x)

        step(inputs, inputs[:, 0])  # makes the variables outside the loop
        return tf.foldl(step, _steps(inputs), initializer=inputs, parallel_iterations=1,
                        swap_memory=True)


def diagonal_neural_gpu(inputs, hparams, name=None):
    """The improved Neural GPU: diagonal_conv_grus; returns (final state, extra loss).

    The extra loss is twice the mean over steps of the last GRU's saturation cost.
    Variables <name or diagonal_neural_gpu>/dcgru_<layer>/{reset,gate,candidate}_single/*.
    """
    kernel = (hparams.kernel_height, hparams.kernel_width)
    with _v1.variable_scope(name, "diagonal_neural_gpu") as scope:

        def step(carried, inp):
            state, _ = carried
            with _v1.variable_scope(scope, reuse=_v1.AUTO_REUSE):
                x, cost = state, tf.constant(0.0)
                for layer in range(hparams.num_hidden_layers):
                    x, cost = recurrent.diagonal_conv_gru(
                        x, kernel, hparams.hidden_size, dropout=hparams.dropout,
                        name="dcgru_%d" % layer)
                return tf.where(_is_padding(inp), state, x), cost

        step((inputs, tf.constant(0.0)), inputs[:, 0])  # makes the variables
        states, costs = tf.scan(step, _steps(inputs), initializer=(inputs, tf.constant(0.0)),
                                parallel_iterations=1, swap_memory=True)
        # The state after the last step (T2T took the one after the first).
        return states[-1], 2.0 * tf.reduce_mean(costs)


def _fit_to_targets(outputs, features):
    """Cut or zero-pad outputs [batch, input_length, 1, hidden] to the targets' length."""
    if "targets" not in features:
        return outputs
    length = shape_utils.shape_list(features["targets"])[1]
    outputs = tf.pad(outputs, [[0, 0], [0, tf.maximum(0, length - tf.shape(outputs)[1])],
                               [0, 0], [0, 0]])
    return outputs[:, :length]


@registry.register_model
class NeuralGPU(t2t_model.T2TModel):
    """T2T's Neural GPU: one output per target position from the inputs alone."""

    def body(self, features):
        return _fit_to_targets(neural_gpu_body(features["inputs"], self._hparams), features)


@registry.register_model
class DiagonalNeuralGPU(t2t_model.T2TModel):
    """T2T's diagonal Neural GPU; its gate saturation cost is the "extra" loss."""

    def body(self, features):
        state, extra = diagonal_neural_gpu(features["inputs"], self._hparams)
        return _fit_to_targets(state, features), {"extra": extra}


@registry.register_hparams
def neural_gpu():
    """T2T's neural_gpu: one (3, 1) convolutional GRU of width 256, dropout 0.1."""
    hparams = common_hparams.basic_params1()
    hparams.daisy_chain_variables = False
    hparams.batch_size = 1024
    hparams.num_hidden_layers = 1
    hparams.hidden_size = 256
    hparams.dropout = 0.1
    hparams.label_smoothing = 0.0
    hparams.clip_grad_norm = 10.0
    hparams.kernel_height = 3
    hparams.kernel_width = 1
    hparams.learning_rate_decay_scheme = "exp"
    hparams.learning_rate = 0.02
    hparams.learning_rate_warmup_steps = 3000
    hparams.initializer_gain = 1.0
    hparams.weight_decay = 0.0
    hparams.num_sampled_classes = 0
    hparams.sampling_method = "argmax"
    hparams.optimizer_adam_epsilon = 1e-6
    hparams.optimizer_adam_beta1 = 0.85
    hparams.optimizer_adam_beta2 = 0.997
    return hparams
