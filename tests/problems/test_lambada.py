"""The LAMBADA problems against a local server holding a lambada-dataset.tar.gz-shaped archive.

The archive has the real name, URL path and layout: the dev, test and control files, the
word list lambada-vocab-2.txt (word<TAB>count) at its top, and train-novels.tar inside it
holding train-novels/<genre>/<book>.txt.
"""
import pytest

import corpus_testing

from t2t.core import registry
from t2t.layers.modality_type import ModalityType
from t2t.problems import lambada, spaces, text2text

WORDS = ["the", ".", "cat", "sat", "on", "mat", "dog", "ran", "she", "said", "rare"]
NOVELS = {"train-novels/Adventure/book1.txt": "the cat sat on the mat .\nthe dog ran .\n",
          "train-novels/Romance/book2.txt": "she said the zebra sat .\n"}
DEV = "the cat sat on the mat\nthe dog sat on the cat\n"
TEST = "she said the dog\n"
CONTROL = "the cat ran on the quokka\n"


def _members(tmp_path):
    novels = tmp_path / "novels.tar"
    corpus_testing.write_tgz(novels, NOVELS)  # tarfile reads either; T2T's is plain
    return {"README": "LAMBADA dataset\n", "train-novels.tar": novels.read_bytes(),
            "lambada-vocab-2.txt": "".join("%s\t%d\n" % (w, 100 - i) for i, w in enumerate(WORDS)),
            "lambada_development_plain_text.txt": DEV, "lambada_test_plain_text.txt": TEST,
            "lambada_control_test_data_plain_text.txt": CONTROL}


@pytest.fixture(scope="module")
def lambada_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("lambada")
    with corpus_testing.serve_tgz(root, lambada._URL, _members(root)) as server:
        yield server


@pytest.fixture
def local_lambada(lambada_server, monkeypatch):
    return corpus_testing.point_at(monkeypatch, lambada_server, [
        (cls, "url", lambada._URL) for cls in (lambada.LambadaLm, lambada.LambadaRc)])


def _tiny(base, name):
    """`base` as user code subclasses it: 2 training shards and a 9-word vocabulary."""

    class Tiny(base):
        @property
        def vocab_size(self):
            return 9  # "rare" and "said" drop out of the word list

        @property
        def dataset_splits(self):
            return [dict(split, shards=min(split["shards"], 2)) for split in super().dataset_splits]

    Tiny.__name__ = "Tiny" + base.__name__
    return registry.register_problem(name)(Tiny)


for _base in (lambada.LambadaLm, lambada.LambadaLmControl, lambada.LambadaRc,
              lambada.LambadaRcControl):
    _tiny(_base, "tiny_" + _base.name)


def _read(lm, data_dir):
    fns = {"train": (lm.training_filepaths, 2), "dev": (lm.dev_filepaths, 1),
           "test": (lm.test_filepaths, 1)}
    splits = [s["split"] for s in lm.dataset_splits]
    return {name: corpus_testing.read_examples(fn(data_dir, shards, True))
            for name, (fn, shards) in fns.items()
            if {"train": spaces.DatasetSplit.TRAIN, "dev": spaces.DatasetSplit.EVAL,
                "test": spaces.DatasetSplit.TEST}[name] in splits}


def test_t2t_names_url_and_vocab_files():
    assert lambada._URL == "http://clic.cimec.unitn.it/lambada/lambada-dataset.tar.gz"
    names = ["lambada_lm", "lambada_lm_control", "lambada_rc", "lambada_rc_control"]
    problems = [registry.problem(name) for name in names]
    assert [p.vocab_filename for p in problems] == ["vocab.%s.tokens" % n for n in names]
    assert [p.use_control_set for p in problems] == [False, True, False, True]
    assert [[s["shards"] for s in p.dataset_splits] for p in problems] == [
        [10, 1, 1], [10, 1], [10, 1, 1], [10, 1]]
    assert all(p.vocab_type == text2text.VocabType.TOKEN and p.vocab_size == 60000 and
               p.oov_token == "<UNK>" and p.is_generate_per_split for p in problems)
    assert not problems[0].has_inputs and problems[2].has_inputs


def test_lm_reads_the_novels_and_the_dev_and_test_files(local_lambada, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    lm = registry.problem("tiny_lambada_lm")
    lm.generate_data(data_dir, tmp_dir)
    assert local_lambada.requests == ["/lambada/lambada-dataset.tar.gz"]
    vocab = (tmp_path / "data" / "vocab.tiny_lambada_lm.tokens").read_text()
    assert vocab == "\n".join(["<UNK>"] + WORDS[:9])  # no reserved tokens
    encoder = lm.get_or_create_vocab(data_dir, None, force_get=True)
    assert encoder.encode("<UNK> the zebra") == [0, 1, 0]
    splits = _read(lm, data_dir)
    # The EOS id 1 is also the vocabulary's second word ("the"), as in T2T's files.
    assert all(ex["targets"][-1] == 1 for examples in splits.values() for ex in examples)
    texts = {split: sorted(encoder.decode(ex["targets"][:-1]) for ex in examples)
             for split, examples in splits.items()}
    assert texts == {
        "train": ["she <UNK> the <UNK> sat .", "the cat sat on the mat .", "the dog ran ."],
        "dev": ["the cat sat on the mat", "the dog sat on the cat"],
        "test": ["she <UNK> the dog"]}


def test_lm_control_evaluates_on_the_control_set(local_lambada, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    lm = registry.problem("tiny_lambada_lm_control")
    lm.generate_data(data_dir, tmp_dir)
    encoder = lm.get_or_create_vocab(data_dir, None, force_get=True)
    splits = _read(lm, data_dir)
    assert sorted(splits) == ["dev", "train"] and len(splits["train"]) == 3
    assert [encoder.decode(ex["targets"][:-1]) for ex in splits["dev"]] == [
        "the cat ran on the <UNK>"]


@pytest.mark.parametrize("name, dev", [
    ("tiny_lambada_rc", [("the cat sat on the", "mat"), ("the dog sat on the", "cat")]),
    ("tiny_lambada_rc_control", [("the cat ran on the", "<UNK>")])])
def test_rc_predicts_the_last_word_as_a_class(local_lambada, tmp_path, name, dev):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    rc = registry.problem(name)
    rc.generate_data(data_dir, tmp_dir)
    encoders = rc.feature_encoders(data_dir)
    splits = _read(rc, data_dir)

    def passages(examples):
        assert all(len(ex["targets"]) == 1 and ex["inputs"][-1] == 1 for ex in examples)
        return sorted((encoders["inputs"].decode(ex["inputs"][:-1]),
                       encoders["targets"].decode(ex["targets"])) for ex in examples)

    assert passages(splits["train"]) == [("she <UNK> the <UNK> sat", "."),
                                         ("the cat sat on the mat", "."), ("the dog ran", ".")]
    assert passages(splits["dev"]) == dev
    assert splits["train"][0]["targets"][0] < 10  # a word id of the shared vocabulary
    rc.get_feature_encoders(data_dir)
    hp = rc.get_hparams()
    assert hp.modality == {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
    assert hp.vocab_size == {"inputs": 10, "targets": 10}


def test_extracted_files_in_tmp_dir_are_not_downloaded(local_lambada, tmp_path):
    tmp_dir = tmp_path / "tmp"
    members = _members(tmp_path)
    del members["train-novels.tar"]
    for name, text in list(members.items()) + list(NOVELS.items()):
        corpus_testing.write_file(tmp_dir / name, text)
    samples = list(registry.problem("tiny_lambada_rc").generate_samples(
        str(tmp_path / "data"), str(tmp_dir), spaces.DatasetSplit.TEST))
    assert samples == [{"inputs": "she said the", "label": "dog"}]
    assert local_lambada.requests == []
    assert (tmp_path / "data" / "vocab.tiny_lambada_rc.tokens").is_file()
