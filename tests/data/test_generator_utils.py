"""Tests for t2t.data.generator_utils: examples, sharded files, shuffling, packing, vocabs."""
import gzip
import io
import os
import random
import tarfile

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.data import generator_utils as gu
from t2t.encoders import text_encoder


def _with_records(names):
    """Shard names plus the hidden record t2t-datagen writes beside each (shard_check)."""
    names = list(names)
    return sorted(names + [".%s.shard.json" % n for n in names])


def _parse(serialized):
    return tf.train.Example.FromString(serialized)


def _values(example, key):
    feature = example.features.feature[key]
    kind = feature.WhichOneof("kind")
    return list(getattr(feature, kind).value)


def _targets_of(path):
    return [_values(_parse(r), "targets") for r in gu.read_records(path)]


# ------------------------------------------------------------------ to_example

_feature_values = st.one_of(
    st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), min_size=1, max_size=5),
    st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=5),
    st.lists(st.text(max_size=6), min_size=1, max_size=5),
    st.lists(st.binary(max_size=6), min_size=1, max_size=5),
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), _feature_values, max_size=4))
def test_to_example_round_trips_every_value_type(features):
    example = _parse(gu.to_example(features).SerializeToString())
    assert set(example.features.feature) == set(features)
    for key, expected in features.items():
        got = _values(example, key)
        if isinstance(expected[0], str):
            got = [value.decode("utf-8") for value in got]
        assert got == expected


def test_to_example_picks_the_list_kind_by_type_and_accepts_numpy_and_scalars():
    example = gu.to_example({
        "ids": np.array([3, 4], dtype=np.int32), "score": np.float32(0.5), "label": 7,
        "text": "hé", "flag": [True, False]})
    kinds = {k: v.WhichOneof("kind") for k, v in example.features.feature.items()}
    assert kinds == {"ids": "int64_list", "score": "float_list", "label": "int64_list",
                     "text": "bytes_list", "flag": "int64_list"}
    assert _values(example, "ids") == [3, 4]
    assert _values(example, "text") == ["hé".encode("utf-8")]
    assert _values(example, "flag") == [1, 0]


@pytest.mark.parametrize("value, words", [
    ([], ["empty", "'inputs'"]),
    ([None], ["unsupported type NoneType", "'inputs'"]),
    ([{"a": 1}], ["unsupported type dict", "'inputs'"]),
    ([1, 2.5], ["mixes value types", "'inputs'"]),
    (["a", 3], ["mixes value types", "'inputs'"]),
])
def test_to_example_errors_are_one_line_and_name_the_key(value, words):
    with pytest.raises(ValueError) as error:
        gu.to_example({"inputs": value})
    message = str(error.value)
    assert "\n" not in message
    for word in words:
        assert word in message


# ------------------------------------------------------------------ file names

def test_file_names_follow_t2t():
    assert gu.UNSHUFFLED_SUFFIX == "-unshuffled"
    assert gu.sharded_name("p-train", 3, 10) == "p-train-00003-of-00010"
    assert gu.shard_filepath("x", 2) == ["x-00000-of-00002", "x-00001-of-00002"]
    assert gu.train_data_filenames("p", "/d", 2) == [
        "/d/p-train-00000-of-00002", "/d/p-train-00001-of-00002"]
    assert gu.dev_data_filenames("p", "/d", 1) == ["/d/p-dev-00000-of-00001"]
    assert gu.test_data_filenames("p", "/d", 1) == ["/d/p-test-00000-of-00001"]
    assert gu.combined_data_filenames("p", "/d", 2) == [
        "/d/p-train-00000-of-00002", "/d/p-train-00001-of-00002",
        "/d/p-dev-00000-of-00001", "/d/p-test-00000-of-00001"]
    assert gu._data_filenames("p-x", "/d", 1) == ["/d/p-x-00000-of-00001"]


# ------------------------------------------------------------------ generate_files

def _cases(n, fail_at=None):
    for i in range(n):
        if i == fail_at:
            raise RuntimeError("generator broke at %d" % i)
        yield {"targets": [i + 2, 1]}


def test_generate_files_round_robin(tmp_path):
    paths = gu.train_data_filenames("p", str(tmp_path), 2)
    gu.generate_files(_cases(5), paths)
    assert _targets_of(paths[0]) == [[2, 1], [4, 1], [6, 1]]
    assert _targets_of(paths[1]) == [[3, 1], [5, 1]]
    assert sorted(os.listdir(tmp_path)) == _with_records(os.path.basename(p) for p in paths)


def test_generate_files_cycle_every_n_and_none_cases(tmp_path):
    paths = gu.train_data_filenames("p", str(tmp_path), 2)
    cases = [{"targets": [2]}, None, {"targets": [3]}, {"targets": [4]}, {"targets": [5]},
             {"targets": [6]}]
    gu.generate_files(iter(cases), paths, cycle_every_n=2)
    assert _targets_of(paths[0]) == [[2], [3], [6]]
    assert _targets_of(paths[1]) == [[4], [5]]


def test_generate_files_max_cases_draws_no_extra_case(tmp_path):
    drawn = []

    def cases():
        for i in range(100):
            drawn.append(i)
            yield {"targets": [i + 2]}

    paths = gu.train_data_filenames("p", str(tmp_path), 3)
    gu.generate_files(cases(), paths, max_cases=4)
    assert drawn == [0, 1, 2, 3]
    assert [len(gu.read_records(p)) for p in paths] == [2, 1, 1]


def test_generate_files_interrupted_leaves_nothing_then_rerun_completes(tmp_path):
    paths = gu.train_data_filenames("p", str(tmp_path), 3)
    with pytest.raises(RuntimeError, match="generator broke at 4"):
        gu.generate_files(_cases(10, fail_at=4), paths)
    assert os.listdir(tmp_path) == []  # No final names, no temporary files.
    gu.generate_files(_cases(10), paths)
    assert [len(gu.read_records(p)) for p in paths] == [4, 3, 3]
    assert sorted(os.listdir(tmp_path)) == _with_records(os.path.basename(p) for p in paths)


def test_generate_files_keyboard_interrupt_also_cleans_up(tmp_path):
    def cases():
        yield {"targets": [2]}
        raise KeyboardInterrupt

    paths = gu.train_data_filenames("p", str(tmp_path), 1)
    with pytest.raises(KeyboardInterrupt):
        gu.generate_files(cases(), paths)
    assert os.listdir(tmp_path) == []


def _exploding_generator():
    raise AssertionError("the generator must not be used")
    yield  # pragma: no cover


def test_generate_files_skips_when_all_outputs_or_shuffled_outputs_exist(tmp_path):
    paths = gu.train_data_filenames("p", str(tmp_path), 2)
    gu.generate_files(_cases(4), paths)
    before = [open(p, "rb").read() for p in paths]
    gu.generate_files(_exploding_generator(), paths)  # Skipped: outputs exist.
    assert [open(p, "rb").read() for p in paths] == before
    # "-unshuffled" outputs whose shuffled versions exist also count as done.
    unshuffled = gu.train_data_filenames("p", str(tmp_path), 2)
    unshuffled = [p.replace("p-train", "p-train" + gu.UNSHUFFLED_SUFFIX) for p in unshuffled]
    gu.generate_files(_exploding_generator(), unshuffled)
    assert not any(os.path.exists(p) for p in unshuffled)


def test_generate_files_regenerates_when_only_some_outputs_exist(tmp_path):
    paths = gu.train_data_filenames("p", str(tmp_path), 2)
    with open(paths[0], "wb") as stale:
        stale.write(b"")
    gu.generate_files(_cases(4), paths)
    assert _targets_of(paths[0]) == [[2, 1], [4, 1]]
    assert _targets_of(paths[1]) == [[3, 1], [5, 1]]


def test_generate_files_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="output_filenames is empty"):
        gu.generate_files(_cases(1), [])
    with pytest.raises(ValueError, match="cycle_every_n=0 must be >= 1"):
        gu.generate_files(_cases(1), [str(tmp_path / "x")], cycle_every_n=0)


def test_generate_files_distributed_writes_one_shard(tmp_path):
    path = gu.generate_files_distributed(_cases(3), "p-train", str(tmp_path), num_shards=4,
                                         task_id=2)
    assert path == str(tmp_path / "p-train-00002-of-00004")
    assert _targets_of(path) == [[2, 1], [3, 1], [4, 1]]
    with pytest.raises(ValueError, match="task_id=4 must be in"):
        gu.generate_files_distributed(_cases(1), "p", str(tmp_path), num_shards=4, task_id=4)


# ------------------------------------------------------------------ records

def test_read_write_records_round_trip(tmp_path):
    records = [gu.to_example({"targets": [i, 1]}).SerializeToString() for i in range(7)]
    path = str(tmp_path / "r")
    assert gu.write_records(records, path) == 7
    assert gu.read_records(path) == records
    assert sorted(os.listdir(tmp_path)) == _with_records(["r"])


def test_tfrecord_iterator_raw_parsed_and_gzipped(tmp_path):
    records = [gu.to_example({"targets": list(range(2, 2 + i)), "label": [i]})
               .SerializeToString() for i in range(1, 4)]
    plain = str(tmp_path / "plain")
    gu.write_records(records, plain)
    assert list(gu.tfrecord_iterator([plain])) == records
    spec = {"targets": tf.io.VarLenFeature(tf.int64),
            "label": tf.io.FixedLenFeature([1], tf.int64)}
    parsed = list(gu.tfrecord_iterator([plain, plain], example_spec=spec))
    assert len(parsed) == 6
    assert [row["targets"].tolist() for row in parsed[:3]] == [[2], [2, 3], [2, 3, 4]]
    assert [row["label"].tolist() for row in parsed[3:]] == [[1], [2], [3]]
    zipped = str(tmp_path / "zipped")
    with tf.io.TFRecordWriter(zipped, options="GZIP") as writer:
        for record in records:
            writer.write(record)
    assert list(gu.tfrecord_iterator([zipped], gzipped=True)) == records


def test_tfrecord_iterator_for_problem(tmp_path):
    paths = gu.train_data_filenames("fake", str(tmp_path), 2)
    gu.generate_files(_cases(3), paths)

    class FakeProblem:
        name = "fake"

        def filepattern(self, data_dir, mode):
            return os.path.join(data_dir, "fake-%s*" % mode)

        def example_reading_spec(self):
            return {"targets": tf.io.VarLenFeature(tf.int64)}, None

    rows = list(gu.tfrecord_iterator_for_problem(FakeProblem(), str(tmp_path)))
    assert sorted(row["targets"].tolist() for row in rows) == [[2, 1], [3, 1], [4, 1]]
    with pytest.raises(ValueError, match="no files match .*fake-eval"):
        gu.tfrecord_iterator_for_problem(FakeProblem(), str(tmp_path), dataset_split="eval")


# ------------------------------------------------------------------ shuffling

def _unshuffled_paths(directory, shards=2):
    return [os.path.join(directory, gu.sharded_name("p-train" + gu.UNSHUFFLED_SUFFIX, i, shards))
            for i in range(shards)]


def _shuffled_bytes(directory, seed=None, rng=None, shards=2, n=40):
    os.makedirs(directory, exist_ok=True)
    paths = _unshuffled_paths(directory, shards)
    gu.generate_files(_cases(n), paths)
    gu.shuffle_dataset(paths, random_seed=seed, rng=rng)
    assert not any(os.path.exists(p) for p in paths)
    return [open(gu._shuffled_name(p), "rb").read() for p in paths]


def test_shuffle_dataset_is_deterministic_given_a_seed(tmp_path):
    first = _shuffled_bytes(str(tmp_path / "a"), seed=3)
    second = _shuffled_bytes(str(tmp_path / "b"), seed=3)
    other = _shuffled_bytes(str(tmp_path / "c"), seed=4)
    assert first == second
    assert first != other
    shuffled = _targets_of(str(tmp_path / "a" / "p-train-00000-of-00002"))
    assert shuffled != sorted(shuffled)  # Actually shuffled...
    assert sorted(shuffled) == [[i + 2, 1] for i in range(0, 40, 2)]  # ...and nothing lost.


def test_shuffle_dataset_with_rng_and_with_global_random_state(tmp_path):
    assert (_shuffled_bytes(str(tmp_path / "a"), rng=random.Random(5))
            == _shuffled_bytes(str(tmp_path / "b"), rng=random.Random(5)))
    random.seed(11)
    first = _shuffled_bytes(str(tmp_path / "c"))
    random.seed(11)
    assert _shuffled_bytes(str(tmp_path / "d")) == first
    with pytest.raises(ValueError, match="random_seed or rng, not both"):
        gu.shuffle_dataset([], random_seed=1, rng=random.Random(1))


def test_shuffle_dataset_resume_gives_the_same_bytes(tmp_path):
    reference = _shuffled_bytes(str(tmp_path / "ref"), rng=random.Random(9), shards=3)
    directory = str(tmp_path / "resume")
    os.makedirs(directory)
    paths = _unshuffled_paths(directory, 3)
    gu.generate_files(_cases(40), paths)
    # As if a first run died after writing shard 0 but before deleting its input.
    with open(paths[0], "rb") as handle:
        unshuffled_shard0 = handle.read()
    gu._shuffle_single(paths[0], rng=random.Random(random.Random(9).getrandbits(64)))
    with open(paths[0], "wb") as handle:  # The input of shard 0 was never deleted.
        handle.write(unshuffled_shard0)
    gu.shuffle_dataset(paths, rng=random.Random(9))
    assert [open(gu._shuffled_name(p), "rb").read() for p in paths] == reference
    assert sorted(os.listdir(directory)) == _with_records(
        os.path.basename(gu._shuffled_name(p)) for p in paths)


def test_shuffle_dataset_applies_extra_fn_and_reports_missing_input(tmp_path):
    paths = _unshuffled_paths(str(tmp_path), 1)
    gu.generate_files(_cases(6), paths)

    def keep_three(records):
        return records[:3]

    gu.shuffle_dataset(paths, extra_fn=keep_three, random_seed=0)
    assert len(gu.read_records(gu._shuffled_name(paths[0]))) == 3
    missing = _unshuffled_paths(str(tmp_path / "none"), 1)
    with pytest.raises(ValueError, match="does not exist; run generate_files first"):
        gu.shuffle_dataset(missing, random_seed=0)


def test_shuffle_dataset_leaves_files_without_the_suffix_alone(tmp_path):
    paths = gu.train_data_filenames("p", str(tmp_path), 1)
    gu.generate_files(_cases(5), paths)
    before = open(paths[0], "rb").read()
    gu.shuffle_dataset(paths, random_seed=0)
    assert open(paths[0], "rb").read() == before


def test_generate_dataset_and_shuffle(tmp_path):
    train = _unshuffled_paths(str(tmp_path), 2)
    dev = [str(tmp_path / ("p-dev" + gu.UNSHUFFLED_SUFFIX + "-00000-of-00001"))]
    random.seed(0)
    gu.generate_dataset_and_shuffle(_cases(6), train, _cases(2), dev)
    assert sorted(os.listdir(tmp_path)) == _with_records([
        "p-dev-00000-of-00001", "p-train-00000-of-00002", "p-train-00001-of-00002"])
    assert sorted(_targets_of(str(tmp_path / "p-dev-00000-of-00001"))) == [[2, 1], [3, 1]]
    unshuffled_dir = tmp_path / "keep"
    unshuffled_dir.mkdir()
    train = _unshuffled_paths(str(unshuffled_dir), 1)
    gu.generate_dataset_and_shuffle(_cases(2), train, _cases(1), [str(unshuffled_dir / "d")],
                                    shuffle=False)
    assert sorted(os.listdir(unshuffled_dir)) == _with_records(["d", os.path.basename(train[0])])


# ------------------------------------------------------------------ packing

def test_pack_examples_targets_only_hand_computed():
    examples = [{"targets": [5, 6, 1]}, {"targets": [7, 1]}, {"targets": [8, 9, 10, 1]},
                {"targets": [11, 1]}]
    packed = list(gu.pack_examples(examples, has_inputs=False, packed_length=8, spacing=1))
    # [5,6,1] + gap + [7,1] = 6 ids; [8,9,10,1] does not fit there (6+1+4 > 8) and opens a
    # second pack; [11,1] does not fit the first (6+1+2 > 8) but fits the second (4+1+2).
    assert packed == [
        {"targets": [5, 6, 1, 0, 7, 1],
         "targets_segmentation": [1, 1, 1, 0, 2, 2],
         "targets_position": [0, 1, 2, 0, 0, 1]},
        {"targets": [8, 9, 10, 1, 0, 11, 1],
         "targets_segmentation": [1, 1, 1, 1, 0, 2, 2],
         "targets_position": [0, 1, 2, 3, 0, 0, 1]},
    ]


def test_pack_examples_with_inputs_needs_both_sides_to_fit():
    examples = [{"inputs": [3, 1], "targets": [4, 4, 1]},
                {"inputs": [5, 1], "targets": [6, 1]},
                {"inputs": [7, 7, 7, 1], "targets": [8, 1]}]
    packed = list(gu.pack_examples(examples, has_inputs=True, packed_length=7, spacing=2))
    assert packed == [
        {"inputs": [3, 1, 0, 0, 5, 1], "inputs_segmentation": [1, 1, 0, 0, 2, 2],
         "inputs_position": [0, 1, 0, 0, 0, 1],
         "targets": [4, 4, 1, 0, 0, 6, 1], "targets_segmentation": [1, 1, 1, 0, 0, 2, 2],
         "targets_position": [0, 1, 2, 0, 0, 0, 1]},
        {"inputs": [7, 7, 7, 1], "inputs_segmentation": [1, 1, 1, 1],
         "inputs_position": [0, 1, 2, 3],
         "targets": [8, 1], "targets_segmentation": [1, 1], "targets_position": [0, 1]},
    ]


def test_pack_examples_queue_evicts_the_oldest_pack():
    examples = [{"targets": [i + 2] * 3} for i in range(3)]
    packed = list(gu.pack_examples(examples, False, packed_length=4, spacing=0, queue_size=2))
    assert [p["targets"] for p in packed] == [[2, 2, 2], [3, 3, 3], [4, 4, 4]]


def test_pack_examples_chops_long_sequences_and_drops_empty_remainders():
    examples = [{"targets": list(range(2, 12))}, {"targets": list(range(40, 48))},
                {"targets": [30, 1]}]
    packed = list(gu.pack_examples(examples, False, packed_length=4, spacing=1,
                                   chop_long_sequences=True))
    # 10 ids: two pieces now, remainder [10, 11] stays open; 8 ids: two pieces and an empty
    # remainder (dropped); [30, 1] does not fit next to [10, 11] (2+1+2 > 4).
    assert [p["targets"] for p in packed] == [
        [2, 3, 4, 5], [6, 7, 8, 9], [40, 41, 42, 43], [44, 45, 46, 47], [10, 11], [30, 1]]
    assert all(p["targets"] for p in packed)
    # Without chopping a long sequence is its own example.
    whole = list(gu.pack_examples(examples[:1], False, packed_length=4))
    assert whole[0]["targets"] == list(range(2, 12))
    with pytest.raises(ValueError, match="chop_long_sequences=True works only"):
        list(gu.pack_examples([], True, chop_long_sequences=True))


def _unpack(packed, key):
    """Recover the original sequences of one packed feature from its segmentation."""
    ids, segments, positions = (packed[key], packed[key + "_segmentation"],
                                packed[key + "_position"])
    sequences = {}
    for token, segment, position in zip(ids, segments, positions):
        if segment == 0:
            assert token == 0 and position == 0  # Spacing.
            continue
        sequence = sequences.setdefault(segment, [])
        assert position == len(sequence)
        sequence.append(token)
    assert sorted(sequences) == list(range(1, len(sequences) + 1))
    return [sequences[k] for k in sorted(sequences)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(1, 9), min_size=1, max_size=12),
                          st.lists(st.integers(1, 9), min_size=1, max_size=12)), max_size=25),
       st.integers(4, 20), st.integers(0, 3), st.integers(1, 4), st.booleans())
def test_pack_examples_loses_nothing_and_respects_the_length(pairs, packed_length, spacing,
                                                             queue_size, has_inputs):
    examples = [{"inputs": i, "targets": t} for i, t in pairs]
    packed = list(gu.pack_examples(examples, has_inputs, packed_length, spacing, queue_size))
    targets = [seq for p in packed for seq in _unpack(p, "targets")]
    assert sorted(targets) == sorted(t for _, t in pairs)
    if has_inputs:
        unpacked = [(tuple(i), tuple(t)) for p in packed
                    for i, t in zip(_unpack(p, "inputs"), _unpack(p, "targets"))]
        assert sorted(unpacked) == sorted((tuple(i), tuple(t)) for i, t in pairs)
    for p in packed:
        if len(_unpack(p, "targets")) > 1:  # Only a lone sequence may exceed the length.
            assert len(p["targets"]) <= packed_length
    assert len(packed) <= len(pairs)


def test_sequence_packer_numbers_segments_after_an_empty_sequence():
    packer = gu.SequencePacker([5], spacing=1)
    packer.add([])
    packer.add([6])
    assert packer.to_dict()["targets_segmentation"] == [1, 0, 0, 3]


def test_packed_examples_survive_to_example(tmp_path):
    packed = gu.pack_examples([{"inputs": [3, 1], "targets": [4, 1]}] * 3, True,
                              packed_length=16)
    path = str(tmp_path / "packed")
    gu.write_records([gu.to_example(p).SerializeToString() for p in packed], path)
    (example,) = [_parse(r) for r in gu.read_records(path)]
    assert _values(example, "inputs_segmentation") == [1, 1, 0, 0, 2, 2, 0, 0, 3, 3]
    assert _values(example, "targets_position") == [0, 1, 0, 0, 0, 1, 0, 0, 0, 1]


# ------------------------------------------------------------------ atomic writes

def test_atomic_write_replaces_only_on_success(tmp_path):
    path = tmp_path / "vocab.txt"
    with gu.atomic_write(str(path), "w") as handle:
        handle.write("héllo\n")
    assert path.read_text(encoding="utf-8") == "héllo\n"
    with pytest.raises(RuntimeError):
        with gu.atomic_write(str(path)) as handle:
            handle.write(b"partial")
            raise RuntimeError("boom")
    assert path.read_text(encoding="utf-8") == "héllo\n"
    assert os.listdir(tmp_path) == ["vocab.txt"]
    with pytest.raises(ValueError, match="mode 'a' is not supported"):
        with gu.atomic_write(str(path), "a"):
            pass


def test_atomic_output_path_is_hidden_and_in_the_same_folder(tmp_path):
    target = tmp_path / "sub" / "p-train-00000-of-00001"
    with gu.atomic_output_path(str(target)) as tmp:
        assert os.path.dirname(tmp) == str(target.parent)
        assert os.path.basename(tmp).startswith(".p-train-00000-of-00001.")
        assert tmp.endswith(".incomplete")
        assert not tf.io.gfile.glob(str(tmp_path / "sub" / "p-train*"))
        with tf.io.TFRecordWriter(tmp) as writer:
            writer.write(b"x")
    assert gu.read_records(str(target)) == [b"x"]
    assert os.listdir(target.parent) == [target.name]


def test_atomic_output_path_on_a_remote_file_system():
    # TF's in-memory file system stands in for gs://; its exists() also matches prefixes,
    # so only the states before and after the block are checked.
    path = "ram://t2t_test_generator_utils/out"
    with pytest.raises(RuntimeError):
        with gu.atomic_output_path(path) as tmp:
            with tf.io.gfile.GFile(tmp, "w") as handle:
                handle.write("partial")
            raise RuntimeError("boom")
    assert not tf.io.gfile.exists(tmp) and not tf.io.gfile.exists(path)
    with gu.atomic_output_path(path) as tmp:
        assert tmp != path
        with tf.io.gfile.GFile(tmp, "w") as handle:
            handle.write("remote")
    with tf.io.gfile.GFile(path) as handle:
        assert handle.read() == "remote"
    assert not tf.io.gfile.exists(tmp)
    tf.io.gfile.remove(path)


# ------------------------------------------------------------------ vocab helpers

class _FakeSubwordTextEncoder:
    """Stands in for text_encoder.SubwordTextEncoder (same constructor and methods used)."""
    built_from = []

    def __init__(self, filename=None):
        self.subtokens = []
        if filename is not None:
            with open(filename, encoding="utf-8") as handle:
                self.subtokens = [line.rstrip("\n")[1:-1] for line in handle]

    @classmethod
    def build_from_generator(cls, generator, target_size, max_subtoken_length=None,
                             reserved_tokens=None):
        lines = list(generator)
        cls.built_from.append((lines, target_size, max_subtoken_length, reserved_tokens))
        encoder = cls()
        words = sorted({word for line in lines for word in line.split()})
        encoder.subtokens = ["<pad>", "<EOS>"] + words
        return encoder

    @property
    def vocab_size(self):
        return len(self.subtokens)

    def store_to_file(self, filename, add_single_quotes=True):
        with open(filename, "w", encoding="utf-8") as handle:
            for token in self.subtokens:
                handle.write("'%s'\n" % token)


@pytest.fixture
def fake_encoder(monkeypatch):
    monkeypatch.setattr(gu.text_encoder, "SubwordTextEncoder", _FakeSubwordTextEncoder)
    _FakeSubwordTextEncoder.built_from = []
    return _FakeSubwordTextEncoder


def test_get_or_generate_vocab_inner_builds_stores_then_loads(tmp_path, fake_encoder):
    data_dir = str(tmp_path / "data")
    vocab = gu.get_or_generate_vocab_inner(data_dir, "vocab.p.16", 16,
                                           iter(["b a", "c a"]), max_subtoken_length=5,
                                           reserved_tokens=["<pad>", "<EOS>"])
    assert vocab.subtokens == ["<pad>", "<EOS>", "a", "b", "c"]
    assert fake_encoder.built_from == [(["b a", "c a"], 16, 5, ["<pad>", "<EOS>"])]
    assert os.listdir(data_dir) == ["vocab.p.16"]
    loaded = gu.get_or_generate_vocab_inner(data_dir, "vocab.p.16", 16, _exploding_generator())
    assert loaded.subtokens == vocab.subtokens
    unsaved = gu.get_or_generate_vocab_inner(None, "vocab.p.16", 16, iter(["z"]))
    assert unsaved.subtokens == ["<pad>", "<EOS>", "z"]


def test_lines_within_budget_samples_as_t2t(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("".join("line%02d\n" % i for i in range(20)))  # 140 bytes
    # budget 20: skip int(140 / 20 / 2) = 3 lines before each sample; 6 chars per line, so
    # the budget is 14, 8, 2, -4 after each sample and reading stops after the fourth.
    assert list(gu._lines_within_budget(str(path), 20)) == [
        "line03", "line07", "line11", "line15"]
    assert list(gu._lines_within_budget(str(path), 1e6))[:3] == ["line00", "line01", "line02"]


def _tgz_with(members):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_get_or_generate_vocab_downloads_extracts_and_gunzips(tmp_path, fake_encoder):
    source_dir = tmp_path / "remote"
    source_dir.mkdir()
    de_gz = gzip.compress("hallo welt\nguten tag\n".encode("utf-8"))
    (source_dir / "corpus.tgz").write_bytes(_tgz_with({
        "corpus/train.en": b"hello world\ngood day\n", "corpus/train.de.gz": de_gz}))
    tmp_dir = str(tmp_path / "tmp")
    sources = [["file://" + str(source_dir / "corpus.tgz"),
                ["corpus/train.en", "corpus/train.de.gz"]]]
    vocab = gu.get_or_generate_vocab(str(tmp_path / "data"), tmp_dir, "vocab.x", 64, sources,
                                     max_subtoken_length=7)
    lines, size, max_len, _ = fake_encoder.built_from[0]
    assert lines == ["hello world", "good day", "hallo welt", "guten tag"]
    assert (size, max_len) == (64, 7)
    assert "welt" in vocab.subtokens
    assert os.path.exists(os.path.join(tmp_dir, "corpus", "train.de"))
    bad = [["file://" + str(source_dir / "corpus.tgz"), ["corpus/missing.txt"]]]
    with pytest.raises(ValueError, match="corpus/missing.txt is not in corpus.tgz"):
        list(gu.generate_lines_for_vocab(tmp_dir, bad))


def test_tabbed_and_txt_vocabs(tmp_path, fake_encoder):
    (tmp_path / "pairs.tsv").write_text("hello\thallo\nno tab here\nbye\ttschuess\n")
    vocab = gu.get_or_generate_tabbed_vocab(str(tmp_path / "d1"), str(tmp_path), "pairs.tsv",
                                            1, "vocab.de", 32)
    assert fake_encoder.built_from[-1][0] == ["hallo", "tschuess"]
    assert vocab.subtokens[2:] == ["hallo", "tschuess"]
    (tmp_path / "b.txt").write_text("second file\n")
    (tmp_path / "a.txt").write_text(" first file \n")
    gu.get_or_generate_txt_vocab(str(tmp_path / "d2"), "vocab.txt", 32,
                                 str(tmp_path / "*.txt"))
    assert fake_encoder.built_from[-1][0] == ["first file", "second file"]


def test_get_or_generate_vocab_inner_with_the_real_subword_encoder(tmp_path):
    lines = ["the quick brown fox", "the lazy dog", "quick quick fox"] * 5
    vocab = gu.get_or_generate_vocab_inner(str(tmp_path), "vocab.sub", 40, iter(lines))
    loaded = gu.get_or_generate_vocab_inner(str(tmp_path), "vocab.sub", 40,
                                            _exploding_generator())
    assert isinstance(vocab, text_encoder.SubwordTextEncoder)
    assert isinstance(loaded, text_encoder.SubwordTextEncoder)
    assert loaded.vocab_size == vocab.vocab_size
    assert loaded.decode(loaded.encode("the lazy fox")) == "the lazy fox"


# --- lead's fixes: max_cases scope, stale temp files, permissions ---------------------------
def test_max_cases_scope_caps_every_call(tmp_path):
    out = [str(tmp_path / "p-train-00000-of-00001")]
    with gu.max_cases_scope(3):
        gu.generate_files(({"targets": [i + 2, 1]} for i in range(10)), out)
    assert len(gu.read_records(out[0])) == 3


def test_stale_temp_files_of_a_killed_run_are_removed(tmp_path):
    final = tmp_path / "p-train-00000-of-00001"
    stale = tmp_path / (".p-train-00000-of-00001.abc123" + gu.INCOMPLETE_SUFFIX)
    stale.write_bytes(b"partial")
    gu.generate_files(iter([{"targets": [2, 1]}]), [str(final)])
    assert final.exists() and not stale.exists()


def test_outputs_get_umask_permissions_not_0600(tmp_path):
    import os
    import stat
    path = tmp_path / "out.txt"
    with gu.atomic_write(str(path), "w") as handle:
        handle.write("x")
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
