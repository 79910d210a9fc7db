"""SNLI as token ids, from the sentences' parse trees (T2T 1.15.7's `snli` module).

T2T's module-level helpers, no registered problem (the `stanford_nli` problems are the
registered SNLI; this module shares their URL, folder and label names):

    for example in snli_token_generator("/tmp/snli", train=True, vocab_size=2**13):
        example   # {"inputs": sentence1 ids + [SEP] + sentence2 ids + [EOS], "targets": [label]}

`snli_token_generator` downloads `snli_1.0.zip` from nlp.stanford.edu into `tmp_dir` (an
extracted `snli_1.0/` there is used as it is), and `_parse_dataset` rewrites
`snli_1.0/snli_1.0_{train,dev}.txt` as `tmp_dir/{train,dev}.txt`, one line
`tokens1<TAB>tokens2<TAB>label` per pair with a gold label (rows labelled `-` are left out),
the tokens being the leaves of the columns `sentence1_parse` and `sentence2_parse`; for
training also `tmp_dir/examples.txt`, `tokens1 tokens2` a line, from which
`_get_or_generate_vocab` builds the subword vocabulary `tmp_dir/vocab.subword_text_encoder`.
Labels: contradiction 0, entailment 1, neutral 2.

The separator has a reserved id of its own, 2 (the token `<SEP>` after `<pad>` and `<EOS>`
in the vocabulary); T2T's separator 2 was the most frequent subword's id.
"""
import os

from absl import logging
import tensorflow as tf

from t2t.core import atomic_files
from t2t.core import download
from t2t.core import errors
from t2t.data import generator_utils  # noqa: F401  (T2T's module-level name)
from t2t.encoders import text_encoder
from t2t.encoders import tokenizer
from t2t.problems import glue
from t2t.problems import stanford_nli

_EOS = text_encoder.EOS_ID  # 1
_SEP_TOKEN = "<SEP>"
_RESERVED_TOKENS = text_encoder.RESERVED_TOKENS + [_SEP_TOKEN]
_SEP = _RESERVED_TOKENS.index(_SEP_TOKEN)  # 2, as T2T's

# Columns of snli_1.0_*.txt (T2T's names).
_LABEL_INDEX = 0
_PARSE1_INDEX = 3
_PARSE2_INDEX = 4
_SENT1_INDEX = 5
_SENT2_INDEX = 6

_LABEL_TO_ID = {label: i for i, label in enumerate(stanford_nli.StanfordNLI.CLASS_LABELS)}
_NO_CONSENSUS = "-"

_EXAMPLES_FILE = "examples.txt"
_SNLI_DATA_PATH = stanford_nli.StanfordNLI.DATA_DIR + "/snli_1.0_%s.txt"
_SNLI_URL = stanford_nli.StanfordNLI._SNLI_URL  # the module attribute is read at each call
_SNLI_ZIP = os.path.basename(_SNLI_URL)  # "snli_1.0.zip" (stanford_nli saves it as SNLI.zip)
_VOCAB_FILENAME = "vocab.subword_text_encoder"


def _split_name(train):
    return "train" if train else "dev"


def _download_and_parse_dataset(tmp_dir, train):
    """Download and extract SNLI into `tmp_dir` (once), then `_parse_dataset` one split."""
    download.maybe_download_and_extract(
        tmp_dir, _SNLI_ZIP, _SNLI_URL, os.path.join(tmp_dir, stanford_nli.StanfordNLI.DATA_DIR))
    dataset_file_path = os.path.join(tmp_dir, _SNLI_DATA_PATH % _split_name(train))
    _parse_dataset(dataset_file_path, tmp_dir, train)


def _get_tokens_and_tags(parse_str):
    """The words of a bracketed parse: the leaves, each a piece that closes brackets.

        _get_tokens_and_tags("(ROOT (S (NP (DT A) (NN dog)) (VP (VBZ runs)) (. .)))")
        # -> ["A", "dog", "runs", "."]
    """
    tokens = []
    for piece in parse_str.split(" "):
        if piece.endswith(")"):
            tokens.append(piece.replace(")", ""))
        elif not piece.startswith("("):
            raise errors.UserError("SNLI parse %r: %r neither opens nor closes a bracket; "
                                   "give a column *_parse of snli_1.0" % (parse_str[:80], piece))
    return tokens


def _parse_dataset(file_path, tmp_dir, train):
    """Write `tmp_dir/{train,dev}.txt` (and, for training, `tmp_dir/examples.txt`).

    Args:
      file_path: an `snli_1.0_{train,dev}.txt` (a header, then tab-separated rows).
      tmp_dir: where the files go.
      train: whether `file_path` is the training set (then the vocab file is written too).
    """
    gen_output_path = os.path.join(tmp_dir, _split_name(train) + ".txt")
    example_output_path = os.path.join(tmp_dir, _EXAMPLES_FILE)
    logging.info("snli: %s -> %s%s", file_path, gen_output_path,
                 " and " + example_output_path if train else "")
    examples = []
    for lineno, fields in glue.tsv_rows(file_path, min_fields=_PARSE2_INDEX + 1):
        label = fields[_LABEL_INDEX]
        if label == _NO_CONSENSUS:
            continue
        if label not in _LABEL_TO_ID:
            raise errors.UserError("%s line %d: gold label %r is not one of %s or %s" % (
                file_path, lineno, label, ", ".join(_LABEL_TO_ID), _NO_CONSENSUS))
        try:
            tokens = [" ".join(_get_tokens_and_tags(fields[i]))
                      for i in (_PARSE1_INDEX, _PARSE2_INDEX)]
        except errors.UserError as error:
            raise errors.UserError("%s line %d: %s" % (file_path, lineno, error)) from None
        examples.append((tokens[0], tokens[1], label))

    with atomic_files.atomic_write(gen_output_path, "w", encoding="utf-8") as f:
        f.write("".join("%s\t%s\t%s\n" % example for example in examples))
    if train:
        with atomic_files.atomic_write(example_output_path, "w", encoding="utf-8") as f:
            f.write("".join("%s %s\n" % (first, second) for first, second, _ in examples))


def _get_or_generate_vocab(tmp_dir, vocab_filename, vocab_size):
    """`tmp_dir/vocab_filename`, built from `tmp_dir/examples.txt` if it is not there.

    The vocabulary starts `<pad>`, `<EOS>`, `<SEP>` (ids 0, 1, 2); its subwords come from
    the first million lines, the size near `vocab_size`.
    """
    vocab_filepath = os.path.join(tmp_dir, vocab_filename)
    if tf.io.gfile.exists(vocab_filepath):
        encoder = text_encoder.SubwordTextEncoder(vocab_filepath)
        if encoder.decode_list([_SEP]) != [_SEP_TOKEN + "_"]:  # stored escaped, as T2T's
            raise errors.UserError("%s has no %s at id %d (T2T's snli vocab had none); delete "
                                   "it to build it again" % (vocab_filepath, _SEP_TOKEN, _SEP))
        return encoder
    example_file = os.path.join(tmp_dir, _EXAMPLES_FILE)
    if not tf.io.gfile.exists(example_file):
        raise errors.UserError("%s is missing: parse the training set first "
                               "(_parse_dataset(..., train=True))" % example_file)
    token_counts = tokenizer.corpus_token_counts(example_file, corpus_max_lines=1000000)
    encoder = text_encoder.SubwordTextEncoder.build_to_target_size(
        vocab_size, token_counts, min_val=1, max_val=1e3, reserved_tokens=_RESERVED_TOKENS)
    with atomic_files.atomic_output_path(vocab_filepath) as tmp:
        encoder.store_to_file(tmp)
    logging.info("snli: vocab of %d subwords written to %s", encoder.vocab_size, vocab_filepath)
    return encoder


def snli_token_generator(tmp_dir, train, vocab_size):
    """{"inputs": ids1 + [2] + ids2 + [1], "targets": [label id]} of each SNLI pair.

    The vocabulary comes from the training sentences, so the dev set alone parses the
    training set too when there is no vocabulary yet (T2T's failed there).
    """
    _download_and_parse_dataset(tmp_dir, train)
    if not train and not tf.io.gfile.exists(os.path.join(tmp_dir, _VOCAB_FILENAME)):
        _download_and_parse_dataset(tmp_dir, True)
    symbolizer_vocab = _get_or_generate_vocab(tmp_dir, _VOCAB_FILENAME, vocab_size)

    data_file = os.path.join(tmp_dir, _split_name(train) + ".txt")
    with tf.io.gfile.GFile(data_file, "r") as f:
        for line in f:
            sent1, sent2, label = line.rstrip("\n").split("\t")
            yield {"inputs": (symbolizer_vocab.encode(sent1) + [_SEP]
                              + symbolizer_vocab.encode(sent2) + [_EOS]),
                   "targets": [_LABEL_TO_ID[label]]}
