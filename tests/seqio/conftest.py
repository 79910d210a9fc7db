"""Fixtures of the t2t.seqio tests: empty registries around each test, a SentencePiece model
trained here on a small generated corpus."""
import pytest

from t2t.seqio import dataset_providers

from seqio_testing import corpus_lines, train_sentencepiece


@pytest.fixture(autouse=True)
def clean_registries():
    dataset_providers.TaskRegistry.reset()
    dataset_providers.MixtureRegistry.reset()
    yield
    dataset_providers.TaskRegistry.reset()
    dataset_providers.MixtureRegistry.reset()


@pytest.fixture(scope="session")
def spm_model_file(tmp_path_factory):
    return train_sentencepiece(tmp_path_factory.mktemp("spm"), corpus_lines())
