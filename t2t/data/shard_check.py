"""What t2t-datagen wrote beside each TFRecord shard, and checks against it before reading.

A shard cut short (a full disk, a copy stopped halfway, a truncated download of a data dir)
used to train silently on half its data when it ended on a record boundary, or stop
training partway with a `DataLossError` that named no file. t2t-datagen now writes, beside
every shard it completes, a small hidden JSON file with the shard's record count and size:

    record_shard("/d/p-train-00000-of-00002", num_records=5000)
    # writes /d/.p-train-00000-of-00002.shard.json: {"bytes": 812345, "records": 5000}

and every reader checks the shards it is about to read (one `stat` per file):

    check_shards(["/d/p-train-00000-of-00002", "/d/p-train-00001-of-00002"])
    # DataFileError: /d/p-train-00001-of-00002 has 401,020 bytes but t2t-datagen wrote
    # 812,345 (truncated or changed); delete it and rerun t2t-datagen --problem=p
    # --data_dir=/d (the other shards are kept)

A shard without a record (written by T2T or an older t2t) is read unchecked. A shard whose
bytes are damaged without a change of size fails its record checksum while being read; the
`DataLossError` is then turned into the same kind of one-line error by `find_bad_shard`,
which reads the files until it finds the one that fails:

    try:
        estimator.train(...)
    except tf.errors.DataLossError as error:
        raise explain_data_loss(error, files, problem_name="p", data_dir="/d") from None

The hidden name (leading dot) keeps the record out of every `<problem>-train*` pattern.
"""
import json
import os

from t2t.core import atomic_files
from t2t.core import errors

RECORD_SUFFIX = ".shard.json"


class DataFileError(errors.UserError):
    """A data file is missing, short or damaged; the message names it and the fix."""


def record_path(shard_path):
    """`/d/p-train-00000-of-00001` -> `/d/.p-train-00000-of-00001.shard.json`."""
    directory, base = os.path.split(os.fspath(shard_path))
    return os.path.join(directory, "." + base + RECORD_SUFFIX)


def _size(path):
    if atomic_files.is_remote_path(path):
        import tensorflow as tf
        return tf.io.gfile.stat(path).length
    return os.path.getsize(atomic_files.local_path(path))


def record_shard(shard_path, num_records):
    """Write what a finished shard holds (records, bytes) beside it; returns the dict."""
    info = {"records": int(num_records), "bytes": int(_size(shard_path))}
    with atomic_files.atomic_write(record_path(shard_path), "w") as out:
        out.write(json.dumps(info, sort_keys=True) + "\n")
    return info


def remove_record(shard_path):
    """Delete the record of a shard that is being deleted (a missing record is fine)."""
    atomic_files.remove_path(record_path(shard_path))


def read_record(shard_path):
    """The dict `record_shard` wrote for `shard_path`, or None (no record, or unreadable)."""
    path = record_path(shard_path)
    if not atomic_files.path_exists(path):
        return None
    try:
        if atomic_files.is_remote_path(path):
            import tensorflow as tf
            with tf.io.gfile.GFile(path, "r") as f:
                info = json.loads(f.read())
        else:
            with open(atomic_files.local_path(path), encoding="utf-8") as f:
                info = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or not {"records", "bytes"} <= set(info):
        return None
    return info


def fix_hint(path, problem_name=None, data_dir=None):
    """How to repair a bad shard: delete it and let t2t-datagen write it again."""
    command = "t2t-datagen"
    if problem_name:
        command += " --problem=%s" % problem_name
    command += " --data_dir=%s" % (data_dir or os.path.dirname(os.fspath(path)) or ".")
    return "delete it and rerun %s (the other shards are kept)" % command


def check_shards(files, problem_name=None, data_dir=None):
    """Raise DataFileError for the first file whose size differs from its datagen record.

    Cheap (one stat per file), so it runs before every read: training, evaluation and
    decoding from a dataset. Files without a record pass.
    """
    for path in files:
        info = read_record(path)
        if info is None:
            continue
        size = _size(path)
        if size != info["bytes"]:
            raise DataFileError(
                "{} has {:,} bytes but t2t-datagen wrote {:,} ({:,} records): the file is {}; "
                "{}".format(path, size, info["bytes"], info["records"],
                            "truncated" if size < info["bytes"] else "changed",
                            fix_hint(path, problem_name, data_dir)))


def count_records(path):
    """(records read, error message or None): reads the whole file, checking every CRC."""
    import tensorflow as tf
    from tensorflow.python.util import deprecation

    count = 0
    try:
        with deprecation.silence():
            for _ in tf.compat.v1.io.tf_record_iterator(path):
                count += 1
    except tf.errors.DataLossError as error:
        return count, _short(error)
    return count, None


def _short(error):
    message = getattr(error, "message", None) or str(error)
    return " ".join(message.split("\n")[0].split())


def find_bad_shard(files):
    """(path, reason) of the first file that fails to read or holds too few records, or None.

    Reads every file completely; use it after a `DataLossError` to name the culprit.
    """
    for path in files:
        info = read_record(path)
        count, problem = count_records(path)
        if problem:
            return path, "unreadable after %d records (%s)" % (count, problem)
        if info is not None and count != info["records"]:
            return path, "holds %d records but t2t-datagen wrote %d" % (count, info["records"])
    return None


def explain_data_loss(error, files, problem_name=None, data_dir=None):
    """A DataFileError naming the damaged file among `files` for a caught DataLossError."""
    found = find_bad_shard(files)
    if found is None:
        return DataFileError(
            "a data file could not be read (%s), but all %d files of %s read cleanly now; "
            "if they are on a network file system, check it and rerun" %
            (_short(error), len(files), data_dir or "the data dir"))
    path, reason = found
    return DataFileError("%s is damaged: %s; %s" % (path, reason,
                                                    fix_hint(path, problem_name, data_dir)))


def checked_num_records(path):
    """The record count of a TFRecord file; DataFileError naming it when it cannot be read."""
    count, problem = count_records(path)
    if problem:
        raise DataFileError("%s is damaged: unreadable after %d records (%s); %s" % (
            path, count, problem, fix_hint(path)))
    return count
