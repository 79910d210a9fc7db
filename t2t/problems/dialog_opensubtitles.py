"""T2T 1.15.7's `dialog_opensubtitles`: OpenSubtitles (OPUS) as a chatbot problem.

`dialog_opensubtitles64k2009` (a 2**16-word vocabulary) and the releases
`dialog_opensubtitles64k{2011,2012,2013,2016,2018}` download OPUS's English
`en.tar.gz` (`opus.nlpl.eu/download.php?f=OpenSubtitles<year>/en.tar.gz`, no year for 2009)
into `tmp_dir/raw_data_<year>/` and read every `.xml` (or `.xml.gz`) file of its folder
`OpenSubtitles<year>/`, one subtitle file a dialog. A file's sentences are its `<s id="..">`
elements, their words the `<w id="..">word</w>` lines; sentence i is a source, sentence
i + 1 its target:

    t2t-datagen --problem=dialog_opensubtitles64k2009 --data_dir=... --tmp_dir=...
    # <s id="1"> <w id="1.1">Hello</w> ... -> trainSource.txt " hello", ...
"""
import gzip
import os
import re

from t2t.core import registry
from t2t.problems import dialog_abstract

EOS = dialog_abstract.EOS
_SENTENCE = '<s id="'
_WORD = '<w id="'


def _open_text(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="ignore")
    return open(path, encoding="utf-8", errors="ignore")


@registry.register_problem
class DialogOpensubtitles64k2009(dialog_abstract.DialogAbstract):
    """The chatbot problem over OpenSubtitles (http://opus.nlpl.eu/OpenSubtitles-v2018.php)."""

    ZIPPED_DATA = "en.tar.gz"

    @property
    def targeted_vocab_size(self):
        return 2**16

    @property
    def dataset_version(self):
        """The year of the OpenSubtitles release."""
        return 2009

    @property
    def _year(self):
        return "" if self.dataset_version == 2009 else str(self.dataset_version)

    @property
    def URL(self):  # noqa: N802  (the base's name)
        return "http://opus.nlpl.eu/download.php?f=OpenSubtitles%s/en.tar.gz" % self._year

    @property
    def RAW_DATA(self):  # noqa: N802  (the base's name)
        return "OpenSubtitles" + self._year

    def raw_data_dir(self, tmp_dir):
        # Every release's archive is called en.tar.gz: a folder each, as T2T's.
        return os.path.join(tmp_dir, "raw_data_%d" % self.dataset_version)

    def subtitle_files(self, raw_data):
        """Every .xml / .xml.gz file under raw_data, in sorted path order."""
        paths = []
        for root, dirs, files in os.walk(raw_data):
            dirs.sort()
            paths += [os.path.join(root, name) for name in sorted(files)
                      if name.endswith((".xml", ".xml.gz"))]
        return paths

    def sentences(self, path):
        """The cleaned, non-empty sentences of one subtitle file."""
        sentences, words = [], ""
        with _open_text(path) as handle:
            for line in handle:
                if _SENTENCE in line:
                    if words:
                        sentences.append(self.clean_line(words))
                    words = ""
                else:
                    index = line.find(_WORD)
                    if index >= 0:
                        line = line[index:]
                        word = line[line.find(">") + 1:line.find("</w")]
                        words += " " + word.replace("\t", " ")
        if words:
            sentences.append(self.clean_line(words))
        return sentences

    def dialogs(self, raw_data):
        for path in self.subtitle_files(raw_data):
            sentences = self.sentences(path)
            yield dialog_abstract.consecutive_pairs(sentences), sentences

    def clean_line(self, line):
        """OpenSubtitles' cleaning (T2T's): lower-case, keep a-z . ! ? ', split punctuation.

            clean_line(" I don't know .") -> " i do n't know  . "
        """
        line = line.lower()
        line = re.sub("[^a-z .!?'\t\\\\]", "", line)
        line = re.sub("\\\\['] ", " '", line)
        line = re.sub("[\\\\]", " ", line)
        line = re.sub("[.]", " . ", line)
        line = re.sub("[?]", " ? ", line)
        line = re.sub("[!]", " ! ", line)
        line = re.sub("[ ]'[ ]", " ", line)
        line = re.sub("n't", " n't", line)
        return line


def _release(year):
    class Release(DialogOpensubtitles64k2009):
        @property
        def dataset_version(self):
            return year

    Release.__name__ = Release.__qualname__ = "DialogOpensubtitles64k%d" % year
    Release.__doc__ = "OpenSubtitles%d's English subtitles as dialogs." % year
    return registry.register_problem(Release)


DialogOpensubtitles64k2011 = _release(2011)
DialogOpensubtitles64k2012 = _release(2012)
DialogOpensubtitles64k2013 = _release(2013)
DialogOpensubtitles64k2016 = _release(2016)
DialogOpensubtitles64k2018 = _release(2018)
