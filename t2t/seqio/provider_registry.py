"""The class-level registry of dataset providers by name (seqio's `DatasetProviderRegistry`).

`TaskRegistry` and `MixtureRegistry` subclass it, each with its own `_REGISTRY` and
`_PROVIDER_TYPE`:

    TaskRegistry.add_provider("my_task", task)
    TaskRegistry.get("my_tsak")
    # ValueError: Provider name not registered: my_tsak; closest registered names: my_task
"""
from typing import MutableMapping, Type

from t2t.core import registry as t2t_registry
from t2t.seqio.sources import DatasetProviderBase


class DatasetProviderRegistry:
    """A registry of providers by name (class-level, as seqio's)."""

    _REGISTRY: MutableMapping[str, DatasetProviderBase]
    _PROVIDER_TYPE: Type[DatasetProviderBase]

    @classmethod
    def add_provider(cls, name: str, provider):
        if name in cls._REGISTRY:
            raise ValueError("Attempting to register duplicate provider: %s" % name)
        if not isinstance(provider, cls._PROVIDER_TYPE):
            raise ValueError("Attempting to register a class of an invalid type. Expecting "
                             "instance of %s, got %s" % (cls._PROVIDER_TYPE,
                                                         type(provider).__name__))
        cls._REGISTRY[name] = provider

    @classmethod
    def add(cls, name: str, provider_cls, provider_kwargs):
        if not issubclass(provider_cls, cls._PROVIDER_TYPE):
            raise ValueError("Attempting to register a class of an invalid type. Expecting "
                             "instance of %s, got %s" % (cls._PROVIDER_TYPE, provider_cls))
        provider = provider_cls(**provider_kwargs)
        cls.add_provider(name, provider)
        return provider

    @classmethod
    def remove(cls, name):
        if name in cls._REGISTRY:
            del cls._REGISTRY[name]

    @classmethod
    def get(cls, name):
        if name not in cls._REGISTRY:
            close = t2t_registry.closest_names(str(name), cls._REGISTRY.keys())
            hint = ("; closest registered names: %s" % ", ".join(close)) if close else (
                "; none is registered" if not cls._REGISTRY else "")
            raise ValueError("Provider name not registered: %s%s" % (name, hint))
        return cls._REGISTRY[name]

    @classmethod
    def names(cls):
        return cls._REGISTRY.keys()

    @classmethod
    def reset(cls):
        cls._REGISTRY = {}

    @classmethod
    def get_dataset(cls, name, sequence_length, split, use_cached=False, shuffle=True,
                    seed=None, shard_info=None, num_epochs=1):
        return cls.get(name).get_dataset(sequence_length=sequence_length, split=split,
                                         use_cached=use_cached, shuffle=shuffle, seed=seed,
                                         shard_info=shard_info, num_epochs=num_epochs)
