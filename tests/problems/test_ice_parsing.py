"""parsing_icelandic16k over parsing_{train,dev}.pairs placed in tmp_dir (no download)."""
import os

import pytest

import corpus_testing

from t2t.core import errors, registry
from t2t.encoders import text_encoder
from t2t.problems import ice_parsing, spaces

TRAIN = [("Hún fór heim .", "(S (NP-SBJ fp ) (VP sfg ) (ADVP heim ) . )"),
         ("Ég sá hestinn .", "(S (NP-SBJ fp ) (VP sfg (NP nkeog ) ) . )"),
         ("Það rigndi .", "(S (NP-SBJ fp ) (VP sfg ) . )")]
DEV = [("Hestar hlaupa .", "(S (NP-SBJ nkfn ) (VP sfg ) . )")]


def _place(tmp_dir):
    corpus_testing.write_file(os.path.join(tmp_dir, "parsing_train.pairs"),
                              "".join("%s\t%s\n" % pair for pair in TRAIN))
    corpus_testing.write_file(os.path.join(tmp_dir, "parsing_dev.pairs"),
                              "".join("%s\t%s\n" % pair for pair in DEV))


def test_t2t_names_and_sizes():
    problem = registry.problem("parsing_icelandic16k")
    assert type(problem) is ice_parsing.ParsingIcelandic16k
    assert (problem.source_vocab_size, problem.targeted_vocab_size, problem.num_shards) == (
        16384, 256, 10)
    assert (problem.input_space_id, problem.target_space_id) == (
        spaces.SpaceID.ICE_TOK, spaces.SpaceID.ICE_PARSE_TOK) == (18, 19)


def test_generates_ten_train_shards_one_dev_and_both_vocabs(tmp_path):
    tmp_dir, data_dir = str(tmp_path / "tmp"), str(tmp_path / "data")
    _place(tmp_dir)
    problem = registry.problem("parsing_icelandic16k")
    problem.generate_data(data_dir, tmp_dir)
    assert sorted(n for n in os.listdir(data_dir) if not n.startswith(".")) == sorted(
        ["ice_source.tokens.vocab.16384", "ice_target.tokens.vocab.256",
         "parsing_icelandic16k-dev-00000-of-00001"]
        + ["parsing_icelandic16k-train-%05d-of-00010" % i for i in range(10)])
    encoders = problem.get_feature_encoders(data_dir)

    def decoded(paths):
        examples = corpus_testing.read_examples(paths)
        assert all(ex["inputs"][-1] == ex["targets"][-1] == text_encoder.EOS_ID
                   for ex in examples)
        return sorted((encoders["inputs"].decode(ex["inputs"][:-1]),
                       encoders["targets"].decode(ex["targets"][:-1])) for ex in examples)

    assert decoded(problem.training_filepaths(data_dir, 10, True)) == sorted(TRAIN)
    assert decoded(problem.dev_filepaths(data_dir, 1, True)) == DEV
    # The target vocabulary is built from the trees only: no Icelandic word in it.
    assert "Hún" not in encoders["targets"].all_subtoken_strings
    hp = problem.get_hparams()
    assert hp.vocab_size == {"inputs": encoders["inputs"].vocab_size,
                             "targets": encoders["targets"].vocab_size}
    assert (hp.loss_multiplier, hp.input_space_id, hp.target_space_id) == (2.5, 18, 19)


def test_character_generator_is_bytes_plus_two(tmp_path):
    _place(str(tmp_path))
    assert list(ice_parsing.tabbed_parsing_character_generator(str(tmp_path), False)) == [
        {"inputs": [b + 2 for b in DEV[0][0].encode("utf-8")] + [1],
         "targets": [b + 2 for b in DEV[0][1].encode("utf-8")] + [1]}]


def test_token_generator_reuses_stored_vocabs(tmp_path):
    _place(str(tmp_path))
    data_dir = str(tmp_path / "data")
    list(ice_parsing.tabbed_parsing_token_generator(data_dir, str(tmp_path), True, "ice",
                                                    2**14, 2**8))
    source = text_encoder.SubwordTextEncoder(
        os.path.join(data_dir, "ice_source.tokens.vocab.16384"))
    dev = list(ice_parsing.tabbed_parsing_token_generator(data_dir, str(tmp_path), False,
                                                          "ice", 2**14, 2**8))
    assert [source.decode(ex["inputs"][:-1]) for ex in dev] == [DEV[0][0]]


def test_a_missing_file_is_one_line_naming_it(tmp_path):
    _place(str(tmp_path))
    os.remove(str(tmp_path / "parsing_dev.pairs"))
    with pytest.raises(errors.UserError, match=r"ice_parsing: .*parsing_dev.pairs is missing; "
                                               r"put one 'sentence<TAB>parse tree' line"):
        registry.problem("parsing_icelandic16k").generate_data(str(tmp_path / "data"),
                                                                str(tmp_path))
    assert not os.path.exists(str(tmp_path / "data"))
    with pytest.raises(errors.UserError, match=r"vocabulary .*ice_source.tokens.vocab.16384 "
                                               r"is missing; run t2t-datagen"):
        registry.problem("parsing_icelandic16k").feature_encoders(str(tmp_path))
