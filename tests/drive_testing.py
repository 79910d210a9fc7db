"""A Google-Drive-shaped local server for T2T's wiki_lm corpora (gzipped text by file id).

    with serve_wiki(root, {"en": ["London is ...", ...], "de": [...], ...}) as server:
        monkeypatch.setattr(wiki_lm, "DRIVE_URL", server.url + "/uc?export=download&id=")
        # GET /uc?export=download&id=<T2T's file id> -> that language's split, gzipped
        server.requests      # the raw paths asked for
"""
import contextlib
import functools
import gzip
import os
import urllib.parse

import http_testing

from t2t.problems import wiki_lm

LANGUAGES = {"de": wiki_lm._DE, "fr": wiki_lm._FR, "en": wiki_lm._EN, "ro": wiki_lm._RO}


class DriveHandler(http_testing.QuietFileHandler):
    """Serves /uc?export=download&id=<id> from <root>/drive/<id>, as Google Drive does."""

    def do_GET(self):  # noqa: N802  (http.server's name)
        self.server.requests.append(self.path)
        super().do_GET()

    def translate_path(self, path):
        query = urllib.parse.parse_qs(urllib.parse.urlparse(path).query)
        if "id" in query:
            return os.path.join(self.directory, "drive", query["id"][0])
        return super().translate_path(path)


@contextlib.contextmanager
def serve_wiki(root, texts, copies=(4, 1, 1)):
    """Serve each language of `texts` ({language: [lines]}): its train / eval / test file
    holds the lines `copies` times over, gzipped, under T2T's Drive file ids."""
    os.makedirs(os.path.join(str(root), "drive"), exist_ok=True)
    for language, lines in texts.items():
        for (_, file_id), times in zip(LANGUAGES[language], copies):
            text = "".join(line + "\n" for line in lines * times)
            with open(os.path.join(str(root), "drive", file_id), "wb") as handle:
                handle.write(gzip.compress(text.encode("utf-8")))
    handler = functools.partial(DriveHandler, directory=str(root))
    with http_testing.local_http_server(handler, requests=[]) as server:
        yield server
