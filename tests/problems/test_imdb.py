"""sentiment_imdb against a local server holding an aclImdb_v1.tar.gz-shaped archive.

The archive has the real name, URL path and layout: aclImdb/{train,test}/{pos,neg}/
<id>_<stars>.txt, one review a file, plus the unlabelled aclImdb/train/unsup that is not read.
"""
import os

import pytest

import corpus_testing

from t2t.core import download, registry
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import imdb, spaces

REVIEWS = {
    ("train", "pos"): ["A wonderful film, I loved every minute of it.",
                       "Great acting and a great story.<br /><br />Highly recommended!",
                       "The best movie I have seen this year.",
                       "Funny, warm and beautifully shot.",
                       "I would watch it again tomorrow."],
    ("train", "neg"): ["A boring film, I hated every minute of it.",
                       "Terrible acting and a terrible story.",
                       "The worst movie I have seen this year.",
                       "Dull, cold and badly shot.",
                       "I want my two hours back."],
    ("test", "pos"): ["Loved it.", "A great story, well told."],
    ("test", "neg"): ["Hated it.", "A terrible story, badly told.", "Not worth watching."],
}


def _members(reviews):
    members = {"aclImdb/README": "Large Movie Review Dataset v1.0\n", "aclImdb/imdb.vocab": "the\n",
               "aclImdb/train/unsup/0_0.txt": "Unlabelled: never read."}
    for (split, polarity), texts in reviews.items():
        for i, text in enumerate(texts):
            stars = 9 if polarity == "pos" else 2
            members["aclImdb/%s/%s/%d_%d.txt" % (split, polarity, i, stars)] = text + "\n"
    return members


@pytest.fixture(scope="module")
def imdb_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("imdb")
    corpus_testing.write_tgz(corpus_testing.served_path(root, imdb.SentimentIMDB.URL),
                             _members(REVIEWS))
    with corpus_testing.serve_tree(root) as server:
        yield server


corpus_testing.register_user_subclass(imdb.SentimentIMDB, "sentiment_imdb_tiny")


@pytest.fixture
def tiny(imdb_server):
    del imdb_server.requests[:]
    problem = registry.problem("sentiment_imdb_tiny")
    problem.URL = corpus_testing.local_url(imdb_server.url, imdb.SentimentIMDB.URL)
    return problem


def test_t2t_names_url_and_labels():
    assert imdb.SentimentIMDB.URL == \
        "http://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
    p = registry.problem("sentiment_imdb")
    assert type(p) is imdb.SentimentIMDB and p.is_generate_per_split
    assert p.vocab_filename == "vocab.sentiment_imdb.8192.subwords"
    assert (p.num_classes, p.class_labels(None)) == (2, ["neg", "pos"])
    assert [s["shards"] for s in p.dataset_splits] == [10, 1]
    chars = registry.problem("sentiment_imdb_characters")
    assert chars.vocab_type == "character" and chars.task_id == spaces.TaskID.EN_CHR_SENT
    listed = registry.help_string()  # what --registry_help prints
    assert "  * sentiment_imdb\n" in listed and "  * sentiment_imdb_characters\n" in listed


def test_generates_reviews_and_labels(tiny, imdb_server, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    tiny.generate_data(data_dir, tmp_dir)
    assert imdb_server.requests == ["/~amaas/data/sentiment/aclImdb_v1.tar.gz"]
    assert os.path.isfile(os.path.join(data_dir, "vocab.sentiment_imdb_tiny.256.subwords"))
    encoders = tiny.get_feature_encoders(data_dir)
    labels = encoders["targets"]
    assert isinstance(labels, text_encoder.ClassLabelEncoder)

    def reviews(paths):
        examples = corpus_testing.read_examples(paths)
        assert all(set(ex) == {"inputs", "targets"} and len(ex["targets"]) == 1 and
                   ex["inputs"][-1] == text_encoder.EOS_ID for ex in examples)
        return sorted((labels.decode(ex["targets"]), encoders["inputs"].decode(ex["inputs"][:-1]))
                      for ex in examples)

    def expected(split):
        return sorted((polarity, text) for (s, polarity), texts in REVIEWS.items()
                      if s == split for text in texts)

    assert reviews(tiny.training_filepaths(data_dir, 2, True)) == expected("train")
    assert reviews(tiny.dev_filepaths(data_dir, 1, True)) == expected("test")
    hp = tiny.get_hparams()
    assert hp.modality == {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
    assert hp.vocab_size == {"inputs": encoders["inputs"].vocab_size, "targets": 2}


def test_samples_come_pos_first_in_file_name_order(tiny, tmp_path):
    samples = list(tiny.generate_samples(None, str(tmp_path), spaces.DatasetSplit.EVAL))
    assert samples == [{"inputs": "Loved it.", "label": 1},
                       {"inputs": "A great story, well told.", "label": 1},
                       {"inputs": "Hated it.", "label": 0},
                       {"inputs": "A terrible story, badly told.", "label": 0},
                       {"inputs": "Not worth watching.", "label": 0}]


def test_an_extracted_folder_or_archive_in_tmp_dir_is_not_downloaded(tiny, imdb_server,
                                                                    tmp_path):
    few = {("train", "pos"): ["Good."], ("train", "neg"): ["Bad."],
           ("test", "pos"): ["Fine."], ("test", "neg"): ["Awful."]}
    for name, text in _members(few).items():
        corpus_testing.write_file(tmp_path / "folder" / name, text)
    samples = list(tiny.generate_samples(None, str(tmp_path / "folder"),
                                         spaces.DatasetSplit.TRAIN))
    assert samples == [{"inputs": "Good.", "label": 1}, {"inputs": "Bad.", "label": 0}]

    corpus_testing.write_tgz(tmp_path / "archive" / "aclImdb_v1.tar.gz", _members(few))
    samples = list(tiny.generate_samples(None, str(tmp_path / "archive"),
                                         spaces.DatasetSplit.EVAL))
    assert samples == [{"inputs": "Fine.", "label": 1}, {"inputs": "Awful.", "label": 0}]
    assert imdb_server.requests == []


def test_an_archive_without_the_reviews_folder_is_a_one_line_error(tiny, tmp_path):
    corpus_testing.write_tgz(tmp_path / "aclImdb_v1.tar.gz", {"other/README": "x\n"})
    with pytest.raises(download.DownloadError,
                       match="aclImdb_v1.tar.gz holds no aclImdb; delete the archive"):
        next(tiny.generate_samples(None, str(tmp_path), spaces.DatasetSplit.TRAIN))
