"""`tf.train.Example` bytes for int64 features, in pure Python + numpy (no TensorFlow).

Worker processes serialize their windows with this, so the parent only writes records
(TensorFlow's proto building in the parent was the bottleneck of datagen):

    data = serialize_int64_example({"inputs": [5, 6, 0], "example_id": [-2 ** 62]})
    tf.train.Example.FromString(data)     # == generator_utils.to_example({...})

The wire format is written by `t2t.data.example_bytes` (keys sorted: deterministic bytes).
"""
from t2t.data.example_bytes import int64_feature, serialize_example


def serialize_int64_example(features):
    """{name: int or int sequence / array} -> serialized tf.train.Example bytes."""
    return serialize_example({name: int64_feature(values) for name, values in features.items()})
