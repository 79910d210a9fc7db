"""Write files under a temporary name and rename them into place only when complete.

A reader (or a resumed run) therefore never sees a half-written file under its final
name: either the old file (or none) is there, or the complete new one.

    with atomic_write("/data/vocab.txt", "w") as f:
        f.write("hello\\n")
    # /data/vocab.txt now holds "hello\\n"; had the block raised, no file
    # (and no temporary file) would be left behind.

    with atomic_output_path("/data/x-train-00000-of-00001") as tmp:
        with tf.io.TFRecordWriter(tmp) as writer:   # any writer that takes a path
            writer.write(record)
    # renamed to /data/x-train-00000-of-00001 when the block ends without error

Temporary files are hidden (`.<name>.<random>.incomplete` in the same folder), so a glob
such as `<problem>-train*` never picks one up, and two processes writing the same file
never share one. Paths with a scheme other than `file://` (`gs://`, `ram://`, ...) go
through `tf.io.gfile`, imported only then.
"""
import contextlib
import os
import tempfile
import uuid

from absl import logging

INCOMPLETE_SUFFIX = ".incomplete"


def is_remote_path(path):
    """True for `gs://bucket/x`, `ram://x`, ...; False for local paths and `file://`.

        is_remote_path("gs://b/x") -> True;  is_remote_path("/tmp/x") -> False
    """
    path = os.fspath(path)
    return "://" in path and not path.startswith("file://")


def local_path(path):
    """Strip a `file://` prefix: `file:///tmp/x` -> `/tmp/x`; other paths unchanged."""
    path = os.fspath(path)
    return path[len("file://"):] if path.startswith("file://") else path


def path_exists(path):
    """`os.path.exists` for local paths, `tf.io.gfile.exists` for remote ones."""
    if is_remote_path(path):
        import tensorflow as tf  # Only remote paths need TensorFlow's file systems.
        return tf.io.gfile.exists(path)
    return os.path.exists(local_path(path))


def remove_path(path):
    """Delete a file (local or remote); a missing file is not an error."""
    if is_remote_path(path):
        import tensorflow as tf
        if tf.io.gfile.exists(path):
            tf.io.gfile.remove(path)
        return
    try:
        os.remove(local_path(path))
    except FileNotFoundError:
        pass


def make_dirs(directory):
    """Create `directory` and its parents if missing (local or remote)."""
    if not directory:
        return
    if is_remote_path(directory):
        import tensorflow as tf
        tf.io.gfile.makedirs(directory)
    else:
        os.makedirs(local_path(directory), exist_ok=True)


def fsync_file(path):
    """Flush a local file's data to disk (before renaming it into place)."""
    # Flush the data to disk before the rename, so a crash right after the rename cannot
    # leave a complete-looking but empty file.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(directory):
    """Persist a rename in `directory` (best-effort; a no-op where unsupported)."""
    # Persist the rename itself; not every platform can open a directory, hence best-effort.
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# mkstemp creates files 0600; finished outputs get the permissions a plain open() would
# give them, so shared data dirs stay readable by others.
_FILE_MODE = 0o666 & ~_current_umask()


def _temp_prefix(path):
    return "." + os.path.basename(path) + "."


def _new_local_temp(path):
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=INCOMPLETE_SUFFIX,
                               dir=directory)
    os.fchmod(fd, _FILE_MODE)
    os.close(fd)
    return tmp


def remove_stale_temp_files(paths):
    """Delete temporary files an interrupted (e.g. SIGKILLed) earlier run left for `paths`.

        remove_stale_temp_files(["/d/p-train-00000-of-00001"])
        # removes /d/.p-train-00000-of-00001.<random>.incomplete, if any

    Only call this when no other process is writing the same outputs.
    """
    import glob
    import shutil
    for path in paths:
        if is_remote_path(path):
            continue
        path = local_path(os.fspath(path)).rstrip("/")
        pattern = os.path.join(os.path.dirname(os.path.abspath(path)),
                               glob.escape(_temp_prefix(path)) + "*" + INCOMPLETE_SUFFIX)
        for stale in glob.glob(pattern):
            try:
                if os.path.isdir(stale) and not os.path.islink(stale):
                    shutil.rmtree(stale)  # the folder of an interrupted atomic_output_dir
                else:
                    os.remove(stale)
                logging.info("removed %s, left by an interrupted run", stale)
            except FileNotFoundError:
                pass


def commit_file(tmp, path):
    """Rename the complete temporary file `tmp` to `path` (replacing it), durably.

    For writers that keep their own temporary name (a download resumed across runs keeps
    `<file>.incomplete`); `atomic_output_path` ends with the same step. Local files are
    flushed to disk first and the rename is persisted; remote ones go through
    `tf.io.gfile.rename`.

        commit_file("/d/corpus.tgz.incomplete", "/d/corpus.tgz")   # -> "/d/corpus.tgz"
    """
    tmp, path = os.fspath(tmp), os.fspath(path)
    if is_remote_path(path):
        import tensorflow as tf
        tf.io.gfile.rename(tmp, path, overwrite=True)
        return path
    tmp, path = local_path(tmp), local_path(path)
    fsync_file(tmp)
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(os.path.abspath(path)))
    return path


def move_into(path, directory):
    """Move the file `path` into `directory` (created if missing) under its own name, or
    `<name>.1`, `<name>.2`, ... when that is taken: nothing already there is overwritten.
    Local or remote (`gs://`, ...); returns the new path.

        move_into("/run/model.ckpt-600.index", "/run/broken_checkpoints")
        # -> "/run/broken_checkpoints/model.ckpt-600.index" (".1" if one was there)
    """
    path, directory = os.fspath(path), os.fspath(directory)
    remote = is_remote_path(directory)
    if remote:
        import tensorflow as tf
        exists, rename = tf.io.gfile.exists, tf.io.gfile.rename
    else:
        path, directory = local_path(path), local_path(directory)
        exists, rename = os.path.exists, os.rename
    make_dirs(directory)
    name = os.path.basename(path.rstrip("/"))
    target = os.path.join(directory, name)
    suffix = 1
    while exists(target):
        target = os.path.join(directory, "%s.%d" % (name, suffix))
        suffix += 1
    rename(path, target)
    if not remote:
        fsync_dir(directory)
    return target


@contextlib.contextmanager
def atomic_output_path(path):
    """Yield a temporary path next to `path`; rename it to `path` if the block succeeds.

    For writers that want a file name rather than a file object (`tf.io.TFRecordWriter`,
    `SubwordTextEncoder.store_to_file`). On an exception (including KeyboardInterrupt)
    the temporary file is removed and `path` is left untouched.

        with atomic_output_path("/d/out.txt") as tmp:   # tmp == "/d/.out.txt.k2j3.incomplete"
            write_somehow(tmp)
        # /d/out.txt exists, tmp does not
    """
    path = os.fspath(path)
    if is_remote_path(path):
        import tensorflow as tf
        tf.io.gfile.makedirs(os.path.dirname(path))
        # Hidden, as locally: a reader's glob such as "<split>.tfrecord-*" never matches it.
        tmp = os.path.join(os.path.dirname(path), "%s%s%s" % (
            _temp_prefix(path), uuid.uuid4().hex[:8], INCOMPLETE_SUFFIX))
        try:
            yield tmp
            commit_file(tmp, path)
        except BaseException:
            remove_path(tmp)
            raise
        return
    path = local_path(path)
    tmp = _new_local_temp(path)
    try:
        yield tmp
        commit_file(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except FileNotFoundError:
            pass
        raise


@contextlib.contextmanager
def atomic_output_dir(path):
    """Yield a temporary folder next to folder `path`; it replaces `path` if the block succeeds.

    For writers of whole folders (`tf.saved_model.save` of several models). The folder is
    `.<name>.<random>.incomplete` beside `path`; an exception removes it, and a run killed
    part way leaves it for `remove_stale_temp_files([path])`, which the next writer calls
    first. An existing `path` is replaced only once the new folder is complete.

        with atomic_output_dir("/train/export/hub") as tmp:
            tf.saved_model.save(encoder, os.path.join(tmp, "encoder"))
        # /train/export/hub/encoder exists; no .hub.*.incomplete is left
    """
    import shutil
    path = os.fspath(path).rstrip("/")
    if is_remote_path(path):
        import tensorflow as tf
        tmp = path + INCOMPLETE_SUFFIX
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.rmtree(tmp)
        try:
            yield tmp
            if tf.io.gfile.exists(path):
                tf.io.gfile.rmtree(path)
            tf.io.gfile.rename(tmp, path)
        except BaseException:
            if tf.io.gfile.exists(tmp):
                tf.io.gfile.rmtree(tmp)
            raise
        return
    path = local_path(path)
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=_temp_prefix(path), suffix=INCOMPLETE_SUFFIX, dir=parent)
    os.chmod(tmp, 0o777 & ~_current_umask())
    old = None
    try:
        yield tmp
        if os.path.exists(path):
            old = tempfile.mkdtemp(prefix=_temp_prefix(path), suffix=".old" + INCOMPLETE_SUFFIX,
                                   dir=parent)
            os.rmdir(old)
            os.replace(path, old)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old and os.path.exists(old) and not os.path.exists(path):
            os.replace(old, path)  # put the previous folder back
        raise
    if old:
        shutil.rmtree(old, ignore_errors=True)
    fsync_dir(parent)


@contextlib.contextmanager
def atomic_write(path, mode="wb", encoding=None):
    """Open a temporary file for writing; on success it replaces `path` atomically.

    `mode` is "wb" (default) or "w" (text; `encoding` defaults to UTF-8).

        with atomic_write("/d/lines.txt", "w") as f:
            f.write("a\\nb\\n")
        open("/d/lines.txt").read() -> "a\\nb\\n"
    """
    if mode not in ("w", "wb", "wt"):
        raise ValueError("atomic_write: mode %r is not supported; use 'wb' or 'w'" % (mode,))
    if "b" not in mode and encoding is None:
        encoding = "utf-8"
    with atomic_output_path(path) as tmp:
        if is_remote_path(tmp):
            import tensorflow as tf
            handle = tf.io.gfile.GFile(tmp, mode)
        else:
            handle = open(tmp, mode, encoding=encoding)
        with handle:
            yield handle


def log_skip(what, path):
    logging.info("%s: %s already exists, skipping", what, path)
