"""programming_desc2code_{py,cpp} against a local server holding a
description2code_current.zip-shaped archive at the path and query of T2T's Google Drive URL:
description2code_current/{codechef/easy,codeforces}/<problem>/description/description.txt,
solutions_python/*.txt and solutions_c++/*.txt (some of them Java, filtered out by content).
"""
import os
import random

import pytest

import corpus_testing

from t2t.core import download, registry
from t2t.encoders import text_encoder
from t2t.problems import desc2code, spaces

ROOT = "description2code_current/"
N_PROBLEMS = 30  # 30 // 25 = 1 dev problem


def _problem_dir(i):
    return ROOT + ("codechef/easy/P%02d/" % i if i % 2 else "codeforces/%d_A/" % i)


def _members():
    members = {"__MACOSX/" + ROOT + "codeforces/0_A/description/._description.txt": b"\x00\x05",
               ROOT + "README.txt": "Description2Code\n"}
    for i in range(N_PROBLEMS):
        base = _problem_dir(i)
        members[base + "description/description.txt"] = "Print %d plus one.\n" % i
        members[base + "solutions_python/1.txt"] = "n = %d\nif n:\n\tprint(n + 1)\n" % i
        members[base + "solutions_python/2.txt"] = "import java.util.*;\nclass A {}\n"
        members[base + "solutions_c++/1.txt"] = ("#include <cstdio>\n// print it\n"
                                                 "int main() {  puts(\"%d\");\n}\n" % (i + 1))
        members[base + "solutions_c++/2.txt"] = "import java.io.*; // java\n"
    # A problem with only C++ solutions: no Python sample.
    members[ROOT + "codechef/easy/CPPONLY/description/description.txt"] = "Only C++.\n"
    members[ROOT + "codechef/easy/CPPONLY/solutions_c++/1.txt"] = "int main() {}\n"
    return members


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("desc2code")
    corpus_testing.write_zip(corpus_testing.served_path(root, desc2code._DATASET_URL),
                             _members())
    with corpus_testing.serve_tree(root) as httpd:
        yield httpd


@pytest.fixture
def local(monkeypatch, server):
    monkeypatch.setattr(desc2code, "_DATASET_URL",
                        corpus_testing.local_url(server.url, desc2code._DATASET_URL))
    del server.requests[:]
    return server


@registry.register_problem("programming_desc2code_py_tiny")
class TinyPy(desc2code.ProgrammingDesc2codePy):
    input_vocab_size = target_vocab_size = 2**8

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 2},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]


def _py(i):
    return "n = %d\nif n:\n    print(n + 1)" % i


def _expected_dev_problem():
    descs = sorted(os.path.join("T", _problem_dir(i), "description", "description.txt")
                   for i in range(N_PROBLEMS))
    random.Random(7531).shuffle(descs)
    return int(descs[0].split("/")[-3].split("_")[0].lstrip("P"))


def test_t2t_names_url_and_vocab_files():
    assert desc2code._DATASET_URL == ("https://drive.google.com/uc?export=download"
                                      "&id=0Bz3fihKG133ceWNFQTQ5S0xhZUk")
    py, cpp = registry.problem("programming_desc2code_py"), registry.problem(
        "programming_desc2code_cpp")
    assert type(py) is desc2code.ProgrammingDesc2codePy
    assert type(cpp) is desc2code.ProgrammingDesc2codeCpp
    assert (py.vocab_input_filename, py.vocab_target_filename) == ("vocab.endefr.32768",
                                                                   "vocab.py.4096")
    assert cpp.vocab_target_filename == "vocab.cpp.4096"
    assert [s["shards"] for s in py.dataset_splits] == [10, 1] and py.is_generate_per_split
    assert (desc2code.PB_PY.target_space, desc2code.PB_CPP.target_space) == (
        spaces.SpaceID.PY_TOK, spaces.SpaceID.CPP_TOK)


def test_split_and_samples_from_the_download(local, tmp_path):
    py = registry.problem("programming_desc2code_py")
    tmp_dir = str(tmp_path)
    infos = list(desc2code.generator_samples(tmp_dir, desc2code.PB_PY))
    # Drive's probe (a file, not a virus-scan page), then the download.
    assert local.requests == [corpus_testing.local_url("", desc2code._DATASET_URL)] * 2
    assert len(infos) == N_PROBLEMS  # CPPONLY has no solutions_python; __MACOSX is outside
    assert all([os.path.basename(f) for f in info.code_files] == ["1.txt"] for info in infos)
    dev = list(py.generate_samples(None, tmp_dir, spaces.DatasetSplit.EVAL))
    i = _expected_dev_problem()
    assert dev == [{"inputs": "Print %d plus one." % i, "targets": _py(i)}]
    train = list(py.generate_samples(None, tmp_dir, spaces.DatasetSplit.TRAIN))
    assert sorted(s["targets"] for s in train) == sorted(_py(j) for j in range(N_PROBLEMS)
                                                         if j != i)
    assert train == list(py.generate_samples(None, tmp_dir, spaces.DatasetSplit.TRAIN))
    cpp = registry.problem("programming_desc2code_cpp")
    cpp_train = list(cpp.generate_samples(None, tmp_dir, spaces.DatasetSplit.TRAIN))
    assert {"inputs": "Only C++.", "targets": "int main() {}"} in cpp_train
    assert {"inputs": "Print 3 plus one.", "targets": '#include <cstdio> int main() { '
            'puts("4"); }'} in cpp_train + list(cpp.generate_samples(
                None, tmp_dir, spaces.DatasetSplit.EVAL))
    assert len(local.requests) == 2  # downloaded and extracted once


def test_generates_records_and_both_vocabularies(local, tmp_path):
    tiny = registry.problem("programming_desc2code_py_tiny")
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    tiny.generate_data(data_dir, tmp_dir)
    assert sorted(f for f in os.listdir(data_dir) if not f.startswith(".")) == [
        "programming_desc2code_py_tiny-dev-00000-of-00001",
        "programming_desc2code_py_tiny-train-00000-of-00002",
        "programming_desc2code_py_tiny-train-00001-of-00002",
        "vocab.endefr.256", "vocab.py.256"]
    encoders = tiny.get_feature_encoders(data_dir)
    assert encoders["inputs"] is not encoders["targets"]
    dev = corpus_testing.read_examples(tiny.dev_filepaths(data_dir, 1, True))
    i = _expected_dev_problem()
    assert [(encoders["inputs"].decode(ex["inputs"][:-1]),
             encoders["targets"].decode(ex["targets"][:-1])) for ex in dev] == [
        ("Print %d plus one." % i, _py(i))]
    assert dev[0]["inputs"][-1] == dev[0]["targets"][-1] == text_encoder.EOS_ID
    train = corpus_testing.read_examples(tiny.training_filepaths(data_dir, 2, True))
    assert len(train) == N_PROBLEMS - 1
    hp = tiny.get_hparams()
    assert hp.vocab_size == {"inputs": encoders["inputs"].vocab_size,
                             "targets": encoders["targets"].vocab_size}


def test_pre_placed_zip_or_folder_is_not_downloaded(local, tmp_path):
    members = {k: v for k, v in _members().items() if "/P01/" in k or "/2_A/" in k}
    corpus_testing.write_zip(tmp_path / "zip" / "description2code_current.zip", members)
    py = registry.problem("programming_desc2code_py")
    assert len(list(desc2code.generator_samples(str(tmp_path / "zip"), desc2code.PB_PY))) == 2
    for name, text in members.items():
        corpus_testing.write_file(tmp_path / "folder" / name, text)
    assert list(py.generate_samples(None, str(tmp_path / "folder"),
                                    spaces.DatasetSplit.EVAL)) == []  # 2 // 25 = 0 dev
    assert len(list(py.generate_samples(None, str(tmp_path / "folder"),
                                        spaces.DatasetSplit.TRAIN))) == 2
    assert local.requests == []


def test_bad_input_is_a_one_line_error(local, tmp_path):
    corpus_testing.write_zip(tmp_path / "description2code_current.zip", {"other/x": "x"})
    with pytest.raises(download.DownloadError, match="holds no description2code_current/; "
                                                     "delete the zip"):
        list(desc2code.generator_samples(str(tmp_path), desc2code.PB_PY))
    with pytest.raises(ValueError, match="vocab.endefr.32768 of problem "
                                         "programming_desc2code_py is missing; run t2t-datagen"):
        registry.problem("programming_desc2code_py").feature_encoders(str(tmp_path))
