"""Export: in-graph vocabularies, and a SavedModel that serves what t2t-decoder decodes."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from absl import flags
from absl.testing import flagsaver
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.bin import t2t_decoder, t2t_exporter
from t2t.encoders import text_encoder
from t2t.serving import export
from t2t.serving import vocab_ops

from decoding_testing import (HPARAMS, HPARAMS_SET, MODEL, PROBLEM, assert_decodes_in_input_order,
                              make_hparams, trained_model)

FLAGS = flags.FLAGS
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "t2t_vocab")
SUBWORD = text_encoder.SubwordTextEncoder(os.path.join(FIXTURES, "vocab.gen300.subwords"))
TOKENS = text_encoder.TokenTextEncoder(None, vocab_list=["the", "cat", "sat", "on", "mat"])
REVERSED_TOKENS = text_encoder.TokenTextEncoder(None, vocab_list=["a", "b", "c"], reverse=True,
                                                   replace_oov="a")
EXAMPLES = settings(max_examples=25, deadline=None)


def graph_encode(texts, vocab, append_eos=False):
    ids = vocab_ops.encode_strings(tf.constant(texts, tf.string), vocab, append_eos=append_eos)
    return [[i for i in row if i] for row in ids.numpy().tolist()]


def graph_decode(rows, vocab):
    """Decode id rows in the graph; each row gets EOS and 0-padding, as model outputs do."""
    rows = [list(row) + [text_encoder.EOS_ID] for row in rows]
    ids = np.zeros([len(rows), max(len(r) for r in rows)], np.int32)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = row
    return [s.decode("utf-8") for s in vocab_ops.decode_ids(tf.constant(ids), vocab).numpy()]


# ---------------------------------------------------------------------------- vocab ops
@EXAMPLES
@given(st.lists(st.text(max_size=12), min_size=1, max_size=4))
def test_subword_graph_encoding_equals_python(texts):
    assert graph_encode(texts, SUBWORD) == [SUBWORD.encode(t) for t in texts]
    assert graph_decode([SUBWORD.encode(t) for t in texts], SUBWORD) == texts


@EXAMPLES
@given(st.lists(st.lists(st.integers(0, SUBWORD.vocab_size + 3), max_size=10), min_size=1,
                max_size=4))
def test_subword_graph_decoding_of_any_ids_equals_python(rows):
    rows = [[i for i in row if i not in (0, 1)] for row in rows]  # ids before EOS
    expected = [SUBWORD.decode(row).encode("utf-8", "replace").decode("utf-8")
                for row in rows]
    assert graph_decode(rows, SUBWORD) == expected


@EXAMPLES
@given(st.lists(st.text(max_size=10), min_size=1, max_size=4))
def test_byte_graph_encoding_round_trips(texts):
    vocab = text_encoder.ByteTextEncoder()
    assert graph_encode(texts, vocab) == [vocab.encode(t) for t in texts]
    assert graph_decode([vocab.encode(t) for t in texts], vocab) == texts


@EXAMPLES
@given(st.lists(st.binary(max_size=6), min_size=1, max_size=3))
def test_byte_graph_decoding_replaces_invalid_utf8_as_python(chunks):
    vocab = text_encoder.ByteTextEncoder()
    rows = [[b + 2 for b in chunk] for chunk in chunks]
    assert graph_decode(rows, vocab) == [vocab.decode(row) for row in rows]


@EXAMPLES
@given(st.lists(st.lists(st.integers(0, 50), max_size=6), min_size=1, max_size=3))
def test_integer_and_token_vocabularies(rows):
    texts = [" ".join(str(i) for i in row) for row in rows]
    plain = text_encoder.TextEncoder()
    assert graph_encode(texts, plain) == [plain.encode(t) for t in texts]
    assert graph_decode([plain.encode(t) for t in texts], plain) == texts
    words = [" ".join(TOKENS.decode_list([2 + i % 5 for i in row])) for row in rows]
    assert graph_encode(words, TOKENS) == [TOKENS.encode(w) for w in words]
    ids = [[2 + i for i in row] for row in rows]  # beyond the vocab: "ID_<n>"
    assert graph_decode(ids, TOKENS) == [TOKENS.decode(row) for row in ids]
    letters = [" ".join("abcz"[i % 4] for i in row) for row in rows]
    assert graph_encode(letters, REVERSED_TOKENS) == [REVERSED_TOKENS.encode(t)
                                                            for t in letters]
    assert graph_decode(ids, REVERSED_TOKENS) == [REVERSED_TOKENS.decode(r) for r in ids]


def test_encoding_appends_eos_pads_and_truncates():
    vocab = text_encoder.ByteTextEncoder()
    ids = vocab_ops.encode_strings(tf.constant(["hi", "", "abc"]), vocab, max_input_size=3)
    np.testing.assert_array_equal(ids.numpy(), [[106, 107, 1], [1, 0, 0], [99, 100, 1]])
    decoded = vocab_ops.decode_ids(tf.constant([[[106, 1, 107]], [[99, 100, 0]]]), vocab)
    # Cut at EOS; without one, trailing PAD decodes as the encoder does: "ab<pad>".
    assert decoded.numpy().tolist() == [[b"h"], [b"ab<pad>"]]
    labels = text_encoder.ClassLabelEncoder(["neg", "pos"])
    assert vocab_ops.decode_ids(tf.constant([[1], [0]]), labels).numpy().tolist() == [
        b"pos", b"neg"]


def test_unknown_tokens_and_unsupported_vocabularies_fail_clearly():
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in the vocab"):
        vocab_ops.encode_strings(tf.constant(["the dog"]), TOKENS)

    class Custom(text_encoder.TextEncoder):
        def encode(self, s):
            return [5]

    assert "own encode/decode" in vocab_ops.unsupported_reason(Custom())
    with pytest.raises(ValueError, match="cannot encode strings in the graph"):
        vocab_ops.encode_strings(tf.constant(["x"]), Custom())


# ---------------------------------------------------------------------------- export
LOAD_AND_RUN = r'''
import json, sys
import tensorflow as tf
path, words, examples = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
loaded = tf.saved_model.load(path)
def run(name, **kwargs):
    out = loaded.signatures[name](**kwargs)
    return {k: v.numpy().tolist() for k, v in out.items()}
serialized = [tf.train.Example(features=tf.train.Features(feature={"inputs": tf.train.Feature(
    int64_list=tf.train.Int64List(value=ids))})).SerializeToString() for ids in examples]
result = {
    "signatures": sorted(loaded.signatures),
    "strings": run("serving_default", inputs=tf.constant(words)),
    "examples": run("serialized_example", serialized_example=tf.constant(serialized)),
    "t2t_imported": any(name == "t2t" or name.startswith("t2t.") for name in sys.modules),
}
for out in (result["strings"], result["examples"]):
    out["decoded_outputs"] = [s.decode("utf-8") for s in out["decoded_outputs"]]
print(json.dumps(result))
'''


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return trained_model(tmp_path_factory)


def common_flags(model):
    return {"problem": PROBLEM, "model": MODEL, "hparams_set": HPARAMS_SET,
            "hparams": HPARAMS, "data_dir": model["data_dir"],
            "output_dir": model["model_dir"], "t2t_usr_dir": model["usr_dir"],
            "decode_hparams": "beam_size=2,alpha=0.6"}


def test_exported_model_serves_what_the_decoder_decodes(model, tmp_path, capsys):
    words = ["ab", "dcbad", "c", "bbb", "cabd", "dada"]
    source = tmp_path / "words.txt"
    source.write_text("\n".join(words) + "\n")
    decoded_file = tmp_path / "decoded.txt"
    FLAGS.mark_as_parsed()
    with flagsaver.flagsaver(**common_flags(model), decode_from_file=str(source),
                                decode_to_file=str(decoded_file)):
        assert t2t_decoder.main(["t2t-decoder"]) == 0
    with flagsaver.flagsaver(**common_flags(model), export_dir=str(tmp_path / "export")):
        assert t2t_exporter.main(["t2t-exporter"]) == 0  # as_text: saved_model.pbtxt
    path = capsys.readouterr().out.strip().splitlines()[-1]
    assert os.path.dirname(path) == str(tmp_path / "export")
    assert os.path.exists(os.path.join(path, "saved_model.pbtxt"))

    encoder = text_encoder.ByteTextEncoder()
    examples = [encoder.encode(w) + [text_encoder.EOS_ID] for w in words]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    run = subprocess.run([sys.executable, "-c", LOAD_AND_RUN, path, json.dumps(words),
                          json.dumps(examples)], capture_output=True, text=True, env=env,
                         cwd=str(tmp_path), timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    served = json.loads(run.stdout.strip().splitlines()[-1])
    assert not served["t2t_imported"]
    assert served["signatures"] == ["serialized_example", "serving_default"]
    decoder_lines = decoded_file.read_text().split("\n")[:-1]
    assert served["strings"]["decoded_outputs"] == decoder_lines
    assert served["examples"]["decoded_outputs"] == decoder_lines
    assert_decodes_in_input_order(decoder_lines, words)
    np.testing.assert_array_equal(served["strings"]["outputs"], served["examples"]["outputs"])
    np.testing.assert_allclose(served["strings"]["scores"], served["examples"]["scores"],
                                  atol=1e-5)
    for ids, text in zip(served["strings"]["outputs"], decoder_lines):
        assert encoder.decode(ids[:ids.index(1)] if 1 in ids else ids) == text


def test_export_library_and_missing_checkpoint(model, tmp_path):
    hparams = make_hparams(model["data_dir"])
    assert export.string_signature_support(hparams) is None
    with pytest.raises(export.errors.UserError, match="no checkpoint"):
        export.export_saved_model(MODEL, hparams, str(tmp_path), str(tmp_path / "out"))
