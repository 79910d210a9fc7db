"""T2T 1.15.7's `dialog_cornell`: the Cornell Movie-Dialogs Corpus as a chatbot problem.

`dialog_cornell32k` (a 2**15-word vocabulary) downloads `cornell_movie_dialogs_corpus.zip`
(www.cs.cornell.edu/~cristian) into `tmp_dir`, whose folder `cornell movie-dialogs corpus/`
holds `movie_lines.txt` (`L1045 +++$+++ u0 +++$+++ m0 +++$+++ BIANCA +++$+++ They do not!`)
and `movie_conversations.txt` (`u0 +++$+++ u2 +++$+++ m0 +++$+++ ['L194', 'L195']`). Each
conversation is a dialog; every line but the last is a source, the next line its target:

    t2t-datagen --problem=dialog_cornell32k --data_dir=... --tmp_dir=...
    # data_dir/trainSource.txt "they do not ! ", trainTarget.txt "they do to ! ", ...

The vocabulary counts the training sources' words, as T2T's; pairs whose target is line
`L211194` or `L1045` are left out, as T2T's.
"""
import os
import re

from t2t.core import errors
from t2t.core import registry
from t2t.problems import dialog_abstract

EOS = dialog_abstract.EOS
_FIELD_SEPARATOR = " +++$+++ "
_SKIPPED_TARGETS = ("L211194", "L1045")  # T2T's


def _fields(path, count):
    with open(path, encoding="utf-8", errors="ignore") as handle:
        for lineno, line in enumerate(handle, 1):
            fields = line.split(_FIELD_SEPARATOR)
            if len(fields) < count:
                raise errors.UserError("%s line %d: %d fields separated by %r, not %d; give "
                                       "the corpus's own file" % (path, lineno, len(fields),
                                                                  _FIELD_SEPARATOR, count))
            yield fields


@registry.register_problem
class DialogCornell32k(dialog_abstract.DialogAbstract):
    """The chatbot problem over the Cornell Movie-Dialogs Corpus.

    https://www.cs.cornell.edu/~cristian/Cornell_Movie-Dialogs_Corpus.html
    """

    URL = "http://www.cs.cornell.edu/~cristian/data/cornell_movie_dialogs_corpus.zip"
    ZIPPED_DATA = "cornell_movie_dialogs_corpus.zip"
    RAW_DATA = "cornell movie-dialogs corpus"

    @property
    def targeted_vocab_size(self):
        return 2**15

    def extract_dialog_ids(self, raw_data):
        """The line ids of each conversation: [["L194", "L195", ...], ...]."""
        return [[re.sub("[^A-Z0-9]", "", item) for item in fields[3].split(",")]
                for fields in _fields(os.path.join(raw_data, "movie_conversations.txt"), 4)]

    def dialogs(self, raw_data):
        line_dict = {fields[0]: self.clean_line(fields[4].lower())
                     for fields in _fields(os.path.join(raw_data, "movie_lines.txt"), 5)}
        for dialog in self.extract_dialog_ids(raw_data):
            missing = [line_id for line_id in dialog if line_id not in line_dict]
            if missing:
                raise errors.UserError("movie_conversations.txt names line %s, which "
                                       "movie_lines.txt of %s lacks" % (missing[0], raw_data))
            pairs = [(line_dict[source], line_dict[target])
                     for source, target in dialog_abstract.consecutive_pairs(dialog)
                     if target not in _SKIPPED_TARGETS]
            yield pairs, [source for source, _ in pairs]
