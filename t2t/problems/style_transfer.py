"""Shakespeare <-> modern English style transfer (Xu et al. 2012's parallel plays; T2T
1.15.7's `style_transfer`).

    t2t-datagen --problem=style_transfer_shakespeare_to_modern --data_dir=~/t2t_data \\
        --tmp_dir=/tmp/t2t_datagen

downloads `shakespeare.train.tgz` and `shakespeare.dev.tgz` (github.com/tlatkowski/st) into
--tmp_dir and extracts them there: `train.original`, `train.modern` (18,395 line pairs) and
`dev.original`, `dev.modern` (1,218), line i of one the translation of line i of the other.
`style_transfer_shakespeare_to_modern` reads `.original` -> `.modern`,
`style_transfer_modern_to_shakespeare` the reverse (and `_characters`: bytes). The subword
vocabulary, `vocab.<problem>.8000.subwords`, is sampled from both training files. An archive
already in --tmp_dir is not downloaded.

    class StyleTransferFoo(style_transfer.StyleTransferProblemShakespeare):
        source, target = ".modern", ".original"   # T2T's properties; class attributes work
"""
import os

from t2t.core import download
from t2t.core import registry
from t2t.data import generator_utils
from t2t.problems import problem  # noqa: F401  (T2T's module-level name)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import text2text as text_problems  # noqa: F401  (T2T's name for it)

# [[URL, (the files the archive holds)]] of each split (T2T's names and layout; the first
# pair serves as a `get_or_generate_vocab` source).
_SHAKESPEARE_MODERN_TRAIN_DATASET = [[
    "https://github.com/tlatkowski/st/raw/master/shakespeare.train.tgz",
    ("train.original", "train.modern")
]]
_SHAKESPEARE_MODERN_DEV_DATASET = [[
    "https://github.com/tlatkowski/st/raw/master/shakespeare.dev.tgz",
    ("dev.original", "dev.modern")
]]

_TRAIN_SHARDS = 1
_DEV_SHARDS = 1
_SUBWORD_VOCAB_SIZE = 8000


class StyleTransferProblemShakespeare(text2text.Text2TextProblem):
    """Base class for transferring styles problems: `source` and `target` are the file
    suffixes (".original", ".modern") read as inputs and targets."""

    @property
    def target(self):
        raise NotImplementedError("%s must define target" % type(self).__name__)

    @property
    def source(self):
        raise NotImplementedError("%s must define source" % type(self).__name__)

    def dataset_url(self, dataset_split):
        """[[URL, (files)]] of the training archive for TRAIN, else of the dev archive."""
        if dataset_split == spaces.DatasetSplit.TRAIN:
            return _SHAKESPEARE_MODERN_TRAIN_DATASET
        return _SHAKESPEARE_MODERN_DEV_DATASET

    def vocab_data_files(self):
        """Files to be passed to get_or_generate_vocab."""
        return self.dataset_url(spaces.DatasetSplit.TRAIN)

    @property
    def approx_vocab_size(self):
        return _SUBWORD_VOCAB_SIZE

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": _TRAIN_SHARDS},
                {"split": spaces.DatasetSplit.EVAL, "shards": _DEV_SHARDS}]

    @property
    def is_generate_per_split(self):
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """{"inputs": line of the source file, "targets": the target file's} of the split,
        its archive downloaded (unless in tmp_dir) and extracted once; the subword
        vocabulary is built first from the training archive's files."""
        url = self.dataset_url(dataset_split)[0][0]
        archive = download.maybe_download(tmp_dir, os.path.basename(url), url)
        download.maybe_extract(archive, tmp_dir)
        if self.vocab_type == text2text.VocabType.SUBWORD:
            generator_utils.get_or_generate_vocab(
                data_dir, tmp_dir, self.vocab_filename, self.approx_vocab_size,
                self.vocab_data_files())
        source_file, target_file = self.source_target_paths(dataset_split, tmp_dir)
        for path in (source_file, target_file):
            if not os.path.isfile(path):
                raise download.DownloadError("%s holds no %s; delete it to download it again"
                                             % (archive, os.path.basename(path)))
        return text2text.text2text_txt_iterator(source_file, target_file)

    def source_target_paths(self, dataset_split, tmp_dir):
        """tmp_dir/{train,dev}<source>, tmp_dir/{train,dev}<target>."""
        tag = "train" if dataset_split == spaces.DatasetSplit.TRAIN else "dev"
        return (os.path.join(tmp_dir, tag + self.source),
                os.path.join(tmp_dir, tag + self.target))


@registry.register_problem
class StyleTransferShakespeareToModern(StyleTransferProblemShakespeare):
    """Transferring style from Shakespeare original English to modern one."""

    @property
    def target(self):
        return ".modern"

    @property
    def source(self):
        return ".original"


@registry.register_problem
class StyleTransferModernToShakespeare(StyleTransferProblemShakespeare):
    """Transferring style from modern English to Shakespeare original English."""

    @property
    def target(self):
        return ".original"

    @property
    def source(self):
        return ".modern"


@registry.register_problem
class StyleTransferShakespeareToModernCharacters(StyleTransferShakespeareToModern):
    """StyleTransferShakespeareToModern on UTF-8 bytes."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER


@registry.register_problem
class StyleTransferModernToShakespeareCharacters(StyleTransferModernToShakespeare):
    """StyleTransferModernToShakespeare on UTF-8 bytes."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER
