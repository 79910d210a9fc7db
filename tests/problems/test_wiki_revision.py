"""T2T's wiki_revision problems on tiny revision-history dumps placed under a data prefix
(T2T reads them there, no download): .bz2 files, and a .7z one read through a stand-in `7z`
program on PATH (the real one is not installed here)."""
import bz2
import io
import os
import random
import stat
import sys

import pytest

import corpus_testing

from t2t.core import errors, registry
from t2t.encoders import text_encoder
from t2t.problems import wiki_revision, wiki_revision_utils as utils

R1 = ("'''Alpha''' beta [[Gamma|gamma]]{{cite {{web}}}}&lt;ref&gt;x&lt;/ref&gt;\n"
      "* a list item\n== Heading ==")
R2, R3 = "Delta epsilon zeta", "Eta theta iota"
C1, C2 = "Kappa lambda mu", "Nu xi omicron"


def _page(title, page_id, *texts):
    revisions = "".join(
        "    <revision>\n      <id>%d</id>\n      <text xml:space=\"preserve\">%s</text>\n"
        "    </revision>\n" % (page_id * 100 + n, text) for n, text in enumerate(texts))
    return ("  <page>\n    <title>%s</title>\n    <ns>0</ns>\n    <id>%d</id>\n%s  </page>\n"
            % (title, page_id, revisions))


def _dump(*pages):
    return ("<mediawiki>\n  <siteinfo>x</siteinfo>\n%s</mediawiki>\n" % "".join(pages)).encode()


PREFIX = "enwiki-latest-pages-meta-history"
DUMPS = {  # sorted: file i feeds shard i % 3 (two train shards, one dev)
    PREFIX + "1.xml-p1p10.bz2": _dump(_page("Alpha", 1, R1, R2, R3)),
    PREFIX + "2.xml-p11p20.bz2": _dump(
        _page("Talk:Alpha", 11, "Alpha beta gamma", "Eta theta iota"),
        _page("Words", 12, "Alpha beta gamma Delta epsilon zeta Kappa lambda mu")),
    PREFIX + "3.xml-p21p30.7z": _dump(_page("Kappa", 21, C1, C2)),
}


def _fake_7z(bin_dir):
    """A `7z x -so FILE` that writes the (bz2-compressed) FILE's XML to stdout."""
    path = os.path.join(bin_dir, "7z")
    corpus_testing.write_file(path, "#!%s\nimport bz2, sys\nassert sys.argv[1:3] == ['x', '-so']"
                              "\nsys.stdout.buffer.write(bz2.open(sys.argv[3]).read())\n"
                              % sys.executable)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


@pytest.fixture
def dumps(tmp_path, monkeypatch):
    root = tmp_path / "dumps"
    for name, xml in DUMPS.items():
        corpus_testing.write_file(str(root / name), bz2.compress(xml))
    bin_dir = str(tmp_path / "bin")
    os.makedirs(bin_dir)
    _fake_7z(bin_dir)
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    return str(root / PREFIX)


class _Tiny(wiki_revision.WikiRevision):
    num_train_shards = 2
    num_dev_shards = 1
    introduce_errors = False

    @property
    def approx_vocab_size(self):
        return 2**10


registry.register_problem("wiki_revision_tiny")(_Tiny)


def test_t2t_names_and_defaults():
    for name, cls in [("wiki_revision", wiki_revision.WikiRevision),
                      ("wiki_revision_packed1k", wiki_revision.WikiRevisionPacked1k),
                      ("wiki_revision_packed256", wiki_revision.WikiRevisionPacked256)]:
        assert type(registry.problem(name)) is cls
    problem = registry.problem("wiki_revision")
    assert problem.vocab_filename == utils.vocab_filename(2**15, True) == (
        "vocab.wiki_revision.strip.32768")
    assert (problem.num_train_shards, problem.num_dev_shards, problem.max_segment_length,
            problem.percent_identical_examples, problem.wiki_revision_skip_factor) == (
        50, 1, 256, 0.04, 1.5)
    assert registry.problem("wiki_revision_packed1k").packed_length == 1024
    assert problem.corpus_prefix("/tmp/w") == "/tmp/w/" + PREFIX


def test_text_helpers():
    assert [n for n in range(10) if utils.include_revision(n, 1.5)] == [0, 1, 2, 4, 6]
    assert utils.strip_text(R1) == "Alpha beta gamma"
    assert utils._remove_curly_braces("a{{b{c}}}d") == "ad"
    assert utils._remove_boring_lines("[x]\n_y\nok\n'q'") == "ok\n'q'"  # T2T kept [ and _
    assert utils.get_text('<id>1</id>\n<text bytes="4">[[A|b]] c</text>') == "b c"
    assert utils.get_text('<text bytes="0" />') == ""
    assert utils.fast_match_sequences("the cat", "the dog") == [
        ("equal", 0, 4, 0, 4), ("diff", 4, 7, 4, 7)]
    assert utils.fast_match_sequences("abcdef", "abXdef") == [
        ("equal", 0, 2, 0, 2), ("diff", 2, 3, 2, 3), ("equal", 3, 6, 3, 6)]
    assert utils.edit_distance_filter([("abcd", "abcd"), ("abcd", "wxyz")], 1) == (
        [("abcd", "abcd")], 1)
    assert utils.throw_empty_pairs([("a", ""), ("b", "c")]) == [("b", "c")]
    assert utils.introduce_errors("the fat cat", 0.0) == ("the fat cat", 0)
    noisy = utils.introduce_errors("the fat cat sat on the mat", 0.3, rng=random.Random(5))
    assert noisy == utils.introduce_errors("the fat cat sat on the mat", 0.3,
                                           rng=random.Random(5))
    assert noisy[1] > 0 and noisy[0] != "the fat cat sat on the mat"


def test_pages_split_across_reads(monkeypatch):
    """Pages straddling 7-byte reads come out once each, an oversized one is skipped
    (T2T re-read a stale leftover and could yield a page twice)."""
    monkeypatch.setattr(utils, "_READ_BYTES", 7)
    big = _page("Big", 2, "x" * 400)
    xml = _dump(_page("One", 1, "a"), big, _page("Three", 3, "c"), _page("User:Z", 4, "d"))
    pages = list(utils.file_page_generator(io.BytesIO(xml), max_page_size=300))
    assert [(p["title"], p["id"], len(p["revisions"])) for p in pages] == [
        ("One", 1, 1), ("Three", 3, 1)]
    assert utils.get_text(pages[1]["revisions"][0]) == "c"


def test_generates_revision_pairs_per_shard(dumps, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    problem = registry.problem("wiki_revision_tiny")
    problem.data_prefix = dumps
    problem.generate_data(data_dir, tmp_dir)
    names = ["wiki_revision_tiny-train-00000-of-00002", "wiki_revision_tiny-train-00001-of-00002",
             "wiki_revision_tiny-dev-00000-of-00001"]
    assert sorted(n for n in os.listdir(data_dir) if not n.startswith(".")) == sorted(
        names + ["stats_" + n for n in names] + ["vocab.wiki_revision.strip.1024"])
    assert sorted(os.listdir(tmp_dir)) == sorted(DUMPS)  # copied from the prefix
    encoder = problem.get_feature_encoders(data_dir)["inputs"]

    def decoded(name):
        examples = corpus_testing.read_examples([os.path.join(data_dir, name)])
        assert all(ex["inputs"][-1] == ex["targets"][-1] == 1 for ex in examples)
        return sorted((encoder.decode(ex["inputs"][:-1]), encoder.decode(ex["targets"][:-1]))
                      for ex in examples)

    assert decoded(names[0]) == [("Alpha beta gamma", R2), (R2, R3)]
    assert decoded(names[1]) == []  # one revision only; Talk: pages are no articles
    assert decoded(names[2]) == [(C1, C2)]
    with open(os.path.join(data_dir, "stats_" + names[2])) as stats:
        text = stats.read()
    assert "pages processed: 1\n" in text and "examples generated: 1\n" in text

    # A given vocab_file is used, and copied beside the data.
    other = registry.problem("wiki_revision_tiny")
    other.data_prefix, other.vocab_file = dumps, os.path.join(data_dir, other.vocab_filename)
    other.num_train_shards = 1
    other.num_dev_shards = 2
    other.generate_data(str(tmp_path / "data2"), tmp_dir, task_id=0)
    assert sorted(n for n in os.listdir(str(tmp_path / "data2")) if n[0] != ".") == [
        "stats_wiki_revision_tiny-train-00000-of-00001", "vocab.wiki_revision.strip.1024",
        "wiki_revision_tiny-train-00000-of-00001"]


def test_errors_and_noise_are_deterministic(dumps, tmp_path, monkeypatch):
    problem = registry.problem("wiki_revision")
    page = {"title": "A", "id": 1, "revisions": [
        "<text>%s</text>" % ("the quick brown fox jumps over the lazy dog " * 20)] * 2}
    first = problem.page_to_examples(page, None, rng=random.Random(1))
    again = registry.problem("wiki_revision").page_to_examples(page, None,
                                                               rng=random.Random(1))
    assert first == again and first
    assert problem.num_introduced_errors > 0  # the inputs got errors, the targets none
    assert all(ex["targets"][-1] == text_encoder.EOS_ID for ex in first)

    with pytest.raises(errors.UserError, match=r"wiki_revision: no history dump matches "
                                               r".*nowhere/%s\*" % PREFIX):
        registry.problem("wiki_revision").generate_data(str(tmp_path / "d"),
                                                        str(tmp_path / "nowhere"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    seven = [f for f in os.listdir(os.path.dirname(dumps)) if f.endswith(".7z")]
    with pytest.raises(errors.UserError, match=r"reading .7z dumps needs the 7z program"):
        list(utils.corpus_page_generator([os.path.join(os.path.dirname(dumps), seven[0])],
                                         str(tmp_path / "t"), 26))


class _TinyPacked(_Tiny, wiki_revision.WikiRevisionPacked256):
    pass


registry.register_problem("wiki_revision_tiny_packed256")(_TinyPacked)


def test_packed_shard_holds_both_pairs_in_one_row(dumps, tmp_path):
    data_dir = str(tmp_path / "data")
    problem = registry.problem("wiki_revision_tiny_packed256")
    problem.data_prefix = dumps
    problem.generate_data(data_dir, str(tmp_path / "tmp"), task_id=0)
    [row] = corpus_testing.read_examples(
        [os.path.join(data_dir, "wiki_revision_tiny_packed256-train-00000-of-00002")])
    # Two 3-word pairs (+ EOS) in one row of at most 256 ids; which comes first is the
    # shuffle's, the segments and positions are not.
    for side in ("inputs", "targets"):
        assert row[side + "_segmentation"] == [1] * 4 + [2] * 4
        assert row[side + "_position"] == [0, 1, 2, 3] * 2
        assert row[side][3] == row[side][7] == text_encoder.EOS_ID
