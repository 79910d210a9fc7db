"""TextCNN (Kim 2014, arXiv:1408.5882): parallel convolutions max-pooled over time.

T2T's `text_cnn` model and `text_cnn_base` hparams, with T2T's variable names
(`text_cnn/body/conv-maxpool-2/W`, `.../b`), for sentence classification:

    hp = registry.hparams("text_cnn_base")      # filter_sizes [2, 3, 4, 5], 128 filters
    model = TextCNN(hp, ModeKeys.TRAIN, problem_hparams)   # class-label targets
    logits, losses = model(features)

Each filter size `k` convolves the embedded inputs [batch, length, 1, hidden] with
`num_filters` filters of k positions by the whole depth (VALID), relu, then takes the
maximum over positions; the concatenated [batch, 1, 1, num_filters * len(filter_sizes)]
(after `output_dropout`) goes to the target modality. Inputs shorter than the largest
filter are zero-padded to its length (T2T's convolution gave no position to pool there).
"""
import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_hparams
from t2t.layers import shape_utils
from t2t.model import t2t_model

_v1 = tf.compat.v1


def text_cnn_features(inputs, filter_sizes, num_filters, output_dropout=0.0):
    """The max-pooled convolution features of `inputs` [batch, length, 1, depth].

    Returns [batch, 1, 1, num_filters * len(filter_sizes)]; variables
    `conv-maxpool-<k>/W` [k, depth, 1, num_filters] and `conv-maxpool-<k>/b`.
    """
    if not filter_sizes or min(filter_sizes) < 1:
        raise ValueError("text_cnn: filter_sizes must be positive widths, got %r"
                         % (list(filter_sizes),))
    shape = shape_utils.shape_list(inputs)
    depth = inputs.get_shape().as_list()[3]
    x = tf.reshape(inputs, [shape[0], shape[1], depth, 1])  # depth becomes the image width
    x = tf.pad(x, [[0, 0], [0, tf.maximum(0, max(filter_sizes) - shape[1])], [0, 0], [0, 0]])
    pooled = []
    for size in filter_sizes:
        with _v1.variable_scope("conv-maxpool-%s" % size):
            kernel = _v1.get_variable(
                "W", [size, depth, 1, num_filters], dtype=x.dtype,
                initializer=_v1.truncated_normal_initializer(stddev=0.1))
            bias = _v1.get_variable("b", [num_filters], dtype=x.dtype,
                                    initializer=_v1.constant_initializer(0.1))
            conv = tf.nn.conv2d(x, kernel, strides=[1, 1, 1, 1], padding="VALID")
            conv = tf.nn.relu(tf.nn.bias_add(conv, bias))
            pooled.append(tf.reduce_max(conv, axis=1, keepdims=True))  # [batch, 1, 1, n]
    total = num_filters * len(filter_sizes)
    output = tf.reshape(tf.concat(pooled, 3), [-1, total])
    if output_dropout:
        output = tf.nn.dropout(output, rate=output_dropout)
    return tf.reshape(output, [-1, 1, 1, total])


@registry.register_model
class TextCNN(t2t_model.T2TModel):
    """T2T's TextCNN: `body` maps embedded inputs to [batch, 1, 1, filters]."""

    def body(self, features):
        hp = self._hparams
        return text_cnn_features(features["inputs"], hp.filter_sizes, hp.num_filters,
                                 hp.output_dropout)


@registry.register_hparams
def text_cnn_base():
    """T2T's text_cnn_base: basic_params1 with 4 filter sizes of 128 filters."""
    hparams = common_hparams.basic_params1()
    hparams.batch_size = 4096
    hparams.max_length = 256
    hparams.clip_grad_norm = 0.0
    hparams.optimizer_adam_epsilon = 1e-9
    hparams.learning_rate_schedule = "legacy"
    hparams.learning_rate_decay_scheme = "noam"
    hparams.learning_rate = 0.1
    hparams.learning_rate_warmup_steps = 4000
    hparams.initializer_gain = 1.0
    hparams.num_hidden_layers = 6
    hparams.initializer = "uniform_unit_scaling"
    hparams.weight_decay = 0.0
    hparams.optimizer_adam_beta1 = 0.9
    hparams.optimizer_adam_beta2 = 0.98
    hparams.num_sampled_classes = 0
    hparams.label_smoothing = 0.1
    hparams.shared_embedding_and_softmax_weights = True
    hparams.symbol_modality_num_shards = 16
    hparams.add_hparam("filter_sizes", [2, 3, 4, 5])
    hparams.add_hparam("num_filters", 128)
    hparams.add_hparam("output_dropout", 0.4)
    return hparams
