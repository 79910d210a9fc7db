"""`tf.train.Example` bytes for int64 features, in pure Python + numpy (no TensorFlow).

Worker processes serialize their windows with this, so the parent only writes records
(TensorFlow's proto building in the parent was the bottleneck of datagen):

    data = serialize_int64_example({"inputs": [5, 6, 0], "example_id": [-2 ** 62]})
    tf.train.Example.FromString(data)     # == generator_utils.to_example({...})

The wire format: Example{1: Features{1: repeated MapEntry{1: key, 2: Feature{3:
Int64List{1: packed varints}}}}}; negative values are 10-byte two's-complement varints, as
protobuf writes int64. Keys are written in sorted order, so the bytes are deterministic.
"""
import numpy as np

_SHIFTS = np.arange(0, 70, 7, dtype=np.uint64)
_COLUMNS = np.arange(10)
_THRESHOLDS = np.array([1 << (7 * k) for k in range(10)], dtype=np.uint64)


def varint(value):
    """One protobuf varint (int64 semantics for negatives)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def packed_varints(values):
    """The varints of an int64 array, concatenated (vectorized).

        packed_varints([1, 300, -1]) == b"\x01\xac\x02" + b"\xff" * 9 + b"\x01"
    """
    v = np.asarray(values, dtype=np.int64).reshape(-1)
    if len(v) == 1:
        return varint(int(v[0]))
    if not len(v):
        return b""
    if v.min() >= 0 and v.max() < 0x80:
        return v.astype(np.uint8).tobytes()  # masks, segment ids: one byte each
    v = v.view(np.uint64)
    # Only as many 7-bit groups as the largest value needs (10 for negatives).
    columns = (int(v.max()).bit_length() + 6) // 7
    thresholds = _THRESHOLDS[1:columns]
    nbytes = 1 + (v[:, None] >= thresholds[None, :]).sum(axis=1)
    groups = ((v[:, None] >> _SHIFTS[None, :columns]) & np.uint64(0x7F)).astype(np.uint8)
    index = _COLUMNS[None, :columns]
    groups |= (index < (nbytes - 1)[:, None]).astype(np.uint8) << 7
    return groups[index < nbytes[:, None]].tobytes()


def _field(number, payload):
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def serialize_int64_example(features):
    """{name: int or int sequence / array} -> serialized tf.train.Example bytes."""
    entries = []
    for name in sorted(features):
        feature = _field(3, _field(1, packed_varints(features[name])))
        entries.append(_field(1, _field(1, name.encode("utf-8")) + _field(2, feature)))
    return _field(1, b"".join(entries))
