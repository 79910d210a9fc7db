"""The WikiText-103 language models against a local server holding wikitext-103-shaped zips.

Both zips have the real names, URL paths and layouts (wikitext-103/wiki.*.tokens and
wikitext-103-raw/wiki.*.raw, with WikiText's blank lines and " = Title = " headings).
"""
import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import spaces, text2text, wikitext103

TRAIN = [" ", " = Cats = ", " ", " The cat sat on the mat . ", " The cat ran . ", " "]
VALID = [" ", " = Cats = ", " The cat sat . "]
TEST = [" The cat ran on the mat . "]


def _members(folder, suffix):
    return {"%s/wiki.%s.%s" % (folder, split, suffix): "".join(line + "\n" for line in lines)
            for split, lines in (("train", TRAIN), ("valid", VALID), ("test", TEST))}


@pytest.fixture(scope="module")
def wikitext_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("wikitext")
    corpus_testing.write_zip(corpus_testing.served_path(root, wikitext103.TOKENS_URL),
                             _members("wikitext-103", "tokens"))
    corpus_testing.write_zip(corpus_testing.served_path(root, wikitext103.RAW_URL),
                             _members("wikitext-103-raw", "raw"))
    with corpus_testing.serve_tree(root) as server:
        yield server


@pytest.fixture
def local_wikitext(wikitext_server, monkeypatch):
    lm = wikitext103.LanguagemodelWikitext103
    return corpus_testing.point_at(monkeypatch, wikitext_server, [
        (lm, "tokens_url", wikitext103.TOKENS_URL), (lm, "raw_url", wikitext103.RAW_URL)])


@registry.register_problem
class Wikitext103Tiny(wikitext103.LanguagemodelWikitext103):
    """As user code subclasses it: fewer shards (T2T's three splits)."""

    @property
    def dataset_splits(self):
        return [{"split": split, "shards": shards} for split, shards in (
            (spaces.DatasetSplit.TRAIN, 2), (spaces.DatasetSplit.EVAL, 1),
            (spaces.DatasetSplit.TEST, 1))]


@registry.register_problem
class Wikitext103CharsTiny(wikitext103.LanguagemodelWikitext103Characters, Wikitext103Tiny):
    """The character problem with Wikitext103Tiny's shards."""


@registry.register_problem
class Wikitext103L8(wikitext103.LanguagemodelWikitext103L4k):
    """Lines joined into examples of fewer than 8 words."""

    @property
    def sequence_length(self):
        return 8


def _splits(lm, data_dir):
    return {split: corpus_testing.read_examples(fn(data_dir, shards, True)) for split, fn, shards
            in (("train", lm.training_filepaths, 2), ("dev", lm.dev_filepaths, 1),
                ("test", lm.test_filepaths, 1))}


def test_t2t_names_urls_and_vocab_files():
    assert wikitext103.TOKENS_URL == ("https://s3.amazonaws.com/research.metamind.io/wikitext/"
                                      "wikitext-103-v1.zip")
    assert wikitext103.RAW_URL == ("https://s3.amazonaws.com/research.metamind.io/wikitext/"
                                   "wikitext-103-raw-v1.zip")
    names = ["languagemodel_wikitext103", "languagemodel_wikitext103_characters",
             "languagemodel_wikitext103_l4k", "languagemodel_wikitext103_l16k"]
    problems = [registry.problem(name) for name in names]
    assert [p.vocab_type for p in problems] == [text2text.VocabType.TOKEN,
                                                text2text.VocabType.CHARACTER,
                                                text2text.VocabType.TOKEN,
                                                text2text.VocabType.TOKEN]
    assert problems[0].vocab_filename == "vocab.languagemodel_wikitext103.tokens"
    assert problems[2].vocab_filename == "vocab.languagemodel_wikitext103_l4k.tokens"
    assert [s["shards"] for s in problems[0].dataset_splits] == [10, 1, 1]
    assert [p.sequence_length for p in problems[2:]] == [4096, 16384]
    hparams = registry.hparams("transformer_tiny")
    assert problems[3].max_length(hparams) == 16384
    hparams.split_to_length = 100
    assert problems[2].max_length(hparams) == 100


def test_generates_the_non_blank_lines_with_every_training_word(local_wikitext, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    lm = registry.problem("wikitext103_tiny")
    lm.generate_data(data_dir, tmp_dir)
    assert local_wikitext.requests == ["/research.metamind.io/wikitext/wikitext-103-v1.zip"]
    vocab = (tmp_path / "data" / "vocab.wikitext103_tiny.tokens").read_text().split()
    # Reserved tokens, then by frequency, ties in string order ("Cats" < "mat" < "the").
    assert vocab == ["<pad>", "<EOS>", ".", "=", "The", "cat", "Cats", "mat", "on", "ran",
                     "sat", "the"]
    encoder = lm.get_or_create_vocab(data_dir, None, force_get=True)
    splits = _splits(lm, data_dir)
    texts = {split: sorted(encoder.decode(ex["targets"][:-1]) for ex in examples)
             for split, examples in splits.items()}
    assert texts["train"] == ["= Cats =", "The cat ran .", "The cat sat on the mat ."]
    assert all(ex["targets"][-1] == text_encoder.EOS_ID for ex in splits["train"])
    assert encoder.decode(splits["test"][0]["targets"]) == "The cat ran on the mat . <EOS>"
    assert len(splits["dev"]) == 2


def test_words_outside_the_training_vocab_are_an_error(local_wikitext, tmp_path):
    # As in T2T (a KeyError there): WikiText's dev and test words are all training words.
    members = _members("wikitext-103", "tokens")
    members["wikitext-103/wiki.valid.tokens"] = " The dog sat .\n"
    for name, text in members.items():
        corpus_testing.write_file(tmp_path / "tmp" / name, text)
    with pytest.raises(text_encoder.OutOfVocabularyError, match="'dog' is not in the vocab"):
        registry.problem("wikitext103_tiny").generate_data(str(tmp_path / "data"),
                                                           str(tmp_path / "tmp"))
    assert local_wikitext.requests == []


def test_characters_read_the_raw_zip_as_bytes(local_wikitext, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    lm = registry.problem("wikitext103_chars_tiny")
    lm.generate_data(data_dir, tmp_dir)
    assert local_wikitext.requests == ["/research.metamind.io/wikitext/wikitext-103-raw-v1.zip"]
    assert not list((tmp_path / "data").glob("vocab.*"))
    byte_encoder = text_encoder.ByteTextEncoder()
    dev = corpus_testing.read_examples(lm.dev_filepaths(data_dir, 1, True))
    assert sorted(byte_encoder.decode(ex["targets"][:-1]) for ex in dev) == [
        "= Cats =", "The cat sat ."]


def test_long_examples_join_lines_below_sequence_length(local_wikitext, tmp_path):
    tmp_dir = str(tmp_path / "tmp")
    lm = registry.problem("wikitext103_l8")
    samples = list(lm.generate_samples(str(tmp_path / "data"), tmp_dir,
                                       spaces.DatasetSplit.TRAIN))
    # 3 + 7 words >= 8: a new example; the last line is kept (T2T dropped it).
    assert samples == [{"targets": "= Cats ="}, {"targets": "The cat sat on the mat ."},
                       {"targets": "The cat ran ."}]
    assert (tmp_path / "data" / "vocab.wikitext103_l8.tokens").is_file()


def test_an_extracted_folder_in_tmp_dir_is_not_downloaded(local_wikitext, tmp_path):
    for name, text in _members("wikitext-103", "tokens").items():
        corpus_testing.write_file(tmp_path / "tmp" / name, text)
    samples = list(registry.problem("wikitext103_tiny").generate_samples(
        str(tmp_path / "data"), str(tmp_path / "tmp"), spaces.DatasetSplit.TEST))
    assert samples == [{"targets": "The cat ran on the mat ."}]
    assert local_wikitext.requests == []
