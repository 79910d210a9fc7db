"""Small corpus archives laid out like the real downloads, served from 127.0.0.1.

    write_tgz(root / "data/corpus.tgz", {"corpus/train.en": "Hello\\n"})
    with serve_tree(root) as server:        # GET server.url + "/data/corpus.tgz"
        ...
        server.requests                     # ["/data/corpus.tgz"]: the raw paths asked for
    read_examples(paths)                    # [{"inputs": [5, 1], "targets": [0]}, ...]
    register_user_subclass(imdb.SentimentIMDB, "sentiment_imdb_tiny")  # vocab 2**8, 2 shards
    point_at(monkeypatch, server, [(ptb.LanguagemodelPtb10k, "url", ptb.PTB_URL)])
"""
import contextlib
import functools
import io
import os
import tarfile
import urllib.parse
import zipfile

import tensorflow as tf

import http_testing

from t2t.core import registry
from t2t.data import generator_utils
from t2t.problems import spaces


class _RecordingFileHandler(http_testing.QuietFileHandler):
    """Serves a folder and notes each requested path (query string included)."""

    def do_GET(self):  # noqa: N802  (http.server's name)
        self.server.requests.append(self.path)
        super().do_GET()


@contextlib.contextmanager
def serve_tree(root):
    """A local HTTP server of the folder `root`; `.url` its base, `.requests` the log."""
    handler = functools.partial(_RecordingFileHandler, directory=str(root))
    with http_testing.local_http_server(handler, requests=[]) as server:
        yield server


@contextlib.contextmanager
def serve_tgz(root, url, members):
    """serve_tree(root), with a gzipped tar of `members` where `url`'s path points."""
    write_tgz(served_path(root, url), members)
    with serve_tree(root) as server:
        yield server


def served_path(root, url):
    """Where under `root` a server must hold `url`'s file (its path, %-escapes undone)."""
    return os.path.join(str(root), urllib.parse.unquote(urllib.parse.urlparse(url).path)
                        .lstrip("/"))


def local_url(base_url, url):
    """`url` on the local server: the same path and query, another host."""
    parts = urllib.parse.urlparse(url)
    return base_url + parts.path + ("?" + parts.query if parts.query else "")


def point_at(monkeypatch, server, targets):
    """Point each (class, attribute, real URL) of `targets` at `server`; clear its log.

    Returns the server, for a fixture to hand to its test."""
    for cls, attribute, url in targets:
        monkeypatch.setattr(cls, attribute, local_url(server.url, url))
    del server.requests[:]
    return server


def _data(text):
    return text.encode("utf-8") if isinstance(text, str) else text


def write_file(path, text):
    """A file of `text` (or bytes), its folders made."""
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "wb") as handle:
        handle.write(_data(text))


def write_tgz(path, members, mode="w:gz"):
    """A gzipped tar of {member name: text or bytes}; `mode="w"` for a plain tar."""
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with tarfile.open(str(path), mode) as tar:
        for name, text in members.items():
            data = _data(text)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def write_zip(path, members):
    """A zip of {member name: text or bytes}."""
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with zipfile.ZipFile(str(path), "w") as archive:
        for name, text in members.items():
            archive.writestr(name, _data(text))


def read_examples(paths):
    """The int64 features of every record of `paths`: [{name: [ints]}, ...], in file order."""
    examples = []
    for path in paths:
        for record in generator_utils.read_records(path):
            features = tf.train.Example.FromString(record).features.feature
            examples.append({key: list(value.int64_list.value)
                             for key, value in features.items()})
    return examples


def register_user_subclass(base, name, approx_vocab_size=2**8, train_shards=2):
    """Register `name`: a subclass of `base` as user code writes one, overriding
    `approx_vocab_size` and `dataset_splits` (`train_shards` training shards, one dev)."""

    class UserSubclass(base):
        @property
        def approx_vocab_size(self):
            return approx_vocab_size

        @property
        def dataset_splits(self):
            return [{"split": spaces.DatasetSplit.TRAIN, "shards": train_shards},
                    {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    UserSubclass.__name__ = UserSubclass.__qualname__ = "User" + base.__name__
    return registry.register_problem(name)(UserSubclass)


def run_t2t_datagen(capsys, *args):
    """t2t-datagen's main in this process with `args`: (exit code, stderr)."""
    import pytest
    from absl import flags
    from absl.testing import flagsaver
    from t2t.bin import cli, t2t_datagen

    with flagsaver.flagsaver():
        flags.FLAGS.unparse_flags()
        with pytest.raises(SystemExit) as info:
            cli.run_main(t2t_datagen.main, "t2t-datagen", argv=["t2t-datagen"] + list(args))
    return info.value.code, capsys.readouterr().err
