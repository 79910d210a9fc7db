"""T2T's lm1b_mnli multi-task problems against a local server holding a One-Billion-Word-shaped
corpus (the real archive name, URL path and layout) and GLUE's `MNLI.zip` (at the path and
query of T2T's Firebase URL): both tasks generated, then read back mixed through the dataset."""
import importlib

import pytest

import corpus_testing

from t2t.core import registry, t2t_import_alias
from t2t.core.modes import ModeKeys
from t2t.encoders import text_encoder
from t2t.problems import lm1b, lm1b_mnli, multinli, text2text

WORDS = ["<S>", "</S>", "<UNK>", "the", "a", "cat", "dog", "sat", "on", "mat", ".", "it", "ran"]
TRAIN = ["the cat sat on a mat .", "a dog ran .", "it sat on the dog ."]
HELDOUT = ["the dog sat .", "a cat ran on it ."]
HEAD = ("index", "promptID", "pairID", "genre", "sentence1_binary_parse",
        "sentence2_binary_parse", "sentence1_parse", "sentence2_parse", "sentence1", "sentence2")
MNLI_TRAIN = [("the cat sat .", "a cat sat .", "entailment"),
              ("a dog ran .", "the dog sat .", "contradiction"),
              ("it ran .", "the cat ran .", "neutral")]
MNLI_DEV = ("the mat sat .", "a mat ran .", "neutral")
LABELS = {"contradiction": 0, "entailment": 1, "neutral": 2}


def _tsv(*rows):
    return "".join("\t".join(row) + "\n" for row in rows)


def _mnli_row(index, s1, s2, *labels):
    return (str(index), str(index * 7), "%de" % index, "fiction", "( %s )" % s1, "( %s )" % s2,
            "(ROOT %s)" % s1, "(ROOT %s)" % s2, s1, s2) + labels


def _lm1b_members():
    base = lm1b.CORPUS_DIR + "/"
    members = {base + "training-monolingual.tokenized.shuffled/news.en-%05d-of-00100" % i:
               TRAIN[i % len(TRAIN)] + "\n" for i in range(1, 100)}
    held = base + "heldout-monolingual.tokenized.shuffled/news.en.heldout-%05d-of-00050"
    members[held % 0] = "".join(line + "\n" for line in HELDOUT)
    members[held % 1] = "never read .\n"
    return members


MNLI_MEMBERS = {
    "MNLI/train.tsv": _tsv(HEAD + ("label1", "gold_label"),
                           *[_mnli_row(i, s1, s2, label, label)
                             for i, (s1, s2, label) in enumerate(MNLI_TRAIN)]),
    "MNLI/dev_matched.tsv": _tsv(HEAD + ("label1", "gold_label"),
                                 _mnli_row(9, MNLI_DEV[0], MNLI_DEV[1], "neutral", "neutral")),
    "MNLI/dev_mismatched.tsv": _tsv(HEAD + ("label1", "gold_label"),
                                    _mnli_row(8, "never", "read", "neutral", "neutral")),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm1b_mnli")
    corpus_testing.write_tgz(corpus_testing.served_path(root, lm1b.CORPUS_URL), _lm1b_members())
    corpus_testing.write_file(corpus_testing.served_path(root, lm1b.VOCAB_URL),
                              "".join(word + "\n" for word in WORDS))
    corpus_testing.write_zip(corpus_testing.served_path(root, multinli._MNLI_URL), MNLI_MEMBERS)
    with corpus_testing.serve_tree(root) as httpd:
        yield httpd


@pytest.fixture
def local(server, monkeypatch):
    for name, url in (("corpus_url", lm1b.CORPUS_URL), ("vocab_url", lm1b.VOCAB_URL)):
        monkeypatch.setattr(lm1b.LanguagemodelLm1b32k, name,
                            corpus_testing.local_url(server.url, url))
    monkeypatch.setattr(multinli, "_MNLI_URL",
                        corpus_testing.local_url(server.url, multinli._MNLI_URL))
    del server.requests[:]
    return server


def _hparams():
    return registry.hparams("transformer_tiny")


def _rows(dataset, n=None):
    dataset = dataset if n is None else dataset.take(n)
    return [example["targets"].tolist() for example in dataset.as_numpy_iterator()]


def test_t2t_names_tasks_and_alias():
    subwords = registry.problem("languagemodel_lm1b_multi_nli_subwords")
    chars = registry.problem("languagemodel_lm1b_multi_nli")
    assert type(subwords) is lm1b_mnli.LanguagemodelLm1bMultiNLISubwords
    assert [type(t) for t in subwords.task_list] == [lm1b.LanguagemodelLm1b32k,
                                                     multinli.MultiNLISharedVocab]
    assert [type(t) for t in chars.task_list] == [lm1b.LanguagemodelLm1bCharacters,
                                                  multinli.MultiNLICharacters]
    assert (subwords.vocab_type, chars.vocab_type) == (text2text.VocabType.SUBWORD,
                                                       text2text.VocabType.CHARACTER)
    listed = registry.help_string()
    assert "  * languagemodel_lm1b_multi_nli\n" in listed
    assert "  * languagemodel_lm1b_multi_nli_subwords\n" in listed
    t2t_import_alias.uninstall()
    assert t2t_import_alias.install()
    try:
        assert importlib.import_module("tensor2tensor.data_generators.lm1b_mnli") is lm1b_mnli
    finally:
        t2t_import_alias.uninstall()


def test_subwords_generate_both_tasks_and_mix_them(local, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem = registry.problem("languagemodel_lm1b_multi_nli_subwords")
    problem.generate_data(data_dir, tmp_dir)
    assert sorted(local.requests) == sorted([
        "/lm-benchmark/1-billion-word-language-modeling-benchmark-r13output.tar.gz",
        "/models/LM_LSTM_CNN/vocab-2016-09-10.txt",
        corpus_testing.local_url("", multinli._MNLI_URL)])
    # One vocabulary, lm1b32k's, for both tasks.
    vocabs = sorted(n for n in (tmp_path / "data").iterdir() if n.name.startswith("vocab."))
    assert [v.name for v in vocabs] == ["vocab.languagemodel_lm1b32k.32768.subwords"]
    encoder = text_encoder.SubwordTextEncoder(str(vocabs[0]))
    size = encoder.vocab_size
    lm_id, nli_id = size, size + 1
    concat = encoder.encode("$")[0]

    def lm_row(line):
        return [lm_id] + encoder.encode(line) + [text_encoder.EOS_ID]

    def nli_row(s1, s2, label):
        return encoder.encode(s1) + [concat] + encoder.encode(s2) + [nli_id,
                                                                    size + 2 + LABELS[label]]

    # Evaluation: each task's dev examples in turn (lm1b's held-out file, shuffled at
    # generation, and MNLI's dev_matched).
    rows = _rows(problem.dataset(ModeKeys.EVAL, data_dir=data_dir, hparams=_hparams()))
    assert rows[1] == nli_row(*MNLI_DEV) and len(rows) == 3
    assert sorted([rows[0], rows[2]]) == sorted(lm_row(line) for line in HELDOUT)
    hp = problem.get_hparams(_hparams())
    assert hp.vocab_size["targets"] == size + 2 + 3  # two task ids, three labels
    assert [task.task_id for task in problem.task_list] == [lm_id, nli_id]
    # Training draws from both tasks' training data (constant schedule, half each).
    hp = _hparams()
    hp.multiproblem_schedule_threshold = 0.5
    drawn = _rows(problem.dataset(ModeKeys.TRAIN, data_dir=data_dir, hparams=hp), 60)
    lm_rows = {tuple(lm_row(line)) for line in TRAIN}
    nli_rows = {tuple(nli_row(*pair)) for pair in MNLI_TRAIN}
    assert {tuple(row) for row in drawn} <= lm_rows | nli_rows
    from_lm = [row for row in drawn if row[0] == lm_id]
    assert 10 < len(from_lm) < 50 and {tuple(row) for row in drawn} & nli_rows


def test_characters_rows_end_in_the_label_digit(local, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem = registry.problem("languagemodel_lm1b_multi_nli")
    problem.generate_data(data_dir, tmp_dir)
    assert not [n for n in (tmp_path / "data").iterdir() if n.name.startswith("vocab.")]
    chars = text_encoder.ByteTextEncoder()
    lm_id, nli_id = 258, 259
    rows = _rows(problem.dataset(ModeKeys.EVAL, data_dir=data_dir, hparams=_hparams()))
    # premise $ hypothesis, the task id, the label's digit ("2": neutral).
    assert rows[1] == chars.encode(MNLI_DEV[0] + "$" + MNLI_DEV[1]) + [nli_id,
                                                                      chars.encode("2")[0]]
    assert sorted([rows[0], rows[2]]) == sorted([lm_id] + chars.encode(line) + [1]
                                                for line in HELDOUT)
