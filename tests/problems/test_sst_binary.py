"""sentiment_sst_binary against a local server holding a GLUE SST-2.zip-shaped archive.

The zip has GLUE's layout (SST-2/train.tsv, dev.tsv with a `sentence<TAB>label` header,
test.tsv with `index<TAB>sentence` and no labels, SST-2/original/); it is served at the path
and query of T2T's Firebase URL and saved as SST-2.zip.
"""
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem, spaces, sst_binary, text2text

# GLUE's sentences end in a space before the tab; T2T keeps it, and so does t2t.
TRAIN = [("hide new secretions from the parental units ", 0),
         ("contains no wit , only labored gags ", 0),
         ("that loves its characters and communicates something rather beautiful ", 1),
         ("remains utterly satisfied to remain the same throughout ", 0),
         ("on the worst revenge-of-the-nerds clichés the filmmakers could dredge up ", 0),
         ("that 's far too tragic to merit such superficial treatment ", 0),
         ("demonstrates that the director of such hollywood blockbusters as patriot games "
          "can still turn out a small , personal film with an emotional wallop . ", 1),
         ("of saucy ", 1),
         ("a depressed fifteen-year-old 's suicidal poetry ", 0),
         ("are more deeply thought through than in most ` right-thinking ' films ", 1)]
DEV = [("it 's a charming and often affecting journey . ", 1),
       ("unflinchingly bleak and desperate ", 0),
       ("allows us to hope that nolan is poised to embark a major career . ", 1)]


def _tsv(rows):
    return "sentence\tlabel\n" + "".join("%s\t%d\n" % row for row in rows)


def _members(train, dev):
    return {"SST-2/train.tsv": _tsv(train), "SST-2/dev.tsv": _tsv(dev),
            "SST-2/test.tsv": "index\tsentence\n0\tuneasy mishmash of styles and genres .\n",
            "SST-2/original/README.txt": "Stanford Sentiment Treebank V1.0\n"}


@pytest.fixture(scope="module")
def sst_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("sst")
    corpus_testing.write_zip(
        corpus_testing.served_path(root, sst_binary.SentimentSSTBinary._SST2_URL),
        _members(TRAIN, DEV))
    with corpus_testing.serve_tree(root) as server:
        yield server


corpus_testing.register_user_subclass(sst_binary.SentimentSSTBinary, "sentiment_sst_tiny")


@pytest.fixture
def tiny(sst_server):
    del sst_server.requests[:]
    p = registry.problem("sentiment_sst_tiny")
    p._SST2_URL = corpus_testing.local_url(sst_server.url, sst_binary.SentimentSSTBinary._SST2_URL)
    return p


def test_t2t_names_url_and_module_level_names():
    assert sst_binary.SentimentSSTBinary._SST2_URL == (
        "https://firebasestorage.googleapis.com/v0/b/mtl-sentence-representations.appspot.com/"
        "o/data%2FSST-2.zip?alt=media&token=aabc5f6b-e466-44a2-b9b4-cf6337f84ac8")
    p = registry.problem("sentiment_sst_binary")
    assert type(p) is sst_binary.SentimentSSTBinary and p.is_generate_per_split
    assert p.vocab_filename == "vocab.sentiment_sst_binary.16384.subwords"
    assert (p.num_classes, p.class_labels(None)) == (2, ["neg", "pos"])
    assert sst_binary.EOS == "<EOS>" and sst_binary.problem is problem
    assert sst_binary.text_problems.Text2ClassProblem is text2text.Text2ClassProblem
    chars = registry.problem("sentiment_sst_binary_characters")
    assert chars.vocab_type == "character" and chars.task_id == spaces.TaskID.EN_CHR_SENT
    assert "  * sentiment_sst_binary_characters\n" in registry.help_string()


def test_generates_sentences_and_labels(tiny, sst_server, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    tiny.generate_data(data_dir, tmp_dir)
    assert sst_server.requests == [
        "/v0/b/mtl-sentence-representations.appspot.com/o/data%2FSST-2.zip"
        "?alt=media&token=aabc5f6b-e466-44a2-b9b4-cf6337f84ac8"]
    assert os.path.isfile(os.path.join(tmp_dir, "SST-2.zip"))
    assert os.path.isfile(os.path.join(tmp_dir, "SST-2", "test.tsv"))
    encoders = tiny.get_feature_encoders(data_dir)
    assert encoders["targets"].decode([1]) == "pos"
    vocab = os.path.join(data_dir, "vocab.sentiment_sst_tiny.256.subwords")
    assert text_encoder.SubwordTextEncoder(vocab).vocab_size == encoders["inputs"].vocab_size

    def rows(paths):
        examples = corpus_testing.read_examples(paths)
        assert all(set(ex) == {"inputs", "targets"} and ex["inputs"][-1] == text_encoder.EOS_ID
                   for ex in examples)
        return sorted((encoders["inputs"].decode(ex["inputs"][:-1]), ex["targets"][0])
                      for ex in examples)

    assert rows(tiny.training_filepaths(data_dir, 2, True)) == sorted(TRAIN)
    assert rows(tiny.dev_filepaths(data_dir, 1, True)) == sorted(DEV)
    hp = tiny.get_hparams()
    assert hp.modality == {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
    assert hp.vocab_size["targets"] == 2


def test_a_zip_or_folder_in_tmp_dir_is_not_downloaded(tiny, sst_server, tmp_path):
    corpus_testing.write_zip(tmp_path / "zip" / "SST-2.zip",
                             _members([("good ", 1)], [("bad ", 0)]))
    assert list(tiny.generate_samples(None, str(tmp_path / "zip"), spaces.DatasetSplit.EVAL)) \
        == [{"inputs": "bad ", "label": 0}]
    for name, text in _members([("fine ", 1)], []).items():
        corpus_testing.write_file(tmp_path / "folder" / name, text)
    assert list(tiny.generate_samples(None, str(tmp_path / "folder"),
                                      spaces.DatasetSplit.TRAIN)) == [{"inputs": "fine ", "label": 1}]
    assert sst_server.requests == []


def test_a_line_without_one_tab_names_the_file_and_line(tiny, tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("sentence\tlabel\ngood\t1\nno label here\n")
    with pytest.raises(ValueError, match=r"train.tsv line 3: 'no label here'"):
        list(tiny.example_generator(str(path)))
