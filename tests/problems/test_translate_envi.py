"""translate_envi_iwslt32k against a local server holding IWSLT'15-shaped archives.

The two archives have the real names, URL paths and members (`train.en`/`train.vi` and
`tst2012.en`/`tst2012.vi` at the top); a subclass written as user code writes them (a tiny
vocabulary, two training shards), and the records must give back every sentence pair.
"""
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import problem, spaces, translate, translate_envi

TRAIN = [
    ("Rachel Pike : The science behind a climate headline",
     "Khoa học đằng sau một tiêu đề về khí hậu"),
    ("They are both two branches of the same field of atmospheric science .",
     "Cả hai đều là một nhánh của cùng một lĩnh vực trong ngành khoa học khí quyển ."),
    ("I &apos;d like to talk to you today about the scale of the scientific effort .",
     "Tôi muốn cho các bạn biết về sự to lớn của những nỗ lực khoa học ."),
    ("Headlines that look like this when they have to do with climate change .",
     "Có những dòng trông như thế này khi bàn về biến đổi khí hậu ."),
    ("This is the Bay of Bengal .", "Đây là vịnh Bengal ."),
    ("And we have to do the work .", "Và chúng ta phải làm việc đó ."),
    ("Thank you very much .", "Cảm ơn rất nhiều ."),
    ("It was a beautiful day .", "Đó là một ngày đẹp trời ."),
    ("Let me show you the data .", "Hãy để tôi cho bạn xem dữ liệu ."),
    ("Water is life .", "Nước là sự sống ."),
    ("We need more scientists .", "Chúng ta cần thêm nhiều nhà khoa học ."),
    ("The sea is rising .", "Mực nước biển đang dâng lên ."),
]
DEV = [
    ("When I was little , I thought my country was the best .",
     "Khi tôi còn nhỏ , tôi nghĩ rằng đất nước tôi là tốt nhất ."),
    ("My family was not poor .", "Gia đình tôi không nghèo ."),
    ("I did not know .", "Tôi không biết ."),
]


def _lines(pairs, side):
    return "".join(pair[side] + "\n" for pair in pairs)


def _archives(root):
    """Writes the two archives where their real URLs point, under `root`."""
    for datasets, pairs in ((translate_envi._ENVI_TRAIN_DATASETS, TRAIN),
                            (translate_envi._ENVI_TEST_DATASETS, DEV)):
        (url, (en_name, vi_name)), = datasets
        corpus_testing.write_tgz(corpus_testing.served_path(root, url),
                                 {en_name: _lines(pairs, 0), vi_name: _lines(pairs, 1)})


@pytest.fixture(scope="module")
def iwslt_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("iwslt")
    _archives(root)
    with corpus_testing.serve_tree(root) as server:
        yield server


@pytest.fixture
def local_iwslt(iwslt_server, monkeypatch):
    """The module's corpus lists pointed at the local server (T2T's constants untouched)."""
    for name in ("_ENVI_TRAIN_DATASETS", "_ENVI_TEST_DATASETS"):
        datasets = getattr(translate_envi, name)
        monkeypatch.setattr(translate_envi, name, [
            [corpus_testing.local_url(iwslt_server.url, url), files] for url, files in datasets])
    del iwslt_server.requests[:]
    return iwslt_server


@registry.register_problem
class TranslateEnviTiny(translate_envi.TranslateEnviIwslt32k):
    """As user code subclasses it: a small vocabulary and fewer shards."""

    @property
    def approx_vocab_size(self):
        return 2**8

    @property
    def dataset_splits(self):
        return [{"split": translate_envi.problem.DatasetSplit.TRAIN, "shards": 2},
                {"split": translate_envi.problem.DatasetSplit.EVAL, "shards": 1}]


def test_t2t_urls_members_names_and_module_level_names():
    assert translate_envi._ENVI_TRAIN_DATASETS == [[
        "https://github.com/stefan-it/nmt-en-vi/raw/master/data/train-en-vi.tgz",
        ("train.en", "train.vi")]]
    assert translate_envi._ENVI_TEST_DATASETS == [[
        "https://github.com/stefan-it/nmt-en-vi/raw/master/data/dev-2012-en-vi.tgz",
        ("tst2012.en", "tst2012.vi")]]
    envi = registry.problem("translate_envi_iwslt32k")
    assert type(envi) is translate_envi.TranslateEnviIwslt32k
    assert envi.approx_vocab_size == 32768 and envi.is_generate_per_split
    assert envi.vocab_filename == "vocab.translate_envi_iwslt32k.32768.subwords"
    assert envi.source_data_files(spaces.DatasetSplit.EVAL) == translate_envi._ENVI_TEST_DATASETS
    # What user code reaches through the module, as in T2T.
    assert translate_envi.EOS == text_encoder.EOS_ID == 1
    assert translate_envi.problem is problem and translate_envi.translate is translate
    assert translate_envi.text_encoder is text_encoder and translate_envi.registry is registry
    assert registry.problem("translate_envi_iwslt32k_rev").was_reversed
    assert "  * translate_envi_iwslt32k\n" in registry.help_string()  # --registry_help


def test_generates_every_pair_with_a_tiny_vocab(local_iwslt, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    envi = registry.problem("translate_envi_tiny")
    envi.generate_data(data_dir, tmp_dir)
    assert sorted(local_iwslt.requests) == [
        "/stefan-it/nmt-en-vi/raw/master/data/dev-2012-en-vi.tgz",
        "/stefan-it/nmt-en-vi/raw/master/data/train-en-vi.tgz"]
    names = sorted(n for n in os.listdir(data_dir) if not n.startswith("."))
    assert names == ["translate_envi_tiny-dev-00000-of-00001",
                     "translate_envi_tiny-train-00000-of-00002",
                     "translate_envi_tiny-train-00001-of-00002",
                     "vocab.translate_envi_tiny.256.subwords"]
    encoder = text_encoder.SubwordTextEncoder(os.path.join(data_dir, names[-1]))

    def pairs(paths):
        examples = corpus_testing.read_examples(paths)
        assert all(set(ex) == {"inputs", "targets"} for ex in examples)
        assert all(ex["inputs"][-1] == ex["targets"][-1] == text_encoder.EOS_ID
                   for ex in examples)
        return sorted((encoder.decode(ex["inputs"][:-1]), encoder.decode(ex["targets"][:-1]))
                      for ex in examples)

    assert pairs(envi.training_filepaths(data_dir, 2, shuffled=True)) == sorted(TRAIN)
    assert pairs(envi.dev_filepaths(data_dir, 1, shuffled=True)) == sorted(DEV)
    # The archive's files were extracted beside it, as T2T's translate problems do.
    with open(os.path.join(tmp_dir, "train.vi"), encoding="utf-8") as vi:
        assert vi.readline() == TRAIN[0][1] + "\n"


def test_archives_already_in_tmp_dir_are_not_downloaded(local_iwslt, tmp_path):
    tmp_dir, data_dir = tmp_path / "tmp", str(tmp_path / "data")
    for datasets, pairs in ((translate_envi._ENVI_TRAIN_DATASETS, TRAIN[:4]),
                            (translate_envi._ENVI_TEST_DATASETS, DEV[:1])):
        (url, (en_name, vi_name)), = datasets
        corpus_testing.write_tgz(tmp_dir / os.path.basename(url),
                                 {en_name: _lines(pairs, 0), vi_name: _lines(pairs, 1)})
    envi = TranslateEnviTiny()
    envi.generate_data(data_dir, str(tmp_dir))
    assert local_iwslt.requests == []
    assert len(corpus_testing.read_examples(envi.training_filepaths(data_dir, 2, True))) == 4
