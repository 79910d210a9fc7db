"""T2T's lm1b_imdb multi-task problem against a local server holding a One-Billion-Word-shaped
corpus and an aclImdb_v1.tar.gz-shaped archive (the real names, URL paths and layouts): both
tasks generated at the character level, then read back mixed through the dataset."""
import importlib

import pytest

import corpus_testing

from t2t.core import registry, t2t_import_alias
from t2t.core.modes import ModeKeys
from t2t.encoders import text_encoder
from t2t.problems import imdb, lm1b, lm1b_imdb, text2text

WORDS = ["<S>", "</S>", "<UNK>", "the", "a", "cat", "dog", "sat", "ran", "."]
TRAIN = ["the cat sat .", "a dog ran ."]
HELDOUT = ["the dog sat ."]
REVIEWS = {("train", "pos"): ["Loved it."], ("train", "neg"): ["Hated it."],
           ("test", "pos"): ["Great."], ("test", "neg"): ["Awful."]}


def _lm1b_members():
    base = lm1b.CORPUS_DIR + "/"
    members = {base + "training-monolingual.tokenized.shuffled/news.en-%05d-of-00100" % i:
               TRAIN[i % len(TRAIN)] + "\n" for i in range(1, 100)}
    held = base + "heldout-monolingual.tokenized.shuffled/news.en.heldout-%05d-of-00050"
    members[held % 0] = "".join(line + "\n" for line in HELDOUT)
    return members


def _imdb_members():
    return {"aclImdb/%s/%s/0_5.txt" % key: texts[0] + "\n" for key, texts in REVIEWS.items()}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm1b_imdb")
    corpus_testing.write_tgz(corpus_testing.served_path(root, lm1b.CORPUS_URL), _lm1b_members())
    corpus_testing.write_file(corpus_testing.served_path(root, lm1b.VOCAB_URL),
                              "".join(word + "\n" for word in WORDS))
    corpus_testing.write_tgz(corpus_testing.served_path(root, imdb.SentimentIMDB.URL),
                             _imdb_members())
    with corpus_testing.serve_tree(root) as httpd:
        yield httpd


@pytest.fixture
def local(server, monkeypatch):
    return corpus_testing.point_at(monkeypatch, server, [
        (lm1b.LanguagemodelLm1b32k, "corpus_url", lm1b.CORPUS_URL),
        (lm1b.LanguagemodelLm1b32k, "vocab_url", lm1b.VOCAB_URL),
        (imdb.SentimentIMDB, "URL", imdb.SentimentIMDB.URL)])


def _rows(dataset, n=None):
    dataset = dataset if n is None else dataset.take(n)
    return [example["targets"].tolist() for example in dataset.as_numpy_iterator()]


def test_t2t_names_tasks_and_alias():
    problem = registry.problem("languagemodel_lm1b_sentiment_imdb")
    assert type(problem) is lm1b_imdb.LanguagemodelLm1bSentimentIMDB
    assert [type(t) for t in problem.task_list] == [lm1b.LanguagemodelLm1bCharacters,
                                                    imdb.SentimentIMDBCharacters]
    assert problem.vocab_type == text2text.VocabType.CHARACTER
    assert "  * languagemodel_lm1b_sentiment_imdb\n" in registry.help_string()
    t2t_import_alias.uninstall()
    assert t2t_import_alias.install()
    try:
        assert importlib.import_module("tensor2tensor.data_generators.lm1b_imdb") is lm1b_imdb
    finally:
        t2t_import_alias.uninstall()


def test_generates_both_tasks_and_mixes_them(local, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem = registry.problem("languagemodel_lm1b_sentiment_imdb")
    problem.generate_data(data_dir, tmp_dir)
    assert sorted(local.requests) == sorted([
        "/lm-benchmark/1-billion-word-language-modeling-benchmark-r13output.tar.gz",
        "/models/LM_LSTM_CNN/vocab-2016-09-10.txt",
        "/~amaas/data/sentiment/aclImdb_v1.tar.gz"])
    assert not [n for n in (tmp_path / "data").iterdir() if n.name.startswith("vocab.")]
    chars = text_encoder.ByteTextEncoder()
    lm_id, imdb_id = 258, 259

    def lm_row(line):
        return [lm_id] + chars.encode(line) + [text_encoder.EOS_ID]

    def imdb_row(review, label):
        return chars.encode(review) + [imdb_id, chars.encode(label)[0]]

    hparams = registry.hparams("transformer_tiny")
    rows = _rows(problem.dataset(ModeKeys.EVAL, data_dir=data_dir, hparams=hparams))
    assert [task.task_id for task in problem.task_list] == [lm_id, imdb_id]
    assert rows[0] == lm_row(HELDOUT[0])
    assert sorted(rows[1:]) == sorted([imdb_row("Great.", "1"), imdb_row("Awful.", "0")])
    # 258 byte ids, two task ids and room for the two classes (as T2T)
    assert problem.get_hparams(hparams).vocab_size["targets"] == 258 + 2 + 2

    hparams.multiproblem_schedule_threshold = 0.5
    drawn = {tuple(row) for row in _rows(problem.dataset(ModeKeys.TRAIN, data_dir=data_dir,
                                                         hparams=hparams), 40)}
    lm_rows = {tuple(lm_row(line)) for line in TRAIN}
    imdb_rows = {tuple(imdb_row("Loved it.", "1")), tuple(imdb_row("Hated it.", "0"))}
    assert drawn <= lm_rows | imdb_rows and drawn & lm_rows and drawn & imdb_rows
