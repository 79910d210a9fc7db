"""enwik8 problems against a local server holding a tiny enwik8.zip laid out as the real one
(one member, `enwik8`, of raw bytes, here with multi-byte UTF-8 characters)."""
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.problems import enwik8
from t2t.problems import spaces

TRAIN_SPLIT, EVAL, TEST_SPLIT = (spaces.DatasetSplit.TRAIN, spaces.DatasetSplit.EVAL,
                                 spaces.DatasetSplit.TEST)

# 60 bytes: 40 for training, 10 dev, 10 test with NUM_TEST_BYTES = 10. "é" is 2 bytes.
CORPUS = ("<page>caf\u00e9 caf\u00e9 wiki</page>\n" + "x" * 10 + "<dev>\u00e9\u00e9<"
          + "<test>abcd").encode("utf-8")
assert len(CORPUS) == 60, len(CORPUS)
TRAIN, DEV, TEST = CORPUS[:40], CORPUS[40:50], CORPUS[50:]


@pytest.fixture(scope="module")
def enwik8_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("enwik8")
    corpus_testing.write_zip(corpus_testing.served_path(root, enwik8.ENWIK8_URL),
                             {"enwik8": CORPUS})
    with corpus_testing.serve_tree(root) as server:
        yield server


@pytest.fixture
def server(enwik8_server, monkeypatch):
    return corpus_testing.point_at(monkeypatch, enwik8_server, [
        (enwik8.Enwik8L65k, "url", enwik8.ENWIK8_URL)])


def _tiny(base, length=8):
    """`base` on the tiny corpus: 10 held-out bytes each, examples of `length` bytes."""
    return type("Tiny" + base.__name__, (base,), {
        "name": base().name, "NUM_TEST_BYTES": 10,
        "sequence_length": property(lambda self: length)})


def test_registered_lengths():
    lengths = {"enwik8_l65k": 65536, "enwik8_l32k": 32768, "enwik8_l16k": 16384,
               "enwik8_l8k": 8192, "enwik8_l4k": 4096, "enwik8_l2k": 2048, "enwik8_l1k": 1024,
               "enwik8_l512": 512}
    for name, length in lengths.items():
        p = registry.problem(name)
        assert p.sequence_length == length == p.max_length(None)
        assert [s["shards"] for s in p.dataset_splits] == [16, 1, 1]


def test_byte_split_and_windows(server, tmp_path):
    p = _tiny(enwik8.Enwik8L65k)()
    tmp_dir = str(tmp_path)
    train = [s["targets"] for s in p.generate_samples(None, tmp_dir, TRAIN_SPLIT)]
    # Windows of 8 bytes every 8 // 4 = 2 bytes.
    assert train == [TRAIN[i:i + 8] for i in range(0, 40, 2)]
    assert [s["targets"] for s in p.generate_samples(None, tmp_dir, EVAL)] == [DEV[:8], DEV[8:]]
    assert [s["targets"] for s in p.generate_samples(None, tmp_dir, TEST_SPLIT)] == [TEST[:8],
                                                                                 TEST[8:]]
    assert TEST == b"<test>abcd" and DEV.startswith(b"<dev>\xc3\xa9")
    assert server.requests == ["/dc/enwik8.zip"]  # extracted once, read per split


def test_l65k_shifts_ids_and_l2k_family_keeps_raw_bytes(server, tmp_path):
    for base, offset in ((enwik8.Enwik8L65k, 2), (enwik8.Enwik8L512, 0)):
        data_dir = str(tmp_path / base.__name__)
        p = _tiny(base)()
        p.generate_data(data_dir, str(tmp_path / "tmp"))
        names = sorted(n for n in os.listdir(data_dir) if not n.startswith("."))
        assert names == (["%s-dev-00000-of-00001" % p.name, "%s-test-00000-of-00001" % p.name] +
                         ["%s-train-%05d-of-00016" % (p.name, i) for i in range(16)])
        dev = corpus_testing.read_examples([os.path.join(data_dir, names[0])])
        assert sorted(r["targets"] for r in dev) == sorted([[b + offset for b in DEV[:8]],
                                                           [b + offset for b in DEV[8:]]])
        train = corpus_testing.read_examples([os.path.join(data_dir, n) for n in names[2:]])
        assert sorted(r["targets"] for r in train) == sorted(
            [b + offset for b in TRAIN[i:i + 8]] for i in range(0, 40, 2))
        assert "inputs" not in train[0]


def test_an_extracted_corpus_is_used_and_a_short_one_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setattr(enwik8.Enwik8L65k, "url", "http://127.0.0.1:9/dc/enwik8.zip")
    corpus_testing.write_file(tmp_path / "enwik8", b"0123456789" * 3)
    p = _tiny(enwik8.Enwik8L2k, length=4)()
    assert [s["targets"] for s in p.generate_samples(None, str(tmp_path), TEST_SPLIT)] == [
        b"0123", b"4567", b"89"]
    corpus_testing.write_file(tmp_path / "enwik8", b"0123456789")
    with pytest.raises(ValueError, match="has 10 bytes, too few for two held-out parts of 10"):
        list(p.generate_samples(None, str(tmp_path), TRAIN_SPLIT))
