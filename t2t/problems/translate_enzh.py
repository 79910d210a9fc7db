"""WMT17 English -> Chinese translation (T2T 1.15.7's `translate_enzh`).

    t2t-datagen --problem=translate_enzh_wmt8k --data_dir=~/t2t_data --tmp_dir=/tmp/t2t_datagen

Unlike the other translation problems, the two languages get vocabularies of their own:
`vocab.translate_enzh_wmt8k.8192.subwords.en` and `....subwords.zh`, each sampled from its
side of the training corpora (100 MB a file at most). Examples are `{"inputs": English ids
+ [EOS], "targets": Chinese ids + [EOS]}`; dev is newsdev2017 (SGML, WMT18's dev archive).

| problem               | training corpora                                             |
|-----------------------|--------------------------------------------------------------|
| translate_enzh_wmt8k  | News Commentary v13 only; 10 training shards                 |
| translate_enzh_wmt32k | News Commentary v13, plus CWMT (`cwmt.tgz`) and the UN corpus |
|                       | (`UNv1.0.en-zh.tar.gz`) when placed by hand in --tmp_dir      |

CWMT and the UN Parallel Corpus need a registration (nlp.nju.edu.cn/cwmt-wmt,
conferences.unite.un.org/UNCorpus); translate_enzh_wmt32k uses each one only if its archive
is already in --tmp_dir, and logs that it is missing otherwise.
"""
import os

from absl import logging

from t2t.core import registry
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.problems import problem  # noqa: F401  (T2T's module-level name; user code reads it)
from t2t.problems import spaces
from t2t.problems import text2text
from t2t.problems import translate

EOS = text_encoder.EOS_ID

_STAT_MT_URL = "http://data.statmt.org/wmt18/translation-task/"

# [archive URL, [English file, Chinese file] inside it]: T2T's URLs and member names.
_NC_TRAIN_DATASETS = [[
    _STAT_MT_URL + "training-parallel-nc-v13.tgz", [
        "training-parallel-nc-v13/news-commentary-v13.zh-en.en",
        "training-parallel-nc-v13/news-commentary-v13.zh-en.zh"
    ]
]]

_NC_TEST_DATASETS = [[
    _STAT_MT_URL + "dev.tgz",
    ("dev/newsdev2017-enzh-src.en.sgm", "dev/newsdev2017-enzh-ref.zh.sgm")
]]

# Manual downloads (see the module doc), used when their archive is in tmp_dir.
_UN_TRAIN_DATASETS = [[
    "https://s3-us-west-2.amazonaws.com/twairball.wmt17.zh-en/UNv1.0.en-zh.tar.gz",
    ["en-zh/UNv1.0.en-zh.en", "en-zh/UNv1.0.en-zh.zh"]
]]

_CWMT_URL = "https://s3-us-west-2.amazonaws.com/twairball.wmt17.zh-en/cwmt.tgz"
_CWMT_TRAIN_DATASETS = [[_CWMT_URL, files] for files in [
    ["cwmt/casia2015/casia2015_en.txt", "cwmt/casia2015/casia2015_ch.txt"],
    ["cwmt/casict2015/casict2015_en.txt", "cwmt/casict2015/casict2015_ch.txt"],
    ["cwmt/neu2017/NEU_en.txt", "cwmt/neu2017/NEU_cn.txt"],
    ["cwmt/datum2015/datum_en.txt", "cwmt/datum2015/datum_ch.txt"],
    ["cwmt/datum2017/Book1_en.txt", "cwmt/datum2017/Book1_cn.txt"],
    ["cwmt/datum2017/Book2_en.txt", "cwmt/datum2017/Book2_cn.txt"],
    ["cwmt/datum2017/Book3_en.txt", "cwmt/datum2017/Book3_cn.txt"],
    ["cwmt/datum2017/Book4_en.txt", "cwmt/datum2017/Book4_cn.txt"],
    ["cwmt/datum2017/Book5_en.txt", "cwmt/datum2017/Book5_cn.txt"],
    ["cwmt/datum2017/Book6_en.txt", "cwmt/datum2017/Book6_cn.txt"],
    ["cwmt/datum2017/Book7_en.txt", "cwmt/datum2017/Book7_cn.txt"],
    ["cwmt/datum2017/Book8_en.txt", "cwmt/datum2017/Book8_cn.txt"],
    ["cwmt/datum2017/Book9_en.txt", "cwmt/datum2017/Book9_cn.txt"],
    ["cwmt/datum2017/Book10_en.txt", "cwmt/datum2017/Book10_cn.txt"],
    ["cwmt/datum2017/Book11_en.txt", "cwmt/datum2017/Book11_cn.txt"],
    ["cwmt/datum2017/Book12_en.txt", "cwmt/datum2017/Book12_cn.txt"],
    ["cwmt/datum2017/Book13_en.txt", "cwmt/datum2017/Book13_cn.txt"],
    ["cwmt/datum2017/Book14_en.txt", "cwmt/datum2017/Book14_cn.txt"],
    ["cwmt/datum2017/Book15_en.txt", "cwmt/datum2017/Book15_cn.txt"],
    ["cwmt/datum2017/Book16_en.txt", "cwmt/datum2017/Book16_cn.txt"],
    ["cwmt/datum2017/Book17_en.txt", "cwmt/datum2017/Book17_cn.txt"],
    ["cwmt/datum2017/Book18_en.txt", "cwmt/datum2017/Book18_cn.txt"],
    ["cwmt/datum2017/Book19_en.txt", "cwmt/datum2017/Book19_cn.txt"],
    ["cwmt/datum2017/Book20_en.txt", "cwmt/datum2017/Book20_cn.txt"],
]]


def get_filename(dataset):
    """The archive file name of a corpus list (its first corpus's URL).

    >>> get_filename(_CWMT_TRAIN_DATASETS)
    'cwmt.tgz'
    """
    return dataset[0][0].split("/")[-1]


@registry.register_problem
class TranslateEnzhWmt32k(translate.TranslateProblem):
    """WMT17 English -> Chinese; ~32k subwords on each side (CWMT and UN if placed)."""

    @property
    def approx_vocab_size(self):
        return 2**15  # 32768

    @property
    def source_vocab_name(self):
        return "%s.en" % self.vocab_filename

    @property
    def target_vocab_name(self):
        return "%s.zh" % self.vocab_filename

    def get_training_dataset(self, tmp_dir):
        """News Commentary, plus CWMT and UN where their archive is in tmp_dir."""
        # A new list: T2T extended _NC_TRAIN_DATASETS itself, so the corpora piled up.
        full_dataset = list(_NC_TRAIN_DATASETS)
        for dataset in (_CWMT_TRAIN_DATASETS, _UN_TRAIN_DATASETS):
            filename = get_filename(dataset)
            if os.path.exists(os.path.join(tmp_dir, filename)):
                full_dataset += dataset
            else:
                logging.info("translate_enzh: dataset incomplete, you need to manually "
                             "download %s", filename)
        return full_dataset

    def _vocab(self, data_dir, tmp_dir, name, datasets, side):
        return generator_utils.get_or_generate_vocab(
            data_dir, tmp_dir, name, self.approx_vocab_size,
            [[item[0], [item[1][side]]] for item in datasets], file_byte_budget=1e8,
            max_subtoken_length=self.max_subtoken_length)

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        train = dataset_split == spaces.DatasetSplit.TRAIN
        train_dataset = self.get_training_dataset(tmp_dir)
        datasets = train_dataset if train else _NC_TEST_DATASETS
        source_vocab = self._vocab(data_dir, tmp_dir, self.source_vocab_name, train_dataset, 0)
        target_vocab = self._vocab(data_dir, tmp_dir, self.target_vocab_name, train_dataset, 1)
        tag = "train" if train else "dev"
        data_path = translate.compile_data(
            tmp_dir, datasets, "wmt_enzh_%sk_tok_%s" % (self.approx_vocab_size, tag))
        return text2text.text2text_generate_encoded(
            text2text.text2text_txt_iterator(data_path + ".lang1", data_path + ".lang2"),
            source_vocab, target_vocab)

    def feature_encoders(self, data_dir):
        return {"inputs": text_encoder.SubwordTextEncoder(
                    os.path.join(data_dir, self.source_vocab_name)),
                "targets": text_encoder.SubwordTextEncoder(
                    os.path.join(data_dir, self.target_vocab_name))}


@registry.register_problem
class TranslateEnzhWmt8k(TranslateEnzhWmt32k):
    """English -> Chinese on News Commentary v13 only (a toy set); ~8k subwords a side."""

    @property
    def approx_vocab_size(self):
        return 2**13  # 8192

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},  # a small dataset
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    def get_training_dataset(self, tmp_dir):
        """News Commentary v13 only."""
        return _NC_TRAIN_DATASETS
