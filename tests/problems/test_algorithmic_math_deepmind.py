"""algorithmic_math_deepmind_all against a local server holding a tiny archive laid out as the
real mathematics_dataset-v1.0.tar.gz (mathematics_dataset-v1.0/<folder>/<module>.txt)."""
import os

import pytest

import corpus_testing

from t2t.core import download
from t2t.core import registry
from t2t.problems import algorithmic_math_deepmind as dm

MEMBERS = {
    "mathematics_dataset-v1.0/train-easy/b__b.txt": "What is 2 + 3?\n5\nWhat is 1 - 4?\n-3\n",
    "mathematics_dataset-v1.0/train-easy/a__a.txt": "Solve 2*x = 6 for x.\n3\n",
    "mathematics_dataset-v1.0/train-medium/a__a.txt": "Is 7 prime?\nTrue\n",
    "mathematics_dataset-v1.0/train-hard/a__a.txt": "Let f(x) = x**2. What is f(3)?\n9\n",
    "mathematics_dataset-v1.0/interpolate/a__a.txt": "What is 10 - 1?\n9\n",
    "mathematics_dataset-v1.0/extrapolate/a__a.txt": "Calculate 2*\u00e9.\n2*\u00e9\n",
}
TRAIN = [("Solve 2*x = 6 for x.", "3"), ("What is 2 + 3?", "5"), ("What is 1 - 4?", "-3"),
         ("Is 7 prime?", "True"), ("Let f(x) = x**2. What is f(3)?", "9")]
DEV = [("What is 10 - 1?", "9"), ("Calculate 2*\u00e9.", "2*\u00e9")]


@pytest.fixture
def server(tmp_path, monkeypatch):
    with corpus_testing.serve_tgz(tmp_path / "served", dm._URL, MEMBERS) as httpd:
        yield corpus_testing.point_at(
            monkeypatch, httpd, [(dm.AlgorithmicMathDeepmindAll, "url", dm._URL)])


def _samples(p, tmp_dir, split):
    return [(s["inputs"], s["targets"]) for s in p.generate_samples(
        os.path.join(tmp_dir, "data"), tmp_dir, split)]


def test_samples_are_text_pairs_in_sorted_order_and_downloaded_once(server, tmp_path):
    p = registry.problem("algorithmic_math_deepmind_all")
    tmp_dir = str(tmp_path / "tmp")
    assert _samples(p, tmp_dir, "train") == TRAIN
    assert _samples(p, tmp_dir, "dev") == DEV
    assert _samples(p, tmp_dir, "test") == DEV  # as T2T: every other split is the eval folders
    assert server.requests == ["/mathematics-dataset/mathematics_dataset-v1.0.tar.gz"]


def test_generate_data_writes_128_training_shards_and_byte_ids(server, tmp_path):
    data_dir = str(tmp_path / "data")
    dm.AlgorithmicMathDeepmindAll().generate_data(data_dir, str(tmp_path / "tmp"))
    names = sorted(n for n in os.listdir(data_dir) if not n.startswith("."))
    assert names == (["algorithmic_math_deepmind_all-dev-00000-of-00001"] +
                     ["algorithmic_math_deepmind_all-train-%05d-of-00128" % i
                      for i in range(128)])
    encode = lambda text: [b + 2 for b in text.encode("utf-8")] + [1]  # noqa: E731
    dev = corpus_testing.read_examples([os.path.join(data_dir, names[0])])
    assert sorted((r["inputs"], r["targets"]) for r in dev) == sorted(
        (encode(q), encode(a)) for q, a in DEV)
    train = corpus_testing.read_examples([os.path.join(data_dir, n) for n in names[1:]])
    assert sorted((r["inputs"], r["targets"]) for r in train) == sorted(
        (encode(q), encode(a)) for q, a in TRAIN)


def test_a_folder_in_tmp_dir_is_used_without_a_download(tmp_path, monkeypatch):
    monkeypatch.setattr(dm.AlgorithmicMathDeepmindAll, "url", "http://127.0.0.1:9/none.tar.gz")
    for name, text in MEMBERS.items():
        corpus_testing.write_file(tmp_path / "a" / name, text)
        # T2T's own folder name, as someone may have laid it out for T2T.
        corpus_testing.write_file(tmp_path / "b" / name.replace(dm.DATASET_DIR, "v1.0"), text)
    for folder in ("a", "b"):
        assert _samples(dm.AlgorithmicMathDeepmindAll(), str(tmp_path / folder), "dev") == DEV


def test_odd_lines_or_an_empty_archive_are_one_line_errors(tmp_path, monkeypatch):
    corpus_testing.write_file(tmp_path / "odd.txt", "Q1\nA1\nQ2\n")
    with pytest.raises(ValueError, match="odd.txt ends with a question without an answer"):
        list(dm.question_answer_pairs(str(tmp_path / "odd.txt")))
    monkeypatch.setattr(dm.AlgorithmicMathDeepmindAll, "url", "http://127.0.0.1:9/none.tar.gz")
    corpus_testing.write_file(tmp_path / "t" / dm.DATASET_DIR / "README", "empty")
    with pytest.raises(download.DownloadError, match=r"has no \{interpolate,extrapolate\}"):
        _samples(dm.AlgorithmicMathDeepmindAll(), str(tmp_path / "t"), "dev")
