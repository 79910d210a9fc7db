"""Downloads, gunzip and safe archive extraction for data generators.

Re-exported by `t2t.data.generator_utils` under T2T's names, so ported code keeps
calling `generator_utils.maybe_download(tmp_dir, "corpus.tgz", url)`.

    path = maybe_download("/tmp/t2t", "corpus.tgz", "https://example.org/corpus.tgz")
    # -> "/tmp/t2t/corpus.tgz" (downloaded once; later calls just return the path)
    maybe_extract(path, "/tmp/t2t")
    # -> "/tmp/t2t"; members that would land outside it are refused with UnsafeArchiveError

HTTP downloads stream into `<file>.incomplete`, retry connection errors and HTTP 429/5xx
with exponential backoff, resume a partial file with a `Range` request when the server
allows it, and rename the file into place only once it is complete.
"""
import gzip
import os
import re
import shutil
import tarfile
import time
import zipfile

from absl import logging

from t2t.core import atomic_files
from t2t.core import errors
from t2t.core.progress import Progress

DEFAULT_RETRIES = 5
DEFAULT_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0
CHUNK_BYTES = 1 << 16
# (connect, read) seconds: a stalled server fails over to a retry instead of hanging forever.
DEFAULT_TIMEOUT = (30.0, 120.0)
_RETRY_STATUSES = frozenset([408, 429, 500, 502, 503, 504])
_MB = 1e6


class DownloadError(errors.UserError):
    """A download that failed for good: bad status, or retries exhausted."""


class UnsafeArchiveError(errors.UserError):
    """An archive member that would be written outside the extraction folder."""


class _Retryable(Exception):
    """A failure worth another attempt (connection drop, HTTP 429/5xx)."""

    def __init__(self, reason, retry_after=None):
        super().__init__(reason)
        self.retry_after = retry_after


def _is_http(uri):
    return uri.startswith("http://") or uri.startswith("https://")


def _retry_after_seconds(response):
    value = response.headers.get("Retry-After", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # An HTTP-date; fall back to our own backoff.


def _total_from_content_range(value):
    """`bytes 100-199/1000` -> 1000; `bytes */1000` -> 1000; unknown -> None."""
    match = re.search(r"/(\d+)\s*$", value or "")
    return int(match.group(1)) if match else None


def _start_from_content_range(value):
    match = re.match(r"\s*bytes\s+(\d+)-", value or "")
    return int(match.group(1)) if match else None


def _stream_once(session, url, partial_path, description, timeout, params=None):
    """One GET attempt, appending to `partial_path` when the server honours Range.

    Returns normally when the file is complete; raises `_Retryable` for failures worth
    another attempt and `DownloadError` for final ones.
    """
    import requests  # Imported here: only downloads need it.

    have = os.path.getsize(partial_path) if os.path.exists(partial_path) else 0
    # Identity encoding: a transparently gunzipped body would corrupt .gz files and
    # make byte offsets for Range meaningless.
    headers = {"Accept-Encoding": "identity"}
    if have:
        headers["Range"] = "bytes=%d-" % have
    try:
        response = session.get(url, headers=headers, params=params, stream=True,
                                timeout=timeout)
    except (requests.ConnectionError, requests.Timeout) as error:
        raise _Retryable("connection failed (%s)" % type(error).__name__)
    with response:
        status = response.status_code
        if status == 416 and have:
            total = _total_from_content_range(response.headers.get("Content-Range"))
            if total == have:
                return  # The partial file was already complete.
            os.remove(partial_path)
            raise _Retryable("HTTP 416 for a stale partial file; restarting")
        if status in _RETRY_STATUSES:
            raise _Retryable("HTTP %d %s" % (status, response.reason or ""),
                             _retry_after_seconds(response))
        if status >= 400:
            raise DownloadError(
                "maybe_download: GET %s failed with HTTP %d %s; check the URL, or put the "
                "file at %s by hand" % (url, status, response.reason or "",
                                        partial_path[:-len(".incomplete")]))
        start = 0
        if status == 206:
            start = _start_from_content_range(response.headers.get("Content-Range"))
            if start != have:
                os.remove(partial_path)
                raise _Retryable("server resumed at byte %s, not %d; restarting" % (start, have))
        # A 200 answer to a Range request means "no resume": start over.
        length = response.headers.get("Content-Length")
        expected = start + int(length) if length and length.isdigit() else None
        progress = Progress(description, unit="MB",
                            total=expected / _MB if expected else None)
        progress.update(start / _MB)
        written = start
        try:
            with open(partial_path, "ab" if start else "wb") as out:
                for chunk in response.iter_content(CHUNK_BYTES):
                    out.write(chunk)
                    written += len(chunk)
                    progress.update(len(chunk) / _MB)
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError,
                requests.Timeout) as error:
            raise _Retryable("connection dropped after %d bytes (%s)"
                             % (written, type(error).__name__))
        if expected is not None and written < expected:
            raise _Retryable("connection closed after %d of %d bytes" % (written, expected))
        seconds = max(progress.seconds, 1e-9)
        progress.done(bytes=written, **{"MB/s": (written - start) / _MB / seconds})


def _download_with_retries(session, url, filepath, retries, backoff_seconds, timeout,
                           params=None, validate=None):
    """Stream `url` into `filepath + ".incomplete"`, retrying; rename when complete.

    `validate(partial_path)` may raise DownloadError to reject the finished file, which is
    then deleted instead of renamed.
    """
    partial_path = filepath + atomic_files.INCOMPLETE_SUFFIX
    description = "download %s" % os.path.basename(filepath)
    attempts = retries + 1
    for attempt in range(1, attempts + 1):
        try:
            _stream_once(session, url, partial_path, description, timeout, params)
            break
        except _Retryable as error:
            if attempt == attempts:
                hint = ("the partial file %s is kept, rerun to resume" % partial_path
                        if os.path.exists(partial_path) else "try again later")
                raise DownloadError("maybe_download: GET %s failed after %d attempts (last: "
                                    "%s); %s" % (url, attempts, error, hint))
            wait = min(backoff_seconds * 2 ** (attempt - 1), MAX_BACKOFF_SECONDS)
            if error.retry_after is not None:
                wait = min(max(wait, error.retry_after), MAX_BACKOFF_SECONDS)
            logging.warning("download %s: %s; retry %d/%d in %.1f s",
                            url, error, attempt, retries, wait)
            time.sleep(wait)
    if validate is not None:
        try:
            validate(partial_path)
        except DownloadError:
            os.remove(partial_path)
            raise
    return atomic_files.commit_file(partial_path, filepath)


def _copy_local(source, filepath):
    if not os.path.isfile(source):
        raise DownloadError("maybe_download: source file %s does not exist; check the path"
                            % source)
    with open(source, "rb") as src, atomic_files.atomic_write(filepath, "wb") as dst:
        shutil.copyfileobj(src, dst, CHUNK_BYTES)


def maybe_download(directory, filename, uri, retries=DEFAULT_RETRIES,
                   backoff_seconds=DEFAULT_BACKOFF_SECONDS, timeout=DEFAULT_TIMEOUT,
                   headers=None):
    """Download `uri` to `directory/filename` unless that file already exists.

    `uri` may be an http(s) URL, a `file://` URL, a local path, or a remote path that
    `tf.io.gfile` understands (`gs://...`). An existing file is trusted, not re-checked.

        maybe_download("/tmp/t2t", "a.txt", "http://127.0.0.1:8000/a.txt") -> "/tmp/t2t/a.txt"
        maybe_download("/tmp/t2t", "b.txt", "/data/b.txt")                  -> "/tmp/t2t/b.txt"

    `headers` are sent with every HTTP request (e.g. a browser's User-Agent for a server
    that refuses others).

    Raises `DownloadError` with one line naming the URL (and the HTTP status) on failure.
    """
    filepath = os.path.join(directory, filename)
    if atomic_files.path_exists(filepath):
        logging.info("Not downloading, file already found: %s", filepath)
        return filepath
    atomic_files.make_dirs(directory)
    logging.info("Downloading %s to %s", uri, filepath)
    if _is_http(uri):
        if atomic_files.is_remote_path(filepath):
            raise DownloadError("maybe_download: cannot stream %s into remote folder %s; "
                                "download to a local folder first" % (uri, directory))
        import requests
        with requests.Session() as session:
            session.headers.update(headers or {})
            _download_with_retries(session, uri, filepath, retries, backoff_seconds, timeout)
    elif atomic_files.is_remote_path(uri) or atomic_files.is_remote_path(filepath):
        import tensorflow as tf
        try:
            exists = tf.io.gfile.exists(uri)
        except tf.errors.OpError:  # A scheme TensorFlow has no file system for (ftp://, ...).
            raise DownloadError("maybe_download: unrecognized URI %s; give an http(s):// URL, "
                                "a file:// URL, a local path or a gs:// path" % uri)
        if not exists:
            raise DownloadError("maybe_download: source %s does not exist; check the URI" % uri)
        with atomic_files.atomic_output_path(filepath) as tmp:
            tf.io.gfile.copy(uri, tmp, overwrite=True)
    else:
        _copy_local(atomic_files.local_path(uri), filepath)
    size = os.path.getsize(filepath) if not atomic_files.is_remote_path(filepath) else -1
    logging.info("Successfully downloaded %s, %d bytes.", filename, size)
    return filepath


def unreachable_reason(url, timeout=10.0):
    """None when the server of http(s) `url` answers at all (any status), else why not.

    One quick attempt, no retries: a caller that can say what to do offline asks this
    before `maybe_download`'s retries (about half a minute) end in "try again later".

        unreachable_reason("https://storage.googleapis.com/tydiqa/v1.0/")   # None online
        unreachable_reason("http://127.0.0.1:9/x")   # "connection failed (ConnectionError)"
    """
    if not _is_http(url):
        return None
    import requests
    try:
        requests.head(url, timeout=timeout, allow_redirects=False).close()
    except (requests.ConnectionError, requests.Timeout) as error:
        return "connection failed (%s)" % type(error).__name__
    return None


def _drive_confirm_params(response):
    """What Google Drive wants echoed back after its "can't scan for viruses" page.

    Older Drive set a `download_warning_*` cookie holding the token; newer Drive serves an
    HTML form whose hidden inputs (`id`, `export`, `confirm`, `uuid`) must be submitted.
    Returns (url or None, params dict), or (None, None) if the response is the file.
    """
    for name, value in response.cookies.items():
        if name.startswith("download_warning"):
            return None, {"confirm": value}
    content_type = response.headers.get("Content-Type", "")
    if "text/html" not in content_type:
        return None, None
    page = response.text
    form = re.search(r'<form[^>]*id="download-form"[^>]*action="([^"]+)"', page)
    inputs = dict(re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', page))
    if form and inputs:
        return form.group(1).replace("&amp;", "&"), inputs
    token = re.search(r"confirm=([0-9A-Za-z_-]+)", page)
    if token:
        return None, {"confirm": token.group(1)}
    return None, {}


def maybe_download_from_drive(directory, filename, url, retries=DEFAULT_RETRIES,
                              backoff_seconds=DEFAULT_BACKOFF_SECONDS,
                              timeout=DEFAULT_TIMEOUT):
    """Download a Google Drive file to `directory/filename` unless it already exists.

    Large Drive files first answer with a virus-scan warning page; the confirm token (a
    `download_warning*` cookie, or the page's download form) is sent back to get the file.

        maybe_download_from_drive("/tmp/t2t", "data.zip",
                                  "https://drive.google.com/uc?export=download&id=FILE_ID")
        -> "/tmp/t2t/data.zip"
    """
    import requests

    filepath = os.path.join(directory, filename)
    if os.path.exists(filepath):
        logging.info("Not downloading, file already found: %s", filepath)
        return filepath
    os.makedirs(directory, exist_ok=True)
    with requests.Session() as session:
        try:
            probe = session.get(url, stream=True, timeout=timeout)
        except (requests.ConnectionError, requests.Timeout) as error:
            raise DownloadError("maybe_download_from_drive: GET %s failed (%s); check the "
                                "network and the URL" % (url, type(error).__name__))
        with probe:
            if probe.status_code >= 400:
                raise DownloadError(
                    "maybe_download_from_drive: GET %s failed with HTTP %d %s; check that "
                    "the file is shared" % (url, probe.status_code, probe.reason or ""))
            form_url, params = _drive_confirm_params(probe)
        if params == {}:
            raise DownloadError(
                "maybe_download_from_drive: %s returned an HTML page without a download "
                "link (file not shared, or quota exceeded); download it by hand to %s"
                % (url, filepath))
        logging.info("Downloading %s to %s", url, filepath)

        def not_an_html_page(partial_path):
            with open(partial_path, "rb") as handle:
                head = handle.read(512).lstrip().lower()
            if head.startswith(b"<!doctype html") or head.startswith(b"<html"):
                raise DownloadError("maybe_download_from_drive: %s sent an HTML page instead "
                                    "of the file (quota exceeded?); download it by hand to %s"
                                    % (url, filepath))

        _download_with_retries(session, form_url or url, filepath, retries, backoff_seconds,
                               timeout, params=params, validate=not_an_html_page)
    logging.info("Successfully downloaded %s, %d bytes.", filename, os.path.getsize(filepath))
    return filepath


def gunzip_file(gz_path, new_path):
    """Decompress `gz_path` into `new_path` (atomically); skipped if `new_path` exists.

        gunzip_file("/tmp/t2t/train.en.gz", "/tmp/t2t/train.en")
    """
    if os.path.exists(new_path):
        logging.info("File %s already exists, skipping unpacking", new_path)
        return
    logging.info("Unpacking %s to %s", gz_path, new_path)
    with gzip.open(gz_path, "rb") as gz_file, atomic_files.atomic_write(new_path) as out:
        shutil.copyfileobj(gz_file, out, CHUNK_BYTES)


# ---------------------------------------------------------------------------------------
# Safe extraction: refuse members that would be written outside the target folder
# (CVE-2007-4559 and friends). tarfile's filter="data" (Python 3.11.4+) is used as a second
# line of defence only; the checks below do not depend on it.


def _is_within(path, directory):
    path, directory = os.path.normcase(path), os.path.normcase(directory)
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _looks_absolute(name):
    return (name.startswith("/") or name.startswith("\\") or os.path.isabs(name)
            or bool(re.match(r"^[A-Za-z]:", name)))


def _lexically_inside(name, base="."):
    """Without touching the disk: does `base/name` stay inside the root?"""
    joined = os.path.normpath(os.path.join(base, name.replace("\\", "/")))
    return joined != ".." and not joined.startswith(".." + os.sep) and not _looks_absolute(joined)


def _refuse(archive_path, member, why):
    raise UnsafeArchiveError("refusing to extract %s: member %r %s; the archive is unsafe, "
                             "extract it by hand if you trust it" % (archive_path, member, why))


def _check_tar_member_statically(archive_path, member):
    name = member.name
    if _looks_absolute(name):
        _refuse(archive_path, name, "has an absolute path")
    if not _lexically_inside(name):
        _refuse(archive_path, name, "points outside the target folder")
    if member.issym():
        if _looks_absolute(member.linkname):
            _refuse(archive_path, name, "is a symlink to absolute path %r" % member.linkname)
        if not _lexically_inside(member.linkname, os.path.dirname(name) or "."):
            _refuse(archive_path, name, "is a symlink to %r outside the target folder"
                    % member.linkname)
    elif member.islnk():
        if _looks_absolute(member.linkname) or not _lexically_inside(member.linkname):
            _refuse(archive_path, name, "is a hard link to %r outside the target folder"
                    % member.linkname)
    elif not (member.isfile() or member.isdir()):
        _refuse(archive_path, name, "is a device or fifo")


def _check_tar_member_on_disk(archive_path, member, root):
    # realpath follows symlinks already extracted, which catches chains such as
    # "a -> ." followed by "b -> a/.." that look harmless one at a time.
    destination = os.path.realpath(os.path.join(root, member.name))
    if not _is_within(destination, root):
        _refuse(archive_path, member.name, "resolves outside the target folder")
    if member.issym():
        link_dir = os.path.dirname(os.path.join(root, member.name))
        target = os.path.realpath(os.path.join(link_dir, member.linkname))
        if not _is_within(target, root):
            _refuse(archive_path, member.name, "is a symlink resolving outside the target folder")
    elif member.islnk():
        target = os.path.realpath(os.path.join(root, member.linkname))
        if not _is_within(target, root):
            _refuse(archive_path, member.name, "is a hard link resolving outside the folder")


def _sanitize_mode(member):
    # What filter="data" does on newer Pythons: no setuid/setgid/sticky bits, no
    # group/other write, owner can always read and write regular files.
    if member.isfile():
        member.mode = (member.mode & 0o755) | 0o600
    elif member.isdir():
        member.mode = (member.mode & 0o755) | 0o700


_TAR_HAS_DATA_FILTER = hasattr(tarfile, "data_filter")


def safe_extract_tar(archive_path, target_dir):
    """Extract a (possibly compressed) tar archive into `target_dir`, refusing escapes.

    Every member is checked before anything is written (absolute names, `..`, links whose
    target lies outside), then again against the disk while extracting.

        safe_extract_tar("corpus.tgz", "/tmp/t2t")   # writes /tmp/t2t/corpus/train.en, ...
        safe_extract_tar("evil.tar", "/tmp/t2t")     # member "../x": UnsafeArchiveError
    Returns the list of member names extracted.
    """
    root = os.path.realpath(target_dir)
    os.makedirs(root, exist_ok=True)
    with tarfile.open(archive_path, "r:*") as archive:
        members = archive.getmembers()
        for member in members:
            _check_tar_member_statically(archive_path, member)
        for member in members:
            _check_tar_member_on_disk(archive_path, member, root)
            if member.isdir():
                # Directory attributes are not applied: a read-only directory member
                # would make its own files unwritable.
                os.makedirs(os.path.join(root, member.name), exist_ok=True)
                continue
            if _TAR_HAS_DATA_FILTER:
                archive.extract(member, root, filter="data")
            else:
                _sanitize_mode(member)
                archive.extract(member, root)
    return [member.name for member in members]


def safe_extract_zip(archive_path, target_dir):
    """Extract a zip archive into `target_dir`, refusing members that would escape it.

        safe_extract_zip("data.zip", "/tmp/t2t")      # writes /tmp/t2t/data/a.txt, ...
        safe_extract_zip("evil.zip", "/tmp/t2t")      # member "/etc/x": UnsafeArchiveError
    Returns the list of member names extracted.
    """
    root = os.path.realpath(target_dir)
    os.makedirs(root, exist_ok=True)
    with zipfile.ZipFile(archive_path) as archive:
        infos = archive.infolist()
        # zipfile itself silently rewrites "../x" and "/x"; we refuse them instead, so a
        # broken or hostile archive is noticed rather than half-extracted.
        for info in infos:
            name = info.filename
            if _looks_absolute(name):
                _refuse(archive_path, name, "has an absolute path")
            if not _lexically_inside(name):
                _refuse(archive_path, name, "points outside the target folder")
            if not _is_within(os.path.realpath(os.path.join(root, name)), root):
                _refuse(archive_path, name, "resolves outside the target folder")
        for info in infos:
            # zipfile.extract applies no permission bits, so there is no mode to sanitize.
            archive.extract(info, root)
    return [info.filename for info in infos]


def _extracted_marker(archive_path, target_dir):
    return os.path.join(target_dir, ".%s.extracted" % os.path.basename(archive_path))


def maybe_extract(archive_path, target_dir):
    """Extract a tar (.tar, .tgz, .tar.gz, .tar.bz2, ...), zip or plain .gz file once.

    A completed extraction leaves a hidden marker `.<archive>.extracted` in `target_dir`,
    so later calls return at once; an interrupted one is redone in full.

        maybe_extract("/tmp/t2t/corpus.tgz", "/tmp/t2t")  -> "/tmp/t2t"
        maybe_extract("/tmp/t2t/news.en.gz", "/tmp/t2t")  -> "/tmp/t2t" (writes news.en)
    """
    if not os.path.isfile(archive_path):
        raise ValueError("maybe_extract: archive %s does not exist; download it first"
                         % archive_path)
    marker = _extracted_marker(archive_path, target_dir)
    if os.path.exists(marker):
        logging.info("%s already extracted into %s, skipping", archive_path, target_dir)
        return target_dir
    start = time.monotonic()
    if tarfile.is_tarfile(archive_path):
        names = safe_extract_tar(archive_path, target_dir)
    elif zipfile.is_zipfile(archive_path):
        names = safe_extract_zip(archive_path, target_dir)
    elif archive_path.endswith(".gz"):
        os.makedirs(target_dir, exist_ok=True)
        new_name = os.path.basename(archive_path)[:-len(".gz")]
        gunzip_file(archive_path, os.path.join(target_dir, new_name))
        names = [new_name]
    else:
        raise ValueError("maybe_extract: %s is not a tar, zip or .gz file; pass an archive"
                         % archive_path)
    with atomic_files.atomic_write(marker, "w") as handle:
        handle.write("\n".join(names) + "\n")
    logging.info("Extracted %d members of %s into %s in %.1f s", len(names),
                 os.path.basename(archive_path), target_dir, time.monotonic() - start)
    return target_dir


def maybe_download_and_extract(directory, filename, uri, extracted_path):
    """`extracted_path` (a file or folder the archive holds) once the archive is extracted.

    The archive `directory/filename` is downloaded unless present and extracted once
    (`maybe_extract`). A copy extracted by hand, `extracted_path` present without the
    archive beside it, is used as it is and nothing is downloaded:

        maybe_download_and_extract("/tmp/t2t", "aclImdb_v1.tar.gz", url, "/tmp/t2t/aclImdb")
        # -> "/tmp/t2t/aclImdb"
    """
    if os.path.exists(extracted_path) and not os.path.exists(os.path.join(directory, filename)):
        logging.info("Not downloading %s, found %s", filename, extracted_path)
        return extracted_path
    maybe_extract(maybe_download(directory, filename, uri), directory)
    if not os.path.exists(extracted_path):
        raise DownloadError("%s holds no %s; delete the archive to download it again"
                            % (os.path.join(directory, filename),
                               os.path.relpath(extracted_path, directory)))
    return extracted_path
