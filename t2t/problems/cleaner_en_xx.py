"""A pattern-based cleaner of English–other sentence pairs (T2T's cleaner_en_xx).

It keeps pairs whose English side looks like one or more ordinary sentences, and splits
pairs that hold several sentences on both sides into one pair per sentence. Only the
English side is inspected; of the other language it assumes only that sentences end in
one of ".!?" and may start with an ASCII capital.

    list(clean_en_xx_pairs([
        ("Hello world.", "Hallo Welt."),                      # kept
        ("Click here", "Hier klicken"),                       # no final punctuation: dropped
        ("It rains. We stay.", "Es regnet. Wir bleiben."),    # split in two pairs
        ("Copyright 2018 ACME.", "Copyright 2018 ACME."),     # boilerplate: dropped
    ]))
    # [("Hello world.", "Hallo Welt."), ("It rains.", "Es regnet."), ("We stay.",
    #   "Wir bleiben.")]

Translation problems use it through their `datatypes_to_clean` property (["txt"],
["tsv"], ["tmx"] or a mix): only training corpora of those kinds are cleaned.
`paracrawl_v3_pairs` reads the `<seg>` lines of a ParaCrawl v3 TMX file line by line.
"""
import re

from t2t.encoders import escaping

_QUOTES = "\"“”"
_ANY_QUOTE = "[%s]" % _QUOTES
_NO_QUOTE = "[^%s]" % _QUOTES
_SINGLE_QUOTES = "'‘’"

# The English side must start like a sentence and end like one.
_SENTENCE_START = re.compile(r"^%s?[A-Z]" % _ANY_QUOTE)
_SENTENCE_END = re.compile(r"\w[.?!]%s?$" % _ANY_QUOTE, re.UNICODE)

# Signs that the English side is not a plain sentence; any one drops the pair.
_NOISE = tuple(re.compile(pattern, flags) for pattern, flags in (
    (r"^\w+\.?( \w+)?: ", re.UNICODE),                           # "Note: ...", "Tel.: ..."
    (r"\d +\d", re.UNICODE),                                     # "1 000", table columns
    (r"^%s*%s%s*$" % (_NO_QUOTE, _ANY_QUOTE, _NO_QUOTE), 0),     # one lone double quote
    (r"^%s(%s+)$" % (_ANY_QUOTE, _NO_QUOTE), 0),                 # opening quote only
    (r"^%s+%s$" % (_NO_QUOTE, _ANY_QUOTE), 0),                   # closing quote only
    (r"^%s.*%s$" % (_ANY_QUOTE, _ANY_QUOTE), 0),                 # a whole quoted line
    (r"(%s.*){3,}" % _ANY_QUOTE, 0),                             # three or more quotes
    (r"([%s][^st].*){3,}" % _SINGLE_QUOTES, 0),                  # many non-'s/'t quotes
    (r"[%s%s]\s*[%s%s]" % (_QUOTES, _SINGLE_QUOTES, _QUOTES, _SINGLE_QUOTES), 0),  # ""
    (r"\s[%s%s,:;]\s" % (_QUOTES, _SINGLE_QUOTES), 0),           # " , " spaced punctuation
    (r"©|^Copyright|^\(C\)", 0),                                 # boilerplate
    (r"[(][^)]*$", 0),                                           # unclosed "("
    (r"^[^(]*[)]", 0),                                           # ")" never opened
    (r"^[A-Z]{2,}(\s+[A-Z]+)*\s+-", 0),                          # "BERLIN - ..." taglines
    (r"^[A-Z]+[a-z]*_", 0),                                      # "CONST_NAME" identifiers
))

_BREAK = "__|__"
# Where a sentence ends and the next begins: English needs a lowercase letter, digit or
# an inner capital before the stop; the other side anything but a digit.
_EN_BREAK = re.compile(r"(\w[A-Z]|[0-9a-z])([.!?]) ([A-Z])")
_XX_BREAK = re.compile(r"([^0-9][.!?]) ([A-Z])")

_ENTITIES = (("&amp;", "&"), ("& ?amp;", "&"),  # twice: "&amp;amp;" is "&"
             ("& ?apos;", "'"), ("& ?quot;", '"'), ("& ?lt;", "<"),
             ("& ?gt;", ">"))


def is_noise(sentence):
    """True if the English `sentence` does not look like a clean sentence.

        is_noise("The cat sat.")          # False
        is_noise("the cat sat.")          # True (no capital)
        is_noise("Price: 80 EUR.")        # True ("Label: ")
    """
    if not _SENTENCE_START.search(sentence) or not _SENTENCE_END.search(sentence):
        return True
    return any(pattern.search(sentence) for pattern in _NOISE)


def split_sentences(sentence_en, sentence_xx):
    """Both sides cut at sentence breaks: ([English sentences], [other sentences])."""
    sentence_en = escaping.native_to_unicode(sentence_en)
    sentence_xx = escaping.native_to_unicode(sentence_xx)
    en = _EN_BREAK.sub(r"\1\2%s\3" % _BREAK, sentence_en)
    xx = _XX_BREAK.sub(r"\1%s\2" % _BREAK, sentence_xx)
    return en.split(_BREAK), xx.split(_BREAK)


def clean_en_xx_pairs(en_xx_pairs):
    """Yield the clean (English, other) pairs of `en_xx_pairs`, multi-sentence pairs split.

    A pair whose sides split into different numbers of sentences is dropped; of a split
    pair, each sentence pair is filtered again.
    """
    for sentence_en, sentence_xx in en_xx_pairs:
        if is_noise(sentence_en):
            continue
        parts_en, parts_xx = split_sentences(sentence_en, sentence_xx)
        if len(parts_en) != len(parts_xx):
            continue
        if len(parts_en) == 1:
            yield sentence_en, sentence_xx
            continue
        # T2T called itertools.izip here, which Python 3 does not have.
        for part_en, part_xx in zip(parts_en, parts_xx):
            if not is_noise(part_en):
                yield part_en, part_xx


def _unescape(text):
    for pattern, replacement in _ENTITIES:
        text = re.sub(pattern, replacement, text)
    return text


def _raw_sentences(paracrawl_file):
    """The text of each `  <seg>...</seg>` line of a ParaCrawl v3 file (bytes lines)."""
    for line in paracrawl_file:
        if isinstance(line, bytes):
            line = line.decode("utf-8")
        match = re.match(r" +<seg>(.*)</seg>$", line.rstrip("\r\n"))
        if match:
            yield _unescape(match.group(1))


def paracrawl_v3_pairs(paracrawl_file):
    """(English, other) pairs from a ParaCrawl v3 TMX file, read as lines.

    Each `<tu>` holds the English `<seg>` line and then the other one; a final English
    sentence without its partner is logged and dropped.
    """
    from absl import logging

    sentences = _raw_sentences(paracrawl_file)
    for sentence_en in sentences:
        sentence_xx = next(sentences, None)
        if sentence_xx is None:
            logging.error("Unmatched final sentence while reading in sentence pairs: [%s]",
                          sentence_en)
            return
        if sentence_en and sentence_xx:
            yield sentence_en, sentence_xx
