"""The CNN/Daily Mail summarization problems against a local server holding stories archives.

cnn_stories.tgz and dailymail_stories.tgz hold cnn/stories/<sha1 of url>.story and
dailymail/stories/...; the split lists are See et al.'s all_{train,val,test}.txt, one URL a
line (one with no story file, as in the real lists). The Drive URLs keep their query strings.
"""
import hashlib
import random

import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import cnn_dailymail, spaces, wiki_lm


def _url(corpus, i):
    return "http://www.%s.com/2015/story-%d.html" % (corpus, i)


# url -> (corpus, .story text)
STORIES = {
    _url("cnn", 1): ("cnn", "Paris (CNN) -- The cat sat on the mat\n\nIt was happy!\n\n"
                            "@highlight\n\nCat sits on mat\n\n@highlight\n\nCat is \u201chappy\u201d\n"),
    _url("dailymail", 2): ("dailymail", "By a reporter\n\nA dog ran (fast)\n\n@highlight\n\n"
                                        "Dog runs\n"),
    _url("cnn", 4): ("cnn", "Text without highlights.\n"),
    _url("dailymail", 5): ("dailymail", "@highlight\n\nA highlight without text\n"),
    _url("cnn", 6): ("cnn", "The dev story\n\n@highlight\n\nDev\n"),
    _url("dailymail", 7): ("dailymail", "The test story.\n\n@highlight\n\nTest\n"),
}
LISTS = {"train": [_url("cnn", 1), _url("dailymail", 2), _url("cnn", 3), _url("cnn", 4),
                   _url("dailymail", 5)],
         "val": [_url("cnn", 6)], "test": [_url("dailymail", 7)]}
TRAIN = [("Paris (CNN) -- The cat sat on the mat. It was happy!",
          "Cat sits on mat. Cat is \u201chappy\u201d"),
         ("By a reporter. A dog ran (fast)", "Dog runs.")]


def _story_members(corpus):
    return {"%s/stories/%s.story" % (corpus, hashlib.sha1(url.encode()).hexdigest()): text
            for url, (which, text) in STORIES.items() if which == corpus}


def _split_lists():
    return {"all_%s.txt" % split: "".join(url + "\n" for url in urls)
            for split, urls in LISTS.items()}


@pytest.fixture(scope="module")
def cnndm_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("cnndm")
    for corpus in ("cnn", "dailymail"):
        corpus_testing.write_tgz(root / corpus / "uc", _story_members(corpus))
    for name, text in _split_lists().items():
        corpus_testing.write_file(root / "url_lists" / name, text)
    with corpus_testing.serve_tree(root) as server:
        yield server


@pytest.fixture
def local_cnndm(cnndm_server, monkeypatch):
    base = cnndm_server.url
    urls = {corpus: "%s/%s/uc?%s" % (base, corpus, cnn_dailymail.URLS[corpus].split("?")[1])
            for corpus in ("cnn", "dailymail")}
    urls.update({spaces.DatasetSplit.TRAIN: base + "/url_lists/all_train.txt",
                 spaces.DatasetSplit.EVAL: base + "/url_lists/all_val.txt",
                 spaces.DatasetSplit.TEST: base + "/url_lists/all_test.txt"})
    monkeypatch.setattr(cnn_dailymail.SummarizeCnnDailymail32k, "urls", urls)
    del cnndm_server.requests[:]
    return cnndm_server


corpus_testing.register_user_subclass(cnn_dailymail.SummarizeCnnDailymail32k,
                                      "summarize_cnn_dailymail_tiny", approx_vocab_size=2**7)


def test_t2t_names_urls_and_vocabularies():
    assert cnn_dailymail._CNN_STORIES_DRIVE_URL == (
        "https://drive.google.com/uc?export=download&id=0BwmD_VLjROrfTHk4NFg2SndKcjQ")
    assert cnn_dailymail._TEST_URLS == ("https://raw.githubusercontent.com/abisee/cnn-dailymail/"
                                        "master/url_lists/all_test.txt")
    base = registry.problem("summarize_cnn_dailymail32k")
    assert base.vocab_filename == "vocab.summarize_cnn_dailymail32k.32768.subwords"
    assert [s["shards"] for s in base.dataset_splits] == [100, 10, 10]
    assert base.is_generate_per_split and base.has_inputs
    shared = {"summarize_cnn_dailymail_wiki_lm_shared_vocab": wiki_lm.LanguagemodelEnWiki32k,
              "summarize_cnn_dailymail_wiki_lm_shared_vocab64k": wiki_lm.LanguagemodelEnWiki64k,
              "summarize_cnn_dailymail_wiki_lm_multi_vocab64k":
                  wiki_lm.LanguagemodelDeEnFrRoWiki64k,
              "summarize_cnn_dailymail_multi64k_packed1k": wiki_lm.LanguagemodelDeEnFrRoWiki64k}
    for name, other in shared.items():
        assert registry.problem(name).vocab_filename == other().vocab_filename
    packed = registry.problem("summarize_cnn_dailymail_multi64k_packed1k")
    assert (packed.packed_length, packed.num_training_examples) == (1024, 252600)
    assert packed.inputs_prefix == "CNN Daily Mail article to summary "
    assert packed.targets_prefix == "CNN Daily Mail summary to article "
    fractions = {suffix: registry.problem(
        "summarize_frac%s_cnn_dailymail_wiki_lm_shared_vocab64k" % suffix).fraction_of_data()
        for suffix in ("", "0p1", "1", "2", "5", "10", "20", "50")}
    assert fractions == {"": 1.0, "0p1": 0.001, "1": 0.01, "2": 0.02, "5": 0.05, "10": 0.1,
                         "20": 0.2, "50": 0.5}
    assert cnn_dailymail.fix_run_on_sents("It ran") == "It ran."
    assert cnn_dailymail.fix_run_on_sents("It ran \u2019") == "It ran \u2019"


def test_generates_the_listed_stories_and_writes_their_raw_text(local_cnndm, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem = registry.problem("summarize_cnn_dailymail_tiny")
    problem.generate_data(data_dir, tmp_dir)
    # (Drive files are asked for twice: a probe for Drive's warning page, then the file.)
    assert sorted(set(local_cnndm.requests)) == [
        "/cnn/uc?export=download&id=0BwmD_VLjROrfTHk4NFg2SndKcjQ",
        "/dailymail/uc?export=download&id=0BwmD_VLjROrfM1BxdkxVaTY2bWs",
        "/url_lists/all_train.txt", "/url_lists/all_val.txt"]
    encoder = text_encoder.SubwordTextEncoder(
        str(tmp_path / "data" / "vocab.summarize_cnn_dailymail_tiny.128.subwords"))

    def pairs(paths):
        examples = corpus_testing.read_examples(paths)
        assert all(set(ex) == {"inputs", "targets"} and ex["inputs"][-1] == 1 and
                   ex["targets"][-1] == 1 for ex in examples)
        return sorted((encoder.decode(ex["inputs"][:-1]), encoder.decode(ex["targets"][:-1]))
                      for ex in examples)

    assert pairs(problem.training_filepaths(data_dir, 2, True)) == sorted(TRAIN)
    assert pairs(problem.dev_filepaths(data_dir, 1, True)) == [("The dev story.", "Dev.")]
    # The raw texts, one story a line in URL-list order, for ROUGE.
    assert (tmp_path / "tmp" / "cnndm.train.source").read_text("utf-8") == \
        "".join(story + "\n" for story, _ in TRAIN)
    assert (tmp_path / "tmp" / "cnndm.train.target").read_text("utf-8") == \
        "".join(summary + "\n" for _, summary in TRAIN)
    assert (tmp_path / "tmp" / "cnndm.dev.target").read_text("utf-8") == "Dev.\n"


def test_extracted_stories_and_lists_in_tmp_dir_are_not_downloaded(local_cnndm, tmp_path):
    tmp_dir = tmp_path / "tmp"
    for corpus in ("cnn", "dailymail"):
        for name, text in _story_members(corpus).items():
            corpus_testing.write_file(tmp_dir / name, text)
    for name, text in _split_lists().items():
        corpus_testing.write_file(tmp_dir / name, text)
    samples = list(registry.problem("summarize_cnn_dailymail32k").generate_samples(
        None, str(tmp_dir), spaces.DatasetSplit.TEST))
    assert samples == [{"inputs": "The test story.", "targets": "Test."}]
    assert (tmp_dir / "cnndm.test.source").read_text() == "The test story.\n"
    assert local_cnndm.requests == []


def test_vocab_text_joins_article_and_highlights(local_cnndm, tmp_path):
    texts = list(registry.problem("summarize_cnn_dailymail_tiny").generate_text_for_vocab(
        None, str(tmp_path)))
    assert texts == [" ".join(pair) for pair in TRAIN]


def test_fraction_keeps_a_seeded_share_of_the_training_stories(local_cnndm, tmp_path):
    class Half(cnn_dailymail.SummarizeFracCnnDailymailWikiLMSharedVocab64k):
        def fraction_of_data(self):
            return 0.5

    def train(seed):
        random.seed(seed)
        return list(Half().generate_samples(None, str(tmp_path), spaces.DatasetSplit.TRAIN))

    kept = [train(seed) for seed in range(8)]
    assert all(len(samples) == 1 for samples in kept)
    assert train(3) == kept[3]
    assert {samples[0]["inputs"] for samples in kept} == {story for story, _ in TRAIN}
    dev = list(Half().generate_samples(None, str(tmp_path), spaces.DatasetSplit.EVAL))
    assert dev == [{"inputs": "The dev story.", "targets": "Dev."}]
