"""T2T's GLUE-style problems (multinli, mrpc, qnli, rte, cola, scitail, wnli, stanford_nli,
quora_qpairs) against a local server holding archives laid out as the real downloads.

Each archive has the real members (GLUE's `<TASK>/{train,dev,test}.tsv` and extras, SciTail's
`SciTailV1.1/tsv_format/`, SNLI's `snli_1.0/` with its `__MACOSX/` folder) and is served at
the path and query of T2T's URL; MRPC's three plain files likewise.
"""
import importlib
import os

import pytest

import corpus_testing

from t2t.core import errors, registry, t2t_import_alias
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import (cola, glue, mrpc, multinli, program_search, qnli, quora_qpairs, rte,
                          scitail, spaces, stanford_nli, style_transfer, text2text, wnli,
                          wsj_parsing)

TRAIN, EVAL, TEST = spaces.DatasetSplit.TRAIN, spaces.DatasetSplit.EVAL, spaces.DatasetSplit.TEST
FIREBASE = "https://firebasestorage.googleapis.com/v0/b/mtl-sentence-representations.appspot.com/o/"


def _tsv(*rows):
    return "".join("\t".join(row) + "\n" for row in rows)


def _mnli_row(index, genre, s1, s2, *labels):
    return (str(index), str(index * 7), "%de" % index, genre, "( %s )" % s1, "( %s )" % s2,
            "(ROOT %s)" % s1, "(ROOT %s)" % s2, s1, s2) + labels


MNLI_HEAD = ("index", "promptID", "pairID", "genre", "sentence1_binary_parse",
             "sentence2_binary_parse", "sentence1_parse", "sentence2_parse", "sentence1",
             "sentence2")
MNLI = {
    "MNLI/train.tsv": _tsv(MNLI_HEAD + ("label1", "gold_label"),
                           _mnli_row(0, "government", "Conceptually cream skimming has two "
                                     "basic dimensions.", "Product and geography are what make "
                                     "cream skimming work.", "neutral", "neutral"),
                           _mnli_row(1, "telephone", "you know during the season",
                                     "You lose the things to the following level.", "entailment",
                                     "entailment"),
                           _mnli_row(2, "fiction", "One of our number will carry out your "
                                     "instructions.", "Nobody will help you.", "contradiction",
                                     "contradiction")),
    # dev has five annotators' labels before the gold one.
    "MNLI/dev_matched.tsv": _tsv(MNLI_HEAD + ("label1", "label2", "label3", "label4", "label5",
                                              "gold_label"),
                                 _mnli_row(3, "slate", "The new rights are nice enough",
                                           "Everyone really likes the newest benefits",
                                           "neutral", "entailment", "neutral", "neutral",
                                           "neutral", "neutral")),
    "MNLI/dev_mismatched.tsv": _tsv(MNLI_HEAD, _mnli_row(9, "letters", "never", "read",
                                                         "neutral", "neutral")),
    "MNLI/test_matched.tsv": _tsv(MNLI_HEAD, _mnli_row(9, "slate", "never", "read")),
    "MNLI/README.txt": "MultiNLI 0.9\n",
}
QNLI = {
    "QNLI/train.tsv": _tsv(("index", "question", "sentence", "label"),
                           ("0", "What is the Grotto at Notre Dame?", "Immediately behind the "
                            "basilica is the Grotto, a Marian place of prayer.", "entailment"),
                           ("1", "When did the Scholastic Magazine begin?", "The Observer is an "
                            "independent publication.", "not_entailment")),
    "QNLI/dev.tsv": _tsv(("index", "question", "sentence", "label"),
                         ("0", "Which NFL team won Super Bowl 50?", "The Denver Broncos "
                          "defeated the Carolina Panthers.", "entailment")),
    "QNLI/test.tsv": _tsv(("index", "question", "sentence"), ("0", "never", "read")),
}
RTE = {
    "RTE/train.tsv": _tsv(("index", "sentence1", "sentence2", "label"),
                          ("0", "No Weapons of Mass Destruction Found in Iraq Yet.",
                           "Weapons of Mass Destruction Found in Iraq.", "not_entailment"),
                          ("1", "A place of sorrow, after Pope John Paul II died, became a "
                           "place of celebration.", "Pope Benedict XVI is the new leader.",
                           "entailment")),
    "RTE/dev.tsv": _tsv(("index", "sentence1", "sentence2", "label"),
                        ("0", "Dana Reeve died of lung cancer.", "Christopher Reeve had an "
                         "accident.", "not_entailment")),
    "RTE/test.tsv": _tsv(("index", "sentence1", "sentence2"), ("0", "never", "read")),
}
WNLI = {
    "WNLI/train.tsv": _tsv(("index", "sentence1", "sentence2", "label"),
                           ("0", "I stuck a pin through a carrot. When I pulled the pin out, it "
                            "had a hole.", "The carrot had a hole.", "1"),
                           ("1", "John couldn't see the stage with Billy in front of him "
                            "because he is so short.", "John is so tall.", "0")),
    "WNLI/dev.tsv": _tsv(("index", "sentence1", "sentence2", "label"),
                         ("0", "The drain is clogged with hair. It has to be cleaned.",
                          "The hair has to be cleaned.", "0")),
    "WNLI/test.tsv": _tsv(("index", "sentence1", "sentence2"), ("0", "never", "read")),
}
COLA = {  # no header; the third column is "*" for an unacceptable sentence, else empty.
    "CoLA/train.tsv": _tsv(("gj04", "1", "", "Our friends won't buy this analysis."),
                           ("gj04", "0", "*", "They drank the pub."),
                           ("bc01", "1", "", "The more we study verbs, the crazier they get.")),
    "CoLA/dev.tsv": _tsv(("gj04", "0", "*", "The sailors rode the breeze clear of the rocks "
                          "rocks.")),
    "CoLA/test.tsv": _tsv(("index", "sentence"), ("0", "never read")),
    "CoLA/original/raw/in_domain_train.tsv": _tsv(("gj04", "1", "", "never read")),
}
QQP_HEAD = ("id", "qid1", "qid2", "question1", "question2", "is_duplicate")
QQP = {
    "QQP/train.tsv": _tsv(QQP_HEAD,
                          ("133273", "213221", "213222", "How is the life of a math student?",
                           "Which level of prepration is enough for the exam jlpt5?", "0"),
                          ("402555", "536040", "536041", "How do I control my horny emotions?",
                           "How do you control your horniness?", "1"),
                          ("999", "1", "2", "A row cut short"),  # skipped, as T2T
                          ("360472", "364011", "490273", "What causes stool color to change?",
                           "What can cause stool to come out as little balls?", "0")),
    "QQP/dev.tsv": _tsv(QQP_HEAD, ("201359", "303345", "303346", "Why are African-Americans "
                                   "so beautiful?", "Why are hispanics so beautiful?", "0")),
    "QQP/test.tsv": _tsv(("id", "question1", "question2"), ("0", "never", "read")),
}
SCITAIL = {  # no header
    "SciTailV1.1/tsv_format/scitail_1.0_train.tsv": _tsv(
        ("Pluto rotates once on its axis every 6.39 Earth days.",
         "Earth rotates on its axis once times in one day.", "neutral"),
        ("Sunlight is the source of energy for nearly all ecosystems.",
         "Most ecosystems get energy from sunlight.", "entails")),
    "SciTailV1.1/tsv_format/scitail_1.0_dev.tsv": _tsv(
        ("Oxygen is a chemical element.", "Oxygen is an element.", "entails")),
    "SciTailV1.1/tsv_format/scitail_1.0_test.tsv": _tsv(("never", "read", "neutral")),
    "SciTailV1.1/snli_format/scitail_1.0_train.txt": "never read\n",
    "SciTailV1.1/README.txt": "SciTail v1.1\n",
}
SNLI_HEAD = ("gold_label", "sentence1_binary_parse", "sentence2_binary_parse",
             "sentence1_parse", "sentence2_parse", "sentence1", "sentence2", "captionID",
             "pairID", "label1", "label2", "label3", "label4", "label5")


def _snli_row(gold, s1, s2, *labels):
    return (gold, "( %s )" % s1, "( %s )" % s2, "(ROOT %s)" % s1, "(ROOT %s)" % s2, s1, s2,
            "3416050480.jpg#4", "3416050480.jpg#4r1n") + labels


SNLI = {
    # In train the annotators' columns are empty: the stripped line ends at label1.
    "snli_1.0/snli_1.0_train.txt": _tsv(
        SNLI_HEAD,
        _snli_row("neutral", "A person on a horse jumps over a broken down airplane.",
                  "A person is training his horse for a competition.", "neutral"),
        _snli_row("contradiction", "A person on a horse jumps over a broken down airplane.",
                  "A person is at a diner, ordering an omelette.", "contradiction"),
        _snli_row("-", "Two women are embracing.", "The sisters are hugging.", "neutral",
                  "entailment", "contradiction", "neutral", "entailment")),
    "snli_1.0/snli_1.0_dev.txt": _tsv(
        SNLI_HEAD, _snli_row("entailment", "Children smiling and waving at camera",
                             "There are children present", "entailment", "entailment",
                             "entailment", "entailment", "entailment")),
    "snli_1.0/snli_1.0_test.txt": _tsv(SNLI_HEAD, _snli_row("neutral", "never", "read")),
    "snli_1.0/snli_1.0_train.jsonl": "{}\n",
    "snli_1.0/README.txt": "Stanford Natural Language Inference (SNLI) Corpus\n",
    "__MACOSX/snli_1.0/._snli_1.0_dev.txt": b"\x00\x05\x16\x07",
}

# name: (class, URL attribute (on the class, or "multinli._MNLI_URL"), name saved as,
#        archive members, training samples, dev samples)
CASES = {
    "multi_nli": (multinli.MultiNLI, "_MNLI_URL", "MNLI.zip", MNLI, [
        {"inputs": ["Conceptually cream skimming has two basic dimensions.",
                    "Product and geography are what make cream skimming work."], "label": 2},
        {"inputs": ["you know during the season",
                    "You lose the things to the following level."], "label": 1},
        {"inputs": ["One of our number will carry out your instructions.",
                    "Nobody will help you."], "label": 0}],
        [{"inputs": ["The new rights are nice enough",
                     "Everyone really likes the newest benefits"], "label": 2}]),
    "question_nli": (qnli.QuestionNLI, "_QNLI_URL", "QNLI.zip", QNLI, [
        {"inputs": ["What is the Grotto at Notre Dame?", "Immediately behind the basilica is "
                    "the Grotto, a Marian place of prayer."], "label": 1},
        {"inputs": ["When did the Scholastic Magazine begin?",
                    "The Observer is an independent publication."], "label": 0}],
        [{"inputs": ["Which NFL team won Super Bowl 50?",
                     "The Denver Broncos defeated the Carolina Panthers."], "label": 1}]),
    "rte": (rte.RTE, "_RTE_URL", "RTE.zip", RTE, [
        {"inputs": ["No Weapons of Mass Destruction Found in Iraq Yet.",
                    "Weapons of Mass Destruction Found in Iraq."], "label": 0},
        {"inputs": ["A place of sorrow, after Pope John Paul II died, became a place of "
                    "celebration.", "Pope Benedict XVI is the new leader."], "label": 1}],
        [{"inputs": ["Dana Reeve died of lung cancer.", "Christopher Reeve had an accident."],
          "label": 0}]),
    "winograd_nli": (wnli.WinogradNLI, "_WNLI_URL", "WNLI.zip", WNLI, [
        {"inputs": ["I stuck a pin through a carrot. When I pulled the pin out, it had a hole.",
                    "The carrot had a hole."], "label": 1},
        {"inputs": ["John couldn't see the stage with Billy in front of him because he is so "
                    "short.", "John is so tall."], "label": 0}],
        [{"inputs": ["The drain is clogged with hair. It has to be cleaned.",
                     "The hair has to be cleaned."], "label": 0}]),
    "cola": (cola.Cola, "_COLA_URL", "CoLA.zip", COLA, [
        {"inputs": "Our friends won't buy this analysis.", "label": 1},
        {"inputs": "They drank the pub.", "label": 0},
        {"inputs": "The more we study verbs, the crazier they get.", "label": 1}],
        [{"inputs": "The sailors rode the breeze clear of the rocks rocks.", "label": 0}]),
    "quora_question_pairs": (quora_qpairs.QuoraQuestionPairs, "_QQP_URL", "QQP.zip", QQP, [
        {"inputs": ["How is the life of a math student?",
                    "Which level of prepration is enough for the exam jlpt5?"], "label": 0},
        {"inputs": ["Which level of prepration is enough for the exam jlpt5?",
                    "How is the life of a math student?"], "label": 0},
        {"inputs": ["How do I control my horny emotions?",
                    "How do you control your horniness?"], "label": 1},
        {"inputs": ["How do you control your horniness?",
                    "How do I control my horny emotions?"], "label": 1},
        {"inputs": ["What causes stool color to change?",
                    "What can cause stool to come out as little balls?"], "label": 0},
        {"inputs": ["What can cause stool to come out as little balls?",
                    "What causes stool color to change?"], "label": 0}],
        [{"inputs": ["Why are African-Americans so beautiful?",
                     "Why are hispanics so beautiful?"], "label": 0},
         {"inputs": ["Why are hispanics so beautiful?",
                     "Why are African-Americans so beautiful?"], "label": 0}]),
    "sci_tail": (scitail.SciTail, "_SCITAIL_URL", "SciTailV1.1.zip", SCITAIL, [
        {"inputs": ["Pluto rotates once on its axis every 6.39 Earth days.",
                    "Earth rotates on its axis once times in one day."], "label": 0},
        {"inputs": ["Sunlight is the source of energy for nearly all ecosystems.",
                    "Most ecosystems get energy from sunlight."], "label": 1}],
        [{"inputs": ["Oxygen is a chemical element.", "Oxygen is an element."], "label": 1}]),
    "stanford_nli": (stanford_nli.StanfordNLI, "_SNLI_URL", "SNLI.zip", SNLI, [
        {"inputs": ["A person on a horse jumps over a broken down airplane.",
                    "A person is training his horse for a competition."], "label": 2},
        {"inputs": ["A person on a horse jumps over a broken down airplane.",
                    "A person is at a diner, ordering an omelette."], "label": 0}],
        [{"inputs": ["Children smiling and waving at camera", "There are children present"],
          "label": 1}]),
}
T2T_URLS = {
    "multi_nli": FIREBASE + "data%2FMNLI.zip?alt=media&token=50329ea1-e339-40e2-809c-10c40afff3ce",
    "question_nli": FIREBASE + "data%2FQNLI.zip?alt=media&token=c24cad61-f2df-4f04-9ab6-"
                               "aa576fa829d0",
    "rte": FIREBASE + "data%2FRTE.zip?alt=media&token=5efa7e85-a0bb-4f19-8ea2-9e1840f077fb",
    "winograd_nli": FIREBASE + "data%2FWNLI.zip?alt=media&token=068ad0a0-ded7-4bd7-99a5-"
                               "5e00222e0faf",
    "cola": FIREBASE + "data%2FCoLA.zip?alt=media&token=46d5e637-3411-4188-bc44-5809b5bfb5f4",
    "quora_question_pairs": FIREBASE + "data%2FQQP.zip?alt=media&token=700c6acf-160d-4d89-"
                                       "81d1-de4191d02cb5",
    "sci_tail": "http://data.allenai.org.s3.amazonaws.com/downloads/SciTailV1.1.zip",
    "stanford_nli": "https://nlp.stanford.edu/projects/snli/snli_1.0.zip",
}
MRPC_HEAD = ("\ufeffQuality", "#1 ID", "#2 ID", "#1 String", "#2 String")
MRPC_FILES = {
    "MRPC_TRAIN": _tsv(MRPC_HEAD,
                       ("1", "702876", "702977", "Amrozi accused his brother.",
                        "Referring to him as only \" the witness \", Amrozi accused his brother."),
                       ("0", "2108705", "2108831", "Yucaipa owned Dominick 's.",
                        "Yucaipa bought Dominick 's in 1995."),
                       ("1", "1330381", "1330521", "They had published an advertisement.",
                        "On June 10, they had published an advertisement.")),
    "MRPC_TEST": _tsv(MRPC_HEAD, ("1", "1089874", "1089925", "PCCW 's chief will also be "
                                  "leaving.", "The chief of PCCW will leave.")),
    "DEV_IDS": "2108705\t2108831\n",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("glue")
    for name, (_, _, _, members, _, _) in CASES.items():
        corpus_testing.write_zip(corpus_testing.served_path(root, T2T_URLS[name]), members)
    for attribute, text in MRPC_FILES.items():
        corpus_testing.write_file(
            corpus_testing.served_path(root, getattr(mrpc.MSRParaphraseCorpus, attribute)), text)
    with corpus_testing.serve_tree(root) as httpd:
        yield httpd


def _point(problem, attribute, server, monkeypatch):
    """Point `problem`'s URL at the local server (multinli's is a module attribute)."""
    if attribute == "_MNLI_URL":
        monkeypatch.setattr(multinli, "_MNLI_URL",
                            corpus_testing.local_url(server.url, multinli._MNLI_URL))
    else:
        setattr(problem, attribute, corpus_testing.local_url(server.url,
                                                             getattr(problem, attribute)))
    del server.requests[:]


def _request(url):
    return corpus_testing.local_url("", url)


def test_t2t_registered_names_urls_and_vocabularies():
    for name, (cls, attribute, _, _, _, _) in CASES.items():
        assert type(registry.problem(name)) is cls
        owner = multinli if attribute == "_MNLI_URL" else cls
        assert getattr(owner, attribute) == T2T_URLS[name]
    assert mrpc.MSRParaphraseCorpus.DEV_IDS == (
        FIREBASE + "data%2Fmrpc_dev_ids.tsv?alt=media&token=ec5c0836-31d5-48f4-b431-7480817f1adc")
    assert mrpc.MSRParaphraseCorpus.MRPC_TRAIN == (
        "https://s3.amazonaws.com/senteval/senteval_data/msr_paraphrase_train.txt")
    vocabs = {"multi_nli": "vocab.multi_nli.32768.subwords", "rte": "vocab.rte.8192.subwords",
              "winograd_nli": "vocab.wnli.8192", "cola": "vocab.cola.8192.subwords",
              "msr_paraphrase_corpus": "vocab.msr_paraphrase_corpus.8192.subwords",
              "sci_tail_shared_vocab": "vocab.languagemodel_lm1b32k.32768.subwords",
              "stanford_nli_wiki_lm_shared_vocab64k":
                  "vocab.languagemodel_en_wiki64k.64000.subwords",
              "multi_nli_wiki_lm_multi_vocab64k":
                  "vocab.languagemodel_de_en_fr_ro_wiki64k.64000.subwords",
              "multi_nli_text2text_multi64k_packed1k":
                  "vocab.languagemodel_de_en_fr_ro_wiki64k.64000.subwords"}
    assert {name: registry.problem(name).vocab_filename for name in vocabs} == vocabs
    shards = {name: [s["shards"] for s in registry.problem(name).dataset_splits]
              for name in ("multi_nli", "rte", "cola", "msr_paraphrase_corpus", "stanford_nli")}
    assert shards == {"multi_nli": [100, 1], "rte": [1, 1], "cola": [10, 1],
                      "msr_paraphrase_corpus": [10, 1, 1], "stanford_nli": [100, 1]}
    tasks = {name: registry.problem(name + "_characters").task_id
             for name in ("multi_nli", "question_nli", "rte", "cola", "msr_paraphrase_corpus",
                          "quora_question_pairs", "sci_tail", "stanford_nli", "winograd_nli")}
    assert tasks == {"multi_nli": 10, "question_nli": 5, "rte": 5, "cola": 6,
                     "msr_paraphrase_corpus": 8, "quora_question_pairs": 8, "sci_tail": 5,
                     "stanford_nli": 10, "winograd_nli": 5}
    assert registry.problem("stanford_nli").class_labels(None) == [
        "contradiction", "entailment", "neutral"]
    assert multinli.EOS == "<EOS>" and rte.text_problems.TextConcat2ClassProblem is \
        text2text.TextConcat2ClassProblem
    packed = registry.problem("multi_nli_text2text_multi64k_packed1k")
    assert (packed.packed_length, packed.num_training_examples) == (1024, 18300)


def test_tensor2tensor_paths_serve_the_modules():
    # (and those of the parsing, style transfer and program search problems)
    t2t_import_alias.uninstall()
    assert t2t_import_alias.install()
    try:
        for module in (multinli, mrpc, qnli, rte, cola, scitail, wnli, stanford_nli,
                       quora_qpairs, program_search, style_transfer, wsj_parsing):
            name = "tensor2tensor.data_generators." + module.__name__.rsplit(".", 1)[1]
            assert importlib.import_module(name) is module
    finally:
        t2t_import_alias.uninstall()


@pytest.mark.parametrize("name", sorted(CASES))
def test_downloads_extracts_and_reads_both_splits(name, server, tmp_path, monkeypatch):
    _, attribute, saved_as, _, train, dev = CASES[name]
    problem = registry.problem(name)
    _point(problem, attribute, server, monkeypatch)
    tmp_dir = str(tmp_path)
    assert list(problem.generate_samples(None, tmp_dir, TRAIN)) == train
    assert list(problem.generate_samples(None, tmp_dir, EVAL)) == dev
    assert server.requests == [_request(T2T_URLS[name])]  # once: the folder is then there
    assert os.path.isfile(os.path.join(tmp_dir, saved_as))


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_extracted_folder_in_tmp_dir_is_not_downloaded(name, server, tmp_path, monkeypatch):
    _, attribute, _, members, train, _ = CASES[name]
    problem = registry.problem(name)
    _point(problem, attribute, server, monkeypatch)
    for member, text in members.items():
        corpus_testing.write_file(tmp_path / member, text)
    assert list(problem.generate_samples(None, str(tmp_path), TRAIN)) == train
    assert server.requests == []


def test_mrpc_downloads_three_files_and_holds_out_dev_ids(server, tmp_path):
    problem = registry.problem("msr_paraphrase_corpus")
    for attribute in MRPC_FILES:
        setattr(problem, attribute, corpus_testing.local_url(
            server.url, getattr(mrpc.MSRParaphraseCorpus, attribute)))
    del server.requests[:]
    tmp_dir = str(tmp_path)
    assert list(problem.generate_samples(None, tmp_dir, EVAL)) == [
        {"inputs": ["Yucaipa owned Dominick 's.", "Yucaipa bought Dominick 's in 1995."],
         "label": 0},
        {"inputs": ["Yucaipa bought Dominick 's in 1995.", "Yucaipa owned Dominick 's."],
         "label": 0}]
    assert sorted(os.listdir(os.path.join(tmp_dir, "MRPC"))) == [
        "dev_ids.tsv", "msr_paraphrase_test.txt", "msr_paraphrase_train.txt"]
    assert sorted(server.requests) == sorted(
        _request(getattr(mrpc.MSRParaphraseCorpus, a)) for a in MRPC_FILES)
    del server.requests[:]
    train = list(problem.generate_samples(None, tmp_dir, TRAIN))
    assert [ex["inputs"][0] for ex in train] == [
        "Amrozi accused his brother.",
        "Referring to him as only \" the witness \", Amrozi accused his brother.",
        "They had published an advertisement.",
        "On June 10, they had published an advertisement."]
    assert [ex["label"] for ex in train] == [1, 1, 1, 1]
    assert [ex["inputs"] for ex in problem.generate_samples(None, tmp_dir, TEST)] == [
        ["PCCW 's chief will also be leaving.", "The chief of PCCW will leave."],
        ["The chief of PCCW will leave.", "PCCW 's chief will also be leaving."]]
    assert server.requests == []  # all three are there now


def _local(name, server, monkeypatch):
    problem = registry.problem(name)
    _point(problem, CASES[name.replace("_characters", "").replace("_tiny", "")][1], server,
           monkeypatch)
    return problem


def test_pairs_are_encoded_with_t2ts_concat_token(server, tmp_path, monkeypatch):
    """rte_characters: bytes (+2) of sentence1, "$", sentence2, EOS; the label as target."""
    problem = _local("rte_characters", server, monkeypatch)
    data_dir = str(tmp_path / "data")
    problem.generate_data(data_dir, str(tmp_path / "tmp"))

    def chars(text):
        return [byte + 2 for byte in text.encode("utf-8")]

    rows = corpus_testing.read_examples(problem.dev_filepaths(data_dir, 1, True))
    s1, s2 = CASES["rte"][5][0]["inputs"]
    assert rows == [{"inputs": chars(s1) + chars("$") + chars(s2) + [text_encoder.EOS_ID],
                     "targets": [0]}]
    train = corpus_testing.read_examples(problem.training_filepaths(data_dir, 1, True))
    assert sorted(row["targets"][0] for row in train) == [0, 1]
    hp = problem.get_hparams()
    assert hp.modality == {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
    assert hp.vocab_size["targets"] == 2
    assert problem.get_feature_encoders(data_dir)["targets"].decode([1]) == "entailment"


corpus_testing.register_user_subclass(cola.Cola, "cola_tiny")
corpus_testing.register_user_subclass(scitail.SciTail, "sci_tail_tiny")


def test_subword_vocabulary_and_examples(server, tmp_path, monkeypatch):
    """cola (one sentence) and sci_tail (a pair) through their own subword vocabulary."""
    data_dir = str(tmp_path / "data")
    for name, base in (("cola_tiny", "cola"), ("sci_tail_tiny", "sci_tail")):
        problem = _local(name, server, monkeypatch)
        problem.generate_data(data_dir, str(tmp_path / "tmp"))
        assert os.path.isfile(os.path.join(data_dir, "vocab.%s.256.subwords" % name))
        encoder = problem.get_feature_encoders(data_dir)["inputs"]
        # T2T's concat id: the first id of "$"'s encoding (its escape's first, here).
        concat = encoder.encode("$")[:1]
        expected = []
        for sample in CASES[base][4]:
            texts = [sample["inputs"]] if isinstance(sample["inputs"], str) else sample["inputs"]
            ids = encoder.encode(texts[0])
            for text in texts[1:]:
                ids += concat + encoder.encode(text)
            expected.append((ids + [text_encoder.EOS_ID], [sample["label"]]))
        rows = corpus_testing.read_examples(problem.training_filepaths(data_dir, 2, True))
        assert sorted((row["inputs"], row["targets"]) for row in rows) == sorted(expected)


def test_multinli_text2text_names_premise_hypothesis_and_label(server, tmp_path, monkeypatch):
    problem = _local("multi_nli", server, monkeypatch)
    text2text_problem = registry.problem("multi_nli_text2text")
    assert list(text2text_problem.generate_samples(None, str(tmp_path), EVAL)) == [
        {"inputs": "multinli premise: The new rights are nice enough hypothesis: Everyone "
                   "really likes the newest benefits", "targets": "neutral"}]
    assert multinli._example_generator is not None and problem.num_classes == 3


def test_bad_rows_name_the_file_and_line(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_text("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n1\ta\tb\n")
    with pytest.raises(errors.UserError,
                       match=r"dev.tsv line 3: 3 tab-separated fields, expected 4"):
        list(registry.problem("rte").example_generator(str(path)))
    path.write_text("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentails\n")
    with pytest.raises(errors.UserError, match=r"dev.tsv line 2: label 'entails' is not one of "
                                         r"not_entailment, entailment"):
        list(registry.problem("question_nli").example_generator(str(path)))
    path.write_text("gj04\t2\t\tA sentence.\n")
    with pytest.raises(errors.UserError,
                       match=r"dev.tsv line 1: label '2' is not one of 0, 1"):
        list(registry.problem("cola").example_generator(str(path)))
    path.write_text("\t".join(QQP_HEAD) + "\n1\t2\t3\tq1\tq2\t0\textra\n")
    with pytest.raises(errors.UserError,
                       match=r"dev.tsv line 2: 7 tab-separated fields, expected 6"):
        list(registry.problem("quora_question_pairs").example_generator(str(path)))
    assert list(glue.tsv_rows(str(path), skip_header=False))[0][0] == 1


def test_t2t_datagen_runs_a_preplaced_corpus_and_a_bad_row_is_one_line(tmp_path, capsys):
    """t2t-datagen in this process, on an RTE folder placed in --tmp_dir."""

    def datagen(*args):
        return corpus_testing.run_t2t_datagen(capsys, *args)

    for member, text in RTE.items():
        corpus_testing.write_file(tmp_path / "tmp" / member, text)
    data_dir = tmp_path / "data"
    code, err = datagen("--problem=rte_characters", "--data_dir=%s" % data_dir,
                        "--tmp_dir=%s" % (tmp_path / "tmp"))
    assert code in (None, 0), err
    assert sorted(name for name in os.listdir(str(data_dir)) if not name.startswith(".")) == [
        "rte_characters-dev-00000-of-00001", "rte_characters-train-00000-of-00001"]
    corpus_testing.write_file(tmp_path / "bad" / "RTE" / "train.tsv",
                              "index\tsentence1\tsentence2\tlabel\n0\tonly one sentence\n")
    code, err = datagen("--problem=rte_characters", "--data_dir=%s" % (tmp_path / "data2"),
                        "--tmp_dir=%s" % (tmp_path / "bad"))
    assert code == 2 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == (
        "t2t-datagen: error: %s line 2: 2 tab-separated fields, expected 4: "
        "'0\\tonly one sentence'" % (tmp_path / "bad" / "RTE" / "train.tsv"))
