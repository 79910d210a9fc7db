"""WMT16 English -> Romanian translation (T2T 1.15.7's `translate_enro`).

    t2t-datagen --problem=translate_enro_wmt32k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t

Training: Europarl v7 ro-en and SETimes v2 (OPUS, a zip); dev: newsdev2016 (SGML files of
the WMT16 dev archive). Examples are `{"inputs": English ids + [EOS], "targets": Romanian
ids + [EOS]}`.

| problem                                  | vocab                                   |
|------------------------------------------|-----------------------------------------|
| translate_enro_wmt8k / _wmt32k           | subwords, ~2**13 / ~2**15               |
| translate_enro_wmt_characters            | bytes (no vocab file)                   |
| translate_enro_wmt_multi64k              | languagemodel_de_en_fr_ro_wiki64k's     |
| translate_enro_wmt_multi_small64k        | multi64k; ~6,000 sampled training pairs, 16 shards |
| translate_enro_wmt_multi_tiny64k         | multi64k; ~600 sampled training pairs   |
| translate_enro_wmt_multi_tiny64k_packed1k| tiny64k with task prefixes, 1024-long packs |
"""
import random

from t2t.core import registry
from t2t.problems import problem  # noqa: F401  (T2T's module-level name; user code reads it)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import translate
from t2t.problems import wiki_lm

# [archive URL, (English file, Romanian file) inside it]: T2T's URLs and member names.
_ENRO_TRAIN_DATASETS = [
    [
        "http://www.statmt.org/europarl/v7/ro-en.tgz",
        ("europarl-v7.ro-en.en", "europarl-v7.ro-en.ro")
    ],
    [
        "http://opus.nlpl.eu/download.php?f=SETIMES/v2/moses/en-ro.txt.zip",
        ("SETIMES.en-ro.en", "SETIMES.en-ro.ro")
    ]
]
_ENRO_TEST_DATASETS = [
    [
        "http://data.statmt.org/wmt16/translation-task/dev-romanian-updated.tgz",
        ("dev/newsdev2016-roen-ref.en.sgm", "dev/newsdev2016-roen-src.ro.sgm")
    ],
]

# Training pairs of the two corpora together; the sampling problems keep each with
# probability how_many_examples_to_sample / this.
_ENRO_TRAIN_SIZE = 614000


@registry.register_problem
class TranslateEnroWmt8k(translate.TranslateProblem):
    """WMT16 English -> Romanian; ~8k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**13  # 8192

    def source_data_files(self, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        return _ENRO_TRAIN_DATASETS if train else _ENRO_TEST_DATASETS


@registry.register_problem
class TranslateEnroWmt32k(TranslateEnroWmt8k):
    """WMT16 English -> Romanian; ~32k subwords."""

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768


@registry.register_problem
class TranslateEnroWmtCharacters(TranslateEnroWmt8k):
    """WMT16 English -> Romanian on UTF-8 bytes (no vocab file)."""

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER


@registry.register_problem
class TranslateEnroWmtMulti64k(TranslateEnroWmt8k):
    """WMT16 English -> Romanian with the de/en/fr/ro Wikipedia vocabulary."""

    @property
    def use_vocab_from_other_problem(self):
        return wiki_lm.LanguagemodelDeEnFrRoWiki64k()


@registry.register_problem
class TranslateEnroWmtMultiSmall64k(TranslateEnroWmtMulti64k):
    """multi64k trained on ~6,000 training pairs sampled at random (16 shards).

    Each pair is kept with probability `how_many_examples_to_sample / 614000` (the size of
    the full corpus), in a second pass too if the first kept too few; dev is complete.
    The choice follows Python's `random` (seeded by t2t-datagen --random_seed).
    """

    @property
    def dataset_splits(self):
        # A small dataset, but TPUs like at least a few shards.
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 16},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def how_many_examples_to_sample(self):
        return 6000

    def generate_samples(self, data_dir, tmp_dir, dataset_split, **kwargs):
        samples = super().generate_samples
        if dataset_split != spaces.DatasetSplit.TRAIN:
            return samples(data_dir, tmp_dir, dataset_split, **kwargs)
        return self._sampled(lambda: samples(data_dir, tmp_dir, dataset_split, **kwargs))

    def _sampled(self, make_samples):
        wanted = self.how_many_examples_to_sample
        keep = wanted / float(_ENRO_TRAIN_SIZE)
        count = 0
        for _ in range(2):  # T2T's two passes
            for sample in make_samples():
                if random.random() > keep:
                    continue
                count += 1
                if count > wanted:
                    return
                yield sample
            if count >= wanted:
                return


@registry.register_problem
class TranslateEnroWmtMultiTiny64k(TranslateEnroWmtMultiSmall64k):
    """multi64k trained on ~600 sampled training pairs."""

    @property
    def how_many_examples_to_sample(self):
        return 600


@registry.register_problem
class TranslateEnroWmtMultiTiny64kPacked1k(TranslateEnroWmtMultiTiny64k):
    """translate_enro_wmt_multi_tiny64k with task prefixes, packed into 1024-long examples."""

    @property
    def packed_length(self):
        return 1024

    @property
    def num_training_examples(self):
        return 32

    @property
    def inputs_prefix(self):
        return "translate English Romanian "

    @property
    def targets_prefix(self):
        return "translate Romanian English "
