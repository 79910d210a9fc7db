"""Language models on untokenized Wikipedia text (T2T's wiki_lm), one or four languages.

Each language's train/eval/test text is a gzipped file on Google Drive (T2T's file ids).
Lines are joined into examples of up to `combine_characters_threshold` characters
(4,096: about 512 subwords); examples of 10 characters or fewer are dropped:

    t2t-datagen --problem=languagemodel_en_wiki32k --data_dir=~/t2t_data
    # writes vocab.languagemodel_en_wiki32k.32000.subwords and 100 train shards of
    # {"targets": ids of "Anarchism is a political philosophy ... " + [1]}

`languagemodel_de_en_fr_ro_wiki64k` mixes the four languages (one example of each in
turn) and its 64k vocabulary, built from 256,000 samples, is the shared multilingual
vocabulary of `translate_ende_wmt_multi64k`. `languagemodel_de_en_fr_ro_wiki64k_fitb_packed1k`
turns its examples into fill-in-the-blanks pairs (inputs: some runs of words, targets: the
others), packed into 1024-long rows.
"""
import os

from t2t.core import download as download_lib
from t2t.core import registry
from t2t.data import generator_utils
from t2t.encoders import text_lines
from t2t.problems import spaces
from t2t.problems import text2text

# Google Drive download URL; a file id is appended (tests point it at a local server).
DRIVE_URL = "https://drive.google.com/uc?export=download&id="

# (file name, Google Drive id) of the train / eval / test text of each language (T2T's).
_EN = (("enwiki_train.txt.gz", "1-l02fI15ieMIZk8EnXhzhsvuEYRoznZ8"),
       ("enwiki_eval.txt.gz", "1odhDxWKtAPKXwxRw1KCrmlrVewxdXYq7"),
       ("enwiki_test.txt.gz", "1i1Bg6XqvdRl1LuOiIWbg7ww8Y02Ip5VK"))
_DE = (("dewiki_train.txt.gz", "1FzEwoPonw9xlwX34vLPFInUF8F4X5yJy"),
       ("dewiki_eval.txt.gz", "1EKwRRPHyWny0RJ-aqSGMcNfjAlzFl51B"),
       ("dewiki_test.txt.gz", "1Kr13Y7y_OD3JtUM9riXpFQP9UiHDkcFY"))
_FR = (("frwiki_train.txt.gz", "1etUIEZxMQKORwLGkssE5wlfCxxkeo8WV"),
       ("frwiki_eval.txt.gz", "13qrR5ZnHRgIMdcURVpixKL9gTO23GcPc"),
       ("frwiki_test.txt.gz", "1mQpHRkAV9KXt68de69RwR8dkDi8EEusV"))
_RO = (("rowiki_train.txt.gz", "1wUJTEAlQeDcAwFnBxa8PzE-DCiXSU_W7"),
       ("rowiki_eval.txt.gz", "1uIPy2ZgkyArPy_gnsILENjgv4QQmSKtx"),
       ("rowiki_test.txt.gz", "1kphjN4jXTbw8HyRYKaRE2zY4D7Fr-p7-"))
_SPLIT_INDEX = {spaces.DatasetSplit.TRAIN: 0, spaces.DatasetSplit.EVAL: 1,
                spaces.DatasetSplit.TEST: 2}


def concat_generator(filename, up_threshold, low_threshold=10):
    """{"targets": text} of consecutive lines joined by spaces, each under `up_threshold`.

    A chunk is yielded when the next line would bring it to `up_threshold` characters;
    chunks of `low_threshold` characters or fewer are dropped (noise), and so is the text
    left after the last full chunk (as T2T).

        # lines "aaaa", "bbbb", "cccc" with up_threshold=12, low_threshold=3
        # -> {"targets": "aaaa bbbb"}; "cccc" is left over
    """
    text = ""
    for line in text_lines.read_lines(filename):
        line = line.strip()
        if len(text) + len(line) + 1 >= up_threshold:
            chunk, text = text, ""
            if low_threshold < len(chunk) < up_threshold:
                yield {"targets": chunk}
        text = line if not text else text + " " + line


def mix_generators(generator_list):
    """One item of each generator in turn, skipping exhausted ones, until all are done.

        list(mix_generators([iter("ab"), iter("xyz")]))   # ["a", "x", "b", "y", "z"]
    """
    active = list(generator_list)
    while active:
        still = []
        for generator in active:
            try:
                yield next(generator)
            except StopIteration:
                continue
            still.append(generator)
        active = still


@registry.register_problem
class LanguagemodelEnWiki32k(text2text.Text2SelfProblem):
    """A language model on untokenized English Wikipedia; vocab of ~32k subwords."""

    files = (_EN,)

    @property
    def approx_vocab_size(self):
        return 32000

    @property
    def max_samples_for_vocab(self):
        return 128000

    @property
    def combine_characters_threshold(self):
        """Examples join lines up to this many characters (~512 subwords)."""
        return 512 * 8

    @property
    def is_generate_per_split(self):
        return True

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 100},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1},
                {"split": spaces.DatasetSplit.TEST, "shards": 1}]

    def _text_file(self, tmp_dir, name, file_id):
        path = os.path.join(tmp_dir, name[:-len(".gz")])
        if not os.path.exists(path):
            download = download_lib.maybe_download_from_drive(tmp_dir, name,
                                                                 DRIVE_URL + file_id)
            download_lib.gunzip_file(download, path)
        return path

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        index = _SPLIT_INDEX.get(dataset_split, 1)
        generators = [concat_generator(self._text_file(tmp_dir, *language[index]),
                                       self.combine_characters_threshold)
                      for language in self.files]
        return mix_generators(generators)


@registry.register_problem
class LanguagemodelEnWiki64k(LanguagemodelEnWiki32k):
    """English Wikipedia; vocab of ~64k subwords."""

    @property
    def approx_vocab_size(self):
        return 64000


@registry.register_problem
class LanguagemodelEnWiki64kShorter(LanguagemodelEnWiki64k):
    """English Wikipedia in examples of up to 3,072 characters; languagemodel_en_wiki64k's
    vocab."""

    @property
    def combine_characters_threshold(self):
        return 384 * 8

    @property
    def use_vocab_from_other_problem(self):
        return LanguagemodelEnWiki64k()


@registry.register_problem
class LanguagemodelDeWiki32k(LanguagemodelEnWiki32k):
    """German Wikipedia; vocab of ~32k subwords."""

    files = (_DE,)


@registry.register_problem
class LanguagemodelDeWiki64k(LanguagemodelDeWiki32k):
    """German Wikipedia; vocab of ~64k subwords."""

    @property
    def approx_vocab_size(self):
        return 64000


@registry.register_problem
class LanguagemodelFrWiki32k(LanguagemodelEnWiki32k):
    """French Wikipedia; vocab of ~32k subwords."""

    files = (_FR,)


@registry.register_problem
class LanguagemodelFrWiki64k(LanguagemodelFrWiki32k):
    """French Wikipedia; vocab of ~64k subwords."""

    @property
    def approx_vocab_size(self):
        return 64000


@registry.register_problem
class LanguagemodelRoWiki32k(LanguagemodelEnWiki32k):
    """Romanian Wikipedia; vocab of ~32k subwords."""

    files = (_RO,)


@registry.register_problem
class LanguagemodelRoWiki64k(LanguagemodelRoWiki32k):
    """Romanian Wikipedia; vocab of ~64k subwords."""

    @property
    def approx_vocab_size(self):
        return 64000


@registry.register_problem
class LanguagemodelDeEnFrRoWiki64k(LanguagemodelEnWiki32k):
    """German, French, English and Romanian Wikipedia mixed; a shared ~64k vocabulary."""

    files = (_DE, _FR, _EN, _RO)

    @property
    def approx_vocab_size(self):
        return 64000

    @property
    def max_samples_for_vocab(self):
        return 256000  # Samples alternate between 4 languages: take more to cover each.


@registry.register_problem
class LanguagemodelDeEnFrRoWiki64kFitbPacked1k(LanguagemodelDeEnFrRoWiki64k):
    """Fill in the blanks on the four languages' Wikipedia text, packed into 1024-long rows.

    Each `languagemodel_de_en_fr_ro_wiki64k` example is split by
    `generator_utils.random_deinterleave` into the words kept in "inputs" and those left
    for "targets", both behind the prefix "wiki fill " and encoded with that problem's
    vocabulary:

        # "Paris est la capitale de la France." might become
        # {"inputs": "wiki fill X est la X France.", "targets": "wiki fill Paris X capitale de la X"}
    """

    @property
    def use_vocab_from_other_problem(self):
        return LanguagemodelDeEnFrRoWiki64k()

    @property
    def has_inputs(self):
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for example in super().generate_samples(data_dir, tmp_dir, dataset_split):
            inputs, targets = generator_utils.random_deinterleave(example["targets"])
            yield {"inputs": inputs, "targets": targets}

    @property
    def num_training_examples(self):
        return 3597800

    @property
    def packed_length(self):
        return 1024

    @property
    def inputs_prefix(self):
        return "wiki fill "

    @property
    def targets_prefix(self):
        return "wiki fill "


class Multi64kPacked1kMixin:
    """T2T's `*_text2text_multi64k_packed1k` problems: `languagemodel_de_en_fr_ro_wiki64k`'s
    vocabulary and examples packed into 1024-long rows (`num_training_examples`: theirs)."""

    @property
    def packed_length(self):
        return 1024

    @property
    def use_vocab_from_other_problem(self):
        return LanguagemodelDeEnFrRoWiki64k()
