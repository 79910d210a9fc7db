"""Tests for t2t.data.packing: the NumPy planner and the tf.data packer."""
import collections

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t.data import data_reader
from t2t.data import packing


def make_dataset(examples, keys=("inputs", "targets"), dtype=np.int64, extra=False):
    """A dataset of dicts of 1-D int tensors from [(inputs, targets), ...] lists.

    With `extra`, each example also has a float feature "weights" (not packed).
    """
    def generate():
        for example in examples:
            features = {k: np.asarray(v, dtype) for k, v in zip(keys, example)}
            if extra:
                features["weights"] = np.ones([len(example[0])], np.float32)
            yield features
    signature = {k: tf.TensorSpec([None], tf.as_dtype(dtype)) for k in keys}
    if extra:
        signature["weights"] = tf.TensorSpec([None], tf.float32)
    return tf.data.Dataset.from_generator(generate, output_signature=signature)


def rows_of(dataset):
    return [{k: v.numpy() for k, v in row.items()} for row in dataset]


def unpack(rows, keys=("inputs", "targets")):
    """Examples back from packed rows, as tuples of token tuples; checks the row layout."""
    examples = []
    for row in rows:
        segments = set()
        for key in keys:
            seg = row[key + "_segmentation"]
            used = seg > 0
            # Tokens fill a prefix of the row; padding (segment 0) only at the end.
            assert not np.any(used[np.argmin(used):]) or used.all()
            segments.update(seg[used].tolist())
        # Segments are numbered 1..k with no gaps.
        assert segments == set(range(1, len(segments) + 1))
        for segment in sorted(segments):
            parts = []
            for key in keys:
                mask = row[key + "_segmentation"] == segment
                position = row[key + "_position"][mask]
                np.testing.assert_array_equal(position, np.arange(mask.sum()))
                parts.append(tuple(row[key][mask].tolist()))
            examples.append(tuple(parts))
    return examples


def test_hand_built_row_exact():
    examples = [([3, 4, 1], [5, 1]), ([6, 1], [7, 8, 9, 1])]
    rows = rows_of(packing.pack_dataset(make_dataset(examples), 8))
    assert len(rows) == 1
    row = rows[0]
    np.testing.assert_array_equal(row["inputs"], [3, 4, 1, 6, 1, 0, 0, 0])
    np.testing.assert_array_equal(row["inputs_segmentation"], [1, 1, 1, 2, 2, 0, 0, 0])
    np.testing.assert_array_equal(row["inputs_position"], [0, 1, 2, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(row["targets"], [5, 1, 7, 8, 9, 1, 0, 0])
    np.testing.assert_array_equal(row["targets_segmentation"], [1, 1, 2, 2, 2, 2, 0, 0])
    np.testing.assert_array_equal(row["targets_position"], [0, 1, 0, 1, 2, 3, 0, 0])


def test_example_joins_a_row_only_if_all_features_fit():
    # Inputs of the 2nd example would fit beside the 1st (3 + 3 <= 6), targets would not
    # (5 + 2 > 6), so it needs its own row.
    examples = [([1, 2, 3], [1, 2, 3, 4, 5]), ([4, 5, 6], [6, 7])]
    rows = rows_of(packing.pack_dataset(make_dataset(examples), 6))
    assert len(rows) == 2
    np.testing.assert_array_equal(rows[0]["inputs"], [1, 2, 3, 0, 0, 0])
    np.testing.assert_array_equal(rows[0]["targets"], [1, 2, 3, 4, 5, 0])
    np.testing.assert_array_equal(rows[1]["inputs"], [4, 5, 6, 0, 0, 0])
    np.testing.assert_array_equal(rows[1]["targets_segmentation"], [1, 1, 0, 0, 0, 0])


def test_first_fit_decreasing_beats_next_fit():
    # Next-fit (T2T's greedy order) makes 3 rows of [5], [5, 4], [4]; first-fit-decreasing
    # pairs each 5 with a 4: 2 full rows.
    examples = [([1] * 5,), ([2] * 5,), ([3] * 4,), ([4] * 4,)]
    rows = rows_of(packing.pack_dataset(make_dataset(examples, keys=("targets",)), 9))
    assert len(rows) == 2
    # Inside a row examples keep their input order; rows come in order of first example.
    np.testing.assert_array_equal(rows[0]["targets"], [1] * 5 + [3] * 4)
    np.testing.assert_array_equal(rows[1]["targets"], [2] * 5 + [4] * 4)
    np.testing.assert_array_equal(rows[1]["targets_segmentation"], [1] * 5 + [2] * 4)
    np.testing.assert_array_equal(rows[1]["targets_position"], [0, 1, 2, 3, 4, 0, 1, 2, 3])


def test_long_examples_are_truncated_and_empty_ones_dropped():
    examples = [([1, 2, 3, 4, 5, 6, 7], [8, 9]), ([], []), ([5], [6, 7, 8, 9, 10, 11])]
    rows = rows_of(packing.pack_dataset(make_dataset(examples), 4))
    assert sorted(unpack(rows)) == sorted([((1, 2, 3, 4), (8, 9)), ((5,), (6, 7, 8, 9))])


@pytest.mark.parametrize("extra", [False, True])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_zeros_inside_and_at_the_end_of_a_sequence_are_kept(extra, dtype):
    examples = [([0, 5, 0], [7, 0]), ([3], [0])]
    dataset = make_dataset(examples, dtype=dtype, extra=extra)
    rows = rows_of(packing.pack_dataset(dataset, 6, keys=["inputs", "targets"]))
    assert len(rows) == 1
    np.testing.assert_array_equal(rows[0]["inputs"], [0, 5, 0, 3, 0, 0])
    np.testing.assert_array_equal(rows[0]["inputs_segmentation"], [1, 1, 1, 2, 0, 0])
    np.testing.assert_array_equal(rows[0]["targets_segmentation"], [1, 1, 2, 0, 0, 0])
    assert rows[0]["inputs"].dtype == dtype


def test_padding_sentinel():
    assert int(packing.padding_sentinel(tf.int64)) == -2**63
    assert int(packing.padding_sentinel(tf.int32)) == -2**31


def test_empty_feature_keeps_segment_ids_aligned():
    # An example with no inputs still takes a segment number, so the segments of inputs
    # and targets of the next example match (T2T numbered each feature on its own).
    examples = [([], [5, 1]), ([6, 1], [7, 1])]
    rows = rows_of(packing.pack_dataset(make_dataset(examples), 8))
    assert len(rows) == 1
    np.testing.assert_array_equal(rows[0]["inputs_segmentation"], [2, 2, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(rows[0]["targets_segmentation"], [1, 1, 2, 2, 0, 0, 0, 0])


def test_static_shapes_dtypes_and_dropped_features():
    def generate():
        yield {"inputs": np.array([1, 2], np.int32), "targets": np.array([3], np.int32),
               "extra": np.array([9.0], np.float32)}
    dataset = tf.data.Dataset.from_generator(generate, output_signature={
        "inputs": tf.TensorSpec([None], tf.int32), "targets": tf.TensorSpec([None], tf.int32),
        "extra": tf.TensorSpec([None], tf.float32)})
    packed = packing.pack_dataset(dataset, 5, keys=["inputs", "targets"])
    spec = packed.element_spec
    assert sorted(spec) == sorted(["inputs", "inputs_segmentation", "inputs_position",
                                   "targets", "targets_segmentation", "targets_position"])
    assert all(s.shape.as_list() == [5] for s in spec.values())
    assert spec["inputs"].dtype == tf.int32
    assert spec["inputs_position"].dtype == tf.int64
    assert spec["targets_segmentation"].dtype == tf.int64


def test_deterministic():
    rng = np.random.RandomState(3)
    examples = [(rng.randint(1, 50, rng.randint(1, 30)), rng.randint(1, 50, rng.randint(1, 30)))
                for _ in range(300)]
    first = rows_of(packing.pack_dataset(make_dataset(examples), 32, window_size=64))
    second = rows_of(packing.pack_dataset(make_dataset(examples), 32, window_size=64))
    assert len(first) == len(second)
    for a, b in zip(first, second):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])


def test_window_size_one_gives_one_example_per_row():
    examples = [([1, 2], [3]), ([4], [5]), ([6], [7, 8])]
    rows = rows_of(packing.pack_dataset(make_dataset(examples), 8, window_size=1))
    assert [r["targets_segmentation"].max() for r in rows] == [1, 1, 1]
    assert unpack(rows) == [((1, 2), (3,)), ((4,), (5,)), ((6,), (7, 8))]


def test_data_reader_exports_pack_dataset():
    assert data_reader.pack_dataset is packing.pack_dataset


@pytest.mark.parametrize("kwargs, message", [
    ({"length": 0}, "length must be a positive int"),
    ({"length": 8, "keys": ["nope"]}, "no feature 'nope'"),
    ({"length": 8, "keys": []}, "keys is empty"),
    ({"length": 8, "window_size": 0}, "window_size must be >= 1"),
])
def test_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        packing.pack_dataset(make_dataset([([1], [2])]), **kwargs)


def test_rejects_non_sequence_and_already_packed_features():
    matrix = tf.data.Dataset.from_tensor_slices({"targets": np.ones([2, 3, 4], np.int64)})
    with pytest.raises(ValueError, match="only 1-D sequence features"):
        packing.pack_dataset(matrix, 8)
    packed = packing.pack_dataset(make_dataset([([1], [2])]), 4)
    with pytest.raises(ValueError, match="already packed"):
        packing.pack_dataset(packed, 8)


def test_packing_plan_worked_example():
    row, segment, offsets, num_rows = packing.packing_plan(np.array([[3, 2], [2, 4]]), 8)
    assert row.tolist() == [0, 0]
    assert segment.tolist() == [1, 2]
    assert offsets.tolist() == [[0, 0], [3, 2]]
    assert num_rows == 1
    assert packing._first_fit_decreasing(np.array([[5, 2], [3, 6], [4, 1]]), 8).tolist() == [
        0, 0, 1]


def check_plan(lengths, length):
    """Asserts the plan's invariants; returns the number of rows."""
    lengths = np.asarray(lengths, np.int64).reshape(len(lengths), -1)
    row, segment, offsets, num_rows = packing.packing_plan(lengths, length)
    clipped = np.minimum(lengths, length)
    nonempty = clipped.max(axis=1) > 0
    assert np.all((row >= 0) == nonempty)
    assert np.all(segment[~nonempty] == 0)
    assert set(row[nonempty].tolist()) == set(range(int(num_rows)))
    first_rows = [row[i] for i in np.flatnonzero(nonempty)]
    # Rows are numbered in the order of their first example.
    assert [r for r in dict.fromkeys(first_rows)] == sorted(set(first_rows))
    for r in range(int(num_rows)):
        members = np.flatnonzero(row == r)  # ascending: input order
        assert segment[members].tolist() == list(range(1, len(members) + 1))
        for column in range(lengths.shape[1]):
            sizes = clipped[members, column]
            assert sizes.sum() <= length
            expected = np.concatenate([[0], np.cumsum(sizes)[:-1]])
            assert offsets[members, column].tolist() == expected.tolist()
    return int(num_rows)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=60),
       st.integers(1, 32))
def test_packing_plan_invariants(lengths, length):
    if not lengths:
        lengths = [(0, 0)]
    num_rows = check_plan(lengths, length)
    clipped = np.minimum(np.asarray(lengths), length)
    # Never more rows than examples, never fewer than the tokens need.
    assert num_rows <= int((clipped.max(axis=1) > 0).sum())
    assert num_rows >= int(np.ceil(clipped.sum(axis=0).max() / length))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.integers(0, 12), min_size=3, max_size=3), min_size=1, max_size=30),
       st.integers(4, 16))
def test_packing_plan_invariants_three_features(lengths, length):
    check_plan(lengths, length)


def test_packing_plan_fills_rows_on_a_realistic_mix():
    rng = np.random.RandomState(0)
    inputs = np.clip(np.round(rng.lognormal(np.log(24), 0.7, 2048)), 3, 256)
    targets = np.clip(np.round(inputs * np.exp(rng.normal(0, 0.12, 2048))), 3, 256)
    lengths = np.stack([inputs, targets], axis=1).astype(np.int64)
    num_rows = check_plan(lengths, 256)
    efficiency = lengths.sum() / (num_rows * 2 * 256)
    assert efficiency >= 0.97


sequence = st.lists(st.integers(1, 99), max_size=20)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(sequence, sequence), min_size=1, max_size=25), st.integers(1, 24),
       st.integers(1, 8), st.booleans())
def test_unpacking_gives_back_the_examples(examples, length, window_size, extra):
    # extra=True packs a subset of the features, which reads lengths in a per-example map
    # instead of from the padding sentinel.
    dataset = make_dataset(examples, extra=extra)
    rows = rows_of(packing.pack_dataset(dataset, length, keys=["inputs", "targets"],
                                        window_size=window_size))
    expected = [(tuple(a[:length]), tuple(b[:length])) for a, b in examples if a or b]
    assert collections.Counter(unpack(rows)) == collections.Counter(expected)
    for row in rows:
        assert all(value.shape == (length,) for value in row.values())
        for key in ("inputs", "targets"):
            # Padding is exactly where the segment is 0.
            np.testing.assert_array_equal(row[key] == 0, row[key + "_segmentation"] == 0)


def test_pack_rows_worked_example():
    tokens, segments, positions = packing.pack_rows(
        np.array([[2], [1]]), [np.array([[7, 8], [9, 0]], np.int32)], 4)
    assert tokens.dtype == np.int32
    assert tokens.tolist() == [[7, 8, 9, 0]]
    assert segments.tolist() == [[1, 1, 2, 0]]
    assert positions.tolist() == [[0, 1, 0, 0]]


def test_pack_dataset_in_graph_mode():
    with tf.Graph().as_default():
        dataset = packing.pack_dataset(make_dataset([([3, 1], [4, 1]), ([5, 1], [6, 7, 1])]), 6)
        row = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        with tf.compat.v1.Session() as session:
            value = session.run(row)
    np.testing.assert_array_equal(value["targets"], [4, 1, 6, 7, 1, 0])
    np.testing.assert_array_equal(value["inputs_segmentation"], [1, 1, 2, 2, 0, 0])


# ------------------------------------------------- T2T's packing names in generator_utils
def _rows(dataset):
    return [{k: v.tolist() for k, v in row.items()} for row in dataset.as_numpy_iterator()]


def test_generator_utils_exposes_t2t_packing_names():
    from t2t.problems import generator_utils
    examples = {"inputs": [[8, 7, 1], [2, 3, 4, 1]], "targets": [[4, 1], [5, 6, 1]]}
    dataset = tf.data.Dataset.from_generator(
        lambda: ({"inputs": np.array(i, np.int64), "targets": np.array(t, np.int64)}
                 for i, t in zip(examples["inputs"], examples["targets"])),
        output_signature={"inputs": tf.TensorSpec([None], tf.int64),
                          "targets": tf.TensorSpec([None], tf.int64)})
    rows = _rows(generator_utils.pack_dataset(dataset, 10, keys=["inputs", "targets"]))
    assert rows == _rows(generator_utils._pack_with_custom_ops(dataset, ["inputs", "targets"], 10))
    assert len(rows) == 1
    assert rows[0]["inputs"] == [8, 7, 1, 2, 3, 4, 1, 0, 0, 0]
    assert rows[0]["inputs_segmentation"] == [1, 1, 1, 2, 2, 2, 2, 0, 0, 0]
    assert rows[0]["targets_position"] == [0, 1, 0, 1, 2, 0, 0, 0, 0, 0]
    assert generator_utils.INDEX_DTYPE == tf.int32


def test_sequence_dataset_packer_dicts_tuples_and_chopping():
    from t2t.problems import generator_utils
    packer = generator_utils.SequenceDatasetPacker(packed_length=6)
    tuples = tf.data.Dataset.from_generator(
        lambda: iter([(np.array([3, 4, 1], np.int64),), (np.array([5, 1], np.int64),)]),
        output_signature=(tf.TensorSpec([None], tf.int64),))
    rows = _rows(packer(tuples, window_size=16, cycle_length=2))
    assert rows == [{"contents": [[3], [4], [1], [5], [1], [0]],
                     "segment": [[1], [1], [1], [2], [2], [0]],
                     "position": [[0], [1], [2], [0], [1], [0]]}]
    long = tf.data.Dataset.from_tensor_slices({"targets": [[1, 2, 3, 4, 5, 6, 7, 8]]})
    chopped = generator_utils.SequenceDatasetPacker(packed_length=3, chop_long_sequences=True)
    pieces = [row["targets"] for row in _rows(chopped(long, keys=["targets"]))]
    assert sorted(token for piece in pieces for token in piece if token) == list(range(1, 9))
    with pytest.raises(ValueError, match="spacing=2 is not supported"):
        generator_utils.SequenceDatasetPacker(spacing=2)
