"""T2T's `snli` helpers against a local server holding an `snli_1.0.zip` laid out as the real
one (`snli_1.0/snli_1.0_{train,dev,test}.txt`, 14 tab-separated columns after a header, the
parses in columns 4 and 5, and a `__MACOSX/` folder)."""
import importlib
import os

import pytest

import corpus_testing

from t2t.core import errors, t2t_import_alias
from t2t.encoders import text_encoder
from t2t.problems import snli, stanford_nli

HEAD = ("gold_label", "sentence1_binary_parse", "sentence2_binary_parse", "sentence1_parse",
        "sentence2_parse", "sentence1", "sentence2", "captionID", "pairID", "label1", "label2",
        "label3", "label4", "label5")
P1 = "(ROOT (S (NP (DT A) (NN person)) (VP (VBZ rides) (NP (DT a) (NN horse))) (. .)))"
P2 = "(ROOT (S (NP (DT A) (NN person)) (VP (VBZ is) (ADJP (JJ outdoors))) (. .)))"
P3 = "(ROOT (S (NP (DT A) (NN person)) (VP (VBZ sleeps)) (. .)))"
P4 = "(ROOT (S (NP (NNS Children)) (VP (VBP smile) (, ,) (VBP wave)) (. .)))"
P5 = "(ROOT (S (NP (EX There)) (VP (VBP are) (NP (NNS children))) (. .)))"


def _row(gold, parse1, parse2, *labels):
    words = [" ".join(snli._get_tokens_and_tags(p)) for p in (parse1, parse2)]
    return (gold, "( binary )", "( binary )", parse1, parse2, words[0], words[1],
            "3416050480.jpg#4", "3416050480.jpg#4r1n") + labels


def _tsv(*rows):
    return "".join("\t".join(row) + "\n" for row in rows)


MEMBERS = {
    "snli_1.0/snli_1.0_train.txt": _tsv(HEAD, _row("entailment", P1, P2, "entailment"),
                                        _row("-", P1, P3, "neutral", "contradiction"),
                                        _row("contradiction", P1, P3, "contradiction")),
    "snli_1.0/snli_1.0_dev.txt": _tsv(HEAD, _row("neutral", P4, P5, "neutral", "entailment",
                                                 "neutral", "neutral", "neutral")),
    "snli_1.0/snli_1.0_test.txt": _tsv(HEAD, _row("neutral", P3, P3, "neutral")),
    "__MACOSX/snli_1.0/._snli_1.0_dev.txt": b"\x00\x05\x16\x07",
}
TRAIN_TXT = ("A person rides a horse .\tA person is outdoors .\tentailment\n"
             "A person rides a horse .\tA person sleeps .\tcontradiction\n")


@pytest.fixture
def server(tmp_path_factory, monkeypatch):
    root = tmp_path_factory.mktemp("snli_server")
    corpus_testing.write_zip(corpus_testing.served_path(root, snli._SNLI_URL), MEMBERS)
    with corpus_testing.serve_tree(root) as httpd:
        monkeypatch.setattr(snli, "_SNLI_URL", corpus_testing.local_url(httpd.url, snli._SNLI_URL))
        yield httpd


def test_t2t_names_and_the_alias():
    assert snli._SNLI_URL == "https://nlp.stanford.edu/projects/snli/snli_1.0.zip"
    assert (snli._SNLI_ZIP, snli._SNLI_DATA_PATH % "dev", snli._EXAMPLES_FILE) == (
        "snli_1.0.zip", "snli_1.0/snli_1.0_dev.txt", "examples.txt")
    assert snli._LABEL_TO_ID == {"contradiction": 0, "entailment": 1, "neutral": 2}
    assert (snli._EOS, snli._SEP) == (1, 2)
    assert (snli._LABEL_INDEX, snli._PARSE1_INDEX, snli._PARSE2_INDEX, snli._SENT1_INDEX,
            snli._SENT2_INDEX) == (0, 3, 4, 5, 6)
    assert snli._get_tokens_and_tags(P4) == ["Children", "smile", ",", "wave", "."]
    with pytest.raises(errors.UserError, match="'Children' neither opens nor closes"):
        snli._get_tokens_and_tags("(NP Children (NNS x))")
    t2t_import_alias.uninstall()
    assert t2t_import_alias.install()
    try:
        assert importlib.import_module("tensor2tensor.data_generators.snli") is snli
    finally:
        t2t_import_alias.uninstall()


def test_token_generator_downloads_parses_and_encodes(server, tmp_path):
    tmp_dir = str(tmp_path)
    train = list(snli.snli_token_generator(tmp_dir, True, 2**8))
    assert server.requests == ["/projects/snli/snli_1.0.zip"]
    assert os.path.isfile(os.path.join(tmp_dir, "snli_1.0.zip"))  # T2T's name (not SNLI.zip)
    with open(os.path.join(tmp_dir, "train.txt")) as f:
        assert f.read() == TRAIN_TXT  # the "-" row is left out
    with open(os.path.join(tmp_dir, "examples.txt")) as f:
        assert f.read() == ("A person rides a horse . A person is outdoors .\n"
                            "A person rides a horse . A person sleeps .\n")
    vocab_path = os.path.join(tmp_dir, "vocab.subword_text_encoder")
    encoder = text_encoder.SubwordTextEncoder(vocab_path)
    assert encoder.decode_list([0, 1, 2]) == ["<pad>_", "<EOS>_", "<SEP>_"]
    first = encoder.encode("A person rides a horse .")
    assert train == [
        {"inputs": first + [2] + encoder.encode("A person is outdoors .") + [1],
         "targets": [1]},
        {"inputs": first + [2] + encoder.encode("A person sleeps .") + [1], "targets": [0]}]
    assert 2 not in first and encoder.decode(train[1]["inputs"][len(first) + 1:-1]) == \
        "A person sleeps ."

    dev = list(snli.snli_token_generator(tmp_dir, False, 2**8))
    assert len(server.requests) == 1  # downloaded and extracted once
    with open(os.path.join(tmp_dir, "dev.txt")) as f:
        assert f.read() == "Children smile , wave .\tThere are children .\tneutral\n"
    assert dev == [{"inputs": encoder.encode("Children smile , wave .") + [2]
                    + encoder.encode("There are children .") + [1], "targets": [2]}]


def test_dev_first_builds_the_vocab_from_the_training_set(server, tmp_path):
    tmp_dir = str(tmp_path)
    (dev,) = snli.snli_token_generator(tmp_dir, False, 2**8)
    assert sorted(n for n in os.listdir(tmp_dir) if n.endswith(".txt")) == [
        "dev.txt", "examples.txt", "train.txt"]
    assert dev["targets"] == [2] and dev["inputs"][-1] == 1


def test_an_extracted_copy_is_used_and_bad_rows_are_named(server, tmp_path):
    tmp_dir = tmp_path / "tmp"
    for name, text in MEMBERS.items():
        corpus_testing.write_file(tmp_dir / name, text)
    # stanford_nli's extracted folder serves snli too: nothing downloaded.
    assert stanford_nli.StanfordNLI.DATA_DIR == "snli_1.0"
    snli._download_and_parse_dataset(str(tmp_dir), True)
    assert server.requests == [] and (tmp_dir / "train.txt").read_text() == TRAIN_TXT
    bad = tmp_dir / "bad.txt"
    bad.write_text(_tsv(HEAD, _row("maybe", P1, P2)))
    with pytest.raises(errors.UserError, match=r"bad.txt line 2: gold label 'maybe' is not"):
        snli._parse_dataset(str(bad), str(tmp_dir), False)
    bad.write_text(_tsv(HEAD, ("neutral", "x", "y", "(S word (NN b))", P2)))
    with pytest.raises(errors.UserError, match=r"bad.txt line 2: SNLI parse .*'word'"):
        snli._parse_dataset(str(bad), str(tmp_dir), False)
    # A vocab from T2T (no separator token) is refused, not silently mixed with id 2.
    (tmp_dir / "vocab.old").write_text("'<pad>'\n'<EOS>'\n'a_'\n")
    with pytest.raises(errors.UserError, match="vocab.old has no <SEP> at id 2"):
        snli._get_or_generate_vocab(str(tmp_dir), "vocab.old", 2**8)
