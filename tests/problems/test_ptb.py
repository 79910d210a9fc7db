"""The PTB language models against a local server holding a simple-examples.tgz-shaped archive.

The archive has the real name, URL path and layout (./simple-examples/data/ptb.*.txt and
ptb.char.*.txt, lines starting with a space as in the real files, plus files that are not
PTB text); the test split is not read.
"""
import os

import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import ptb, spaces, text2text

TRAIN = [" the cat sat on the mat ", " the dog sat ", " a cat ran to the <unk> "]
VALID = [" the dog ran ", " a cat sat on the <unk> "]
CHAR_TRAIN = [" t h e _ c a t ", " a _ d o g "]
CHAR_VALID = [" c a t _ s a t "]
DATA = "./simple-examples/data/"


def _lines(lines):
    return "".join(line + "\n" for line in lines)


MEMBERS = {
    "./simple-examples/README": "Mikolov's RNNLM examples\n",
    "./simple-examples/rnnlm-0.2b/rnnlm.txt": "not ptb\n",
    DATA + "ptb.train.txt": _lines(TRAIN), DATA + "ptb.valid.txt": _lines(VALID),
    DATA + "ptb.test.txt": _lines([" never read "]),
    DATA + "ptb.char.train.txt": _lines(CHAR_TRAIN),
    DATA + "ptb.char.valid.txt": _lines(CHAR_VALID),
    DATA + "ptb.char.test.txt": _lines([" n o "]),
}


@pytest.fixture(scope="module")
def ptb_server(tmp_path_factory):
    with corpus_testing.serve_tgz(tmp_path_factory.mktemp("ptb"), ptb.PTB_URL, MEMBERS) as server:
        yield server


corpus_testing.register_user_subclass(ptb.LanguagemodelPtb10k, "languagemodel_ptb_tiny")
corpus_testing.register_user_subclass(ptb.LanguagemodelPtbCharacters,
                                      "languagemodel_ptb_characters_tiny")


@pytest.fixture
def local_ptb(ptb_server, monkeypatch):
    return corpus_testing.point_at(monkeypatch, ptb_server,
                                   [(ptb.LanguagemodelPtb10k, "url", ptb.PTB_URL)])


def test_t2t_names_url_and_vocab_file():
    assert ptb.PTB_URL == "http://www.fit.vutbr.cz/~imikolov/rnnlm/simple-examples.tgz"
    for name, vocab_type in (("languagemodel_ptb10k", text2text.VocabType.TOKEN),
                             ("languagemodel_ptb_characters", text2text.VocabType.CHARACTER)):
        lm = registry.problem(name)
        assert lm.vocab_filename == "vocab.lmptb.10000" and lm.vocab_type == vocab_type
        assert [s["shards"] for s in lm.dataset_splits] == [10, 1]
        assert lm.is_generate_per_split and not lm.has_inputs
    assert ptb.words_by_frequency("b a b <EOS> a c".split()) == ("a", "b", "<EOS>", "c")


def test_vocab_is_the_most_frequent_words_with_eos(tmp_path):
    corpus_testing.write_file(tmp_path / "train.txt", "b a b\n c b a\n")
    ptb._build_vocab(str(tmp_path / "train.txt"), str(tmp_path / "vocab"), 3)
    # 3 words a line, "<EOS>" twice: b (3), <EOS> (2) and a (2) in string order; c is cut.
    assert (tmp_path / "vocab").read_text() == "b\n<EOS>\na"


def test_generates_each_line_ending_in_the_eos_word(local_ptb, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    lm = registry.problem("languagemodel_ptb_tiny")
    lm.generate_data(data_dir, tmp_dir)
    assert local_ptb.requests == ["/~imikolov/rnnlm/simple-examples.tgz"]
    vocab = (tmp_path / "data" / "vocab.lmptb.10000").read_text().split("\n")
    assert vocab[:3] == ["the", "<EOS>", "cat"] and len(vocab) == 11  # no reserved tokens
    encoder = lm.get_or_create_vocab(data_dir, None, force_get=True)
    assert encoder.encode("the <EOS>") == [0, 1]

    def texts(paths):
        examples = corpus_testing.read_examples(paths)
        assert all(set(ex) == {"targets"} and ex["targets"][-1] == text_encoder.EOS_ID
                   for ex in examples)
        return sorted(encoder.decode(ex["targets"][:-1]) for ex in examples)

    assert texts(lm.training_filepaths(data_dir, 2, True)) == sorted(
        " ".join(line.split()) + " <EOS>" for line in TRAIN)
    assert texts(lm.dev_filepaths(data_dir, 1, True)) == [
        "a cat sat on the <unk> <EOS>", "the dog ran <EOS>"]


def test_characters_read_the_char_files_as_bytes(local_ptb, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    lm = registry.problem("languagemodel_ptb_characters_tiny")
    lm.generate_data(data_dir, tmp_dir)
    # T2T writes the token vocabulary of the char training file, though bytes are encoded.
    vocab = (tmp_path / "data" / "vocab.lmptb.10000").read_text().split("\n")
    assert sorted(vocab) == sorted({"<EOS>", "_", "a", "c", "d", "e", "g", "h", "o", "t"})
    byte_encoder = text_encoder.ByteTextEncoder()
    (example,) = corpus_testing.read_examples(lm.dev_filepaths(data_dir, 1, True))
    assert example["targets"] == byte_encoder.encode("c a t _ s a t <EOS>") + [1]
    assert len(corpus_testing.read_examples(lm.training_filepaths(data_dir, 2, True))) == 2


def test_an_archive_or_extracted_folder_in_tmp_dir_is_not_downloaded(local_ptb, tmp_path):
    archive_dir = tmp_path / "archive"
    corpus_testing.write_tgz(archive_dir / "simple-examples.tgz", MEMBERS)
    folder_dir = tmp_path / "folder"
    for name, text in MEMBERS.items():
        corpus_testing.write_file(folder_dir / name, text)
    for tmp_dir in (archive_dir, folder_dir):
        samples = list(registry.problem("languagemodel_ptb_tiny").generate_samples(
            str(tmp_path / "data"), str(tmp_dir), spaces.DatasetSplit.EVAL))
        assert samples == [{"targets": "the dog ran <EOS>"},
                           {"targets": "a cat sat on the <unk> <EOS>"}]
    assert local_ptb.requests == []
    assert os.path.isfile(tmp_path / "data" / "vocab.lmptb.10000")
