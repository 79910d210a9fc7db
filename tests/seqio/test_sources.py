"""DataSources: text lines, tf.train.Example files, functions, and TFDS (t2t-toolkit[tfds]) on a
small dataset built here."""
import functools

import pytest
import tensorflow as tf

from t2t import seqio

from seqio_testing import build_tiny_tfds

BYTES = seqio.ByteVocabulary()


def test_text_line_source_skips_headers_and_shards(tmp_path):
    for i in range(3):
        (tmp_path / ("f%d.tsv" % i)).write_text("q\ta\n" + "".join(
            "q%d%d\ta%d%d\n" % (i, j, i, j) for j in range(2)))
    source = seqio.TextLineDataSource({"train": str(tmp_path / "f*.tsv")}, skip_header_lines=1)
    assert source.list_shards("train") == [str(tmp_path / ("f%d.tsv" % i)) for i in range(3)]
    lines = list(source.get_dataset("train", shuffle=False).as_numpy_iterator())
    assert lines == [b"q00\ta00", b"q01\ta01", b"q10\ta10", b"q11\ta11", b"q20\ta20",
                     b"q21\ta21"]
    shard = list(source.get_dataset("train", shuffle=False,
                                    shard_info=seqio.ShardInfo(1, 3)).as_numpy_iterator())
    assert shard == [b"q10\ta10", b"q11\ta11"]
    with pytest.raises(ValueError, match="too few files to shard. 3 files vs 4 shards"):
        source.get_dataset("train", shard_info=seqio.ShardInfo(0, 4))
    shuffled = [list(source.get_dataset("train", shuffle=True, seed=s).as_numpy_iterator())
                for s in (1, 1, 2)]
    assert shuffled[0] == shuffled[1] and sorted(shuffled[0]) == sorted(lines)
    empty = seqio.TextLineDataSource({"train": str(tmp_path / "none*.tsv")})
    with pytest.raises(ValueError, match="No file is found for the file pattern"):
        empty.get_dataset("train")


def test_tfexample_source(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(3):
            writer.write(seqio.dict_to_tfexample({"text": "t%d" % i,
                                                  "ids": [i, i + 1]}).SerializeToString())
    source = seqio.TFExampleDataSource(
        {"train": path}, feature_description={
            "text": tf.io.FixedLenFeature([], tf.string),
            "ids": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=True)})
    rows = list(source.get_dataset("train", shuffle=False).as_numpy_iterator())
    assert [r["text"] for r in rows] == [b"t0", b"t1", b"t2"]
    assert rows[2]["ids"].tolist() == [2, 3]


def test_function_source_signature_checks():
    with pytest.raises(ValueError, match="must have initial args \\('split', 'shuffle_files'\\)"):
        seqio.FunctionDataSource(lambda shuffle_files, split: None, splits=["train"])
    source = seqio.FunctionDataSource(
        lambda split, shuffle_files: tf.data.Dataset.range(3), splits=["train"],
        num_input_examples={"train": 3})
    assert source.num_input_examples("train") == 3
    with pytest.raises(ValueError, match="does not support low-level sharding"):
        source.get_dataset("train", shard_info=seqio.ShardInfo(0, 2))


@pytest.fixture(scope="module")
def tiny_tfds(tmp_path_factory):
    pytest.importorskip("tensorflow_datasets")
    data_dir = tmp_path_factory.mktemp("tfds")
    build_tiny_tfds(data_dir)
    return str(data_dir)


@pytest.mark.parametrize("read_only", [True, False])
def test_tfds_source_on_a_local_dataset(tiny_tfds, read_only):
    source = seqio.TfdsDataSource("t2t_seqio_tiny:1.0.0", tfds_data_dir=tiny_tfds,
                                  splits={"train": "train", "dev": "train[:30%]",
                                          "test": "validation"}, read_only=read_only)
    assert source.num_input_examples("dev") == 3
    assert source.num_input_examples("test") == 4
    assert len(source.list_shards("train")) >= 1
    task = seqio.Task("tiny_qa", source, {
        "inputs": seqio.Feature(BYTES, add_eos=False), "targets": seqio.Feature(BYTES)},
        preprocessors=[
            functools.partial(seqio.preprocessors.rekey,
                              key_map={"inputs": "question", "targets": "answer"}),
            seqio.preprocessors.tokenize, seqio.preprocessors.append_eos])
    rows = list(task.get_dataset(None, split="test", shuffle=False).as_numpy_iterator())
    assert sorted(BYTES.decode(r["inputs"]) for r in rows) == ["q100", "q101", "q102", "q103"]
    assert all(r["targets"].tolist()[-1] == 1 for r in rows)
    assert len(list(task.get_dataset(None, split="train", seed=3))) == 10


def test_tfds_names_need_versions():
    with pytest.raises(ValueError, match="TFDS name must contain a version number"):
        seqio.TfdsDataSource("mnist")


def test_splits_given_as_one_name(tiny_tfds):
    source = seqio.FunctionDataSource(lambda split, shuffle_files: tf.data.Dataset.range(2),
                                      splits="validation")
    assert source.splits == ("validation",)
    task = seqio.Task("one_split", source, {})
    assert task.splits == ("validation",)
    tfds_source = seqio.TfdsDataSource("t2t_seqio_tiny:1.0.0", tfds_data_dir=tiny_tfds,
                                       splits="validation")
    assert tuple(tfds_source.splits) == ("validation",)
    assert tfds_source.num_input_examples("validation") == 4


def test_lazy_tfds_loader_with_a_split_map(tiny_tfds):
    loader = seqio.LazyTfdsLoader("t2t_seqio_tiny:1.0.0", data_dir=tiny_tfds,
                                  split_map={"validation": "train[:30%]", "test": "validation"})
    assert (loader.size("validation"), loader.size("test")) == (3, 4)
    assert [f.take for f in loader.files("validation")] == [3]
    rows = list(loader.load("test", shuffle_files=False).as_numpy_iterator())
    assert sorted(r["question"] for r in rows) == [b"q100", b"q101", b"q102", b"q103"]
    assert loader.resolved_tfds_name("test") == "t2t_seqio_tiny:1.0.0"
    with pytest.raises(ValueError, match="has no split 'train'; splits: \\['test', 'validation'\\]"):
        loader.size("train")
    # seqio's error is a KeyError (its own test_split_map expects one), for files() too.
    with pytest.raises(KeyError, match="has no split 'train'"):
        loader.size("train")
    with pytest.raises(KeyError, match="has no split 'train'"):
        loader.files("train")
