"""Where a resumed run starts: the newest checkpoint that reads, and the batch after the
ones it trained on.

    path = resume_from_readable("/run", is_chief=True)
    # W Skipping checkpoint /run/model.ckpt-600: model.ckpt-600.data-00000-of-00001 holds
    #   40,000 bytes, its index lists 72,208 (the file is truncated); its files are moved
    #   to /run/broken_checkpoints
    # I Resuming from /run/model.ckpt-400
    path       # "/run/model.ckpt-400"; the `checkpoint` state file now names it the newest

Both backends then restore what `tf.train.latest_checkpoint` names, as before. The broken
files are moved, not deleted (nothing is lost, and no reader that globs `*.index`, such as
t2t-avg-all, finds them again). Only the chief changes files; the other tasks of a
cluster log what they will restore (the same checkpoint: they read the same files). When
no checkpoint of the folder reads, nothing is touched and the run stops with a UserError.

A seeded run's input is read in the same order every time; a resumed run skips what the
checkpoint has trained on, so stopping and resuming trains what one run would have:

    dataset = skip_trained_batches(dataset, resume_step("/run"), batches_per_step=1,
                                   random_seed=1)
    # I Skipping the 400 training batches the first 400 steps trained on (...)
"""
import os

import tensorflow as tf
from absl import logging
from google.protobuf import text_format

from t2t.core import atomic_files
from t2t.core import errors
from t2t.model import checkpoint_files

BROKEN_DIR = "broken_checkpoints"


def _set_aside(model_dir, path):
    """Move every file of the checkpoint prefix `path` into <model_dir>/broken_checkpoints."""
    target_dir = os.path.join(model_dir, BROKEN_DIR)
    for name in sorted(tf.io.gfile.glob(path + ".*")):
        atomic_files.move_into(name, target_dir)  # the same step broke before: keeps both
    return target_dir


def _write_state(model_dir, newest, dropped):
    """The `checkpoint` state file without `dropped`, naming `newest` the latest."""
    state = tf.train.get_checkpoint_state(model_dir)
    raw = type(state)()  # the CheckpointState proto, as written (not joined to model_dir)
    with tf.io.gfile.GFile(os.path.join(model_dir, "checkpoint")) as state_file:
        text_format.Merge(state_file.read(), raw)
    # get_checkpoint_state joined relative entries to model_dir; `raw` keeps them as the
    # file has them, in the same order.
    resolved = list(state.all_model_checkpoint_paths)
    timestamps = list(raw.all_model_checkpoint_timestamps)
    keep = [index for index, path in enumerate(resolved) if path not in dropped]
    entries = [raw.all_model_checkpoint_paths[index] for index in keep]
    raw.model_checkpoint_path = next(
        (raw.all_model_checkpoint_paths[index] for index in keep if resolved[index] == newest),
        newest)
    del raw.all_model_checkpoint_paths[:]
    raw.all_model_checkpoint_paths.extend(entries)
    if len(timestamps) == len(resolved):
        del raw.all_model_checkpoint_timestamps[:]
        raw.all_model_checkpoint_timestamps.extend(timestamps[index] for index in keep)
    with atomic_files.atomic_write(os.path.join(model_dir, "checkpoint"), "w") as out:
        out.write(text_format.MessageToString(raw))


def resume_from_readable(model_dir, is_chief=True):
    """The checkpoint a resumed run restores (None without one); see the module doc.

    Raises a UserError when `model_dir` has checkpoints and none of them reads.
    """
    newest, broken = checkpoint_files.newest_readable(model_dir)
    if not broken:
        return newest
    if newest is None:
        raise errors.UserError(
            "no checkpoint in %s can be read (%s); restore them from a backup, or train anew "
            "in another --output_dir" % (model_dir, "; ".join(
                "%s: %s" % (os.path.basename(path), problem) for path, problem in broken)))
    for path, problem in broken:
        if is_chief:
            where = _set_aside(model_dir, path)
            logging.warning("Skipping checkpoint %s: %s; its files are moved to %s",
                            path, problem, where)
        else:
            logging.warning("Skipping checkpoint %s: %s (the chief sets it aside)", path,
                            problem)
    if is_chief:
        _write_state(model_dir, newest, {path for path, _ in broken})
    logging.info("Resuming from %s", newest)
    return newest


def resume_step(model_dir):
    """The global step of the checkpoint a resumed run restores (0 for a new run)."""
    path, _ = checkpoint_files.newest_readable(model_dir)
    if path is None:
        return 0
    return int(tf.train.load_checkpoint(path).get_tensor("global_step"))


def skip_trained_batches(dataset, step, batches_per_step, random_seed):
    """`dataset` past the batches `step` steps trained on, when the run is seeded.

    A seeded run reads its training input in the same order every time, so a resumed run
    that started from the first batch again would train on the first `step` batches twice
    (and on the ones after them only later, or never). Skipping them makes the resumed
    run the uninterrupted one (`batches_per_step`: the batches each step takes from this
    input, one per replica it feeds). The skipped batches are still read and batched,
    not trained on. Without a seed the order is new each run: nothing is skipped.
    """
    if not step or random_seed is None:
        return dataset
    count = int(step) * int(batches_per_step)
    logging.info("Skipping the %s training batches the first %s steps trained on (the "
                 "seeded input is read in the same order again)", "{:,}".format(count),
                 "{:,}".format(int(step)))
    return dataset.skip(count)
