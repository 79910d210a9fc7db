"""Tasks, Mixtures, registries and get_dataset: seqio's order of steps, rates, errors,
determinism for a fixed seed, offline caches in seqio's format."""
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from t2t import seqio
from t2t.seqio import preprocessors

BYTES = seqio.ByteVocabulary()
FEATURES = {"inputs": seqio.Feature(BYTES), "targets": seqio.Feature(BYTES)}


def text_source(n=20, prefix="", splits=("train", "validation")):
    def dataset_fn(split, shuffle_files, seed=None):
        del shuffle_files, seed
        return tf.data.Dataset.from_tensor_slices({
            "inputs": ["%s%s in %d" % (prefix, split, i) for i in range(n)],
            "targets": ["%s%s out %d" % (prefix, split, i) for i in range(n)]})
    return seqio.FunctionDataSource(dataset_fn, splits=splits,
                                    num_input_examples={s: n for s in splits})


def add_task(name, n=20, prefix="", features=FEATURES, extra=()):
    return seqio.TaskRegistry.add(
        name, text_source(n, prefix), output_features=features,
        preprocessors=[preprocessors.tokenize, preprocessors.append_eos] + list(extra))


def texts(ds, key="inputs"):
    return [BYTES.decode(ex[key]) for ex in ds.as_numpy_iterator()]


# ------------------------------------------------------------------------------- tasks
def test_task_dataset_tokenized_trimmed_and_shuffled_by_seed():
    task = add_task("t1")
    assert seqio.get_mixture_or_task("t1") is task and seqio.TaskRegistry.get("t1") is task
    plain = list(task.get_dataset({"inputs": 6, "targets": 4}, shuffle=False).as_numpy_iterator())
    assert len(plain) == 20
    assert plain[0]["inputs"].tolist() == BYTES.encode("train ")
    assert plain[0]["targets"].tolist() == BYTES.encode("trai")
    assert plain[0]["inputs_pretokenized"] == b"train in 0"
    a = texts(task.get_dataset(None, seed=5))
    assert a == texts(task.get_dataset(None, seed=5))
    assert a != texts(task.get_dataset(None, seed=6))
    assert sorted(a) == sorted(texts(task.get_dataset(None, shuffle=False)))


def test_task_validation_errors():
    with pytest.raises(ValueError, match="contains invalid characters"):
        seqio.Task("bad name", text_source(), FEATURES)
    with pytest.raises(ValueError, match="must be a seqio.Feature"):
        seqio.Task("t", text_source(), {"inputs": BYTES})
    wrong_dtype = {"inputs": seqio.Feature(BYTES, dtype=tf.int64)}
    task = seqio.Task("t", text_source(), wrong_dtype, preprocessors=[preprocessors.tokenize])
    with pytest.raises(ValueError, match="incorrect type for feature 'inputs' after "
                                         "preprocessing: Got int32, expected int64"):
        task.get_dataset(None)
    missing = seqio.Task("t", text_source(), {"answer": seqio.Feature(BYTES)})
    with pytest.raises(ValueError, match="missing expected output feature after "
                                         "preprocessing: answer"):
        missing.get_dataset(None)
    optional = seqio.Task("t", text_source(), {"answer": seqio.Feature(BYTES, required=False)})
    assert len(list(optional.get_dataset(None))) == 20
    with pytest.raises(ValueError, match="has no split 'test'"):
        add_task("t2").get_dataset(None, split="test")
    no_shuffle = seqio.Task("t", text_source(), FEATURES, shuffle_buffer_size=None,
                            preprocessors=[preprocessors.tokenize])
    with pytest.raises(ValueError, match="Shuffling is disallowed"):
        no_shuffle.get_dataset(None, shuffle=True)


def test_registry_errors_name_the_closest_names():
    add_task("wmt_ende")
    with pytest.raises(ValueError, match="Attempting to register duplicate provider"):
        add_task("wmt_ende")
    with pytest.raises(ValueError, match="No Task or Mixture found with name 'wmt_end'; "
                                         "closest registered names: wmt_ende"):
        seqio.get_mixture_or_task("wmt_end")
    with pytest.raises(ValueError, match="Provider name not registered: wmt_en.*wmt_ende"):
        seqio.TaskRegistry.get("wmt_en")
    seqio.TaskRegistry.remove("wmt_ende")
    assert "wmt_ende" not in seqio.TaskRegistry.names()


def test_get_dataset_order_epochs_and_post_cache_seeds():
    """Pre-cache steps run once per example, post-cache random steps anew each epoch."""
    @seqio.map_over_dataset(num_seeds=1)
    def add_noise(ex, seed):
        return {**ex, "noise": tf.random.stateless_uniform([], seed=seed, maxval=1000000,
                                                           dtype=tf.int64)}

    task = seqio.Task("cached", text_source(n=3), FEATURES,
                      preprocessors=[preprocessors.tokenize, seqio.CacheDatasetPlaceholder(),
                                     add_noise, preprocessors.append_eos])
    assert task.supports_caching and not task.requires_caching
    examples = list(task.get_dataset(None, shuffle=False, num_epochs=2,
                                     seed=1).as_numpy_iterator())
    assert [ex["inputs_pretokenized"] for ex in examples] == [b"train in 0", b"train in 1",
                                                              b"train in 2"] * 2
    noise = [int(ex["noise"]) for ex in examples]
    assert noise[:3] != noise[3:] and len(set(noise)) == 6
    assert examples[0]["inputs"].tolist()[-1] == 1  # EOS appended after the placeholder


def test_cache_placeholder_rules():
    with pytest.raises(ValueError, match="at most once"):
        seqio.Task("t", text_source(), FEATURES, preprocessors=[
            seqio.CacheDatasetPlaceholder(), seqio.CacheDatasetPlaceholder()])

    def needs_length(ds, sequence_length):
        return ds

    early = seqio.Task("t", text_source(), FEATURES, preprocessors=[
        needs_length, seqio.CacheDatasetPlaceholder()])
    with pytest.raises(ValueError, match="'needs_length' has a `sequence_length` argument but "
                                         "occurs before `CacheDatasetPlaceholder`"):
        early.get_dataset(None)
    required = seqio.Task("t", text_source(), FEATURES, preprocessors=[
        seqio.CacheDatasetPlaceholder(required=True)])
    with pytest.raises(ValueError, match="requires caching"):
        required.get_dataset(None)


def write_seqio_cache(cache_dir, split, examples):
    """A cache as seqio_cache_tasks writes it: info/stats JSON, TFRecord shards, COMPLETED."""
    os.makedirs(cache_dir, exist_ok=True)
    path = seqio.get_cached_tfrecord_prefix(cache_dir, split) + "-00000-of-00001"
    with tf.io.TFRecordWriter(path) as writer:
        for ex in examples:
            writer.write(seqio.dict_to_tfexample(ex).SerializeToString())
    info = {"features": {"inputs": {"dtype": "int32", "shape": [None]},
                         "targets": {"dtype": "int32", "shape": [None]},
                         "inputs_plaintext": {"dtype": "string", "shape": []}},
            "num_shards": 1, "seqio_version": "0.0.20"}
    with open(seqio.get_cached_info_path(cache_dir, split), "w") as f:
        json.dump(info, f)
    with open(seqio.get_cached_stats_path(cache_dir, split), "w") as f:
        json.dump({"examples": len(examples), "inputs_tokens": 6}, f)
    open(os.path.join(cache_dir, "COMPLETED"), "w").close()


def test_use_cached_reads_seqio_cache_format(tmp_path):
    task = seqio.TaskRegistry.add("my:cached_task", text_source(), FEATURES, preprocessors=[
        preprocessors.tokenize, seqio.CacheDatasetPlaceholder(), preprocessors.append_eos])
    write_seqio_cache(str(tmp_path / "my" / "cached_task"), "train", [
        {"inputs": [5, 6], "targets": [7], "inputs_plaintext": "ab"},
        {"inputs": [8], "targets": [9, 10], "inputs_plaintext": "c"}])
    seqio.set_global_cache_dirs([str(tmp_path)])
    try:
        assert task.cache_dir == str(tmp_path / "my" / "cached_task")
        rows = list(task.get_dataset(None, use_cached=True, shuffle=False).as_numpy_iterator())
        assert [r["inputs"].tolist() for r in rows] == [[5, 6, 1], [8, 1]]
        assert rows[0]["inputs"].dtype == np.int32
        assert rows[0]["inputs_pretokenized"] == b"ab"  # legacy _plaintext renamed
        assert seqio.mixing_rate_num_examples(task) == 2.0
        assert task.get_cached_stats("train")["inputs_tokens"] == 6
    finally:
        seqio.set_global_cache_dirs([])


def test_sharding_at_source_or_by_example(tmp_path):
    for i in range(2):
        (tmp_path / ("part-%d.txt" % i)).write_text("".join("f%d l%d\n" % (i, j)
                                                            for j in range(3)))
    source = seqio.TextLineDataSource({"train": str(tmp_path / "part-*.txt")})
    task = seqio.Task("lines", source, {"text": seqio.Feature(BYTES, dtype=tf.string, rank=0)},
                      preprocessors=[lambda ds: ds.map(lambda line: {"text": line})])
    shard0 = [ex["text"] for ex in task.get_dataset(
        None, shuffle=False, shard_info=seqio.ShardInfo(0, 2)).as_numpy_iterator()]
    assert shard0 == [b"f0 l0", b"f0 l1", b"f0 l2"]  # one file per shard
    by_example = [ex["text"] for ex in task.get_dataset(
        None, shuffle=False, shard_info=seqio.ShardInfo(1, 3)).as_numpy_iterator()]
    assert by_example == [b"f0 l1", b"f1 l1"]  # 3 shards > 2 files: every 3rd example


# ----------------------------------------------------------------------------- mixtures
def test_readme_mixing_rates():
    for name in ("task1", "task2", "task3"):
        add_task(name)
    mix1 = seqio.MixtureRegistry.add("mix1", [("task1", 1), ("task2", 7)])
    assert mix1.get_rate(seqio.get_mixture_or_task("task1")) == 1
    same = seqio.Mixture("mix1b", [("task1", 0.5), "task2"], default_rate=3.5)
    assert [same.get_rate(t) / same.total_rate for t in same.tasks] == [1 / 8, 7 / 8]
    mix3 = seqio.MixtureRegistry.add("mix3", ["mix1", "task1", "task3"], default_rate=1)
    rates = {t.name: mix3.get_rate(t) / mix3.total_rate for t in mix3.tasks}
    assert rates == pytest.approx({"task1": 1 / 24 + 1 / 3, "task2": 7 / 24, "task3": 1 / 3})
    by_size = seqio.Mixture("mix2", ["task1", "task2"],
                            default_rate=lambda t: {"task1": 2.0, "task2": 6.0}[t.name])
    assert by_size.get_rate(seqio.TaskRegistry.get("task2")) == 6.0
    with pytest.raises(ValueError, match="need a rate for each task; 'task1' has none"):
        seqio.Mixture("norate", ["task1"])
    callable_sub = seqio.Mixture("m4", [("mix1", lambda m: 1.0), ("task3", 1)])
    with pytest.raises(ValueError, match="'rate' for sub-mixture 'mix1' must be a number"):
        callable_sub.get_rate(seqio.TaskRegistry.get("task1"))
    with pytest.raises(ValueError, match="No Task or Mixture found with name 'tsak1'"):
        seqio.Mixture("m5", [("tsak1", 1)])


def test_mixture_mismatch_fails_at_construction_in_one_line():
    add_task("a")
    seqio.TaskRegistry.add("no_inputs", text_source(), {"targets": seqio.Feature(BYTES)})
    seqio.TaskRegistry.add("int64", text_source(), {
        "inputs": seqio.Feature(BYTES), "targets": seqio.Feature(BYTES, dtype=tf.int64)})
    seqio.TaskRegistry.add("other_vocab", text_source(), {
        "inputs": seqio.Feature(BYTES), "targets": seqio.Feature(seqio.ByteVocabulary(5))})
    cases = {"no_inputs": "task 'no_inputs' has no output feature 'inputs', which task 'a' has",
             "int64": "feature 'targets' of task 'int64' has dtype int64, but task 'a' has int32",
             "other_vocab": "feature 'targets' of task 'other_vocab' has vocabulary "
                            r"ByteVocabulary\(extra_ids=5\), but task 'a' has"}
    for other, message in cases.items():
        with pytest.raises(ValueError, match="Mixture 'bad': " + message) as info:
            seqio.Mixture("bad", [("a", 1), (other, 1)])
        assert "\n" not in str(info.value)


def test_mixture_dataset_samples_by_rate_and_is_deterministic():
    add_task("x", n=50, prefix="x")
    add_task("y", n=50, prefix="y")
    mix = seqio.MixtureRegistry.add("xy", [("x", 1), ("y", 3)])
    ds = mix.get_dataset({"inputs": 16, "targets": 16}, seed=7).take(400)
    names = [t[0] for t in texts(ds)]
    assert 0.65 < names.count("y") / len(names) < 0.85
    assert texts(mix.get_dataset(None, seed=7).take(60)) == \
        texts(mix.get_dataset(None, seed=7).take(60))
    assert texts(mix.get_dataset(None, seed=7).take(60)) != \
        texts(mix.get_dataset(None, seed=8).take(60))
    one_epoch = list(mix.get_dataset(None, num_epochs=1, shuffle=False).as_numpy_iterator())
    assert set(one_epoch[0]) == {"inputs", "targets"}
    kept = next(mix.get_dataset(None, copy_pretokenized=True).as_numpy_iterator())
    assert set(kept) == {"inputs", "targets", "inputs_pretokenized", "targets_pretokenized"}


def test_get_dataset_with_feature_converter_and_batches():
    add_task("pairs", n=30)
    ds = seqio.get_dataset("pairs", {"inputs": 32, "targets": 32},
                           seqio.EncDecFeatureConverter(pack=True), batch_size=4, seed=1)
    batch = next(ds.as_numpy_iterator())
    assert batch["encoder_input_tokens"].shape == (4, 32)
    assert set(batch) == {"encoder_input_tokens", "encoder_segment_ids", "encoder_positions",
                          "decoder_target_tokens", "decoder_input_tokens",
                          "decoder_loss_weights", "decoder_segment_ids", "decoder_positions"}
    assert batch["encoder_segment_ids"].max() >= 2  # several examples per row
    with pytest.raises(TypeError, match="feature_converter should be an instance"):
        seqio.get_dataset("pairs", {"inputs": 8, "targets": 8}, "EncDec")
