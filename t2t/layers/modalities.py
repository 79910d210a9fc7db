"""Modalities: how each feature enters the model (bottom) and leaves it (top, loss).

A Problem names a `ModalityType` per feature; T2TModel looks the functions up here,
unless the model's hparams override them per feature (`hparams.bottom`, `.top`, `.loss`,
`.weights_fn`, `.name`: dicts from feature name to function). Signatures are T2T's:

    bottom(x, model_hparams, vocab_size)          # ids [B, L, 1, 1] -> [B, L, 1, hidden]
    targets_bottom(x, model_hparams, vocab_size)  # the same for the (shifted) targets
    top(body_output, targets, model_hparams, vocab_size)   # -> logits [B, L, 1, 1, V]
    loss(top_out, targets, model_hparams, vocab_size, weights_fn) -> (numerator, denominator)
    weights_fn(labels)                            # -> float weights shaped like labels
    name(model_hparams, vocab_size)               # -> variable scope, "symbol_modality_V_H"

    modalities.get_top(ModalityType.SYMBOL)           # symbol_top
    modalities.get_name(ModalityType.SYMBOL)(hp, 300) # "symbol_modality_300_512"
    modalities.get_bottom("my_own_type")              # None: unknown types give `value`

Audio, speech-recognition and video modalities are named but not implemented: their
functions raise a one-line UserError when called.
"""
import dataclasses
from typing import Callable

import tensorflow as tf

from t2t.core.errors import UserError
from t2t.layers import softmax_attention
from t2t.layers import common_layers
from t2t.layers import conv_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers import loop_invariants
from t2t.layers import losses
from t2t.layers.modality_type import ModalityType  # noqa: F401  (re-exported, as in T2T)
from t2t.layers import shape_utils
from t2t.layers.shape_utils import shape_list, to_float

_v1 = tf.compat.v1
_TRAIN = "train"  # ModeKeys.TRAIN
_PREDICT = "infer"  # ModeKeys.PREDICT


def _shared_embedding(model_hparams):
    return bool(model_hparams.shared_embedding_and_softmax_weights or
                model_hparams.get("shared_embedding"))


def _num_channels(model_hparams):
    # T2T read model_hparams.problem.num_channels; here a layer gets no problem: an image
    # problem's channels come as the num_channels hparam (3 without it).
    return model_hparams.get("num_channels") or 3


def _logits_like(top_out, targets):
    """Reshape logits to the targets' shape when only singleton axes differ."""
    if len(top_out.get_shape()) != len(targets.get_shape()):
        return tf.reshape(top_out, shape_list(targets))
    return top_out


def is_pointwise(func):
    """Mark a top as pointwise (each position independent of the others).

    T2TModel then computes only the last position's logits when decoding step by step.
    """
    func.pointwise = True
    return func


def _not_supported(modality_type, what):
    def unsupported(*args, **kwargs):
        raise UserError("modality %r is not supported in t2t yet (no %s); override it with "
                        "hparams.%s for this feature or pick another ModalityType"
                        % (modality_type, what, what.split()[0]))
    unsupported.__name__ = "%s_%s_not_supported" % (modality_type, what.replace(" ", "_"))
    return unsupported


# --------------------------------------------------------------------------- bottoms
def get_weights(model_hparams, vocab_size, hidden_dim=None):
    """The (sharded) embedding / softmax matrix [vocab_size, hidden_dim].

    Shards `weights_0` .. `weights_<n-1>` (hparams.symbol_modality_num_shards), initialised
    N(0, hidden_dim^-0.5), concatenated along the vocabulary.
    """
    if hidden_dim is None:
        hidden_dim = model_hparams.hidden_size
    num_shards = model_hparams.symbol_modality_num_shards

    def build():
        shards = []
        for i in range(num_shards):
            shard_size = (vocab_size // num_shards) + (1 if i < vocab_size % num_shards else 0)
            shards.append(_v1.get_variable(
                "weights_%d" % i, [shard_size, hidden_dim],
                initializer=_v1.random_normal_initializer(0.0, hidden_dim ** -0.5)))
        ret = shards[0] if num_shards == 1 else tf.concat(shards, 0)
        if not tf.executing_eagerly():
            ret = common_layers.convert_gradient_to_tensor(ret)
        return ret

    # In a decoding loop the matrix (and its concatenation) is built once, outside it.
    key = ("symbol_weights", _v1.get_variable_scope().name, vocab_size, hidden_dim)
    return loop_invariants.loop_invariant(key, build)


def _symbol_bottom_simple(x, model_hparams, vocab_size, name, reuse):
    """Embed ids [B, L, 1, 1] (or [B, L]) -> [B, L, 1, hidden]; padding (id 0) -> zeros."""
    with _v1.variable_scope(name, reuse=reuse):
        if len(x.get_shape()) == 4:
            x = tf.squeeze(x, axis=3)
        while len(x.get_shape()) < 3:
            x = tf.expand_dims(x, axis=-1)
        var = get_weights(model_hparams, vocab_size)
        x = dropout_lib.dropout_no_scaling(x, 1.0 - model_hparams.symbol_dropout)
        ret = common_layers.gather(var, x)
        if model_hparams.multiply_embedding_mode == "sqrt_depth":
            ret *= model_hparams.hidden_size ** 0.5
        ret *= tf.expand_dims(shape_utils.cast_like(tf.not_equal(x, 0), ret), -1)
        return ret


def symbol_bottom(x, model_hparams, vocab_size):
    """Input symbols: variables `shared/*` when embeddings are shared, else `input_emb/*`."""
    if _shared_embedding(model_hparams):
        return _symbol_bottom_simple(x, model_hparams, vocab_size, "shared", reuse=None)
    return _symbol_bottom_simple(x, model_hparams, vocab_size, "input_emb", reuse=None)


def symbol_targets_bottom(x, model_hparams, vocab_size):
    """Target symbols: reuse `shared/*` when shared (creating it if there were no inputs),
    else `target_emb/*`."""
    if _shared_embedding(model_hparams):
        try:
            return _symbol_bottom_simple(x, model_hparams, vocab_size, "shared", reuse=True)
        except ValueError:  # no inputs feature created it: this is the first use
            return _symbol_bottom_simple(x, model_hparams, vocab_size, "shared", reuse=None)
    return _symbol_bottom_simple(x, model_hparams, vocab_size, "target_emb", reuse=None)


def symbol_one_hot_bottom(x, model_hparams, vocab_size):
    del model_hparams
    return tf.one_hot(x, vocab_size)


def class_label_bottom(x, model_hparams, vocab_size):
    """Embed class ids [B, 1, 1, 1] -> [B, 1, 1, hidden] (x sqrt(hidden) in sqrt_depth mode)."""
    with _v1.variable_scope("class_label_modality_%d_%d" % (vocab_size,
                                                             model_hparams.hidden_size)):
        multiplier = 1.0
        if model_hparams.multiply_embedding_mode == "sqrt_depth":
            multiplier = model_hparams.hidden_size ** 0.5
        return common_layers.embedding(x, vocab_size, model_hparams.hidden_size,
                                       multiplier=multiplier)


def class_label_targets_bottom(x, model_hparams, vocab_size):
    """Zeros [B, 1, 1, hidden]: a classifier's body must not see the label."""
    with _v1.variable_scope("class_label_modality_%d_%d" % (vocab_size,
                                                             model_hparams.hidden_size)):
        return tf.zeros([shape_list(x)[0], 1, 1, model_hparams.hidden_size])


def identity_bottom(x, model_hparams, vocab_size):
    del model_hparams, vocab_size
    return to_float(x)


def make_targets_bottom(bottom):
    """`bottom` run in a "targets_bottom" scope, so inputs and targets do not share vars."""
    def targets_bottom(x, model_hparams, vocab_size):
        with _v1.variable_scope("targets_bottom"):
            return bottom(x, model_hparams, vocab_size)
    targets_bottom.__name__ = "targets_" + getattr(bottom, "__name__", "bottom")
    return targets_bottom


def real_bottom(x, model_hparams, vocab_size):
    """Real vectors [..., d] -> dense to hidden_size (variables real/bottom/*)."""
    del vocab_size
    with _v1.variable_scope("real"):
        return common_layers.dense(to_float(x), model_hparams.hidden_size, name="bottom")


def image_bottom(x, model_hparams, vocab_size):
    """Images [B, H, W, C] int pixels -> float, unchanged otherwise."""
    del model_hparams, vocab_size
    with _v1.variable_scope("image_modality"):
        if common_layers.should_generate_summaries():
            _v1.summary.image("inputs", common_layers.tpu_safe_image_summary(x),
                              max_outputs=2)
        return to_float(x)


def image_targets_bottom(x, model_hparams, vocab_size):
    """Target images [B, H, W, C]: embed each channel's pixel value (64 dims), merge the
    channels with a dense layer -> [B, H, W, hidden]."""
    pixel_embedding_size = 64
    with _v1.variable_scope("image_modality"):
        if common_layers.should_generate_summaries():
            _v1.summary.image("targets_bottom", common_layers.tpu_safe_image_summary(x),
                              max_outputs=1)
        inputs_shape = shape_list(x)
        if len(inputs_shape) != 4:
            raise ValueError("image targets must be int tensors [batch, height, width, "
                             "channels] (256 values), got shape %s" % (inputs_shape,))
        embedding_var = _v1.get_variable("pixel_embedding", [vocab_size, pixel_embedding_size])
        hot_inputs = tf.reshape(tf.one_hot(tf.cast(x, tf.int32), vocab_size), [-1, vocab_size])
        embedded = tf.matmul(hot_inputs, embedding_var)
        merged_size = pixel_embedding_size * inputs_shape[3]
        embedded = tf.reshape(embedded, inputs_shape[:3] + [merged_size])
        return common_layers.dense(embedded, model_hparams.hidden_size,
                                   name="merge_pixel_embedded_channels")


def _image_channel_compress_bottom(inputs, model_hparams, name="bottom"):
    """RGB pixels [B, L, L, 3] -> [B, L, L, hidden] by a (1, 3)-strided conv over channels."""
    num_channels = 3
    with _v1.variable_scope(name):
        inputs = to_float(inputs)
        if (model_hparams.get("mode") != _PREDICT and
                common_layers.should_generate_summaries()):
            _v1.summary.image("inputs", common_layers.tpu_safe_image_summary(inputs),
                              max_outputs=2)
        inputs = common_layers.convert_rgb_to_symmetric_real(inputs)
        inputs_shape = shape_list(inputs)
        # Lay the channels side by side: [B, L, L * 3, 1].
        inputs = tf.reshape(inputs, [-1, inputs_shape[1], inputs_shape[2] * inputs_shape[3], 1])
        return conv_layers.conv(inputs, model_hparams.hidden_size,
                                  kernel_size=(1, num_channels), padding="VALID",
                                  strides=(1, num_channels), activation=tf.nn.relu,
                                  name="conv_input")


def image_channel_compress_bottom(x, model_hparams, vocab_size):
    del vocab_size
    return _image_channel_compress_bottom(x, model_hparams, "input_bottom")


def image_channel_compress_targets_bottom(x, model_hparams, vocab_size):
    del vocab_size
    return _image_channel_compress_bottom(x, model_hparams, "output_bottom")


def get_channel_embeddings(io_depth, targets, hidden_size, name="channel", vocab_size=256):
    """Embed each channel of [B, H, W, io_depth] pixels with its own 256-row table.

    Returns [B, H, W, io_depth * hidden_size] (x sqrt(hidden_size)).
    """
    targets_split = tf.split(targets, io_depth, axis=3)
    rgb_embedding_var = _v1.get_variable("rgb_target_emb_%s" % name,
                                         [vocab_size * io_depth, hidden_size])
    rgb_embedding_var = tf.identity(rgb_embedding_var) * float(hidden_size) ** 0.5
    channel_target_embs = []
    for i in range(io_depth):
        # Channel i uses rows i * vocab_size .. (i + 1) * vocab_size - 1.
        target_ids = tf.squeeze(targets_split[i], axis=3) + i * vocab_size
        channel_target_embs.append(common_layers.gather(rgb_embedding_var, target_ids))
    return tf.concat(channel_target_embs, axis=-1)


def image_channel_embeddings_bottom(x, model_hparams, vocab_size):
    """Target pixels [B, H, W, C] -> [B, H, W * C, hidden], one embedding per channel."""
    del vocab_size
    inputs = tf.cast(x, tf.int32)
    io_depth = model_hparams.num_channels
    tshape = shape_list(inputs)
    hidden_size = model_hparams.hidden_size
    target_embeddings = get_channel_embeddings(io_depth, inputs, hidden_size, "input_bottom")
    return tf.reshape(target_embeddings, [tshape[0], tshape[1], tshape[2] * io_depth,
                                          hidden_size])


# --------------------------------------------------------------------------- tops
def identity_top(body_output, targets, model_hparams, vocab_size):
    del targets, model_hparams, vocab_size
    return body_output


@is_pointwise
def symbol_top(body_output, targets, model_hparams, vocab_size):
    """Logits [B, L, 1, 1, vocab_size] = body_output [B, L, 1, d] x softmax matrix^T.

    The matrix is `shared/weights_*` (the embedding) with
    shared_embedding_and_softmax_weights, else `softmax/weights_*`.
    """
    del targets
    if model_hparams.shared_embedding_and_softmax_weights:
        scope_name, reuse = "shared", _v1.AUTO_REUSE
    else:
        scope_name, reuse = "softmax", False
    with _v1.variable_scope(scope_name, reuse=reuse):
        body_output_shape = shape_list(body_output)
        var = get_weights(model_hparams, vocab_size, body_output_shape[-1])
        if model_hparams.get("factored_logits") and model_hparams.get("mode") == _TRAIN:
            raise ValueError("hparams.factored_logits is not supported in t2t; set it to "
                             "False")
        body_output = tf.reshape(body_output, [-1, body_output_shape[-1]])
        logits = tf.matmul(body_output, shape_utils.cast_like(var, body_output),
                           transpose_b=True)
        return tf.reshape(logits, body_output_shape[:-1] + [1, vocab_size])


@is_pointwise
def symbol_one_hot_top(body_output, targets, model_hparams, vocab_size):
    del targets, model_hparams, vocab_size
    return body_output


def class_label_top(body_output, targets, model_hparams, vocab_size):
    """Mean over length and width, then dense: [B, L, W, d] -> logits [B, 1, 1, 1, V]."""
    del targets
    with _v1.variable_scope("class_label_modality_%d_%d" % (vocab_size,
                                                             model_hparams.hidden_size)):
        x = tf.reduce_mean(body_output, axis=[1, 2], keepdims=True)
        res = common_layers.dense(x, vocab_size)
        return tf.expand_dims(res, 3)


def _pooled_class_label_top(function_name, scope_prefix, pool):
    def top(body_output, targets, model_hparams, vocab_size):
        del targets
        with _v1.variable_scope("%s_%d_%d" % (scope_prefix, vocab_size,
                                              model_hparams.hidden_size)):
            return common_layers.dense(pool(body_output), vocab_size)
    top.__name__ = function_name
    return top


# [B, T, 1, d] -> [B, 1, 1, V] by a pooling over time and a dense layer.
sigmoid_max_pooling_class_label_top = _pooled_class_label_top(
    "sigmoid_max_pooling_class_label_top", "sigmoid_max_pooling_class_symbol_modality",
    lambda x: tf.reduce_max(x, axis=1, keepdims=True))
softmax_average_pooling_class_label_top = _pooled_class_label_top(
    "softmax_average_pooling_class_label_top",
    "softmax_average_pooling_onehot_class_label_modality",
    lambda x: tf.reduce_mean(x, axis=1, keepdims=True))
softmax_last_timestep_class_label_top = _pooled_class_label_top(
    "softmax_last_timestep_class_label_top",
    "softmax_last_timestep_onehot_class_label_modality",
    lambda x: tf.expand_dims(x[:, -1], 1))
softmax_max_pooling_class_label_top = _pooled_class_label_top(
    "softmax_max_pooling_class_label_top", "softmax_max_pooling_onehot_class_label_modality",
    lambda x: tf.reduce_max(x, axis=1, keepdims=True))


@is_pointwise
def real_top(body_output, targets, model_hparams, vocab_size):
    """Dense to vocab_size outputs per position (variables real/top/*)."""
    del targets, model_hparams
    with _v1.variable_scope("real"):
        return common_layers.dense(body_output, vocab_size, name="top")


def image_top(body_output, targets, model_hparams, vocab_size):
    """[B, H, W, d] -> 256-way logits per channel [B, H, W, channels, vocab_size]."""
    del targets
    num_channels = _num_channels(model_hparams)
    with _v1.variable_scope("rgb_softmax"):
        body_output_shape = shape_list(body_output)
        reshape_shape = body_output_shape[:3] + [num_channels, vocab_size]
        res = common_layers.dense(body_output, vocab_size * num_channels)
        res = tf.reshape(res, reshape_shape)
        if num_channels in (1, 3, 4) and common_layers.should_generate_summaries():
            _v1.summary.image("result", common_layers.tpu_safe_image_summary(
                tf.argmax(res, axis=-1)), max_outputs=1)
        return res


def image_channel_compress_top(body_output, targets, model_hparams, vocab_size):
    """[B, L, L, d] -> logits [B, L, L, 3, vocab_size] (needs hparams.img_len)."""
    del targets
    with _v1.variable_scope("image_channel_compress_modality"):
        hidden_size = model_hparams.hidden_size
        img_len = model_hparams.img_len
        channels = 3
        batch = shape_list(body_output)[0]
        x = conv_layers.conv(body_output, hidden_size * channels, kernel_size=(1, 1),
                               strides=(1, 1), padding="VALID", activation=tf.nn.relu,
                               name="decompress_conv")
        x = tf.reshape(x, [batch, img_len, img_len * channels, hidden_size])
        x = common_layers.layer_preprocess(x, model_hparams)
        x = common_layers.dense(x, vocab_size, use_bias=True, activation=None,
                                name="output_conv")
        return tf.reshape(x, [batch, img_len, img_len, channels, vocab_size])


def image_channel_embeddings_top(body_output, targets, model_hparams, vocab_size):
    """[B, L, L * C, d] -> logits [B, L, L, C, vocab_size] (needs hparams.img_len)."""
    del targets
    with _v1.variable_scope("image_channel_embeddings_bottom"):
        img_len = model_hparams.img_len
        channels = model_hparams.num_channels
        x = common_layers.dense(body_output, 256, use_bias=True, activation=None,
                                name="output_conv")
        return tf.reshape(x, [-1, img_len, img_len, channels, vocab_size])


# --------------------------------------------------------------------------- losses
def generic_loss(top_out, targets, model_hparams, vocab_size, weights_fn):
    """padded_cross_entropy with hparams.label_smoothing: (sum of losses, sum of weights)."""
    del vocab_size
    logits = softmax_attention.maybe_upcast(top_out, hparams=model_hparams)
    cutoff = model_hparams.get("video_modality_loss_cutoff") or 0.0
    return losses.padded_cross_entropy(logits, targets, model_hparams.label_smoothing,
                                              cutoff=cutoff, weights_fn=weights_fn)


def ctc_symbol_loss(top_out, targets, model_hparams, vocab_size, weights_fn):
    """CTC loss for targets [B, L, 1, 1] against logits [B, L, 1, 1, V] (blank = V - 1).

    As in T2T, each row's logit length is its target length (non-zero ids).
    """
    del model_hparams, vocab_size
    with tf.name_scope("ctc_loss"):
        targets_shape = targets.get_shape().as_list()
        if len(targets_shape) != 4 or targets_shape[2] != 1 or targets_shape[3] != 1:
            raise ValueError("ctc_symbol_loss needs targets [batch, length, 1, 1], got %s"
                             % (targets_shape,))
        targets = tf.cast(tf.squeeze(targets, axis=[2, 3]), tf.int32)
        logits = tf.squeeze(top_out, axis=[2, 3])
        targets_lengths = tf.reduce_sum(tf.cast(tf.not_equal(targets, 0), tf.int32), axis=1)
        # Dense -> sparse labels: the first targets_lengths[b] ids of each row.
        indices = tf.where(tf.sequence_mask(targets_lengths, maxlen=tf.shape(targets)[1]))
        sparse_targets = tf.SparseTensor(indices, tf.gather_nd(targets, indices),
                                         tf.cast(tf.shape(targets), tf.int64))
        xent = _v1.nn.ctc_loss(sparse_targets, logits, targets_lengths, time_major=False,
                               preprocess_collapse_repeated=False, ctc_merge_repeated=False)
        weights = weights_fn(targets)
        return tf.reduce_sum(xent), tf.reduce_sum(weights)


def generic_l2_loss(body_output, targets, model_hparams, vocab_size, weights_fn):
    """Mean squared error over all elements; denominator 1."""
    del model_hparams, vocab_size, weights_fn
    loss = tf.math.squared_difference(body_output, to_float(targets))
    return tf.reduce_mean(loss), tf.constant(1.0)


def multi_label_loss(top_out, targets, model_hparams, vocab_size, weights_fn):
    """Several labels per example [B, n, 1, 1] against one logit row [B, 1, 1, 1, V]:
    the mean cross-entropy over each example's labels, summed over examples."""
    del vocab_size
    num_labels = tf.shape(targets)[1]
    logits = tf.tile(top_out, [1, num_labels, 1, 1, 1])
    xent, weights = losses.padded_cross_entropy(
        logits, targets, model_hparams.label_smoothing, weights_fn=weights_fn,
        reduce_sum=False)
    xent = tf.squeeze(xent, [2, 3])
    weights = tf.squeeze(weights, [2, 3])
    loss = tf.reduce_sum(xent, axis=1)
    weights = tf.reduce_sum(weights, axis=1)
    loss /= (weights + 1e-8)
    weights = to_float(tf.greater(weights, 0.))
    return tf.reduce_sum(loss * weights), tf.reduce_sum(weights)


def one_hot_class_label_loss(top_out, targets, model_hparams, vocab_size, weights_fn):
    """Softmax cross-entropy against one-hot targets [B, ..., V]: (sum, number of examples).

    An example weighs the largest of weights_fn over its classes.
    """
    del model_hparams, vocab_size
    logits = _logits_like(top_out, targets)
    xent = tf.nn.softmax_cross_entropy_with_logits(
        labels=shape_utils.cast_like(targets, logits), logits=logits)
    weights = tf.reduce_max(weights_fn(targets), axis=-1)
    return tf.reduce_sum(xent * weights), tf.reduce_sum(weights)


def sigmoid_class_label_loss(top_out, targets, model_hparams, vocab_size, weights_fn):
    """Sigmoid cross-entropy per class against multi-hot targets [B, T, 1, V]:
    (sum over weighted elements, sum of weights)."""
    del model_hparams, vocab_size
    logits = _logits_like(top_out, targets)
    xent = tf.nn.sigmoid_cross_entropy_with_logits(
        labels=shape_utils.cast_like(targets, logits), logits=logits)
    weights = weights_fn(targets)
    return tf.reduce_sum(xent * weights), tf.reduce_sum(weights)


sigmoid_max_pooling_class_label_loss = sigmoid_class_label_loss


def real_l2_loss(top_out, targets, model_hparams, vocab_size, weights_fn):
    """Weighted squared error: (sum of w * (prediction - target)^2, sum of w)."""
    del model_hparams, vocab_size
    predictions = top_out
    if len(shape_list(top_out)) != len(shape_list(targets)):
        predictions = tf.squeeze(top_out, axis=[-1])
    with tf.name_scope("l2"):
        weights = weights_fn(targets)
        l2 = tf.pow(predictions - shape_utils.cast_like(targets, predictions), 2)
        return tf.reduce_sum(l2 * weights), tf.reduce_sum(weights)


def real_log_poisson_loss(top_out, targets, model_hparams, vocab_size, weights_fn):
    """Weighted log-Poisson loss; predictions are log rates."""
    del model_hparams, vocab_size
    predictions = top_out
    if len(shape_list(top_out)) != len(shape_list(targets)):
        predictions = tf.squeeze(top_out, axis=[-1])
    with tf.name_scope("log_poisson"):
        weights = weights_fn(targets)
        lp_loss = tf.nn.log_poisson_loss(shape_utils.cast_like(targets, predictions),
                                         predictions)
        return tf.reduce_sum(lp_loss * weights), tf.reduce_sum(weights)


def symbol_one_hot_loss(top_out, targets, model_hparams, vocab_size, weights_fn):
    """Mean softmax cross-entropy over all positions (padding included); denominator 1."""
    del model_hparams, weights_fn
    labels = tf.one_hot(targets, vocab_size)
    loss = tf.nn.softmax_cross_entropy_with_logits(logits=top_out, labels=labels)
    return tf.reduce_mean(loss), tf.constant(1.0)


# --------------------------------------------------------------------------- the table
def _fixed_name(name):
    def name_fn(model_hparams, vocab_size):
        del model_hparams, vocab_size
        return name
    return name_fn


def _sized_name(prefix):
    def name_fn(model_hparams, vocab_size):
        return "%s_%d_%d" % (prefix, vocab_size, model_hparams.hidden_size)
    return name_fn


@dataclasses.dataclass(frozen=True)
class ModalityFns:
    """The functions that handle one ModalityType (see the module docstring)."""
    bottom: Callable
    targets_bottom: Callable
    top: Callable
    loss: Callable
    weights_fn: Callable
    name: Callable


def _class_label(top, loss, weights_fn, name_prefix):
    return ModalityFns(class_label_bottom, class_label_targets_bottom, top, loss, weights_fn,
                       _sized_name(name_prefix))


def _unsupported(modality_type, top, name):
    return ModalityFns(
        _not_supported(modality_type, "bottom"), _not_supported(modality_type, "bottom"),
        top or _not_supported(modality_type, "top"),
        generic_loss if top is identity_top else _not_supported(modality_type, "loss"),
        losses.weights_all, _fixed_name(name))


_T = ModalityType
_SYMBOL_NAME = _sized_name("symbol_modality")
_weights_all = losses.weights_all
_weights_nonzero = losses.weights_nonzero

MODALITIES = {
    _T.SYMBOL: ModalityFns(symbol_bottom, symbol_targets_bottom, symbol_top, generic_loss,
                           _weights_nonzero, _SYMBOL_NAME),
    _T.SYMBOL_WEIGHTS_ALL: ModalityFns(symbol_bottom, symbol_targets_bottom, symbol_top,
                                       generic_loss, _weights_all, _SYMBOL_NAME),
    _T.CTC_SYMBOL: ModalityFns(symbol_bottom, symbol_targets_bottom, symbol_top,
                               ctc_symbol_loss, _weights_nonzero, _SYMBOL_NAME),
    _T.IDENTITY_SYMBOL: ModalityFns(identity_bottom, identity_bottom, identity_top,
                                    generic_loss, _weights_nonzero, _SYMBOL_NAME),
    _T.SYMBOL_ONE_HOT: ModalityFns(symbol_one_hot_bottom, symbol_one_hot_bottom,
                                   symbol_one_hot_top, symbol_one_hot_loss, _weights_nonzero,
                                   _SYMBOL_NAME),
    _T.CLASS_LABEL: _class_label(class_label_top, generic_loss, _weights_all,
                                 "class_label_modality"),
    _T.MULTI_LABEL: _class_label(class_label_top, multi_label_loss, _weights_nonzero,
                                 "class_label_modality"),
    _T.ONE_HOT_CLASS_LABEL: _class_label(class_label_top, one_hot_class_label_loss,
                                         _weights_all, "class_label_modality"),
    _T.SIGMOID_CLASS_LABEL: _class_label(class_label_top, sigmoid_class_label_loss,
                                         _weights_all, "sigmoid_class_symbol_modality"),
    _T.SIGMOID_MAX_POOLING_CLASS_LABEL: _class_label(
        sigmoid_max_pooling_class_label_top, sigmoid_max_pooling_class_label_loss,
        _weights_all, "sigmoid_max_pooling_class_symbol_modality"),
    _T.SOFTMAX_AVERAGE_POOLING_CLASS_LABEL: _class_label(
        softmax_average_pooling_class_label_top, one_hot_class_label_loss, _weights_all,
        "softmax_average_pooling_onehot_class_label_modality"),
    _T.SOFTMAX_LAST_TIMESTEP_CLASS_LABEL: _class_label(
        softmax_last_timestep_class_label_top, one_hot_class_label_loss, _weights_all,
        "softmax_last_timestep_onehot_class_label_modality"),
    _T.SOFTMAX_MAX_POOLING_CLASS_LABEL: _class_label(
        softmax_max_pooling_class_label_top, one_hot_class_label_loss, _weights_all,
        "softmax_max_pooling_onehot_class_label_modality"),
    _T.REAL: ModalityFns(real_bottom, make_targets_bottom(real_bottom), real_top,
                         generic_loss, _weights_all, _fixed_name("real_modality")),
    _T.REAL_L2_LOSS: ModalityFns(real_bottom, make_targets_bottom(real_bottom), real_top,
                                 real_l2_loss, _weights_all,
                                 _fixed_name("real_l2_loss_modality")),
    _T.REAL_LOG_POISSON_LOSS: ModalityFns(real_bottom, make_targets_bottom(real_bottom),
                                          real_top, real_log_poisson_loss, _weights_all,
                                          _fixed_name("real_log_poisson_loss_modality")),
    _T.IDENTITY: ModalityFns(identity_bottom, make_targets_bottom(identity_bottom),
                             identity_top, generic_loss, _weights_all,
                             _fixed_name("identity_modality")),
    _T.GENERIC_L2_LOSS: ModalityFns(identity_bottom, identity_bottom, identity_top,
                                    generic_l2_loss, _weights_all,
                                    _fixed_name("generic_l2_loss_modality")),
    _T.IMAGE: ModalityFns(image_bottom, image_targets_bottom, image_top, generic_loss,
                          _weights_all, _fixed_name("image_modality")),
    _T.IMAGE_CHANNEL_COMPRESS: ModalityFns(
        image_channel_compress_bottom, image_channel_compress_targets_bottom,
        image_channel_compress_top, generic_loss, _weights_all,
        _fixed_name("image_channel_compress_modality")),
    _T.IMAGE_CHANNEL_BOTTOM_IDENTITY: ModalityFns(
        image_channel_compress_bottom, image_channel_compress_targets_bottom, identity_top,
        generic_loss, _weights_all, _fixed_name("image_channel_bottom_identity_modality")),
    _T.IMAGE_CHANNEL_EMBEDDINGS_BOTTOM: ModalityFns(
        identity_bottom, image_channel_embeddings_bottom, image_channel_embeddings_top,
        generic_loss, _weights_all, _fixed_name("image_channel_embeddings_bottom")),
    _T.AUDIO: _unsupported(_T.AUDIO, identity_top, "audio_modality"),
    _T.AUDIO_SPECTRAL: _unsupported(_T.AUDIO_SPECTRAL, identity_top,
                                    "audio_spectral_modality"),
    _T.SPEECH_RECOGNITION: _unsupported(_T.SPEECH_RECOGNITION, identity_top,
                                        "speech_recognition_modality"),
    _T.VIDEO: _unsupported(_T.VIDEO, None, "video_modality"),
    _T.VIDEO_BITWISE: _unsupported(_T.VIDEO_BITWISE, None, "video_modality_bitwise"),
    _T.VIDEO_IDENTITY: _unsupported(_T.VIDEO_IDENTITY, None, "video_modality_identity"),
    _T.VIDEO_L1: _unsupported(_T.VIDEO_L1, None, "video_modality_l1"),
    _T.VIDEO_L2: _unsupported(_T.VIDEO_L2, None, "video_modality_l2"),
    _T.VIDEO_L1_RAW: _unsupported(_T.VIDEO_L1_RAW, None, "video_modality_l1_raw"),
    _T.VIDEO_L2_RAW: _unsupported(_T.VIDEO_L2_RAW, None, "video_modality_l2_raw"),
    _T.VIDEO_PIXEL_NOISE: _unsupported(_T.VIDEO_PIXEL_NOISE, None,
                                       "video_modality_pixel_noise"),
}

UNSUPPORTED_MODALITY_TYPES = (
    _T.AUDIO, _T.AUDIO_SPECTRAL, _T.SPEECH_RECOGNITION, _T.VIDEO, _T.VIDEO_BITWISE,
    _T.VIDEO_IDENTITY, _T.VIDEO_L1, _T.VIDEO_L2, _T.VIDEO_L1_RAW, _T.VIDEO_L2_RAW,
    _T.VIDEO_PIXEL_NOISE)


# --------------------------------------------------------------------------- dispatchers
def _lookup(modality_type, field, value):
    # Unknown types (e.g. a user's own string, paired with hparams overrides) give `value`,
    # as in T2T, because T2TModel evaluates the default even when an override exists.
    fns = MODALITIES.get(modality_type) if isinstance(modality_type, str) else None
    return value if fns is None else getattr(fns, field)


def get_bottom(modality_type, value=None):
    """Default bottom for `modality_type`; `value` if the type is unknown."""
    return _lookup(modality_type, "bottom", value)


def get_targets_bottom(modality_type, value=None):
    """Default targets bottom for `modality_type`; `value` if the type is unknown."""
    return _lookup(modality_type, "targets_bottom", value)


def get_top(modality_type, value=None):
    """Default top for `modality_type`; `value` if the type is unknown."""
    return _lookup(modality_type, "top", value)


def get_loss(modality_type, value=None):
    """Default loss for `modality_type`; `value` if the type is unknown."""
    return _lookup(modality_type, "loss", value)


def get_weights_fn(modality_type, value=None):
    """Default weights function for `modality_type`; `value` if the type is unknown."""
    return _lookup(modality_type, "weights_fn", value)


def get_name(modality_type, value=None):
    """Default variable-scope name function for `modality_type`; `value` if unknown."""
    return _lookup(modality_type, "name", value)
