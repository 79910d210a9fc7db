"""sentiment_yelp_full against a local server holding a yelp_review_full_csv.tgz-shaped
archive: yelp_review_full_csv/{train,test}.csv of `"<1..5>","<review>"` rows.
"""
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.problems import sentiment, spaces, yelp_full

TRAIN = '"5","Perfect."\n"1","Awful."\n"3","It was ok, I guess."\n"4","Good ""pho""."\n'
TEST = '"2","Meh."\n"5","Wow!"\n'
MEMBERS = {"yelp_review_full_csv/readme.txt": "Yelp full\n",
           "yelp_review_full_csv/train.csv": TRAIN, "yelp_review_full_csv/test.csv": TEST}


@pytest.fixture(scope="module")
def yelp_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("yelp_full")
    corpus_testing.write_tgz(corpus_testing.served_path(root, yelp_full.SentimentYelpFull.URL),
                             MEMBERS)
    with corpus_testing.serve_tree(root) as server:
        yield server


corpus_testing.register_user_subclass(yelp_full.SentimentYelpFull, "sentiment_yelp_full_tiny")


@pytest.fixture
def tiny(yelp_server):
    del yelp_server.requests[:]
    problem = registry.problem("sentiment_yelp_full_tiny")
    problem.URL = corpus_testing.local_url(yelp_server.url, yelp_full.SentimentYelpFull.URL)
    return problem


def test_t2t_names_url_and_labels():
    assert yelp_full.SentimentYelpFull.URL == \
        "https://s3.amazonaws.com/fast-ai-nlp/yelp_review_full_csv.tgz"
    p = registry.problem("sentiment_yelp_full")
    assert type(p) is yelp_full.SentimentYelpFull
    assert isinstance(p, sentiment.YelpReviewProblem)
    assert p.vocab_filename == "vocab.sentiment_yelp_full.8192.subwords"
    assert (p.num_classes, p.class_labels(None)) == (5, ["1", "2", "3", "4", "5"])
    assert [s["shards"] for s in p.dataset_splits] == [10, 1]
    chars = registry.problem("sentiment_yelp_full_characters")
    assert chars.vocab_type == "character" and chars.task_id == spaces.TaskID.EN_CHR_SENT


def test_generates_five_classes_from_the_download(tiny, yelp_server, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    assert list(tiny.generate_samples(None, tmp_dir, spaces.DatasetSplit.TRAIN)) == [
        {"inputs": "Perfect.", "label": 4}, {"inputs": "Awful.", "label": 0},
        {"inputs": "It was ok, I guess.", "label": 2}, {"inputs": 'Good "pho".', "label": 3}]
    tiny.generate_data(data_dir, tmp_dir)
    assert yelp_server.requests == ["/fast-ai-nlp/yelp_review_full_csv.tgz"]
    assert sorted(f for f in os.listdir(data_dir) if not f.startswith(".")) == [
        "sentiment_yelp_full_tiny-dev-00000-of-00001",
        "sentiment_yelp_full_tiny-train-00000-of-00002",
        "sentiment_yelp_full_tiny-train-00001-of-00002",
        "vocab.sentiment_yelp_full_tiny.256.subwords"]
    encoders = tiny.get_feature_encoders(data_dir)
    dev = sorted((encoders["targets"].decode(ex["targets"]),
                  encoders["inputs"].decode(ex["inputs"][:-1]))
                 for ex in corpus_testing.read_examples(tiny.dev_filepaths(data_dir, 1, True)))
    assert dev == [("2", "Meh."), ("5", "Wow!")]
    assert tiny.get_hparams().vocab_size["targets"] == 5


def test_a_pre_placed_archive_is_not_downloaded(tiny, yelp_server, tmp_path):
    corpus_testing.write_tgz(tmp_path / "yelp_review_full_csv.tgz", MEMBERS)
    assert list(tiny.generate_samples(None, str(tmp_path), spaces.DatasetSplit.EVAL)) == [
        {"inputs": "Meh.", "label": 1}, {"inputs": "Wow!", "label": 4}]
    assert yelp_server.requests == []
