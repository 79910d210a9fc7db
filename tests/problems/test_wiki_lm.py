"""wiki_lm: how lines become examples and how languages are mixed."""
from t2t.core import registry
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
