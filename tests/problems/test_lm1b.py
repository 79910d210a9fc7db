"""The lm1b language models against a local server holding a One-Billion-Word-shaped corpus.

The archive has the real name, URL path and folder layout (99 training files
news.en-000{01..99}-of-00100, held-out files of which only 00000 is read), the word list
its real URL; sentences have words outside the word list, which become "UNK".
"""
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import lm1b, spaces, text2text

WORDS = ["<S>", "</S>", "<UNK>", "the", "a", "cat", "dog", "sat", "on", "mat", ".", ",",
         "and", "ran", "to", "park", "it", "was", "sunny", "rain", "fell"]
HELDOUT = ["the dog sat on the mat .", "it was a zebra ."]


def _train_line(i):
    """One sentence per training file; every seventh has an out-of-list word."""
    words = ["the", "cat", "sat", "on", "a", "mat", ".", "it", "ran", "to", "the", "park"]
    line = " ".join(words[j % len(words)] for j in range(i % 5, i % 5 + 3 + i % 4))
    return line + (" quokka%d" % i if i % 7 == 0 else "")


TRAIN = [_train_line(i) for i in range(1, 100)]


def _corpus_members():
    base = lm1b.CORPUS_DIR + "/"
    members = {base + "README": "1 Billion Word Language Model Benchmark\n"}
    for i, line in enumerate(TRAIN, start=1):
        members[base + "training-monolingual.tokenized.shuffled/news.en-%05d-of-00100" % i] = \
            line + "\n"
    held = base + "heldout-monolingual.tokenized.shuffled/news.en.heldout-%05d-of-00050"
    members[held % 0] = "".join(line + "\n" for line in HELDOUT)
    members[held % 1] = "never read .\n"
    return members


@pytest.fixture(scope="module")
def lm1b_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm1b")
    corpus_testing.write_tgz(corpus_testing.served_path(root, lm1b.CORPUS_URL),
                             _corpus_members())
    corpus_testing.write_file(corpus_testing.served_path(root, lm1b.VOCAB_URL),
                              "".join(word + "\n" for word in WORDS))
    with corpus_testing.serve_tree(root) as server:
        yield server


@pytest.fixture
def local_lm1b(lm1b_server, monkeypatch):
    """Every lm1b problem reads from the local server (T2T's URL constants untouched)."""
    for name, url in (("corpus_url", lm1b.CORPUS_URL), ("vocab_url", lm1b.VOCAB_URL)):
        monkeypatch.setattr(lm1b.LanguagemodelLm1b32k, name,
                            corpus_testing.local_url(lm1b_server.url, url))
    del lm1b_server.requests[:]
    return lm1b_server


def _unk(line):
    return " ".join(w if w in WORDS else "UNK" for w in line.split())


Lm1bTiny = corpus_testing.register_user_subclass(lm1b.LanguagemodelLm1b32k, "lm1b_tiny",
                                                 approx_vocab_size=2**7)


@registry.register_problem
class Lm1bTinyVocabUser(text2text.Text2SelfProblem):
    """Another problem on lm1b_tiny's vocabulary (`use_vocab_from_other_problem`)."""

    is_generate_per_split = False

    @property
    def use_vocab_from_other_problem(self):
        return Lm1bTiny()

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 1},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for _ in range(4):
            yield {"targets": "the cat sat ."}


def test_t2t_names_urls_and_vocab_files():
    assert lm1b.CORPUS_URL == ("http://www.statmt.org/lm-benchmark/"
                               "1-billion-word-language-modeling-benchmark-r13output.tar.gz")
    assert lm1b.VOCAB_URL == ("http://download.tensorflow.org/models/LM_LSTM_CNN/"
                              "vocab-2016-09-10.txt")
    files = {name: registry.problem(name).vocab_filename for name in (
        "languagemodel_lm1b32k", "languagemodel_lm1b8k", "languagemodel_lm1b32k_packed",
        "languagemodel_lm1b8k_packed")}
    assert files == {
        "languagemodel_lm1b32k": "vocab.languagemodel_lm1b32k.32768.subwords",
        "languagemodel_lm1b8k": "vocab.languagemodel_lm1b8k.8192.subwords",
        "languagemodel_lm1b32k_packed": "vocab.languagemodel_lm1b32k.32768.subwords",
        "languagemodel_lm1b8k_packed": "vocab.languagemodel_lm1b8k.8192.subwords"}
    packed = {name: registry.problem(name).packed_length for name in (
        "languagemodel_lm1b32k", "languagemodel_lm1b8k_packed",
        "languagemodel_lm1b_characters_packed")}
    assert packed == {"languagemodel_lm1b32k": None, "languagemodel_lm1b8k_packed": 256,
                      "languagemodel_lm1b_characters_packed": 1024}
    chars = registry.problem("languagemodel_lm1b_characters")
    assert chars.vocab_type == text2text.VocabType.CHARACTER
    assert chars.task_id == spaces.TaskID.EN_CHR
    lm = registry.problem("languagemodel_lm1b32k")
    assert lm.max_samples_for_vocab == 63000 and lm.is_generate_per_split
    assert not lm.has_inputs
    assert lm1b._replace_oov({"the", "cat"}, "the cat sat\n") == "the cat UNK"
    listed = registry.help_string()  # what --registry_help prints
    assert all("  * languagemodel_lm1b%s\n" % suffix in listed for suffix in (
        "32k", "8k", "32k_packed", "8k_packed", "_characters", "_characters_packed"))


def test_generates_every_sentence_with_unknown_words_as_unk(local_lm1b, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    lm = registry.problem("lm1b_tiny")
    lm.generate_data(data_dir, tmp_dir)
    assert sorted(local_lm1b.requests) == [
        "/lm-benchmark/1-billion-word-language-modeling-benchmark-r13output.tar.gz",
        "/models/LM_LSTM_CNN/vocab-2016-09-10.txt"]
    assert os.path.isfile(os.path.join(tmp_dir, "vocab-2016-09-10.txt.en"))  # T2T's name
    vocab = os.path.join(data_dir, "vocab.lm1b_tiny.128.subwords")
    encoder = text_encoder.SubwordTextEncoder(vocab)

    def sentences(paths):
        examples = corpus_testing.read_examples(paths)
        assert all(set(ex) == {"targets"} and ex["targets"][-1] == text_encoder.EOS_ID
                   for ex in examples)
        return sorted(encoder.decode(ex["targets"][:-1]) for ex in examples)

    assert sentences(lm.training_filepaths(data_dir, 2, True)) == sorted(map(_unk, TRAIN))
    assert sentences(lm.dev_filepaths(data_dir, 1, True)) == sorted(["the dog sat on the mat .",
                                                                     "it was a UNK ."])
    assert "quokka7" not in str(sentences(lm.training_filepaths(data_dir, 2, True)))

    # Another problem takes this vocabulary over: same file, same ids.
    user = registry.problem("lm1b_tiny_vocab_user")
    assert user.vocab_filename == "vocab.lm1b_tiny.128.subwords"
    user.generate_data(data_dir, tmp_dir)
    assert not [n for n in os.listdir(data_dir) if n.startswith("vocab.lm1b_tiny_vocab")]
    examples = corpus_testing.read_examples(user.dev_filepaths(data_dir, 1, True))
    assert [ex["targets"] for ex in examples] == \
        [encoder.encode("the cat sat .") + [text_encoder.EOS_ID]] * 2


def test_use_vocab_from_other_problem_builds_it_from_that_problem(local_lm1b, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    registry.problem("lm1b_tiny_vocab_user").generate_data(data_dir, tmp_dir)
    # lm1b_tiny's vocabulary, built from the lm1b corpus (which was downloaded for it).
    assert "vocab.lm1b_tiny.128.subwords" in os.listdir(data_dir)
    assert len(local_lm1b.requests) == 2


def test_characters_packed(local_lm1b, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")

    class Packed(lm1b.LanguagemodelLm1bCharactersPacked):
        name = "lm1b_chars_packed_test"

        @property
        def dataset_splits(self):
            return [{"split": spaces.DatasetSplit.TRAIN, "shards": 1},
                    {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    chars = Packed()
    chars.generate_data(data_dir, tmp_dir)
    assert not [n for n in os.listdir(data_dir) if n.startswith("vocab.")]
    (packed,) = corpus_testing.read_examples(chars.dev_filepaths(data_dir, 1, True))
    assert set(packed) == {"targets", "targets_segmentation", "targets_position"}
    # Both dev sentences (with their EOS) share one example of at most 1024 bytes.
    byte_encoder = text_encoder.ByteTextEncoder()
    segments = {}
    for i, segment in zip(packed["targets"], packed["targets_segmentation"]):
        segments.setdefault(segment, []).append(i)
    assert sorted(segments) == [1, 2] and len(packed["targets"]) == 40 <= 1024
    assert sorted(byte_encoder.decode(ids[:-1]) for ids in segments.values()) == \
        ["it was a UNK .", "the dog sat on the mat ."]


def test_an_extracted_corpus_and_word_list_in_tmp_dir_are_not_downloaded(local_lm1b, tmp_path):
    tmp_dir, data_dir = tmp_path / "tmp", str(tmp_path / "data")
    for name, text in _corpus_members().items():
        corpus_testing.write_file(tmp_dir / name, text)
    corpus_testing.write_file(tmp_dir / "vocab-2016-09-10.txt.en", "the\ncat\n")
    lm = registry.problem("lm1b_tiny")
    lm.generate_data(data_dir, str(tmp_dir))
    assert local_lm1b.requests == []
    examples = corpus_testing.read_examples(lm.dev_filepaths(data_dir, 1, True))
    encoder = lm.get_or_create_vocab(data_dir, None, force_get=True)
    assert sorted(encoder.decode(ex["targets"][:-1]) for ex in examples) == [
        "UNK UNK UNK UNK UNK", "the UNK UNK UNK the UNK UNK"]


def test_a_corpus_archive_in_tmp_dir_is_extracted_not_downloaded(local_lm1b, tmp_path):
    tmp_dir = tmp_path / "tmp"
    corpus_testing.write_tgz(tmp_dir / os.path.basename(lm1b.CORPUS_URL), _corpus_members())
    samples = list(registry.problem("lm1b_tiny").generate_samples(
        None, str(tmp_dir), spaces.DatasetSplit.EVAL))
    assert samples == [{"targets": "the dog sat on the mat ."}, {"targets": "it was a UNK ."}]
    assert local_lm1b.requests == ["/models/LM_LSTM_CNN/vocab-2016-09-10.txt"]
