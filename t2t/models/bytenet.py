"""ByteNet (Kalchbrenner et al. 2016, arXiv:1610.10099): dilated convolutions, encoder and
causal decoder stacked in time.

T2T's `byte_net` model and `bytenet_base` hparams, with T2T's variable names
(`byte_net/body/bytenet/encoder/repeat_0/lnorm/...`, `.../residual_conv/conv_block_0_single/`),
so T2T checkpoints load:

    hp = registry.hparams("bytenet_base")     # 4 repeats of 4 dilated (3, 1) convolutions
    model = ByteNet(hp, ModeKeys.TRAIN, problem_hparams)   # symbol inputs and targets
    logits, losses = model(features)

The inputs are lengthened by half with zeros, then inputs and targets are zero-padded to
one length divisible by 50. The encoder runs `num_block_repeat` residual blocks of
`num_hidden_layers` convolutions dilated 1, 2, 4, ... (SAME); the decoder convolves the
encoding concatenated with the shifted targets (LEFT padding, so causal) and runs the same
blocks causally. The body returns the targets' positions only (T2T returned the padded
length too; the loss is the same, see docs/t2t_differences.md).
"""
import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers import conv_layers
from t2t.layers import losses
from t2t.layers import normalization
from t2t.layers import shape_utils
from t2t.model import t2t_model

_v1 = tf.compat.v1


def residual_dilated_conv(x, repeat, padding, name, hparams):
    """`repeat` residual blocks x += dropout(conv_block(layer_norm(x))) under `name`.

    Each block has `hparams.num_hidden_layers` convolutions of (kernel_height,
    kernel_width), dilated 2**i along time; padding "SAME" or "LEFT" (causal).
    """
    kernel = (hparams.kernel_height, hparams.kernel_width)
    dilations_and_kernels = [((2 ** i, 1), kernel) for i in range(hparams.num_hidden_layers)]
    with _v1.variable_scope(name):
        for i in range(repeat):
            with _v1.variable_scope("repeat_%d" % i):
                y = conv_layers.conv_block(
                    normalization.layer_norm(x, hparams.hidden_size, name="lnorm"),
                    hparams.hidden_size, dilations_and_kernels, padding=padding,
                    name="residual_conv")
                if hparams.dropout:
                    y = tf.nn.dropout(y, rate=hparams.dropout)
                x += y
        return x


def bytenet_internal(inputs, targets, hparams):
    """ByteNet's training step: [batch, length, 1, hidden] inputs and embedded targets ->
    decoder outputs [batch, padded_length, 1, hidden] (padded_length divisible by 50)."""
    with _v1.variable_scope("bytenet"):
        inputs = tf.expand_dims(shape_utils.flatten4d3d(inputs), axis=2)
        extend = tf.cast(0.5 * tf.cast(tf.shape(inputs)[1], tf.float32), tf.int32)
        static = inputs.shape.as_list()
        inputs = tf.pad(inputs, [[0, 0], [0, extend], [0, 0], [0, 0]])
        static[1] = None
        inputs.set_shape(static)
        inputs, targets = losses.pad_to_same_length(inputs, targets,
                                                    final_length_divisible_by=50)
        encoded = residual_dilated_conv(inputs, hparams.num_block_repeat, "SAME", "encoder",
                                        hparams)
        kernel = (hparams.kernel_height, hparams.kernel_width)
        decoder_start = conv_layers.conv_block(
            tf.concat([encoded, common_layers.shift_right(targets)], axis=3),
            hparams.hidden_size, [((1, 1), kernel)], padding="LEFT")
        return residual_dilated_conv(decoder_start, hparams.num_block_repeat, "LEFT",
                                     "decoder", hparams)


@registry.register_model
class ByteNet(t2t_model.T2TModel):
    """T2T's ByteNet; `body` returns one output per target position."""

    def body(self, features):
        targets = features["targets"]
        outputs = bytenet_internal(features["inputs"], targets, self._hparams)
        # The decoder is causal: dropping the padded tail changes no kept position.
        return outputs[:, :tf.shape(targets)[1]]


@registry.register_hparams
def bytenet_base():
    """T2T's bytenet_base: hidden 768, 4 dilated layers repeated 4 times, exp decay."""
    hparams = common_hparams.basic_params1()
    hparams.batch_size = 2048
    hparams.hidden_size = 768
    hparams.dropout = 0.2
    hparams.symbol_dropout = 0.2
    hparams.label_smoothing = 0.1
    hparams.clip_grad_norm = 2.0
    hparams.num_hidden_layers = 4
    hparams.kernel_height = 3
    hparams.kernel_width = 1
    hparams.learning_rate_decay_scheme = "exp"
    hparams.learning_rate = 0.05
    hparams.learning_rate_warmup_steps = 3000
    hparams.initializer_gain = 1.0
    hparams.weight_decay = 3.0
    hparams.num_sampled_classes = 0
    hparams.sampling_method = "argmax"
    hparams.optimizer_adam_epsilon = 1e-6
    hparams.optimizer_adam_beta1 = 0.85
    hparams.optimizer_adam_beta2 = 0.997
    hparams.add_hparam("num_block_repeat", 4)
    return hparams
