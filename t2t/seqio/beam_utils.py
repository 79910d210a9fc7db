"""Apache Beam transforms that write a Task's pre-cache examples in seqio's cache format.

seqio's `beam_utils` names (`PreprocessTask`, `GetInfo`, `GetStats`, `WriteJson`,
`WriteExampleTfRecord`) with one difference that makes the cache reproducible: examples go
to output shards by a hash of (seed, source shard, index within the shard) and are sorted
by that hash inside each shard, so a fixed seed gives the same files whatever the number
of workers or the runner (seqio's `Reshuffle` + liquid sharding places them at random).

    examples = pipeline | PreprocessTask(task, "train", preprocessors_seed=7,
                                         add_provenance=True)
    examples | WriteExampleTfRecord("/cache/my_task/train.tfrecord", num_shards=4, seed=7)
    # /cache/my_task/train.tfrecord-00000-of-00004 ... -00003-of-00004
    examples | GetStats(task.output_features)
    # {"examples": 1000, "inputs_tokens": 52311, "inputs_max_tokens": 87, ...}

Each worker finds the Task in its own registry (`modules_to_import`, `setup_fn`), so the
transforms run unchanged on the DirectRunner's worker processes, Flink, Spark or Dataflow.
Needs `apache-beam` (`pip install 't2t-toolkit[beam]'`).
"""
import functools
import hashlib
import json
import logging as std_logging
import os
from collections.abc import Mapping as MappingABC
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple


class _WithoutBeamGcpNotice(std_logging.Filter):
    """Drops the warning Beam logs on import when the optional GCP client is not installed
    ("apitools not found, and bigquery client libraries are not available ..."): t2t never
    uses BigQuery, and the line came with every t2t-cache-tasks run."""

    def filter(self, record):
        return not str(record.msg).startswith("apitools not found")


std_logging.getLogger().addFilter(_WithoutBeamGcpNotice())  # Beam logs it on the root logger

import apache_beam as beam  # noqa: E402  (after the filter)
import numpy as np
import tensorflow as tf
from absl import logging
from apache_beam import metrics

from t2t.core import atomic_files
from t2t.core import usr_dir
from t2t.core.progress import Progress
from t2t.data import example_bytes
from t2t.seqio import dataset_providers, utils, vocabularies
import t2t.seqio.sources as sources
import t2t.seqio.tfds_loader as tfds_loader

PROVENANCE_PREFIX = "provenance/"
TASK_PROVENANCE_KEY = PROVENANCE_PREFIX + "task"
SOURCE_SHARD_PROVENANCE_KEY = PROVENANCE_PREFIX + "source_shard"
SOURCE_SHARD_ID_PROVENANCE_KEY = PROVENANCE_PREFIX + "source_shard_index"
ID_WITHIN_SHARD_PROVENANCE_KEY = PROVENANCE_PREFIX + "index_within_shard"
PREPROCESSORS_SEED_PROVENANCE_KEY = PROVENANCE_PREFIX + "preprocessors_seed"
PROVENANCE_KEYS = [TASK_PROVENANCE_KEY, SOURCE_SHARD_PROVENANCE_KEY,
                   SOURCE_SHARD_ID_PROVENANCE_KEY, ID_WITHIN_SHARD_PROVENANCE_KEY,
                   PREPROCESSORS_SEED_PROVENANCE_KEY]

# Temporary files (core.atomic_files names them ".<name>.<random>.incomplete"; t2t before
# 0.1 wrote ".tmp-<random>-<name>"), never matched by the reader's "<split>.tfrecord-*".
TEMP_FILE_PATTERNS = (".*" + atomic_files.INCOMPLETE_SUFFIX, ".tmp-*")
_INT64_MAX = 2**63 - 1


def task_preprocessors_seed(task_name: str, base_seed: Optional[int]) -> Optional[int]:
    """The seed of a task's preprocessors for `--base_seed` (None: no base seed), as seqio.

    >>> task_preprocessors_seed("my_task", None) is None
    True
    >>> task_preprocessors_seed("my_task", 1) == task_preprocessors_seed("my_task", 0) + 1
    True
    """
    if not base_seed or base_seed == -1:
        return None
    return int.from_bytes(hashlib.md5(task_name.encode()).digest(), "little") + base_seed


def shard_preprocessors_seed(task_name: str, shard_index: int,
                             preprocessors_seed: Optional[int]) -> int:
    """The seed of one source shard: md5(task name, shard index) + the task's seed, < 2**63."""
    digest = hashlib.md5((task_name + f"shard{shard_index}").encode()).digest()
    seed = int.from_bytes(digest, "little") + (preprocessors_seed or 0)
    if seed > _INT64_MAX:
        seed = int.from_bytes(digest[:7], "little") + (preprocessors_seed or 0)
    return seed % _INT64_MAX


def example_sort_key(seed: Optional[int], shard_index: int, index_within_shard: int) -> int:
    """A 64-bit key of one example: its output shard (key % num_shards) and its place in it.

    >>> example_sort_key(7, 0, 3) == example_sort_key(7, 0, 3)
    True
    """
    text = f"{seed or 0}:{int(shard_index)}:{int(index_within_shard)}".encode()
    return int.from_bytes(hashlib.md5(text).digest()[:8], "little")


class TaskOutputFeatures(MappingABC):
    """A task's `output_features`, looked up in the worker that uses them (picklable).

    Vocabularies need not be picklable: only the task name and the imports travel.
    """

    def __init__(self, task_name: str, modules_to_import: Sequence[str] = (),
                 setup_fn: Callable[[], None] = lambda: None):
        self._task_name = task_name
        self._modules_to_import = tuple(modules_to_import)
        self._setup_fn = setup_fn
        self._features = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_features"] = None
        return state

    def _resolve(self):
        if self._features is None:
            self._setup_fn()
            usr_dir.import_user_modules(self._modules_to_import)
            self._features = dict(
                dataset_providers.TaskRegistry.get(self._task_name).output_features)
        return self._features

    def __getitem__(self, key):
        return self._resolve()[key]

    def __iter__(self):
        return iter(self._resolve())

    def __len__(self):
        return len(self._resolve())


def _to_numpy(value):
    if isinstance(value, tf.RaggedTensor):
        return value
    return value.numpy() if isinstance(value, tf.Tensor) else value


class PreprocessTask(beam.PTransform):
    """The task's source shards → its examples after the pre-cache preprocessors.

    One element per example: a dict of numpy arrays (bytes for strings; RaggedTensors
    stay RaggedTensors). With `add_provenance`, each example also holds the task name,
    its source shard and index there ("provenance/..." keys), which order the cache.
    """

    def __init__(self, task: "dataset_providers.Task", split: str, *,
                 preprocessors_seed: Optional[int] = None,
                 setup_fn: Callable[[], None] = lambda: None,
                 modules_to_import: Sequence[str] = (), add_provenance: bool = False,
                 tfds_data_dir: Optional[str] = None):
        super().__init__()
        self._task_name = task.name
        self._split = split
        self._preprocessors_seed = preprocessors_seed
        self._setup_fn = setup_fn
        self._modules_to_import = tuple(modules_to_import)
        self._add_provenance = add_provenance
        self._tfds_data_dir = tfds_data_dir
        self.shards = list(enumerate(task.source.list_shards(split)))
        if not self.shards:
            raise FileNotFoundError(f"No shards found for {task.name} {split}")
        logging.info("%s %s: %d source shards", task.name, split, len(self.shards))

    def _emit_examples(self, shard: Tuple[int, str]):
        self._setup_fn()
        usr_dir.import_user_modules(self._modules_to_import)
        if self._tfds_data_dir:
            tfds_loader.set_tfds_data_dir_override(self._tfds_data_dir)
        task = dataset_providers.TaskRegistry.get(self._task_name)
        shard_index, shard_name = shard
        counter = functools.partial(metrics.Metrics.counter,
                                    f"{self._task_name}_{self._split}")
        counter("input-shards").inc()
        seed = shard_preprocessors_seed(self._task_name, shard_index, self._preprocessors_seed)
        ds = task.source.get_dataset(
            split=self._split, shuffle=False, seed=seed,
            shard_info=sources.ShardInfo(index=shard_index,
                                                   num_shards=len(self.shards)))
        ds = task.preprocess_precache(ds, seed=seed).prefetch(tf.data.AUTOTUNE)
        description = "cache %s %s shard %d/%d" % (self._task_name, self._split,
                                                   shard_index + 1, len(self.shards))
        logging.info("%s: preprocessing %s", description, shard_name)
        progress = Progress(description)
        examples = counter("examples")
        for i, ex in enumerate(ds):
            ex = {k: _to_numpy(v) for k, v in ex.items()}
            if self._add_provenance:
                ex[TASK_PROVENANCE_KEY] = self._task_name
                ex[SOURCE_SHARD_PROVENANCE_KEY] = shard_name
                ex[SOURCE_SHARD_ID_PROVENANCE_KEY] = shard_index
                ex[ID_WITHIN_SHARD_PROVENANCE_KEY] = i
                if self._preprocessors_seed:
                    ex[PREPROCESSORS_SEED_PROVENANCE_KEY] = self._preprocessors_seed
            examples.inc()
            progress.update(1)
            yield ex
        progress.done()

    def expand(self, pipeline):
        return (pipeline
                | "create_shards" >> beam.Create(self.shards)
                # Spread the source shards over the workers before the heavy step.
                | "spread_shards" >> beam.Reshuffle()
                | "emit_examples" >> beam.FlatMap(self._emit_examples))


# ------------------------------------------------------------------ serialization
# tf.train.Example written directly in protobuf's wire format (`t2t.data.example_bytes`):
# the Python protobuf runtime (pure Python beside TF 2.15's protobuf 3.20) costs ~1 ms per
# example, this ~30 us.
def _feature_bytes(value) -> Optional[bytes]:
    """A serialized tf.train.Feature of a numpy value or bytes (None: not handled here)."""
    if isinstance(value, bytes):
        return example_bytes.bytes_feature([value])
    if not isinstance(value, (np.ndarray, np.generic, int, float)):
        return None
    array = np.asarray(value)
    if array.dtype.kind in "biu":
        return example_bytes.int64_feature(array)
    if array.dtype.kind == "f":
        return example_bytes.float_feature(array)
    if array.dtype.kind in "OS":
        return example_bytes.bytes_feature([tf.compat.as_bytes(v) for v in array.reshape(-1)])
    return None


def example_to_bytes(ex: Mapping[str, Any]) -> bytes:
    """A serialized tf.train.Example of an example (provenance keys dropped, keys sorted).

    Parses to the same message as `utils.dict_to_tfexample(ex)`:

        tf.train.Example.FromString(example_to_bytes({"a": np.array([3, 300])}))
        # features { feature { key: "a" value { int64_list { value: [3, 300] } } } }
    """
    entries = {}
    rest = {}
    for key, value in ex.items():
        if key.startswith(PROVENANCE_PREFIX):
            continue
        feature = _feature_bytes(value)
        if feature is None:
            rest[key] = value
        else:
            entries[key] = feature
    if rest:
        for key, feature in utils.dict_to_tfexample(rest).features.feature.items():
            entries[key] = feature.SerializeToString()
    return example_bytes.serialize_example(entries)


def _example_order(ex: Mapping[str, Any], seed: Optional[int]) -> int:
    return example_sort_key(seed, ex[SOURCE_SHARD_ID_PROVENANCE_KEY],
                            ex[ID_WITHIN_SHARD_PROVENANCE_KEY])


# ------------------------------------------------------------------ files
def write_file_atomically(path: str, data: bytes) -> None:
    """Write `data` to a temporary name beside `path`, then rename it to `path`."""
    with atomic_files.atomic_output_path(path) as temp:
        with tf.io.gfile.GFile(temp, "wb") as f:
            f.write(data)


def shard_path(prefix: str, index: int, num_shards: int) -> str:
    """seqio's (and Beam's) shard name: prefix-00003-of-00008."""
    return "%s-%05d-of-%05d" % (prefix, index, num_shards)


def _write_shard(keyed_records, prefix: str, num_shards: int):
    shard, records = keyed_records
    records = sorted(records)  # by key; equal keys (never seen) by their bytes
    path = shard_path(prefix, shard, num_shards)
    with atomic_files.atomic_output_path(path) as temp:
        with tf.io.TFRecordWriter(temp) as writer:
            for _, record in records:
                writer.write(record)
    logging.info("wrote %s: %s examples", os.path.basename(path), format(len(records), ","))
    yield shard


def _write_empty_shards(written: List[int], prefix: str, num_shards: int):
    for shard in sorted(set(range(num_shards)) - set(written)):
        write_file_atomically(shard_path(prefix, shard, num_shards), b"")
    return num_shards


class WriteExampleTfRecord(beam.PTransform):
    """Examples (dicts with provenance) → `num_shards` TFRecord files of tf.Examples.

    Output shard and order within it follow `example_sort_key(seed, ...)`, so the files
    do not depend on the runner; each shard is written under a temporary name and renamed.
    Shards no example falls in are written empty, as Beam's sink does. Returns a
    PCollection with one element, `num_shards`, once every shard is on disk.
    """

    def __init__(self, output_path: str, num_shards: Optional[int] = None,
                 seed: Optional[int] = None):
        super().__init__()
        if not num_shards or num_shards < 1:
            raise ValueError("WriteExampleTfRecord needs num_shards >= 1 (t2t writes a fixed "
                             "number of shards so that the cache is reproducible)")
        self._output_path = output_path
        self._num_shards = num_shards
        self._seed = seed

    def expand(self, pcoll):
        num_shards, seed, prefix = self._num_shards, self._seed, self._output_path

        def keyed(ex):
            order = _example_order(ex, seed)
            return order % num_shards, (order, example_to_bytes(ex))

        written = (pcoll
                   | "key_by_shard" >> beam.Map(keyed)
                   | "group_by_shard" >> beam.GroupByKey()
                   | "write_shards" >> beam.FlatMap(_write_shard, prefix, num_shards))
        return (pcoll.pipeline
                | "one" >> beam.Create([None])
                | "write_empty_shards" >> beam.Map(
                    lambda _, shards: _write_empty_shards(shards, prefix, num_shards),
                    beam.pvalue.AsList(written)))


class WriteJson(beam.PTransform):
    """Writes each element (one expected) as JSON to `output_path`, atomically.

    `prettify` (seqio's default) sorts the keys and indents by 2, as seqio's info and
    stats files are written.
    """

    def __init__(self, output_path: str, prettify: Optional[bool] = True):
        super().__init__()
        self._output_path = output_path
        self._prettify = prettify

    def expand(self, pcoll):
        path, prettify = self._output_path, self._prettify

        def write(element):
            text = (json.dumps(element, sort_keys=True, indent=2) if prettify
                    else json.dumps(element))
            write_file_atomically(path, (text + "\n").encode())
            return path

        return pcoll | "write_json" >> beam.Map(write)


# ------------------------------------------------------------------ info and stats
def info_dict(ex: Mapping[str, Any], num_shards: int) -> Dict[str, Any]:
    """seqio's info.<split>.json of one example: num_shards, feature shapes and dtypes.

    >>> info_dict({"targets": np.array([3, 4, 1], np.int32)}, 2)["features"]
    {'targets': {'shape': [None], 'dtype': 'int32'}}
    """
    from t2t import seqio  # the package's version, written as seqio writes its own
    info = {"num_shards": num_shards, "features": {}, "seqio_version": seqio.__version__}
    for key, value in ex.items():
        if key.startswith(PROVENANCE_PREFIX):
            continue
        tensor = value if isinstance(value, tf.RaggedTensor) else tf.constant(value)
        shape = tensor.shape.as_list()
        if shape:
            shape = [None] + shape[1:]
        info["features"][key] = {"shape": shape, "dtype": tensor.dtype.name}
    return info


class _FirstExample(beam.CombineFn):
    """The example with the smallest (source shard, index): deterministic, unlike Sample."""

    def create_accumulator(self):
        return None

    @staticmethod
    def _key(ex):
        return (ex[SOURCE_SHARD_ID_PROVENANCE_KEY], ex[ID_WITHIN_SHARD_PROVENANCE_KEY])

    def add_input(self, best, ex):
        if SOURCE_SHARD_ID_PROVENANCE_KEY not in ex:
            return best if best is not None else ex
        return ex if best is None or self._key(ex) < self._key(best) else best

    def merge_accumulators(self, accumulators):
        best = None
        for acc in accumulators:
            if acc is not None:
                best = self.add_input(best, acc)
        return best

    def extract_output(self, best):
        return best


class GetInfo(beam.PTransform):
    """Examples → one dict: seqio's info file (num_shards, features' shapes and dtypes)."""

    def __init__(self, num_shards: int, exclude_provenance: bool = True):
        super().__init__()
        self._num_shards = num_shards
        self._exclude_provenance = exclude_provenance

    def expand(self, pcoll):
        num_shards, exclude = self._num_shards, self._exclude_provenance

        def to_info(ex):
            if ex is None:  # no examples: the features cannot be known
                return {"num_shards": num_shards, "features": {}}
            info = info_dict(ex, num_shards)
            if not exclude:
                for key in PROVENANCE_KEYS:
                    if key in ex:
                        info["features"][key] = info_dict({"x": ex[key]}, 0)["features"]["x"]
            return info

        return (pcoll
                | "first_example" >> beam.CombineGlobally(_FirstExample())
                | "info_dict" >> beam.Map(to_info))


class _CountTokens(beam.DoFn):
    """("<feature>_tokens", n) for each integer output feature: tokens other than EOS/PAD."""

    def __init__(self, output_features: Mapping[str, "dataset_providers.Feature"]):
        self._output_features = output_features

    def process(self, ex: Mapping[str, Any]) -> Iterable[Tuple[str, int]]:
        for name, feature in self._output_features.items():
            value = ex.get(name)
            if isinstance(value, tf.Tensor):
                value = value.numpy()
            if not isinstance(value, np.ndarray) or value.dtype not in (np.int32, np.int64):
                continue
            vocab = feature.vocabulary
            valid = np.ones_like(value, dtype=bool)
            for special in (vocab.eos_id, vocab.pad_id):
                if special is not None:
                    valid &= value != special
            yield f"{name}_tokens", int(np.sum(valid))


class _CountCharacters(beam.DoFn):
    """("<feature>_chars", n): characters of string features and of rank-1 integer
    features whose vocabulary is a SentencePieceVocabulary (decoded), as seqio counts."""

    def __init__(self, output_features: Mapping[str, "dataset_providers.Feature"]):
        self._output_features = output_features

    def process(self, ex: Mapping[str, Any]) -> Iterable[Tuple[str, int]]:
        for name, feature in self._output_features.items():
            value = ex.get(name)
            if (isinstance(value, np.ndarray) and value.dtype in (np.int32, np.int64)
                    and feature.rank == 1
                    and isinstance(feature.vocabulary, vocabularies.SentencePieceVocabulary)):
                ids = np.abs(value.astype(np.int32))
                text = feature.vocabulary.decode_tf(tf.constant(ids)).numpy().decode("utf-8")
            elif isinstance(value, bytes):
                text = value.decode("utf-8")
            else:
                continue
            yield f"{name}_chars", len(text)


def _merge_dicts(dicts):
    merged = {}
    for d in dicts:
        merged.update(d)
    return merged


class GetStats(beam.PTransform):
    """Examples → one dict: seqio's stats file.

    {"examples": n, "<f>_tokens": sum, "<f>_max_tokens": max} for the integer output
    features (tokens other than EOS and PAD), plus "<f>_chars" with `enable_char_counts`
    and "task_ids" when given.
    """

    def __init__(self, output_features: Mapping[str, "dataset_providers.Feature"],
                 task_ids: Optional[Mapping[str, Any]] = None,
                 enable_char_counts: bool = False):
        super().__init__()
        self._output_features = output_features
        self._task_ids = dict(task_ids or {})
        self._enable_char_counts = enable_char_counts

    def expand(self, pcoll):
        examples = (pcoll
                    | "count_examples" >> beam.combiners.Count.Globally()
                    | "examples_dict" >> beam.Map(lambda n: {"examples": n}))
        tokens = pcoll | "count_tokens" >> beam.ParDo(_CountTokens(self._output_features))
        total = (tokens
                 | "sum_tokens" >> beam.CombinePerKey(sum)
                 | "tokens_dict" >> beam.combiners.ToDict())
        maximum = (tokens
                   | "max_tokens" >> beam.CombinePerKey(max)
                   | "rename_max" >> beam.Map(
                       lambda kv: (kv[0][:-len("tokens")] + "max_tokens", kv[1]))
                   | "max_dict" >> beam.combiners.ToDict())
        stats = [examples, total, maximum]
        if self._enable_char_counts:
            stats.append(pcoll
                         | "count_chars" >> beam.ParDo(_CountCharacters(self._output_features))
                         | "sum_chars" >> beam.CombinePerKey(sum)
                         | "chars_dict" >> beam.combiners.ToDict())
        if self._task_ids:
            ids = {"task_ids": {k: int(v) for k, v in self._task_ids.items()}}
            stats.append(pcoll.pipeline | "task_ids" >> beam.Create([ids]))
        return (stats
                | "flatten_stats" >> beam.Flatten()
                | "merge_stats" >> beam.CombineGlobally(_merge_dicts))
