"""English -> Indonesian translation (T2T 1.15.7's `translate_enid`).

    t2t-datagen --problem=translate_enid_iwslt32k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t

Training: IWSLT'17 TED talks and the four PANL BPPT corpora (economy, international,
science, sport); dev: IWSLT'17 tst2017plus; all from github.com/prasastoadi/
parallel-corpora-en-id. Writes `vocab.translate_enid_iwslt32k.32768.subwords` and shards of
`{"inputs": English ids + [EOS], "targets": Indonesian ids + [EOS]}`.
"""
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name; user code reads it)
from t2t.problems import spaces
from t2t.problems import translate

EOS = text_encoder.EOS_ID

_REPO = "https://github.com/prasastoadi/parallel-corpora-en-id/raw/master/"

# [archive URL, (English file, Indonesian file) inside it]: T2T's URLs and member names.
_ENID_TRAIN_DATASETS = [
    [_REPO + "IWSLT17.train.en-id.tgz",
     ("IWSLT17.train.en-id.en", "IWSLT17.train.en-id.id")],
    [_REPO + "PANL-BPPT-ECO-EN-ID-150Kw.tgz",
     ("PANL-BPPT-ECO-EN-150Kw.txt", "PANL-BPPT-ECO-ID-150Kw.txt")],
    [_REPO + "PANL-BPPT-INT-EN-ID-150Kw.tgz",
     ("PANL-BPPT-INT-EN-150Kw.txt", "PANL-BPPT-INT-ID-150Kw.txt")],
    [_REPO + "PANL-BPPT-SCI-EN-ID-100Kw.tgz",
     ("PANL-BPPT-SCI-EN-100Kw.txt", "PANL-BPPT-SCI-ID-100Kw.txt")],
    [_REPO + "PANL-BPPT-SPO-EN-ID-100Kw.tgz",
     ("PANL-BPPT-SPO-EN-100Kw.txt", "PANL-BPPT-SPO-ID-100Kw.txt")],
]

_ENID_TEST_DATASETS = [
    [_REPO + "IWSLT17.TED.tst2017plus.en-id.tgz",
     ("IWSLT17.TED.tst2017plus.en-id.en", "IWSLT17.TED.tst2017plus.en-id.id")]
]


@registry.register_problem
class TranslateEnidIwslt32k(translate.TranslateProblem):
    """English -> Indonesian (IWSLT'17 + PANL BPPT); ~32k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768

    def source_data_files(self, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        return _ENID_TRAIN_DATASETS if train else _ENID_TEST_DATASETS
