"""WMT English -> Czech translation (T2T 1.15.7's `translate_encs`).

    t2t-datagen --problem=translate_encs_wmt32k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

Training: CzEng 1.6's plain-text release (a tar of gzipped tab-separated files; English is
column 3, Czech column 2), News Commentary v13, Common Crawl and Europarl v7; dev:
newstest2013. Writes `vocab.translate_encs_wmt32k.32768.subwords` and 100 + 1 shards of
`{"inputs": English ids + [EOS], "targets": Czech ids + [EOS]}`.

| problem                       | vocab                            |
|-------------------------------|----------------------------------|
| translate_encs_wmt32k         | subwords, ~2**15                 |
| translate_encs_wmt_characters | bytes (ByteTextEncoder, no file) |
"""
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name; user code reads it)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import translate

EOS = text_encoder.EOS_ID

# [archive URL, (English file, Czech file)] or the CzEng tsv entry; T2T's URLs and members.
_ENCS_TRAIN_DATASETS = [
    [("https://lindat.mff.cuni.cz/repository/xmlui/bitstream/handle/"
      "11234/1-1458/data-plaintext-format.tar"),
     ("tsv", 3, 2, "data.plaintext-format/*train.gz")],
    [
        "http://data.statmt.org/wmt18/translation-task/training-parallel-nc-v13.tgz",
        ("training-parallel-nc-v13/news-commentary-v13.cs-en.en",
         "training-parallel-nc-v13/news-commentary-v13.cs-en.cs")
    ],
    [
        "http://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz",
        ("commoncrawl.cs-en.en", "commoncrawl.cs-en.cs")
    ],
    [
        "http://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz",
        ("training/europarl-v7.cs-en.en", "training/europarl-v7.cs-en.cs")
    ],
]
_ENCS_TEST_DATASETS = [
    [
        "http://data.statmt.org/wmt17/translation-task/dev.tgz",
        ("dev/newstest2013.en", "dev/newstest2013.cs")
    ],
]


class _EncsWmt(translate.TranslateProblem):
    """What both en-cs problems share: the WMT corpora."""

    def source_data_files(self, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        return _ENCS_TRAIN_DATASETS if train else _ENCS_TEST_DATASETS


@registry.register_problem
class TranslateEncsWmt32k(_EncsWmt):
    """WMT English -> Czech; a shared vocabulary of ~32k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768

    def vocab_data_files(self):
        """The training corpora; for CzEng's tsv files, the compiled training files.

        As in T2T, the vocab samples `<name>-compiled-train.lang1/.lang2` in place of the
        CzEng archive (whose tsv files hold both languages).
        """
        datasets = self.source_data_files(spaces.DatasetSplit.TRAIN)
        vocab_datasets = []
        if datasets[0][0].endswith("data-plaintext-format.tar"):
            vocab_datasets.append([datasets[0][0], ["%s-compiled-train.lang1" % self.name,
                                                    "%s-compiled-train.lang2" % self.name]])
            datasets = datasets[1:]
        return vocab_datasets + [[item[0], [item[1][0], item[1][1]]] for item in datasets]

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        # T2T read the compiled files before anything had written them (a fresh tmp_dir
        # failed); compiling the training corpora first makes them exist.
        if self.vocab_data_files() != self.source_data_files(spaces.DatasetSplit.TRAIN):
            self.generate_samples(data_dir, tmp_dir, spaces.DatasetSplit.TRAIN)
        return super().generate_text_for_vocab(data_dir, tmp_dir)


@registry.register_problem
class TranslateEncsWmtCharacters(_EncsWmt):
    """WMT English -> Czech on UTF-8 bytes (no vocab file)."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER
