"""English -> Macedonian translation on SETimes (T2T 1.15.7's `translate_enmk`).

    t2t-datagen --problem=translate_enmk_setimes32k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t

Training: SETimes en-mk (nlp.ffzg.hr); dev: MTE-1984 (github.com/stefan-it/nmt-en-mk).
Writes `vocab.translate_enmk_setimes32k.32768.subwords` and shards of `{"inputs": English
ids + [EOS], "targets": Macedonian ids + [EOS]}`; translate_enmk_setimes_characters uses
UTF-8 bytes instead (no vocab file).
"""
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name; user code reads it)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import translate

EOS = text_encoder.EOS_ID

# [archive URL, (English file, Macedonian file) inside it]: T2T's URLs and member names.
_ENMK_TRAIN_DATASETS = [[
    "http://nlp.ffzg.hr/data/corpora/setimes/setimes.en-mk.txt.tgz",
    ("setimes.en-mk.en.txt", "setimes.en-mk.mk.txt")
]]

_ENMK_DEV_DATASETS = [[
    "https://github.com/stefan-it/nmt-en-mk/raw/master/data/MTE-1984-dev.enmk.tgz",
    ("MTE1984-dev.en", "MTE1984-dev.mk")
]]


@registry.register_problem
class TranslateEnmkSetimes32k(translate.TranslateProblem):
    """SETimes English -> Macedonian; ~32k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768

    def source_data_files(self, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        return _ENMK_TRAIN_DATASETS if train else _ENMK_DEV_DATASETS


@registry.register_problem
class TranslateEnmkSetimesCharacters(TranslateEnmkSetimes32k):
    """SETimes English -> Macedonian on UTF-8 bytes (no vocab file)."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER
