"""A span-prediction model on the Transformer encoder (TyDi QA, SQuAD-style tasks).

    hp = registry.hparams("transformer_span_tiny")
    add_problem_hparams(hp, "tydiqa")
    model = TransformerSpan(hp, ModeKeys.TRAIN)
    outputs, losses = model({"inputs": ids [B, L, 1, 1], "input_mask": [B, L],
                             "segment_ids": [B, L], "start_position": [B],
                             "end_position": [B], "answer_type": [B]})
    outputs["start_logits"], outputs["end_logits"]    # [B, L]; padding at -10,000
    outputs["answer_type_logits"]                      # [B, 5] from the [CLS] position
    losses["training"]        # (xent(start) + xent(end) + xent(answer type)) / 3

Inputs are embedded by the problem's modality (subword ids), or, for codepoint problems
(`problem_hparams.input_is_codepoints`), by CANINE-style hashing: `codepoint_hash_functions`
hashes of each codepoint into `codepoint_hash_buckets` buckets, each with its own
embedding of hidden_size / functions dimensions, concatenated. Segment ids add a type
embedding, then the position signal and the Transformer encoder (`transformer_encoder`,
same variable names as the `transformer` / `transformer_encoder` models).

`--warm_start_from=<checkpoint>` initialises every variable whose name, below the model's
top scope, and shape match a variable of the checkpoint: the encoder layers (and the input
embedding when the vocabulary is the same) of a `transformer_encoder` or `transformer`
checkpoint, or of another span model. The heads start fresh.

PREDICT outputs the three logits plus `example_index`, `window_index`, `byte_start` and
`byte_end` for the problem's decoder to join windows into predictions.
"""
import collections

import tensorflow as tf
from absl import logging

from t2t.core import errors
from t2t.core.modes import ModeKeys
from t2t.core import registry
from t2t.layers import common_attention
from t2t.layers import common_layers
from t2t.layers import dropout as dropout_lib
from t2t.layers import shape_utils
from t2t.model import model_specs
from t2t.model import t2t_model
from t2t.models import transformer
from t2t.models import transformer_hparams

_v1 = tf.compat.v1
_PREDICT = ModeKeys.PREDICT
NUM_ANSWER_TYPES = 5
_NEG = -10000.0
_HASH_PRIMES = (31, 43, 59, 61, 73, 97, 103, 113, 137, 149, 157, 173, 181, 193, 211, 223)
PASSTHROUGH_FEATURES = ("example_index", "window_index", "byte_start", "byte_end",
                        "language_id")


def codepoint_hash_embedding(ids, hparams):
    """ids int [B, L] -> [B, L, hidden_size]: CANINE's multi-hash codepoint embedding."""
    functions = hparams.codepoint_hash_functions
    buckets = hparams.codepoint_hash_buckets
    hidden = hparams.hidden_size
    if not 1 <= functions <= len(_HASH_PRIMES) or hidden % functions:
        raise ValueError("codepoint_hash_functions=%d: give 1..%d dividing hidden_size=%d" %
                         (functions, len(_HASH_PRIMES), hidden))
    dim = hidden // functions
    ids = tf.cast(ids, tf.int64)
    pieces = []
    with _v1.variable_scope("codepoint_embedding"):
        for k in range(functions):
            table = _v1.get_variable("hash_%d" % k, [buckets, dim],
                                     initializer=_v1.random_normal_initializer(0.0, dim ** -0.5))
            pieces.append(tf.gather(table, ((ids + 1) * _HASH_PRIMES[k]) % buckets))
    embedded = tf.concat(pieces, -1) * hidden ** 0.5
    return embedded * tf.expand_dims(tf.cast(tf.not_equal(ids, 0), embedded.dtype), -1)


def _ids_2d(value):
    while value.shape.rank > 2:
        value = tf.squeeze(value, -1)
    return value


@registry.register_model
class TransformerSpan(t2t_model.T2TModel):
    """Transformer encoder with start/end span logits and a 5-way answer-type head."""

    def body(self, features):
        hparams = self._hparams
        inputs = features["inputs"]
        if inputs.dtype.is_integer:
            x = codepoint_hash_embedding(_ids_2d(inputs), hparams)
        else:
            x = shape_utils.flatten4d3d(inputs)
        mask = tf.cast(_ids_2d(features["input_mask"]), x.dtype)
        segments = tf.cast(_ids_2d(features["segment_ids"]), tf.int32)
        x += common_layers.embedding(segments, 2, hparams.hidden_size, name="type_embedding")
        x = transformer._add_positions(x, hparams, None,  # pylint: disable=protected-access
                                       "inputs_positional_embedding")
        bias = common_attention.attention_bias_ignore_padding(1.0 - mask)
        x = dropout_lib.dropout(x, rate=hparams.layer_prepostprocess_dropout)
        encoded = transformer.transformer_encoder(x, bias, hparams, nonpadding=mask)
        span = common_layers.dense(encoded, 2, name="span_logits")
        padding = (1.0 - mask) * _NEG
        start_logits = span[:, :, 0] + padding
        end_logits = span[:, :, 1] + padding
        type_logits = common_layers.dense(encoded[:, 0, :], NUM_ANSWER_TYPES,
                                          name="answer_type_logits")
        outputs = {"start_logits": start_logits, "end_logits": end_logits,
                   "answer_type_logits": type_logits}
        if hparams.mode == _PREDICT or "start_position" not in features:
            return outputs, {"training": tf.constant(0.0)}
        losses = []
        for logits, label in ((start_logits, "start_position"), (end_logits, "end_position"),
                              (type_logits, "answer_type")):
            labels = tf.reshape(tf.cast(features[label], tf.int32), [-1])
            losses.append(tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits)))
        return outputs, {"training": tf.add_n(losses) / 3.0}

    # ------------------------------------------------------------------ specs
    def predict_outputs(self, features, use_tpu=False):
        if use_tpu:
            raise errors.UserError("transformer_span does not predict on TPUs; drop --use_tpu")
        outputs, _ = self(features)
        predictions = dict(outputs)
        for name in PASSTHROUGH_FEATURES:
            if name in features:
                predictions[name] = features[name]  # [B] or [B, L]
        return predictions, {tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY: dict(outputs)}

    def estimator_spec_eval(self, features, logits, labels, loss, losses_dict, use_tpu=False):
        """Loss plus the accuracy of each head (exact start, end, answer type)."""
        del labels, losses_dict
        if use_tpu:
            raise errors.UserError("transformer_span evaluates on CPU/GPU; drop --use_tpu")
        metrics = {}
        for name, label in (("start_logits", "start_position"),
                             ("end_logits", "end_position"),
                             ("answer_type_logits", "answer_type")):
            predicted = tf.argmax(logits[name], axis=-1, output_type=tf.int32)
            metrics["metrics-%s/%s_accuracy" % (self.problem.name, label)] = (
                _v1.metrics.accuracy(tf.reshape(tf.cast(features[label], tf.int32), [-1]),
                                     predicted))
        return tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=loss,
                                          eval_metric_ops=metrics, predictions=logits)

    def estimator_spec_train(self, loss, num_async_replicas=1, use_tpu=False):
        checkpoint = self._hparams.get("warm_start_from")
        if checkpoint and not use_tpu:
            warm_start_encoder(checkpoint, self._hparams, self.name)
            self._hparams.warm_start_from = ""  # done; the generic exact-name match would miss
        return model_specs.estimator_spec_train(self, loss, num_async_replicas, use_tpu)


def warm_start_encoder(checkpoint, hparams, scope):
    """Initialise this model's variables from `checkpoint` by name below the top scope.

    A model variable "<scope>/body/encoder/layer_0/..." takes the checkpoint variable
    "<any top scope>/body/encoder/layer_0/..." of the same shape ("input_emb" and
    "shared" embeddings count as the same). The checkpoint's top scope with the most
    matches wins. Skipped when the model dir already has a checkpoint (a restarted job).
    Returns {checkpoint variable: model variable name}.
    """
    model_dir = hparams.get("model_dir")
    if model_dir and tf.train.latest_checkpoint(model_dir) is not None:
        return {}
    try:
        reader = tf.train.load_checkpoint(checkpoint)
    except (tf.errors.OpError, ValueError) as error:
        raise errors.UserError("--warm_start_from=%s is not a readable checkpoint (%s); give "
                               "a checkpoint prefix or its folder" %
                               (checkpoint, str(error).splitlines()[0]))
    shapes = reader.get_variable_to_shape_map()
    by_suffix = collections.defaultdict(list)
    for name, shape in shapes.items():
        if "/" in name:
            top, rest = name.split("/", 1)
            by_suffix[rest.replace("/shared/", "/input_emb/")].append((top, name, shape))
    prefix = scope + "/"
    variables = [v for v in _v1.trainable_variables() if v.name.startswith(prefix)]
    options = {}
    for var in variables:
        rest = var.name[len(prefix):].split(":")[0]
        key = rest.replace("/shared/", "/input_emb/")
        options[var] = [(top, name) for top, name, shape in by_suffix.get(key, [])
                        if list(shape) == var.shape.as_list()]
    tops = collections.Counter(top for found in options.values() for top, _ in found)
    if not tops:
        raise errors.UserError(
            "--warm_start_from=%s: no variable matches this model's (%s) by name and shape; "
            "give a checkpoint of a transformer encoder with the same hidden_size, "
            "num_heads and filter_size" % (checkpoint, scope))
    best_top = tops.most_common(1)[0][0]
    assignment = {}
    for var, found in options.items():
        for top, name in found:
            if top == best_top:
                assignment[name] = var
    logging.info("warm start from %s: %d of %d variables of %s (checkpoint scope %s)",
                 checkpoint, len(assignment), len(variables), scope, best_top)
    _v1.train.init_from_checkpoint(checkpoint, assignment)
    return {name: var.name for name, var in assignment.items()}


# ---------------------------------------------------------------------------- hparams
def _span_hparams(hparams, buckets):
    hparams.batch_size = 32  # windows (the features have static shapes)
    hparams.max_length = 512
    hparams.add_hparam("codepoint_hash_functions", 8)
    hparams.add_hparam("codepoint_hash_buckets", buckets)
    return hparams


@registry.register_hparams
def transformer_span_base():
    """transformer_base's encoder (6 layers, d=512), 32 windows per batch."""
    return _span_hparams(transformer_hparams.transformer_base(), 16384)


@registry.register_hparams
def transformer_span_tiny():
    """2 layers, d=128, 4 heads; warm-up 200 steps."""
    hparams = _span_hparams(transformer_hparams.transformer_tiny(), 4096)
    hparams.learning_rate_warmup_steps = 200
    return hparams


@registry.register_hparams
def transformer_span_test():
    """For unit tests: 2 layers, d=32, 2 heads, no dropout."""
    hparams = _span_hparams(transformer_hparams.transformer_tiny(), 512)
    hparams.hidden_size = 32
    hparams.filter_size = 64
    hparams.num_heads = 2
    hparams.codepoint_hash_functions = 4
    hparams.learning_rate_warmup_steps = 100
    hparams.layer_prepostprocess_dropout = 0.0
    hparams.attention_dropout = 0.0
    hparams.relu_dropout = 0.0
    return hparams
