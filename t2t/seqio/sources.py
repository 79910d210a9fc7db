"""DataSources: where a Task's raw examples come from (exported by dataset_providers).

    TextLineDataSource({"train": "/data/train.tsv"}, skip_header_lines=1)
    TFExampleDataSource({"train": "/data/train-*"},
                        feature_description={"text": tf.io.FixedLenFeature([], tf.string)})
    FunctionDataSource(lambda split, shuffle_files: tf.data.Dataset.from_tensor_slices(...),
                       splits=["train"])
    TfdsDataSource("my_dataset:1.0.0", splits={"validation": "train[:10%]"})   # t2t-toolkit[tfds]

File sources list their shards with glob, shard by file when there are enough files
(`ShardInfo`), shuffle the file order with the seed, and interleave the files.
"""
import abc
import dataclasses
import functools
import inspect
import json
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import tensorflow as tf
from absl import logging

import t2t.seqio.tfds_loader as tfds_loader
import t2t.seqio.utils as utils


@dataclasses.dataclass(frozen=True)
class ShardInfo:
    """Shard `index` of `num_shards`."""

    index: int
    num_shards: int


class DatasetProviderBase(metaclass=abc.ABCMeta):
    """Something that provides a tf.data.Dataset: a DataSource, Task or Mixture."""

    @property
    @abc.abstractmethod
    def output_features(self) -> Mapping[str, utils.Feature]:
        raise NotImplementedError

    @property
    @abc.abstractmethod
    def splits(self) -> Sequence[str]:
        raise NotImplementedError

    @abc.abstractmethod
    def get_dataset(self, sequence_length: Optional[Mapping[str, int]] = None,
                    split: str = "train", use_cached: bool = False, shuffle: bool = True,
                    seed: Optional[int] = None, shard_info: Optional[ShardInfo] = None,
                    num_epochs: Optional[int] = 1) -> tf.data.Dataset:
        raise NotImplementedError

    @abc.abstractmethod
    def num_input_examples(self, split: str) -> Optional[int]:
        raise NotImplementedError


class DataSource(DatasetProviderBase):
    """A provider of raw data from some input source."""

    def __init__(self, splits: Iterable[str],
                 num_input_examples: Optional[Mapping[str, int]] = None,
                 caching_permitted: bool = True, performs_internal_shuffling: bool = False):
        # One name is one split (seqio's own tests write splits="validation").
        self._splits = (splits,) if isinstance(splits, str) else tuple(splits)
        self._num_input_examples = (dict(num_input_examples)
                                    if num_input_examples is not None else None)
        self._caching_permitted = caching_permitted
        self._performs_internal_shuffling = performs_internal_shuffling

    @property
    def caching_permitted(self) -> bool:
        return self._caching_permitted

    @property
    def splits(self) -> Sequence[str]:
        return self._splits

    @property
    @abc.abstractmethod
    def supports_arbitrary_sharding(self) -> bool:
        raise NotImplementedError

    @property
    def output_features(self) -> Mapping[str, utils.Feature]:
        raise NotImplementedError

    @property
    def performs_internal_shuffling(self) -> bool:
        return self._performs_internal_shuffling

    @abc.abstractmethod
    def list_shards(self, split: str) -> Sequence[str]:
        raise NotImplementedError

    @abc.abstractmethod
    def get_dataset(self, split: str = "train", shuffle: bool = True,
                    seed: Optional[int] = None, shard_info: Optional[ShardInfo] = None, *,
                    sequence_length: Optional[Mapping[str, int]] = None,
                    use_cached: bool = False, num_epochs: Optional[int] = 1
                    ) -> tf.data.Dataset:
        raise NotImplementedError

    def num_input_examples(self, split: str) -> Optional[int]:
        if self._num_input_examples is None:
            return None
        return self._num_input_examples.get(split)


def _validate_args(fn, expected_args: Sequence[str]):
    """`fn` must take exactly `expected_args` first, and no other argument without default."""
    params = tuple(inspect.signature(fn).parameters.values())
    actual = tuple(p.name for p in params)
    expected = tuple(expected_args)
    if actual[:len(expected)] != expected:
        raise ValueError("'%s' must have initial args %s, got: %s"
                         % (utils.function_name(fn), expected, actual))
    nondefault = tuple(p.name for p in params if p.default == p.empty)
    if nondefault != expected[:len(nondefault)]:
        raise ValueError("'%s' may only have positional args %s, got: %s"
                         % (utils.function_name(fn), expected, nondefault))


class FunctionDataSource(DataSource):
    """Examples from `dataset_fn(split, shuffle_files[, seed])`."""

    def __init__(self, dataset_fn: Callable[..., tf.data.Dataset], splits: Iterable[str],
                 num_input_examples: Optional[Mapping[str, int]] = None,
                 caching_permitted: bool = True):
        _validate_args(dataset_fn, ["split", "shuffle_files"])
        self._dataset_fn = dataset_fn
        super().__init__(splits=splits, num_input_examples=num_input_examples,
                         caching_permitted=caching_permitted)

    @property
    def supports_arbitrary_sharding(self) -> bool:
        return False

    def __repr__(self):
        return (f"{self.__class__.__name__}(dataset_fn={utils.function_name(self._dataset_fn)},"
                f" splits={self.splits}, num_input_examples={self._num_input_examples},"
                f" caching_permitted={self.caching_permitted})")

    def get_dataset(self, split: str = "train", shuffle: bool = True,
                    seed: Optional[int] = None, shard_info: Optional[ShardInfo] = None, *,
                    sequence_length=None, use_cached=False, num_epochs=1):
        if shard_info and shard_info.num_shards > 1:
            raise ValueError("`FunctionDataSource` does not support low-level sharding. Use "
                             "tf.data.Dataset.shard instead.")
        if shuffle:
            logging.warning("Using an uncached FunctionDataset for training is not recommended "
                            "since it often results in insufficient shuffling on restarts.")
        if seed is None:
            return self._dataset_fn(split=split, shuffle_files=shuffle)
        _validate_args(self._dataset_fn, ["split", "shuffle_files", "seed"])
        return self._dataset_fn(split=split, shuffle_files=shuffle, seed=seed)

    def list_shards(self, split: str) -> Sequence[str]:
        return [split]


class TfdsDataSource(DataSource):
    """A TensorFlow Datasets dataset (`pip install 't2t-toolkit[tfds]'`), loaded lazily.

    `splits`: None (all of the dataset's), a list of names, a dict {split: TFDS split or
    slice such as "train[:90%]"}, or a dict {split: TfdsSplit} (then no `tfds_name`).
    """

    def __init__(self, tfds_name: Optional[str] = None, tfds_data_dir: Optional[str] = None,
                 splits: Optional[Union[Iterable[str], Mapping[str, str],
                                        Mapping[str, tfds_loader.TfdsSplit]]] = None,
                 caching_permitted: bool = True, decoders=None,
                 tfds_builder_kwargs: Optional[dict] = None, read_only: bool = False):
        if splits and not isinstance(splits, dict):
            splits = {k: k for k in ([splits] if isinstance(splits, str) else splits)}
        self._tfds_dataset = tfds_loader.LazyTfdsLoader(
            tfds_name, data_dir=tfds_data_dir,
            split_map=splits if isinstance(splits, dict) else None, decoders=decoders,
            builder_kwargs=tfds_builder_kwargs, read_only=read_only)
        super().__init__(splits=splits or (), caching_permitted=caching_permitted)

    @property
    def splits(self):
        return self._splits or self.tfds_dataset.info.splits

    @property
    def tfds_dataset(self) -> tfds_loader.LazyTfdsLoader:
        return self._tfds_dataset

    @property
    def supports_arbitrary_sharding(self) -> bool:
        return False

    def __str__(self):
        return f"{self.__class__.__name__}(tfds_dataset={str(self.tfds_dataset)})"

    def __repr__(self):
        return (f"{self.__class__.__name__}(tfds_dataset={str(self.tfds_dataset)},"
                f" splits={self.splits}, caching_permitted={self.caching_permitted})")

    def get_dataset(self, split: Optional[str] = None, shuffle: bool = True,
                    seed: Optional[int] = None, shard_info: Optional[ShardInfo] = None, *,
                    sequence_length=None, use_cached=False, num_epochs=1):
        return self.tfds_dataset.load(split or "train", shuffle_files=shuffle, seed=seed,
                                      shard_info=shard_info)

    def num_input_examples(self, split: str) -> Optional[int]:
        return self.tfds_dataset.size(split)

    @functools.lru_cache(maxsize=1024)
    def list_shards(self, split: str) -> Sequence[str]:
        def filename(info):
            return info["filename"] if isinstance(info, dict) else info.filename
        return [filename(info) for info in self.tfds_dataset.files(split)]


class FileDataSource(DataSource):
    """Examples read by `read_file_fn` from the files matching a pattern per split."""

    def __init__(self, read_file_fn: Callable[[tf.data.Dataset], tf.data.Dataset],
                 split_to_filepattern: Mapping[str, Union[str, Iterable[str]]],
                 num_input_examples: Optional[Mapping[str, int]] = None,
                 caching_permitted: bool = True, file_shuffle_buffer_size: Optional[int] = None,
                 cycle_length: int = 16, block_length: int = 16,
                 performs_internal_shuffling: bool = False):
        self._split_to_filepattern = split_to_filepattern
        self._reader = read_file_fn
        self._file_shuffle_buffer_size = file_shuffle_buffer_size
        self._cycle_length = cycle_length
        self._block_length = block_length
        super().__init__(splits=split_to_filepattern.keys(),
                         num_input_examples=num_input_examples,
                         caching_permitted=caching_permitted,
                         performs_internal_shuffling=performs_internal_shuffling)

    @property
    def supports_arbitrary_sharding(self) -> bool:
        return False

    def __str__(self):
        return f"{self.__class__.__name__}({self._split_to_filepattern})"

    def __repr__(self):
        return (f"{self.__class__.__name__}(split_to_filepattern={self._split_to_filepattern},"
                f" num_input_examples={self._num_input_examples},"
                f" caching_permitted={self._caching_permitted},"
                f" file_shuffle_buffer_size={self._file_shuffle_buffer_size},"
                f" cycle_length={self._cycle_length}, block_length={self._block_length})")

    def get_dataset(self, split: str = "train", shuffle: bool = True,
                    seed: Optional[int] = None, shard_info: Optional[ShardInfo] = None, *,
                    sequence_length=None, use_cached=False, num_epochs=1):
        if split not in self._split_to_filepattern:
            raise ValueError(f"{self.__class__.__name__} has no split '{split}'; splits: "
                             f"{sorted(self._split_to_filepattern)}")
        files = self.list_shards(split)
        if not files:
            raise ValueError("No file is found for the file pattern: "
                             f"{self._split_to_filepattern[split]}.")
        files_ds = tf.data.Dataset.from_tensor_slices(np.array(files, dtype=str))
        if shard_info:
            if len(files) < shard_info.num_shards:
                raise ValueError(f"Dataset has too few files to shard. {len(files)} files vs "
                                 f"{shard_info.num_shards} shards requested.")
            files_ds = files_ds.shard(shard_info.num_shards, shard_info.index)
        if shuffle:
            if self._file_shuffle_buffer_size:
                logging.warning("`file_shuffle_buffer_size` is explicitly set to %d; this may "
                                "lead to an imperfect file shuffle.",
                                self._file_shuffle_buffer_size)
            files_ds = files_ds.shuffle(
                buffer_size=self._file_shuffle_buffer_size or len(files), seed=seed)
        return files_ds.interleave(self._reader, cycle_length=self._cycle_length,
                                   block_length=self._block_length,
                                   num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)

    def list_shards(self, split: str) -> Sequence[str]:
        return utils.list_files(self._split_to_filepattern[split])


class TextLineDataSource(FileDataSource):
    """Lines of text files (each line a scalar string example)."""

    def __init__(self, split_to_filepattern: Mapping[str, Union[str, Iterable[str]]],
                 skip_header_lines: int = 0,
                 num_input_examples: Optional[Mapping[str, int]] = None,
                 caching_permitted: bool = True, file_shuffle_buffer_size: Optional[int] = None,
                 cycle_length: int = 16, block_length: int = 16):
        self._skip_header_lines = skip_header_lines

        def read_file_fn(filepattern):
            return tf.data.TextLineDataset(filepattern).skip(skip_header_lines)

        super().__init__(read_file_fn=read_file_fn, split_to_filepattern=split_to_filepattern,
                         num_input_examples=num_input_examples,
                         caching_permitted=caching_permitted,
                         file_shuffle_buffer_size=file_shuffle_buffer_size,
                         cycle_length=cycle_length, block_length=block_length)


class TFExampleDataSource(FileDataSource):
    """tf.train.Example records parsed with `feature_description`."""

    def __init__(self, split_to_filepattern: Mapping[str, Union[str, Iterable[str]]],
                 feature_description: Mapping[str, Any],
                 reader_cls=tf.data.TFRecordDataset,
                 num_input_examples: Optional[Mapping[str, int]] = None,
                 caching_permitted: bool = True, file_shuffle_buffer_size: Optional[int] = None,
                 cycle_length: int = 16, block_length: int = 16,
                 performs_internal_shuffling: bool = False):
        def parse_fn(*args):
            return tf.io.parse_single_example(args[-1], feature_description)

        def read_file_fn(filepattern):
            return reader_cls(filepattern).map(parse_fn, num_parallel_calls=tf.data.AUTOTUNE)

        self.reader_cls = reader_cls
        self.parse_fn = parse_fn
        self.feature_description = feature_description
        super().__init__(read_file_fn=read_file_fn, split_to_filepattern=split_to_filepattern,
                         num_input_examples=num_input_examples,
                         caching_permitted=caching_permitted,
                         file_shuffle_buffer_size=file_shuffle_buffer_size,
                         cycle_length=cycle_length, block_length=block_length,
                         performs_internal_shuffling=performs_internal_shuffling)

    def __str__(self):
        return (f"{self.__class__.__name__}(split_to_filepattern={self._split_to_filepattern},"
                f" feature_description={self.feature_description})")


class ProtoDataSource(FileDataSource):
    """Records of any proto, decoded by `decode_proto_fn`."""

    def __init__(self, split_to_filepattern: Mapping[str, Union[str, Iterable[str]]],
                 decode_proto_fn: Callable[..., Mapping[str, Any]],
                 reader_cls=tf.data.TFRecordDataset,
                 num_input_examples: Optional[Mapping[str, int]] = None,
                 caching_permitted: bool = True, file_shuffle_buffer_size: Optional[int] = None,
                 cycle_length: int = 16, block_length: int = 16):
        def read_file_fn(filepattern):
            return reader_cls(filepattern).map(decode_proto_fn,
                                               num_parallel_calls=tf.data.AUTOTUNE)

        self.reader_cls = reader_cls
        self.decode_proto_fn = decode_proto_fn
        super().__init__(read_file_fn=read_file_fn, split_to_filepattern=split_to_filepattern,
                         num_input_examples=num_input_examples,
                         caching_permitted=caching_permitted,
                         file_shuffle_buffer_size=file_shuffle_buffer_size,
                         cycle_length=cycle_length, block_length=block_length)


def _rename_plaintext_to_pretokenized(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """Old caches name text copies "<k>_plaintext"; today's name is "<k>_pretokenized"."""
    def rename(inputs):
        return {(k[:-len("plaintext")] + "pretokenized" if k.endswith("_plaintext") else k): v
                for k, v in inputs.items()}
    return dataset.map(rename, num_parallel_calls=tf.data.AUTOTUNE)


def _cached_feature_config(key: str, shape, dtype: str):
    """The parsing spec of one feature of seqio's cache info file."""
    if dtype in ("int32", "bool"):
        dtype = "int64"  # stored as int64 in tf.train.Example
    if shape and any(x is None for x in shape[1:]):
        partitions = []
        ragged_idx = 0
        for x in shape[1:]:
            if x is None:
                partitions.append(tf.io.RaggedFeature.RowLengths(
                    utils.tfexample_ragged_length_key(key, ragged_idx)))
                ragged_idx += 1
            else:
                partitions.append(tf.io.RaggedFeature.UniformRowLength(x))
        return tf.io.RaggedFeature(value_key=key, partitions=partitions, dtype=dtype)
    if shape and shape[0] is None:
        return tf.io.FixedLenSequenceFeature(shape[1:], dtype, allow_missing=True)
    return tf.io.FixedLenFeature(shape, dtype)


class _CachedDataSource(FileDataSource):
    """A split cached offline by seqio_cache_tasks: info/stats JSON + TFRecord shards."""

    def __init__(self, cache_dir: str, split: str,
                 file_shuffle_buffer_size: Optional[int] = None, cycle_length: int = 16,
                 block_length: int = 16):
        with tf.io.gfile.GFile(utils.get_cached_info_path(cache_dir, split)) as f:
            split_info = json.load(f)
        features = split_info["features"]
        with tf.io.gfile.GFile(utils.get_cached_stats_path(cache_dir, split)) as f:
            stats = json.load(f)
        if split_info.get("seqio_version", "0.pre") == "0.pre":
            # Caches from before seqio 0.0.0 stored int32 features as int64.
            for feat in features.values():
                if feat["dtype"] == "int64":
                    feat["dtype"] = "int32"
        description = {name: _cached_feature_config(name, **desc)
                       for name, desc in features.items()}

        def read_file_fn(filepattern):
            ds = tf.data.TFRecordDataset(filepattern)
            ds = ds.map(lambda pb: tf.io.parse_single_example(pb, description),
                        num_parallel_calls=tf.data.AUTOTUNE)
            ds = ds.map(lambda x: {k: tf.cast(v, features[k]["dtype"]) for k, v in x.items()},
                        num_parallel_calls=tf.data.AUTOTUNE)
            return _rename_plaintext_to_pretokenized(ds)

        pattern = "%s-*-of-*%d" % (utils.get_cached_tfrecord_prefix(cache_dir, split),
                                   split_info["num_shards"])
        super().__init__(read_file_fn=read_file_fn, split_to_filepattern={split: pattern},
                         num_input_examples={split: stats["examples"]},
                         file_shuffle_buffer_size=file_shuffle_buffer_size,
                         cycle_length=cycle_length, block_length=block_length)
