"""t2t.tydiqa.records: pure-Python tf.train.Example bytes equal TensorFlow's protos."""
import numpy as np
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.data import generator_utils
from t2t.tydiqa import records

INT64 = st.integers(-(2 ** 63), 2 ** 63 - 1)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text("abcxyz_", min_size=1, max_size=8),
                       st.lists(INT64, min_size=1, max_size=40), max_size=6))
def test_same_example_as_tensorflow(features):
    ours = tf.train.Example.FromString(records.serialize_int64_example(features))
    assert ours == generator_utils.to_example(features)


def test_window_shaped_features_parse():
    window = {"inputs": np.arange(512, dtype=np.int64) + 0xE000,
              "byte_start": np.full(512, -1, dtype=np.int64),
              "example_id": np.array([-(2 ** 63) + 3], dtype=np.int64)}
    parsed = tf.io.parse_single_example(
        records.serialize_int64_example(window),
        {"inputs": tf.io.FixedLenFeature([512], tf.int64),
         "byte_start": tf.io.FixedLenFeature([512], tf.int64),
         "example_id": tf.io.FixedLenFeature([], tf.int64)})
    assert parsed["inputs"].numpy().tolist() == window["inputs"].tolist()
    assert (parsed["byte_start"].numpy() == -1).all()
    assert int(parsed["example_id"]) == -(2 ** 63) + 3
