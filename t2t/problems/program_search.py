"""Program synthesis from descriptions: AlgoLisp (Polosukhin & Skidanov 2018,
https://arxiv.org/abs/1802.04335; T2T 1.15.7's `program_search`).

    t2t-datagen --problem=program_search_algolisp --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads `metaset3.{train,dev}.jsonl.gz` (Dropbox; `metaset3.test.jsonl.gz` for the test
split) into --tmp_dir, one JSON object a line. Each becomes `{"inputs": its "text" tokens
joined by spaces, "targets": its nested "short_tree" flattened with brackets}`, e.g.
`["invoke1", ["lambda1", ["+", "arg1", "1"]], "a"]` -> `[ invoke1 [ lambda1 [ + arg1 1 ] ] a ]`.
The vocabulary is `vocab.program_search_algolisp.32768.subwords`. A file already in
--tmp_dir (under the URL's name without `?dl=1`) is not downloaded.
"""
import gzip
import json
import os

from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)


@registry.register_problem
class ProgramSearchAlgolisp(text2text.Text2TextProblem):
    """Problem class for Program Search Algolisp task.

    Synthesizing programs from description and examples.
    """

    # The locations of the train, dev, and test set (T2T's; a subclass or instance may
    # point them elsewhere).
    DROPBOX = "https://www.dropbox.com"
    DATA_URLS = {
        spaces.DatasetSplit.TRAIN: DROPBOX + "/s/qhun6kml9yb2ui9/metaset3.train.jsonl.gz?dl=1",
        spaces.DatasetSplit.EVAL: DROPBOX + "/s/aajkw83j2ps8bzx/metaset3.dev.jsonl.gz?dl=1",
        spaces.DatasetSplit.TEST: DROPBOX + "/s/f1x9ybkjpf371cp/metaset3.test.jsonl.gz?dl=1",
    }

    @staticmethod
    def _extract_filename_from_url(url):
        """The URL's last path part without its query: metaset3.train.jsonl.gz."""
        return os.path.basename(url).split("?")[0]

    @staticmethod
    def _flatten_target_programs(iterable):
        """The tokens of a nested program, each list between "[" and "]"."""
        yield "["
        for element in iterable:
            if isinstance(element, (list, tuple)):
                yield from ProgramSearchAlgolisp._flatten_target_programs(element)
            else:
                yield element
        yield "]"

    @staticmethod
    def _parse_json_to_dict(json_line):
        """{"inputs": the "text" tokens joined, "targets": "short_tree" flattened, joined}."""
        record = json.loads(json_line)
        return {"inputs": " ".join(record["text"]),
                "targets": " ".join(
                    ProgramSearchAlgolisp._flatten_target_programs(record["short_tree"]))}

    @property
    def is_generate_per_split(self):
        # Return True since we already have the train and the dev set separated out.
        return True

    def maybe_download_dataset(self, tmp_dir, dataset_split):
        """Downloads the appropriate dataset file and returns its path."""
        url = self.DATA_URLS.get(dataset_split)
        if url is None:
            raise ValueError("%s: no data for split %r; the splits are %s"
                             % (self.name, dataset_split, ", ".join(sorted(self.DATA_URLS))))
        return download.maybe_download(tmp_dir, self._extract_filename_from_url(url), url)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        path = self.maybe_download_dataset(tmp_dir, dataset_split)
        with gzip.open(path, "rb") as data_fp:
            for line in data_fp:
                if line.strip():
                    yield self._parse_json_to_dict(line.strip())
