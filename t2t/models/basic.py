"""A basic fully-connected model: flatten the inputs, then dense + ReLU layers.

    hp = registry.hparams("basic_fc_small")          # 2 layers of 256 units
    model = BasicFcRelu(hp, ModeKeys.TRAIN, problem_hparams)
    # features["inputs"]: images [B, 28, 28, 1] (IMAGE modality) or any fixed-size input;
    # features["targets"]: class labels [B, 1, 1, 1] (CLASS_LABEL modality)
    logits, losses = model(features)                 # logits [B, 1, 1, 1, num_classes]

The body maps the modality output [B, ...] to [B, 1, 1, hidden_size]; the class-label
top turns that into logits.
"""
import functools
import operator

import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers import dropout as dropout_lib
from t2t.model import t2t_model


@registry.register_model
class BasicFcRelu(t2t_model.T2TModel):
    """hparams.num_hidden_layers x (dense hidden_size, dropout, relu) on flattened inputs."""

    def body(self, features):
        hparams = self._hparams
        x = features["inputs"]
        static_shape = x.shape.as_list()[1:]
        if not static_shape or any(dim is None for dim in static_shape):
            raise ValueError("basic_fc_relu needs inputs of a fixed size (e.g. images); got "
                             "shape %s — use a sequence model for variable-length inputs"
                             % (x.shape.as_list(),))
        flat_size = functools.reduce(operator.mul, static_shape, 1)
        x = tf.reshape(tf.cast(x, tf.float32), [-1, flat_size])
        for i in range(hparams.num_hidden_layers):
            x = common_layers.dense(x, hparams.hidden_size, name="layer_%d" % i)
            x = dropout_lib.dropout(x, rate=hparams.dropout)
            x = tf.nn.relu(x)
        return tf.expand_dims(tf.expand_dims(x, axis=1), axis=1)  # [B, 1, 1, hidden], as T2T.


@registry.register_hparams
def basic_fc_small():
    """Small fully connected model: 2 layers of 256 units, batch 128, no dropout."""
    hparams = common_hparams.basic_params1()
    hparams.learning_rate = 0.1
    hparams.batch_size = 128
    hparams.hidden_size = 256
    hparams.num_hidden_layers = 2
    hparams.initializer = "uniform_unit_scaling"
    hparams.initializer_gain = 1.0
    hparams.weight_decay = 0.0
    hparams.dropout = 0.0
    return hparams
