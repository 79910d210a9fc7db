"""The training tests' data: the problem a test file names in its `PROBLEM`, generated once
per file (`--dist loadfile` keeps a file in one process, so once per run of that file)."""
import pytest

from t2t.datagen import datagen


@pytest.fixture(scope="module")
def data_dir(request, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("data"))
    datagen.generate_problems([request.module.PROBLEM], path,
                              str(tmp_path_factory.mktemp("tmp")), random_seed=1,
                              num_concurrent_processes=1)
    return path
