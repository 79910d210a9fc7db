"""wsj_parsing over WSJ-format trees placed in tmp_dir (the treebank is licensed: no download)."""
import os

import pytest

import corpus_testing

from t2t.core import errors, registry
from t2t.encoders import text_encoder
from t2t.problems import wsj_parsing

TREES_TRAIN = [
    "(TOP (S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .)))",
    "(TOP (S (NP (PRP It)) (VP (VBD rained)) (. .)))",
]
TREES_EVAL = ["(TOP (S (NP (NNS Dogs)) (VP (VBP bark)) (. .)))"]
LINEARIZED = {
    TREES_TRAIN[0]: ("John has a dog .", "S NP NNP /NP VP VBZ NP DT NN /NP /VP . /S"),
    TREES_TRAIN[1]: ("It rained .", "S NP PRP /NP VP VBD /VP . /S"),
    TREES_EVAL[0]: ("Dogs bark .", "S NP NNS /NP VP VBP /VP . /S"),
}


def _place(tmp_dir):
    corpus_testing.write_file(os.path.join(tmp_dir, "wsjTrain.trees"),
                              "\n".join(TREES_TRAIN) + "\n")
    corpus_testing.write_file(os.path.join(tmp_dir, "wsjEval.trees"), TREES_EVAL[0] + "\n")
    corpus_testing.write_file(os.path.join(tmp_dir, "wsj.train.text.txt"),
                              "".join(LINEARIZED[t][0] + "\n" for t in TREES_TRAIN))
    corpus_testing.write_file(os.path.join(tmp_dir, "wsj.train.tags.txt"),
                              "".join(LINEARIZED[t][1] + "\n" for t in TREES_TRAIN))


def test_t2t_names_and_linearization():
    problem = registry.problem("wsj_parsing")
    assert type(problem) is wsj_parsing.WsjParsing
    assert problem.vocab_filename == "vocab.wsj_parsing.32768.subwords"
    assert (problem.TRAIN_FILES, problem.TRAIN_FILES_TREE, problem.EVAL_FILES_TREE) == (
        ("wsj.train.text.txt", "wsj.train.tags.txt"), "wsjTrain.trees", "wsjEval.trees")
    assert problem.max_samples_for_vocab == 1000
    for tree, pair in LINEARIZED.items():
        assert wsj_parsing.words_and_tags_from_wsj_tree(tree + "\n") == pair
    with pytest.raises(errors.UserError, match=r"token 'dog' must be a word closing its tag"):
        wsj_parsing.words_and_tags_from_wsj_tree("(TOP (NN dog")


def test_token_generator_encodes_both_sides(tmp_path):
    path = tmp_path / "parsing_train.trees"
    path.write_text(TREES_TRAIN[1] + "\n")
    words = text_encoder.TokenTextEncoder(None, vocab_list=["It", "rained", "."])
    tags = text_encoder.TokenTextEncoder(None, vocab_list=["S", "NP", "PRP", "/NP", "VP", "VBD",
                                                           "/VP", ".", "/S"])
    assert list(wsj_parsing.token_generator(str(path), words, tags, eos=1)) == [
        {"inputs": [2, 3, 4, 1], "targets": [2, 3, 4, 5, 6, 7, 8, 9, 10, 1]}]


corpus_testing.register_user_subclass(wsj_parsing.WsjParsing, "wsj_parsing_tiny", train_shards=1)


def test_generates_sentences_and_linearized_trees(tmp_path):
    tmp_dir, data_dir = str(tmp_path / "tmp"), str(tmp_path / "data")
    _place(tmp_dir)
    problem = registry.problem("wsj_parsing_tiny")
    problem.generate_data(data_dir, tmp_dir)
    encoder = text_encoder.SubwordTextEncoder(
        os.path.join(data_dir, "vocab.wsj_parsing_tiny.256.subwords"))

    def decoded(paths):
        return sorted((encoder.decode(ex["inputs"][:-1]), encoder.decode(ex["targets"][:-1]))
                      for ex in corpus_testing.read_examples(paths))

    assert decoded(problem.training_filepaths(data_dir, 1, True)) == sorted(
        LINEARIZED[t] for t in TREES_TRAIN)
    assert decoded(problem.dev_filepaths(data_dir, 1, True)) == [LINEARIZED[TREES_EVAL[0]]]


def test_a_missing_file_is_one_line_naming_it(tmp_path):
    _place(str(tmp_path))
    os.remove(str(tmp_path / "wsjEval.trees"))
    with pytest.raises(errors.UserError, match=r"wsj_parsing: .*wsjEval.trees is missing; put "
                                               r"one WSJ-format tree per line there"):
        registry.problem("wsj_parsing").generate_data(str(tmp_path / "data"), str(tmp_path))
    assert not os.path.exists(str(tmp_path / "data"))
