"""`t2t.data.record_windows`: serialized examples parsed a window at a time give the same
windows and the same batches as the per-example dataset."""
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t.core.modes import ModeKeys
from t2t.data import data_reader, packing, windows
from t2t.data.record_windows import RecordWindows
from t2t.layers import common_hparams

SPEC = {"inputs": tf.io.VarLenFeature(tf.int64), "targets": tf.io.VarLenFeature(tf.int64),
        "batch_prediction_key": tf.io.FixedLenFeature([1], tf.int64, default_value=0)}


def serialize(inputs, targets, key=None):
    feature = {"inputs": tf.train.Feature(int64_list=tf.train.Int64List(value=inputs)),
               "targets": tf.train.Feature(int64_list=tf.train.Int64List(value=targets))}
    if key is not None:
        feature["batch_prediction_key"] = tf.train.Feature(
            int64_list=tf.train.Int64List(value=[key]))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def records_of(pairs):
    return tf.data.Dataset.from_tensor_slices(
        tf.constant([serialize(i, t, n) for n, (i, t) in enumerate(pairs)], tf.string))


def hparams(**values):
    hp = common_hparams.basic_params1()
    hp.batch_size, hp.max_length, hp.batch_shuffle_size = 24, 12, 0
    hp.min_length_bucket, hp.length_bucket_step = 2, 1.5
    for name, value in values.items():
        setattr(hp, name, value)
    return hp


def batches(dataset, hp, mode=ModeKeys.TRAIN):
    out = data_reader.input_fn(dataset, "unused", False, True, 1, hp.max_length, mode, hp,
                               prevent_repeat=True)
    return sorted((tuple(f["inputs"].shape), tuple(f["targets"].shape),
                   f["inputs"].numpy().tobytes(), f["targets"].numpy().tobytes())
                  for f, _ in out)


def test_docstring_windows():
    rw = RecordWindows(records_of([([3, 0, 1], [4, 1]), ([5, 1], [6, 7, 8, 1])]), SPEC)
    assert rw.element_spec["targets"] == tf.TensorSpec([None], tf.int64)
    (features, lengths), = list(rw.measured_windows(2048, 0, 256))
    sentinel = np.iinfo(np.int64).min
    assert features["inputs"].numpy().tolist() == [[3, 0, 1], [5, 1, sentinel]]
    assert features[windows.LENGTH_PREFIX + "targets"].numpy().tolist() == [2, 4]
    assert features["batch_prediction_key"].numpy().tolist() == [[0], [1]]
    assert lengths.numpy().tolist() == [3, 4]
    # Out of [min_length, max_length]: dropped.
    (features, lengths), = list(rw.measured_windows(2048, 0, 3))
    assert lengths.numpy().tolist() == [3] and features["inputs"].shape[0] == 1


def test_examples_are_what_decoding_one_record_gives():
    pairs = [([3, 0, 1], [4, 1]), ([], [6, 7, 8, 1])]
    got = list(RecordWindows(records_of(pairs), SPEC).examples().as_numpy_iterator())
    assert [g["inputs"].tolist() for g in got] == [[3, 0, 1], []]
    assert [g["targets"].tolist() for g in got] == [[4, 1], [6, 7, 8, 1]]


def test_same_windows_as_the_per_example_dataset():
    rng = np.random.RandomState(3)
    pairs = [(rng.randint(0, 5, rng.randint(0, 9)).tolist(),
              rng.randint(0, 5, rng.randint(1, 9)).tolist()) for _ in range(50)]
    rw = RecordWindows(records_of(pairs), SPEC)
    got = list(rw.measured_windows(16, 2, 7))
    want = list(windows.measured_windows(rw.examples(), 16, 2, 7))
    assert len(got) == len(want) == 4
    for (got_features, got_lengths), (want_features, want_lengths) in zip(got, want):
        np.testing.assert_array_equal(got_lengths, want_lengths)
        assert sorted(got_features) == sorted(want_features)
        for name, value in want_features.items():
            np.testing.assert_array_equal(got_features[name], value, err_msg=name)


@settings(max_examples=8, deadline=None)
@given(lengths=st.lists(st.tuples(st.integers(0, 14), st.integers(1, 14)), min_size=1,
                        max_size=60),
       token_batching=st.sampled_from(["buckets", "sorted"]),
       mode=st.sampled_from([ModeKeys.TRAIN, ModeKeys.EVAL]))
def test_input_fn_batches_equal_the_per_example_ones(lengths, token_batching, mode):
    # Tokens include 0 (a token inside a sequence, padding only after it).
    pairs = [([0] * a, [n % 5] * b) for n, (a, b) in enumerate(lengths)]
    hp = hparams(token_batching=token_batching)
    rw = RecordWindows(records_of(pairs), SPEC)
    assert batches(rw, hp, mode) == batches(rw.examples(), hp, mode)


@settings(max_examples=10, deadline=None)
@given(lengths=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), min_size=1,
                        max_size=40),
       window_size=st.integers(1, 16))
def test_packed_rows_equal_pack_dataset_of_the_examples(lengths, window_size):
    pairs = [([n % 3] * a, [7] * b) for n, (a, b) in enumerate(lengths)]
    rw = RecordWindows(records_of(pairs), SPEC)
    keys = ["inputs", "targets"]
    got = list(rw.packed(8, keys, window_size).as_numpy_iterator())
    want = list(packing.pack_dataset(rw.examples(), 8, keys=keys,
                                     window_size=window_size).as_numpy_iterator())
    assert len(got) == len(want)
    for got_row, want_row in zip(got, want):
        assert sorted(got_row) == sorted(want_row)
        for name, value in want_row.items():
            np.testing.assert_array_equal(got_row[name], value, err_msg=name)
    # Every token is in some row (lengths over 8 are truncated, as pack_dataset does).
    assert sum(int(np.count_nonzero(row["targets_segmentation"])) for row in got) == \
        sum(min(b, 8) for _, b in lengths)


def test_packed_names_a_feature_it_cannot_pack():
    rw = RecordWindows(records_of([([1], [1])]), SPEC)
    with pytest.raises(ValueError, match="'outputs' is not a 1-D sequence.*inputs, targets"):
        rw.packed(8, ["outputs"])
    with pytest.raises(ValueError, match="length must be a positive int"):
        rw.packed(0, ["targets"])


def test_other_strategies_read_the_examples():
    pairs = [([2] * (n % 7), [3] * (1 + n % 5)) for n in range(30)]
    hp = hparams(use_fixed_batch_size=True, batch_size=4)
    rw = RecordWindows(records_of(pairs), SPEC)
    assert batches(rw, hp) == batches(rw.examples(), hp)
    assert len(batches(rw, hp)) == 8


def test_record_steps_and_transform():
    pairs = [([n + 2], [n + 3, 1]) for n in range(6)]

    def reverse(features):
        features = dict(features)
        features["inputs"], features["targets"] = features["targets"], features["inputs"]
        return features

    rw = RecordWindows(records_of(pairs), SPEC, transform=reverse).skip(1).take(3).repeat(2)
    got = [ex["targets"].tolist() for ex in rw.examples().as_numpy_iterator()]
    assert got == [[3], [4], [5]] * 2
    (features, _), = list(rw.measured_windows(100, 0, 100))
    assert features[windows.LENGTH_PREFIX + "targets"].numpy().tolist() == [1] * 6
    shuffled = RecordWindows(records_of(pairs), SPEC).shuffle(6, seed=1)
    assert sorted(ex["inputs"].tolist() for ex in shuffled.examples().as_numpy_iterator()) \
        == [[n + 2] for n in range(6)]


def test_bad_arguments_say_what_was_expected():
    with pytest.raises(ValueError, match="scalar serialized examples"):
        RecordWindows(tf.data.Dataset.range(3), SPEC)
    with pytest.raises(ValueError, match="VarLenFeature or FixedLenFeature.*'targets'"):
        RecordWindows(records_of([([1], [1])]), {"targets": tf.io.RaggedFeature(tf.int64)})
