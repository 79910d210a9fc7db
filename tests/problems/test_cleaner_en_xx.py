"""cleaner_en_xx: which English sentences pass, how pairs are split, ParaCrawl reading."""
import io

from hypothesis import given, settings, strategies as st

from t2t.problems import cleaner_en_xx


def test_the_module_example():
    assert list(cleaner_en_xx.clean_en_xx_pairs([
        ("Hello world.", "Hallo Welt."),
        ("Click here", "Hier klicken"),
        ("It rains. We stay.", "Es regnet. Wir bleiben."),
        ("Copyright 2018 ACME.", "Copyright 2018 ACME."),
    ])) == [("Hello world.", "Hallo Welt."), ("It rains.", "Es regnet."),
            ("We stay.", "Wir bleiben.")]


def test_noise_patterns():
    clean = ["The cat sat.", "She said \u201cyes\u201d and left.",
             "It's John's car, isn't it?", "Call 911 now!", "It works (really) well."]
    noisy = {
        "lower start": "the cat sat.",
        "no final stop": "The cat sat",
        "label": "Note: the cat sat.",
        "spaced digits": "It costs 1 000 euros.",
        "one quote": 'He said "go home.',
        "quoted line": '"Go home."',
        "doubled quotes": "He said \"\" twice.",
        "spaced punctuation": "The cat , the dog.",
        "copyright": "Copyright by us.",
        "open paren": "The cat (black sat.",
        "close paren": "The cat) sat.",
        "tagline": "BERLIN - The cat sat.",
        "identifier": "MAX_VALUE is large.",
    }
    for sentence in clean:
        assert not cleaner_en_xx.is_noise(sentence), sentence
    for why, sentence in noisy.items():
        assert cleaner_en_xx.is_noise(sentence), why


def test_pairs_that_split_differently_are_dropped():
    pairs = [("One. Two.", "Eins, zwei."),          # 2 English sentences, 1 German
             ("It is 5. Go.", "Es ist 5. Geh.")]    # German "5. G" is no break: 2 vs 1
    assert list(cleaner_en_xx.clean_en_xx_pairs(pairs)) == []
    # Of a split pair, a noisy part is dropped and the rest kept.
    assert list(cleaner_en_xx.clean_en_xx_pairs(
        [("It rains. MAX_RAIN stays.", "Es regnet. Wer bleibt.")])) == [("It rains.", "Es regnet.")]


def test_paracrawl_v3_pairs_reads_seg_lines_and_entities():
    tmx = io.BytesIO("\n".join([
        "<tu>", "  <tuv xml:lang=\"en\">", "    <seg>Fish &amp; chips &apos;r&apos; us</seg>",
        "  </tuv>", "  <tuv xml:lang=\"de\">", "    <seg>Fisch &amp;amp; Pommes</seg>", "</tu>",
        "<tu>", "    <seg>A &lt;b&gt; &quot;c&quot;</seg>", "    <seg>D</seg>", "</tu>",
        "    <seg>unmatched</seg>", ""]).encode("utf-8"))
    assert list(cleaner_en_xx.paracrawl_v3_pairs(tmx)) == [
        ("Fish & chips 'r' us", "Fisch & Pommes"), ('A <b> "c"', "D")]


_WORDS = st.sampled_from(["The", "cat", "sat", "It", "rains", "we", "Go", "1", "2", ":", ",",
                          "\"", "(", ")", "BERLIN", "-", "."])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.lists(_WORDS, max_size=8), st.lists(_WORDS, max_size=8)),
                max_size=5))
def test_what_comes_out_is_never_noise(pairs):
    pairs = [(" ".join(en) + ".", " ".join(xx) + ".") for en, xx in pairs]
    for en, _ in cleaner_en_xx.clean_en_xx_pairs(pairs):
        assert not cleaner_en_xx.is_noise(en)
