"""WMT English -> French translation (T2T 1.15.7's `translate_enfr`).

    t2t-datagen --problem=translate_enfr_wmt_small8k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t

The "small" problems use OpenNMT's 1M-pair baseline (`baseline-1M-enfr.tgz`, its own
train and valid files); the others the WMT corpora: Common Crawl, Europarl v7, News
Commentary v9, the 10^9 French-English corpus (gzipped files in a plain tar) and the UN
corpus, with newstest2013 for dev. Examples are `{"inputs": English ids + [EOS],
"targets": French ids + [EOS]}`.

| problem                              | data  | vocab                            |
|--------------------------------------|-------|----------------------------------|
| translate_enfr_wmt_small8k           | small | subwords, ~2**13                 |
| translate_enfr_wmt_small32k          | small | subwords, ~2**15                 |
| translate_enfr_wmt8k                 | WMT   | subwords, ~2**13                 |
| translate_enfr_wmt32k                | WMT   | subwords, ~2**15                 |
| translate_enfr_wmt32k_packed         | WMT   | wmt32k's; 256-long packs         |
| translate_enfr_wmt_small_characters  | small | bytes (no vocab file)            |
| translate_enfr_wmt_characters        | WMT   | bytes (no vocab file)            |
| translate_enfr_wmt_multi64k          | WMT   | languagemodel_de_en_fr_ro_wiki64k's |
| translate_enfr_wmt_multi64k_packed1k | WMT   | multi64k, task prefixes, 1024-long packs |
| translate_enfr_wmt32k_with_backtranslate_fr / _en | WMT + back-translated pairs | wmt32k's |

The two back-translation problems read pairs of line-aligned files you place in --tmp_dir
(`fr_mono_en.txt` / `fr_mono_fr.txt`, or `en_mono_en.txt{0,1,2}` / `en_mono_fr.txt{0,1,2}`)
and write one unshuffled training shard: each synthetic file pair, then the WMT pairs again.
"""
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name; user code reads it)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import translate
from t2t.problems import wiki_lm

EOS = text_encoder.EOS_ID

# [archive URL, (English file, French file) inside it]: T2T's URLs and member names.
_ENFR_TRAIN_SMALL_DATA = [
    [
        "https://s3.amazonaws.com/opennmt-trainingdata/baseline-1M-enfr.tgz",
        ("baseline-1M-enfr/baseline-1M_train.en",
         "baseline-1M-enfr/baseline-1M_train.fr")
    ],
]
_ENFR_TEST_SMALL_DATA = [
    [
        "https://s3.amazonaws.com/opennmt-trainingdata/baseline-1M-enfr.tgz",
        ("baseline-1M-enfr/baseline-1M_valid.en",
         "baseline-1M-enfr/baseline-1M_valid.fr")
    ],
]
_ENFR_TRAIN_LARGE_DATA = [
    [
        "http://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz",
        ("commoncrawl.fr-en.en", "commoncrawl.fr-en.fr")
    ],
    [
        "http://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz",
        ("training/europarl-v7.fr-en.en", "training/europarl-v7.fr-en.fr")
    ],
    [
        "http://www.statmt.org/wmt14/training-parallel-nc-v9.tgz",
        ("training/news-commentary-v9.fr-en.en",
         "training/news-commentary-v9.fr-en.fr")
    ],
    [
        "http://www.statmt.org/wmt10/training-giga-fren.tar",
        ("giga-fren.release2.fixed.en.gz",
         "giga-fren.release2.fixed.fr.gz")
    ],
    [
        "http://www.statmt.org/wmt13/training-parallel-un.tgz",
        ("un/undoc.2000.fr-en.en", "un/undoc.2000.fr-en.fr")
    ],
]
_ENFR_TEST_LARGE_DATA = [
    [
        "http://data.statmt.org/wmt17/translation-task/dev.tgz",
        ("dev/newstest2013.en", "dev/newstest2013.fr")
    ],
]


class _EnfrData(translate.TranslateProblem):
    """The corpora of a split: OpenNMT's baseline if `use_small_dataset`, else WMT's."""

    @property
    def use_small_dataset(self):
        return True

    def source_data_files(self, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        if self.use_small_dataset:
            return _ENFR_TRAIN_SMALL_DATA if train else _ENFR_TEST_SMALL_DATA
        return _ENFR_TRAIN_LARGE_DATA if train else _ENFR_TEST_LARGE_DATA


@registry.register_problem
class TranslateEnfrWmtSmall8k(_EnfrData):
    """English -> French on OpenNMT's 1M-pair baseline; ~8k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**13  # 8192

    def vocab_data_files(self):
        return _ENFR_TRAIN_SMALL_DATA if self.use_small_dataset else _ENFR_TRAIN_LARGE_DATA


@registry.register_problem
class TranslateEnfrWmtSmall32k(TranslateEnfrWmtSmall8k):
    """English -> French on OpenNMT's 1M-pair baseline; ~32k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768


@registry.register_problem
class TranslateEnfrWmt8k(TranslateEnfrWmtSmall8k):
    """English -> French on the WMT corpora; ~8k subwords."""

    @property
    def use_small_dataset(self):
        return False


@registry.register_problem
class TranslateEnfrWmt32k(TranslateEnfrWmtSmall32k):
    """English -> French on the WMT corpora; ~32k subwords."""

    @property
    def use_small_dataset(self):
        return False


@registry.register_problem
class TranslateEnfrWmt32kPacked(TranslateEnfrWmt32k):
    """translate_enfr_wmt32k packed offline into 256-long examples; shares its vocab."""

    @property
    def packed_length(self):
        return 256

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEnfrWmt32k()


@registry.register_problem
class TranslateEnfrWmt32kWithBacktranslateFr(translate.BlockBacktranslation,
                                             TranslateEnfrWmt32k):
    """translate_enfr_wmt32k after back-translated French monolingual data; wmt32k's vocab."""

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEnfrWmt32k()

    @property
    def backtranslate_data_filenames(self):
        return [("fr_mono_en.txt", "fr_mono_fr.txt")]


@registry.register_problem
class TranslateEnfrWmt32kWithBacktranslateEn(TranslateEnfrWmt32kWithBacktranslateFr):
    """translate_enfr_wmt32k plus back-translated English monolingual data (3 file pairs)."""

    @property
    def backtranslate_data_filenames(self):
        return [("en_mono_en.txt%d" % i, "en_mono_fr.txt%d" % i) for i in [0, 1, 2]]


@registry.register_problem
class TranslateEnfrWmtSmallCharacters(_EnfrData):
    """English -> French on OpenNMT's baseline, UTF-8 bytes (no vocab file)."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER


@registry.register_problem
class TranslateEnfrWmtCharacters(TranslateEnfrWmtSmallCharacters):
    """English -> French on the WMT corpora, UTF-8 bytes (no vocab file)."""

    @property
    def use_small_dataset(self):
        return False


@registry.register_problem
class TranslateEnfrWmtMulti64k(TranslateEnfrWmtSmall32k):
    """English -> French on the WMT corpora with the de/en/fr/ro Wikipedia vocabulary."""

    @property
    def use_small_dataset(self):
        return False

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()


@registry.register_problem
class TranslateEnfrWmtMulti64kPacked1k(TranslateEnfrWmtMulti64k):
    """translate_enfr_wmt_multi64k with task prefixes, packed into 1024-long examples."""

    @property
    def packed_length(self):
        return 1024

    @property
    def num_training_examples(self):
        return 1760600

    @property
    def inputs_prefix(self):
        return "translate English French "

    @property
    def targets_prefix(self):
        return "translate French English "
