"""conll2002_{es,nl}_ner against a local server holding a conll2002.zip-shaped archive:
conll2002/{esp,ned}.{train,testa,testb} of `word POS tag` lines, a blank line after each
sentence, and NLTK's README.
"""
import os

import pytest

import corpus_testing

from t2t.core import errors, registry
from t2t.encoders import text_encoder
from t2t.problems import conll_ner, spaces

ESP_TRAIN = ("Sao NC B-LOC\nPaulo VMI I-LOC\n( Fpa O\n\n\n"
             "El DA O\nAbogado NC B-PER\n\nLa DA O\nEFE NC B-ORG\n")  # no final blank line
ESP_TESTA = "Madrid NC B-LOC\n. Fp O\n\n"
ESP_TESTB = "Gracias NC O\n\n"
NED_TRAIN = "-DOCSTART- -DOCSTART- O\n\nDe Art O\nbelg N B-MISC\n\n"
MEMBERS = {"conll2002/README": "CoNLL 2002\n", "conll2002/esp.train": ESP_TRAIN,
           "conll2002/esp.testa": ESP_TESTA, "conll2002/esp.testb": ESP_TESTB,
           "conll2002/ned.train": NED_TRAIN, "conll2002/ned.testa": "Hallo Int O\n\n",
           "conll2002/ned.testb": "Gent N B-LOC\n\n"}


@pytest.fixture(scope="module")
def conll_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("conll")
    corpus_testing.write_zip(corpus_testing.served_path(root, conll_ner.CONLL2002_URL), MEMBERS)
    with corpus_testing.serve_tree(root) as server:
        yield server


@pytest.fixture
def served(monkeypatch, conll_server):
    return corpus_testing.point_at(monkeypatch, conll_server,
                                   [(conll_ner.Conll2002Ner, "URL", conll_ner.CONLL2002_URL)])


corpus_testing.register_user_subclass(conll_ner.Conll2002EsNer, "conll2002_es_ner_tiny")


def test_t2t_names_url_and_files():
    assert conll_ner.CONLL2002_URL == ("https://raw.githubusercontent.com/nltk/nltk_data/"
                                       "gh-pages/packages/corpora/conll2002.zip")
    es, nl = registry.problem("conll2002_es_ner"), registry.problem("conll2002_nl_ner")
    assert type(registry.problem("conll2002_ner")) is conll_ner.Conll2002Ner
    assert type(es) is conll_ner.Conll2002EsNer and type(nl) is conll_ner.Conll2002NlNer
    assert es.vocab_filename == "vocab.conll2002_es_ner.32768.subwords"
    assert es.source_data_files(spaces.DatasetSplit.TRAIN) == ["esp.train"]
    assert es.source_data_files(spaces.DatasetSplit.EVAL) == ["esp.testa", "esp.testb"]
    assert nl.source_data_files(spaces.DatasetSplit.EVAL) == ["ned.testa", "ned.testb"]
    assert es.is_generate_per_split


def test_sentences_from_the_download(served, tmp_path):
    es = registry.problem("conll2002_es_ner")
    assert list(es.generate_samples(None, str(tmp_path), spaces.DatasetSplit.TRAIN)) == [
        {"inputs": "Sao Paulo (", "targets": "B-LOC I-LOC O"},
        {"inputs": "El Abogado", "targets": "O B-PER"},
        {"inputs": "La EFE", "targets": "O B-ORG"}]
    assert list(es.generate_samples(None, str(tmp_path), spaces.DatasetSplit.EVAL)) == [
        {"inputs": "Madrid .", "targets": "B-LOC O"}, {"inputs": "Gracias", "targets": "O"}]
    nl = registry.problem("conll2002_nl_ner")
    assert list(nl.generate_samples(None, str(tmp_path), spaces.DatasetSplit.TRAIN)) == [
        {"inputs": "-DOCSTART-", "targets": "O"}, {"inputs": "De belg", "targets": "O B-MISC"}]
    assert served.requests == ["/nltk/nltk_data/gh-pages/packages/corpora/conll2002.zip"]


def test_generates_records_and_vocab(served, tmp_path):
    tiny = registry.problem("conll2002_es_ner_tiny")
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    tiny.generate_data(data_dir, tmp_dir)
    assert sorted(f for f in os.listdir(data_dir) if not f.startswith(".")) == [
        "conll2002_es_ner_tiny-dev-00000-of-00001",
        "conll2002_es_ner_tiny-train-00000-of-00002",
        "conll2002_es_ner_tiny-train-00001-of-00002",
        "vocab.conll2002_es_ner_tiny.256.subwords"]
    encoders = tiny.get_feature_encoders(data_dir)
    assert encoders["inputs"] is encoders["targets"]  # one shared vocabulary

    def pairs(paths):
        examples = corpus_testing.read_examples(paths)
        assert all(ex["inputs"][-1] == ex["targets"][-1] == text_encoder.EOS_ID
                   for ex in examples)
        return sorted((encoders["inputs"].decode(ex["inputs"][:-1]),
                       encoders["targets"].decode(ex["targets"][:-1])) for ex in examples)

    assert pairs(tiny.dev_filepaths(data_dir, 1, True)) == [("Gracias", "O"),
                                                           ("Madrid .", "B-LOC O")]
    assert pairs(tiny.training_filepaths(data_dir, 2, True)) == [
        ("El Abogado", "O B-PER"), ("La EFE", "O B-ORG"), ("Sao Paulo (", "B-LOC I-LOC O")]


def test_a_pre_placed_zip_or_folder_is_not_downloaded(served, tmp_path):
    nl = registry.problem("conll2002_nl_ner")
    corpus_testing.write_zip(tmp_path / "zip" / "conll2002.zip", MEMBERS)
    assert list(nl.generate_samples(None, str(tmp_path / "zip"), spaces.DatasetSplit.EVAL)) \
        == [{"inputs": "Hallo", "targets": "O"}, {"inputs": "Gent", "targets": "B-LOC"}]
    corpus_testing.write_file(tmp_path / "folder" / "conll2002" / "ned.train", "Ja Int O\n")
    assert list(nl.generate_samples(None, str(tmp_path / "folder"),
                                    spaces.DatasetSplit.TRAIN)) == [{"inputs": "Ja",
                                                                     "targets": "O"}]
    assert served.requests == []


def test_bad_input_is_a_one_line_error(served, tmp_path):
    with pytest.raises(errors.UserError, match="conll2002_ner names no CoNLL-2002 files"):
        next(registry.problem("conll2002_ner").generate_samples(None, str(tmp_path),
                                                                spaces.DatasetSplit.TRAIN))
    corpus_testing.write_file(tmp_path / "conll2002" / "esp.train", "Sao B-LOC\n")
    es = registry.problem("conll2002_es_ner")
    with pytest.raises(errors.UserError, match=r"esp.train line 1: 'Sao B-LOC' is not"):
        list(es.generate_samples(None, str(tmp_path), spaces.DatasetSplit.TRAIN))
    with pytest.raises(errors.UserError, match=r"esp.testa is missing; delete"):
        list(es.generate_samples(None, str(tmp_path), spaces.DatasetSplit.EVAL))


def test_t2t_datagen_of_the_base_class_is_one_line_and_writes_no_records(tmp_path, capsys):
    """conll2002_ner is registered (as in T2T) but names no files: exit 2, no traceback."""
    data_dir = tmp_path / "data"
    code, err = corpus_testing.run_t2t_datagen(
        capsys, "--problem=conll2002_ner", "--data_dir=%s" % data_dir,
        "--tmp_dir=%s" % (tmp_path / "tmp"))
    assert code == 2 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == (
        "t2t-datagen: error: conll2002_ner names no CoNLL-2002 files; generate "
        "conll2002_es_ner or conll2002_nl_ner (or set TRAIN_FILES and EVAL_FILES in a subclass)")
    records = os.listdir(str(data_dir)) if data_dir.exists() else []
    assert not [name for name in records if "conll2002_ner-" in name], records
    assert not (tmp_path / "tmp" / "conll2002").exists()
