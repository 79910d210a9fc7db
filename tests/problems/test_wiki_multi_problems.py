"""T2T's wiki_multi_problems: every registered name builds with T2T's tasks on one shared
vocabulary; two of them generated from a Drive-shaped Wikipedia server and GLUE's
`MNLI.zip` (at the path and query of T2T's Firebase URL) and read back mixed."""
import importlib
import os

import pytest
import tensorflow as tf

import corpus_testing
import drive_testing

from t2t.core import registry, t2t_import_alias
from t2t.core.modes import ModeKeys
from t2t.encoders import text_encoder
from t2t.problems import (cnn_dailymail, multi_problem, multi_problem_v2, multinli, problem,
                          squad, translate_ende, translate_enfr, translate_enro, wiki_lm,
                          wiki_multi_problems)

EN32K, EN64K = wiki_lm.LanguagemodelEnWiki32k, wiki_lm.LanguagemodelEnWiki64k
MULTI64K = wiki_lm.LanguagemodelDeEnFrRoWiki64k
FRACTIONS = (1, 2, 5, 10, 20, 50)

# name -> T2T's task list: (class, was_reversed) pairs, the primary task first.
MULTI_TASKS = {
    "languagemodel_en_wiki_lm_multi_nli_subwords": [EN32K, multinli.MultiNLIWikiLMSharedVocab],
    "languagemodel_en_wiki_lm_multi_nli_subwords64k": [
        EN64K, multinli.MultiNLIWikiLMSharedVocab64k],
    "languagemodel_en_wiki_lm_short_multi_nli_subwords64k": [
        wiki_lm.LanguagemodelEnWiki64kShorter, multinli.MultiNLIWikiLMSharedVocab64k],
    "languagemodel_en_wiki_lm_summarize_cnndm_subwords": [
        EN32K, cnn_dailymail.SummarizeCnnDailymailWikiLMSharedVocab],
    "languagemodel_en_wiki_lm_summarize_cnndm_subwords64k": [
        EN64K, cnn_dailymail.SummarizeCnnDailymailWikiLMSharedVocab64k],
    "languagemodel_en_wiki_lm_squad_concat_subwords": [EN32K, squad.SquadConcatSharedVocab],
    "languagemodel_multi_wiki_translate_fr": [MULTI64K, translate_enfr.TranslateEnfrWmtMulti64k],
    "languagemodel_multi_wiki_translate": [
        MULTI64K, translate_ende.TranslateEndeWmtMulti64k, translate_enfr.TranslateEnfrWmtMulti64k,
        translate_enro.TranslateEnroWmtMultiTiny64k,
        (translate_ende.TranslateEndeWmtMulti64k, True),
        (translate_enfr.TranslateEnfrWmtMulti64k, True),
        (translate_enro.TranslateEnroWmtMultiTiny64k, True),
        cnn_dailymail.SummarizeCnnDailymailWikiLMMultiVocab64k,
        multinli.MultiNLIWikiLMMultiVocab64k, squad.SquadConcatMulti64k],
}
for _percent in FRACTIONS:
    MULTI_TASKS["languagemodel_en_wiki_lm_summarize_frac%d_cnndm_subwords64k" % _percent] = [
        EN64K, getattr(cnn_dailymail, "SummarizeFrac%dCnnDailymailWikiLMSharedVocab64k"
                       % _percent)]

PACKED = [(wiki_lm.LanguagemodelDeEnFrRoWiki64kFitbPacked1k, True),
          (translate_ende.TranslateEndeWmtMulti64kPacked1k, True),
          (translate_enfr.TranslateEnfrWmtMulti64kPacked1k, True),
          (translate_enro.TranslateEnroWmtMultiTiny64kPacked1k, True),
          (cnn_dailymail.SummarizeCnnDailymailMulti64kPacked1k, True),
          (multinli.MultiNLIText2textMulti64kPacked1k, False),
          (squad.SquadText2textMulti64kPacked1k, False)]


def _pairs(tasks):
    return [task if isinstance(task, tuple) else (task, False) for task in tasks]


def _described(problems):
    return [(type(p), p.was_reversed) for p in problems]


@pytest.mark.parametrize("name", sorted(MULTI_TASKS))
def test_multi_problem_tasks_share_the_primary_vocabulary(name):
    multi = registry.problem(name)
    assert isinstance(multi, multi_problem.MultiProblem)
    assert multi.vocab_type == "subwords"
    assert _described(multi.task_list) == _pairs(MULTI_TASKS[name])
    primary = multi.task_list[0]
    assert {task.vocab_filename for task in multi.task_list} == {primary.vocab_filename}
    assert f"  * {name}\n" in registry.help_string()


def test_v2_problems_schedules_and_vocabulary():
    v2 = registry.problem("languagemodel_en_wiki_lm_multi_nli_subwords_v2")
    assert _described(v2.problems) == [(EN32K, False), (multinli.MultiNLIWikiLMSharedVocab, False)]
    assert v2.schedule == ("step", (0,), ((0.5, 0.5),))
    assert (v2.has_inputs, v2.vocab_filename) == (False, EN32K().vocab_filename)
    assert {p.vocab_filename for p in v2.problems} == {v2.vocab_filename}
    for name, rates in (("languagemodel_multi_wiki_translate_packed1k", [1] * 7),
                        ("languagemodel_multi_wiki_translate_packed1k_v2",
                         [1, 3, 1, 100, 1, 10, 10])):
        packed = registry.problem(name)
        expected = [(cls, reverse) for cls, both in PACKED for reverse in (False, True)[:1 + both]]
        assert _described(packed.problems) == expected
        assert (packed.has_inputs, packed.packed_length) == (True, 1024)
        assert {p.vocab_filename for p in packed.problems} == {packed.vocab_filename} == {
            MULTI64K().vocab_filename}
        # Each problem's share is its rate times its training examples (both directions
        # count alike), normalized.
        weights = [rate * cls().num_training_examples for (cls, both), rate in zip(PACKED, rates)
                   for _ in range(1 + both)]
        [pmf] = packed.schedule[2]
        assert pmf == pytest.approx([w / sum(weights) for w in weights])
    assert pmf[6] == pytest.approx(100 * 32 / sum(weights))  # En-Ro tiny, forward


def test_module_alias_and_builtin_list():
    from t2t.core import builtins
    assert "t2t.problems.wiki_multi_problems" in builtins.BUILTIN_MODULES["problems"]
    t2t_import_alias.uninstall()
    assert t2t_import_alias.install()
    try:
        module = importlib.import_module("tensor2tensor.data_generators.wiki_multi_problems")
        assert module is wiki_multi_problems
    finally:
        t2t_import_alias.uninstall()


# --- Generated from local fixtures ----------------------------------------------------

WIKI_EN = ["London is the capital of England.", "The city has many museums.",
           "The river runs through it.", "Many people visit it every year."]
HEAD = ("index", "promptID", "pairID", "genre", "sentence1_binary_parse",
        "sentence2_binary_parse", "sentence1_parse", "sentence2_parse", "sentence1", "sentence2")
MNLI_TRAIN = [("the city is big .", "a city is big .", "entailment"),
              ("the river ran .", "the city sat .", "contradiction"),
              ("people visit .", "the museums are old .", "neutral")]
MNLI_DEV = ("the museums are big .", "people visit the city .", "entailment")
LABELS = {"contradiction": 0, "entailment": 1, "neutral": 2}


def _tsv(rows):
    return "".join("\t".join(row) + "\n" for row in rows)


def _mnli_file(pairs):
    rows = [HEAD + ("label1", "gold_label")]
    for index, (s1, s2, label) in enumerate(pairs):
        rows.append((str(index), str(index * 7), "%de" % index, "fiction", "( %s )" % s1,
                     "( %s )" % s2, "(ROOT %s)" % s1, "(ROOT %s)" % s2, s1, s2, label, label))
    return _tsv(rows)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """languagemodel_en_wiki_lm_multi_nli_subwords generated once: (data_dir, tmp_dir)."""
    root = tmp_path_factory.mktemp("wiki_multi")
    corpus_testing.write_zip(corpus_testing.served_path(root / "mnli", multinli._MNLI_URL), {
        "MNLI/train.tsv": _mnli_file(MNLI_TRAIN),
        "MNLI/dev_matched.tsv": _mnli_file([MNLI_DEV]),
        "MNLI/dev_mismatched.tsv": _mnli_file([("never", "read", "neutral")])})
    data_dir, tmp_dir = str(root / "data"), str(root / "tmp")
    with pytest.MonkeyPatch.context() as patch, \
            drive_testing.serve_wiki(root / "drive", {"en": WIKI_EN}, copies=(6, 2, 2)) as drive, \
            corpus_testing.serve_tree(root / "mnli") as glue:
        patch.setattr(wiki_lm, "DRIVE_URL", drive.url + "/uc?export=download&id=")
        patch.setattr(multinli, "_MNLI_URL", corpus_testing.local_url(glue.url,
                                                                      multinli._MNLI_URL))
        patch.setattr(EN32K, "combine_characters_threshold", 80)
        patch.setattr(EN32K, "dataset_splits", [
            {"split": problem.DatasetSplit.TRAIN, "shards": 2},
            {"split": problem.DatasetSplit.EVAL, "shards": 1},
            {"split": problem.DatasetSplit.TEST, "shards": 1}])
        registry.problem("languagemodel_en_wiki_lm_multi_nli_subwords").generate_data(
            data_dir, tmp_dir)
        # The English Wikipedia files and MNLI.zip, once each (Drive: a page, then the file).
        assert {r.split("id=")[1] for r in drive.requests} == {i for _, i in wiki_lm._EN}
        assert glue.requests == [corpus_testing.local_url("", multinli._MNLI_URL)]
        yield data_dir, tmp_dir


def _hparams():
    return registry.hparams("transformer_tiny")


def _encoder(data_dir):
    return text_encoder.SubwordTextEncoder("%s/%s" % (data_dir, EN32K().vocab_filename))


def _chunks(tmp_dir, split):
    return [c["targets"] for c in wiki_lm.concat_generator("%s/enwiki_%s.txt" % (tmp_dir, split),
                                                           80)]


def test_multi_nli_subwords_rows_from_one_vocabulary(generated):
    data_dir, tmp_dir = generated
    assert sorted(n for n in os.listdir(data_dir) if n.startswith("vocab.")) == [
        "vocab.languagemodel_en_wiki32k.32000.subwords"]
    encoder = _encoder(data_dir)
    size = encoder.vocab_size
    lm_id, nli_id = size, size + 1
    concat = encoder.encode("$")[0]
    multi = registry.problem("languagemodel_en_wiki_lm_multi_nli_subwords")
    rows = [r["targets"].tolist() for r in multi.dataset(
        ModeKeys.EVAL, data_dir=data_dir, hparams=_hparams()).as_numpy_iterator()]
    dev_chunks = _chunks(tmp_dir, "eval")
    assert len(dev_chunks) == 3 and len(rows) == 4
    # Each task's dev examples in turn: a Wikipedia chunk, the MNLI pair, the other chunks.
    s1, s2, label = MNLI_DEV
    assert rows[1] == encoder.encode(s1) + [concat] + encoder.encode(s2) + [
        nli_id, size + 2 + LABELS[label]]
    assert sorted([rows[0]] + rows[2:]) == sorted(
        [lm_id] + encoder.encode(chunk) + [text_encoder.EOS_ID] for chunk in dev_chunks)
    assert multi.get_hparams(_hparams()).vocab_size["targets"] == size + 2 + 3


def test_multi_nli_subwords_v2_draws_both_problems_from_the_same_files(generated):
    data_dir, tmp_dir = generated
    encoder = _encoder(data_dir)
    v2 = registry.problem("languagemodel_en_wiki_lm_multi_nli_subwords_v2")
    hp = _hparams()
    hp.max_length = 40
    tf.random.set_seed(5)
    rows = [(int(r["problem_id"][0]), r["targets"].tolist()) for r in v2.dataset(
        ModeKeys.TRAIN, hparams=hp, data_dir=data_dir).take(40).as_numpy_iterator()]

    def padded(ids):
        return (ids + [0] * 40)[:40]

    concat = encoder.encode("$")[0]
    wiki = {tuple(padded(encoder.encode(c) + [text_encoder.EOS_ID]))
            for c in _chunks(tmp_dir, "train")}
    # An MNLI row: premise $ hypothesis (the EOS dropped), then the label id.
    nli = {tuple(padded(encoder.encode(s1) + [concat] + encoder.encode(s2) + [LABELS[label]]))
           for s1, s2, label in MNLI_TRAIN}
    assert {tuple(ids) for i, ids in rows if i == 0} <= wiki
    assert {tuple(ids) for i, ids in rows if i == 1} <= nli
    assert 8 < sum(i for i, _ in rows) < 32
