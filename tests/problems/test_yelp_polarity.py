"""sentiment_yelp_polarity against a local server holding a yelp_review_polarity_csv.tgz-shaped
archive: yelp_review_polarity_csv/{train,test}.csv of `"<1|2>","<review>"` rows, and a readme.
"""
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import spaces, yelp_polarity

TRAIN = ('"2","Great tacos, friendly staff."\n'
         '"1","Cold food and a ""rude"" waiter.\\nNever again."\n'
         '"2","Best coffee in town, with a line\nbreak inside the quotes."\n'
         '"1","Overpriced."\n')
TEST = '"1","Slow service."\n"2","Lovely patio."\n'


def _members(train=TRAIN, test=TEST):
    return {"yelp_review_polarity_csv/readme.txt": "Yelp polarity\n",
            "yelp_review_polarity_csv/train.csv": train,
            "yelp_review_polarity_csv/test.csv": test}


@pytest.fixture(scope="module")
def yelp_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("yelp")
    corpus_testing.write_tgz(corpus_testing.served_path(root, yelp_polarity.SentimentYelpPolarity.URL),
                             _members())
    with corpus_testing.serve_tree(root) as server:
        yield server


corpus_testing.register_user_subclass(yelp_polarity.SentimentYelpPolarity,
                                      "sentiment_yelp_polarity_tiny")


@pytest.fixture
def tiny(yelp_server):
    del yelp_server.requests[:]
    problem = registry.problem("sentiment_yelp_polarity_tiny")
    problem.URL = corpus_testing.local_url(yelp_server.url,
                                           yelp_polarity.SentimentYelpPolarity.URL)
    return problem


def test_t2t_names_url_and_labels():
    assert yelp_polarity.SentimentYelpPolarity.URL == \
        "https://s3.amazonaws.com/fast-ai-nlp/yelp_review_polarity_csv.tgz"
    p = registry.problem("sentiment_yelp_polarity")
    assert type(p) is yelp_polarity.SentimentYelpPolarity and p.is_generate_per_split
    assert p.vocab_filename == "vocab.sentiment_yelp_polarity.8192.subwords"
    assert (p.num_classes, p.class_labels(None)) == (2, ["1", "2"])
    assert [s["shards"] for s in p.dataset_splits] == [10, 1]
    chars = registry.problem("sentiment_yelp_polarity_characters")
    assert chars.vocab_type == "character" and chars.task_id == spaces.TaskID.EN_CHR_SENT
    assert chars.num_classes == 2


def test_samples_are_csv_rows_with_zero_based_labels(tiny, yelp_server, tmp_path):
    samples = list(tiny.generate_samples(None, str(tmp_path), spaces.DatasetSplit.TRAIN))
    assert yelp_server.requests == ["/fast-ai-nlp/yelp_review_polarity_csv.tgz"]
    assert samples == [
        {"inputs": "Great tacos, friendly staff.", "label": 1},
        {"inputs": 'Cold food and a "rude" waiter.\\nNever again.', "label": 0},
        {"inputs": "Best coffee in town, with a line\nbreak inside the quotes.", "label": 1},
        {"inputs": "Overpriced.", "label": 0}]
    dev = list(tiny.generate_samples(None, str(tmp_path), spaces.DatasetSplit.EVAL))
    assert dev == [{"inputs": "Slow service.", "label": 0},
                   {"inputs": "Lovely patio.", "label": 1}]
    assert len(yelp_server.requests) == 1  # the archive is downloaded once


def test_generates_records_vocab_and_shards(tiny, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    tiny.generate_data(data_dir, tmp_dir)
    assert sorted(f for f in os.listdir(data_dir) if not f.startswith(".")) == [
        "sentiment_yelp_polarity_tiny-dev-00000-of-00001",
        "sentiment_yelp_polarity_tiny-train-00000-of-00002",
        "sentiment_yelp_polarity_tiny-train-00001-of-00002",
        "vocab.sentiment_yelp_polarity_tiny.256.subwords"]
    encoders = tiny.get_feature_encoders(data_dir)
    labels = encoders["targets"]

    def rows(paths):
        examples = corpus_testing.read_examples(paths)
        assert all(ex["inputs"][-1] == text_encoder.EOS_ID for ex in examples)
        return sorted((labels.decode(ex["targets"]), encoders["inputs"].decode(ex["inputs"][:-1]))
                      for ex in examples)

    assert rows(tiny.dev_filepaths(data_dir, 1, True)) == [("1", "Slow service."),
                                                          ("2", "Lovely patio.")]
    assert [label for label, _ in rows(tiny.training_filepaths(data_dir, 2, True))] == \
        ["1", "1", "2", "2"]
    hp = tiny.get_hparams()
    assert hp.modality == {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
    assert hp.vocab_size["targets"] == 2


def test_an_extracted_folder_or_archive_in_tmp_dir_is_not_downloaded(tiny, yelp_server,
                                                                    tmp_path):
    for name, text in _members(train='"2","Good."\n', test='"1","Bad."\n').items():
        corpus_testing.write_file(tmp_path / "folder" / name, text)
    assert list(tiny.generate_samples(None, str(tmp_path / "folder"),
                                      spaces.DatasetSplit.TRAIN)) == [{"inputs": "Good.",
                                                                       "label": 1}]
    corpus_testing.write_tgz(tmp_path / "archive" / "yelp_review_polarity_csv.tgz",
                             _members(train='"2","Good."\n', test='"1","Bad."\n'))
    assert list(tiny.generate_samples(None, str(tmp_path / "archive"),
                                      spaces.DatasetSplit.EVAL)) == [{"inputs": "Bad.",
                                                                      "label": 0}]
    assert yelp_server.requests == []


def test_a_bad_row_is_a_one_line_error_naming_file_and_row(tiny, tmp_path):
    for name, text in _members(train='"2","Good."\n"3","Too many stars."\n').items():
        corpus_testing.write_file(tmp_path / name, text)
    with pytest.raises(ValueError, match=r"train.csv row 2: \['3', 'Too many stars.'\] is not"):
        list(tiny.generate_samples(None, str(tmp_path), spaces.DatasetSplit.TRAIN))
