"""atomic_files.atomic_output_dir: a folder appears complete or not at all, and what an
interrupted writer left is removed by the next one."""
import os

import pytest

from t2t.core import atomic_files


def _write(folder, name, text):
    with open(os.path.join(folder, name), "w") as f:
        f.write(text)


def test_folder_replaces_the_old_one_only_when_complete(tmp_path):
    target = str(tmp_path / "hub")
    with atomic_files.atomic_output_dir(target) as tmp:
        _write(tmp, "a", "1")
        assert not os.path.exists(target)
    assert open(os.path.join(target, "a")).read() == "1"
    with pytest.raises(RuntimeError):
        with atomic_files.atomic_output_dir(target) as tmp:
            _write(tmp, "a", "2")
            raise RuntimeError("killed")
    assert open(os.path.join(target, "a")).read() == "1"   # the old folder stays
    with atomic_files.atomic_output_dir(target) as tmp:
        _write(tmp, "b", "3")
    assert os.listdir(target) == ["b"]
    assert sorted(os.listdir(tmp_path)) == ["hub"]


def test_next_writer_removes_the_folder_an_interrupted_one_left(tmp_path):
    target = str(tmp_path / "hub")
    left = tmp_path / ".hub.abc123.incomplete" / "encoder"
    left.mkdir(parents=True)
    (left / "saved_model.pb").write_text("half")
    atomic_files.remove_stale_temp_files([target])
    assert os.listdir(tmp_path) == []
