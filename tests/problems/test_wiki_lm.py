"""wiki_lm: how lines become examples and how languages are mixed."""
import glob
import itertools
import os
import random

import pytest

import corpus_testing
import drive_testing

from t2t.core import registry
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.problems import problem, wiki_lm


def test_concat_generator_joins_lines_up_to_the_threshold(tmp_path):
    path = tmp_path / "w.txt"
    path.write_text("aaaa\nbbbb\ncccc\nd\neeeeeeeeeeeeeeeeeeee\nff\n")
    # "aaaa bbbb" (9) + " cccc" would reach 14 >= 12: emit; "cccc d" (6) is too short to
    # keep when the 20-character line arrives; that line alone is too long to be emitted.
    assert list(wiki_lm.concat_generator(str(path), 12, low_threshold=3)) == [
        {"targets": "aaaa bbbb"}, {"targets": "cccc d"}]


def test_mix_generators_alternates_until_all_are_done():
    assert list(wiki_lm.mix_generators([iter("ab"), iter("xyz"), iter("")])) == [
        "a", "x", "b", "y", "z"]


def test_registered_wiki_problems():
    multi = registry.problem("languagemodel_de_en_fr_ro_wiki64k")
    assert multi.vocab_filename == "vocab.languagemodel_de_en_fr_ro_wiki64k.64000.subwords"
    assert multi.max_samples_for_vocab == 256000
    assert [files[0][0] for files in multi.files] == [
        "dewiki_train.txt.gz", "frwiki_train.txt.gz", "enwiki_train.txt.gz",
        "rowiki_train.txt.gz"]
    en = registry.problem("languagemodel_en_wiki32k")
    assert (en.approx_vocab_size, en.combine_characters_threshold, en.has_inputs) == (
        32000, 4096, False)
    assert [s["shards"] for s in en.dataset_splits] == [100, 1, 1]
    assert en.dataset_splits[2]["split"] == problem.DatasetSplit.TEST
    shorter = registry.problem("languagemodel_en_wiki64k_shorter")
    assert shorter.vocab_filename == registry.problem("languagemodel_en_wiki64k").vocab_filename


WIKI_TEXT = {
    "de": ["Berlin ist die Hauptstadt Deutschlands.", "Die Stadt hat viele Museen."],
    "fr": ["Paris est la capitale de la France.", "La ville compte beaucoup de musées."],
    "en": ["London is the capital of England.", "The city has many museums."],
    "ro": ["București este capitala României.", "Orașul are multe muzee."],
}


def _undo_deinterleave(inputs, targets):
    """The text `random_deinterleave` split: runs alternate between the side not starting
    with the separator and the other, whose first (empty) run is skipped."""
    first, second = (targets, inputs) if inputs.startswith("X") else (inputs, targets)
    runs_a = [run.strip() for run in first.split("X")]
    runs_b = [run.strip() for run in second.split("X")][1:]
    runs = [run for pair in itertools.zip_longest(runs_a, runs_b, fillvalue="")
            for run in pair]
    return " ".join(run for run in runs if run)


def test_random_deinterleave_deals_runs_of_words_to_two_sides():
    text = "The quick brown fox jumps over the lazy dog ."
    random.seed(4)
    seen = set()
    for _ in range(30):
        inputs, targets = generator_utils.random_deinterleave(text)
        assert "X" in inputs.split() and "X" in targets.split()
        assert _undo_deinterleave(inputs, targets) == text
        seen.add(inputs)
    assert len(seen) > 5  # the cuts vary
    assert generator_utils.random_deinterleave("alone") == ("alone", "")
    assert generator_utils.random_deinterleave("a b", separator_symbol="_") in (
        ("_ b", "a _"), ("a _", "_ b"))


@pytest.fixture
def local_wiki(tmp_path, monkeypatch):
    monkeypatch.setattr(wiki_lm.LanguagemodelEnWiki32k, "combine_characters_threshold", 80)
    monkeypatch.setattr(wiki_lm.LanguagemodelEnWiki32k, "dataset_splits", [
        {"split": problem.DatasetSplit.TRAIN, "shards": 2},
        {"split": problem.DatasetSplit.EVAL, "shards": 1},
        {"split": problem.DatasetSplit.TEST, "shards": 1}])
    with drive_testing.serve_wiki(tmp_path / "drive_server", WIKI_TEXT,
                                  copies=(6, 4, 4)) as server:
        monkeypatch.setattr(wiki_lm, "DRIVE_URL", server.url + "/uc?export=download&id=")
        yield server


def test_fitb_packed1k_writes_packed_fill_in_the_blanks_pairs(local_wiki, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    fitb = registry.problem("languagemodel_de_en_fr_ro_wiki64k_fitb_packed1k")
    assert (fitb.has_inputs, fitb.packed_length, fitb.num_training_examples) == (
        True, 1024, 3597800)
    assert fitb.inputs_prefix == fitb.targets_prefix == "wiki fill "
    assert fitb.vocab_filename == "vocab.languagemodel_de_en_fr_ro_wiki64k.64000.subwords"
    random.seed(1)
    fitb.generate_data(data_dir, tmp_dir)
    # Only the four-language vocabulary is written; all 12 Drive files were fetched.
    assert sorted(n for n in os.listdir(data_dir) if n.startswith("vocab.")) == [
        fitb.vocab_filename]
    assert {request.split("id=")[1] for request in local_wiki.requests} == {
        file_id for files in drive_testing.LANGUAGES.values() for _, file_id in files}
    encoder = text_encoder.SubwordTextEncoder(os.path.join(data_dir, fitb.vocab_filename))
    # The dev text: each language's lines joined into chunks under 80 characters.
    expected = []
    for language in ("de", "fr", "en", "ro"):
        path = os.path.join(tmp_dir, "%swiki_eval.txt" % language)
        expected += [chunk["targets"] for chunk in wiki_lm.concat_generator(path, 80)]
    [dev] = glob.glob(os.path.join(data_dir, fitb.dataset_filename() + "-dev*"))
    rows = corpus_testing.read_examples([dev])
    assert rows and all(len(row[side]) == len(row[side + "_segmentation"]) <= 1024
                        for row in rows for side in ("inputs", "targets"))
    found = []
    for row in rows:
        for segment in sorted(set(row["inputs_segmentation"]) - {0}):
            pieces = []
            for side in ("inputs", "targets"):
                ids = [i for i, s in zip(row[side], row[side + "_segmentation"]) if s == segment]
                assert ids[-1] == text_encoder.EOS_ID
                text = encoder.decode(ids[:-1])
                assert text.startswith("wiki fill ")
                pieces.append(text[len("wiki fill "):])
            found.append(_undo_deinterleave(*pieces))
    assert sorted(found) == sorted(expected)
