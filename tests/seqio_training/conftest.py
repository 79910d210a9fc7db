"""Empty SeqIO registries around each t2t.seqio_training test."""
import pytest

from t2t.seqio import dataset_providers


@pytest.fixture(autouse=True)
def clean_registries():
    dataset_providers.TaskRegistry.reset()
    dataset_providers.MixtureRegistry.reset()
    yield
    dataset_providers.TaskRegistry.reset()
    dataset_providers.MixtureRegistry.reset()
