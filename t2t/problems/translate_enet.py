"""WMT18 English -> Estonian translation (T2T 1.15.7's `translate_enet`).

    t2t-datagen --problem=translate_enet_wmt32k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

Training: Europarl v8, ParaCrawl release 1 (zipporah clean) and Rapid 2016; dev: newsdev2018
(from github.com/stefan-it/nmt-en-et). Writes `vocab.translate_enet_wmt32k.32768.subwords`
and shards of `{"inputs": English ids + [EOS], "targets": Estonian ids + [EOS]}`;
translate_enet_wmt_characters uses UTF-8 bytes instead (no vocab file).
"""
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name; user code reads it)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import translate

EOS = text_encoder.EOS_ID

# [archive URL, (English file, Estonian file) inside it]: T2T's URLs and member names.
_ENET_TRAIN_DATASETS = [
    [
        "http://data.statmt.org/wmt18/translation-task/training-parallel-ep-v8.tgz",
        ("training/europarl-v8.et-en.en", "training/europarl-v8.et-en.et")
    ],
    [
        "https://s3.amazonaws.com/web-language-models/paracrawl/release1/"
        "paracrawl-release1.en-et.zipporah0-dedup-clean.tgz",
        ("paracrawl-release1.en-et.zipporah0-dedup-clean.en",
         "paracrawl-release1.en-et.zipporah0-dedup-clean.et")
    ],
    [
        "http://data.statmt.org/wmt18/translation-task/rapid2016.tgz",
        ("rapid2016.en-et.en", "rapid2016.en-et.et")
    ],
]

_ENET_TEST_DATASETS = [[
    "https://github.com/stefan-it/nmt-en-et/raw/master/data/newsdev2018-enet.tar.gz",
    ("newsdev2018-enet-src.en", "newsdev2018-enet-ref.et")
]]


@registry.register_problem
class TranslateEnetWmt32k(translate.TranslateProblem):
    """WMT18 English -> Estonian; a shared vocabulary of ~32k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768

    def source_data_files(self, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        return _ENET_TRAIN_DATASETS if train else _ENET_TEST_DATASETS


@registry.register_problem
class TranslateEnetWmtCharacters(TranslateEnetWmt32k):
    """WMT18 English -> Estonian on UTF-8 bytes (no vocab file)."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER
