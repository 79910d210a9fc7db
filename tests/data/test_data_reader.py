"""Tests for t2t.data.data_reader: batching scheme, helpers and input_fn paths."""
import bisect
import collections
import os
import random
import types

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from input_fn_testing import hparams, make_dataset, make_examples, run_input_fn, unbatch

from t2t.core.modes import ModeKeys
from t2t.data import batching, data_reader, windows
from t2t.data import packing

TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL
PREDICT = ModeKeys.PREDICT

BOUNDARIES_256 = [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22, 24, 26, 28, 30, 33,
                  36, 39, 42, 46, 50, 55, 60, 66, 72, 79, 86, 94, 103, 113, 124, 136, 149, 163,
                  179, 196, 215, 236]
BATCH_SIZES_4096 = [420, 420, 315, 315, 315, 315, 252, 252, 252, 210, 210, 210, 180, 180, 140,
                    140, 140, 126, 105, 105, 105, 90, 84, 70, 70, 63, 60, 45, 45, 45, 42, 36,
                    36, 30, 30, 21, 21, 21, 20, 18, 15, 15]
# OEIS A002182, for an independent check of the window rounding.
HIGHLY_COMPOSITE = [1, 2, 4, 6, 12, 24, 36, 48, 60, 120, 180, 240, 360, 720, 840, 1260, 1680,
                    2520, 5040, 7560, 10080, 15120, 20160, 25200, 27720, 45360, 50400, 55440,
                    83160, 110880, 166320, 221760, 277200, 332640, 498960, 554400, 665280,
                    720720, 1081080, 1441440]


# ----------------------------------------------------------------------------- scheme
def test_bucket_boundaries():
    assert data_reader._bucket_boundaries(256) == BOUNDARIES_256
    assert data_reader.bucket_boundaries(20, 8, 1.2) == [8, 9, 10, 12, 14, 16, 19]
    assert data_reader.bucket_boundaries(8) == []
    with pytest.raises(ValueError, match="length_bucket_step must be > 1.0"):
        data_reader.bucket_boundaries(100, 8, 1.0)


def test_batching_scheme_4096_tokens_256_long():
    scheme = data_reader.batching_scheme(4096, 256, 8, 1.1)
    assert scheme["boundaries"] == BOUNDARIES_256
    assert len(scheme["boundaries"]) == 41
    assert scheme["batch_sizes"] == BATCH_SIZES_4096
    assert scheme["window_size"] == 1260
    assert scheme["shuffle_queue_size"] == 3 * (1260 // 15)
    assert scheme["max_length"] == 10**9
    assert scheme["min_length"] == 0
    assert data_reader.batching_scheme(4096, 256, 8, 1.1, drop_long_sequences=True)[
        "max_length"] == 256
    assert data_reader._batching_scheme is data_reader.batching_scheme


def reference_scheme(batch_size, max_length, min_bucket, step, shards=1, length_mult=1):
    """The T2T formulas written out with the OEIS table, for cross-checking."""
    max_length = max_length or batch_size
    edges, x = [], min_bucket
    while x < max_length:
        edges.append(x)
        x = max(x + 1, int(x * step))
    edges = [e * length_mult for e in edges]
    sizes = [max(1, batch_size // n) for n in edges + [max_length * length_mult]]
    window = max(h for h in HIGHLY_COMPOSITE if h <= 3 * max(sizes))
    sizes = [max(d for d in range(1, window + 1) if window % d == 0 and d <= s) for s in sizes]
    return edges, [s * shards for s in sizes], window * shards


@pytest.mark.parametrize("batch_size, max_length, min_bucket, step, shards, length_mult", [
    (4096, 256, 8, 1.1, 1, 1), (2048, 0, 8, 1.1, 1, 1), (1024, 100, 4, 1.3, 2, 1),
    (8192, 512, 8, 1.1, 4, 2), (64, 64, 8, 1.5, 1, 1), (300000, 64, 1, 2.0, 1, 1)])
def test_batching_scheme_matches_formulas(batch_size, max_length, min_bucket, step, shards,
                                          length_mult):
    scheme = data_reader.batching_scheme(batch_size, max_length, min_bucket, step,
                                         shard_multiplier=shards,
                                         length_multiplier=length_mult)
    edges, sizes, window = reference_scheme(batch_size, max_length, min_bucket, step, shards,
                                            length_mult)
    assert scheme["boundaries"] == edges
    assert scheme["batch_sizes"] == sizes
    assert scheme["window_size"] == window
    assert all(window % size == 0 for size in sizes)


def test_batching_scheme_rejects_max_below_min():
    with pytest.raises(ValueError, match="max_length .* is below min_length"):
        data_reader.batching_scheme(4096, 10, 8, 1.1, min_length=20)


def test_highly_composite_numbers_by_brute_force():
    limit = 6000
    counts = np.zeros(limit + 1, np.int64)
    for d in range(1, limit + 1):
        counts[d::d] += 1
    record, expected = 0, []
    for n in range(1, limit + 1):
        if counts[n] > record:
            record = counts[n]
            expected.append(n)
    assert data_reader._highly_composite_numbers(limit) == expected
    assert data_reader._highly_composite_numbers(1441440) == HIGHLY_COMPOSITE


def test_hparams_to_batching_scheme():
    hp = hparams(max_length=256, min_length=2)
    scheme = data_reader.hparams_to_batching_scheme(hp, shard_multiplier=2)
    assert scheme["boundaries"] == BOUNDARIES_256
    assert scheme["batch_sizes"] == [2 * s for s in BATCH_SIZES_4096]
    assert scheme["min_length"] == 2


# ----------------------------------------------------------------------------- helpers
def test_example_length_and_valid_size():
    example = {"inputs": tf.zeros([5], tf.int64), "targets": tf.zeros([7], tf.int64),
               "label": tf.constant(3)}
    assert int(data_reader.example_length(example)) == 7
    image = {"inputs": tf.zeros([4, 6, 3]), "targets": tf.zeros([2])}
    assert int(data_reader.example_length(image)) == 24
    assert bool(data_reader.example_valid_size(example, 7, 7))
    assert not bool(data_reader.example_valid_size(example, 8, 100))
    assert not bool(data_reader.example_valid_size(example, 0, 6))


def test_padded_batch_pads_to_longest():
    dataset = tf.data.Dataset.from_generator(
        lambda: iter([{"x": np.array([1, 2, 3])}, {"x": np.array([4])}]),
        output_signature={"x": tf.TensorSpec([None], tf.int64)})
    batch = next(iter(data_reader.padded_batch(dataset, 2)))
    np.testing.assert_array_equal(batch["x"], [[1, 2, 3], [4, 0, 0]])


def test_cast_ints_to_int32():
    cast = data_reader.cast_ints_to_int32({
        "a": tf.constant([1], tf.int64), "b": tf.constant([1], tf.uint8),
        "c": tf.constant([1.5]), "d": tf.constant([1], tf.int32)})
    assert [cast[k].dtype for k in "abcd"] == [tf.int32, tf.int32, tf.float32, tf.int32]


def test_standardize_shapes():
    features = {"inputs": tf.ones([3, 5], tf.int64), "targets": tf.ones([3, 1], tf.int64),
                "inputs_segmentation": tf.ones([3, 5], tf.int64),
                "inputs_position": tf.zeros([3, 5], tf.int32)}
    out = data_reader.standardize_shapes(features)
    assert out["inputs"].shape.as_list() == [3, 5, 1, 1]
    assert out["targets"].shape.as_list() == [3, 1, 1, 1]  # class labels
    assert out["inputs_segmentation"].shape.as_list() == [3, 5]
    assert all(v.dtype == tf.int32 for v in out.values())

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int64)])
    def with_batch_size(targets):
        shaped = data_reader.standardize_shapes({"targets": targets}, batch_size=3)
        assert shaped["targets"].shape.as_list() == [3, None, 1, 1]
        return shaped["targets"]

    assert with_batch_size(tf.ones([3, 2], tf.int64)).shape == (3, 2, 1, 1)
    with pytest.raises(ValueError, match="batch dimension 3, not 4"):
        data_reader.standardize_shapes({"targets": tf.ones([3, 2], tf.int64)}, batch_size=4)


def test_pad_batch():
    features = {"targets": tf.ones([5, 2], tf.int32), "weights": tf.ones([5])}
    padded = data_reader.pad_batch(features, 4)
    assert padded["targets"].shape == (8, 2)
    np.testing.assert_array_equal(padded["targets"][5:], np.zeros([3, 2]))
    np.testing.assert_array_equal(padded["weights"], [1] * 5 + [0] * 3)
    assert data_reader.pad_batch(features, 5)["targets"].shape == (5, 2)


def test_pad_for_tpu():
    shapes = {"inputs": tf.TensorShape([None]), "targets": tf.TensorShape([None, 1]),
              "other": tf.TensorShape([None, 3])}
    assert data_reader.pad_for_tpu(shapes, hparams(), 64) == {
        "inputs": [64], "targets": [64, 1], "other": [64, 3]}
    limited = hparams(max_input_seq_length=16, max_target_seq_length=128)
    assert data_reader.pad_for_tpu(shapes, limited, 64) == {
        "inputs": [16], "targets": [64, 1], "other": [64, 3]}


def write_records(path, examples):
    with tf.io.TFRecordWriter(path) as writer:
        for inputs, targets in examples:
            feature = {
                "inputs": tf.train.Feature(int64_list=tf.train.Int64List(value=inputs)),
                "targets": tf.train.Feature(int64_list=tf.train.Int64List(value=targets))}
            writer.write(tf.train.Example(features=tf.train.Features(
                feature=feature)).SerializeToString())


def test_skip_random_fraction_counts_records(tmp_path):
    path = str(tmp_path / "data-train-00000-of-00001")
    write_records(path, [([i + 2], [i + 2]) for i in range(7)])
    assert data_reader._file_num_records_cached(path) == 7
    dataset = tf.data.Dataset.range(100)
    skipped = data_reader.skip_random_fraction(dataset, path, rng=random.Random(5))
    expected = random.Random(5).randint(0, 7)
    assert next(iter(skipped)).numpy() == expected


def test_cpu_count():
    assert data_reader.cpu_count() == os.cpu_count()


# ----------------------------------------------------------------------------- input_fn
def test_bucketed_batches_respect_token_budget_and_boundaries():
    examples = make_examples(500, 1, 90)
    hp = hparams(batch_size=256, max_length=64, min_length_bucket=4, length_bucket_step=1.3)
    scheme = data_reader.hparams_to_batching_scheme(hp)
    edges = scheme["boundaries"] + [64 + 1]
    seen = []
    for features, rows in unbatch(run_input_fn(examples, TRAIN, hp, 64)):
        assert features["inputs"].dtype == np.int32 and features["inputs"].ndim == 4
        padded = max(features["inputs"].shape[1], features["targets"].shape[1])
        bucket = int(np.searchsorted(scheme["boundaries"], padded, side="right"))
        lengths = [max(len(i), len(t)) for i, t in rows]
        assert padded == max(lengths) <= 64
        # Every row is in the same bucket as the longest one, below its upper edge.
        lower = scheme["boundaries"][bucket - 1] if bucket else 0
        assert all(lower <= n < edges[bucket] for n in lengths)
        assert len(rows) <= scheme["batch_sizes"][bucket]
        assert len(rows) * padded <= 256
        seen.extend(rows)
    expected = [(tuple(i), tuple(t)) for i, t in examples if max(len(i), len(t)) <= 64]
    assert collections.Counter(seen) == collections.Counter(expected)


def test_bucketing_equals_tf_bucket_by_sequence_length():
    examples = make_examples(300, 1, 40, seed=1)
    scheme = data_reader.batching_scheme(128, 40, 4, 1.2)
    ours = batching._bucket_by_length(
        batching._prepare_examples(make_dataset(examples), 0, 10**9, scheme["boundaries"]),
        scheme["batch_sizes"]).map(lambda f: data_reader._finish_batch(f, trim=True))
    reference = make_dataset(examples).bucket_by_sequence_length(
        data_reader.example_length, scheme["boundaries"], scheme["batch_sizes"]).map(
            data_reader.standardize_shapes)
    ours, reference = list(ours), list(reference)
    assert len(ours) == len(reference)
    for a, b in zip(ours, reference):
        assert sorted(a) == sorted(b)
        for key in ("inputs", "targets"):
            assert a[key].shape == b[key].shape
            np.testing.assert_array_equal(a[key], b[key])


def test_long_examples_dropped_in_train_kept_in_eval():
    examples = [([2] * 5, [3] * 5), ([2] * 30, [3] * 4), ([2] * 3, [3] * 31), ([4] * 8, [5])]
    hp = hparams(batch_size=64, max_length=16)

    def lengths(mode, hp):
        return sorted(max(len(i), len(t)) for _, rows in unbatch(
            run_input_fn(examples, mode, hp, 16)) for i, t in rows)

    assert lengths(TRAIN, hp) == [5, 8]
    assert lengths(EVAL, hp) == [5, 8, 30, 31]
    assert lengths(EVAL, hparams(batch_size=64, max_length=16,
                                 eval_drop_long_sequences=True)) == [5, 8]


def test_min_length_filter_and_problem_max_length_quirk():
    examples = [([2] * n, [3] * n) for n in (1, 2, 3, 6, 10, 20)]
    # The scheme uses hparams.max_length (0 -> batch_size) but the filter the problem's
    # max_length argument, as in T2T.
    hp = hparams(batch_size=100, max_length=0, min_length=3)
    kept = sorted(len(i) for _, rows in unbatch(run_input_fn(examples, TRAIN, hp, 10))
                  for i, _ in rows)
    assert kept == [3, 6, 10]


def test_fixed_batch_size_path():
    examples = make_examples(10, 1, 20, seed=2)
    hp = hparams(batch_size=4, max_length=32, use_fixed_batch_size=True)
    sizes = [len(rows) for _, rows in unbatch(run_input_fn(examples, TRAIN, hp, 32))]
    assert sizes == [4, 4, 2]
    # Eval pads the last batch up to the fixed size with all-zero rows.
    batches = list(unbatch(run_input_fn(examples, EVAL, hp, 32)))
    assert [len(rows) for _, rows in batches] == [4, 4, 4]
    assert batches[-1][1][2:] == [((), ()), ((), ())]


def test_shards_from_config_multiply_batch_sizes():
    examples = [([2] * 6, [3] * 6)] * 40
    hp = hparams(batch_size=32, max_length=8, min_length_bucket=4, length_bucket_step=2.0)
    scheme = data_reader.hparams_to_batching_scheme(hp)
    assert scheme["boundaries"] == [4]
    one = scheme["batch_sizes"][1]  # the bucket of lengths >= 4
    config = types.SimpleNamespace(t2t_device_info={"num_shards": 2})
    sizes = [len(r) for _, r in unbatch(run_input_fn(examples, TRAIN, hp, 8, config=config))]
    assert sizes[0] == 2 * one
    sizes = [len(r) for _, r in unbatch(run_input_fn(examples, TRAIN, hp, 8,
                                                     params={"num_shards": 2}))]
    assert sizes[0] == 2 * one
    fixed = hparams(batch_size=3, max_length=8, use_fixed_batch_size=True)
    sizes = [len(r) for _, r in unbatch(run_input_fn(examples, TRAIN, fixed, 8,
                                                     config=config))]
    assert sizes[0] == 6  # hparams.batch_size examples per shard


def test_eval_pads_batches_to_a_multiple_of_shards():
    examples = make_examples(7, 2, 6, seed=3)
    hp = hparams(batch_size=4096, max_length=8)
    batches = list(unbatch(run_input_fn(examples, EVAL, hp, 8, params={"num_shards": 4})))
    assert all(len(rows) % 4 == 0 for _, rows in batches)
    assert sum(1 for _, rows in batches for r in rows if r != ((), ())) == 7


def test_tpu_path_is_fully_static_with_drop_remainder():
    examples = make_examples(11, 1, 40, seed=4)
    hp = hparams(batch_size=256, max_length=32)
    dataset = run_input_fn(examples, TRAIN, hp, 32, params={"use_tpu": True, "batch_size": 4})
    features_spec, labels_spec = dataset.element_spec
    assert features_spec["inputs"].shape.as_list() == [4, 32, 1, 1]
    assert features_spec["targets"].shape.as_list() == [4, 32, 1, 1]
    assert labels_spec.shape.as_list() == [4, 32, 1, 1]
    kept = sum(1 for i, t in examples if max(len(i), len(t)) <= 32)
    assert len(list(dataset)) == kept // 4
    with pytest.raises(ValueError, match="params\\['batch_size'\\]"):
        run_input_fn(examples, TRAIN, hp, 32, params={"use_tpu": True})


def test_batch_size_counts_examples_when_shapes_are_static():
    dataset = tf.data.Dataset.from_tensor_slices({
        "inputs": np.arange(2, 32, dtype=np.int64).reshape(10, 3),
        "targets": np.arange(10, dtype=np.int64).reshape(10, 1)})
    hp = hparams(batch_size=4)
    out = data_reader.input_fn(dataset, None, False, False, 1, 0, EVAL, hp)
    batches = [f for f, _ in out]
    assert [b["inputs"].shape.as_list() for b in batches] == [[4, 3, 1, 1]] * 2 + [
        [2, 3, 1, 1]]
    assert batches[0]["targets"].shape.as_list() == [4, 1, 1, 1]


def test_repeat_rules():
    examples = make_examples(3, 1, 4, seed=5)
    hp = hparams(batch_size=1, max_length=8, use_fixed_batch_size=True)

    def count(mode, **kwargs):
        return len(list(run_input_fn(examples, mode, hp, 8, **kwargs).take(10)))

    assert count(TRAIN, prevent_repeat=False) == 10
    assert count(TRAIN, prevent_repeat=True) == 3
    assert count(EVAL) == 3
    assert count(EVAL, force_repeat=True) == 10


def test_predict_renames_targets():
    dataset = run_input_fn(make_examples(3, 1, 4, seed=6), PREDICT,
                           hparams(batch_size=64, max_length=8), 8)
    features = next(iter(dataset))
    assert isinstance(features, dict)
    assert "infer_targets" in features and "targets" not in features
    assert features["infer_targets"].shape[2:] == (1, 1)


def test_packed_dataset_uses_fixed_rows():
    examples = make_examples(60, 1, 12, seed=7)
    hp = hparams(batch_size=64, max_length=16, pack_dataset=True)
    packed = packing.pack_dataset(make_dataset(examples), 16)
    dataset = data_reader.input_fn(packed, None, False, True, 1, 16, TRAIN, hp,
                                   prevent_repeat=True)
    batches = [f for f, _ in dataset]
    assert all(b["targets"].shape[0] == 4 for b in batches[:-1])  # 64 // 16 rows
    assert all(b["targets"].shape[1:] == (16, 1, 1) for b in batches)
    assert all(b["targets_segmentation"].shape[1:] == (16,) for b in batches)
    assert all(b["inputs_position"].dtype == tf.int32 for b in batches)
    segments = sum(int(np.max(b["targets_segmentation"], axis=1).sum()) for b in batches)
    assert segments == len(examples)


def test_offline_packed_rows_are_padded_to_max_length():
    rows = [{"targets": [2, 3, 4], "targets_segmentation": [1, 1, 2],
             "targets_position": [0, 1, 0]},
            {"targets": [5, 6], "targets_segmentation": [1, 1], "targets_position": [0, 1]}]
    dataset = tf.data.Dataset.from_generator(
        lambda: ({k: np.array(v, np.int64) for k, v in row.items()} for row in rows),
        output_signature={k: tf.TensorSpec([None], tf.int64) for k in rows[0]})
    hp = hparams(batch_size=16, max_length=8)
    out = data_reader.input_fn(dataset, None, False, True, 1, 8, TRAIN, hp,
                               prevent_repeat=True)
    features, _ = next(iter(out))
    assert features["targets"].shape == (2, 8, 1, 1)
    np.testing.assert_array_equal(features["targets_segmentation"],
                                  [[1, 1, 2, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0]])


def test_split_targets_into_chunks():
    examples = [([2, 3], [4, 5, 6, 7, 8]), ([9], [10, 11])]
    hp = hparams(batch_size=2, use_fixed_batch_size=True, max_length=8,
                 split_targets_chunk_length=2, split_targets_max_chunks=4)
    batches = [f for f, _ in run_input_fn(examples, EVAL, hp, 8)]
    assert [b["chunk_number"][0, 0, 0, 0].numpy() for b in batches] == [0, 1, 2]
    np.testing.assert_array_equal(batches[0]["targets"][..., 0, 0], [[4, 5], [10, 11]])
    np.testing.assert_array_equal(batches[2]["targets"][..., 0, 0], [[8, 0], [0, 0]])
    np.testing.assert_array_equal(batches[1]["inputs"][..., 0, 0], [[2, 3], [9, 0]])


def test_input_fn_in_graph_mode_like_an_estimator(tmp_path):
    path = str(tmp_path / "toy-train-00000-of-00001")
    write_records(path, [([2] * n, [3] * (n + 1)) for n in range(1, 20)])
    with tf.Graph().as_default():
        spec = {"inputs": tf.io.VarLenFeature(tf.int64),
                "targets": tf.io.VarLenFeature(tf.int64)}
        dataset = tf.data.TFRecordDataset(path).map(
            lambda r: {k: tf.sparse.to_dense(v)
                       for k, v in tf.io.parse_single_example(r, spec).items()})
        out = data_reader.input_fn(dataset, str(tmp_path / "toy-train*"), True, True, 1, 16,
                                   TRAIN, hparams(batch_size=64, max_length=16))
        features, labels = tf.compat.v1.data.make_one_shot_iterator(out).get_next()
        with tf.compat.v1.Session() as session:
            for _ in range(5):
                value = session.run(features)
                rows, length = value["targets"].shape[:2]
                assert rows * length <= 64 and length <= 16


def test_strided_chunks_on_the_tpu_path():
    examples = [([2, 3], [4 + i, 5, 6, 7]) for i in range(8)]
    hp = hparams(batch_size=64, max_length=8, split_targets_chunk_length=2,
                 split_targets_max_chunks=4, split_targets_strided_training=True)
    dataset = run_input_fn(examples, TRAIN, hp, 8, params={"use_tpu": True, "batch_size": 2})
    assert dataset.element_spec[0]["targets"].shape.as_list() == [2, 2, 1, 1]
    batches = [f for f, _ in dataset]
    # Rows of chunk batches, read with stride 2 * (4 // 2) + 1 = 5: rows 0 and 5 first.
    np.testing.assert_array_equal(batches[0]["targets"][..., 0, 0], [[4, 5], [7, 5]])
    np.testing.assert_array_equal(batches[1]["chunk_number"][..., 0, 0], [[1, 1], [1, 1]])
    too_short = hparams(batch_size=64, max_length=8, split_targets_chunk_length=2,
                        split_targets_max_chunks=2)
    with pytest.raises(ValueError, match="raise split_targets_max_chunks"):
        run_input_fn(examples, TRAIN, too_short, 8, params={"use_tpu": True, "batch_size": 2})


def test_windowed_measuring_matches_per_example_measuring():
    examples = make_examples(200, 1, 60, seed=8)
    hp = hparams(batch_size=256, max_length=48, min_length=3, min_length_bucket=4,
                 length_bucket_step=1.3)
    with_weights = tf.data.Dataset.from_generator(
        lambda: ({"inputs": np.array(i, np.int64), "targets": np.array(t, np.int64),
                  "weights": np.ones([len(t)], np.float32)} for i, t in examples),
        output_signature={"inputs": tf.TensorSpec([None], tf.int64),
                          "targets": tf.TensorSpec([None], tf.int64),
                          "weights": tf.TensorSpec([None], tf.float32)})
    # Float sequences cannot be measured from a padding sentinel: one function per example.
    assert windows.can_measure_in_windows(make_dataset(examples).element_spec)
    assert not windows.can_measure_in_windows(with_weights.element_spec)
    windowed = [f for f, _ in run_input_fn(examples, TRAIN, hp, 48)]
    per_example = [f for f, _ in data_reader.input_fn(
        with_weights, None, False, True, 1, 48, TRAIN, hp, prevent_repeat=True)]
    # The same batches (the windowed path emits them window by window, group_by_window as
    # buckets fill: compare them as multisets).
    def key(batch):
        return tuple((name, tuple(batch[name].shape), batch[name].numpy().tobytes())
                     for name in ("inputs", "targets"))
    assert sorted(map(key, windowed)) == sorted(map(key, per_example))
    assert all(b["weights"].shape == b["targets"].shape[:2] for b in per_example)


def test_trailing_zeros_are_data_not_padding():
    # Offline-packed positions end with 0 when the last segment has one token.
    rows = [{"targets": [2, 3, 4], "targets_position": [0, 1, 0]},
            {"targets": [5, 6], "targets_position": [0, 1]}]
    dataset = tf.data.Dataset.from_generator(
        lambda: ({k: np.array(v, np.int64) for k, v in row.items()} for row in rows),
        output_signature={k: tf.TensorSpec([None], tf.int64) for k in rows[0]})
    hp = hparams(batch_size=16, max_length=8, min_length=1)
    out = data_reader.input_fn(dataset, None, False, True, 1, 8, EVAL, hp)
    features, _ = next(iter(out))
    np.testing.assert_array_equal(features["targets_position"], [[0, 1, 0], [0, 1, 0]])
    assert features["targets"].shape == (2, 3, 1, 1)


def test_tpu_path_drops_features_longer_than_their_padded_width():
    examples = [([2] * 3, [3] * 3), ([2] * 9, [3] * 2), ([2] * 4, [3] * 4), ([2], [3])]
    hp = hparams(batch_size=64, max_length=16, max_input_seq_length=5)
    dataset = run_input_fn(examples, TRAIN, hp, 16, params={"use_tpu": True, "batch_size": 3})
    batches = [f for f, _ in dataset]
    assert len(batches) == 1
    assert batches[0]["inputs"].shape == (3, 5, 1, 1)
    assert batches[0]["targets"].shape == (3, 16, 1, 1)
    lengths = np.count_nonzero(batches[0]["inputs"][..., 0, 0], axis=1)
    assert lengths.tolist() == [3, 4, 1]


def test_two_dimensional_sequence_features():
    # example_length counts the first dimension; [length, 2] frames are padded per batch.
    frames = [np.full([n, 2], n + 1, np.int64) for n in (2, 5, 3, 9)]
    dataset = tf.data.Dataset.from_generator(
        lambda: ({"inputs": f, "targets": np.array([1, 1], np.int64)} for f in frames),
        output_signature={"inputs": tf.TensorSpec([None, 2], tf.int64),
                          "targets": tf.TensorSpec([None], tf.int64)})
    hp = hparams(batch_size=4, max_length=6, use_fixed_batch_size=True)
    out = data_reader.input_fn(dataset, None, False, True, 1, 6, TRAIN, hp,
                               prevent_repeat=True)
    features, _ = next(iter(out))
    assert features["inputs"].shape == (3, 5, 2, 1)
    assert features["inputs"][:, 0, 0, 0].numpy().tolist() == [3, 6, 4]
    assert features["targets"].shape == (3, 2, 1, 1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3000), min_size=1, max_size=20),
       st.lists(st.integers(1, 2000), max_size=12, unique=True))
def test_bucket_of_counts_edges_at_or_below(lengths, edges):
    edges = sorted(edges)
    buckets = windows.bucket_of(tf.constant(lengths, tf.int32), edges).numpy()
    assert buckets.tolist() == [bisect.bisect_right(edges, n) for n in lengths]


def test_packed_rows_count_tokens_even_when_the_problem_counts_examples():
    # Packing makes shapes static, which would otherwise mean "batch_size counts examples".
    packed = packing.pack_dataset(make_dataset(make_examples(40, 1, 10, seed=9)), 16)
    hp = hparams(batch_size=64, max_length=16, pack_dataset=True)
    out = data_reader.input_fn(packed, None, False, False, 1, 16, TRAIN, hp,
                               prevent_repeat=True)
    assert next(iter(out))[0]["targets"].shape == (4, 16, 1, 1)
    fixed = hparams(batch_size=3, max_length=16, pack_dataset=True, use_fixed_batch_size=True)
    out = data_reader.input_fn(packed, None, False, False, 1, 16, TRAIN, fixed,
                               prevent_repeat=True)
    assert next(iter(out))[0]["targets"].shape == (3, 16, 1, 1)
