"""Translation problems end to end against a local HTTP server that mimics statmt.org.

The test builds small .tgz archives with the member paths of the real WMT archives, serves
them on 127.0.0.1, points the module's corpus lists at that server (keeping the real URL
paths), runs `generate_data`, and checks shards, vocab and a lossless read-back.
"""
import functools
import gzip
import io
import os
import tarfile
import urllib.parse

import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

import http_testing

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.problems import problem, text_problems, translate, translate_ende

EN_DE_CORPORA = {
    "nc": [
        ("The economy grew by 3% last year.", "Die Wirtschaft wuchs im letzten Jahr um 3 %."),
        ("Prices are rising again.", "Die Preise steigen wieder."),
        ("Europe faces a difficult choice.", "Europa steht vor einer schwierigen Wahl."),
        ("Is the crisis over?", "Ist die Krise vorbei?"),
        ("Banks must lend more.", "Banken müssen mehr Kredite vergeben."),
        ("Growth remains weak — for now.", "Das Wachstum bleibt schwach – vorerst."),
        ("China’s exports fell.", "Chinas Exporte sind gesunken."),
        ("Nobody knows the answer.", "Niemand kennt die Antwort."),
    ],
    "cc": [
        ("Welcome to our hotel!", "Willkommen in unserem Hotel!"),
        ("Free Wi-Fi in all rooms.", "Kostenloses WLAN in allen Zimmern."),
        ("Click here to book.", "Klicken Sie hier, um zu buchen."),
        ("Breakfast is served from 7 to 10.", "Frühstück gibt es von 7 bis 10 Uhr."),
        ("The street is quiet.", "Die Straße ist ruhig."),
        ("Contact us by e-mail.", "Kontaktieren Sie uns per E-Mail."),
        ("Größe: 42", "Größe: 42"),
        ("Price per night: 80 €", "Preis pro Nacht: 80 €"),
    ],
    "ep": [
        ("Resumption of the session", "Wiederaufnahme der Sitzungsperiode"),
        ("Please rise, then, for this minute' s silence.",
         "Ich bitte Sie, sich zu einer Schweigeminute zu erheben."),
        ("(The House rose and observed a minute' s silence)",
         "(Das Parlament erhebt sich zu einer Schweigeminute.)"),
        ("Madam President, on a point of order.", "Frau Präsidentin, zur Geschäftsordnung."),
        ("Thank you, Mr Segni, I shall do so gladly.",
         "Vielen Dank, Herr Segni, das will ich gerne tun."),
        ("The debate is closed.", "Die Aussprache ist geschlossen."),
        ("The vote will take place tomorrow at 12 noon.",
         "Die Abstimmung findet morgen um 12.00 Uhr statt."),
        ("That is the first point.", "Das ist der erste Punkt."),
    ],
    "dev": [
        ("A Republican strategy to counter the re-election of Obama",
         "Eine republikanische Strategie, um der Wiederwahl von Obama entgegenzutreten"),
        ("Republican leaders justified their policy.",
         "Die Führungskräfte der Republikaner rechtfertigen ihre Politik."),
        ("However, the Brennan Centre considers this a myth.",
         "Allerdings hält das Brennan Center letzteres für einen Mythos."),
        ("Indeed, 11 % of American citizens do not have it.",
         "Tatsächlich besitzen 11 % der amerikanischen Bürger keinen."),
        ("It was the 5th of May.", "Es war der 5. Mai."),
    ],
}


# ----------------------------------------------------------------------------
# Fixtures: archives laid out like the real ones, a local HTTP server
# ----------------------------------------------------------------------------
def _add_member(tar, name, text):
    data = text.encode("utf-8") if isinstance(text, str) else text
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _lines(pairs, side):
    return "".join(pair[side] + "\n" for pair in pairs)


def _sgm(pairs, side, setid="newstest2013"):
    """A WMT-style SGM file: srcset/refset, doc, p and one <seg> per sentence."""
    outer = "srcset" if side == 0 else "refset"
    lang = "en" if side == 0 else "de"
    lines = ['<%s setid="%s" srclang="any" trglang="%s">' % (outer, setid, lang),
             '<doc sysid="ref" docid="doc-1" genre="news" origlang="en">', "<p>"]
    lines += ['<seg id="%d">%s</seg>' % (i + 1, pair[side]) for i, pair in enumerate(pairs)]
    lines += ["</p>", "</doc>", "</%s>" % outer]
    return "\n".join(lines) + "\n"


def _write_tgz(path, members):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members.items():
            _add_member(tar, name, text)


def _serve_path(url):
    return urllib.parse.urlparse(url).path.lstrip("/")


@pytest.fixture(scope="module")
def wmt_server(tmp_path_factory):
    """Serves the four archives under their real URL paths; yields the base URL."""
    root = str(tmp_path_factory.mktemp("wmt_server"))
    (nc_url, nc_files), (cc_url, cc_files), (ep_url, ep_files) = \
        translate_ende._ENDE_TRAIN_DATASETS
    (dev_url, dev_files), = translate_ende._ENDE_EVAL_DATASETS
    for url, files, key in ((nc_url, nc_files, "nc"), (cc_url, cc_files, "cc"),
                            (ep_url, ep_files, "ep")):
        pairs = EN_DE_CORPORA[key]
        _write_tgz(os.path.join(root, _serve_path(url)),
                   {files[0]: _lines(pairs, 0), files[1]: _lines(pairs, 1)})
    dev = EN_DE_CORPORA["dev"]
    # The real dev.tgz holds every newstest as plain text and as SGM; so does this one.
    _write_tgz(os.path.join(root, _serve_path(dev_url)), {
        dev_files[0]: _lines(dev, 0), dev_files[1]: _lines(dev, 1),
        "dev/newstest2013-src.en.sgm": _sgm(dev, 0), "dev/newstest2013-ref.de.sgm": _sgm(dev, 1),
    })
    with http_testing.local_http_server(
            functools.partial(http_testing.QuietFileHandler, directory=root)) as server:
        yield server.url


def _local(base_url, datasets):
    """The same corpus lists with the host replaced by the local server (paths kept)."""
    return [[base_url + urllib.parse.urlparse(url).path, files] for url, files in datasets]


@pytest.fixture
def local_wmt(wmt_server, monkeypatch):
    monkeypatch.setattr(translate_ende, "_ENDE_TRAIN_DATASETS",
                        _local(wmt_server, translate_ende._ENDE_TRAIN_DATASETS))
    monkeypatch.setattr(translate_ende, "_ENDE_EVAL_DATASETS",
                        _local(wmt_server, translate_ende._ENDE_EVAL_DATASETS))
    return wmt_server


def _read_examples(paths):
    examples = []
    for path in paths:
        for record in generator_utils.read_records(path):
            features = tf.train.Example.FromString(record).features.feature
            examples.append({key: list(features[key].int64_list.value)
                             for key in ("inputs", "targets")})
    return examples


def _decode_pairs(examples, encoder):
    pairs = []
    for example in examples:
        assert example["inputs"][-1] == text_encoder.EOS_ID
        assert example["targets"][-1] == text_encoder.EOS_ID
        assert text_encoder.EOS_ID not in example["inputs"][:-1]
        pairs.append((encoder.decode(example["inputs"][:-1]),
                      encoder.decode(example["targets"][:-1])))
    return sorted(pairs)


# ----------------------------------------------------------------------------
# The registered problems
# ----------------------------------------------------------------------------
def test_real_corpus_urls_and_members_are_t2ts():
    urls = [url for url, _ in translate_ende._ENDE_TRAIN_DATASETS]
    assert urls == [
        "http://data.statmt.org/wmt18/translation-task/training-parallel-nc-v13.tgz",
        "http://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz",
        "http://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz",
    ]
    assert translate_ende._ENDE_TRAIN_DATASETS[0][1] == (
        "training-parallel-nc-v13/news-commentary-v13.de-en.en",
        "training-parallel-nc-v13/news-commentary-v13.de-en.de")
    assert translate_ende._ENDE_EVAL_DATASETS == [[
        "http://data.statmt.org/wmt17/translation-task/dev.tgz",
        ("dev/newstest2013.en", "dev/newstest2013.de")]]


def test_registered_names_vocab_sizes_and_files():
    wmt8k = registry.problem("translate_ende_wmt8k")
    wmt32k = registry.problem("translate_ende_wmt32k")
    chars = registry.problem("translate_ende_wmt_characters")
    assert isinstance(wmt8k, translate_ende.TranslateEndeWmt32k)  # 8k subclasses 32k, as T2T
    assert (wmt8k.approx_vocab_size, wmt32k.approx_vocab_size) == (2**13, 2**15)
    assert wmt8k.vocab_filename == "vocab.translate_ende_wmt8k.8192.subwords"
    assert wmt32k.vocab_filename == "vocab.translate_ende_wmt32k.32768.subwords"
    assert chars.vocab_type == "character"
    assert wmt32k.is_generate_per_split
    assert wmt8k.decode_hooks == [translate.compute_bleu_summaries]
    assert registry.problem("translate_ende_wmt32k_packed").vocab_filename == \
        wmt32k.vocab_filename
    assert registry.problem("translate_ende_wmt32k_packed").packed_length == 256
    rapid = registry.problem("translate_ende2018_wmt32k")
    train = rapid.source_data_files(problem.DatasetSplit.TRAIN)
    assert train[:3] == translate_ende._ENDE_TRAIN_DATASETS
    assert train[3][0].endswith("/rapid2016.tgz")
    assert wmt8k.source_data_files(problem.DatasetSplit.EVAL) == \
        translate_ende._ENDE_EVAL_DATASETS
    assert wmt8k.vocab_data_files() == translate_ende._ENDE_TRAIN_DATASETS


def test_translate_ende_wmt8k_end_to_end(local_wmt, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    ende = registry.problem("translate_ende_wmt8k")
    ende.generate_data(data_dir, tmp_dir)

    train_paths = ende.training_filepaths(data_dir, 100, shuffled=True)
    dev_paths = ende.dev_filepaths(data_dir, 1, shuffled=True)
    assert os.path.basename(train_paths[7]) == "translate_ende_wmt8k-train-00007-of-00100"
    assert os.path.basename(dev_paths[0]) == "translate_ende_wmt8k-dev-00000-of-00001"
    expected_files = {os.path.basename(p) for p in train_paths + dev_paths}
    expected_files |= {".%s.shard.json" % name for name in expected_files}  # shard_check
    expected_files.add("vocab.translate_ende_wmt8k.8192.subwords")
    assert set(os.listdir(data_dir)) == expected_files  # no unshuffled or temporary leftovers

    vocab_path = os.path.join(data_dir, "vocab.translate_ende_wmt8k.8192.subwords")
    encoder = text_encoder.SubwordTextEncoder(vocab_path)
    assert encoder.vocab_size > 2
    assert encoder.decode(encoder.encode("Wiederaufnahme")) == "Wiederaufnahme"

    train_pairs = EN_DE_CORPORA["nc"] + EN_DE_CORPORA["cc"] + EN_DE_CORPORA["ep"]
    assert _decode_pairs(_read_examples(train_paths), encoder) == sorted(train_pairs)
    assert _decode_pairs(_read_examples(dev_paths), encoder) == sorted(EN_DE_CORPORA["dev"])

    # The compiled corpus keeps corpus order: news commentary, common crawl, europarl.
    with open(os.path.join(tmp_dir, "translate_ende_wmt8k-compiled-train.lang1"),
              encoding="utf-8") as f:
        assert f.read().splitlines() == [en for en, _ in train_pairs]

    # The feature encoders (what training and decoding use) load the same vocab.
    assert ende.feature_encoders(data_dir)["inputs"].vocab_size == encoder.vocab_size

    # A rerun finds everything in place and rewrites nothing.
    mtimes = {name: os.stat(os.path.join(data_dir, name)).st_mtime_ns
              for name in os.listdir(data_dir)}
    registry.problem("translate_ende_wmt8k").generate_data(data_dir, tmp_dir)
    assert {name: os.stat(os.path.join(data_dir, name)).st_mtime_ns
            for name in os.listdir(data_dir)} == mtimes


def test_translate_ende_characters_round_trip(local_wmt, tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    chars = registry.problem("translate_ende_wmt_characters")
    chars.generate_data(data_dir, tmp_dir)
    assert not [name for name in os.listdir(data_dir) if name.startswith("vocab.")]
    dev = _read_examples(chars.dev_filepaths(data_dir, 1, shuffled=True))
    assert _decode_pairs(dev, text_encoder.ByteTextEncoder()) == sorted(EN_DE_CORPORA["dev"])
    train = _read_examples(chars.training_filepaths(data_dir, 100, shuffled=True))
    assert len(train) == 24
    # Bytes are shifted past PAD and EOS: "R" (82) is stored as 84.
    ids = {i for example in train for i in example["inputs"][:-1]}
    assert min(ids) >= 2 and 84 in ids


# ----------------------------------------------------------------------------
# compile_data and the corpus readers
# ----------------------------------------------------------------------------
def test_compile_data_reads_sgm_from_the_dev_archive(wmt_server, tmp_path):
    dev_url = wmt_server + "/wmt17/translation-task/dev.tgz"
    datasets = [[dev_url, ("dev/newstest2013-src.en.sgm", "dev/newstest2013-ref.de.sgm")]]
    prefix = translate.compile_data(str(tmp_path), datasets, "sgm-compiled-dev")
    assert prefix == str(tmp_path / "sgm-compiled-dev")
    with open(prefix + ".lang1", encoding="utf-8") as f1, \
            open(prefix + ".lang2", encoding="utf-8") as f2:
        assert list(zip(f1.read().splitlines(), f2.read().splitlines())) == \
            EN_DE_CORPORA["dev"]


def _local_archive(tmp_path, members):
    """A local archive (maybe_download copies local paths) holding `members`."""
    archive = str(tmp_path / "src" / "corpus.tgz")
    _write_tgz(archive, members)
    return archive


def test_compile_data_gz_tsv_and_plain_corpora_in_order(tmp_path):
    gz_en = gzip.compress(b"one\ntwo\n")
    gz_de = gzip.compress("eins\nzwei\n".encode("utf-8"))
    archive = _local_archive(tmp_path, {
        "c/news.zg.en.gz": gz_en, "c/news.zg.de.gz": gz_de,
        "c/pairs.tsv": "x\tdrei\tthree\nno tab here\n\tvier\t\nx\tfünf\tfive\n",
        "c/plain.en": "six\n\nseven\n", "c/plain.de": "sechs\nleer\nsieben\n"})
    tmp_dir = str(tmp_path / "tmp")
    datasets = [[archive, ("c/news.zg.en.gz", "c/news.zg.de.gz")],
                [archive, ("tsv", 2, 1, "c/*.tsv")],
                [archive, ("c/plain.en", "c/plain.de")]]
    prefix = translate.compile_data(tmp_dir, datasets, "mix")
    # T2T's .strip(".gz") turned "news.zg.en.gz" into "news.zg.en" only by luck; the suffix
    # alone goes, so the gunzipped file sits next to the archive member.
    assert os.path.exists(os.path.join(tmp_dir, "c", "news.zg.en"))
    with open(prefix + ".lang1", encoding="utf-8") as f:
        assert f.read().splitlines() == ["one", "two", "three", "five", "six", "seven"]
    with open(prefix + ".lang2", encoding="utf-8") as f:
        assert f.read().splitlines() == ["eins", "zwei", "drei", "fünf", "sechs", "sieben"]


def test_compile_data_skips_existing_and_leaves_nothing_on_failure(tmp_path):
    archive = _local_archive(tmp_path, {"a.en": "hello\n", "a.de": "hallo\n"})
    tmp_dir = str(tmp_path / "tmp")
    bad = [[archive, ("a.en", "a.de")], [archive, ("missing.en", "missing.de")]]
    with pytest.raises(ValueError, match="missing.en is not in corpus.tgz"):
        translate.compile_data(tmp_dir, bad, "broken")
    assert not [name for name in os.listdir(tmp_dir) if "broken" in name]

    prefix = translate.compile_data(tmp_dir, bad[:1], "ok")
    with open(prefix + ".lang1", "w", encoding="utf-8") as f:
        f.write("kept\n")  # an existing compiled pair of files is not rebuilt
    assert translate.compile_data(tmp_dir, bad[:1], "ok") == prefix
    with open(prefix + ".lang1", encoding="utf-8") as f:
        assert f.read() == "kept\n"


def test_compile_data_reads_files_already_in_tmp_dir_when_a_corpus_has_no_url(tmp_path):
    # T2T user problems list local corpora as ["", (source file, target file)].
    tmp_dir = tmp_path / "tmp"
    tmp_dir.mkdir()
    (tmp_dir / "train.en").write_text("hello\nworld\n")
    (tmp_dir / "train.vi").write_text("xin chao\nthe gioi\n")
    prefix = translate.compile_data(str(tmp_dir), [["", ("train.en", "train.vi")]], "local")
    with open(prefix + ".lang2", encoding="utf-8") as f:
        assert f.read().splitlines() == ["xin chao", "the gioi"]
    with pytest.raises(ValueError, match="dev.en is not in .*tmp .from no URL: put it there"):
        translate.compile_data(str(tmp_dir), [["", ("dev.en", "dev.vi")]], "missing")


def test_compile_data_refuses_misaligned_corpus(tmp_path):
    archive = _local_archive(tmp_path, {"a.en": "1\n2\n3\n", "a.de": "1\n2\n"})
    with pytest.raises(ValueError, match=r"a.en has 3 lines but .*a.de has 2"):
        translate.compile_data(str(tmp_path / "tmp"), [[archive, ("a.en", "a.de")]], "mis")
    assert not os.path.exists(str(tmp_path / "tmp" / "mis.lang1"))


def test_compile_data_carriage_returns_end_lines(tmp_path):
    # "\r" ends a line as in Python (a corpus released with "\r" line ends is its lines);
    # CRLF on the other side is one line end.
    archive = _local_archive(tmp_path, {"a.en": "one\rtwo\nthree\n",
                                        "a.de": "eins\r\nzwei\r\ndrei\r\n"})
    prefix = translate.compile_data(str(tmp_path / "tmp"), [[archive, ("a.en", "a.de")]], "cr")
    samples = list(text_problems.text2text_txt_iterator(prefix + ".lang1", prefix + ".lang2"))
    assert samples == [{"inputs": "one", "targets": "eins"}, {"inputs": "two", "targets": "zwei"},
                       {"inputs": "three", "targets": "drei"}]


def test_compile_data_refuses_archive_escaping_tmp_dir(tmp_path):
    archive = _local_archive(tmp_path, {"../evil.en": "x\n", "ok.de": "y\n"})
    with pytest.raises(generator_utils.UnsafeArchiveError, match="evil"):
        translate.compile_data(str(tmp_path / "tmp"), [[archive, ("../evil.en", "ok.de")]], "e")
    assert not os.path.exists(str(tmp_path / "evil.en"))


def test_compile_data_reads_tmx(tmp_path):
    tmx = ('<?xml version="1.0"?>\n<tmx version="1.4"><header/><body>\n'
           '<tu><tuv xml:lang="de"><seg>Hallo Welt</seg></tuv>'
           '<tuv xml:lang="en"><seg>Hello world</seg></tuv></tu>\n'
           '<tu><tuv xml:lang="en"><seg>only one side</seg></tuv></tu>\n'
           '<tu><tuv xml:lang="en-GB"><seg>Good &amp; bad</seg></tuv>'
           '<tuv xml:lang="de"><seg>Gut &amp; schlecht</seg></tuv></tu>\n'
           '</body></tmx>\n')
    source = tmp_path / "src"
    source.mkdir()
    (source / "en-de.tmx.gz").write_bytes(gzip.compress(tmx.encode("utf-8")))
    prefix = translate.compile_data(
        str(tmp_path / "tmp"), [[str(source / "en-de.tmx.gz"), ("tmx", "en-de.tmx.gz")]], "t")
    with open(prefix + ".lang1", encoding="utf-8") as f1, \
            open(prefix + ".lang2", encoding="utf-8") as f2:
        assert f1.read().splitlines() == ["Hello world", "Good & bad"]
        assert f2.read().splitlines() == ["Hallo Welt", "Gut & schlecht"]


def test_compile_data_cleans_only_the_kinds_asked_for(tmp_path):
    archive = _local_archive(tmp_path, {
        "a.en": "A clean sentence.\nno capital here.\nIt rains. We stay.\n",
        "a.de": "Ein sauberer Satz.\nkein Grossbuchstabe.\nEs regnet. Wir bleiben.\n"})
    tmp_dir = str(tmp_path / "tmp")
    datasets = [[archive, ("a.en", "a.de")]]
    cleaned = translate.compile_data(tmp_dir, datasets, "c", datatypes_to_clean=["txt"])
    with open(cleaned + ".lang1", encoding="utf-8") as f1, \
            open(cleaned + ".lang2", encoding="utf-8") as f2:
        assert list(zip(f1.read().splitlines(), f2.read().splitlines())) == [
            ("A clean sentence.", "Ein sauberer Satz."), ("It rains.", "Es regnet."),
            ("We stay.", "Wir bleiben.")]
    as_is = translate.compile_data(tmp_dir, datasets, "n", datatypes_to_clean=["tsv", "tmx"])
    with open(as_is + ".lang1", encoding="utf-8") as f1:
        assert len(f1.read().splitlines()) == 3
    with pytest.raises(ValueError, match="unknown kind"):
        translate.compile_data(tmp_dir, datasets, "x", datatypes_to_clean=["csv"])


_SEG_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"),
                           blacklist_characters="<>"), max_size=40)


@given(text=_SEG_TEXT, seg_id=st.integers(min_value=1, max_value=10**6))
def test_preprocess_sgm_keeps_only_the_segment_text(text, seg_id):
    line = '  <seg id="%d">%s</seg>\n' % (seg_id, text)
    assert translate._preprocess_sgm(line, True) == text.strip()
    assert translate._preprocess_sgm(line, False) == line
    for other in ('<doc docid="x">', "</doc>", "<p>", "</p>", '<refset setid="t">', "</srcset>"):
        assert translate._preprocess_sgm(other, True) == ""


@settings(max_examples=50)
@given(stem=st.text(alphabet="abgz._-", min_size=1, max_size=12))
def test_without_gz_removes_only_the_suffix(stem):
    assert translate._without_gz(stem + ".gz") == stem
    assert translate._without_gz(stem + ".tsv") == stem + ".tsv"


# ----------------------------------------------------------------------------
# Hooks and distillation
# ----------------------------------------------------------------------------
class _DecodeHparams:
    def __init__(self, decode_reference, decode_to_file):
        self.decode_reference = decode_reference
        self.decode_to_file = decode_to_file


class _HookArgs:
    def __init__(self, decode_hparams):
        self.decode_hparams = decode_hparams


def test_bleu_hook_needs_reference_and_output(tmp_path):
    assert translate.compute_bleu_summaries(_HookArgs(_DecodeHparams("", "out.txt"))) is None
    assert translate.compute_bleu_summaries(_HookArgs(_DecodeHparams("ref.txt", ""))) is None
    ref, hyp = tmp_path / "ref.txt", tmp_path / "hyp.txt"
    ref.write_text("the cat sat on the mat today\n", encoding="utf-8")
    hyp.write_text("the cat sat on the mat today\n", encoding="utf-8")
    values = translate.compute_bleu_summaries(_HookArgs(_DecodeHparams(str(ref), str(hyp))))
    assert [v.tag for v in values] == ["BLEU"]
    assert values[0].simple_value == pytest.approx(100.0, abs=1e-3)


class _TinyDistill(translate.TranslateDistillProblem):
    name = "tiny_distill"
    prefix = None

    def source_data_files(self, dataset_split):
        return self.prefix

    @property
    def dataset_splits(self):
        return [{"split": problem.DatasetSplit.TRAIN, "shards": 1},
                {"split": problem.DatasetSplit.EVAL, "shards": 1}]


def test_distill_problem_reads_teacher_predictions_as_targets(tmp_path):
    teacher = tmp_path / "teacher."
    (tmp_path / "teacher.inputs").write_text("a b\nc d\n", encoding="utf-8")
    (tmp_path / "teacher.gold").write_text("A B\nC D\n", encoding="utf-8")
    (tmp_path / "teacher.prediction").write_text("A b\nC d\n", encoding="utf-8")
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    distill = _TinyDistill()
    distill.prefix = str(teacher)
    vocab = text_encoder.SubwordTextEncoder.build_from_generator(
        ["a b", "c d", "A B", "C D"], 20, reserved_tokens=text_encoder.RESERVED_TOKENS)
    vocab.store_to_file(str(data_dir / distill.vocab_filename))
    with pytest.raises(ValueError, match="missing"):
        _TinyDistill().get_or_create_vocab(str(tmp_path), None)

    distill.generate_data(str(data_dir), str(tmp_path))
    dataset = distill.dataset(ModeKeys.EVAL, data_dir=str(data_dir),
                              shuffle_files=False)
    decoded = sorted((vocab.decode(ex["inputs"].numpy()[:-1].tolist()),
                      vocab.decode(ex["targets"].numpy()[:-1].tolist())) for ex in dataset)
    assert decoded == [("a b", "A b"), ("c d", "C d")]


# ----------------------------------------------------------------------------
# Cleaned corpora (cleaner_en_xx) and the multilingual vocabulary
# ----------------------------------------------------------------------------
def test_clean_problems_clean_the_training_corpora_they_name():
    kinds = {name: registry.problem(name).datatypes_to_clean for name in (
        "translate_ende_wmt_clean32k", "translate_ende_pc_clean32k",
        "translate_ende_wmt_clean_pc32k", "translate_ende_wmt_pc_clean32k",
        "translate_ende_wmt_clean_pc_clean32k", "translate_ende_wmt32k")}
    assert kinds == {"translate_ende_wmt_clean32k": ["txt"], "translate_ende_pc_clean32k": ["tmx"],
                     "translate_ende_wmt_clean_pc32k": ["txt"],
                     "translate_ende_wmt_pc_clean32k": ["tmx"],
                     "translate_ende_wmt_clean_pc_clean32k": ["txt", "tmx"],
                     "translate_ende_wmt32k": None}
    wmt32k_vocab = "vocab.translate_ende_wmt32k.32768.subwords"
    for name in kinds:
        assert registry.problem(name).vocab_filename == wmt32k_vocab


def _train_pairs_of(problem_obj, data_dir):
    encoder = text_encoder.SubwordTextEncoder(os.path.join(data_dir, problem_obj.vocab_filename))
    return _decode_pairs(_read_examples(problem_obj.training_filepaths(data_dir, 100, True)),
                         encoder)


def test_translate_ende_wmt_clean32k_end_to_end(local_wmt, tmp_path):
    from t2t.problems import cleaner_en_xx
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    clean = registry.problem("translate_ende_wmt_clean32k")
    clean.generate_data(data_dir, tmp_dir)
    train_pairs = EN_DE_CORPORA["nc"] + EN_DE_CORPORA["cc"] + EN_DE_CORPORA["ep"]
    kept = _train_pairs_of(clean, data_dir)
    assert kept == sorted(cleaner_en_xx.clean_en_xx_pairs(train_pairs))
    dropped = set(train_pairs) - set(kept)
    assert {en for en, _ in dropped} == {
        "Größe: 42",                                           # "Label: "
        "Price per night: 80 €",                               # no final stop
        "Resumption of the session",                           # no final stop
        "(The House rose and observed a minute' s silence)"}   # starts with "("
    # The dev set is never cleaned.
    encoder = text_encoder.SubwordTextEncoder(os.path.join(data_dir, clean.vocab_filename))
    assert _decode_pairs(_read_examples(clean.dev_filepaths(data_dir, 1, True)), encoder) == \
        sorted(EN_DE_CORPORA["dev"])


def test_datagen_datatypes_to_clean_overrides_the_problem(local_wmt, tmp_path):
    from t2t.core import errors
    from t2t.datagen import datagen
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    datagen.generate_problems(["translate_ende_wmt8k"], data_dir, tmp_dir,
                              num_concurrent_processes=1, datatypes_to_clean="txt")
    compiled = os.path.join(tmp_dir, "translate_ende_wmt8k-compiled-train-clean-txt.lang1")
    with open(compiled, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert "Größe: 42" not in lines and "Resumption of the session" not in lines
    assert "Nobody knows the answer." in lines
    assert len(_train_pairs_of(registry.problem("translate_ende_wmt8k"), data_dir)) == len(lines)
    with pytest.raises(errors.UserError, match="unknown kind.*csv; use a comma list of txt"):
        datagen.generate_problems(["translate_ende_wmt8k"], data_dir, tmp_dir,
                                  num_concurrent_processes=1, datatypes_to_clean="txt,csv")
    with pytest.raises(errors.UserError, match="algorithmic_reverse_binary40_test is not one"):
        datagen.generate_problems(["algorithmic_reverse_binary40_test"], data_dir, tmp_dir,
                                  num_concurrent_processes=1, datatypes_to_clean="txt")


WIKI_TEXT = {
    "de": ["Berlin ist die Hauptstadt Deutschlands.", "Die Stadt hat viele Museen."],
    "fr": ["Paris est la capitale de la France.", "La ville compte beaucoup de musées."],
    "en": ["London is the capital of England.", "The city has many museums."],
    "ro": ["București este capitala României.", "Orașul are multe muzee."],
}


class _DriveHandler(http_testing.QuietFileHandler):
    """Serves /uc?export=download&id=<id> from <root>/drive/<id>, as Google Drive does."""

    def translate_path(self, path):
        query = urllib.parse.parse_qs(urllib.parse.urlparse(path).query)
        if "id" in query:
            return os.path.join(self.directory, "drive", query["id"][0])
        return super().translate_path(path)


@pytest.fixture
def local_drive(tmp_path, monkeypatch):
    from t2t.problems import wiki_lm
    root = tmp_path / "drive_server"
    (root / "drive").mkdir(parents=True)
    for language, files in (("de", wiki_lm._DE), ("fr", wiki_lm._FR), ("en", wiki_lm._EN),
                            ("ro", wiki_lm._RO)):
        for (_, file_id), copies in zip(files, (40, 2, 2)):
            text = "\n".join(WIKI_TEXT[language] * copies) + "\n"
            (root / "drive" / file_id).write_bytes(gzip.compress(text.encode("utf-8")))
    # Short examples, so that the tiny corpus makes several.
    monkeypatch.setattr(wiki_lm.LanguagemodelEnWiki32k, "combine_characters_threshold", 100)
    with http_testing.local_http_server(
            functools.partial(_DriveHandler, directory=str(root))) as server:
        monkeypatch.setattr(wiki_lm, "DRIVE_URL", server.url + "/uc?export=download&id=")
        yield server.url


def test_translate_ende_wmt_multi64k_uses_the_four_language_wiki_vocab(local_wmt, local_drive,
                                                                        tmp_path):
    data_dir, tmp_dir = str(tmp_path / "data"), str(tmp_path / "tmp")
    multi = registry.problem("translate_ende_wmt_multi64k")
    assert multi.vocab_filename == "vocab.languagemodel_de_en_fr_ro_wiki64k.64000.subwords"
    multi.generate_data(data_dir, tmp_dir)
    # The vocabulary came from the four Wikipedia corpora (downloaded from "Drive").
    assert sorted(name for name in os.listdir(tmp_dir) if name.endswith("wiki_train.txt")) == [
        "dewiki_train.txt", "enwiki_train.txt", "frwiki_train.txt", "rowiki_train.txt"]
    vocab = text_encoder.SubwordTextEncoder(os.path.join(data_dir, multi.vocab_filename))
    subtokens = set(vocab.all_subtoken_strings)
    for word in ("Hauptstadt_", "capitale_", "museums_", "București_"):
        assert word in subtokens, word
    # The WMT pairs are encoded with it and read back unchanged.
    train_pairs = EN_DE_CORPORA["nc"] + EN_DE_CORPORA["cc"] + EN_DE_CORPORA["ep"]
    assert _train_pairs_of(multi, data_dir) == sorted(train_pairs)
    packed = registry.problem("translate_ende_wmt_multi64k_packed1k")
    assert packed.vocab_filename == multi.vocab_filename
    assert (packed.packed_length, packed.inputs_prefix, packed.targets_prefix) == (
        1024, "translate English German ", "translate German English ")
