"""English -> Setswana translation on the RMA Autshumato corpus (T2T's `translate_entn`).

    t2t-datagen --problem=translate_entn_rma --data_dir=~/t2t_data --tmp_dir=/tmp/t2t

Downloads `eng_tswane.train.tar.gz` and `eng_tswane.dev.tar.gz` from github.com/LauraMartinus/
ukuxhumana (kept in tmp_dir under T2T's names, `...tar.gz?raw=true`) and writes the
vocabulary `vocab.entn.32768` (T2T's name for it) and shards of `{"inputs": English ids +
[EOS], "targets": Setswana ids + [EOS]}`.
"""
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name; user code reads it)
from t2t.problems import spaces
from t2t.problems import translate

EOS = text_encoder.EOS_ID

_URL = "https://github.com/LauraMartinus/ukuxhumana/blob/master/data/en_tn"

# [archive URL, (English file, Setswana file) inside it]: T2T's URLs and member names.
_ENTN_TRAIN_DATASETS = [[
    _URL + "/eng_tswane.train.tar.gz?raw=true",
    ("entn_parallel.train.en", "entn_parallel.train.tn")
]]

_ENTN_TEST_DATASETS = [[
    _URL + "/eng_tswane.dev.tar.gz?raw=true",
    ("entn_parallel.dev.en", "entn_parallel.dev.tn")
]]


@registry.register_problem
class TranslateEntnRma(translate.TranslateProblem):
    """English -> Setswana (RMA Autshumato); ~32k subwords in `vocab.entn.32768`."""

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768

    @property
    def vocab_filename(self):
        return "vocab.entn.%d" % self.approx_vocab_size

    def source_data_files(self, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        return _ENTN_TRAIN_DATASETS if train else _ENTN_TEST_DATASETS
