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


def test_remote_temporary_file_is_hidden_from_a_readers_glob():
    # ram:// goes through tf.io.gfile as gs:// does; the temporary name must not match the
    # glob a reader of shards uses while the writer is still busy.
    import tensorflow as tf
    path = "ram://atomic_test/train.tfrecord-00000-of-00001"
    with atomic_files.atomic_output_path(path) as tmp:
        with tf.io.gfile.GFile(tmp, "w") as f:
            f.write("x")
        assert tf.io.gfile.glob("ram://atomic_test/train.tfrecord-*") == []
        assert os.path.basename(tmp).startswith(".train.tfrecord-00000-of-00001.")
        assert tmp.endswith(atomic_files.INCOMPLETE_SUFFIX)
    assert tf.io.gfile.glob("ram://atomic_test/*") == [path]
    assert tf.io.gfile.GFile(path).read() == "x"
    with pytest.raises(RuntimeError):
        with atomic_files.atomic_output_path("ram://atomic_test/failed") as tmp:
            with tf.io.gfile.GFile(tmp, "w") as f:
                f.write("y")
            raise RuntimeError("writer failed")
    assert not tf.io.gfile.exists(tmp)
    assert not tf.io.gfile.exists("ram://atomic_test/failed")


def test_commit_file_replaces_the_target_and_leaves_no_temporary(tmp_path):
    # The rename a resumable download ends with (its `<file>.incomplete` is its own name).
    target, partial = tmp_path / "corpus.tgz", tmp_path / "corpus.tgz.incomplete"
    target.write_text("old")
    partial.write_text("new")
    assert atomic_files.commit_file(str(partial), str(target)) == str(target)
    assert target.read_text() == "new"
    assert os.listdir(tmp_path) == ["corpus.tgz"]


@pytest.mark.parametrize("root", ["local", "ram://atomic_move"])
def test_move_into_keeps_a_file_already_there(tmp_path, root):
    import tensorflow as tf
    base = str(tmp_path) if root == "local" else root
    aside = base + "/broken"
    for text in ("first", "second"):
        path = base + "/model.ckpt-6.index"
        with tf.io.gfile.GFile(path, "w") as f:
            f.write(text)
        atomic_files.move_into(path, aside)
        assert not tf.io.gfile.exists(path)
    assert sorted(tf.io.gfile.listdir(aside)) == ["model.ckpt-6.index", "model.ckpt-6.index.1"]
    assert tf.io.gfile.GFile(aside + "/model.ckpt-6.index").read() == "first"
    assert tf.io.gfile.GFile(aside + "/model.ckpt-6.index.1").read() == "second"
