"""checkpoint_files: which checkpoints of a folder read, found from their index files."""
import os

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import errors
from t2t.model import checkpoint_files

STEPS = (100, 200, 300)


def write_checkpoints(model_dir, steps=STEPS, max_to_keep=5):
    """model.ckpt-<step> for each step: a [40, 30] float32 matrix, an int and global_step."""
    with tf.Graph().as_default():
        matrix = tf.compat.v1.Variable(np.ones([40, 30], np.float32), name="model/w")
        count = tf.compat.v1.Variable(np.int32(7), name="model/count")
        step = tf.compat.v1.Variable(np.int64(0), name="global_step")
        saver = tf.compat.v1.train.Saver(max_to_keep=max_to_keep)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for value in steps:
                session.run(step.assign(value))
                saver.save(session, os.path.join(model_dir, "model.ckpt"), global_step=value,
                           write_meta_graph=False)
    return [os.path.join(model_dir, "model.ckpt-%d" % value) for value in steps]


def data_file(path):
    return path + ".data-00000-of-00001"


def truncate(path, size):
    with open(path, "r+b") as out:
        out.truncate(size)


@pytest.fixture()
def checkpoints(tmp_path):
    return write_checkpoints(str(tmp_path))


def test_intact_checkpoints_read(checkpoints, tmp_path):
    assert checkpoint_files.listed_checkpoints(str(tmp_path)) == checkpoints
    assert [checkpoint_files.checkpoint_problem(p) for p in checkpoints] == [None] * 3
    assert checkpoint_files.newest_readable(str(tmp_path)) == (checkpoints[-1], [])
    checkpoint_files.check_readable(checkpoints[-1])  # no error
    # The sizes the index lists are the data file's: 40 * 30 * 4 + 4 + 8 bytes.
    assert os.path.getsize(data_file(checkpoints[-1])) == 4812


def test_truncated_missing_and_garbled_files_are_named(checkpoints, tmp_path):
    newest, middle, oldest = checkpoints[::-1]
    truncate(data_file(newest), 1000)
    os.remove(data_file(middle))
    assert checkpoint_files.checkpoint_problem(newest) == (
        "model.ckpt-300.data-00000-of-00001 holds 1,000 bytes, its index lists 4,812 (the "
        "file is truncated)")
    assert checkpoint_files.checkpoint_problem(middle) == (
        "its data files model.ckpt-200.data-* are missing")
    assert checkpoint_files.newest_readable(str(tmp_path)) == (oldest, [
        (newest, checkpoint_files.checkpoint_problem(newest)),
        (middle, checkpoint_files.checkpoint_problem(middle))])

    with open(oldest + ".index", "r+b") as index:
        index.truncate(40)
    assert checkpoint_files.checkpoint_problem(oldest).startswith(
        "its index file model.ckpt-100.index cannot be read (")
    os.remove(oldest + ".index")
    assert checkpoint_files.checkpoint_problem(oldest) == (
        "its index file model.ckpt-100.index is missing")
    assert checkpoint_files.newest_readable(str(tmp_path))[0] is None


def test_check_readable_names_the_broken_file_and_the_intact_ones(checkpoints, tmp_path):
    truncate(data_file(checkpoints[-1]), 0)
    with pytest.raises(errors.UserError) as raised:
        checkpoint_files.check_readable(checkpoints[-1])
    assert str(raised.value) == (
        "checkpoint {0}/model.ckpt-300 cannot be read: model.ckpt-300.data-00000-of-00001 "
        "holds 0 bytes, its index lists 4,812 (the file is truncated); intact checkpoints in "
        "{0}: model.ckpt-200, model.ckpt-100; pass --checkpoint_path={0}/model.ckpt-200"
        .format(tmp_path))
    with pytest.raises(errors.UserError, match="; move .*model.ckpt-300.* out$"):
        checkpoint_files.check_readable(checkpoints[-1], fix="move {path}.* out")
    for path in checkpoints[:-1]:
        truncate(data_file(path), 10)
    with pytest.raises(errors.UserError, match="no other checkpoint in .* reads; restore the "
                                               "folder from a backup or train again$"):
        checkpoint_files.check_readable(checkpoints[-1])


def test_a_state_listing_the_newest_only_still_finds_the_others(tmp_path):
    # What a Saver that keeps every checkpoint (max_to_keep 0, --keep_checkpoint_max=0)
    # writes; without a state file there is no run (as for tf.train.latest_checkpoint).
    paths = write_checkpoints(str(tmp_path), steps=(20, 3, 100), max_to_keep=0)
    with open(os.path.join(str(tmp_path), "checkpoint")) as state:
        assert state.read().count("model.ckpt-") == 2  # model_checkpoint_path and its entry
    assert checkpoint_files.listed_checkpoints(str(tmp_path)) == [paths[1], paths[0], paths[2]]
    truncate(data_file(paths[2]), 7)
    assert checkpoint_files.newest_readable(str(tmp_path))[0] == paths[0]
    os.remove(os.path.join(str(tmp_path), "checkpoint"))
    assert checkpoint_files.listed_checkpoints(str(tmp_path)) == []
