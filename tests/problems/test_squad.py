"""The SQuAD problems against a local server holding SQuAD v1.1-shaped train and dev files."""
import json

import pytest
import tensorflow as tf

import corpus_testing

from t2t.core import registry
from t2t.layers.modality_type import ModalityType
from t2t.problems import spaces, squad, wiki_lm


def _squad(paragraphs):
    return json.dumps({"version": "1.1", "data": [
        {"title": "Cats", "paragraphs": [
            {"context": " %s " % context, "qas": [
                {"question": question + " ", "id": "q%d" % i,
                 "answers": [{"answer_start": context.find(answer), "text": answer},
                             {"answer_start": 0, "text": "other answer"}]}
                for i, (question, answer) in enumerate(qas)]}
            for context, qas in paragraphs]}]})


TRAIN = [("The cat sat on the mat.", [("Where did the cat sit?", "on the mat"),
                                      ("Who sat?", "The cat")]),
         ("Dogs bark at night.", [("When do dogs bark?", "at night")])]
DEV = [("The dog ran to the park.", [("Where did the dog run?", "to the park")])]


@pytest.fixture(scope="module")
def squad_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("squad")
    for name, paragraphs in (("train-v1.1.json", TRAIN), ("dev-v1.1.json", DEV)):
        corpus_testing.write_file(root / "SQuAD-explorer" / "dataset" / name, _squad(paragraphs))
    with corpus_testing.serve_tree(root) as server:
        yield server


@pytest.fixture
def local_squad(squad_server, monkeypatch):
    return corpus_testing.point_at(monkeypatch, squad_server,
                                   [(squad._SquadData, "url", squad._URL)])


corpus_testing.register_user_subclass(squad.Squad, "squad_tiny")


class _OnSquadTiny:
    """As user code reuses a generated problem's files: squad_tiny's data and vocabulary."""

    def dataset_filename(self):
        return "squad_tiny"

    @property
    def approx_vocab_size(self):
        return 2**8


@registry.register_problem
class SquadConcatTiny(_OnSquadTiny, squad.SquadConcat):
    pass


@registry.register_problem
class SquadConcatPositionedTiny(_OnSquadTiny, squad.SquadConcatPositioned):
    pass


def test_t2t_names_files_and_vocabularies():
    assert squad._URL == "https://rajpurkar.github.io/SQuAD-explorer/dataset"
    files = {name: (registry.problem(name).dataset_filename(),
                    registry.problem(name).vocab_filename) for name in (
        "squad", "squad_concat", "squad_concat_multi64k", "squad_concat_shared_vocab",
        "squad_concat_positioned", "squad_text2text", "squad_text2text_multi64k_packed1k")}
    multi = wiki_lm.LanguagemodelDeEnFrRoWiki64k().vocab_filename
    assert files == {
        "squad": ("squad", "vocab.squad.32768.subwords"),
        "squad_concat": ("squad", "vocab.squad.32768.subwords"),
        "squad_concat_multi64k": ("squad_multi64k", multi),
        "squad_concat_shared_vocab": ("squad", wiki_lm.LanguagemodelEnWiki32k().vocab_filename),
        "squad_concat_positioned": ("squad", "vocab.squad.32768.subwords"),
        "squad_text2text": ("squad_text2text", "vocab.squad_text2text.32768.subwords"),
        "squad_text2text_multi64k_packed1k": ("squad_text2text_multi64k_packed1k", multi)}
    assert [s["shards"] for s in registry.problem("squad_concat_multi64k").dataset_splits] == \
        [100, 1]
    packed = registry.problem("squad_text2text_multi64k_packed1k")
    assert (packed.packed_length, packed.num_training_examples) == (1024, 16300)
    positioned = registry.problem("squad_concat_positioned")
    assert positioned.generate_targets([7, 8, 1], [5, 7, 8, 9, 7, 8, 1]) == [1, 2, 4, 2]
    assert positioned.generate_targets([6, 1], [5, 7, 1]) == []


def test_generates_question_context_and_first_answer(local_squad, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem = registry.problem("squad_tiny")
    problem.generate_data(data_dir, tmp_dir)
    assert sorted(local_squad.requests) == ["/SQuAD-explorer/dataset/dev-v1.1.json",
                                            "/SQuAD-explorer/dataset/train-v1.1.json"]
    encoders = problem.feature_encoders(data_dir)
    assert encoders["context"] is encoders["inputs"]
    assert encoders["inputs"].all_subtoken_strings[squad.Squad.QUESTION_SEPARATOR_ID] == "<EOQ>_"

    def triples(paths):
        decode = encoders["inputs"].decode
        return sorted((decode(ex["inputs"][:-1]), decode(ex["context"][:-1]),
                       decode(ex["targets"][:-1])) for ex in corpus_testing.read_examples(paths))

    assert triples(problem.training_filepaths(data_dir, 2, True)) == sorted(
        (q, c, a) for c, qas in TRAIN for q, a in qas)
    assert triples(problem.dev_filepaths(data_dir, 1, True)) == [
        ("Where did the dog run?", "The dog ran to the park.", "to the park")]
    problem.get_feature_encoders(data_dir)
    assert problem.get_hparams().modality["context"] == ModalityType.SYMBOL

    # squad_concat reads the same files, and joins question and context when read.
    concat = registry.problem("squad_concat_tiny")
    concat.get_feature_encoders(data_dir)
    assert "context" not in concat.get_hparams().modality
    (example,) = corpus_testing.read_examples(concat.dev_filepaths(data_dir, 1, True))
    tensors = {k: tf.constant(v, tf.int64) for k, v in example.items()}
    joined = concat.preprocess_example(tensors, None, None)["inputs"].numpy().tolist()
    assert joined == example["inputs"] + [2] + example["context"]

    # squad_concat_positioned: [start, length] of the answer's ids in the context's.
    positioned = registry.problem("squad_concat_positioned_tiny")
    samples = list(positioned.generate_encoded_samples(data_dir, tmp_dir,
                                                       spaces.DatasetSplit.TRAIN))
    assert 1 <= len(samples) <= 3
    for sample in samples:
        start, length = sample["targets"][:2]
        assert encoders["inputs"].decode(sample["context"][start:start + length]) in (
            "on the mat", "The cat", "at night")


def test_text2text_writes_context_and_question_into_the_inputs(local_squad, tmp_path):
    samples = list(registry.problem("squad_text2text").generate_samples(
        None, str(tmp_path), spaces.DatasetSplit.EVAL))
    assert samples == [{"inputs": "squad context: The dog ran to the park. question: "
                                  "Where did the dog run?", "targets": "to the park"}]


def test_a_file_in_tmp_dir_is_not_downloaded(local_squad, tmp_path):
    corpus_testing.write_file(tmp_path / "dev-v1.1.json", _squad([("A b.", [("C?", "b")])]))
    examples = list(squad._generate_examples(str(tmp_path), spaces.DatasetSplit.EVAL,
                                             registry.problem("squad").url))
    assert examples == [{"version": "1.1", "title": "Cats", "context": "A b.", "question": "C?",
                         "id": "q0", "answer_starts": [2, 0], "answers": ["b", "other answer"],
                         "num_answers": 2, "is_supervised": True}]
    assert local_squad.requests == []
