"""Preprocessors for SeqIO Tasks (seqio 0.0.20's names and signatures).

A Task runs its preprocessors in order; each receives `sequence_length` and
`output_features` only if its signature names them:

    preprocessors=[
        functools.partial(rekey, key_map={"inputs": "question", "targets": "answer"}),
        tokenize,        # {"inputs": "a b"} -> {"inputs": [9, 12], "inputs_pretokenized": "a b"}
        append_eos,      # [9, 12] -> [9, 12, 1] where Feature.add_eos
    ]
"""
import functools
import re
from typing import Dict, Mapping, Optional

import tensorflow as tf

import t2t.seqio.feature_converters as feature_converters
import t2t.seqio.utils as utils

OutputFeaturesType = Mapping[str, utils.Feature]
SequenceLengthType = Mapping[str, int]


@utils.map_over_dataset
def rekey(x, key_map=None):
    """Renames features: key_map {"new": "old"}; an empty/None old key gives "".

    {"foo": "x", "bar": "y"} with key_map={"boo": "foo", "spar": "bar"} ->
    {"boo": "x", "spar": "y"}. Without key_map the example is unchanged.
    """
    if key_map:
        return {new_key: x[old_key] if old_key else "" for new_key, old_key in key_map.items()}
    return x


def tokenize(dataset: tf.data.Dataset, output_features: OutputFeaturesType,
             copy_pretokenized: bool = True, with_eos: bool = False) -> tf.data.Dataset:
    """Encodes the output features with their vocabularies (others pass unchanged).

    With `copy_pretokenized`, the text is kept as "<key>_pretokenized"; with `with_eos`,
    EOS is appended where `Feature.add_eos` (to the last item of rank > 1 features).
    """
    tokenize_fn = functools.partial(tokenize_impl, output_features=output_features,
                                    copy_pretokenized=copy_pretokenized, with_eos=with_eos)
    # seqio uses 256 parallel calls against head-of-line blocking by slow tokenizations.
    return utils.map_over_dataset(fn=tokenize_fn, num_parallel_calls=256)(dataset)


def tokenize_impl(features: Mapping[str, tf.Tensor], output_features: OutputFeaturesType,
                  copy_pretokenized: bool = True, with_eos: bool = False
                  ) -> Mapping[str, tf.Tensor]:
    """`tokenize` for one example."""
    ret = {}
    for k, v in features.items():
        if k in output_features:
            if copy_pretokenized:
                ret[f"{k}_pretokenized"] = v
            vocab = output_features[k].vocabulary
            v = vocab.encode_tf(v)
            if with_eos and output_features[k].add_eos:
                v = tf.expand_dims(v, 0)
                if isinstance(v, tf.Tensor):
                    v = tf.RaggedTensor.from_tensor(v)
                eos_shape = tf.concat([v.bounding_shape()[:-2], [1, 1]], axis=0)
                eos_id = tf.broadcast_to(tf.cast(vocab.eos_id, v.dtype), eos_shape)
                last_in_sequence = tf.concat([v[..., -1:, :], eos_id], axis=-1)
                v = tf.concat([v[..., :-1, :], last_in_sequence], axis=-2)
                v = v[0]
        ret[k] = v
    return ret


def tokenize_and_append_eos(dataset: tf.data.Dataset, output_features: OutputFeaturesType,
                            copy_pretokenized: bool = True) -> tf.data.Dataset:
    """`tokenize` with `with_eos=True`."""
    return tokenize(dataset, output_features, copy_pretokenized, with_eos=True)


@utils.map_over_dataset
def print_dataset(features, summarize=3):
    """Prints every feature as examples pass (for debugging)."""
    return {k: tf.keras.backend.print_tensor(v, f"{k}: ", summarize=summarize)
            for k, v in features.items()}


def append_eos(dataset: tf.data.Dataset,
               output_features: OutputFeaturesType) -> tf.data.Dataset:
    """Appends EOS to output features whose `Feature.add_eos` is True: [9, 12] -> [9, 12, 1]."""
    def maybe_add_eos(key, value):
        if key not in output_features or not output_features[key].add_eos:
            return value
        return _append_to_innermost_axis(value, output_features[key].vocabulary.eos_id)

    return dataset.map(lambda ex: {k: maybe_add_eos(k, v) for k, v in ex.items()},
                       num_parallel_calls=tf.data.AUTOTUNE)


def append_eos_after_trim(dataset: tf.data.Dataset, output_features: OutputFeaturesType,
                          sequence_length: Optional[SequenceLengthType] = None
                          ) -> tf.data.Dataset:
    """Trims to sequence_length - 1, then appends EOS, so features always end in EOS.

    [4, 5, 6, 7] with sequence_length 3 -> [4, 5, 1].
    """
    trim_fn = functools.partial(append_eos_after_trim_impl, output_features=output_features,
                                sequence_length=sequence_length)
    return utils.map_over_dataset(fn=trim_fn)(dataset)


def append_eos_after_trim_impl(features: Dict[str, tf.Tensor],
                               output_features: OutputFeaturesType,
                               sequence_length: Optional[SequenceLengthType] = None
                               ) -> Dict[str, tf.Tensor]:
    """`append_eos_after_trim` for one example."""
    for key, value in features.items():
        if key in output_features and output_features[key].add_eos:
            eos_id = output_features[key].vocabulary.eos_id
            if sequence_length is not None and sequence_length.get(key, None) is not None:
                value = value[..., :sequence_length[key] - 1]
            features[key] = _append_to_innermost_axis(value, eos_id)
    return features


def _append_to_innermost_axis(tensor, scalar):
    """[1, 2, 3] -> [1, 2, 3, s]; [[1, 2], [3, 4]] -> [[1, 2, s], [3, 4, s]]; ragged too."""
    if isinstance(tensor, tf.RaggedTensor):
        if tensor.shape.rank > 2:
            return tensor.with_values(_append_to_innermost_axis(tensor.values, scalar))
        return tf.concat([tensor, tf.fill([tensor.nrows(), 1],
                                          tf.cast(scalar, tensor.dtype))], axis=1)
    ndims = tf.rank(tensor)
    paddings = tf.concat([tf.zeros((ndims - 1, 2), dtype=tf.int32), tf.constant([[0, 1]])],
                         axis=0)
    return tf.pad(tensor, paddings=paddings, constant_values=tf.cast(scalar, tensor.dtype))


@utils.map_over_dataset
def truncate_inputs_left(example, sequence_length):
    """Keeps the last sequence_length["inputs"] tokens of "inputs" (drops from the left)."""
    if sequence_length is None or "inputs" not in sequence_length:
        return example
    example["inputs"] = example["inputs"][-sequence_length["inputs"]:]
    return example


def apply_feature_converter(dataset: tf.data.Dataset, sequence_length: Dict[str, int],
                            feature_converter: feature_converters.FeatureConverter
                            ) -> tf.data.Dataset:
    """Runs a feature converter as a preprocessor (e.g. to pack before caching)."""
    return feature_converter(dataset, sequence_length)


@utils.map_over_dataset
def preprocess_tensorflow_examples(example, inputs_format, targets_format):
    """{"inputs", "targets"} from format strings over the example's fields.

    inputs_format "Summarize: {text}" with {"text": "abc"} -> "Summarize: abc".
    """
    def format_fields(format_string, ex):
        names = ex.keys()
        pattern = "(" + "|".join(re.escape("{%s}" % name) for name in names) + ")"
        parts = []
        for part in re.split(pattern, format_string):
            name = part[1:-1]
            parts.append(ex[name] if part.startswith("{") and name in names else part)
        return tf.strings.join(parts)

    return {"inputs": format_fields(inputs_format, example),
            "targets": format_fields(targets_format, example)}
