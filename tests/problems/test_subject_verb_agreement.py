"""The subject-verb agreement problems against a local server holding an agr_50-shaped tsv.gz."""
import gzip
import random

import pytest

import corpus_testing

from t2t.core import registry
from t2t.layers.modality_type import ModalityType
from t2t.problems import spaces, subject_verb_agreement as sva

HEADER = "sentence\torig_sentence\tverb_index\tverb_pos\tn_intervening\tn_diff_intervening\n"
ROWS = [("the cat sleeps .", 3, "VBZ", 0, 0), ("the cats sleep .", 3, "VBP", 0, 0),
        ("the dog near the cats barks .", 6, "VBZ", 1, 1),
        ("the dogs near the cat bark .", 6, "VBP", 1, 1),
        ("the key to the cabinets is here .", 6, "VBZ", 1, 1),
        ("the keys to the cabinet are here .", 6, "VBP", 1, 1),
        ("the man with the dog and the cats runs .", 9, "VBZ", 2, 1),
        ("the men runs .", 3, "VBP", 0, 0)]


def _tsv_gz():
    lines = "".join("%s\t%s\t%d\t%s\t%d\t%d\n" % (s, s, i, pos, n, d)
                    for s, i, pos, n, d in ROWS)
    return gzip.compress((HEADER + lines).encode("utf-8"), mtime=0)


@pytest.fixture(scope="module")
def sva_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("sva")
    corpus_testing.write_file(corpus_testing.served_path(root, sva._URL), _tsv_gz())
    with corpus_testing.serve_tree(root) as server:
        yield server


@pytest.fixture
def local_sva(sva_server, monkeypatch):
    return corpus_testing.point_at(monkeypatch, sva_server, [(sva._SvaData, "url", sva._URL)])


class _Half:
    """As user code sets the proportions: half train, a quarter dev, one shard each."""
    train_proportion = 0.5
    validation_proportion = 0.25
    dataset_splits = [{"split": split, "shards": 1} for split in (
        spaces.DatasetSplit.TRAIN, spaces.DatasetSplit.EVAL, spaces.DatasetSplit.TEST)]


@registry.register_problem
class SvaNumberPredictionHalf(_Half, sva.SvaNumberPrediction):
    pass


@registry.register_problem
class SvaLanguageModelingHalf(_Half, sva.SvaLanguageModeling):
    pass


def _shuffled():
    rows = list(ROWS)
    random.Random(1).shuffle(rows)  # T2T's random.seed(1); random.shuffle
    return rows


def test_t2t_names_url_and_splits():
    assert sva._URL == "http://tallinzen.net/media/rnn_agreement/agr_50_mostcommon_10K.tsv.gz"
    for name in ("sva_number_prediction", "sva_language_modeling"):
        problem = registry.problem(name)
        assert problem.vocab_filename == "vocab.%s.tokens" % name
        assert [s["shards"] for s in problem.dataset_splits] == [1, 1, 10]
        assert (problem.train_proportion, problem.validation_proportion) == (0.09, 0.01)
    assert registry.problem("sva_number_prediction").class_labels(None) == ["VBZ", "VBP"]


def test_number_prediction_reads_the_words_before_the_verb(local_sva, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem = registry.problem("sva_number_prediction_half")
    problem.generate_data(data_dir, tmp_dir)
    assert local_sva.requests == ["/media/rnn_agreement/agr_50_mostcommon_10K.tsv.gz"]
    vocab = (tmp_path / "data" / "vocab.sva_number_prediction_half.tokens").read_text()
    assert vocab.splitlines()[:4] == ["<pad>", "<EOS>", "the", "."]
    encoders = problem.feature_encoders(data_dir)
    rows = _shuffled()
    expected = {"train": rows[:4], "dev": rows[4:6],
                "test": [r for r in rows[6:] if r[3] == r[4]]}
    for split, fn in (("train", problem.training_filepaths), ("dev", problem.dev_filepaths),
                      ("test", problem.test_filepaths)):
        got = [(encoders["inputs"].decode(ex["inputs"][:-1]), ex["targets"])
               for ex in corpus_testing.read_examples(fn(data_dir, 1, True))]
        assert sorted(got) == sorted((" ".join(s.split()[:i - 1]), [{"VBZ": 0, "VBP": 1}[p]])
                                     for s, i, p, _, _ in expected[split]), split
    problem.get_feature_encoders(data_dir)
    assert problem.get_hparams().modality["targets"] == ModalityType.CLASS_LABEL


def test_language_modeling_ends_at_the_verb_and_reuses_a_placed_file(local_sva, tmp_path):
    corpus_testing.write_file(tmp_path / "tmp" / sva._TAR, _tsv_gz())
    samples = list(registry.problem("sva_language_modeling_half").generate_samples(
        str(tmp_path / "data"), str(tmp_path / "tmp"), spaces.DatasetSplit.TRAIN))
    assert samples == [{"targets": " ".join(s.split()[:i])} for s, i, _, _, _ in _shuffled()[:4]]
    assert local_sva.requests == []
