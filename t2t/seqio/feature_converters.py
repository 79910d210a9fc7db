"""Feature converters: task features ("inputs", "targets") -> model features, padded or packed.

    ds = [{"inputs": [7, 8, 5, 1], "targets": [3, 9, 1]},
          {"inputs": [8, 4, 9, 3, 1], "targets": [4, 1]}]
    EncDecFeatureConverter(pack=True)(ds, {"inputs": 10, "targets": 7}) gives one row:
       "encoder_input_tokens": [7, 8, 5, 1, 8, 4, 9, 3, 1, 0],
        "encoder_segment_ids": [1, 1, 1, 1, 2, 2, 2, 2, 2, 0],
          "encoder_positions": [0, 1, 2, 3, 0, 1, 2, 3, 4, 0],
      "decoder_target_tokens": [3, 9, 1, 4, 1, 0, 0],
       "decoder_input_tokens": [0, 3, 9, 0, 4, 0, 0],
       "decoder_loss_weights": [1, 1, 1, 1, 1, 0, 0],
        "decoder_segment_ids": [1, 1, 1, 2, 2, 0, 0],
          "decoder_positions": [0, 1, 2, 0, 1, 0, 0]

A converter validates its input (features, dtypes, ranks, lengths <= the task lengths),
converts (`_convert_features`), and validates its output (exactly the model features, each
of exactly its model length). Subclasses define TASK_FEATURES, MODEL_FEATURES and
PACKING_FEATURE_DTYPES and implement `_convert_features` and `get_model_feature_lengths`.
Converters for decoder-only models (LM, PrefixLM, PrefixSuffixLM, Decoder) are in
decoder_feature_converters.py; all are exported here as in seqio.
"""
import abc
import dataclasses
import functools
from typing import Mapping, Optional, Sequence

import tensorflow as tf
from absl import logging

import t2t.seqio.packing as packing
import t2t.seqio.utils as utils

# seqio's backward-compatibility pointer.
autoregressive_inputs = utils.make_autoregressive_inputs


def _check_lengths(ds: tf.data.Dataset, expected_lengths: Mapping[str, int],
                   sequence_axis_mapping: Mapping[str, int], strict: bool,
                   error_label: str) -> tf.data.Dataset:
    """Attaches assertions: len(feature) == (strict) or <= expected length, at run time."""
    def check_length(feat, v):
        if feat not in expected_lengths:
            return v
        if strict:
            message = (f"Feature '{feat}' has length not equal to the expected length of "
                       f"{expected_lengths[feat]} during {error_label} validation")
            assertion = functools.partial(tf.debugging.assert_equal, message=message)
        else:
            message = (f"Feature '{feat}' has length not less than or equal to the expected "
                       f"length of {expected_lengths[feat]} during {error_label} validation")
            assertion = functools.partial(tf.debugging.assert_less_equal, message=message)
        expected = tf.constant(expected_lengths[feat], dtype=tf.int64)
        axis = sequence_axis_mapping[feat]
        if isinstance(v, tf.RaggedTensor):
            if strict:
                lengths = v.row_lengths(axis) * tf.constant([1], dtype=tf.int64)
                tf.debugging.Assert(  # seqio's wording, with the row lengths' values
                    tf.equal(tf.size(tf.unique(lengths)[0]), 1),
                    ["Strict length check requires all RaggedTensor dimensions to be equal, "
                     "got", v.row_lengths()], summarize=16)
            actual = v.bounding_shape(axis=axis, out_type=tf.int64)
        else:
            actual = tf.shape(v, out_type=tf.int64)[axis]
        with tf.control_dependencies([assertion(actual, expected)]):
            return tf.identity(v) if not isinstance(v, tf.RaggedTensor) else v

    return ds.map(lambda ex: {k: check_length(k, v) for k, v in ex.items()},
                  num_parallel_calls=tf.data.AUTOTUNE)


def non_padding_position(tensor: tf.Tensor, dtype: tf.dtypes.DType = tf.int32,
                         pad_id: int = 0) -> tf.Tensor:
    """1 on non-padding positions, 0 on padding: [3, 9, 0] -> [1, 1, 0]."""
    return tf.cast(tf.not_equal(tensor, pad_id), dtype=dtype)


def _check_exact_match(expected_features: Sequence[str], actual_features: Sequence[str],
                       expected_feature_source: str, actual_feature_source: str) -> None:
    expected, actual = set(expected_features), set(actual_features)
    if expected == actual:
        return
    if actual - expected:
        raise ValueError(f"The {actual_feature_source} contains extra features not specified "
                         f"in the {expected_feature_source}: {actual - expected}")
    raise ValueError(f"The {actual_feature_source} is missing features specified in the "
                     f"{expected_feature_source}: {expected - actual}")


class FeatureConverter(abc.ABC):
    """Base class: task features -> model features, with validation before and after.

    Args (of every converter):
      pack: pack several examples per row (else pad each example).
      use_custom_packing_ops: seqio's custom-op packing; in t2t, first-fit-decreasing
        packing (denser, no custom ops; see t2t.seqio.packing).
      apply_length_check: check feature lengths at run time.
      bos_id: the id decoder inputs start with.
      passthrough_features: {name: FeatureSpec} of features passed through unchanged
        (not with packing).
    """

    @dataclasses.dataclass(frozen=True)
    class FeatureSpec:
        """Rank and dtype of a feature."""

        dtype: tf.dtypes.DType
        rank: int = 1
        sequence_dim: int = 0

    TASK_FEATURES: Mapping[str, "FeatureConverter.FeatureSpec"]
    MODEL_FEATURES: Mapping[str, "FeatureConverter.FeatureSpec"]
    PACKING_FEATURE_DTYPES: Mapping[str, tf.dtypes.DType]

    def __init__(self, pack: bool = True, use_custom_packing_ops: bool = False,
                 apply_length_check: bool = True, bos_id: int = 0,
                 passthrough_features: Optional[Mapping[str, "FeatureConverter.FeatureSpec"]]
                 = None):
        self._pack = pack
        self._use_custom_packing_ops = use_custom_packing_ops
        self._apply_length_check = apply_length_check
        self._bos_id = bos_id
        if getattr(self, "TASK_FEATURES", None) is None:
            raise ValueError("TASK_FEATURES must be defined in the subclass.")
        if getattr(self, "MODEL_FEATURES", None) is None:
            raise ValueError("MODEL_FEATURES must be defined in the subclass.")
        if self.pack and getattr(self, "PACKING_FEATURE_DTYPES", None) is None:
            raise ValueError("PACKING_FEATURE_DTYPES must be defined in the subclass if "
                             "pack=True.")
        if passthrough_features is not None:
            if self.pack:
                raise ValueError("Packing is incompatible with pass-through features.")
            self._passthrough_features = passthrough_features
        else:
            self._passthrough_features = {}

    def _validate_dataset(self, ds: tf.data.Dataset,
                          expected_features: Mapping[str, "FeatureConverter.FeatureSpec"],
                          expected_lengths: Mapping[str, int], strict: bool,
                          error_label: str) -> tf.data.Dataset:
        """Checks presence, dtype and rank now, and lengths (== or <=) at run time."""
        element_spec = ds.element_spec
        for feat, spec in expected_features.items():
            if feat not in element_spec:
                raise ValueError(f"Dataset is missing an expected feature during {error_label} "
                                 f"validation: '{feat}'. Received {element_spec}, expected "
                                 f"{expected_features}.")
            if spec.dtype != element_spec[feat].dtype:
                raise ValueError(f"Dataset has incorrect type for feature '{feat}' during "
                                 f"{error_label} validation: Got "
                                 f"{element_spec[feat].dtype.name}, expected {spec.dtype.name}")
            if spec.rank != len(element_spec[feat].shape):
                raise ValueError(f"Dataset has incorrect rank for feature '{feat}' during "
                                 f"{error_label} validation: Got "
                                 f"{len(element_spec[feat].shape)}, expected {spec.rank}")
        axes = {feat: spec.sequence_dim for feat, spec in expected_features.items()}
        expected_lengths = {k: v for k, v in expected_lengths.items()
                            if k in expected_features and expected_features[k].rank != 0}
        if self._apply_length_check:
            ds = _check_lengths(ds, expected_lengths, axes, strict, error_label)
        else:
            logging.info("Length validation is skipped since `apply_length_check=False`")
        return ds

    def __call__(self, ds: tf.data.Dataset,
                 task_feature_lengths: Mapping[str, int]) -> tf.data.Dataset:
        """Validates `ds` and `task_feature_lengths`, converts, validates the result."""
        task_features = dict(self.TASK_FEATURES)
        task_features.update(self._passthrough_features)
        _check_exact_match(list(task_features), list(task_feature_lengths),
                           "TASK_FEATURES", "task_feature_lengths")
        ds = self._validate_dataset(ds, task_features, task_feature_lengths, strict=False,
                                    error_label="input_validation")
        ds = self._convert_features(ds, task_feature_lengths)

        expected_features = dict(self.MODEL_FEATURES)
        expected_features.update(self._passthrough_features)
        if self.pack:
            for k, v in expected_features.items():
                if v.rank != 1 and not self._use_custom_packing_ops:
                    raise ValueError("When packing is enabled, expected ranks must be 1 or "
                                     "use_custom_packing_ops must be set. Got expected rank "
                                     f"{v.rank} for feature {k}.")
            for k, v in self.PACKING_FEATURE_DTYPES.items():
                expected_features[k] = FeatureConverter.FeatureSpec(rank=1, dtype=v)
        model_feature_lengths = self.get_model_feature_lengths(task_feature_lengths)
        _check_exact_match(list(expected_features), list(model_feature_lengths),
                           "model_feature_names", "model_feature_lengths")
        ds = self._validate_dataset(ds, expected_features, model_feature_lengths, strict=True,
                                    error_label="output_validation")
        _check_exact_match(list(expected_features), list(ds.element_spec),
                           "model_feature_names", "output_dataset")
        return ds

    def _pack_or_pad(self, ds: tf.data.Dataset,
                     packed_lengths: Mapping[str, int]) -> tf.data.Dataset:
        if self.pack:
            return packing.trim_and_pack_dataset(ds, packed_lengths, self._use_custom_packing_ops)
        return utils.trim_and_pad_dataset(ds, packed_lengths)

    @abc.abstractmethod
    def _convert_features(self, ds: tf.data.Dataset,
                          task_feature_lengths: Mapping[str, int]) -> tf.data.Dataset:
        raise NotImplementedError

    @abc.abstractmethod
    def get_model_feature_lengths(self, task_feature_lengths: Mapping[str, int]
                                  ) -> Mapping[str, int]:
        raise NotImplementedError

    @property
    def pack(self) -> bool:
        return self._pack

    @property
    def bos_id(self) -> int:
        return self._bos_id


_INT32 = FeatureConverter.FeatureSpec(dtype=tf.int32)


class EncDecFeatureConverter(FeatureConverter):
    """Encoder-decoder: "inputs" -> encoder, "targets" -> decoder (see the module example).

    decoder_input_tokens are the targets shifted right (bos_id at each segment start) and
    decoder_loss_weights are 1 on non-padding targets.
    """

    TASK_FEATURES = {"inputs": _INT32, "targets": _INT32}
    MODEL_FEATURES = {"encoder_input_tokens": _INT32, "decoder_target_tokens": _INT32,
                      "decoder_input_tokens": _INT32, "decoder_loss_weights": _INT32}
    PACKING_FEATURE_DTYPES = {"encoder_segment_ids": tf.int32, "decoder_segment_ids": tf.int32,
                              "encoder_positions": tf.int32, "decoder_positions": tf.int32}

    def _convert_example(self, features: Mapping[str, tf.Tensor]) -> Mapping[str, tf.Tensor]:
        d = {
            "encoder_input_tokens": features["inputs"],
            "decoder_target_tokens": features["targets"],
            "decoder_input_tokens": utils.make_autoregressive_inputs(
                features["targets"], sequence_id=features.get("targets_segment_ids", None),
                bos_id=self.bos_id),
            "decoder_loss_weights": non_padding_position(features["targets"]),
        }
        d.update({k: features[k] for k in self._passthrough_features})
        if self.pack:
            d["encoder_segment_ids"] = features["inputs_segment_ids"]
            d["decoder_segment_ids"] = features["targets_segment_ids"]
            d["encoder_positions"] = features["inputs_positions"]
            d["decoder_positions"] = features["targets_positions"]
        return d

    def _convert_features(self, ds, task_feature_lengths):
        ds = self._pack_or_pad(ds, task_feature_lengths)
        return ds.map(self._convert_example, num_parallel_calls=tf.data.AUTOTUNE)

    def get_model_feature_lengths(self, task_feature_lengths):
        encoder_length = task_feature_lengths["inputs"]
        decoder_length = task_feature_lengths["targets"]
        lengths = {"encoder_input_tokens": encoder_length,
                   "decoder_target_tokens": decoder_length,
                   "decoder_input_tokens": decoder_length,
                   "decoder_loss_weights": decoder_length}
        for k in self._passthrough_features:
            lengths[k] = task_feature_lengths[k]
        if self.pack:
            lengths.update({"encoder_segment_ids": encoder_length,
                            "decoder_segment_ids": decoder_length,
                            "encoder_positions": encoder_length,
                            "decoder_positions": decoder_length})
        return lengths


class PrePackedEncDecFeatureConverter(EncDecFeatureConverter):
    """Encoder-decoder over examples already packed (with *_segment_ids/*_positions)."""

    TASK_FEATURES = {"inputs": _INT32, "targets": _INT32, "inputs_positions": _INT32,
                     "inputs_segment_ids": _INT32, "targets_positions": _INT32,
                     "targets_segment_ids": _INT32}
    MODEL_FEATURES = {"encoder_input_tokens": _INT32, "decoder_target_tokens": _INT32,
                      "decoder_input_tokens": _INT32, "decoder_loss_weights": _INT32,
                      "encoder_positions": _INT32, "encoder_segment_ids": _INT32,
                      "decoder_positions": _INT32, "decoder_segment_ids": _INT32}

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        if self.pack:
            raise ValueError("'pack=True' is not allowed in PrePackedEncDecFeatureConverter.")

    def _convert_features(self, ds, task_feature_lengths):
        def convert_example(features):
            return {
                "encoder_input_tokens": features["inputs"],
                "decoder_target_tokens": features["targets"],
                "decoder_input_tokens": utils.make_autoregressive_inputs(
                    features["targets"], sequence_id=features.get("targets_segment_ids"),
                    bos_id=self.bos_id),
                "decoder_loss_weights": non_padding_position(features["targets"]),
                "encoder_segment_ids": features["inputs_segment_ids"],
                "decoder_segment_ids": features["targets_segment_ids"],
                "encoder_positions": features["inputs_positions"],
                "decoder_positions": features["targets_positions"],
            }

        ds = utils.trim_and_pad_dataset(ds, task_feature_lengths)
        return ds.map(convert_example, num_parallel_calls=tf.data.AUTOTUNE)

    def get_model_feature_lengths(self, task_feature_lengths):
        encoder_length = task_feature_lengths["inputs"]
        decoder_length = task_feature_lengths["targets"]
        return {"encoder_input_tokens": encoder_length, "decoder_target_tokens": decoder_length,
                "decoder_input_tokens": decoder_length, "decoder_loss_weights": decoder_length,
                "encoder_segment_ids": encoder_length, "decoder_segment_ids": decoder_length,
                "encoder_positions": encoder_length, "decoder_positions": decoder_length}


class EncoderFeatureConverter(FeatureConverter):
    """Encoder-only (BERT-style MLM): loss on the positions where inputs == mask_id.

        ds = [{"inputs": [8, 9, 9, 3, 4, 1], "targets": [8, 7, 4, 3, 4, 1]},
              {"inputs": [8, 3, 9, 1], "targets": [8, 3, 6, 1]}]   (mask_id = 9)
        packed to 11:
         "encoder_input_tokens": [8, 9, 9, 3, 4, 1, 8, 3, 9, 1, 0],
        "encoder_target_tokens": [8, 7, 4, 3, 4, 1, 8, 3, 6, 1, 0],
          "encoder_segment_ids": [1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 0],
            "encoder_positions": [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 0],
         "encoder_loss_weights": [0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0]
    """

    TASK_FEATURES = {"inputs": _INT32, "targets": _INT32}
    MODEL_FEATURES = {"encoder_target_tokens": _INT32, "encoder_input_tokens": _INT32,
                      "encoder_loss_weights": _INT32}
    PACKING_FEATURE_DTYPES = {"encoder_segment_ids": tf.int32, "encoder_positions": tf.int32}

    def __init__(self, mask_id: int, **kwargs):
        self._mask_id = mask_id
        super().__init__(**kwargs)

    def _convert_features(self, ds, input_lengths):
        def convert_example(features):
            inputs = features["inputs"]
            d = {"encoder_input_tokens": inputs,
                 "encoder_target_tokens": features["targets"],
                 "encoder_loss_weights": tf.cast(tf.equal(inputs, self.mask_id), tf.int32)}
            if self.pack:
                d["encoder_segment_ids"] = features["inputs_segment_ids"]
                d["encoder_positions"] = features["inputs_positions"]
            return d

        ds = self._pack_or_pad(ds, input_lengths)
        return ds.map(convert_example, num_parallel_calls=tf.data.AUTOTUNE)

    def get_model_feature_lengths(self, task_feature_lengths):
        encoder_length = task_feature_lengths["inputs"]
        lengths = {"encoder_target_tokens": encoder_length,
                   "encoder_input_tokens": encoder_length,
                   "encoder_loss_weights": encoder_length}
        if self.pack:
            lengths["encoder_segment_ids"] = encoder_length
            lengths["encoder_positions"] = encoder_length
        return lengths

    @property
    def mask_id(self):
        return self._mask_id


class PassThroughFeatureConverter(FeatureConverter):
    """Returns the dataset unchanged (no validation, padding or packing)."""

    def __init__(self, **unused_kwargs):  # pylint: disable=super-init-not-called
        pass

    def __call__(self, ds, task_feature_lengths):
        del task_feature_lengths
        return ds

    def _convert_features(self, ds, task_feature_lengths):
        """Unused."""

    def get_model_feature_lengths(self, task_feature_lengths):
        """Unused."""


class PrePackedLMFeatureConverter(PassThroughFeatureConverter):
    """Keeps the decoder batch features of pre-packed LM examples, with static lengths."""

    BATCH_FEATURES = ("decoder_input_tokens", "decoder_loss_weights", "decoder_positions",
                      "decoder_segment_ids", "decoder_target_tokens")

    def _length(self, task_feature_lengths):
        return task_feature_lengths["targets"]

    def __call__(self, ds, task_feature_lengths):
        length = self._length(task_feature_lengths)

        def set_shape_and_filter(ex):
            out = {}
            for feature in self.BATCH_FEATURES:
                value = ex[feature]
                value.set_shape([length])
                out[feature] = value
            return out

        return ds.map(set_shape_and_filter, num_parallel_calls=tf.data.AUTOTUNE)


class PrePackedPrefixLMFeatureConverter(PrePackedLMFeatureConverter):
    """Prefix-LM variant: also keeps decoder_causal_attention; length inputs + targets."""

    BATCH_FEATURES = PrePackedLMFeatureConverter.BATCH_FEATURES + ("decoder_causal_attention",)

    def _length(self, task_feature_lengths):
        return task_feature_lengths["inputs"] + task_feature_lengths["targets"]


# ------------------------------------------------------------------- decoder-only models
class LMFeatureConverter(FeatureConverter):
    """Decoder-only language model over "targets".

        ds = [{"targets": [3, 9, 1]}, {"targets": [4, 1]}], packed to 6:
        "decoder_target_tokens": [3, 9, 1, 4, 1, 0],
         "decoder_input_tokens": [0, 3, 9, 0, 4, 0],
         "decoder_loss_weights": [1, 1, 1, 1, 1, 0],
            "decoder_positions": [0, 1, 2, 0, 1, 0],
          "decoder_segment_ids": [1, 1, 1, 2, 2, 0]
    """

    TASK_FEATURES = {"targets": _INT32}
    MODEL_FEATURES = {"decoder_target_tokens": _INT32, "decoder_input_tokens": _INT32,
                      "decoder_loss_weights": _INT32}
    PACKING_FEATURE_DTYPES = {"decoder_segment_ids": tf.int32, "decoder_positions": tf.int32}

    def _convert_example(self, features: Mapping[str, tf.Tensor]) -> Mapping[str, tf.Tensor]:
        d = {
            "decoder_target_tokens": features["targets"],
            "decoder_input_tokens": utils.make_autoregressive_inputs(
                features["targets"], sequence_id=features.get("targets_segment_ids", None),
                bos_id=self.bos_id),
            "decoder_loss_weights": non_padding_position(features["targets"]),
        }
        if self.pack:
            d["decoder_segment_ids"] = features["targets_segment_ids"]
            d["decoder_positions"] = features["targets_positions"]
        return d

    def _convert_features(self, ds, task_feature_lengths):
        ds = self._pack_or_pad(ds, task_feature_lengths)
        return ds.map(self._convert_example, num_parallel_calls=tf.data.AUTOTUNE)

    def get_model_feature_lengths(self, task_feature_lengths):
        decoder_length = task_feature_lengths["targets"]
        lengths = {"decoder_target_tokens": decoder_length,
                   "decoder_input_tokens": decoder_length,
                   "decoder_loss_weights": decoder_length}
        if self.pack:
            lengths["decoder_segment_ids"] = decoder_length
            lengths["decoder_positions"] = decoder_length
        return lengths


class PrefixLMFeatureConverter(LMFeatureConverter):
    """Decoder-only model over inputs + targets concatenated; inputs attend fully.

        ds = [{"inputs": [7, 8, 5, 1], "targets": [3, 9, 1]},
              {"inputs": [8, 4, 9, 3, 1], "targets": [4, 1]}]
        task_feature_lengths = {"inputs": 7, "targets": 8}, packed:
           "decoder_target_tokens": [7, 8, 5, 1, 3, 9, 1, 8, 4, 9, 3, 1, 4, 1, 0],
            "decoder_input_tokens": [0, 7, 8, 5, 1, 3, 9, 0, 8, 4, 9, 3, 1, 4, 0],
            "decoder_loss_weights": [0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0],
               "decoder_positions": [0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0],
             "decoder_segment_ids": [1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 0],
        "decoder_causal_attention": [1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0]

    decoder_causal_attention is 1 on the inputs and one position more (where the last
    input is read and the first target predicted); with `loss_on_targets_only` the loss
    weights are 1 on the targets only. The model length is inputs + targets.
    """

    TASK_FEATURES = {"inputs": _INT32, "targets": _INT32}
    MODEL_FEATURES = {"decoder_target_tokens": _INT32, "decoder_input_tokens": _INT32,
                      "decoder_loss_weights": _INT32, "decoder_causal_attention": _INT32}
    PACKING_FEATURE_DTYPES = {"decoder_segment_ids": tf.int32, "decoder_positions": tf.int32}

    def __init__(self, loss_on_targets_only: bool = True, **kwargs) -> None:
        self._loss_on_targets_only = loss_on_targets_only
        super().__init__(**kwargs)

    def _convert_example(self, features):
        d = dict(super()._convert_example(features))
        if self.pack:
            positions = features["targets_positions"]
        else:
            positions = tf.range(tf.size(features["targets"]))
        d["decoder_causal_attention"] = tf.cast(positions < features["inputs_width_add_pos"],
                                                dtype=features["targets"].dtype)
        if self.loss_on_targets_only:
            # XOR of (position < inputs width) and (not padding) leaves the targets.
            inputs = positions < features["inputs_width"]
            padding_mask = tf.cast(d["decoder_loss_weights"], dtype=tf.bool)
            d["decoder_loss_weights"] = tf.cast(tf.math.logical_xor(inputs, padding_mask),
                                                dtype=features["targets"].dtype)
        d.update({k: features[k] for k in self._passthrough_features})
        return d

    def _concat_and_add_masks(self, features):
        inputs = features["inputs"]
        targets = features["targets"]
        # An example without targets gets one padding target.
        targets = tf.cond(tf.size(targets) > 0, lambda: targets,
                          lambda: tf.zeros(1, dtype="int32"))
        width = tf.size(inputs)
        total = tf.size(inputs) + tf.size(targets)
        d = {"targets": tf.concat([inputs, targets], axis=-1),
             "inputs_width": tf.fill([total], width),
             "inputs_width_add_pos": tf.fill([total], width + 1)}
        d.update({k: features[k] for k in self._passthrough_features})
        return d

    def _concat_task_feature_lengths(self, task_feature_lengths):
        concat_length = sum(v for k, v in task_feature_lengths.items()
                            if k not in self._passthrough_features)
        lengths = {"targets": concat_length, "inputs_width": concat_length,
                   "inputs_width_add_pos": concat_length}
        for k in self._passthrough_features:
            lengths[k] = task_feature_lengths[k]
        return lengths

    def _convert_features(self, ds, task_feature_lengths):
        def swap_inputs_width(ex, old_val, new_val):
            width = ex["inputs_width"]
            ex["inputs_width"] = tf.where(tf.equal(width, old_val),
                                          tf.fill([tf.size(width)], new_val), width)
            return ex

        ds = ds.map(self._concat_and_add_masks, num_parallel_calls=tf.data.AUTOTUNE)
        lengths = self._concat_task_feature_lengths(task_feature_lengths)
        # An inputs width of 0 would read as padding when packing: -1 stands in for it.
        ds = ds.map(functools.partial(swap_inputs_width, old_val=0, new_val=-1),
                    num_parallel_calls=tf.data.AUTOTUNE)
        ds = self._pack_or_pad(ds, lengths)
        ds = ds.map(functools.partial(swap_inputs_width, old_val=-1, new_val=0),
                    num_parallel_calls=tf.data.AUTOTUNE)
        return ds.map(self._convert_example, num_parallel_calls=tf.data.AUTOTUNE)

    def get_model_feature_lengths(self, task_feature_lengths):
        decoder_length = sum(v for k, v in task_feature_lengths.items()
                             if k not in self._passthrough_features)
        lengths = dict(super().get_model_feature_lengths({"targets": decoder_length}))
        lengths["decoder_causal_attention"] = decoder_length
        for k in self._passthrough_features:
            lengths[k] = task_feature_lengths[k]
        return lengths

    @property
    def loss_on_targets_only(self) -> bool:
        return self._loss_on_targets_only


class PrefixSuffixLMFeatureConverter(PrefixLMFeatureConverter):
    """Prefix LM over inputs + targets + suffixes; `target_suffix_weights` marks suffixes.

        ds = [{"inputs": [9, 4, 6], "targets": [3, 9], "suffixes": [2, 1]},
              {"inputs": [3, 2], "targets": [4], "suffixes": []}]
        "decoder_target_tokens": [9, 4, 6, 3, 9, 2, 1, 3, 2, 4, 0, ...],
        "target_suffix_weights": [0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, ...],  (no suffix: targets)
    """

    TASK_FEATURES = {"inputs": _INT32, "targets": _INT32, "suffixes": _INT32}
    MODEL_FEATURES = {"decoder_target_tokens": _INT32, "decoder_input_tokens": _INT32,
                      "decoder_loss_weights": _INT32, "decoder_causal_attention": _INT32,
                      "target_suffix_weights": _INT32}
    PACKING_FEATURE_DTYPES = {"decoder_segment_ids": tf.int32, "decoder_positions": tf.int32}

    def _convert_example(self, features):
        d = dict(super()._convert_example(features))
        d["target_suffix_weights"] = tf.cast(tf.equal(features["target_suffix_weights"], 2),
                                             dtype=d["decoder_loss_weights"].dtype)
        return d

    def _concat_and_add_masks(self, features):
        inputs, targets, suffixes = features["inputs"], features["targets"], features["suffixes"]
        target_suffixes = tf.concat([targets, suffixes], axis=0)
        target_suffixes = tf.cond(tf.size(target_suffixes) > 0, lambda: target_suffixes,
                                  lambda: tf.zeros(1, dtype="int32"))
        width = tf.size(inputs)
        total = tf.size(inputs) + tf.size(target_suffixes)
        with_suffix = tf.concat([tf.ones_like(inputs), tf.ones_like(targets),
                                 tf.fill([tf.size(suffixes)], 2)], axis=-1)
        without_suffix = tf.concat([tf.ones_like(inputs),
                                    tf.fill([tf.size(target_suffixes)], 2)], axis=-1)
        weights = tf.cond(tf.size(suffixes) > 0, lambda: with_suffix, lambda: without_suffix)
        return {"targets": tf.concat([inputs, target_suffixes], axis=-1),
                "inputs_width": tf.fill([total], width),
                "inputs_width_add_pos": tf.fill([total], width + 1),
                "target_suffix_weights": weights}

    def get_model_feature_lengths(self, task_feature_lengths):
        decoder_length = sum(task_feature_lengths.values())
        lengths = dict(LMFeatureConverter.get_model_feature_lengths(
            self, {"targets": decoder_length}))
        lengths["decoder_causal_attention"] = decoder_length
        lengths["target_suffix_weights"] = decoder_length
        return lengths

    def _concat_task_feature_lengths(self, task_feature_lengths):
        concat_length = sum(task_feature_lengths.values())
        return {"targets": concat_length, "inputs_width": concat_length,
                "inputs_width_add_pos": concat_length, "target_suffix_weights": concat_length}


class DecoderFeatureConverter(FeatureConverter):
    """LM, PrefixLM or PrefixSuffixLM by the task features: "suffixes" -> PrefixSuffixLM,
    "inputs" -> PrefixLM, else LM."""

    TASK_FEATURES = {"targets": _INT32}
    MODEL_FEATURES = {"decoder_target_tokens": _INT32, "decoder_input_tokens": _INT32,
                      "decoder_loss_weights": _INT32, "decoder_causal_attention": _INT32}
    PACKING_FEATURE_DTYPES = {"decoder_segment_ids": tf.int32, "decoder_positions": tf.int32}

    def __init__(self, loss_on_targets_only: bool = True, pack: bool = True,
                 use_custom_packing_ops: bool = False, apply_length_check: bool = True,
                 bos_id: int = 0,
                 passthrough_features: Optional[Mapping[str, FeatureConverter.FeatureSpec]]
                 = None) -> None:
        self._loss_on_targets_only = loss_on_targets_only
        super().__init__(pack=pack, use_custom_packing_ops=use_custom_packing_ops,
                         apply_length_check=apply_length_check, bos_id=bos_id,
                         passthrough_features=passthrough_features)
        common = dict(pack=pack, use_custom_packing_ops=use_custom_packing_ops,
                      apply_length_check=apply_length_check, bos_id=bos_id)
        self.prefixlm_feature_converter = PrefixLMFeatureConverter(
            loss_on_targets_only=loss_on_targets_only, passthrough_features=passthrough_features,
            **common)
        self.strictlm_feature_converter = LMFeatureConverter(**common)
        self.prefixsuffixlm_feature_converter = PrefixSuffixLMFeatureConverter(
            loss_on_targets_only=loss_on_targets_only, **common)

    def _delegate(self, task_feature_lengths):
        if "suffixes" in task_feature_lengths:
            return self.prefixsuffixlm_feature_converter
        if "inputs" in task_feature_lengths:
            return self.prefixlm_feature_converter
        return self.strictlm_feature_converter

    def __call__(self, ds, task_feature_lengths):
        return self._delegate(task_feature_lengths)(ds, task_feature_lengths)

    def _convert_features(self, ds, task_feature_lengths):
        raise NotImplementedError("DecoderFeatureConverter delegates; call it instead.")

    def get_model_feature_lengths(self, task_feature_lengths):
        return self._delegate(task_feature_lengths).get_model_feature_lengths(
            task_feature_lengths)


class GrainFeatureConverter(FeatureConverter):
    """seqio's base for Grain pipelines (t2t has no Grain): subclasses implement
    `get_grain_transforms`."""

    def get_grain_transforms(self, task_feature_lengths: Mapping[str, int], batch_size: int):
        raise NotImplementedError("Need to implement the `get_grain_transforms` method which "
                                  "returns grain.Transformations.")
