"""Multi30k task 1: English -> German image descriptions (29,000 training pairs).

    t2t-datagen --problem=translate_ende_multi30k --data_dir=~/t2t_data --tmp_dir=/tmp/multi30k

downloads the six raw files of Multi30k (Elliott et al. 2016) from the dataset's public
repository, pinned to one commit and checked against their sha256 (a file already in
--tmp_dir is used where it is, after the same check; a broken download resumes), then writes

    vocab.translate_ende_multi30k.8192.subwords      shared en+de subwords, from train only
    translate_ende_multi30k-train-0000{0..9}-of-00010   29,000 pairs
    translate_ende_multi30k-dev-00000-of-00001          val, 1,014 pairs
    translate_ende_multi30k-test-00000-of-00001         test_2016_flickr, 1,000 pairs
    translate_ende_multi30k.test_2016_flickr.en / .de   the test set as text, for
                                                        t2t-decoder --decode_from_file and t2t-bleu

`translate_ende_multi30k_rev` (German -> English) reads the same files.

Real text: every sentence is put in Unicode NFC and stripped of the spaces around it, and
nothing else. NFC because it only composes what is canonically equal ("u" + U+0308 -> "ü",
one character and one subword whatever keyboard typed it) and never changes what the text
says; NFKC would also fold compatibility characters, e.g. the no-break space of
"Nummer\\xa028" in the German training text into a plain space and "²" into "2". The raw files
are already NFC, so every training sentence is byte for byte the line of the file (minus 40
trailing spaces). The subword encoder's tokenizer is invertible (`decode(encode(s)) == s` for
every string, characters outside its alphabet are escaped, never dropped), so decodes are
detokenized text: the output of t2t-decoder is scored as it is, with sacrebleu's own
tokenization. The encoders this problem hands to the decoder normalize their input the same
way, so a decomposed "Mädchen" typed at --decode_interactive gets the ids of the trained one.
"""
import gzip
import hashlib
import os
import unicodedata

from absl import logging

from t2t.core import atomic_files
from t2t.core import download
from t2t.core import errors
from t2t.core import registry
from t2t.encoders import escaping
from t2t.encoders import text_encoder
from t2t.problems import spaces
from t2t.problems import translate

# The repository multi30k/dataset at the commit that added data/task1/raw (the files have
# not changed since); pinning the commit keeps the checksums below valid.
MULTI30K_COMMIT = "c9be912dc05a3ebf9ae5bb5f7f58c1791cda43ab"
MULTI30K_BASE_URL = ("https://raw.githubusercontent.com/multi30k/dataset/%s/data/task1/raw/"
                     % MULTI30K_COMMIT)
MULTI30K_SHA256 = {
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
}
# The file prefix of each split: dev is Multi30k's val, test its 2016 Flickr test set.
SPLIT_PREFIXES = {
    spaces.DatasetSplit.TRAIN: "train",
    spaces.DatasetSplit.EVAL: "val",
    spaces.DatasetSplit.TEST: "test_2016_flickr",
}
TEST_SET = "test_2016_flickr"
NORMALIZATION = "NFC"


def normalize_sentence(text):
    """NFC, without the spaces around it: the form every sentence is stored and encoded in.

        normalize_sentence("Ein Ma\\u0308dchen ")  -> "Ein M\\u00e4dchen"
        normalize_sentence("Nummer\\xa028.")       -> "Nummer\\xa028." (kept: NFC, not NFKC)
    """
    return unicodedata.normalize(NORMALIZATION, text).strip()


class NormalizingSubwordTextEncoder(text_encoder.SubwordTextEncoder):
    """A SubwordTextEncoder that puts text in NFC before encoding it (decoding is unchanged).

        encoder.encode("Ma\\u0308dchen") == encoder.encode("M\\u00e4dchen")
    """

    def encode(self, s):
        return super().encode(normalize_sentence(escaping.native_to_unicode(s)))


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_sentences(path):
    """The normalized sentences of a gzipped (or plain) UTF-8 file, one a line.

    Only "\\n" ends a line, so a stray "\\r" cannot shift one side of a parallel corpus.
    """
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="\n") as handle:
        for line in handle:
            yield normalize_sentence(line.rstrip("\n"))


def parallel_sentences(source_path, target_path):
    """(source, target) pairs of two line-aligned files; UserError if their lengths differ."""
    try:
        yield from translate.aligned_pairs(read_sentences(source_path),
                                           read_sentences(target_path), source_path,
                                           target_path)
    except translate.MisalignedFilesError as error:
        raise errors.UserError(
            "multi30k: %s has more lines than %s (%d); the two sides must have one "
            "sentence a line each, remove both to download them again"
            % (error.longer, error.shorter, error.count)) from None


@registry.register_problem
class TranslateEndeMulti30k(translate.TranslateProblem):
    """Multi30k task 1, English -> German; a shared ~8k subword vocabulary."""

    # Where the files come from (a test points it at a local server), and how often and
    # how patiently a dropped download is retried before datagen stops (a rerun resumes).
    base_url = MULTI30K_BASE_URL
    download_retries = download.DEFAULT_RETRIES
    download_backoff_seconds = download.DEFAULT_BACKOFF_SECONDS
    source_language = "en"
    target_language = "de"

    @property
    def approx_vocab_size(self):
        return 2**13  # 8192

    @property
    def source_checksums(self):
        """{file name: sha256} of the six files; a file that does not match is refused."""
        return MULTI30K_SHA256

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1},
                {"split": spaces.DatasetSplit.TEST, "shards": 1}]

    def source_data_files(self, dataset_split):
        """[[url of the source side], [url of the target side]] of a split (for listings)."""
        prefix = SPLIT_PREFIXES[dataset_split]
        return [[self.base_url + "%s.%s.gz" % (prefix, lang)]
                for lang in (self.source_language, self.target_language)]

    # -------------------------------------------------------------- files
    def fetch_file(self, tmp_dir, filename):
        """The local path of one checked source file: from tmp_dir, else downloaded there.

        A file already in tmp_dir is used in place (tmp_dir may be read-only) and refused if
        its sha256 differs; a download whose sha256 differs is deleted and refused.
        """
        expected = self.source_checksums[filename]
        path = os.path.join(tmp_dir, filename)
        if os.path.isfile(path):
            actual = file_sha256(path)
            if actual != expected:
                raise download.DownloadError(
                    "multi30k: %s has sha256 %s, not the pinned %s; delete it to download "
                    "it again" % (path, actual[:16], expected[:16]))
            return path
        with translate._archive_lock(tmp_dir, filename):  # pylint: disable=protected-access
            if os.path.isfile(path):
                return self.fetch_file(tmp_dir, filename)
            download.maybe_download(tmp_dir, filename, self.base_url + filename,
                                    retries=self.download_retries,
                                    backoff_seconds=self.download_backoff_seconds)
            actual = file_sha256(path)
            if actual != expected:
                atomic_files.remove_path(path)
                raise download.DownloadError(
                    "multi30k: %s from %s has sha256 %s, not the pinned %s; it was removed, "
                    "rerun to download it again" % (filename, self.base_url, actual[:16],
                                                    expected[:16]))
        return path

    def split_files(self, tmp_dir, dataset_split):
        """(source path, target path) of a split, fetched and checked."""
        if not tmp_dir:
            raise errors.UserError("problem %s needs a tmp_dir to find or download Multi30k; "
                                   "pass --tmp_dir" % self.name)
        prefix = SPLIT_PREFIXES[dataset_split]
        return tuple(self.fetch_file(tmp_dir, "%s.%s.gz" % (prefix, lang))
                     for lang in (self.source_language, self.target_language))

    # -------------------------------------------------------------- samples
    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        for source, target in parallel_sentences(*self.split_files(tmp_dir, dataset_split)):
            if source and target:
                yield {"inputs": source, "targets": target}

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        """Every training sentence of both languages (val and test stay unseen)."""
        for sample in self.generate_samples(data_dir, tmp_dir, spaces.DatasetSplit.TRAIN):
            yield sample["inputs"]
            yield sample["targets"]

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        super().generate_data(data_dir, tmp_dir, task_id)
        self.write_test_text(data_dir, tmp_dir)

    def test_text_path(self, data_dir, lang):
        """`<data_dir>/translate_ende_multi30k.test_2016_flickr.<lang>` (normalized text)."""
        return os.path.join(data_dir, "%s.%s.%s" % (self.dataset_filename(), TEST_SET, lang))

    def write_test_text(self, data_dir, tmp_dir):
        """The test set as normalized text, one sentence a line, for decoding and scoring."""
        paths = self.split_files(tmp_dir, spaces.DatasetSplit.TEST)
        for lang, path in zip((self.source_language, self.target_language), paths):
            out = self.test_text_path(data_dir, lang)
            with atomic_files.atomic_write(out, "w") as handle:
                for sentence in read_sentences(path):
                    handle.write(sentence + "\n")
            logging.info("multi30k: wrote %s", out)

    # -------------------------------------------------------------- encoders
    def get_or_create_vocab(self, data_dir, tmp_dir, force_get=False):
        encoder = super().get_or_create_vocab(data_dir, tmp_dir, force_get)
        if type(encoder) is not text_encoder.SubwordTextEncoder:  # pylint: disable=unidiomatic-typecheck
            return encoder
        # The same vocabulary (its state moved over, nothing rebuilt or read again).
        normalizing = NormalizingSubwordTextEncoder()
        normalizing.__dict__.update(encoder.__dict__)
        return normalizing

