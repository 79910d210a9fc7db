"""t2t-cache-tasks: seqio's cache format written on Apache Beam, read back with use_cached=True.

One run uses the DirectRunner's worker processes (2 workers); the others run in process.
"""
import importlib
import json
import os
import sys
import textwrap

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest
from absl import flags

from t2t import seqio
from t2t.bin import cli
from t2t.seqio import beam_utils, cache_tasks, dataset_providers

pytest.importorskip("apache_beam")

USR_MODULE = "t2t_cache_tasks_test_usr"
USR_INIT = textwrap.dedent('''
    """Tasks of tests/seqio/test_cache_tasks.py (imported by the test and by Beam workers)."""
    import os

    import tensorflow as tf

    from t2t import seqio

    DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    FAIL_MARKER = os.path.join(DATA, "FAIL")
    VOCAB = seqio.ByteVocabulary()
    FEATURES = {"inputs": seqio.Feature(VOCAB), "targets": seqio.Feature(VOCAB)}


    def parse_tsv(ds):
        def parse(line):
            parts = tf.strings.split(line, "\\t")
            return {"inputs": parts[0], "targets": parts[1]}
        return ds.map(parse)


    @seqio.map_over_dataset(num_seeds=1)
    def random_crop(ex, seed):
        n = tf.size(ex["inputs"])
        keep = tf.random.stateless_uniform([], seed, minval=1, maxval=n + 1, dtype=tf.int32)
        return {"inputs": ex["inputs"][:keep], "targets": ex["targets"]}


    def _check(text):
        if os.path.exists(FAIL_MARKER) and text.numpy().startswith(b"line 2"):
            raise RuntimeError("injected failure")
        return text


    def maybe_fail(ds):
        def check(ex):
            text = tf.py_function(_check, [ex["inputs"]], tf.string)
            text.set_shape([])
            return {"inputs": text, "targets": ex["targets"]}
        return ds.map(check)


    def register():
        source = seqio.TextLineDataSource({
            "train": os.path.join(DATA, "train-*.tsv"),
            "validation": os.path.join(DATA, "validation.tsv")})
        tail = [seqio.CacheDatasetPlaceholder(), seqio.preprocessors.append_eos]
        head = [parse_tsv, seqio.preprocessors.tokenize]
        seqio.TaskRegistry.add("cache_test_copy", source, FEATURES, preprocessors=head + tail)
        seqio.TaskRegistry.add("cache_test_noisy", source, FEATURES,
                               preprocessors=head + [random_crop] + tail)
        seqio.TaskRegistry.add("cache_test_nocache", source, FEATURES, preprocessors=head)
        seqio.TaskRegistry.add("cache_test_fails", source, FEATURES,
                               preprocessors=[parse_tsv, maybe_fail,
                                              seqio.preprocessors.tokenize] + tail)


    register()
''')


@pytest.fixture(scope="module")
def usr_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cache_usr") / USR_MODULE
    data = folder / "data"
    data.mkdir(parents=True)
    (folder / "__init__.py").write_text(USR_INIT)
    rng = np.random.RandomState(0)
    for shard in range(3):
        lines = ["line %d.%d %s\t%s" % (shard, i, "x" * rng.randint(1, 30), "y" * (i % 7 + 1))
                 for i in range(25)]
        (data / ("train-%d.tsv" % shard)).write_text("\n".join(lines) + "\n")
    (data / "validation.tsv").write_text("".join("val %d\tv%d\n" % (i, i) for i in range(7)))
    return str(folder)


@pytest.fixture(autouse=True)
def tasks(usr_dir):
    """The test tasks in the (per-test emptied) registry; no global cache dirs."""
    from t2t.core import usr_dir as usr_dir_lib
    module = usr_dir_lib.import_usr_dir(usr_dir)
    if "cache_test_copy" not in dataset_providers.TaskRegistry.names():
        module.register()
    seqio.set_global_cache_dirs([])
    yield module
    seqio.set_global_cache_dirs([])


def run_cli(capsys, *args):
    from t2t.bin import t2t_cache_tasks
    flags.FLAGS.unparse_flags()
    with pytest.raises(SystemExit) as info:
        cli.run_main(t2t_cache_tasks.main, "t2t-cache-tasks",
                     argv=["t2t-cache-tasks"] + list(args))
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


def listing(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder)
                  for d, _, files in os.walk(folder) for f in files)


def contents(folder):
    return {name: open(os.path.join(folder, name), "rb").read() for name in listing(folder)}


def examples(ds):
    return sorted((tuple(ex["inputs"].tolist()), tuple(ex["targets"].tolist()))
                  for ex in ds.as_numpy_iterator())


@pytest.fixture(scope="module")
def two_worker_cache(usr_dir, tmp_path_factory):
    """copy and noisy cached by the CLI on 2 DirectRunner worker processes."""
    out = str(tmp_path_factory.mktemp("cache2"))
    from t2t.bin import t2t_cache_tasks
    flags.FLAGS.unparse_flags()
    with pytest.raises(SystemExit) as info:
        cli.run_main(t2t_cache_tasks.main, "t2t-cache-tasks", argv=[
            "t2t-cache-tasks", "--t2t_usr_dir=" + usr_dir, "--output_cache_dir=" + out,
            "--tasks=cache_test_(copy|noisy)", "--min_shards=4", "--base_seed=3",
            "--pipeline_options=--direct_num_workers=2,--direct_running_mode=multi_processing"])
    assert info.value.code == 0
    return out


def test_two_workers_read_back_as_uncached(two_worker_cache):
    for split in ("train", "validation"):
        task = seqio.get_mixture_or_task("cache_test_copy")
        uncached = examples(task.get_dataset(None, split=split, shuffle=False))
        seqio.add_global_cache_dirs([two_worker_cache])
        cached = examples(seqio.get_mixture_or_task("cache_test_copy").get_dataset(
            None, split=split, shuffle=False, use_cached=True))
        assert len(uncached) == (75 if split == "train" else 7)
        assert cached == uncached
        assert cached[0][0][-1] == 1  # the post-cache append_eos ran on the cached rows


def test_one_and_two_workers_write_the_same_files(two_worker_cache, tmp_path):
    results = cache_tasks.cache_tasks(["cache_test_noisy", "cache_test_copy"], str(tmp_path),
                                      min_shards=4, base_seed=3)
    assert [r.status for r in results] == ["cached", "cached"]
    assert contents(str(tmp_path)) == contents(two_worker_cache)
    # The random pre-cache step really ran: crops differ from the copy task's inputs.
    seqio.add_global_cache_dirs([str(tmp_path)])
    noisy = examples(seqio.get_mixture_or_task("cache_test_noisy").get_dataset(
        None, "train", shuffle=False, use_cached=True))
    copy = examples(seqio.get_mixture_or_task("cache_test_copy").get_dataset(
        None, "train", shuffle=False, use_cached=True))
    assert len(noisy) == 75 and noisy != copy


def test_another_base_seed_gives_other_crops(two_worker_cache, tmp_path):
    cache_tasks.cache_tasks(["cache_test_noisy"], str(tmp_path), min_shards=4, base_seed=4)
    shards = lambda d: {k: v for k, v in contents(d).items() if "tfrecord" in k}  # noqa: E731
    assert shards(str(tmp_path)) != shards(os.path.join(two_worker_cache, "cache_test_noisy"))


def test_cache_format(two_worker_cache):
    folder = os.path.join(two_worker_cache, "cache_test_copy")
    assert listing(folder) == sorted(
        ["COMPLETED", "info.train.json", "info.validation.json", "stats.train.json",
         "stats.validation.json"]
        + ["train.tfrecord-%05d-of-00004" % i for i in range(4)]
        + ["validation.tfrecord-%05d-of-00004" % i for i in range(4)])
    info = json.load(open(os.path.join(folder, "info.train.json")))
    assert info == {"num_shards": 4, "seqio_version": seqio.__version__, "features": {
        "inputs": {"shape": [None], "dtype": "int32"},
        "targets": {"shape": [None], "dtype": "int32"},
        "inputs_pretokenized": {"shape": [], "dtype": "string"},
        "targets_pretokenized": {"shape": [], "dtype": "string"}}}
    text = open(os.path.join(folder, "stats.train.json")).read()
    stats = json.loads(text)
    assert text == json.dumps(stats, sort_keys=True, indent=2) + "\n"  # seqio's layout
    task = seqio.get_mixture_or_task("cache_test_copy")
    rows = list(task.get_dataset(None, "train", shuffle=False).as_numpy_iterator())
    lengths = {f: [len(r[f]) - 1 for r in rows] for f in ("inputs", "targets")}  # minus EOS
    assert stats == {"examples": 75,
                     "inputs_tokens": sum(lengths["inputs"]),
                     "inputs_max_tokens": max(lengths["inputs"]),
                     "targets_tokens": sum(lengths["targets"]),
                     "targets_max_tokens": max(lengths["targets"])}
    # Every example is in exactly one shard; shards are TFRecords of tf.Examples.
    import tensorflow as tf
    total = sum(1 for i in range(4) for _ in tf.data.TFRecordDataset(
        os.path.join(folder, "validation.tfrecord-%05d-of-00004" % i)))
    assert total == 7


def test_char_counts_and_example_bytes(tmp_path):
    cache_tasks.cache_tasks(["cache_test_copy"], str(tmp_path), min_shards=1,
                            enable_char_counts=True)
    stats = json.load(open(tmp_path / "cache_test_copy" / "stats.validation.json"))
    # Byte vocabulary features are not SentencePiece: seqio counts no characters for them.
    assert stats["examples"] == 7 and not any(k.endswith("_chars") for k in stats)
    ex = {"a": np.array([3, 4], np.int32), "b": b"hi", "c": np.array([[1.5]], np.float32),
          beam_utils.SOURCE_SHARD_ID_PROVENANCE_KEY: 0}
    expected = seqio.dict_to_tfexample({k: v for k, v in ex.items()
                                        if not k.startswith("provenance/")})
    import tensorflow as tf
    assert tf.train.Example.FromString(beam_utils.example_to_bytes(ex)) == expected


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(ints=st.lists(st.integers(-2**63, 2**63 - 1), max_size=6),
                  floats=st.lists(st.floats(width=32, allow_nan=False), max_size=4),
                  texts=st.lists(st.binary(max_size=200), max_size=3),
                  scalar=st.binary(max_size=300))
def test_example_bytes_parse_as_tf_examples(ints, floats, texts, scalar):
    import tensorflow as tf
    ex = {"i": np.array(ints, np.int64), "i32": np.array(ints, np.int64).astype(np.int32),
          "f": np.array(floats, np.float32), "s": np.array(texts, dtype=object),
          "b": scalar, "m": np.array([ints[:2]] * 2, np.int64)}
    expected = seqio.dict_to_tfexample(ex)
    assert tf.train.Example.FromString(beam_utils.example_to_bytes(ex)) == expected


def test_skip_resume_and_overwrite(tmp_path, capsys, usr_dir):
    out = str(tmp_path)
    args = ["--t2t_usr_dir=" + usr_dir, "--output_cache_dir=" + out, "--tasks=cache_test_copy",
            "--min_shards=2", "--base_seed=5"]
    code, stdout, _ = run_cli(capsys, *args)
    assert code == 0 and "cache_test_copy done: 82 examples" in stdout
    assert "cached 1 task(s), skipped 0: 82 examples" in stdout
    folder = os.path.join(out, "cache_test_copy")
    first = contents(folder)

    code, stdout, _ = run_cli(capsys, *args)
    assert code == 0 and "skipped, already cached at" in stdout
    assert "cached 0 task(s), skipped 1" in stdout

    # An interrupted run: no COMPLETED, a shard missing, a temporary file left behind.
    os.remove(os.path.join(folder, "COMPLETED"))
    os.remove(os.path.join(folder, "train.tfrecord-00001-of-00003"))
    open(os.path.join(folder, ".tmp-dead-train.tfrecord-00000-of-00003"), "w").write("x")
    open(os.path.join(folder, ".train.tfrecord-00000-of-00003.k2j3.incomplete"), "w").write("x")
    open(os.path.join(folder, "train.tfrecord-00000-of-00007"), "w").write("stale")
    dataset_providers.TaskRegistry.reset()
    tasks_module = importlib.import_module(USR_MODULE)  # the usr dir, by its folder name
    tasks_module.register()
    code, stdout, _ = run_cli(capsys, *args)
    assert code == 0 and "cache_test_copy done" in stdout
    assert contents(folder) == first

    code, stdout, _ = run_cli(capsys, *(args + ["--overwrite"]))
    assert code == 0 and "--overwrite: removing" in stdout and "done: 82 examples" in stdout
    assert contents(folder) == first


def test_failed_run_leaves_no_completed_and_rerun_finishes(tmp_path, tasks):
    marker = os.path.join(tasks.DATA, "FAIL")
    open(marker, "w").close()
    try:
        with pytest.raises(Exception, match="injected failure"):
            cache_tasks.cache_tasks(["cache_test_fails"], str(tmp_path), min_shards=2)
    finally:
        os.remove(marker)
    folder = tmp_path / "cache_test_fails"
    assert not (folder / "COMPLETED").exists()
    results = cache_tasks.cache_tasks(["cache_test_fails"], str(tmp_path), min_shards=2)
    assert results[0].status == "cached" and results[0].examples == 82
    assert (folder / "COMPLETED").exists()
    assert not [n for n in os.listdir(folder) if n.startswith(".")]


def test_task_without_placeholder_is_not_cached(tmp_path):
    results = cache_tasks.cache_tasks(["cache_test_nocache"], str(tmp_path))
    assert results == [cache_tasks.CacheResult("cache_test_nocache", "not_cacheable")]
    assert not os.path.exists(tmp_path / "cache_test_nocache")


@pytest.mark.parametrize("args, message", [
    (["--tasks=cache_test_cpy"], "--tasks=cache_test_cpy matches no registered task; "
                                 "closest registered tasks: cache_test_copy"),
    (["--tasks=cache_test_copy", "--excluded_tasks=cache_.*"], "after --excluded_tasks"),
    (["--tasks=(", ], "--tasks: '(' is not a regular expression"),
    (["--pipeline_options=--direct_num_workers=abc"],
     "--pipeline_options: argument --direct_num_workers: invalid int value: 'abc'"),
    (["--pipeline_options=--direct_num_wrkers=2"],
     "unknown Beam option --direct_num_wrkers; did you mean --direct_num_workers?"),
    (["--pipeline_options=--runner=NoSuchRunner"], "runner 'NoSuchRunner'"),
    (["--pipeline_options=DirectRunner"], "'DirectRunner' is not an option"),
    (["--module_import=no_such_module_xyz"], "--module_import=no_such_module_xyz: no module"),
    (["--min_shards=-1"], "--min_shards and --max_shards must be >= 0"),
    (["--output_format=arrayrecord"], "t2t writes tfrecord caches only"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, usr_dir, args, message):
    code, _, err = run_cli(capsys, "--t2t_usr_dir=" + usr_dir,
                           "--output_cache_dir=%s" % tmp_path, *args)
    assert code == 2
    assert err.startswith("t2t-cache-tasks: error: ") and err.count("\n") == 1, err
    assert message in err
    assert "Traceback" not in err


def test_unwritable_or_missing_output_dir(tmp_path, capsys, usr_dir):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    code, _, err = run_cli(capsys, "--t2t_usr_dir=" + usr_dir,
                           "--output_cache_dir=%s/cache" % a_file)
    assert code == 2 and "is a file, not a folder" in err and err.count("\n") == 1
    code, _, err = run_cli(capsys, "--t2t_usr_dir=" + usr_dir)
    assert code == 2 and "give --output_cache_dir" in err


def test_task_without_data_is_a_user_error(tmp_path, tasks):
    seqio.TaskRegistry.add(
        "cache_test_nodata", seqio.TextLineDataSource({"train": str(tmp_path / "none-*.tsv")}),
        tasks.FEATURES, preprocessors=[tasks.parse_tsv, seqio.CacheDatasetPlaceholder()])
    with pytest.raises(cache_tasks.UserError, match="task 'cache_test_nodata', split 'train': "
                                                     "no file matches .*none-"):
        cache_tasks.cache_tasks(["cache_test_nodata"], str(tmp_path / "out"))
    assert not os.path.exists(tmp_path / "out" / "cache_test_nodata" / "COMPLETED")


SEQIO_REF_PYTHON = os.environ.get("SEQIO_REF_PYTHON", "")
@pytest.mark.skipif(not os.path.exists(SEQIO_REF_PYTHON or "/nonexistent"),
                    reason="set SEQIO_REF_PYTHON to a python with seqio 0.0.20 installed")
def test_seqio_itself_reads_the_cache(two_worker_cache, tmp_path):
    """seqio 0.0.20's own use_cached=True reads t2t's cache to its uncached examples."""
    import subprocess
    script = tmp_path / "read_with_seqio.py"
    script.write_text(textwrap.dedent('''
        import json, os, sys
        import tensorflow as tf
        import seqio
        data, cache = sys.argv[1], sys.argv[2]
        vocab = seqio.ByteVocabulary()
        features = {"inputs": seqio.Feature(vocab), "targets": seqio.Feature(vocab)}
        def parse_tsv(ds):
            def parse(line):
                parts = tf.strings.split(line, "\\t")
                return {"inputs": parts[0], "targets": parts[1]}
            return ds.map(parse)
        task = seqio.TaskRegistry.add(
            "cache_test_copy", seqio.TextLineDataSource({
                "train": os.path.join(data, "train-*.tsv"),
                "validation": os.path.join(data, "validation.tsv")}), features,
            preprocessors=[parse_tsv, seqio.preprocessors.tokenize,
                           seqio.CacheDatasetPlaceholder(), seqio.preprocessors.append_eos])
        rows = lambda ds: sorted([ex["inputs"].tolist(), ex["targets"].tolist()]
                                 for ex in ds.as_numpy_iterator())
        uncached = rows(task.get_dataset(None, "train", shuffle=False))
        seqio.add_global_cache_dirs([cache])
        cached = rows(task.get_dataset(None, "train", shuffle=False, use_cached=True))
        print(json.dumps({"equal": cached == uncached, "n": len(cached),
                          "stats": task.get_cached_stats("train")}))
    '''))
    data = os.path.join(importlib.import_module(USR_MODULE).DATA)
    out = subprocess.run([SEQIO_REF_PYTHON, str(script), data, two_worker_cache],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["equal"] and result["n"] == 75 and result["stats"]["examples"] == 75


SEQIO_PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                          "docs", "seqio.md")


@pytest.mark.parametrize("runner", ["FlinkRunner", "SparkRunner", "DataflowRunner"])
def test_documented_cluster_options_reach_the_beam_pipeline(runner, usr_dir, tmp_path,
                                                            monkeypatch):
    """docs/seqio.md's t2t-cache-tasks command for each cluster runner: its --pipeline_options
    are the PipelineOptions the Beam pipeline is built with (no cluster is contacted)."""
    import re

    import apache_beam
    from t2t.bin import t2t_cache_tasks
    with open(SEQIO_PAGE) as f:
        documented = re.findall(r"t2t-cache-tasks [^\n]*\\\n\s*--pipeline_options=(\S+)",
                                f.read())
    value, = [v for v in documented if v.startswith("--runner=%s," % runner)]
    built_with = []

    class Stop(Exception):
        pass

    def pipeline(options=None, **kwargs):
        built_with.append(options)
        raise Stop()

    monkeypatch.setattr(apache_beam, "Pipeline", pipeline)
    flags.FLAGS.unparse_flags()
    flags.FLAGS(["t2t-cache-tasks", "--t2t_usr_dir=" + usr_dir, "--tasks=cache_test_copy",
                 "--output_cache_dir=%s" % tmp_path, "--pipeline_options=" + value])
    try:
        with pytest.raises(Stop):
            t2t_cache_tasks.main(["t2t-cache-tasks"])
    finally:
        flags.FLAGS.unparse_flags()
    options, = built_with
    expected = dict(item[2:].split("=", 1) for item in value.split(","))
    assert options.get_all_options(drop_default=True) == expected


def test_in_process_runner_shows_progress_per_shard_and_no_beam_notice(tmp_path, capsys,
                                                                      usr_dir, caplog):
    import logging as std_logging
    caplog.set_level(std_logging.INFO)
    code, stdout, err = run_cli(capsys, "--t2t_usr_dir=" + usr_dir, "--tasks=cache_test_copy",
                                "--output_cache_dir=%s" % tmp_path, "--min_shards=2")
    assert code == 0, err
    messages = [record.getMessage() for record in caplog.records]
    for shard in (1, 2, 3):
        assert any(m.startswith("cache cache_test_copy train shard %d/3: preprocessing "
                                % shard) for m in messages), messages
        assert any(m.startswith("cache cache_test_copy train shard %d/3 done: 25 examples"
                                % shard) for m in messages), messages
    assert any(m.startswith("cache cache_test_copy validation shard 1/1 done: 7 examples")
               for m in messages), messages
    assert sum(m.startswith("wrote train.tfrecord-") for m in messages) == 3
    assert not any("apitools" in m for m in messages)


def test_beam_import_does_not_print_its_gcp_notice():
    import logging as std_logging
    assert not beam_utils._WithoutBeamGcpNotice().filter(std_logging.LogRecord(
        "root", std_logging.WARNING, "x", 1, "apitools not found, and bigquery client "
        "libraries are not available despite the import not raising an ImportError.", (),
        None))
    assert any(isinstance(f, beam_utils._WithoutBeamGcpNotice)
               for f in std_logging.getLogger().filters)
