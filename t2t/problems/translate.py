"""Translation problems: download parallel corpora, compile them, build the vocab, encode.

A translation problem lists its corpora as `[url, (file in archive, file in archive)]`:

    @registry.register_problem
    class TranslateXxYy(TranslateProblem):
        def source_data_files(self, dataset_split):
            return [["https://host/corpus.tgz", ("corpus/train.xx", "corpus/train.yy")]]

`generate_data` then downloads `corpus.tgz` into tmp_dir, extracts it (refusing members
that would land outside tmp_dir), and `compile_data` concatenates the sentence pairs of
every corpus of a split into `<tmp_dir>/<name>-compiled-train.lang1` / `.lang2`:

    lang1 file (source)          lang2 file (target)
    "Resumption of the session"  "Wiederaufnahme der Sitzungsperiode"

Those two files feed the usual Text2TextProblem pipeline (subword vocab, EOS, shards).

Besides plain line-aligned files, a corpus may be given as
  * `.sgm` files (WMT test sets): only the text of `<seg id="1">text</seg>` lines is kept;
  * `.gz` files inside the archive: gunzipped first;
  * `("tsv", source_column, target_column, glob_pattern)`: tab-separated files;
  * `("tmx", "file.tmx[.gz]")`: a TMX translation memory (the English side is the source).
"""
import contextlib
import gzip
import os
import tarfile
import xml.etree.ElementTree as ElementTree
import zipfile

from absl import logging
import tensorflow as tf

from t2t.core import atomic_files, errors
from t2t.core import download
from t2t.core.progress import Progress
from t2t.data import generator_utils
from t2t.encoders import text_encoder, text_lines
from t2t.evaluation import bleu_hook
from t2t.problems import cleaner_en_xx
from t2t.problems import spaces
from t2t.problems import text2text

try:  # POSIX only; without it concurrent datagen processes simply do not coordinate.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None


# The kinds of corpora `datatypes_to_clean` may name.
DATATYPES = ("txt", "tsv", "tmx")


class TranslateProblem(text2text.Text2TextProblem):
    """Base class for translation problems: subclasses give `source_data_files`."""

    @property
    def is_generate_per_split(self):
        return True

    @property
    def approx_vocab_size(self):
        return 2**15

    # Set by t2t-datagen --datatypes_to_clean: replaces `datatypes_to_clean` for this
    # instance (the compiled training files then get a "-clean-<kinds>" suffix).
    datatypes_to_clean_override = None

    @property
    def datatypes_to_clean(self):
        """Kinds of corpora ("txt", "tsv", "tmx") to filter with cleaner_en_xx; None: none."""
        return None

    def source_data_files(self, dataset_split):
        """The corpora of a split: a list of [url, (lang1 file, lang2 file)] (see module doc)."""
        raise NotImplementedError(
            "%s must override source_data_files(dataset_split)" % type(self).__name__)

    def vocab_data_files(self):
        """The corpora the subword vocab is sampled from (default: the training corpora)."""
        return self.source_data_files(spaces.DatasetSplit.TRAIN)

    def generate_samples(self, data_dir, tmp_dir, dataset_split,
                         custom_iterator=text2text.text2text_txt_iterator):
        """{"inputs": source sentence, "targets": target sentence} from the compiled files."""
        del data_dir
        datasets = self.source_data_files(dataset_split)
        tag = "dev"
        datatypes_to_clean = None
        if dataset_split == spaces.DatasetSplit.TRAIN:
            tag = "train"
            datatypes_to_clean = self.datatypes_to_clean
            if self.datatypes_to_clean_override is not None:
                datatypes_to_clean = list(self.datatypes_to_clean_override)
                if datatypes_to_clean:
                    tag += "-clean-" + "-".join(sorted(datatypes_to_clean))
        data_path = compile_data(tmp_dir, datasets, "%s-compiled-%s" % (self.name, tag),
                                 datatypes_to_clean=datatypes_to_clean)
        return custom_iterator(data_path + ".lang1", data_path + ".lang2")

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        """Lines sampled (T2T's byte budget per file) from the files of `vocab_data_files`."""
        del data_dir
        sources = self.vocab_data_files()
        # Fetch under the per-archive lock first: problems sharing tmp_dir may run in
        # parallel, and generate_lines_for_vocab then finds everything in place.
        for dataset in sources:
            _fetch_dataset(tmp_dir, dataset)
        return generator_utils.generate_lines_for_vocab(tmp_dir, sources)

    @property
    def decode_hooks(self):
        return [compute_bleu_summaries]


def compute_bleu_summaries(hook_args):
    """The BLEU of a decode written to a file against its reference, as summary values.

    Args:
      hook_args: a decoding.DecodeHookArgs; uses `decode_hparams.decode_reference` and
        `decode_hparams.decode_to_file`.

    Returns:
      [tf.compat.v1.Summary.Value(tag="BLEU", simple_value=...)] (BLEU in 0..100), or None
      when there is no reference or no output file.
    """
    decode_hparams = hook_args.decode_hparams
    reference = getattr(decode_hparams, "decode_reference", None)
    translation = getattr(decode_hparams, "decode_to_file", None)
    if not (reference and translation):
        return None
    bleu = 100 * bleu_hook.bleu_wrapper(reference, translation)
    logging.info("%s: BLEU = %6.2f", translation, bleu)
    return [tf.compat.v1.Summary.Value(tag="BLEU", simple_value=bleu)]


# ----------------------------------------------------------------------------
# Reading corpora
# ----------------------------------------------------------------------------
def _preprocess_sgm(line, is_sgm):
    """The sentence of an SGM `<seg>` line; "" for any other SGM line.

        _preprocess_sgm('<seg id="3">Guten Tag.</seg>', True)  -> "Guten Tag."
        _preprocess_sgm('<doc docid="a" sysid="ref">', True)   -> ""
        _preprocess_sgm('plain text', False)                   -> "plain text"
    """
    if not is_sgm:
        return line
    line = line.strip()
    # T2T returned None for lines it did not recognise (e.g. <refset>); "" is the same
    # "no sentence here" without the surprise type.
    if line.startswith("<seg") and line.endswith("</seg>"):
        return line[line.index(">") + 1:-len("</seg>")].strip()
    return ""


def _read_lines(path):
    """Stripped lines; they end at "\\n", "\\r\\n" or "\\r" (a corpus released with "\\r"
    line ends is its sentences, not one line). The two files of a corpus are counted
    first (`_parallel_lines`), so a stray "\\r" that splits a line is reported, not paired."""
    for line in text_lines.read_lines(path):
        yield line.strip()


class MisalignedFilesError(ValueError):
    """One file of a parallel corpus has more lines than the other.

    `longer` and `shorter` are the two paths, `count` the lines they have in common.
    """

    def __init__(self, longer, shorter, count):
        super().__init__("%s has more lines than %s (%d); the two files of a parallel corpus "
                         "must have one sentence per line each" % (longer, shorter, count))
        self.longer, self.shorter, self.count = longer, shorter, count


def aligned_pairs(lines1, lines2, path1, path2):
    """(line i of lines1, line i of lines2); MisalignedFilesError if one runs out first.

    >>> list(aligned_pairs(iter(["a", "b"]), iter(["x", "y"]), "f.en", "f.de"))
    [('a', 'x'), ('b', 'y')]
    """
    count = 0
    while True:
        line1, line2 = next(lines1, None), next(lines2, None)
        if line1 is None and line2 is None:
            return
        if line1 is None or line2 is None:
            longer, shorter = (path2, path1) if line1 is None else (path1, path2)
            raise MisalignedFilesError(longer, shorter, count)
        count += 1
        yield line1, line2


def _parallel_lines(path1, path2):
    """(line i of path1, line i of path2); a UserError naming both counts if they differ."""
    count1, count2 = text_lines.count_lines(path1), text_lines.count_lines(path2)
    if count1 != count2:
        raise errors.UserError(
            "compile_data: %s has %d lines but %s has %d; the two files of a parallel corpus "
            "must have one sentence per line each" % (path1, count1, path2, count2))
    try:
        yield from aligned_pairs(_read_lines(path1), _read_lines(path2), path1, path2)
    except MisalignedFilesError as error:
        raise ValueError("compile_data: %s" % error) from None


def _tsv_pairs(path, source_column, target_column):
    """(source, target) from the given columns of each line that has a tab."""
    for line in _read_lines(path):
        if "\t" not in line:
            continue
        parts = line.split("\t")
        if max(source_column, target_column) < len(parts):
            yield parts[source_column].strip(), parts[target_column].strip()


def _tmx_pairs(handle, source_lang="en"):
    """(source, target) of each two-language `<tu>` of a TMX file; `source_lang` first.

        <tu><tuv xml:lang="en"><seg>Hello</seg></tuv><tuv xml:lang="de"><seg>Hallo</seg></tuv></tu>
        -> ("Hello", "Hallo")
    """
    lang_attribute = "{http://www.w3.org/XML/1998/namespace}lang"
    for _, element in ElementTree.iterparse(handle, events=("end",)):
        if element.tag != "tu":
            continue
        segments = {}
        for tuv in element.iter("tuv"):
            lang = (tuv.get(lang_attribute) or tuv.get("lang") or "").lower().split("-")[0]
            seg = tuv.find("seg")
            if seg is not None:
                segments[lang] = "".join(seg.itertext()).strip()
        element.clear()  # keep memory flat on multi-GB files
        if len(segments) == 2 and source_lang in segments:
            (target,) = [text for lang, text in segments.items() if lang != source_lang]
            yield segments[source_lang], target


def _cleaner(kind, datatypes_to_clean):
    """cleaner_en_xx.clean_en_xx_pairs if `kind` is to be cleaned, else None."""
    if kind not in (datatypes_to_clean or []):
        return None
    return cleaner_en_xx.clean_en_xx_pairs


# ----------------------------------------------------------------------------
# Fetching: download, extract, gunzip (once, even with several processes)
# ----------------------------------------------------------------------------
@contextlib.contextmanager
def _archive_lock(tmp_dir, filename):
    """Hold an exclusive lock on `<tmp_dir>/.<filename>.lock` (a no-op without fcntl).

    Problems that share a corpus (translate_ende_wmt8k and _wmt32k) may be generated by
    parallel processes into one tmp_dir; only one of them downloads and extracts it.
    """
    if fcntl is None:
        yield
        return
    os.makedirs(tmp_dir, exist_ok=True)
    with open(os.path.join(tmp_dir, ".%s.lock" % filename), "a") as lock_file:
        fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)


def _is_archive(path):
    return tarfile.is_tarfile(path) or zipfile.is_zipfile(path)


def _without_gz(path):
    # T2T used path.strip(".gz"), which also eats trailing "g", "z" and "." characters
    # ("news.zg.gz" -> "news"); only the suffix goes.
    return path[:-len(".gz")] if path.endswith(".gz") else path


def _fetch_dataset(tmp_dir, dataset):
    """Download and extract one corpus; returns the local paths of its files.

    For `[url, (file1, file2)]` the paths of file1 and file2 (gunzipped if `.gz`); for a
    tsv corpus the files matching its glob; for a tmx corpus [the tmx file].
    """
    url, files = dataset[0], dataset[1]
    filename = os.path.basename(url)
    with _archive_lock(tmp_dir, filename or "local-corpus"):
        # No URL (user problems list ["", (file1, file2)]): the files are in tmp_dir, as
        # T2T read them.
        archive = download.maybe_download(tmp_dir, filename, url) if url else None
        if archive and _is_archive(archive):
            download.maybe_extract(archive, tmp_dir)
        if files[0] == "tsv":
            pattern = os.path.join(tmp_dir, files[3])
            paths = sorted(tf.io.gfile.glob(pattern))
            if not paths:
                raise ValueError("compile_data: no file in %s matches %s (from %s); check the "
                                 "glob pattern of this corpus" % (tmp_dir, files[3], url))
            local = []
            for path in paths:
                if path.endswith(".gz"):
                    download.gunzip_file(path, _without_gz(path))
                    path = _without_gz(path)
                local.append(path)
            return sorted(set(local))
        names = [files[1]] if files[0] == "tmx" else list(files)
        local = []
        for name in names:
            path = os.path.join(tmp_dir, name)
            if not os.path.exists(path):
                raise ValueError("compile_data: %s is not in %s (from %s); check the file "
                                 "names listed for this corpus" % (
                                     name, filename or tmp_dir, url or "no URL: put it there"))
            if path.endswith(".gz") and files[0] != "tmx":
                download.gunzip_file(path, _without_gz(path))
                path = _without_gz(path)
            local.append(path)
        return local


def _dataset_pairs(tmp_dir, dataset, datatypes_to_clean):
    """The (source, target) sentence pairs of one corpus, empty sides dropped."""
    kind = dataset[1][0] if dataset[1][0] in ("tsv", "tmx") else "txt"
    paths = _fetch_dataset(tmp_dir, dataset)
    if kind == "tsv":
        _, source_column, target_column, _ = dataset[1]
        pairs = (pair for path in paths for pair in _tsv_pairs(path, source_column,
                                                                target_column))
    elif kind == "tmx":
        pairs = _tmx_file_pairs(paths[0])
    else:
        is_sgm = paths[0].endswith("sgm") and paths[1].endswith("sgm")
        pairs = ((_preprocess_sgm(line1, is_sgm), _preprocess_sgm(line2, is_sgm))
                 for line1, line2 in _parallel_lines(paths[0], paths[1]))
    clean = _cleaner(kind, datatypes_to_clean)
    if clean is not None:
        pairs = clean(pairs)
    for source, target in pairs:
        if source and target:
            yield source, target


def _tmx_file_pairs(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as handle:
        yield from _tmx_pairs(handle)


def compile_data(tmp_dir, datasets, filename, datatypes_to_clean=None):
    """Concatenate the sentence pairs of `datasets` into `<tmp_dir>/<filename>.lang1/.lang2`.

    Each corpus is downloaded into tmp_dir and extracted once. Both files are written under
    temporary names and renamed when complete, so an interrupted run leaves nothing that
    a rerun would mistake for finished work; if both exist, nothing is done.

        compile_data("/tmp/t2t", [["http://h/c.tgz", ("c/a.en", "c/a.de")]], "x-compiled-train")
        # -> "/tmp/t2t/x-compiled-train"; x-compiled-train.lang1 holds the English lines

    Returns:
      The path prefix `<tmp_dir>/<filename>` (append ".lang1" / ".lang2").
    """
    unknown = sorted(set(datatypes_to_clean or []) - set(DATATYPES))
    if unknown:
        raise ValueError("datatypes_to_clean: unknown kind(s) %s; use %s" % (
            ", ".join(unknown), ", ".join(DATATYPES)))
    filename = os.path.join(tmp_dir, filename)
    lang1_path, lang2_path = filename + ".lang1", filename + ".lang2"
    if os.path.exists(lang1_path) and os.path.exists(lang2_path):
        logging.info("Skipping compile data, found files:\n%s\n%s", lang1_path, lang2_path)
        return filename
    progress = Progress("compile_data %s" % os.path.basename(filename), unit="pairs")
    with atomic_files.atomic_write(lang1_path, "w") as lang1_file, \
            atomic_files.atomic_write(lang2_path, "w") as lang2_file:
        for dataset in datasets:
            before = progress.count
            for source, target in _dataset_pairs(tmp_dir, dataset, datatypes_to_clean):
                lang1_file.write(source + "\n")
                lang2_file.write(target + "\n")
                progress.update(1)
            logging.info("compile_data: %d sentence pairs from %s", progress.count - before,
                         dataset[0])
    progress.done(corpora=len(datasets))
    return filename


class BlockBacktranslation:
    """Mixin for a TranslateProblem: back-translated pairs from tmp_dir, then the real ones.

    Training data is written as one unshuffled shard of blocks: for each file pair of
    `backtranslate_data_filenames` (placed in tmp_dir by the user, each about as large as
    the authentic data), its synthetic pairs, then the problem's own pairs again. Dev data
    is the authentic data only. T2T wrote this twice (translate_enfr's back-translation
    problems and translate_encs_cubbitt):

        class TranslateEnfrWmt32kWithBacktranslateFr(translate.BlockBacktranslation,
                                                     TranslateEnfrWmt32k):
            backtranslate_data_filenames = [("fr_mono_en.txt", "fr_mono_fr.txt")]
    """

    @property
    def already_shuffled(self):
        return True

    @property
    def skip_random_fraction_when_training(self):
        return False

    @property
    def backtranslate_data_filenames(self):
        """(source file, target file) pairs in tmp_dir holding back-translated data."""
        raise NotImplementedError(
            "%s must list its back-translated (source, target) files in tmp_dir as "
            "backtranslate_data_filenames" % type(self).__name__)

    @property
    def dataset_splits(self):
        # One shard, so that the synthetic and authentic blocks stay in their order.
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 1},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    def generate_samples(self, data_dir, tmp_dir, dataset_split, **kwargs):
        authentic = super().generate_samples
        if dataset_split != spaces.DatasetSplit.TRAIN:
            return authentic(data_dir, tmp_dir, dataset_split, **kwargs)
        return self._blocks(lambda: authentic(data_dir, tmp_dir, dataset_split, **kwargs),
                            tmp_dir)

    def _blocks(self, make_authentic, tmp_dir):
        for source_file, target_file in self.backtranslate_data_filenames:
            yield from text2text.text2text_txt_iterator(os.path.join(tmp_dir, source_file),
                                                        os.path.join(tmp_dir, target_file))
            yield from make_authentic()


class TranslateDistillProblem(TranslateProblem):
    """Distillation: train on a teacher's translations ("dist_targets") instead of the gold.

    `source_data_files(split)` returns a path prefix; the files `<prefix>inputs`,
    `<prefix>gold` and `<prefix>prediction` hold one sentence per line. The vocab file
    must already be in data_dir (the teacher's).
    """

    @property
    def is_generate_per_split(self):
        # A property: T2T made this one a method, which is always truthy by accident.
        return True

    def example_reading_spec(self):
        data_fields = {"dist_targets": tf.io.VarLenFeature(tf.int64)}
        decoders = {"targets": lambda features: features["dist_targets"]}
        if self.has_inputs:
            data_fields["inputs"] = tf.io.VarLenFeature(tf.int64)
            decoders["inputs"] = lambda features: features["inputs"]
        return data_fields, decoders

    def get_or_create_vocab(self, data_dir, tmp_dir, force_get=False):
        del tmp_dir, force_get
        vocab_path = os.path.join(data_dir, self.vocab_filename)
        if not os.path.exists(vocab_path):
            raise ValueError("problem %s reads the teacher's vocabulary %s, which is missing; "
                             "copy it into the data dir" % (self.name, vocab_path))
        return text_encoder.SubwordTextEncoder(vocab_path)

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        vocab = self.get_or_create_vocab(data_dir, tmp_dir)
        for sample in self.generate_samples(data_dir, tmp_dir, dataset_split):
            encoded = {}
            for key in ("inputs", "targets", "dist_targets"):
                if key == "inputs" and not self.has_inputs:
                    continue
                encoded[key] = vocab.encode(sample[key]) + [text_encoder.EOS_ID]
            yield encoded

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        del data_dir, tmp_dir
        data_path = self.source_data_files(dataset_split)
        for suffix in ("inputs", "gold", "prediction"):
            if not os.path.exists(data_path + suffix):
                raise ValueError("problem %s: %s is missing; give the teacher's files "
                                 "<prefix>inputs, <prefix>gold, <prefix>prediction" %
                                 (self.name, data_path + suffix))
        return text2text.text2text_distill_iterator(
            data_path + "inputs", data_path + "gold", data_path + "prediction")
