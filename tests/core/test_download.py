"""Tests for t2t.core.download: HTTP downloads against a local server, gunzip, archives."""
import gzip
import http.server
import io
import logging
import os
import re
import tarfile
import urllib.parse
import zipfile

import pytest

import http_testing

from t2t.core import download
from t2t.core import errors
from t2t.data import generator_utils

PAYLOAD = bytes(range(256)) * 4096  # 1,048,576 bytes


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves `server.files`; `server.plans[path]` scripts the first answers ("503", "drop")."""

    def log_message(self, *args):  # Keep pytest output clean.
        pass

    def _send(self, status, body=b"", headers=()):
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802  (http.server's name)
        state = self.server.state
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        state["requests"].append((url.path, self.headers.get("Range"), query))
        plan = state["plans"].get(url.path)
        step = plan.pop(0) if plan else "ok"
        if step == "503":
            return self._send(503)
        if url.path.startswith("/drive"):
            return self._drive(url.path, query)
        if url.path not in state["files"]:
            return self._send(404, b"not here")
        self._serve(state["files"][url.path], step, state["range_supported"])

    def _serve(self, body, step="ok", range_supported=True):
        if step == "drop":
            # Promise the whole body, send half of it, hang up.
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        requested = re.match(r"bytes=(\d+)-$", self.headers.get("Range") or "")
        if requested and range_supported:
            start = int(requested.group(1))
            if start >= len(body):
                return self._send(416, headers=[("Content-Range", "bytes */%d" % len(body))])
            content_range = "bytes %d-%d/%d" % (start, len(body) - 1, len(body))
            return self._send(206, body[start:], [("Content-Range", content_range)])
        self._send(200, body)

    def _drive(self, path, query):
        body = self.server.state["files"]["/file.bin"]
        if path == "/drive/uc":
            if query.get("confirm") == "TOKEN42":
                return self._serve(body)
            page = b"<html><body>Google Drive can't scan this file for viruses.</body></html>"
            return self._send(200, page, [("Content-Type", "text/html; charset=utf-8"),
                                          ("Set-Cookie", "download_warning_1234=TOKEN42")])
        if path == "/drive/form":
            action = "http://%s:%d/drive/usercontent" % self.server.server_address[:2]
            page = ('<html><form id="download-form" action="%s" method="get">'
                    '<input type="hidden" name="id" value="F1">'
                    '<input type="hidden" name="confirm" value="t">'
                    '<input type="hidden" name="uuid" value="U9"></form></html>' % action)
            return self._send(200, page.encode(), [("Content-Type", "text/html")])
        if path == "/drive/usercontent":
            if query == {"id": "F1", "confirm": "t", "uuid": "U9"}:
                return self._serve(body)
            return self._send(400)
        if path == "/drive/html_again":
            page = b"<!DOCTYPE html><html><body>Quota exceeded.</body></html>"
            return self._send(200, page, [("Content-Type", "text/html"),
                                          ("Set-Cookie", "download_warning_9=T2")])
        if path == "/drive/quota":
            page = b"<html><body>Too many users have viewed this file.</body></html>"
            return self._send(200, page, [("Content-Type", "text/html")])
        return self._send(404)


@pytest.fixture
def server():
    state = {"files": {"/file.bin": PAYLOAD}, "plans": {}, "requests": [],
             "range_supported": True}
    with http_testing.local_http_server(_Handler, state=state) as httpd:
        yield httpd


def _get(tmp_path, url, **kwargs):
    kwargs.setdefault("backoff_seconds", 0.01)
    return download.maybe_download(str(tmp_path / "dl"), "file.bin", url, **kwargs)


def _read(path):
    with open(path, "rb") as handle:
        return handle.read()


# ------------------------------------------------------------------ HTTP

def test_download_success_logs_a_summary_and_then_skips(server, tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="absl"):
        path = _get(tmp_path, server.url + "/file.bin")
    assert path == str(tmp_path / "dl" / "file.bin")
    assert _read(path) == PAYLOAD
    assert os.listdir(tmp_path / "dl") == ["file.bin"]
    summary = [r.getMessage() for r in caplog.records if "done:" in r.getMessage()]
    assert summary and "1,048,576 bytes" in summary[0] and "MB/s" in summary[0]
    assert _get(tmp_path, server.url + "/file.bin") == path
    assert len(server.state["requests"]) == 1  # The second call did not touch the network.


def test_download_404_is_a_one_line_error_naming_url_and_status(server, tmp_path):
    url = server.url + "/missing.tgz"
    with pytest.raises(download.DownloadError) as error:
        _get(tmp_path, url)
    message = str(error.value)
    assert "\n" not in message
    assert url in message and "HTTP 404" in message
    assert isinstance(error.value, errors.UserError)
    assert not os.path.exists(tmp_path / "dl" / "file.bin")
    assert len(server.state["requests"]) == 1  # A 404 is not retried.


def test_download_retries_503_with_backoff(server, tmp_path):
    server.state["plans"]["/file.bin"] = ["503", "503"]
    path = _get(tmp_path, server.url + "/file.bin")
    assert _read(path) == PAYLOAD
    assert len(server.state["requests"]) == 3


def test_download_gives_up_after_the_retries(server, tmp_path):
    server.state["plans"]["/file.bin"] = ["503"] * 3
    with pytest.raises(download.DownloadError) as error:
        _get(tmp_path, server.url + "/file.bin", retries=2)
    message = str(error.value)
    assert "failed after 3 attempts" in message and "HTTP 503" in message
    assert "\n" not in message
    assert not os.path.exists(tmp_path / "dl" / "file.bin")


def test_download_resumes_a_dropped_connection_with_range(server, tmp_path):
    server.state["plans"]["/file.bin"] = ["drop"]
    path = _get(tmp_path, server.url + "/file.bin")
    assert _read(path) == PAYLOAD
    first, second = [r[1] for r in server.state["requests"]]
    # The resume starts after the last whole chunk received (at most half the file).
    resumed_at = int(re.match(r"bytes=(\d+)-$", second).group(1))
    assert first is None and 0 < resumed_at <= len(PAYLOAD) // 2
    assert os.listdir(tmp_path / "dl") == ["file.bin"]


def test_download_restarts_when_the_server_ignores_range(server, tmp_path):
    server.state["plans"]["/file.bin"] = ["drop"]
    server.state["range_supported"] = False
    path = _get(tmp_path, server.url + "/file.bin")
    assert _read(path) == PAYLOAD  # Not the partial file followed by the whole.
    first, second = [r[1] for r in server.state["requests"]]
    assert first is None and second.startswith("bytes=")


def test_download_resumes_across_runs_from_the_incomplete_file(server, tmp_path):
    (tmp_path / "dl").mkdir()
    (tmp_path / "dl" / "file.bin.incomplete").write_bytes(PAYLOAD[:1000])
    path = _get(tmp_path, server.url + "/file.bin")
    assert _read(path) == PAYLOAD
    assert [r[1] for r in server.state["requests"]] == ["bytes=1000-"]


def test_download_with_a_complete_or_oversized_partial_file(server, tmp_path):
    (tmp_path / "dl").mkdir()
    (tmp_path / "dl" / "file.bin.incomplete").write_bytes(PAYLOAD)
    assert _read(_get(tmp_path, server.url + "/file.bin")) == PAYLOAD  # 416: already whole.
    os.remove(tmp_path / "dl" / "file.bin")
    (tmp_path / "dl" / "file.bin.incomplete").write_bytes(PAYLOAD + b"junk")
    assert _read(_get(tmp_path, server.url + "/file.bin")) == PAYLOAD  # 416: start over.
    assert [r[1] for r in server.state["requests"]] == [
        "bytes=%d-" % len(PAYLOAD), "bytes=%d-" % (len(PAYLOAD) + 4), None]


def test_download_connection_refused_is_retried_then_reported(tmp_path):
    with pytest.raises(download.DownloadError, match="failed after 2 attempts .*connection"):
        _get(tmp_path, "http://127.0.0.1:9/file.bin", retries=1)


def test_download_is_reexported_from_generator_utils():
    assert generator_utils.maybe_download is download.maybe_download
    assert generator_utils.maybe_extract is download.maybe_extract
    assert generator_utils.gunzip_file is download.gunzip_file


# ------------------------------------------------------------------ local, file:// and remote

def test_local_path_and_file_url_are_copied(tmp_path):
    source = tmp_path / "src.txt"
    source.write_bytes(b"local data")
    assert _read(download.maybe_download(str(tmp_path / "a"), "x.txt", str(source))) \
        == b"local data"
    assert _read(download.maybe_download(str(tmp_path / "b"), "x.txt", "file://" + str(source))) \
        == b"local data"
    assert os.listdir(tmp_path / "b") == ["x.txt"]
    with pytest.raises(download.DownloadError, match="source file .*nope.txt does not exist"):
        download.maybe_download(str(tmp_path / "c"), "x.txt", str(tmp_path / "nope.txt"))
    with pytest.raises(download.DownloadError, match="unrecognized URI ftp://host/x"):
        download.maybe_download(str(tmp_path / "c"), "x.txt", "ftp://host/x")


def test_remote_file_system_source_is_copied(tmp_path):
    import tensorflow as tf
    with tf.io.gfile.GFile("ram://t2t_test_download/src", "wb") as handle:
        handle.write(b"from a bucket")
    path = download.maybe_download(str(tmp_path), "x", "ram://t2t_test_download/src")
    assert _read(path) == b"from a bucket"
    tf.io.gfile.remove("ram://t2t_test_download/src")


# ------------------------------------------------------------------ Google Drive

def test_drive_confirm_token_from_cookie(server, tmp_path):
    path = download.maybe_download_from_drive(str(tmp_path), "d.bin",
                                              server.url + "/drive/uc?export=download&id=F1")
    assert _read(path) == PAYLOAD
    queries = [r[2] for r in server.state["requests"]]
    assert queries == [{"export": "download", "id": "F1"},
                       {"export": "download", "id": "F1", "confirm": "TOKEN42"}]


def test_drive_confirm_form(server, tmp_path):
    path = download.maybe_download_from_drive(str(tmp_path), "d.bin", server.url + "/drive/form")
    assert _read(path) == PAYLOAD
    assert server.state["requests"][-1][0] == "/drive/usercontent"


def test_drive_html_instead_of_the_file_is_refused_before_the_rename(server, tmp_path):
    with pytest.raises(download.DownloadError, match="sent an HTML page instead of the file"):
        download.maybe_download_from_drive(str(tmp_path), "d.bin",
                                           server.url + "/drive/html_again")
    assert os.listdir(tmp_path) == []
    assert server.state["requests"][-1][2] == {"confirm": "T2"}


def test_drive_html_without_a_link_is_a_one_line_error(server, tmp_path):
    with pytest.raises(download.DownloadError) as error:
        download.maybe_download_from_drive(str(tmp_path), "d.bin", server.url + "/drive/quota")
    assert "without a download link" in str(error.value) and "\n" not in str(error.value)
    assert not os.path.exists(tmp_path / "d.bin")


# ------------------------------------------------------------------ gunzip

def test_gunzip_file_round_trip_and_skip(tmp_path):
    gz_path = tmp_path / "a.txt.gz"
    gz_path.write_bytes(gzip.compress(b"line 1\nline 2\n"))
    new_path = tmp_path / "out" / "a.txt"
    new_path.parent.mkdir()
    download.gunzip_file(str(gz_path), str(new_path))
    assert new_path.read_bytes() == b"line 1\nline 2\n"
    gz_path.write_bytes(gzip.compress(b"changed"))
    download.gunzip_file(str(gz_path), str(new_path))  # Exists: skipped.
    assert new_path.read_bytes() == b"line 1\nline 2\n"
    assert os.listdir(new_path.parent) == ["a.txt"]


# ------------------------------------------------------------------ archives

def _tar(path, members, mode="w"):
    """members: (name, kind, data-or-linkname[, mode]) with kind "file", "sym", "hard", "dev"."""
    with tarfile.open(path, mode) as archive:
        for member in members:
            name, kind, payload = member[:3]
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(payload)
                if len(member) > 3:
                    info.mode = member[3]
                archive.addfile(info, io.BytesIO(payload))
                continue
            info.type = {"sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                         "dev": tarfile.CHRTYPE, "dir": tarfile.DIRTYPE}[kind]
            info.linkname = payload or ""
            archive.addfile(info)
    return str(path)


def _zip(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members:
            archive.writestr(zipfile.ZipInfo(name), data)
    return str(path)


def _tree(directory):
    found = []
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            found.append(os.path.relpath(os.path.join(root, name), directory))
    return sorted(found)


@pytest.fixture(params=[True, False], ids=["data_filter", "no_data_filter"])
def tar_filter(request, monkeypatch):
    # Without tarfile's filter="data" (Python < 3.11.4) our own checks must still hold.
    monkeypatch.setattr(download, "_TAR_HAS_DATA_FILTER",
                        request.param and hasattr(tarfile, "data_filter"))
    return request.param


@pytest.mark.parametrize("members, words", [
    ([("ok.txt", "file", b"fine"), ("../evil.txt", "file", b"x")], ["'../evil.txt'", "outside"]),
    ([("sub/../../evil.txt", "file", b"x")], ["'sub/../../evil.txt'", "outside"]),
    ([("{abs}", "file", b"x")], ["absolute path"]),
    ([("link", "sym", "../evil.txt")], ["'link'", "symlink"]),
    ([("link", "sym", "/etc/passwd")], ["'link'", "symlink to absolute path"]),
    ([("hard", "hard", "../evil.txt")], ["'hard'", "hard link"]),
    ([("tty", "dev", None)], ["'tty'", "device"]),
])
def test_tar_members_escaping_the_target_are_refused(tmp_path, tar_filter, members, words):
    target = tmp_path / "target"
    absolute = str(tmp_path / "evil.txt")
    members = [(m[0].format(abs=absolute),) + m[1:] for m in members]
    archive = _tar(tmp_path / "evil.tar", members)
    with pytest.raises(download.UnsafeArchiveError) as error:
        download.safe_extract_tar(archive, str(target))
    message = str(error.value)
    assert "\n" not in message and "evil.tar" in message
    for word in words:
        assert word in message
    assert sorted(os.listdir(tmp_path)) == ["evil.tar", "target"]  # Nothing outside...
    assert _tree(target) == []  # ...and nothing inside: checked before extracting.


def test_tar_symlink_chains_are_refused_while_extracting(tmp_path, tar_filter):
    # Each link looks harmless alone; together "b" would point at target's parent.
    archive = _tar(tmp_path / "chain.tar", [
        ("a", "sym", "."), ("b", "sym", "a/.."), ("b/evil.txt", "file", b"x")])
    with pytest.raises(download.UnsafeArchiveError, match="'b' .*outside"):
        download.safe_extract_tar(archive, str(tmp_path / "target"))
    assert sorted(os.listdir(tmp_path)) == ["chain.tar", "target"]


def test_tar_normal_archive_extracts(tmp_path, tar_filter):
    archive = _tar(tmp_path / "good.tgz", [
        ("corpus", "dir", None), ("corpus/v1", "dir", None),
        ("corpus/v1/train.en", "file", b"hello\n"), ("corpus/run.sh", "file", b"#!", 0o4777),
        ("corpus/latest", "sym", "v1"), ("corpus/copy.en", "hard", "corpus/v1/train.en")],
        mode="w:gz")
    target = tmp_path / "target"
    names = download.safe_extract_tar(archive, str(target))
    assert names == ["corpus", "corpus/v1", "corpus/v1/train.en", "corpus/run.sh",
                     "corpus/latest", "corpus/copy.en"]
    assert (target / "corpus" / "latest" / "train.en").read_bytes() == b"hello\n"
    assert (target / "corpus" / "copy.en").read_bytes() == b"hello\n"
    mode = os.stat(target / "corpus" / "run.sh").st_mode & 0o7777
    assert mode == 0o755  # setuid and group/other write dropped.


@pytest.mark.parametrize("name, words", [
    ("../evil.txt", ["'../evil.txt'", "outside"]),
    ("a/../../evil.txt", ["'a/../../evil.txt'", "outside"]),
    ("/tmp/evil.txt", ["'/tmp/evil.txt'", "absolute path"]),
])
def test_zip_members_escaping_the_target_are_refused(tmp_path, name, words):
    archive = _zip(tmp_path / "evil.zip", [("ok.txt", b"fine"), (name, b"x")])
    with pytest.raises(download.UnsafeArchiveError) as error:
        download.safe_extract_zip(archive, str(tmp_path / "target"))
    assert "\n" not in str(error.value)
    for word in words:
        assert word in str(error.value)
    assert sorted(os.listdir(tmp_path)) == ["evil.zip", "target"]
    assert _tree(tmp_path / "target") == []


def test_zip_normal_archive_extracts(tmp_path):
    archive = _zip(tmp_path / "good.zip", [("data/", b""), ("data/a.txt", b"A"),
                                           ("data/sub/b.txt", b"B")])
    names = download.safe_extract_zip(archive, str(tmp_path / "target"))
    assert names == ["data/", "data/a.txt", "data/sub/b.txt"]
    assert _tree(tmp_path / "target") == ["data", "data/a.txt", "data/sub", "data/sub/b.txt"]
    assert (tmp_path / "target" / "data" / "sub" / "b.txt").read_bytes() == b"B"


def test_maybe_extract_dispatches_and_extracts_once(tmp_path):
    tgz = _tar(tmp_path / "c.tgz", [("c/x.txt", "file", b"tar")], mode="w:gz")
    zipped = _zip(tmp_path / "c.zip", [("z/y.txt", b"zip")])
    gz_path = tmp_path / "news.en.gz"
    gz_path.write_bytes(gzip.compress(b"gz"))
    target = tmp_path / "t"
    for archive in (tgz, zipped, str(gz_path)):
        assert download.maybe_extract(archive, str(target)) == str(target)
    assert (target / "c" / "x.txt").read_bytes() == b"tar"
    assert (target / "z" / "y.txt").read_bytes() == b"zip"
    assert (target / "news.en").read_bytes() == b"gz"
    os.remove(target / "c" / "x.txt")
    download.maybe_extract(tgz, str(target))  # Marker present: not extracted again.
    assert not (target / "c" / "x.txt").exists()
    plain = tmp_path / "plain.txt"
    plain.write_text("not an archive")
    with pytest.raises(ValueError, match="plain.txt is not a tar, zip or .gz file"):
        download.maybe_extract(str(plain), str(target))
    with pytest.raises(ValueError, match="archive .*missing.tgz does not exist"):
        download.maybe_extract(str(tmp_path / "missing.tgz"), str(target))


def test_maybe_extract_refuses_an_unsafe_archive_and_leaves_no_marker(tmp_path):
    archive = _tar(tmp_path / "evil.tar", [("../evil.txt", "file", b"x")])
    with pytest.raises(download.UnsafeArchiveError):
        download.maybe_extract(archive, str(tmp_path / "t"))
    assert _tree(tmp_path / "t") == []
    assert not (tmp_path / "evil.txt").exists()
