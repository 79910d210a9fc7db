"""The bAbI problems against a local server holding a tasks_1-20_v1-2.tar.gz-shaped archive.

Two tasks of the "en" subset (qa1 and qa8, whose list answers join into one token) with a
train and test file each, numbered story lines and tab-separated questions.
"""
import pytest
import tensorflow as tf

import corpus_testing

from t2t.core import registry
from t2t.layers.modality_type import ModalityType
from t2t.problems import babi_qa, spaces

QA1_TRAIN = ("1 Mary moved to the bathroom.\n2 John went to the hallway.\n"
             "3 Where is Mary? \tbathroom\t1\n4 Daniel went back to the hallway.\n"
             "5 Where is Daniel? \thallway\t4\n1 Sandra went to the garden.\n"
             "2 Where is Sandra? \tgarden\t1\n")
QA1_TEST = "1 John moved to the garden.\n2 Where is John? \tgarden\t1\n"
QA8_TRAIN = "1 Mary got the milk.\n2 Mary took the apple.\n3 What is Mary carrying? \tmilk,apple\t1 2\n"
QA8_TEST = "1 John got the milk.\n2 What is John carrying? \tmilk\t1\n"
EN = babi_qa._DIR_NAME + "/en/"
MEMBERS = {EN + "qa1_single-supporting-fact_train.txt": QA1_TRAIN,
           EN + "qa1_single-supporting-fact_test.txt": QA1_TEST,
           EN + "qa8_lists-sets_train.txt": QA8_TRAIN, EN + "qa8_lists-sets_test.txt": QA8_TEST,
           babi_qa._DIR_NAME + "/README": "bAbI tasks\n"}


@pytest.fixture(scope="module")
def babi_server(tmp_path_factory):
    with corpus_testing.serve_tgz(tmp_path_factory.mktemp("babi"), babi_qa._URL,
                                  MEMBERS) as server:
        yield server


@pytest.fixture
def local_babi(babi_server, monkeypatch):
    return corpus_testing.point_at(monkeypatch, babi_server,
                                   [(babi_qa.BabiQa, "url", babi_qa._URL)])


@registry.register_problem
class BabiQaConcatTask1Tiny(babi_qa.BabiQaConcat):
    """As user code defines a task: subset and task id."""
    babi_subset = "en"
    babi_task_id = "qa1"


def test_t2t_names_and_files():
    names = set(babi_qa.REGISTERED_PROBLEMS)
    assert len(names) == 42 and names == {
        "babi_qa_concat_%s_%s" % (task, size) for size in ("1k", "10k")
        for task in ["all_tasks"] + ["task%d" % i for i in range(1, 21)]}
    assert set(registry.list_problems()) >= names
    task8 = registry.problem("babi_qa_concat_task8_10k")
    assert (task8.babi_subset, task8.babi_task_id) == ("en-10k", "qa8")
    assert task8.dataset_filename() == "babi_qa_en-10k_qa8_lists-sets"
    assert task8.vocab_filename == "vocab.babi_qa_en-10k_qa8_lists-sets.tokens"
    assert task8.vocab_file == "en-10k_qa8_lists-sets.vocab"
    assert registry.problem("babi_qa_concat_all_tasks_1k").babi_task_id == "qa0"
    assert babi_qa._normalize_string("Where is Mary? ") == "Where is Mary ?"
    with pytest.raises(ValueError, match="cannot be reversed"):
        registry.problem("babi_qa_concat_task1_1k_rev")


def test_generates_questions_with_their_stories_and_answer_classes(local_babi, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem = registry.problem("babi_qa_concat_task1_tiny")
    problem.generate_data(data_dir, tmp_dir)
    assert local_babi.requests == ["/jaseweston/babi/tasks_1-20_v1-2.tar.gz"]
    # Joint training: the training split is every task's train file, joined.
    joined = tmp_path / "tmp" / babi_qa._DIR_NAME / "en" / "qa0_all-tasks_train.txt"
    assert joined.read_text() == QA1_TRAIN + QA8_TRAIN
    vocab = (tmp_path / "data" / "vocab.babi_qa_en_qa1_single-supporting-fact.tokens"
             ).read_text().splitlines()
    assert vocab[:4] == ["<pad>", "<EOS>", ".", "the"] and "milkapple" in vocab
    encoders = problem.feature_encoders(data_dir)

    def rows(split_paths):
        out = []
        for ex in corpus_testing.read_examples(split_paths):
            assert ex["inputs"][-1] == ex["context"][-1] == 1 and len(ex["targets"]) == 1
            out.append((encoders["inputs"].decode(ex["inputs"][:-1]),
                        encoders["inputs"].decode(ex["context"][:-1]),
                        encoders["targets"].decode(ex["targets"])))
        return sorted(out)

    assert rows(problem.training_filepaths(data_dir, 1, True)) == sorted([
        ("Where is Mary ?", "Mary moved to the bathroom . John went to the hallway .",
         "bathroom"),
        ("Where is Daniel ?", "Mary moved to the bathroom . John went to the hallway . "
                              "Daniel went back to the hallway .", "hallway"),
        ("Where is Sandra ?", "Sandra went to the garden .", "garden"),
        ("What is Mary carrying ?", "Mary got the milk . Mary took the apple .", "milkapple")])
    assert rows(problem.dev_filepaths(data_dir, 1, True)) == [
        ("Where is John ?", "John moved to the garden .", "garden")]

    problem.get_feature_encoders(data_dir)
    hp = problem.get_hparams()
    assert hp.modality == {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
    assert hp.vocab_size["targets"] == len(vocab)
    (example,) = corpus_testing.read_examples(problem.dev_filepaths(data_dir, 1, True))
    tensors = {k: tf.constant(v, tf.int64) for k, v in example.items()}
    joined_ids = problem.preprocess_example(tensors, None, None)["inputs"].numpy().tolist()
    assert joined_ids == example["inputs"] + [2] + example["context"]


def test_an_extracted_folder_in_tmp_dir_is_not_downloaded(local_babi, tmp_path):
    for name, text in MEMBERS.items():
        corpus_testing.write_file(tmp_path / "tmp" / name, text)
    samples = list(registry.problem("babi_qa_concat_task8_1k").generate_samples(
        str(tmp_path / "data"), str(tmp_path / "tmp"), spaces.DatasetSplit.EVAL))
    assert samples == [{"context": "John got the milk .", "inputs": "What is John carrying ?",
                        "targets": "milk"}]
    assert local_babi.requests == []
