"""Lazy, memoized access to TensorFlow Datasets (`TfdsSplit`, `LazyTfdsLoader`).

TFDS is an optional extra (`pip install 't2t-toolkit[tfds]'`); it is imported on first use, so
`from t2t import seqio` works without it:

    loader = LazyTfdsLoader("my_dataset:1.0.0", data_dir="/data/tfds",
                            split_map={"validation": "train[:10%]"})
    loader.size("validation")              # examples in train[:10%]
    ds = loader.load("validation", shuffle_files=False)
"""
import dataclasses
from typing import Any, Mapping, Optional, Tuple, Union

import numpy as np
import tensorflow as tf
from absl import logging

_TFDS_DATA_DIR_OVERRIDE = None
_TFDS_DATA_READ_CONFIG_OVERRIDE = None


def import_tfds():
    """The `tensorflow_datasets` module, or an ImportError saying how to install it."""
    try:
        import tensorflow_datasets as tfds  # pylint: disable=import-outside-toplevel
    except ImportError as e:
        raise ImportError("TfdsDataSource needs TensorFlow Datasets: pip install "
                          "'t2t-toolkit[tfds]'") from e
    return tfds


def set_tfds_data_dir_override(tfds_data_dir):
    global _TFDS_DATA_DIR_OVERRIDE
    _TFDS_DATA_DIR_OVERRIDE = tfds_data_dir


def set_tfds_read_config_override(tfds_read_config):
    global _TFDS_DATA_READ_CONFIG_OVERRIDE
    _TFDS_DATA_READ_CONFIG_OVERRIDE = tfds_read_config


def _validate_tfds_name(name: Optional[str]) -> None:
    if name and ":" not in name:
        raise ValueError(f"TFDS name must contain a version number, got: {name}")


class UnknownSplitError(KeyError, ValueError):
    """A split the loader's split_map does not name: a KeyError as in seqio (and a
    ValueError, as t2t raised before), whose message lists the splits."""

    def __str__(self):
        return self.args[0] if self.args else ""


@dataclasses.dataclass(frozen=True)
class TfdsSplit:
    """A split (or slice such as 'train[:1%]') of one TFDS dataset."""

    dataset: str
    split: Optional[str]
    data_dir: Optional[str] = None

    def __post_init__(self):
        _validate_tfds_name(self.dataset)


class LazyTfdsLoader:
    """A TFDS dataset whose builder is created on first use and shared (memoized)."""

    _MEMOIZED_BUILDERS = {}

    def __init__(self, name: Optional[str] = None, data_dir: Optional[str] = None,
                 split_map: Union[Mapping[str, str], Mapping[str, TfdsSplit], None] = None,
                 decoders=None, builder_kwargs: Optional[dict] = None, read_only: bool = False):
        _validate_tfds_name(name)
        self._name = name
        self._data_dir = data_dir
        self._data_dir_override = None
        self._split_map = split_map
        self._decoders = decoders
        self._builder_kwargs = builder_kwargs
        self._read_only = read_only
        self._is_custom_split_map = False
        if split_map:
            if isinstance(next(iter(split_map.values())), TfdsSplit):
                self._is_custom_split_map = True
                if self._name or self._data_dir:
                    raise ValueError("If split values are instances of `TfdsSplit`, `name` and"
                                     " `data_dir` must be `None`.")

    @property
    def name(self) -> Optional[str]:
        return self._name

    def set_decoders(self, decoders) -> None:
        self._decoders = decoders

    @property
    def tfds_splits(self) -> Optional[Mapping[str, TfdsSplit]]:
        return self._split_map if self._is_custom_split_map else None

    def resolved_tfds_name(self, split: Optional[str] = None) -> Optional[str]:
        if self.is_memoized(split):
            return self._get_builder(split).get_reference().tfds_name(include_version=True)
        return self.get_split_params(split)[0]

    def __str__(self):
        return f"{self.__class__.__name__}(name={self.name}, data_dir={self.data_dir})"

    def __repr__(self):
        return (f"{self.__class__.__name__}(name={self.name}, data_dir={self.data_dir}, "
                f"split_map={self._split_map}, decoders={self._decoders})")

    def get_split_params(self, split: Optional[str] = None
                         ) -> Tuple[Optional[str], Optional[str]]:
        """(dataset name, data_dir) for a canonical split."""
        if self._is_custom_split_map:
            mapped = self._split_map.get(split)
            if not mapped:
                raise ValueError("`LazyTfdsLoader` refers to multiple datasets, pass `split` "
                                 "value corresponding to one of them to `get_split_params()`.")
            return mapped.dataset, mapped.data_dir
        return self.name, self.data_dir

    @property
    def data_dir(self) -> Optional[str]:
        if self._is_custom_split_map:
            logging.warning("`LazyTfdsLoader` refers to multiple datasets, `data_dir` is "
                            "unknown.")
            return None
        if self._data_dir_override is None and _TFDS_DATA_DIR_OVERRIDE:
            self._data_dir_override = _TFDS_DATA_DIR_OVERRIDE
        if self._data_dir_override and self._data_dir:
            logging.warning("Overriding TFDS data directory '%s' with '%s' for dataset '%s'.",
                            self._data_dir, self._data_dir_override, self.name)
        return self._data_dir_override or self._data_dir

    def override_data_dir(self, data_dir: str) -> None:
        self._data_dir_override = data_dir

    @property
    def read_config(self):
        if _TFDS_DATA_READ_CONFIG_OVERRIDE:
            return _TFDS_DATA_READ_CONFIG_OVERRIDE
        return import_tfds().ReadConfig()

    def is_memoized(self, split: Optional[str] = None) -> bool:
        return self.get_split_params(split) in LazyTfdsLoader._MEMOIZED_BUILDERS

    def builder_cls(self, split: Optional[str] = None):
        """The DatasetBuilder class, or None when it is not registered (not imported)."""
        tfds = import_tfds()
        dataset, _ = self.get_split_params(split)
        ds_name, _ = tfds.core.naming.parse_builder_name_kwargs(dataset)
        try:
            return tfds.builder_cls(str(ds_name))
        except Exception:  # pylint: disable=broad-except  (DatasetNotFoundError and kin)
            return None

    @property
    def builder(self):
        return self._get_builder()

    def _get_builder(self, split: Optional[str] = None):
        tfds = import_tfds()
        key = self.get_split_params(split)
        if key not in LazyTfdsLoader._MEMOIZED_BUILDERS:
            dataset, data_dir = key
            if dataset:
                builder = tfds.builder(dataset, data_dir=data_dir, **(self._builder_kwargs or {}))
            else:
                if self._builder_kwargs:
                    raise ValueError("`builder_kwargs` should be empty when `dataset` value is "
                                     "not present.")
                builder = tfds.builder_from_directory(data_dir)
            LazyTfdsLoader._MEMOIZED_BUILDERS[key] = builder
        return LazyTfdsLoader._MEMOIZED_BUILDERS[key]

    @property
    def info(self):
        return self.builder.info

    def _map_split(self, split: str) -> Optional[str]:
        if self._split_map and split not in self._split_map:
            raise UnknownSplitError("TFDS dataset %s has no split %r; splits: %s" %
                                    (self.name, split, sorted(self._split_map)))
        if self._is_custom_split_map:
            return self._split_map[split].split
        if self._split_map:
            return self._split_map[split]
        return split

    def files(self, split: str):
        """TFDS file instructions for reading `split`."""
        dataset_split = self._map_split(split)
        builder = self._get_builder(split)
        if self.name is not None and "/" not in self.name and builder.BUILDER_CONFIGS:
            raise ValueError("Dataset '%s' has multiple configs." % self.name)
        files = builder.info.splits[dataset_split].file_instructions
        if not files:
            raise ValueError("No TFRecord files found for dataset: %s split %s" %
                             (self.name, split))
        return files

    def load(self, split: Optional[str], shuffle_files: bool, seed: Optional[int] = None,
             shard_info=None):
        """The split as a tf.data.Dataset (sharded through a TFDS InputContext)."""
        tfds = import_tfds()
        dataset_split = self._map_split(split)
        dataset, data_dir = self.get_split_params(split)
        read_config = self.read_config
        read_config.input_context = (
            tf.distribute.InputContext(num_input_pipelines=shard_info.num_shards,
                                       input_pipeline_id=shard_info.index)
            if shard_info else None)
        read_config.shuffle_seed = seed
        read_config.skip_prefetch = True
        if self._read_only:
            return self._get_builder(split).as_dataset(
                split=dataset_split, shuffle_files=shuffle_files, read_config=read_config,
                decoders=self._decoders)
        # seqio always passes try_gcs=True, which asks GCS over the network and fails when
        # a data_dir is given for a dataset GCS has; t2t asks only without a data_dir.
        return tfds.load(dataset, split=dataset_split, data_dir=data_dir,
                         shuffle_files=shuffle_files, download=True, try_gcs=data_dir is None,
                         read_config=read_config, decoders=self._decoders,
                         builder_kwargs=self._builder_kwargs)

    def load_shard(self, file_instruction, shuffle_files: bool = False,
                   seed: Optional[int] = None):
        """One TFRecord shard of the dataset."""
        tfds = import_tfds()
        return self.builder._tfrecords_reader.read_files(  # pylint: disable=protected-access
            [file_instruction], read_config=tfds.ReadConfig(shuffle_seed=seed),
            shuffle_files=shuffle_files)

    def size(self, split: str) -> Optional[Any]:
        """Examples in the split (np.inf when TFDS records 0 for very large datasets)."""
        dataset_split = self._map_split(split)
        size = self._get_builder(split).info.splits[dataset_split].num_examples
        return size if size > 0 else np.inf
