"""style_transfer against a local server holding shakespeare.{train,dev}.tgz laid out as the
real ones (github.com/tlatkowski/st: {train,dev}.{original,modern} at the archive's top)."""
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import spaces, style_transfer

TRAIN_URL = "https://github.com/tlatkowski/st/raw/master/shakespeare.train.tgz"
DEV_URL = "https://github.com/tlatkowski/st/raw/master/shakespeare.dev.tgz"
ORIGINAL = ["I have half a mind to hit you before you speak again.",
            "And wherefore art thou come?", "Thou art a villain."]
MODERN = ["I'd like to hit you before you say another word.", "And why, why have you come?",
          "You're a villain."]
DEV_ORIGINAL, DEV_MODERN = ["What say'st thou?"], ["What do you say?"]


def _lines(lines):
    return "".join(line + "\n" for line in lines)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("st")
    corpus_testing.write_tgz(corpus_testing.served_path(root, TRAIN_URL),
                             {"train.original": _lines(ORIGINAL), "train.modern": _lines(MODERN)})
    corpus_testing.write_tgz(corpus_testing.served_path(root, DEV_URL),
                             {"dev.original": _lines(DEV_ORIGINAL),
                              "dev.modern": _lines(DEV_MODERN)})
    with corpus_testing.serve_tree(root) as httpd:
        yield httpd


@pytest.fixture
def local(server, monkeypatch):
    for name, url in (("_SHAKESPEARE_MODERN_TRAIN_DATASET", TRAIN_URL),
                      ("_SHAKESPEARE_MODERN_DEV_DATASET", DEV_URL)):
        files = getattr(style_transfer, name)[0][1]
        monkeypatch.setattr(style_transfer, name,
                            [[corpus_testing.local_url(server.url, url), files]])
    del server.requests[:]
    return server


def test_t2t_names_urls_and_vocabularies():
    assert style_transfer._SHAKESPEARE_MODERN_TRAIN_DATASET == [
        [TRAIN_URL, ("train.original", "train.modern")]]
    assert style_transfer._SHAKESPEARE_MODERN_DEV_DATASET == [
        [DEV_URL, ("dev.original", "dev.modern")]]
    forward = registry.problem("style_transfer_shakespeare_to_modern")
    assert (forward.source, forward.target) == (".original", ".modern")
    assert forward.vocab_filename == "vocab.style_transfer_shakespeare_to_modern.8000.subwords"
    assert [s["shards"] for s in forward.dataset_splits] == [1, 1]
    backward = registry.problem("style_transfer_modern_to_shakespeare_characters")
    assert (backward.source, backward.target, backward.vocab_type) == (
        ".modern", ".original", "character")
    assert forward.source_target_paths(spaces.DatasetSplit.EVAL, "/t") == (
        "/t/dev.original", "/t/dev.modern")


def test_downloads_builds_the_vocabulary_and_pairs_the_lines(local, tmp_path):
    tmp_dir, data_dir = str(tmp_path / "tmp"), str(tmp_path / "data")
    problem = registry.problem("style_transfer_shakespeare_to_modern")
    assert list(problem.generate_samples(data_dir, tmp_dir, spaces.DatasetSplit.EVAL)) == [
        {"inputs": DEV_ORIGINAL[0], "targets": DEV_MODERN[0]}]
    # The vocabulary comes from the training archive, fetched for it.
    assert local.requests == ["/tlatkowski/st/raw/master/shakespeare.dev.tgz",
                              "/tlatkowski/st/raw/master/shakespeare.train.tgz"]
    vocab = text_encoder.SubwordTextEncoder(
        os.path.join(data_dir, "vocab.style_transfer_shakespeare_to_modern.8000.subwords"))
    assert vocab.decode(vocab.encode(ORIGINAL[1] + " " + MODERN[0])) == (
        ORIGINAL[1] + " " + MODERN[0])
    # Words repeated in only one of the two files: both were sampled.
    assert {"art_", "why_"} <= set(vocab.all_subtoken_strings)
    assert sorted(os.listdir(tmp_dir)) == [
        ".shakespeare.dev.tgz.extracted", ".shakespeare.train.tgz.extracted", "dev.modern",
        "dev.original", "shakespeare.dev.tgz", "shakespeare.train.tgz", "train.modern",
        "train.original"]


def test_characters_reverse_direction_and_preplaced_archives(local, tmp_path):
    tmp_dir, data_dir = str(tmp_path / "tmp"), str(tmp_path / "data")
    corpus_testing.write_tgz(os.path.join(tmp_dir, "shakespeare.train.tgz"),
                             {"train.original": _lines(ORIGINAL[:1]),
                              "train.modern": _lines(MODERN[:1])})
    corpus_testing.write_tgz(os.path.join(tmp_dir, "shakespeare.dev.tgz"),
                             {"dev.original": "x\n", "dev.modern": "y\n"})
    problem = registry.problem("style_transfer_modern_to_shakespeare_characters")
    problem.generate_data(data_dir, tmp_dir)
    assert local.requests == []
    rows = corpus_testing.read_examples(problem.training_filepaths(data_dir, 1, True))
    assert rows == [{"inputs": [b + 2 for b in MODERN[0].encode()] + [1],
                     "targets": [b + 2 for b in ORIGINAL[0].encode()] + [1]}]
    assert not os.path.exists(os.path.join(data_dir, "vocab.style_transfer_modern_to_"
                                                     "shakespeare_characters.tokens"))


def test_an_archive_without_the_files_names_them(local, tmp_path):
    corpus_testing.write_tgz(tmp_path / "shakespeare.dev.tgz", {"dev.original": "x\n"})
    corpus_testing.write_tgz(tmp_path / "shakespeare.train.tgz",
                             {"train.original": "a\n", "train.modern": "b\n"})
    problem = registry.problem("style_transfer_shakespeare_to_modern_characters")
    with pytest.raises(ValueError, match=r"shakespeare.dev.tgz holds no dev.modern"):
        problem.generate_samples(None, str(tmp_path), spaces.DatasetSplit.EVAL)
