"""t2t.data.example_bytes: tf.train.Example bytes without TensorFlow equal TensorFlow's."""
import numpy as np
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.data import example_bytes

INT64 = st.integers(-(2 ** 63), 2 ** 63 - 1)
FLOAT32 = st.floats(width=32, allow_nan=False)
NAMES = st.text("abcxyz_", min_size=1, max_size=8)


def _tf_feature(kind, values):
    if kind == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


_VALUES = {"int64": st.lists(INT64, max_size=20), "float": st.lists(FLOAT32, max_size=20),
           "bytes": st.lists(st.binary(max_size=10), max_size=5)}
_WRITERS = {"int64": example_bytes.int64_feature, "float": example_bytes.float_feature,
            "bytes": example_bytes.bytes_feature}


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(NAMES, st.sampled_from(sorted(_VALUES)).flatmap(
    lambda kind: st.tuples(st.just(kind), _VALUES[kind])), max_size=5))
def test_same_example_as_tensorflow(features):
    ours = example_bytes.serialize_example(
        {name: _WRITERS[kind](values) for name, (kind, values) in features.items()})
    expected = tf.train.Example(features=tf.train.Features(feature={
        name: _tf_feature(kind, values) for name, (kind, values) in features.items()}))
    assert tf.train.Example.FromString(ours) == expected


def test_bytes_are_deterministic_and_canonical():
    features = {"b": example_bytes.int64_feature(np.array([1, 300])),
                "a": example_bytes.float_feature([0.5])}
    data = example_bytes.serialize_example(features)
    # Keys sorted, so the bytes equal protobuf's deterministic serialization.
    expected = tf.train.Example(features=tf.train.Features(feature={
        "a": _tf_feature("float", [0.5]), "b": _tf_feature("int64", [1, 300])}))
    assert data == expected.SerializeToString(deterministic=True)
    assert example_bytes.packed_varints([0, 1, 127, 128, 300]) == b"\x00\x01\x7f\x80\x01\xac\x02"
    assert example_bytes.packed_varints([-1]) == b"\xff" * 9 + b"\x01"
    assert example_bytes.varint(300) == b"\xac\x02"
    assert example_bytes.varint(-1) == b"\xff" * 9 + b"\x01"
