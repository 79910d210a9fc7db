"""Which checkpoints of a training folder can be read, found from their index files alone.

A checkpoint `model.ckpt-N` is an `.index` file (every variable's name, dtype and shape)
and `.data-0000i-of-0000n` shards holding the values back to back. A disk that filled up,
a copy that stopped half-way or a machine that died before its writes reached the disk
leave a data file shorter than its index says, and TensorFlow only finds out when a
restore reads past the end (a long `OutOfRangeError: Read less bytes than requested`).
Reading the index and the files' sizes finds that in milliseconds, before any model is
built:

    checkpoint_problem("/run/model.ckpt-600")
    # "model.ckpt-600.data-00000-of-00001 holds 40,000 bytes, its index lists 72,208
    #  (the file is truncated)"; None for a checkpoint that reads
    newest_readable("/run")
    # ("/run/model.ckpt-400", [("/run/model.ckpt-600", "model.ckpt-600.data-...")])
    check_readable("/run/model.ckpt-600")
    # UserError: checkpoint /run/model.ckpt-600 cannot be read: model.ckpt-600.data-...
    #   holds 40,000 bytes, its index lists 72,208 (the file is truncated); intact
    #   checkpoints in /run: model.ckpt-400, model.ckpt-200; pass
    #   --checkpoint_path=/run/model.ckpt-400

The check sees truncated and missing files and unreadable indexes; values changed in
place (same size) are TensorFlow's checksums' to find. t2t-decoder, t2t-exporter,
t2t-avg-all and `CheckpointPredictor` call `check_readable`; training resumes from
`newest_readable` (`t2t.training.checkpoint_recovery`).
"""
import os
import re

import numpy as np
import tensorflow as tf

from t2t.core import errors

_SHARD_NAME = re.compile(r"\.data-(\d{5})-of-(\d{5})$")
_STEP = re.compile(r"-(\d+)$")


def _step(path):
    match = _STEP.search(os.path.basename(path))
    return int(match.group(1)) if match else -1


def listed_checkpoints(model_dir):
    """The checkpoints of `model_dir`, oldest (lowest step) first: those its `checkpoint`
    state file lists (what `tf.train.latest_checkpoint` reads) and every `*.index` there
    (a Saver keeping all checkpoints, --keep_checkpoint_max=0, lists only the newest).
    [] without a state file (as for `tf.train.latest_checkpoint`: no run to resume)."""
    try:
        state = tf.train.get_checkpoint_state(model_dir)
    except (tf.errors.OpError, ValueError) as error:
        raise errors.UserError("%s cannot be read (%s); delete it and rerun: the checkpoints "
                               "are then found by their .index files" % (
                                   os.path.join(model_dir, "checkpoint"),
                                   " ".join(str(error).split()))) from None
    if state is None or not state.model_checkpoint_path:
        return []
    # (The state's relative paths come back joined to model_dir.)
    paths = list(state.all_model_checkpoint_paths)
    if state.model_checkpoint_path not in paths:
        paths.append(state.model_checkpoint_path)
    for index in tf.io.gfile.glob(os.path.join(model_dir, "*.index")):
        path = index[:-len(".index")]
        if path not in paths and os.path.basename(path) not in {
                os.path.basename(p) for p in paths}:
            paths.append(path)
    return sorted(paths, key=_step)


def _expected_bytes(reader):
    """The bytes the index's numeric tensors take in the data files (strings, whose
    lengths the index does not give, count 0)."""
    shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    total = 0
    for name, dtype in dtypes.items():
        if dtype.is_numpy_compatible and dtype != tf.string:
            total += int(np.prod(shapes[name], dtype=np.int64)) * dtype.size
    return total


def checkpoint_problem(path):
    """Why the checkpoint prefix `path` cannot be read (one phrase), or None if it can."""
    name = os.path.basename(path)
    if not tf.io.gfile.exists(path + ".index"):
        return "its index file %s.index is missing" % name
    shards = tf.io.gfile.glob(path + ".data-?????-of-?????")
    counts = {int(_SHARD_NAME.search(shard).group(2)) for shard in shards}
    if not shards or len(counts) != 1:
        return "its data files %s.data-* are missing" % name
    count = counts.pop()
    present = {int(_SHARD_NAME.search(shard).group(1)) for shard in shards}
    missing = sorted(set(range(count)) - present)
    if missing:
        return "its data file %s.data-%05d-of-%05d is missing" % (name, missing[0], count)
    try:
        reader = tf.train.load_checkpoint(path)
        expected = _expected_bytes(reader)
    except (tf.errors.OpError, ValueError, IndexError) as error:
        return "its index file %s.index cannot be read (%s)" % (name, " ".join(
            str(error).split()))
    held = sum(tf.io.gfile.stat(shard).length for shard in shards)
    if held < expected:
        what = (os.path.basename(shards[0]) if count == 1 else
                "%s.data-* (%d files)" % (name, count))
        return "%s holds %s bytes, its index lists %s (the file is truncated)" % (
            what, "{:,}".format(held), "{:,}".format(expected))
    return None


def newest_readable(model_dir):
    """(newest checkpoint that reads or None, [(newer checkpoint, its problem), ...]).

    Read-only: every task of a cluster may call it; the chief alone sets broken ones aside.
    """
    skipped = []
    for path in reversed(listed_checkpoints(model_dir)):
        problem = checkpoint_problem(path)
        if problem is None:
            return path, skipped
        skipped.append((path, problem))
    return None, skipped


def check_readable(path, fix="pass --checkpoint_path={intact}"):
    """Raise a UserError naming `path`'s broken file and its folder's intact checkpoints.

    `fix` is the advice given when one is intact (`{intact}`: the newest of them,
    `{path}`: the broken one).
    """
    problem = checkpoint_problem(path)
    if problem is None:
        return
    model_dir = os.path.dirname(path) or "."
    intact = [p for p in reversed(listed_checkpoints(model_dir))
              if p != path and checkpoint_problem(p) is None]
    if intact:
        fix = "intact checkpoints in %s: %s; %s" % (
            model_dir, ", ".join(os.path.basename(p) for p in intact),
            fix.format(intact=intact[0], path=path))
    else:
        fix = ("no other checkpoint in %s reads; restore the folder from a backup or train "
               "again" % model_dir)
    raise errors.UserError("checkpoint %s cannot be read: %s; %s" % (path, problem, fix))
