"""Preprocessors: rekey, tokenize (+ *_pretokenized), EOS handling, truncation, formats."""
import functools

import tensorflow as tf

from t2t import seqio
from t2t.seqio import preprocessors
from t2t.seqio.test_utils import assert_dataset

BYTES = seqio.ByteVocabulary()
FEATURES = {"inputs": seqio.Feature(BYTES, add_eos=False), "targets": seqio.Feature(BYTES)}


def test_rekey():
    ds = tf.data.Dataset.from_tensors({"foo": "x", "bar": "y"})
    assert_dataset(preprocessors.rekey(ds, {"boo": "foo", "spar": "bar", "empty": None}),
                   {"boo": "x", "spar": "y", "empty": ""})
    assert_dataset(preprocessors.rekey(ds), {"foo": "x", "bar": "y"})


def test_tokenize_copies_pretokenized_and_passes_others():
    ds = tf.data.Dataset.from_tensors({"inputs": "hi", "targets": "é", "other": "o"})
    assert_dataset(preprocessors.tokenize(ds, FEATURES), {
        "inputs": [107, 108], "inputs_pretokenized": "hi", "targets": [198, 172],
        "targets_pretokenized": "é", "other": "o"})
    assert_dataset(preprocessors.tokenize(ds, FEATURES, copy_pretokenized=False),
                   {"inputs": [107, 108], "targets": [198, 172], "other": "o"})
    # EOS only where Feature.add_eos.
    assert_dataset(preprocessors.tokenize_and_append_eos(ds, FEATURES, False),
                   {"inputs": [107, 108], "targets": [198, 172, 1], "other": "o"})


def test_append_eos_and_after_trim():
    ds = tf.data.Dataset.from_tensors({"inputs": [4, 5, 6, 7], "targets": [4, 5, 6, 7]})
    assert_dataset(preprocessors.append_eos(ds, FEATURES),
                   {"inputs": [4, 5, 6, 7], "targets": [4, 5, 6, 7, 1]})
    assert_dataset(preprocessors.append_eos_after_trim(ds, FEATURES, {"targets": 3}),
                   {"inputs": [4, 5, 6, 7], "targets": [4, 5, 1]})
    ragged = tf.data.Dataset.from_tensors({"targets": tf.ragged.constant([[4, 5], [6]])})
    out = next(iter(preprocessors.append_eos(ragged, FEATURES)))
    assert out["targets"].to_list() == [[4, 5, 1], [6, 1]]


def test_truncate_inputs_left_and_formats():
    ds = tf.data.Dataset.from_tensors({"inputs": [1, 2, 3, 4], "targets": [5]})
    assert_dataset(preprocessors.truncate_inputs_left(ds, sequence_length={"inputs": 2}),
                   {"inputs": [3, 4], "targets": [5]})
    text = tf.data.Dataset.from_tensors({"text": "abc", "label": "x"})
    assert_dataset(preprocessors.preprocess_tensorflow_examples(
        text, "Summarize: {text}", "{label}!"), {"inputs": "Summarize: abc", "targets": "x!"})


def test_apply_feature_converter_as_preprocessor():
    ds = tf.data.Dataset.from_tensors({"targets": tf.constant([3, 1])})
    out = preprocessors.apply_feature_converter(
        ds, {"targets": 4}, seqio.LMFeatureConverter(pack=False))
    assert next(out.as_numpy_iterator())["decoder_input_tokens"].tolist() == [0, 3, 1, 0]


def test_task_passes_sequence_length_and_output_features_only_when_named():
    """seqio's rule: preprocessors get sequence_length / output_features by signature."""
    seen = {}

    def wants_both(ds, sequence_length, output_features):
        seen["both"] = (dict(sequence_length), sorted(output_features))
        return ds

    def wants_length(ds, sequence_length=None):
        seen["length"] = sequence_length
        return ds

    def wants_nothing(ds):
        seen["nothing"] = True
        return ds

    @seqio.map_over_dataset(num_seeds=1)
    def seeded(ex, seed, sequence_length):
        seen["seeded"] = sequence_length
        return {**ex, "noise": tf.random.stateless_uniform([], seed=seed)}

    source = seqio.FunctionDataSource(
        lambda split, shuffle_files, seed=None: tf.data.Dataset.from_tensors({"targets": "ab"}),
        splits=["train"])
    task = seqio.Task("rule", source, {"targets": seqio.Feature(BYTES)},
                      preprocessors=[wants_both, wants_length, wants_nothing,
                                     preprocessors.tokenize, seeded])
    ds = task.get_dataset({"targets": 5}, shuffle=False, seed=3)
    first = [ex["noise"] for ex in ds.as_numpy_iterator()]
    assert seen == {"both": ({"targets": 5}, ["targets"]), "length": {"targets": 5},
                    "nothing": True, "seeded": {"targets": 5}}
    again = [ex["noise"] for ex in task.get_dataset({"targets": 5}, shuffle=False,
                                                    seed=3).as_numpy_iterator()]
    other = [ex["noise"] for ex in task.get_dataset({"targets": 5}, shuffle=False,
                                                    seed=4).as_numpy_iterator()]
    assert first == again != other
