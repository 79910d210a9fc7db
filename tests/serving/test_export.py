"""Export: a SavedModel that serves what t2t-decoder decodes."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from absl import flags
from absl.testing import flagsaver

from t2t.bin import t2t_decoder, t2t_exporter
from t2t.encoders import text_encoder
from t2t.serving import export

from decoding_testing import (HPARAMS, HPARAMS_SET, MODEL, PROBLEM, assert_decodes_in_input_order,
                              make_hparams, trained_model)

FLAGS = flags.FLAGS


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


@pytest.fixture()
def flags_read(monkeypatch):
    """The names of the flags read (FLAGS.name, getattr(FLAGS, name)) while the test runs."""
    names = set()
    read = flags.FlagValues.__getattr__

    def recording(self, name):
        names.add(name)
        return read(self, name)

    monkeypatch.setattr(flags.FlagValues, "__getattr__", recording)
    return names


def test_exported_model_serves_what_the_decoder_decodes(model, tmp_path, capsys, flags_read):
    words = ["ab", "dcbad", "c", "bbb", "cabd", "dada"]
    source = tmp_path / "words.txt"
    source.write_text("\n".join(words) + "\n")
    decoded_file = tmp_path / "decoded.txt"
    FLAGS.mark_as_parsed()
    with flagsaver.flagsaver(**common_flags(model), decode_from_file=str(source),
                                decode_to_file=str(decoded_file)):
        assert t2t_decoder.main(["t2t-decoder"]) == 0
    # What --help lists is what the programs read.
    assert {name for name in flags_read if name in FLAGS} <= set(t2t_decoder.DECODER_FLAGS)
    flags_read.clear()
    with flagsaver.flagsaver(**common_flags(model), export_dir=str(tmp_path / "export")):
        assert t2t_exporter.main(["t2t-exporter"]) == 0  # as_text: saved_model.pbtxt
    assert {name for name in flags_read if name in FLAGS} <= set(t2t_exporter.EXPORTER_FLAGS)
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
    # The decode's while loop holds no custom gradient a SavedModel cannot save: it loads
    # without "Importing a function (..._while_body_...) with ops with unsaved custom
    # gradients".
    assert "custom gradient" not in run.stderr, run.stderr[-3000:]
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
