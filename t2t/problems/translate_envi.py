"""English -> Vietnamese translation on IWSLT'15 (T2T 1.15.7's `translate_envi`).

    t2t-datagen --problem=translate_envi_iwslt32k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

downloads `train-en-vi.tgz` (133k sentence pairs, `train.en` / `train.vi` at the top of the
archive) and `dev-2012-en-vi.tgz` (tst2012: 1,553 pairs) from the copy of Stanford NLP's
IWSLT'15 files at github.com/stefan-it/nmt-en-vi, then writes
`vocab.translate_envi_iwslt32k.32768.subwords`, 100 training shards and one dev shard of
`{"inputs": English ids + [EOS], "targets": Vietnamese ids + [EOS]}`. Archives already in
--tmp_dir are used as they are.

User code subclasses the problem and reaches T2T's module-level names through this module:

    from t2t.problems import translate_envi

    @registry.register_problem
    class TranslateEnviIwslt8k(translate_envi.TranslateEnviIwslt32k):
        @property
        def approx_vocab_size(self):
            return 2**13
"""
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name; user code reads it)
from t2t.problems import spaces
from t2t.problems import translate

# End-of-sentence id, as T2T's module defined it.
EOS = text_encoder.EOS_ID

# [archive URL, (English file, Vietnamese file) inside it]: T2T's URLs and member names.
# IWSLT'15 from https://nlp.stanford.edu/projects/nmt/ (133k training pairs).
_ENVI_TRAIN_DATASETS = [[
    "https://github.com/stefan-it/nmt-en-vi/raw/master/data/train-en-vi.tgz",
    ("train.en", "train.vi")
]]

# Development: tst2012, 1,553 pairs.
_ENVI_TEST_DATASETS = [[
    "https://github.com/stefan-it/nmt-en-vi/raw/master/data/dev-2012-en-vi.tgz",
    ("tst2012.en", "tst2012.vi")
]]


@registry.register_problem
class TranslateEnviIwslt32k(translate.TranslateProblem):
    """IWSLT'15 English -> Vietnamese; a shared vocabulary of ~32k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768

    def source_data_files(self, dataset_split):
        # Read at call time, so a test (or user) can point the module's lists elsewhere.
        train = dataset_split == spaces.DatasetSplit.TRAIN
        return _ENVI_TRAIN_DATASETS if train else _ENVI_TEST_DATASETS
