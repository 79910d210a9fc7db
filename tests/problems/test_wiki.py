"""T2T's wiki problems on a tiny bz2 pages-articles dump served from 127.0.0.1 at the real
URL's path: the split into parts, the dev/train choice of parts, the article cleanup, and
scrambled inputs."""
import bz2
import os

import numpy as np
import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import problem, wiki

PART_BYTES = 1200

ARTICLE = ("'''Anarchism''' is a [[political philosophy]] that rejects [[State (polity)|states]]"
           " and hierarchies.&lt;ref name=a&gt;Ward 2004&lt;/ref&gt; It is usually placed on "
           "the far left of the [[political spectrum]], beside socialism. [[Category:Anarchism]]")
CLEAN = ("Anarchism is a political philosophy that rejects states and hierarchies. It is "
         "usually placed on the far left of the political spectrum, beside socialism. ")
ARTICLE2 = ("'''Autism''' is a [[neurodevelopmental disorder]] characterized by difficulties"
            " with social interaction and communication, and by restricted and repetitive "
            "behavior.&lt;ref&gt;DSM-5&lt;/ref&gt;")
CLEAN2 = ("Autism is a neurodevelopmental disorder characterized by difficulties with social "
          "interaction and communication, and by restricted and repetitive behavior.")


def _page(title, text):
    return ("  <page>\n    <title>%s</title>\n    <ns>0</ns>\n    <revision>\n"
            "      <text xml:space=\"preserve\">%s</text>\n    </revision>\n  </page>\n"
            % (title, text))


def _block(*pages):
    """Pages padded by a filler line to exactly PART_BYTES bytes: one part of the split."""
    body = "".join(pages).encode("utf-8")
    filler = PART_BYTES - len(body) - 1
    assert filler > 0
    return body + b"-" * filler + b"\n"


BLOCKS = [
    _block(_page("Anarchism", ARTICLE)),                                     # part 0: dev
    _block(_page("Autism", ARTICLE2), _page("Category:Anarchism", ARTICLE)),  # part 1: train
    _block(_page("AccessibleComputing", "#REDIRECT [[Computer accessibility]]")),  # 2: dev
    _block(_page("Anarchism", ARTICLE2)),                                    # part 3: train
]


def test_cleanup_helpers():
    assert len(CLEAN) > 140 and len(CLEAN2) > 140  # articles, not redirects
    assert wiki._remove_double_brackets("a [[b]] [[c|d]] [[File:x.png|e]]") == "a b d "
    assert wiki._remove_references("x&lt;ref&gt;y&lt;/ref&gt;z") == "xz"
    assert wiki._remove_triple_quotes("'''bold''' text") == "bold text"
    assert wiki._find_and_replace("keep [[open", "[[", "]]", lambda s: s) == "keep "
    pages = wiki._dump_to_pages(_page("T", "body") + "<page>\nunclosed")
    assert len(pages) == 1
    assert (wiki._page_to_title(pages[0]), wiki._page_to_text(pages[0])) == ("T", "body")
    with pytest.raises(ValueError, match="without <title>"):
        wiki._page_to_title("<text>x</text>")


def test_split_lines_into_parts_keeps_lines_whole(tmp_path):
    prefix = str(tmp_path / "dump.xml-part-")
    paths = wiki.split_lines_into_parts([b"ab\n", b"cd\n", b"e\n", b"0123456789\n"], prefix, 5)
    assert [os.path.basename(p) for p in paths] == [
        "dump.xml-part-%05d" % i for i in range(5)]
    assert [open(p, "rb").read() for p in paths] == [
        b"ab\n", b"cd\ne\n", b"01234", b"56789", b"\n"]
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".incomplete")]


@pytest.fixture(scope="module")
def dump_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("wiki_dump")
    corpus_testing.write_file(corpus_testing.served_path(root, wiki.CORPUS_URL),
                              bz2.compress(b"".join(BLOCKS)))
    with corpus_testing.serve_tree(root) as server:
        yield server


@pytest.fixture
def local(dump_server, monkeypatch):
    monkeypatch.setattr(wiki, "CORPUS_URL",
                        corpus_testing.local_url(dump_server.url, wiki.CORPUS_URL))
    base = wiki.LanguagemodelWikiXmlV8kL1k
    monkeypatch.setattr(base, "split_part_bytes", PART_BYTES)
    monkeypatch.setattr(base, "dev_fraction", 2)
    monkeypatch.setattr(base, "dataset_splits", [{"split": problem.DatasetSplit.TRAIN, "shards": 1},
                                                 {"split": problem.DatasetSplit.EVAL, "shards": 1}])
    del dump_server.requests[:]
    return dump_server


def _examples(data_dir, name, split):
    [path] = [os.path.join(data_dir, n) for n in os.listdir(data_dir)
              if n.startswith("%s-%s-" % (name, split))]
    return corpus_testing.read_examples([path])


def test_noref_articles_behind_title_lines(local, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    noref = registry.problem("languagemodel_wiki_noref_v8k_l1k")
    noref.generate_data(data_dir, tmp_dir)
    assert local.requests == ["/download/enwiki-20171201/enwiki-20171201-pages-articles.xml.bz2"]
    parts = sorted(n for n in os.listdir(tmp_dir) if "-part-" in n)
    assert parts == ["enwiki-20171201-pages-articles.xml-part-%05d" % i for i in range(4)]
    assert [open(os.path.join(tmp_dir, p), "rb").read() for p in parts] == BLOCKS
    encoder = text_encoder.SubwordTextEncoder(
        os.path.join(data_dir, "vocab.languagemodel_wiki_noref_v8k_l1k.8192.subwords"))

    def text_of(split):
        [example] = _examples(data_dir, noref.name, split)
        assert len(example["targets"]) == 1024  # the short text padded (remainder "pad")
        return encoder.decode([i for i in example["targets"] if i])

    # Train: parts 1 and 3 (the Category page dropped); dev: parts 0 and 2 (the redirect,
    # 140 characters or fewer, dropped).
    assert text_of("train") == ('title: "Autism" length: %d\n%s\n' % (len(CLEAN2), CLEAN2) +
                                'title: "Anarchism" length: %d\n%s\n' % (len(CLEAN2), CLEAN2))
    assert text_of("dev") == 'title: "Anarchism" length: %d\n%s\n' % (len(CLEAN), CLEAN)

    # Another problem reuses the parts: no second download.
    scramble = registry.problem("languagemodel_wiki_scramble_l128")
    np.random.seed(0)
    scramble.generate_data(data_dir, tmp_dir)
    assert len(local.requests) == 1
    examples = _examples(data_dir, scramble.name, "train")
    assert examples and all(len(ex["targets"]) == len(ex["inputs"]) == 128 for ex in examples)
    for example in examples:
        targets, inputs = np.array(example["targets"]), np.array(example["inputs"])
        assert sorted(targets) == sorted(inputs)
        assert (targets == inputs).sum() >= 64  # at most half of the positions move
        assert (targets != inputs).any()
    xml_encoder = text_encoder.SubwordTextEncoder(
        os.path.join(data_dir, "vocab.languagemodel_wiki_scramble_l128.8192.subwords"))
    # The training parts' ids, each part encoded alone, in 128-id pieces; the rest dropped.
    ids = [i for block in (BLOCKS[1], BLOCKS[3]) for i in xml_encoder.encode(block.decode())]
    assert sorted(ex["targets"] for ex in examples) == sorted(
        ids[k:k + 128] for k in range(0, len(ids) - 127, 128))


def test_registered_wiki_problems():
    expected = {
        "languagemodel_wiki_xml_v8k_l1k": (8192, 1024, False),
        "languagemodel_wiki_xml_v8k_l4k": (8192, 4096, False),
        "languagemodel_wiki_scramble_l128": (8192, 128, True),
        "languagemodel_wiki_scramble_l1k": (8192, 1024, True),
        "languagemodel_wiki_noref_v8k_l1k": (8192, 1024, False),
        "languagemodel_wiki_noref_v8k_l16k": (8192, 16384, False),
        "languagemodel_wiki_noref_v32k_l1k": (32768, 1024, False),
        "languagemodel_wiki_noref_v32k_l16k": (32768, 16384, False),
        "languagemodel_wiki_noref_v128k_l1k": (131072, 1024, False),
    }
    for name, values in expected.items():
        p = registry.problem(name)
        assert (p.approx_vocab_size, p.sequence_length, p.has_inputs) == values, name
        assert p.dev_fraction == 5000 and p.split_part_bytes == 4 * 2**20
    assert registry.problem("languagemodel_wiki_noref_v8k_l1k").max_chars_for_vocab == 21240483
    assert registry.problem("languagemodel_wiki_xml_v8k_l4k").max_chars_for_vocab == 41800829
    assert registry.problem("languagemodel_wiki_scramble_l1k").remainder_policy == "drop"
    assert wiki.CORPUS_URL.endswith("/enwiki-20171201/enwiki-20171201-pages-articles.xml.bz2")
