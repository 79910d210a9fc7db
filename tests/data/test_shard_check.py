"""Shard records written at datagen time, and the checks readers make against them."""
import json
import os
import random

import pytest
import tensorflow as tf

from t2t.data import data_reader, generator_utils, shard_check


def _write_shards(tmp_path, num_examples=40, num_shards=2, name="p-train"):
    paths = [str(tmp_path / generator_utils.sharded_name(name, i, num_shards))
             for i in range(num_shards)]
    generator_utils.generate_files(
        ({"targets": [random.Random(i).randint(2, 9) for _ in range(i % 7 + 1)] + [1]}
         for i in range(num_examples)), paths)
    return paths


def test_generate_files_records_count_and_size_beside_each_shard(tmp_path):
    paths = _write_shards(tmp_path, num_examples=41, num_shards=2)
    infos = [shard_check.read_record(p) for p in paths]
    assert [info["records"] for info in infos] == [21, 20]
    assert [info["bytes"] for info in infos] == [os.path.getsize(p) for p in paths]
    # Hidden: the problem's file pattern never picks the record up.
    assert sorted(tf.io.gfile.glob(str(tmp_path / "p-train*"))) == paths
    assert os.path.basename(shard_check.record_path(paths[0])).startswith(".")
    shard_check.check_shards(paths)  # intact: no error


def test_shuffle_moves_the_record_to_the_shuffled_name(tmp_path):
    paths = _write_shards(tmp_path, name="p-unshuffled-train")
    # "-unshuffled" is removed from the final name
    generator_utils.shuffle_dataset(paths, random_seed=3)
    final = [p.replace("-unshuffled", "") for p in paths]
    assert [shard_check.read_record(p)["records"] for p in final] == [20, 20]
    assert all(shard_check.read_record(p) is None for p in paths)
    assert not any(os.path.exists(shard_check.record_path(p)) for p in paths)


@pytest.mark.parametrize("cut", ["boundary", "mid_record"])
def test_a_short_shard_is_found_before_reading(tmp_path, cut):
    paths = _write_shards(tmp_path)
    records = generator_utils.read_records(paths[1])
    if cut == "boundary":  # a whole number of records: readable, silently short before
        size = sum(len(r) + 16 for r in records[:7])
    else:
        size = os.path.getsize(paths[1]) - 5
    with open(paths[1], "r+b") as f:
        f.truncate(size)
    with pytest.raises(shard_check.DataFileError) as info:
        shard_check.check_shards(paths, problem_name="p", data_dir=str(tmp_path))
    message = str(info.value)
    assert "\n" not in message
    assert paths[1] in message and "truncated" in message
    assert "delete it and rerun t2t-datagen --problem=p --data_dir=%s" % tmp_path in message
    found = shard_check.find_bad_shard(paths)
    assert found is not None and found[0] == paths[1]
    if cut == "boundary":
        assert found[1] == "holds 7 records but t2t-datagen wrote 20"


def test_damaged_bytes_are_named_after_a_data_loss_error(tmp_path):
    paths = _write_shards(tmp_path)
    data = bytearray(open(paths[0], "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(paths[0], "wb").write(bytes(data))
    shard_check.check_shards(paths)  # same size: only reading finds it
    dataset = tf.data.TFRecordDataset(paths)
    with pytest.raises(tf.errors.DataLossError) as caught:
        for _ in dataset:
            pass
    error = shard_check.explain_data_loss(caught.value, paths, problem_name="p",
                                          data_dir=str(tmp_path))
    assert isinstance(error, shard_check.DataFileError)
    assert str(error).startswith(paths[0] + " is damaged: unreadable after ")
    with pytest.raises(shard_check.DataFileError, match="p-train-00000-of-00002 is damaged"):
        data_reader._file_num_records_cached(paths[0])


def test_files_without_a_record_pass_unchecked(tmp_path):
    path = str(tmp_path / "t2t_made-train-00000-of-00001")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(b"x")
    shard_check.check_shards([path])
    assert shard_check.find_bad_shard([path]) is None
    # An unreadable record file is treated as none.
    with open(shard_check.record_path(path), "w") as f:
        f.write("{not json")
    shard_check.check_shards([path])
    with open(shard_check.record_path(path), "w") as f:
        json.dump({"records": 1}, f)
    assert shard_check.read_record(path) is None
