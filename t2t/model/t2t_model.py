"""T2TModel: the base class of every model — modalities around a body, loss, decoding, specs.

A model only writes `body`; T2TModel turns features into embeddings with each feature's
modality (`bottom`), runs the body, turns its output into logits (`top`) and a loss:

    @registry.register_model
    class MyModel(T2TModel):
        def body(self, features):          # features["inputs"]: [B, L, 1, hidden] floats
            return common_layers.dense(features["targets"], self.hparams.hidden_size)

    hp = registry.hparams("transformer_tiny")
    p_hp = model_hparams.test_problem_hparams(input_vocab_size=6, target_vocab_size=6)
    model = MyModel(hp, ModeKeys.TRAIN, p_hp)
    logits, losses = model({"inputs": ids, "targets": ids})   # ids: int32 [B, L, 1, 1]
    logits.shape                 # [B, L, 1, 1, 6]
    losses["training"]           # scalar: sum(token xent) / sum(token weights)

    model.infer({"inputs": ids}, decode_length=5)          # {"outputs": [B, <=L+5], "scores"}
    model_fn = T2TModel.make_estimator_model_fn("my_model", hp)   # for tf.estimator

Variables live under a scope named after the model (`REGISTERED_NAME`, e.g.
"transformer/body/..."): the first build creates them, later builds in the same graph
(evaluation, step-by-step decoding, another mode) reuse them. Estimator specs are built in
`t2t.model.model_specs`, the generic (slow) decoders live in `t2t.model.slow_decoding`.
"""
import contextlib
import inspect
import math

import tensorflow as tf
from absl import logging

from t2t.core.hparam import HParams
from t2t.core.modes import ModeKeys
from t2t.core import registry
from t2t.core.log_once import info_once
from t2t.layers import common_layers
from t2t.layers import losses as losses_lib
from t2t.layers import modalities
from t2t.layers import modality_type
from t2t.layers import shape_utils
from t2t.model import model_hparams
from t2t.model import model_predict
from t2t.model import model_specs
from t2t.model import model_summaries
from t2t.model import slow_decoding
from t2t.model.t2t_model_helpers import (  # noqa: F401  (T2T's names in t2t_model)
    log_debug, log_info, log_warn, set_custom_getter_compose)
from t2t.optim import learning_rate as learning_rate_lib
from t2t.optim import optimize as optimize_lib
from t2t.problems import multi_problem
from t2t.problems import problem_hparams_schema

# Re-exported: the trainer attaches the problem to the model hparams with these (T2T kept
# them in trainer_lib / hparams_lib).
add_problem_hparams = model_hparams.add_problem_hparams
copy_hparams = model_hparams.copy_hparams
# T2T's module-level helpers, under their T2T names.
summarize_features = model_summaries.summarize_features
create_host_call = model_summaries.create_host_call
remove_summaries = model_summaries.remove_summaries
initialize_from_ckpt = model_specs.initialize_from_ckpt

_TRAIN = ModeKeys.TRAIN
_EVAL = ModeKeys.EVAL
_PREDICT = ModeKeys.PREDICT

# Target modalities that are classified, not generated: no beam search, one decode step.
_CLASSIFICATION_MODALITIES = frozenset(
    name for name in modality_type.ModalityType.get_choices() if "class_label" in name)

# Modalities whose default weights function T2T replaces when prepending inputs to targets.
_SYMBOL_MODALITIES = (modality_type.ModalityType.CTC_SYMBOL,
                      modality_type.ModalityType.IDENTITY_SYMBOL,
                      modality_type.ModalityType.SYMBOL,
                      modality_type.ModalityType.SYMBOL_ONE_HOT)


def default_decode_hparams():
    """The decode hparams T2TModel reads, with T2T's defaults (see `utils/decoding`)."""
    return HParams(beam_size=4, alpha=0.6, extra_length=100, return_beams=False,
                   batch_size=0, stopping_bound="max_length")


class SingleDatashard:
    """T2T's `Parallelism` for one device: `dp(fn, [args])` -> `[fn(args)]`.

    Arguments are lists with one element per shard (or a value used by every shard).
    A function returning a tuple gives a tuple of lists, as T2T's `Parallelism`:

        dp = SingleDatashard()
        dp(lambda a, b: (a + b, a * b), [2], [3])    # ([5], [6])
    """
    n = 1
    ps_devices = [""]

    def __init__(self, device=None):
        self._device = device

    def __call__(self, fn, *args):
        shard_args = [arg[0] if isinstance(arg, list) else arg for arg in args]
        if self._device:
            with tf.device(self._device):
                output = fn(*shard_args)
        else:
            output = fn(*shard_args)
        if isinstance(output, tuple):
            return tuple([value] for value in output)
        return [output]


def average_sharded_losses(sharded_losses):
    """Per loss name: (num, den) pairs -> sum(num) / max(sum(den), 1); tensors -> mean.

        average_sharded_losses([{"training": (6.0, 3.0)}, {"training": (2.0, 1.0)}])
        # {"training": 2.0}
    """
    losses = {}
    for name in sorted(sharded_losses[0]):
        shards = [shard[name] for shard in sharded_losses]
        if isinstance(shards[0], tuple):
            nums, dens = zip(*shards)
            den = tf.add_n([tf.cast(d, tf.float32) for d in dens])
            losses[name] = tf.add_n([tf.cast(n, tf.float32) for n in nums]) / tf.maximum(
                1.0, den)
        else:
            losses[name] = tf.reduce_mean(tf.cast(tf.stack(shards), tf.float32))
    return losses


def _xla_scope(use_xla):
    """XLA's jit scope when `use_xla`, else nothing."""
    return common_layers.xla_jit_scope() if use_xla else contextlib.nullcontext()


def _is_class_label(modality):
    return modality in _CLASSIFICATION_MODALITIES


class T2TModel:
    """Abstract base for models: modalities, body, loss, decoding and Estimator specs.

    Args:
      hparams: model HParams (copied; the copy gets `mode`, and outside TRAIN every
        hparam ending in "dropout" and `label_smoothing` are 0).
      mode: a `ModeKeys` value.
      problem_hparams: the Problem's hparams (`modality`, `vocab_size`, ...); defaults to
        `hparams.problem_hparams`. Without them bottom, top and loss are passthroughs.
      data_parallelism: a T2T-style `Parallelism` (`.n`, `dp(fn, *list_args)`); default one
        shard on the current device.
      decode_hparams: HParams with beam_size, alpha, extra_length, return_beams (PREDICT).
      name: scope name instead of the registered name.
    """
    REGISTERED_NAME = None

    def __init__(self, hparams, mode=_TRAIN, problem_hparams=None, data_parallelism=None,
                 decode_hparams=None, **kwargs):
        name = kwargs.pop("name", None)
        kwargs.pop("_reuse", None)  # T2T's Layer flag; reuse is decided at build time.
        if kwargs:
            raise TypeError("%s got unexpected keyword arguments: %s" %
                            (type(self).__name__, ", ".join(sorted(kwargs))))
        self._name = name or self.REGISTERED_NAME or registry.default_name(type(self))
        self._problem_hparams = (problem_hparams or
                                 model_hparams.attached_problem_hparams(hparams))
        # Read once here, the model's entry: specs and metrics take it from `self.problem`.
        self._problem = model_hparams.attached_problem(hparams)

        hparams = copy_hparams(hparams)
        if self._problem_hparams and hparams.get("shared_embedding_and_softmax_weights"):
            # Sharing needs one vocabulary for inputs and targets.
            input_vocab = self._padded_vocab_size("inputs", hparams)
            target_vocab = self._padded_vocab_size("targets", hparams)
            if (input_vocab is not None and target_vocab is not None and
                    input_vocab != target_vocab):
                info_once("Unsetting shared_embedding_and_softmax_weights "
                          "(input vocab %d != target vocab %d).", input_vocab, target_vocab)
                hparams.shared_embedding_and_softmax_weights = False
        if self._problem_hparams:
            for feature_name, modality in self._problem_hparams.modality.items():
                if modality in _SYMBOL_MODALITIES:
                    prepend = hparams.get("prepend_mode", "none")
                    if (prepend == "prepend_inputs_full_attention" or
                            (prepend == "prepend_inputs_masked_attention" and mode != _TRAIN)):
                        weights_fn = losses_lib.weights_prepend_inputs_to_targets
                    else:
                        weights_fn = losses_lib.weights_nonzero
                    hparams.weights_fn.setdefault(feature_name, weights_fn)
        self._original_hparams = hparams
        self.set_mode(mode)

        self._decode_hparams = copy_hparams(decode_hparams or default_decode_hparams())
        self._data_parallelism = data_parallelism or SingleDatashard()
        self._num_datashards = self._data_parallelism.n
        self._ps_devices = getattr(self._data_parallelism, "ps_devices", [""])

    # ------------------------------------------------------------------ properties
    @property
    def stopping_bound(self):
        """When this model's beam searches end: its decode hparams' `stopping_bound`
        ("max_length", T2T's, unless set; see `t2t.search.beam_search`)."""
        return self._decode_hparams.get("stopping_bound") or "max_length"

    @property
    def name(self):
        return self._name

    @property
    def hparams(self):
        return self._hparams

    @property
    def is_training(self):
        return self._hparams.mode == _TRAIN

    @property
    def is_predicting(self):
        return self._hparams.mode == _PREDICT

    @property
    def has_input(self):
        """True when the problem has "inputs" (or, without a problem, always)."""
        if self._problem_hparams:
            return "inputs" in self._problem_hparams.modality
        return True

    @property
    def target_modality_is_real(self):
        """Whether the target modality outputs real values (its name starts with "real")."""
        if not self._problem_hparams:
            return False
        return self._modality_name("targets").startswith("real")

    def set_mode(self, mode):
        """Rebuild `self.hparams` for `mode`: dropouts and label smoothing are 0 outside TRAIN."""
        hparams = copy_hparams(self._original_hparams)
        hparams.mode = mode
        if mode != _TRAIN:
            for key in hparams.values():
                if key.endswith("dropout") or key == "label_smoothing":
                    setattr(hparams, key, 0.0)
        self._hparams = hparams

    @property
    def problem_hparams(self):
        """The problem's hparams (modality, vocab_size, ...); None without a problem."""
        return self._problem_hparams

    @property
    def problem(self):
        """The Problem attached to the model's hparams (names its metrics); None without."""
        return self._problem

    # ------------------------------------------------------------------ helpers
    def padded_vocab_size(self, feature_name, hparams=None):
        """The feature's vocab size rounded up to a multiple of `hparams.vocab_divisor`.

            # vocab_size {"targets": 8190}, vocab_divisor 8 -> 8192
        """
        hparams = hparams or self._hparams
        vocab_size = self._problem_hparams.vocab_size.get(feature_name)
        divisor = hparams.get("vocab_divisor") or 1
        if vocab_size is not None:
            vocab_size += (-vocab_size) % divisor
        return vocab_size

    def modality_name(self, feature_name):
        """The variable-scope name of the feature's modality, e.g. "symbol_modality_8192_512"."""
        modality = self._problem_hparams.modality[feature_name]
        name_fn = self._hparams.name.get(feature_name, modalities.get_name(modality))
        return name_fn(self._hparams, self.padded_vocab_size(feature_name))

    # T2T's names, which subclasses ported from T2T call.
    _padded_vocab_size = padded_vocab_size
    _modality_name = modality_name
    _target_modality_is_real = target_modality_is_real

    def target_modality_names(self):
        """Features decoded with targets_bottom: names containing "target"."""
        return [k for k in self._problem_hparams.modality
                if "target" in k and k not in ("targets_segmentation", "targets_position")]

    def fill_problem_hparams_features(self, features):
        """Add scalar `input_space_id` / `target_space_id` features from the problem."""
        if features is None:
            return
        space_ids = problem_hparams_schema.problem_hparams_to_features(self._problem_hparams)
        for key, value in sorted(space_ids.items()):
            if key not in features:
                features[key] = tf.constant(value, name=key)

    # ------------------------------------------------------------------ building
    def __call__(self, features):
        """Build the model on a dict of feature tensors; returns `(logits, losses)`.

        `losses` maps names to scalars; `losses["training"]` is the model loss (0 in
        PREDICT), other entries (e.g. "extra") are added to it by the trainer.
        """
        return self.call(features)

    def variables_exist(self):
        """Whether this graph already holds variables under the model's scope."""
        outer = tf.compat.v1.get_variable_scope().name
        prefix = (outer + "/" if outer else "") + self._name + "/"
        return any(v.name.startswith(prefix) for v in tf.compat.v1.global_variables())

    def call(self, features):
        features = dict(features)
        initializer = optimize_lib.get_variable_initializer(self._hparams)
        # As T2T's Layer: the first build creates the variables, every later build (another
        # mode, a decoding step, another model object of the same name) reuses them.
        reuse = True if self.variables_exist() else None
        with tf.compat.v1.variable_scope(self._name, reuse=reuse, use_resource=True,
                                         initializer=initializer):
            self.fill_problem_hparams_features(features)
            model_summaries.summarize_features(features, num_shards=self._num_datashards)
            sharded_features = self._shard_features(features)
            sharded_logits, losses = self.model_fn_sharded(sharded_features)
            if isinstance(sharded_logits, dict):
                return {k: tf.concat(v, 0) for k, v in sharded_logits.items()}, losses
            return tf.concat(sharded_logits, 0), losses

    def _shard_features(self, features):
        """{name: tensor} -> {name: [one tensor per datashard]}, split on the batch axis."""
        sharded = {}
        for name, value in sorted(features.items()):
            value = tf.convert_to_tensor(value)
            if value.shape.rank == 0:
                value = tf.expand_dims(value, axis=-1)
            # Static shapes only: under tf.function a dynamic dim == 1 is a tensor, not a bool
            # (TF1 graphs compared it by identity: False), so [batch] features are not tiled.
            if value.shape.rank == 1 and value.shape[0] == 1:
                value = tf.tile(value, [self._num_datashards])
            if self._num_datashards == 1:
                sharded[name] = [value]
            else:
                sharded[name] = self._data_parallelism(
                    tf.identity, tf.split(value, self._num_datashards, 0))
        return sharded

    def _to_features_per_datashard(self, sharded_features):
        return [{name: shards[d] for name, shards in sharded_features.items()}
                for d in range(self._num_datashards)]

    def model_fn_sharded(self, sharded_features):
        """Run `model_fn` on every datashard; logits per shard, losses averaged over shards."""
        if self._hparams.get("scheduled_sampling_prob", 0.0) > 0.0 and self.is_training:
            raise ValueError("scheduled sampling is not supported by t2t; set "
                             "hparams.scheduled_sampling_prob=0.0")
        per_shard = self._to_features_per_datashard(sharded_features)
        shards_built = []

        def shard_model_fn(features):
            # Shards after the first share the first one's variables.
            reuse = True if shards_built else None
            shards_built.append(True)
            with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), reuse=reuse):
                return self.model_fn(features)

        sharded_logits, sharded_losses = self._data_parallelism(shard_model_fn, per_shard)
        if isinstance(sharded_logits[0], dict):
            sharded_logits = {k: [shard[k] for shard in sharded_logits]
                              for k in sharded_logits[0]}
        return sharded_logits, average_sharded_losses(sharded_losses)

    def model_fn(self, features):
        """bottom -> body -> top -> loss for one datashard; returns (logits, losses)."""
        with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), use_resource=True):
            transformed_features = self.bottom(features)
            with tf.compat.v1.variable_scope("body"):
                info_once("Building model body")
                body_out = self.body(transformed_features)
            output, losses = self._normalize_body_output(body_out)
            if "training" in losses:
                info_once("Skipping T2TModel top and loss: the body returned a training loss")
                return output, losses
            logits = self.top(output, features)
            losses["training"] = 0.0
            if self._hparams.mode != _PREDICT:
                losses["training"] = self.loss(logits, features)
            return logits, losses

    def _normalize_body_output(self, body_out):
        """body output -> (output, {loss name: scalar}); [B, L, H] outputs gain an axis."""
        if isinstance(body_out, tuple):
            output, losses = body_out
            if isinstance(losses, (list, tuple)):
                losses = {"extra": tf.add_n([tf.reduce_mean(l) for l in losses])}
            elif isinstance(losses, dict):
                losses = dict(losses)
            else:
                losses = {"extra": tf.reduce_mean(losses)}
        else:
            output, losses = body_out, {"extra": 0.0}
        if isinstance(output, tf.Tensor) and output.shape.ndims == 3:
            output = tf.expand_dims(output, axis=2)
        return output, losses

    def bottom(self, features):
        """Each feature through its modality's bottom (targets_bottom for targets).

        Input features sharing a modality name share its variables. Transformed features
        keep their names; the originals stay available as "<name>_raw". Features without
        a modality pass through unchanged.
        """
        if not self._problem_hparams:
            logging.warning("Without problem_hparams, T2TModel.bottom is a passthrough.")
            return features
        transformed = {}
        previous_modalities = []
        target_names = self.target_modality_names()
        for feature_name, modality in sorted(self._problem_hparams.modality.items()):
            if feature_name not in features:
                logging.warning("Missing feature %s - ignoring.", feature_name)
                continue
            vocab_size = self._padded_vocab_size(feature_name)
            modality_name = self._modality_name(feature_name)
            if feature_name in target_names:
                scope_name = (modality_name if len(target_names) == 1 else
                              "%s/%s" % (modality_name, feature_name))
                bottom = self._hparams.bottom.get(feature_name,
                                                  modalities.get_targets_bottom(modality))
                with tf.compat.v1.variable_scope(scope_name):
                    info_once("Transforming feature '%s' with %s.targets_bottom",
                              feature_name, modality_name)
                    transformed[feature_name] = bottom(features[feature_name], self._hparams,
                                                       vocab_size)
            else:
                bottom = self._hparams.bottom.get(feature_name, modalities.get_bottom(modality))
                reuse = True if modality_name in previous_modalities else None
                with tf.compat.v1.variable_scope(modality_name, reuse=reuse):
                    info_once("Transforming feature '%s' with %s.bottom",
                              feature_name, modality_name)
                    transformed[feature_name] = bottom(features[feature_name], self._hparams,
                                                       vocab_size)
                previous_modalities.append(modality_name)
        for key, value in features.items():
            if key not in transformed:
                transformed[key] = value
            else:
                transformed[key + "_raw"] = value
        return transformed

    def body(self, features):
        """The model proper: transformed features -> output [B, L, 1, hidden_size].

        May return `(output, {"extra": loss})`; returning a "training" loss skips top and
        loss. Subclasses must override it.
        """
        raise NotImplementedError("%s must implement body(features)" % type(self).__name__)

    def top(self, body_output, features):
        """Body output -> logits with the target modality's top ({name: output} per name)."""
        if isinstance(body_output, dict):
            logits = {}
            for name, output in body_output.items():
                with tf.compat.v1.variable_scope(name):
                    logits[name] = self._top_single(output, name, features)
            return logits
        return self._top_single(body_output, "targets", features)

    def _top_single(self, body_output, feature_name, features):
        if not self._problem_hparams:
            logging.warning("Without problem_hparams, T2TModel.top is a passthrough.")
            return body_output
        modality = self._problem_hparams.modality[feature_name]
        vocab_size = self._padded_vocab_size(feature_name)
        name = self._modality_name(feature_name)
        with tf.compat.v1.variable_scope(name):
            info_once("Transforming body output with %s.top", name)
            top = self._hparams.top.get(feature_name, modalities.get_top(modality))
            last_only = (getattr(top, "pointwise", False) and self.is_predicting and
                         not self._hparams.get("force_full_predict"))
            targets = features.get("targets")
            if last_only:
                # Pointwise tops need only the position being decoded: the last one, or
                # `decode_loop_step` when decoding into a fixed-size buffer (TPU).
                if "decode_loop_step" in features:
                    step = tf.reshape(features["decode_loop_step"], [-1])[0]
                else:
                    step = shape_utils.shape_list(body_output)[1] - 1
                body_output = body_output[:, step:step + 1, :, :]
                if targets is not None:
                    targets = targets[:, step:step + 1, :, :]
            return top(body_output, targets, self._hparams, vocab_size)

    def loss(self, logits, features):
        """Loss of logits against features["targets"]: a (numerator, denominator) pair.

        With a dict of logits, the sum of each feature's num/den.
        """
        if isinstance(logits, dict):
            losses = {}
            for name, value in logits.items():
                losses[name] = self._loss_single(value, name, features[name],
                                                 weights=features.get(name + "_mask"))
                num, den = losses[name]
                if common_layers.should_generate_summaries():
                    tf.compat.v1.summary.scalar(name + "_loss", num / den)
                    tf.compat.v1.summary.scalar(name + "_loss_num", num)
                    tf.compat.v1.summary.scalar(name + "_loss_den", den)
            return tf.add_n([num / den for num, den in losses.values()])
        return self._loss_single(logits, "targets", features["targets"],
                                 weights=features.get("targets_mask"))

    def _loss_single(self, logits, feature_name, feature, weights=None):
        if not self._problem_hparams:
            logging.warning("Without problem_hparams, T2TModel.loss is 0.")
            return tf.constant(0.0), tf.constant(1.0)
        modality = self._problem_hparams.modality[feature_name]
        vocab_size = self._padded_vocab_size(feature_name)
        loss = self._hparams.loss.get(feature_name, modalities.get_loss(modality))
        # T2T looked up the "targets" weights for every feature; each feature uses its own.
        modality_weights_fn = self._hparams.weights_fn.get(
            feature_name, modalities.get_weights_fn(modality))
        weights_fn = modality_weights_fn
        if weights is not None:
            if "weights_fn" not in inspect.signature(loss).parameters:
                raise ValueError("explicit weights (%s_mask) were given but the loss of "
                                 "modality %s takes no weights_fn; drop the mask feature" %
                                 (feature_name, modality))

            def weights_fn(labels):
                modality_weights = modality_weights_fn(labels)
                explicit = weights
                if explicit.shape.ndims < modality_weights.shape.ndims:
                    explicit = shape_utils.expand_squeeze_to_nd(
                        explicit, modality_weights.shape.ndims)
                return tf.cast(explicit, modality_weights.dtype) * modality_weights

        if hasattr(self._problem, "task_list"):  # a MultiProblem: each task's loss
            if weights is not None:
                raise ValueError("explicit weights (%s_mask) are not supported when training "
                                 "a MultiProblem; drop the mask feature" % feature_name)
            num, den, summaries = multi_problem.aggregate_task_losses(
                self._hparams, self._problem_hparams, logits, feature_name, feature,
                problem=self._problem)
            if common_layers.should_generate_summaries():
                for name, value in summaries:
                    tf.compat.v1.summary.scalar(name, value)
            return num, den
        num, den = loss(logits, feature, self._hparams, vocab_size, weights_fn=weights_fn)
        num *= self._problem_hparams.loss_multiplier
        return num, den

    def _summarize_losses(self, losses_dict):
        model_summaries.summarize_losses(losses_dict)

    def optimize(self, loss, num_async_replicas=1, use_tpu=False, variables=None):
        """Train op minimizing `loss`; the learning rate is divided by sqrt(replicas)."""
        lr = learning_rate_lib.learning_rate_schedule(self._hparams)
        if num_async_replicas > 1:
            info_once("Dividing learning rate by num_async_replicas: %d",
                      num_async_replicas)
        lr /= math.sqrt(float(num_async_replicas))
        return optimize_lib.optimize(loss, lr, self._hparams, use_tpu=use_tpu,
                                     variables=variables)

    # ------------------------------------------------------------------ decoding
    def prepare_features_for_infer(self, features):
        """Hook run on the features before decoding (none by default)."""

    def infer(self, features=None, decode_length=50, beam_size=1, top_beams=1, alpha=0.0,
              use_tpu=False):
        """Decode: greedy (beam_size 1) or beam search, re-running the model each step.

        Args:
          features: {"inputs": int [B, L, 1, 1] (or [B, L])}; without inputs, a prompt in
            "inputs" or "targets" that the output continues.
          decode_length: positions to decode beyond the input (or prompt) length.
          beam_size, top_beams, alpha: beam search width, beams returned, length penalty.

        Returns:
          {"outputs": int32 [B, L'] (or [B, top_beams, L'] with top_beams > 1),
           "scores": float [B] (or [B, top_beams]): log-probability of each output}.
          Classification and real-valued targets always decode greedily.
        """
        if not self._problem_hparams:
            raise ValueError("infer needs problem_hparams; pass them to the model or call "
                             "t2t_model.add_problem_hparams(hparams, problem) first")
        features = dict(features or {})
        self.prepare_features_for_infer(features)
        if not self.has_input and beam_size > 1:
            logging.warning("Beam searching for a model with no inputs.")
        if not self.has_input and self._hparams.sampling_method != "random":
            logging.warning("Non-random sampling for a model with no inputs.")
        self.fill_problem_hparams_features(features)
        target_modality = self._problem_hparams.modality["targets"]
        if (_is_class_label(target_modality) or self.target_modality_is_real or
                self._problem_hparams.get("regression_targets")):
            beam_size = 1  # Nothing to search over for classes or real values.
        if beam_size == 1:
            logging.info("Greedy decoding")
            return self._greedy_infer(features, decode_length, use_tpu)
        logging.info("Beam decoding with beam size %d", beam_size)
        return self._beam_decode(features, decode_length, beam_size, top_beams, alpha,
                                 use_tpu)

    def _greedy_infer(self, features, decode_length, use_tpu=False):
        """Greedy decoding; models with a fast (cached) decoder override this."""
        del use_tpu  # The generic loop has dynamic shapes on every device.
        return self.slow_greedy_infer(features, decode_length)

    def slow_greedy_infer(self, features, decode_length):
        """Greedy or sampled decoding re-running the whole model for each new position.

        Returns {"outputs": int32 [B, L], "scores": [B], "logits", "losses"}, as `infer`.
        """
        return slow_decoding.slow_greedy_infer(self, features, decode_length)

    def _slow_greedy_infer(self, features, decode_length):
        """T2T's name and shape: `slow_greedy_infer` with "outputs" int32 [B, L, 1, 1],
        as T2T's slow path returned them (real-valued outputs are unchanged)."""
        results = dict(self.slow_greedy_infer(features, decode_length))
        if not self.target_modality_is_real:
            results["outputs"] = results["outputs"][:, :, tf.newaxis, tf.newaxis]
        return results

    def _beam_decode(self, features, decode_length, beam_size, top_beams, alpha,
                     use_tpu=False):
        """Beam search; models with a fast (cached) decoder override this."""
        return self.beam_decode_slow(features, decode_length, beam_size, top_beams, alpha,
                                      use_tpu)

    def beam_decode_slow(self, features, decode_length, beam_size, top_beams, alpha,
                          use_tpu=False):
        """Beam search re-running the model on the beam-expanded batch each step."""
        return slow_decoding.beam_decode_slow(self, features, decode_length, beam_size,
                                              top_beams, alpha, use_tpu)

    # T2T's names, which subclasses ported from T2T call.
    _fill_problem_hparams_features = fill_problem_hparams_features
    _beam_decode_slow = beam_decode_slow

    def sample(self, features):
        """Run the model and pick ids: (samples [B, L, 1, 1], logits, losses).

        `hparams.sampling_method` "argmax" takes the best id; "random" samples with
        `sampling_temp` among the `sampling_keep_top_k` best (-1: all).
        """
        logits, losses = self(features)
        if self.target_modality_is_real:
            return logits, logits, losses
        method = self._hparams.sampling_method
        if method == "argmax":
            samples = tf.argmax(logits, axis=-1)
        elif method == "random":
            samples = common_layers.sample_with_temperature(
                logits, self._hparams.sampling_temp, self._hparams.get("sampling_keep_top_k",
                                                                       -1))
        else:
            raise ValueError("unknown hparams.sampling_method %r; use argmax or random" %
                             method)
        return samples, logits, losses

    def eval_autoregressive(self, features=None, decode_length=50):
        """Logits and losses of greedy decoding (for `hparams.eval_run_autoregressive`)."""
        results = self.slow_greedy_infer(dict(features or {}), decode_length)
        return results["logits"], results["losses"]

    # ------------------------------------------------------------------ estimator
    @classmethod
    def estimator_model_fn(cls, hparams, features, labels, mode, config=None, params=None,
                           decode_hparams=None, use_tpu=False, use_xla=False):
        """An Estimator model_fn body: builds the model and returns its EstimatorSpec.

        TRAIN: loss and train op. EVAL: loss and the problem's metrics
        (`hparams.problem`). PREDICT: `infer` with decode_hparams' beam_size, alpha,
        extra_length and return_beams. With use_tpu, TPUEstimatorSpecs.
        """
        hparams = copy_hparams(hparams)
        data_parallelism = None
        if not use_tpu and config is not None:
            data_parallelism = getattr(config, "data_parallelism", None)
        model = cls(hparams, mode, data_parallelism=data_parallelism,
                    decode_hparams=decode_hparams)
        features = dict(features)

        if mode == _PREDICT:
            if use_tpu:
                model_specs.set_static_predict_shapes(features, model.hparams,
                                                      model._decode_hparams, params)
            return model.estimator_spec_predict(features, use_tpu=use_tpu)

        logits, labels, loss, losses_dict = model.logits_and_loss(features, labels,
                                                                  use_xla=use_xla)
        if mode == _EVAL:
            return model.estimator_spec_eval(features, logits, labels, loss, losses_dict,
                                             use_tpu=use_tpu)

        num_async_replicas = 1
        if config is not None and not use_tpu:
            device_info = getattr(config, "t2t_device_info", None) or {}
            num_async_replicas = device_info.get("num_async_replicas", 1)
        return model.estimator_spec_train(loss, num_async_replicas=num_async_replicas,
                                          use_tpu=use_tpu)

    def logits_and_loss(self, features, labels=None, use_xla=False):
        """(logits, labels, loss, losses) of TRAIN or EVAL, for both training backends.

        Builds the model on `features` (a dict this may update: models that generate
        their own targets replace `features["targets"]`); `loss` is the float32 sum of
        the `losses` dict ("training", "extra", ...), which is also summarized.

            logits, labels, loss, losses = model.logits_and_loss(features)
        """
        if self._hparams.get("eval_run_autoregressive") and self._hparams.mode == _EVAL:
            logits, losses_dict = self.eval_autoregressive(features)
        else:
            # XLA compiles the forward pass and (through the scope's gradient attributes)
            # its gradients: fused kernels, fewer memory round trips on CPU and GPU.
            with _xla_scope(use_xla):
                logits, losses_dict = self(features)

        # Models may generate their own targets: logits {"self_generated_targets", "logits"}.
        if isinstance(logits, dict) and "self_generated_targets" in logits:
            logging.info("Replacing targets with model-provided targets.")
            features["targets"] = labels = logits.pop("self_generated_targets")
            if list(logits) != ["logits"]:
                raise ValueError("with self_generated_targets the model must return only "
                                 "'logits' besides them; got %s" % sorted(logits))
            logits = logits["logits"]

        if labels is None:
            labels = features.get("targets")
        self._summarize_losses(losses_dict)
        loss = tf.add_n([tf.cast(losses_dict[key], tf.float32)
                         for key in sorted(losses_dict)])
        return logits, labels, loss, losses_dict

    @staticmethod
    def make_estimator_model_fn(model_name, hparams, decode_hparams=None, use_tpu=False,
                                use_xla=False):
        """`model_fn(features, labels, mode, params, config)` for the registered model.

        use_xla: compile the model's training and evaluation graph with XLA (T2T's
        `--xla_compile`); decoding is left to TensorFlow (its loops change shape).
        """
        model_cls = registry.model(model_name)

        def wrapping_model_fn(features, labels, mode, params=None, config=None):
            return model_cls.estimator_model_fn(hparams, features, labels, mode, config=config,
                                                params=params, decode_hparams=decode_hparams,
                                                use_tpu=use_tpu, use_xla=use_xla)

        return wrapping_model_fn

    def estimator_spec_train(self, loss, num_async_replicas=1, use_tpu=False):
        return model_specs.estimator_spec_train(self, loss, num_async_replicas, use_tpu)

    def estimator_spec_eval(self, features, logits, labels, loss, losses_dict, use_tpu=False):
        return model_specs.estimator_spec_eval(self, features, logits, labels, loss,
                                               losses_dict, use_tpu=use_tpu)

    def estimator_spec_predict(self, features, use_tpu=False):
        return model_specs.estimator_spec_predict(self, features, use_tpu)

    def predict_outputs(self, features, use_tpu=False):
        """(predictions, {signature: outputs}) of PREDICT, without tf.estimator
        (`model_predict.predict_outputs`); a model with other outputs overrides this."""
        return model_predict.predict_outputs(self, features, use_tpu=use_tpu)

    def initialize_from_ckpt(self, ckpt_dir):
        return model_specs.initialize_from_ckpt(ckpt_dir, self._hparams)
