"""t2t.seqio.utils: autoregressive inputs, trimming/padding, map_over_dataset seeds,
add_kwargs_to_transform, tf.train.Example round trips, mixing-rate helpers, list_files."""
import functools
from unittest import mock

import numpy as np
import pytest
import tensorflow as tf
import tensorflow.compat.v2 as tf_v2

from t2t import seqio
from t2t.seqio import utils
from t2t.seqio.test_utils import assert_dataset


def test_make_autoregressive_inputs_packed_resets_segments():
    targets = tf.constant([3, 8, 1, 9, 1, 5, 4, 1, 0, 0])
    sequence_id = tf.constant([1, 1, 1, 2, 2, 3, 3, 3, 0, 0])
    inputs = utils.make_autoregressive_inputs(targets, sequence_id=sequence_id)
    assert inputs.numpy().tolist() == [0, 3, 8, 0, 9, 0, 5, 4, 0, 0]
    # A wrong token before a segment start never leaks into the next segment.
    bad = tf.constant([3, 8, 1, 9, 6, 5, 4, 1, 0, 0])
    assert utils.make_autoregressive_inputs(bad, sequence_id=sequence_id).numpy().tolist() == \
        [0, 3, 8, 0, 9, 0, 5, 4, 0, 0]
    assert utils.make_autoregressive_inputs(targets, sequence_id=sequence_id,
                                            bos_id=7).numpy().tolist() == \
        [7, 3, 8, 7, 9, 7, 5, 4, 7, 0]


def test_make_autoregressive_inputs_unpacked_2d_and_dtypes():
    assert utils.make_autoregressive_inputs(tf.constant([3, 8, 9, 5, 1, 0, 0])).numpy().tolist() \
        == [0, 3, 8, 9, 5, 1, 0]
    x = tf.constant([[3, 8, 1, 0, 0], [9, 5, 2, 0, 6]])
    assert utils.make_autoregressive_inputs(x).numpy().tolist() == [[0] * 5, [3, 8, 1, 0, 0]]
    with pytest.raises(ValueError, match="Only 1-D sequences are supported with packing"):
        utils.make_autoregressive_inputs(x, sequence_id=tf.constant([1, 2]))
    floats = utils.make_autoregressive_inputs(
        tf.constant([3, 8, 1, 9.9, 1]), sequence_id=tf.constant([1, 1, 1, 2, 2]),
        output_dtype=tf.float32)
    np.testing.assert_allclose(floats.numpy(), [0, 3, 8, 0, 9.9])
    assert seqio.autoregressive_inputs is utils.make_autoregressive_inputs


def test_trim_and_pad_dataset_with_multirank_features():
    x = [{"inputs": [[[7, 8, 5, 6, 1]], [[1, 2, 3, 4, 5]]], "targets": [[3, 0.5], [9, 0], [1, 2]]},
         {"inputs": [[[8, 4, 9, 3, 5, 7, 9, 5]]], "targets": [[4, 1.2], [1, 1]]}]
    ds = tf.data.Dataset.from_generator(lambda: x, output_signature={
        "inputs": tf.TensorSpec([None, None, None], tf.int32),
        "targets": tf.TensorSpec([None, None], tf.float32)})
    padded = utils.trim_and_pad_dataset(ds, {"inputs": [2, 1, 5], "targets": [3, 3]})
    assert_dataset(padded, [
        {"inputs": [[[7, 8, 5, 6, 1]], [[1, 2, 3, 4, 5]]],
         "targets": [[3, 0.5, 0], [9, 0, 0], [1, 2, 0]]},
        {"inputs": [[[8, 4, 9, 3, 5]], [[0, 0, 0, 0, 0]]],
         "targets": [[4, 1.2, 0], [1, 1, 0], [0, 0, 0]]}])
    flat = utils.trim_and_pad_dataset(
        tf.data.Dataset.from_tensors({"inputs": [7, 8, 5], "idx": [0]}), {"inputs": 5})
    assert_dataset(flat, {"inputs": [7, 8, 5, 0, 0], "idx": [0]})


def test_map_over_dataset_seeds_match_seqio():
    """The seeds seqio 0.0.20's own tests expect for _NEXT_MAP_SEED = 42."""
    @utils.map_over_dataset(num_seeds=1)
    def one(x, seed):
        return x + seed

    @utils.map_over_dataset(num_seeds=2)
    def two(x, seeds):
        return x + seeds

    utils._NEXT_MAP_SEED = 42
    try:
        got = list(one(tf.data.Dataset.range(2)).as_numpy_iterator())
        assert [g.tolist() for g in got] == [[2985944072, 3810604164], [4132877645, 4228622226]]
        utils._NEXT_MAP_SEED = 42
        got = list(two(tf.data.Dataset.range(2)).as_numpy_iterator())
        assert got[0].tolist() == [[2985944072, 3810604164], [64669036, 3548694723]]
    finally:
        utils._NEXT_MAP_SEED = None


def test_map_seed_manager_nests_and_restores():
    assert utils._NEXT_MAP_SEED is None
    with utils.map_seed_manager(42):
        assert utils._NEXT_MAP_SEED == 42
        with utils.map_seed_manager(410):
            utils._NEXT_MAP_SEED += 10
            assert utils._NEXT_MAP_SEED == 420
        assert utils._NEXT_MAP_SEED == 42
    assert utils._NEXT_MAP_SEED is None


def test_map_over_dataset_forms():
    @utils.map_over_dataset
    def square(x):
        return x * x

    @utils.map_over_dataset()
    def add(x, n=1):
        return x + n

    assert list(square(tf.data.Dataset.range(4)).as_numpy_iterator()) == [0, 1, 4, 9]
    assert list(add(tf.data.Dataset.range(2), n=5).as_numpy_iterator()) == [5, 6]
    partial = utils.map_over_dataset(functools.partial(lambda x, n: x * n, n=3))
    assert list(partial(tf.data.Dataset.range(3)).as_numpy_iterator()) == [0, 3, 6]


def test_add_kwargs_to_transform():
    def prep(ds, sequence_length, other=1):
        return ds, sequence_length, other

    fn = utils.add_kwargs_to_transform(prep, sequence_length={"x": 1}, output_features={})
    assert fn("ds") == ("ds", {"x": 1}, 1)
    bound = functools.partial(prep, sequence_length={"y": 2})
    assert utils.add_kwargs_to_transform(bound, sequence_length={"x": 1}) is bound

    def no_kwargs(ds):
        return ds
    assert utils.add_kwargs_to_transform(no_kwargs, sequence_length=1) is no_kwargs


def test_tfexample_round_trip_with_ragged_and_shapes():
    example = utils.dict_to_tfexample({
        "ints": [1, 2, 3], "floats": [[1.5, 2.0], [3.0, 4.0]], "text": "hi",
        "ragged": tf.ragged.constant([[1], [2, 3]])}, store_shapes=True)
    back = utils.tfexample_to_dict(example)
    assert back["ints"].numpy().tolist() == [1, 2, 3]
    assert back["floats"].numpy().tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert back["text"].numpy().tolist() == [b"hi"]
    assert back["ragged"].to_list() == [[1], [2, 3]]
    assert utils.tfexample_ragged_length_key("x", 0) == "_rl:0:x"
    nested = {"a": {"b": 1, "c": {"d": 2}}, "e": 3}
    assert utils.flatten_dict(nested) == {"a/b": 1, "a/c/d": 2, "e": 3}
    assert utils.unflatten_dict(utils.flatten_dict(nested)) == nested


def test_stateless_shuffle_is_deterministic():
    values = tf.range(20)
    a = utils.stateless_shuffle(values, (1, 2)).numpy().tolist()
    assert a == utils.stateless_shuffle(values, (1, 2)).numpy().tolist()
    assert sorted(a) == list(range(20)) and a != list(range(20))


class FakeTask:
    name = "fake"

    def __init__(self, cache_dir, stats, num_input=None):
        self.cache_dir = cache_dir
        self._stats = stats
        self._num_input = num_input

    def get_cached_stats(self, split):
        return self._stats

    def num_input_examples(self, split):
        return self._num_input


def test_mixing_rates_follow_seqio_formulas():
    task = FakeTask("/cache", {"examples": 3, "text_chars": 10})
    assert utils.mixing_rate_num_examples(task) == 3.0
    assert utils.mixing_rate_num_examples(task, scale=27) == 81.0
    assert utils.mixing_rate_num_examples(task, scale=27, temperature=2) == 9.0
    assert utils.mixing_rate_num_examples(task, scale=27, temperature=0.5, maximum=50.5) == \
        2550.25
    uncached = FakeTask(None, {}, num_input=30)
    assert utils.mixing_rate_num_examples(uncached) == 30.0
    with pytest.raises(ValueError, match="does not know its number of 'train' examples"):
        utils.mixing_rate_num_examples(FakeTask(None, {}))
    assert utils.mixing_rate_num_characters(task, temperature=0.7) == pytest.approx(
        26.8269579528)
    with pytest.raises(ValueError, match="requires that each task"):
        utils.mixing_rate_num_characters(uncached)


def test_list_files_sees_files_written_later(tmp_path):
    pattern = str(tmp_path / "part-*")
    assert utils.list_files(pattern) == []
    (tmp_path / "part-1").write_text("x")
    (tmp_path / "part-0").write_text("x")
    assert utils.list_files([pattern, "/plain"]) == [str(tmp_path / "part-0"),
                                                     str(tmp_path / "part-1"), "/plain"]


def test_list_files_with_several_patterns_lists_each_in_order(tmp_path):
    for name in ("b-1", "a-2", "a-1", "c-1"):
        (tmp_path / name).write_text("x")
    patterns = [str(tmp_path / "b-*"), str(tmp_path / "a-*"), str(tmp_path / "none-*")]
    assert utils.list_files(patterns) == [str(tmp_path / n) for n in ("b-1", "a-1", "a-2")]
    assert utils.list_files(iter(patterns[1:])) == [str(tmp_path / n) for n in ("a-1", "a-2")]


def test_list_files_globs_through_seqios_tensorflow_module(monkeypatch):
    # seqio's modules (and its test_list_files) use tensorflow.compat.v2, whose io.gfile is
    # a module of its own in TF 2: patching its glob must reach list_files. A pattern's
    # matches are listed once; a shard spec ("/foo@2") is kept as given.
    monkeypatch.setattr(utils, "_GLOB_CACHE", {})
    with mock.patch.object(tf_v2.io.gfile, "glob", autospec=True) as glob_fn:
        glob_fn.return_value = ["/bar1", "/bar2"]
        assert utils.list_files(["/foo@2", "/bar*"]) == ["/foo@2", "/bar1", "/bar2"]
        assert utils.list_files(["/bar*"]) == ["/bar1", "/bar2"]
        assert utils.list_files(["/foo@2"]) == ["/foo@2"]
    glob_fn.assert_called_once_with("/bar*")
