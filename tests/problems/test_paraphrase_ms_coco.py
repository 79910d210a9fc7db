"""The MS COCO paraphrase problems against a local server holding a captions_train-val2014.zip."""
import json

import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import paraphrase_ms_coco as coco, spaces


def _captions(pairs):
    return json.dumps({"images": [], "annotations": [
        {"image_id": image, "id": i, "caption": caption}
        for i, (image, caption) in enumerate(pairs)]})


TRAIN = [(7, "A cat on a mat."), (9, "A dog runs."), (7, "A cat sits on a mat."),
         (7, "The mat has a cat."), (9, "A running dog.")]
DEV = [(3, "Two birds."), (3, "A pair of birds.")]
MEMBERS = {"annotations/captions_train2014.json": _captions(TRAIN),
           "annotations/captions_val2014.json": _captions(DEV)}
URL = coco._MS_COCO_DOWNLOAD_URL + "/" + coco._MS_COCO_ZIPPED_FILE


@pytest.fixture(scope="module")
def coco_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("coco")
    corpus_testing.write_zip(corpus_testing.served_path(root, URL), MEMBERS)
    with corpus_testing.serve_tree(root) as server:
        yield server


@pytest.fixture
def local_coco(coco_server, monkeypatch):
    return corpus_testing.point_at(monkeypatch, coco_server,
                                   [(coco.ParaphraseGenerationMsCocoProblem, "url", URL)])


corpus_testing.register_user_subclass(coco.ParaphraseGenerationMsCocoProblem1d,
                                      "paraphrase_coco_1d_tiny", approx_vocab_size=2**7)


def test_t2t_names_url_and_pairs():
    assert URL == ("http://msvocds.blob.core.windows.net/annotations-1-0-3/"
                   "captions_train-val2014.zip")
    kinds = {name: (registry.problem(name).bidirectional, registry.problem(name).vocab_type)
             for name in ("paraphrase_generation_ms_coco_problem2d",
                          "paraphrase_generation_ms_coco_problem1d",
                          "paraphrase_generation_ms_coco_problem2d_characters",
                          "paraphrase_generation_ms_coco_problem1d_characters")}
    assert list(kinds.values()) == [(True, "subwords"), (False, "subwords"),
                                    (True, "character"), (False, "character")]
    problem = registry.problem("paraphrase_generation_ms_coco_problem2d")
    assert problem.vocab_filename == "vocab.paraphrase_generation_ms_coco_problem2d.8192.subwords"
    assert [s["shards"] for s in problem.dataset_splits] == [10, 1]
    assert coco.create_combination(["a", "b", "c"]) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert coco.create_combination(["a"]) == []


def test_generates_each_pair_of_an_images_captions(local_coco, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem = registry.problem("paraphrase_coco_1d_tiny")
    problem.generate_data(data_dir, tmp_dir)
    assert local_coco.requests == ["/annotations-1-0-3/captions_train-val2014.zip"]
    encoder = text_encoder.SubwordTextEncoder(
        str(tmp_path / "data" / "vocab.paraphrase_coco_1d_tiny.128.subwords"))
    examples = corpus_testing.read_examples(problem.training_filepaths(data_dir, 2, True))
    assert sorted((encoder.decode(ex["inputs"][:-1]), encoder.decode(ex["targets"][:-1]))
                  for ex in examples) == sorted([
        ("A cat on a mat.", "A cat sits on a mat."), ("A cat on a mat.", "The mat has a cat."),
        ("A cat sits on a mat.", "The mat has a cat."), ("A dog runs.", "A running dog.")])


def test_two_directions_and_an_extracted_folder_in_tmp_dir(local_coco, tmp_path):
    for name, text in MEMBERS.items():
        corpus_testing.write_file(tmp_path / "captions_train-val2014" / name, text)
    samples = list(registry.problem("paraphrase_generation_ms_coco_problem2d").generate_samples(
        None, str(tmp_path), spaces.DatasetSplit.EVAL))
    assert samples == [{"inputs": "Two birds.", "targets": "A pair of birds."},
                       {"inputs": "A pair of birds.", "targets": "Two birds."}]
    assert local_coco.requests == []
