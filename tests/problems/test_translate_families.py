"""The WMT-style translation families (encs, enes, enet, enfr, enid, enmk, enro, entn).

One local server holds every archive of every family at its real URL path, laid out as
the real one: tgz / plain tar / zip by the URL, CzEng's gzipped tsv files, `.gz` members in
the giga-fren tar, SGML dev files for en-ro. Each family's problem is generated through a
subclass written as user code writes one (a 256-subword vocab, two training shards), and
the records must give back every sentence pair of its corpora; a second run with the
archives already in tmp_dir must download nothing.
"""
import gzip
import os
import random
import shutil
import urllib.parse

import pytest

import corpus_testing

from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.problems import spaces, translate, translate_encs, translate_encs_cubbitt
from t2t.problems import translate_enes, translate_enet
from t2t.problems import translate_enfr, translate_enid, translate_enmk, translate_enro
from t2t.problems import translate_entn, translate_enzh, wiki_lm

MODULES = (translate_encs, translate_enes, translate_enet, translate_enfr, translate_enid,
           translate_enmk, translate_enro, translate_entn, translate_enzh)
WORDS = ("one", "two", "three")


def _dataset_lists(module):
    """{name: list} of the module's corpus lists ([[url, files], ...])."""
    return {name: value for name, value in vars(module).items()
            if isinstance(value, list) and value and isinstance(value[0], list)
            and isinstance(value[0][0], str)}


def _all_datasets():
    seen = []
    for module in MODULES:
        for datasets in _dataset_lists(module).values():
            seen += [d for d in datasets if d not in seen]
    return seen


DATASETS = _all_datasets()


MEMBERS = sorted({(d[0], str(name)) for d in DATASETS for name in d[1]})


def _pairs(dataset):
    """The sentence pairs the fixture puts in one corpus.

    A side's text follows its (archive, member): corpora sharing a file (the English
    newstest2013 of dev.tgz) share its lines, and no two other corpora have a line in common.
    """
    source, target = (MEMBERS.index((dataset[0], str(name))) for name in dataset[1][-2:])
    return [("we read c%d %s ." % (source, w), "nous lisons c%d %s ." % (target, w))
            for w in WORDS]


def _lines(pairs, side):
    return "".join(pair[side] + "\n" for pair in pairs)


def _sgm(pairs, side):
    segs = "".join('<seg id="%d">%s</seg>\n' % (i + 1, p[side]) for i, p in enumerate(pairs))
    return '<refset setid="newsdev2016">\n<doc docid="d" sysid="ref">\n%s</doc>\n</refset>\n' % (
        segs)


def _members(dataset):
    pairs = _pairs(dataset)
    files = dataset[1]
    if files[0] == "tsv":  # CzEng: "id score czech english" rows in gzipped files
        _, source_column, target_column, pattern = files
        rows = ""
        for source, target in pairs:
            row = ["x", "0.9", "", ""]
            row[source_column], row[target_column] = source, target
            rows += "\t".join(row) + "\n"
        return {pattern.replace("*", "01"): gzip.compress(rows.encode("utf-8"))}
    members = {}
    for side, name in enumerate(files):
        if name.endswith(".sgm"):
            members[name] = _sgm(pairs, side)
        elif name.endswith(".gz"):
            members[name] = gzip.compress(_lines(pairs, side).encode("utf-8"))
        else:
            members[name] = _lines(pairs, side)
    return members


def _write_archive(path, url, members):
    """The archive kind follows the URL's file name (OPUS serves its zip as download.php)."""
    name = urllib.parse.unquote(url)
    if name.endswith(".zip"):
        corpus_testing.write_zip(path, members)
    elif name.endswith(".tar"):
        corpus_testing.write_tgz(path, members, mode="w")
    else:
        corpus_testing.write_tgz(path, members)


def _archives():
    """{url: {member: content}} over every corpus of every family."""
    archives = {}
    for dataset in DATASETS:
        archives.setdefault(dataset[0], {}).update(_members(dataset))
    return archives


@pytest.fixture(scope="module")
def corpus_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpora")
    for url, members in _archives().items():
        _write_archive(corpus_testing.served_path(root, url), url, members)
    with corpus_testing.serve_tree(root) as server:
        server.root = root
        yield server


@pytest.fixture
def local_corpora(corpus_server, monkeypatch):
    """Every family's corpus lists pointed at the local server (T2T's lists untouched)."""
    for module in MODULES:
        for name, datasets in _dataset_lists(module).items():
            monkeypatch.setattr(module, name, [
                [corpus_testing.local_url(corpus_server.url, d[0])] + list(d[1:])
                for d in datasets])
    del corpus_server.requests[:]
    return corpus_server


# (T2T's registered name, class, vocab file) of each family's main problem.
FAMILIES = [
    ("translate_encs_wmt32k", translate_encs.TranslateEncsWmt32k,
     "vocab.translate_encs_wmt32k.32768.subwords"),
    ("translate_enes_wmt32k", translate_enes.TranslateEnesWmt32k,
     "vocab.translate_enes_wmt32k.32768.subwords"),
    ("translate_enet_wmt32k", translate_enet.TranslateEnetWmt32k,
     "vocab.translate_enet_wmt32k.32768.subwords"),
    ("translate_enfr_wmt_small8k", translate_enfr.TranslateEnfrWmtSmall8k,
     "vocab.translate_enfr_wmt_small8k.8192.subwords"),
    ("translate_enfr_wmt32k", translate_enfr.TranslateEnfrWmt32k,
     "vocab.translate_enfr_wmt32k.32768.subwords"),
    ("translate_enid_iwslt32k", translate_enid.TranslateEnidIwslt32k,
     "vocab.translate_enid_iwslt32k.32768.subwords"),
    ("translate_enmk_setimes32k", translate_enmk.TranslateEnmkSetimes32k,
     "vocab.translate_enmk_setimes32k.32768.subwords"),
    ("translate_enro_wmt8k", translate_enro.TranslateEnroWmt8k,
     "vocab.translate_enro_wmt8k.8192.subwords"),
    ("translate_entn_rma", translate_entn.TranslateEntnRma, "vocab.entn.32768"),
]
for _name, _cls, _ in FAMILIES:
    corpus_testing.register_user_subclass(_cls, "user_" + _name)

# The byte-level problems, one test each.
CHARACTERS = [
    translate_encs.TranslateEncsWmtCharacters, translate_enes.TranslateEnesWmtCharacters,
    translate_enet.TranslateEnetWmtCharacters, translate_enfr.TranslateEnfrWmtCharacters,
    translate_enfr.TranslateEnfrWmtSmallCharacters, translate_enmk.TranslateEnmkSetimesCharacters,
    translate_enro.TranslateEnroWmtCharacters,
]
corpus_testing.register_user_subclass(translate_enzh.TranslateEnzhWmt32k,
                                      "user_translate_enzh_wmt32k")
for _cls in CHARACTERS:
    corpus_testing.register_user_subclass(_cls, "user_" + _cls.__name__.lower())


def _expected(problem_obj, split):
    return sorted(pair for dataset in problem_obj.source_data_files(split)
                  for pair in _pairs(_original(dataset)))


def _original(dataset):
    """The T2T dataset a locally pointed one stands for (same files, same URL path)."""
    path = urllib.parse.urlparse(dataset[0]).path
    (match,) = [d for d in DATASETS if urllib.parse.urlparse(d[0]).path == path
                and d[1] == dataset[1]]
    return match


def _decoded(paths, encoder, targets_encoder=None):
    targets_encoder = targets_encoder or encoder
    examples = corpus_testing.read_examples(paths)
    assert examples and all(set(ex) == {"inputs", "targets"} for ex in examples)
    assert all(ex["inputs"][-1] == ex["targets"][-1] == text_encoder.EOS_ID for ex in examples)
    return sorted((encoder.decode(ex["inputs"][:-1]), targets_encoder.decode(ex["targets"][:-1]))
                  for ex in examples)


def _served(problem_obj):
    """The request paths of every archive the problem's two splits read."""
    return sorted({urllib.parse.urlparse(d[0]).path + (
        "?" + urllib.parse.urlparse(d[0]).query if urllib.parse.urlparse(d[0]).query else "")
        for split in (spaces.DatasetSplit.TRAIN, spaces.DatasetSplit.EVAL)
        for d in problem_obj.source_data_files(split)})


@pytest.mark.parametrize("name,cls,vocab_filename", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_family_generates_every_pair_and_reuses_placed_archives(local_corpora, tmp_path, name,
                                                                cls, vocab_filename):
    t2t_problem = registry.problem(name)
    assert type(t2t_problem) is cls and t2t_problem.vocab_filename == vocab_filename
    user = registry.problem("user_" + name)
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    user.generate_data(data_dir, tmp_dir)
    assert sorted(set(local_corpora.requests)) == _served(user)
    shards = sorted(n for n in os.listdir(data_dir) if "-of-" in n and n[0] != ".")
    assert shards == ["user_%s-dev-00000-of-00001" % name,
                      "user_%s-train-00000-of-00002" % name,
                      "user_%s-train-00001-of-00002" % name]
    vocab_name = vocab_filename.replace(name, "user_" + name).replace(
        str(t2t_problem.approx_vocab_size), "256")
    encoder = text_encoder.SubwordTextEncoder(os.path.join(data_dir, vocab_name))
    train = _decoded(user.training_filepaths(data_dir, 2, shuffled=True), encoder)
    assert train == _expected(user, spaces.DatasetSplit.TRAIN)
    assert _decoded(user.dev_filepaths(data_dir, 1, shuffled=True), encoder) == _expected(
        user, spaces.DatasetSplit.EVAL)

    # The same archives already in a fresh tmp_dir, under their T2T file names.
    placed, data_dir2 = tmp_path / "placed", str(tmp_path / "data2")
    placed.mkdir()
    for split in (spaces.DatasetSplit.TRAIN, spaces.DatasetSplit.EVAL):
        for dataset in user.source_data_files(split):
            shutil.copy(corpus_testing.served_path(local_corpora.root, dataset[0]),
                        placed / os.path.basename(dataset[0]))
    del local_corpora.requests[:]
    user.generate_data(data_dir2, str(placed))
    assert local_corpora.requests == []
    assert _decoded(user.training_filepaths(data_dir2, 2, shuffled=True), encoder) == train


@pytest.mark.parametrize("cls", CHARACTERS, ids=[c.__name__ for c in CHARACTERS])
def test_character_problems_write_bytes_and_no_vocab(local_corpora, tmp_path, cls):
    user = registry.problem("user_" + cls.__name__.lower())
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    user.generate_data(data_dir, tmp_dir)
    assert not [n for n in os.listdir(data_dir) if n.startswith("vocab")]
    encoder = text_encoder.ByteTextEncoder()
    assert _decoded(user.training_filepaths(data_dir, 2, shuffled=True), encoder) == _expected(
        user, spaces.DatasetSplit.TRAIN)
    assert _decoded(user.dev_filepaths(data_dir, 1, shuffled=True), encoder) == _expected(
        user, spaces.DatasetSplit.EVAL)


def test_t2t_names_vocab_sharing_and_corpora():
    names = set(registry.list_problems())
    for suffix in ("wmt32k", "wmt_characters"):
        assert "translate_encs_" + suffix in names
    for suffix in ("wmt32k", "wmt8k", "wmt_characters", "wmt_clean32k", "wmt32k_packed",
                   "wmt8k_packed"):
        assert "translate_enes_" + suffix in names
    assert {"translate_enet_wmt32k", "translate_enet_wmt_characters", "translate_enid_iwslt32k",
            "translate_enmk_setimes32k", "translate_enmk_setimes_characters",
            "translate_entn_rma"} <= names
    for suffix in ("wmt_small8k", "wmt_small32k", "wmt8k", "wmt32k", "wmt32k_packed",
                   "wmt_characters", "wmt_small_characters", "wmt_multi64k",
                   "wmt_multi64k_packed1k"):
        assert "translate_enfr_" + suffix in names
    for suffix in ("wmt8k", "wmt32k", "wmt_characters", "wmt_multi64k", "wmt_multi_small64k",
                   "wmt_multi_tiny64k", "wmt_multi_tiny64k_packed1k"):
        assert "translate_enro_" + suffix in names
    # Problems that read another's vocabulary, as in T2T.
    wiki = wiki_lm.LanguagemodelDeEnFrRoWiki64k().vocab_filename
    for name, vocab in [("translate_enes_wmt_clean32k", "translate_enes_wmt32k"),
                        ("translate_enes_wmt32k_packed", "translate_enes_wmt32k"),
                        ("translate_enes_wmt8k_packed", "translate_enes_wmt8k"),
                        ("translate_enfr_wmt32k_packed", "translate_enfr_wmt32k")]:
        assert registry.problem(name).vocab_filename == registry.problem(vocab).vocab_filename
    for name in ("translate_enfr_wmt_multi64k", "translate_enfr_wmt_multi64k_packed1k",
                 "translate_enro_wmt_multi64k", "translate_enro_wmt_multi_tiny64k_packed1k"):
        assert registry.problem(name).vocab_filename == wiki
    packed = registry.problem("translate_enro_wmt_multi_tiny64k_packed1k")
    assert (packed.packed_length, packed.inputs_prefix, packed.targets_prefix) == (
        1024, "translate English Romanian ", "translate Romanian English ")
    assert registry.problem("translate_enes_wmt_clean32k").datatypes_to_clean == ["txt"]
    assert registry.problem("translate_enro_wmt_multi_small64k").dataset_splits[0]["shards"] == 16
    # T2T's URLs (a few that tests must not drift from) and archive members.
    assert translate_entn._ENTN_TRAIN_DATASETS[0][0] == (
        "https://github.com/LauraMartinus/ukuxhumana/blob/master/data/en_tn/"
        "eng_tswane.train.tar.gz?raw=true")
    assert translate_enro._ENRO_TEST_DATASETS[0][1] == (
        "dev/newsdev2016-roen-ref.en.sgm", "dev/newsdev2016-roen-src.ro.sgm")
    assert translate_encs._ENCS_TRAIN_DATASETS[0][1] == (
        "tsv", 3, 2, "data.plaintext-format/*train.gz")
    assert translate_enfr._ENFR_TRAIN_LARGE_DATA[3] == [
        "http://www.statmt.org/wmt10/training-giga-fren.tar",
        ("giga-fren.release2.fixed.en.gz", "giga-fren.release2.fixed.fr.gz")]
    small = registry.problem("translate_enfr_wmt_small32k")
    assert small.vocab_data_files() == translate_enfr._ENFR_TRAIN_SMALL_DATA
    assert registry.problem("translate_enfr_wmt32k").vocab_data_files() == (
        translate_enfr._ENFR_TRAIN_LARGE_DATA)


def test_enro_small_problems_sample_a_bounded_seeded_subset(monkeypatch):
    monkeypatch.setattr(translate_enro, "_ENRO_TRAIN_SIZE", 20)
    tiny = registry.problem("translate_enro_wmt_multi_tiny64k")
    monkeypatch.setattr(type(tiny), "how_many_examples_to_sample", 5)
    random.seed(3)
    first = list(tiny._sampled(lambda: iter(range(20))))
    random.seed(3)
    assert list(tiny._sampled(lambda: iter(range(20)))) == first  # seeded
    assert 1 <= len(first) <= 5 and all(x in range(20) for x in first)
    # Too few kept in one pass: a second pass tops it up, never past the count.
    random.seed(0)
    assert len(list(tiny._sampled(lambda: iter(range(3))))) <= 5


def _corpus_pairs(datasets):
    return sorted(pair for dataset in datasets for pair in _pairs(_original(dataset)))


def test_enzh_has_a_vocab_a_side_and_uses_manual_corpora_only_when_placed(local_corpora,
                                                                          tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), tmp_path / "tmp"
    tmp_dir.mkdir()
    # CWMT placed by hand (T2T's manual download); the UN corpus not.
    cwmt_url = translate_enzh._CWMT_TRAIN_DATASETS[0][0]
    shutil.copy(corpus_testing.served_path(local_corpora.root, cwmt_url), tmp_dir / "cwmt.tgz")
    enzh = registry.problem("user_translate_enzh_wmt32k")
    enzh.generate_data(data_dir, str(tmp_dir))
    assert sorted(set(local_corpora.requests)) == [
        "/wmt18/translation-task/dev.tgz", "/wmt18/translation-task/training-parallel-nc-v13.tgz"]
    vocab = "vocab.user_translate_enzh_wmt32k.256.subwords"
    assert (enzh.source_vocab_name, enzh.target_vocab_name) == (vocab + ".en", vocab + ".zh")
    assert sorted(n for n in os.listdir(data_dir) if n.startswith("vocab")) == [
        vocab + ".en", vocab + ".zh"]
    encoders = enzh.feature_encoders(data_dir)
    # Each vocabulary saw one language only.
    assert "lisons_" in encoders["targets"].all_subtoken_strings
    assert "lisons_" not in encoders["inputs"].all_subtoken_strings
    train = _decoded(enzh.training_filepaths(data_dir, 2, shuffled=True), encoders["inputs"],
                     encoders["targets"])
    assert train == _corpus_pairs(translate_enzh._NC_TRAIN_DATASETS +
                                  translate_enzh._CWMT_TRAIN_DATASETS)
    assert _decoded(enzh.dev_filepaths(data_dir, 1, shuffled=True), encoders["inputs"],
                    encoders["targets"]) == _corpus_pairs(translate_enzh._NC_TEST_DATASETS)
    # The module's list is left as it was (T2T appended the manual corpora to it).
    assert len(translate_enzh._NC_TRAIN_DATASETS) == 1
    wmt8k = registry.problem("translate_enzh_wmt8k")
    assert wmt8k.get_training_dataset(str(tmp_dir)) == translate_enzh._NC_TRAIN_DATASETS
    assert wmt8k.dataset_splits[0]["shards"] == 10
    assert wmt8k.source_vocab_name == "vocab.translate_enzh_wmt8k.8192.subwords.en"
    assert translate_enzh.get_filename(translate_enzh._UN_TRAIN_DATASETS) == (
        "UNv1.0.en-zh.tar.gz")


def _user_backtranslate(base, vocab_problem, name):
    """As user code would: a tiny user problem's vocabulary instead of the 32k one."""

    class UserBacktranslate(base):
        @property
        def use_vocab_from_other_problem(self):
            return registry.problem(vocab_problem)

    registry.register_problem(name)(UserBacktranslate)
    return name


BACKTRANSLATE = [
    (_user_backtranslate(translate_enfr.TranslateEnfrWmt32kWithBacktranslateFr,
                         "user_translate_enfr_wmt32k", "user_enfr_backtranslate"),
     "vocab.user_translate_enfr_wmt32k.256.subwords"),
    (_user_backtranslate(translate_encs_cubbitt.TranslateEncsCubbitt,
                         "user_translate_encs_wmt32k", "user_encs_cubbitt"),
     "vocab.user_translate_encs_wmt32k.256.subwords"),
]


@pytest.mark.parametrize("name,vocab_filename", BACKTRANSLATE, ids=[b[0] for b in BACKTRANSLATE])
def test_block_backtranslation_puts_synthetic_then_authentic_pairs_in_one_shard(
        local_corpora, tmp_path, name, vocab_filename):
    data_dir, tmp_dir = str(tmp_path / "data"), tmp_path / "tmp"
    problem_obj = registry.problem(name)
    synthetic = []
    for k, (source_file, target_file) in enumerate(problem_obj.backtranslate_data_filenames):
        block = [("a machine wrote c%d %d ." % (k, i), "une machine a écrit c%d %d ." % (k, i))
                 for i in (1, 2)]
        corpus_testing.write_file(tmp_dir / source_file, _lines(block, 0))
        corpus_testing.write_file(tmp_dir / target_file, _lines(block, 1))
        synthetic.append(block)
    problem_obj.generate_data(data_dir, str(tmp_dir))
    assert sorted(n for n in os.listdir(data_dir) if n.startswith("vocab")) == [vocab_filename]
    encoder = problem_obj.get_or_create_vocab(data_dir, None, force_get=True)
    records = corpus_testing.read_examples(problem_obj.training_filepaths(data_dir, 1, True))
    in_order = [(encoder.decode(r["inputs"][:-1]), encoder.decode(r["targets"][:-1]))
                for r in records]
    authentic = [pair for dataset in problem_obj.source_data_files(spaces.DatasetSplit.TRAIN)
                 for pair in _pairs(_original(dataset))]
    # Written unshuffled: each synthetic block, then the authentic pairs again.
    assert in_order == [pair for block in synthetic for pair in block + authentic]
    assert _decoded(problem_obj.dev_filepaths(data_dir, 1, shuffled=True), encoder) == (
        _expected(problem_obj, spaces.DatasetSplit.EVAL))


def test_backtranslation_problems_t2t_names_and_files():
    t2t_problem = registry.problem("translate_enfr_wmt32k_with_backtranslate_en")
    assert t2t_problem.backtranslate_data_filenames == [
        ("en_mono_en.txt0", "en_mono_fr.txt0"), ("en_mono_en.txt1", "en_mono_fr.txt1"),
        ("en_mono_en.txt2", "en_mono_fr.txt2")]
    assert t2t_problem.vocab_filename == "vocab.translate_enfr_wmt32k.32768.subwords"
    assert not t2t_problem.skip_random_fraction_when_training
    cubbitt = registry.problem("translate_encs_cubbitt")
    assert type(cubbitt) is translate_encs_cubbitt.TranslateEncsCubbitt
    assert isinstance(cubbitt, translate.BlockBacktranslation)
    assert cubbitt.vocab_filename == "vocab.translate_encs_wmt32k.32768.subwords"
    assert cubbitt.backtranslate_data_filenames[2] == ("cs_mono_en.txt2", "cs_mono_cs.txt2")
    assert cubbitt.already_shuffled and cubbitt.dataset_splits[0]["shards"] == 1
    assert cubbitt.source_data_files(spaces.DatasetSplit.EVAL) == (
        translate_encs._ENCS_TEST_DATASETS)
