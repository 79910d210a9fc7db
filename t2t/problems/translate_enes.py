"""WMT English -> Spanish translation (T2T 1.15.7's `translate_enes`).

    t2t-datagen --problem=translate_enes_wmt32k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

Training: Common Crawl, Europarl v7, the UN corpus (2000) and ParaCrawl release 1 (zipporah
clean); dev: newstest2013. Writes `vocab.translate_enes_wmt32k.32768.subwords` and shards of
`{"inputs": English ids + [EOS], "targets": Spanish ids + [EOS]}`.

| problem                        | vocab                                  |
|--------------------------------|----------------------------------------|
| translate_enes_wmt32k          | subwords, ~2**15                       |
| translate_enes_wmt8k           | subwords, ~2**13                       |
| translate_enes_wmt_characters  | bytes (ByteTextEncoder, no file)       |
| translate_enes_wmt_clean32k    | wmt32k's; training corpora cleaned     |
| translate_enes_wmt{8k,32k}_packed | that of wmt8k / wmt32k; 256-long packs |
"""
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name; user code reads it)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import translate

EOS = text_encoder.EOS_ID

# [archive URL, (English file, Spanish file) inside it]: T2T's URLs and member names.
_ENES_TRAIN_DATASETS = [
    [
        "http://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz",
        ("commoncrawl.es-en.en", "commoncrawl.es-en.es")
    ],
    [
        "http://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz",
        ("training/europarl-v7.es-en.en", "training/europarl-v7.es-en.es")
    ],
    [
        "http://www.statmt.org/wmt13/training-parallel-un.tgz",
        ("un/undoc.2000.es-en.en", "un/undoc.2000.es-en.es")
    ],
    [
        "https://s3.amazonaws.com/web-language-models/paracrawl/release1/"
        "paracrawl-release1.en-es.zipporah0-dedup-clean.tgz",
        ("paracrawl-release1.en-es.zipporah0-dedup-clean.en",
         "paracrawl-release1.en-es.zipporah0-dedup-clean.es")
    ]
]
_ENES_TEST_DATASETS = [
    [
        "http://data.statmt.org/wmt17/translation-task/dev.tgz",
        ("dev/newstest2013.en", "dev/newstest2013.es")
    ],
]


@registry.register_problem
class TranslateEnesWmt32k(translate.TranslateProblem):
    """WMT English -> Spanish; a shared vocabulary of ~32k subwords."""

    @property
    def additional_training_datasets(self):
        """Corpora a subclass adds to the training corpora (not to the vocab's)."""
        return []

    def source_data_files(self, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        return _ENES_TRAIN_DATASETS + self.additional_training_datasets if train else (
            _ENES_TEST_DATASETS)

    def vocab_data_files(self):
        return _ENES_TRAIN_DATASETS


@registry.register_problem
class TranslateEnesWmtClean32k(TranslateEnesWmt32k):
    """translate_enes_wmt32k with its training corpora cleaned (cleaner_en_xx)."""

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEnesWmt32k()

    @property
    def datatypes_to_clean(self):
        return ["txt"]


@registry.register_problem
class TranslateEnesWmt32kPacked(TranslateEnesWmt32k):
    """translate_enes_wmt32k packed offline into 256-long examples; shares its vocab."""

    @property
    def packed_length(self):
        return 256

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEnesWmt32k()


@registry.register_problem
class TranslateEnesWmt8k(TranslateEnesWmt32k):
    """WMT English -> Spanish; ~8k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**13  # 8192


@registry.register_problem
class TranslateEnesWmt8kPacked(TranslateEnesWmt8k):
    """translate_enes_wmt8k packed offline into 256-long examples; shares its vocab."""

    @property
    def packed_length(self):
        return 256

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEnesWmt8k()


@registry.register_problem
class TranslateEnesWmtCharacters(TranslateEnesWmt8k):
    """WMT English -> Spanish on UTF-8 bytes (no vocab file)."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER
