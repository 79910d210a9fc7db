"""WMT English -> German translation problems (T2T 1.15.7's names, corpora and vocab files).

    t2t-datagen --problem=translate_ende_wmt32k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads News Commentary v13, Common Crawl and Europarl v7 (about 4.5M sentence pairs)
for training and newstest2013 (3,000 pairs) for dev, then writes
`vocab.translate_ende_wmt32k.32768.subwords`, `translate_ende_wmt32k-train-000{00..99}-of-00100`
and `translate_ende_wmt32k-dev-00000-of-00001`. An example on disk:

    {"inputs": ids of "Resumption of the session" + [1],
     "targets": ids of "Wiederaufnahme der Sitzungsperiode" + [1]}

| problem                          | vocab                                  |
|----------------------------------|----------------------------------------|
| translate_ende_wmt32k            | subwords, ~2**15                       |
| translate_ende_wmt8k             | subwords, ~2**13                       |
| translate_ende_wmt_characters    | bytes (ByteTextEncoder, 258 ids)       |
| translate_ende_wmt{8k,32k}_packed| that of wmt8k / wmt32k; 256-long packs |
| translate_ende2018_wmt32k        | wmt32k's; adds the WMT18 Rapid corpus  |
| translate_ende_pc32k             | wmt32k's; ParaCrawl v4 (bicleaner 0.7) |
| translate_ende_wmt_pc32k         | wmt32k's; WMT plus ParaCrawl           |
| translate_ende_wmt_clean32k, translate_ende_pc_clean32k, translate_ende_wmt_clean_pc32k, |
| translate_ende_wmt_pc_clean32k, translate_ende_wmt_clean_pc_clean32k: the same corpora,  |
| their training part filtered by cleaner_en_xx (`datatypes_to_clean`); wmt32k's vocab     |
| translate_ende_wmt_multi64k      | the multilingual 64k vocab of          |
|                                  | languagemodel_de_en_fr_ro_wiki64k      |
| translate_ende_wmt_multi64k_packed1k | multi64k with task prefixes, packed |
|                                  | into 1024-long examples                |
"""
from t2t.core import registry
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import translate
from t2t.problems import wiki_lm

# [archive URL, (English file, German file) inside it]; the URLs and member names are T2T's.
_ENDE_TRAIN_DATASETS = [
    [
        "http://data.statmt.org/wmt18/translation-task/training-parallel-nc-v13.tgz",
        ("training-parallel-nc-v13/news-commentary-v13.de-en.en",
         "training-parallel-nc-v13/news-commentary-v13.de-en.de")
    ],
    [
        "http://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz",
        ("commoncrawl.de-en.en", "commoncrawl.de-en.de")
    ],
    [
        "http://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz",
        ("training/europarl-v7.de-en.en", "training/europarl-v7.de-en.de")
    ],
]

_ENDE_EVAL_DATASETS = [
    [
        "http://data.statmt.org/wmt17/translation-task/dev.tgz",
        ("dev/newstest2013.en", "dev/newstest2013.de")
    ],
]

# Additional WMT18 news-task training data (http://www.statmt.org/wmt18/translation-task.html).
_ENDE_RAPID_TRAIN_DATASET = [
    [
        "http://data.statmt.org/wmt18/translation-task/rapid2016.tgz",
        ("rapid2016.de-en.en", "rapid2016.de-en.de"),
    ],
]

_ENDE_PARACRAWL_DATASETS = [
    [
        "https://s3.amazonaws.com/web-language-models/paracrawl/release4/"
        "en-de.bicleaner07.tmx.gz",
        ("tmx", "en-de.bicleaner07.tmx.gz")
    ]
]


@registry.register_problem
class TranslateEndeWmt32k(translate.TranslateProblem):
    """En-de translation trained on the WMT corpus; vocab of ~32k subwords."""

    @property
    def additional_training_datasets(self):
        """Corpora a subclass adds to the WMT training corpora."""
        return []

    def source_data_files(self, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        train_datasets = _ENDE_TRAIN_DATASETS + self.additional_training_datasets
        return train_datasets if train else _ENDE_EVAL_DATASETS


@registry.register_problem
class TranslateEndeWmt8k(TranslateEndeWmt32k):
    """En-de translation trained on the WMT corpus; vocab of ~8k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**13  # 8192


@registry.register_problem
class TranslateEndeWmtCharacters(TranslateEndeWmt8k):
    """En-de translation on UTF-8 bytes (no vocab file)."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER


@registry.register_problem
class TranslateEndeWmt32kPacked(TranslateEndeWmt32k):
    """translate_ende_wmt32k packed offline into 256-long examples; shares its vocab."""

    @property
    def packed_length(self):
        return 256

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEndeWmt32k()


@registry.register_problem
class TranslateEndeWmt8kPacked(TranslateEndeWmt8k):
    """translate_ende_wmt8k packed offline into 256-long examples; shares its vocab."""

    @property
    def packed_length(self):
        return 256

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEndeWmt8k()


@registry.register_problem
class TranslateEnde2018Wmt32k(TranslateEndeWmt32k):
    """En-de trained on WMT18: the WMT corpora plus Rapid 2016; wmt32k's vocab.

    T2T derived this from TranslateProblem, so it had no source_data_files and failed.
    """

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEndeWmt32k()

    @property
    def additional_training_datasets(self):
        return _ENDE_RAPID_TRAIN_DATASET


@registry.register_problem
class TranslateEndePc32k(translate.TranslateProblem):
    """En-de trained on ParaCrawl v4 (bicleaner 0.7 subset); wmt32k's vocab, WMT dev set."""

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEndeWmt32k()

    @property
    def additional_training_datasets(self):
        return []

    def source_data_files(self, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        train_datasets = _ENDE_PARACRAWL_DATASETS + self.additional_training_datasets
        return train_datasets if train else _ENDE_EVAL_DATASETS


@registry.register_problem
class TranslateEndeWmtPc32k(TranslateEndeWmt32k):
    """En-de trained on the WMT corpora plus ParaCrawl; wmt32k's vocab."""

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEndeWmt32k()

    @property
    def additional_training_datasets(self):
        return _ENDE_PARACRAWL_DATASETS


# ---------------------------------------------------------------------------- cleaned corpora
@registry.register_problem
class TranslateEndeWmtClean32k(TranslateEndeWmt32k):
    """translate_ende_wmt32k with its WMT training corpora cleaned (cleaner_en_xx)."""

    @property
    def use_vocab_from_other_problem(self):
        return TranslateEndeWmt32k()

    @property
    def datatypes_to_clean(self):
        return ["txt"]


@registry.register_problem
class TranslateEndePcClean32k(TranslateEndePc32k):
    """translate_ende_pc32k with ParaCrawl cleaned (cleaner_en_xx)."""

    @property
    def datatypes_to_clean(self):
        return ["tmx"]


@registry.register_problem
class TranslateEndeWmtCleanPc32k(TranslateEndeWmtPc32k):
    """WMT (cleaned) plus ParaCrawl (as is); wmt32k's vocab."""

    @property
    def datatypes_to_clean(self):
        return ["txt"]


@registry.register_problem
class TranslateEndeWmtPcClean32k(TranslateEndeWmtPc32k):
    """WMT (as is) plus ParaCrawl (cleaned); wmt32k's vocab."""

    @property
    def datatypes_to_clean(self):
        return ["tmx"]


@registry.register_problem
class TranslateEndeWmtCleanPcClean32k(TranslateEndeWmtPcClean32k):
    """WMT and ParaCrawl, both cleaned; wmt32k's vocab."""

    @property
    def datatypes_to_clean(self):
        return ["txt", "tmx"]


# ---------------------------------------------------------------------------- multilingual
@registry.register_problem
class TranslateEndeWmtMulti64k(TranslateEndeWmt8k):
    """En-de on the WMT corpora with the multilingual vocabulary (de, en, fr, ro Wikipedia).

    The vocab file is `vocab.languagemodel_de_en_fr_ro_wiki64k.64000.subwords`; without
    it in --data_dir, datagen builds it from the four Wikipedia corpora first.
    """

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()


@registry.register_problem
class TranslateEndeWmtMulti64kPacked1k(TranslateEndeWmtMulti64k):
    """translate_ende_wmt_multi64k with task prefixes, packed into 1024-long examples."""

    @property
    def packed_length(self):
        return 1024

    @property
    def num_training_examples(self):
        return 173800

    @property
    def inputs_prefix(self):
        return "translate English German "

    @property
    def targets_prefix(self):
        return "translate German English "
