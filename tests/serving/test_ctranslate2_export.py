"""The CTranslate2 export: the checkpoint's tensors in model.bin, and the same decodes as
TensorFlow's for the shared trained model and for other Transformer layouts."""
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import t2t
from t2t.core import errors
from t2t.core import registry
from t2t.model import decoding_assets
from t2t.serving import ctranslate2_export

from decoding_testing import (HPARAMS, HPARAMS_SET, MODEL, copy_as_training_folder, dev_pairs,
                              make_hparams, train_in_graph, trained_model)

pytest.importorskip("ctranslate2")

WORDS = ["ab", "dcbad", "c", "bbb", "cabd", "dada", "a", "ddcb", "abcda", "bd"]
# CTranslate2's model.bin dtype ids (ctranslate2/specs/model_spec.py, _dtype_to_type_id).
FLOAT32, INT8 = 0, 1


def read_model_bin(path, dtypes=None):
    """{name: array} of the float32 variables CTranslate2 wrote (its binary layout:
    version, spec name, revision, then each variable's name, shape, dtype and bytes); with
    `dtypes` (a dict) each variable's dtype id is put there too."""
    def string(handle):
        (length,) = struct.unpack("H", handle.read(2))
        return handle.read(length)[:-1].decode("utf-8")

    variables = {}
    with open(path, "rb") as handle:
        struct.unpack("I", handle.read(4))
        string(handle)
        struct.unpack("I", handle.read(4))
        (count,) = struct.unpack("I", handle.read(4))
        for _ in range(count):
            name = string(handle)
            (rank,) = struct.unpack("B", handle.read(1))
            shape = struct.unpack("I" * rank, handle.read(4 * rank))
            (dtype,) = struct.unpack("B", handle.read(1))
            (size,) = struct.unpack("I", handle.read(4))
            data = handle.read(size)
            if dtypes is not None:
                dtypes[name] = dtype
            if dtype == FLOAT32:
                variables[name] = np.frombuffer(data, np.float32).reshape(shape)
    return variables


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model = trained_model(tmp_path_factory)
    folder = copy_as_training_folder(model, str(tmp_path_factory.mktemp("ct2") / "train"))
    return dict(model, folder=folder, hparams=make_hparams(model["data_dir"]),
                checkpoint=tf.train.latest_checkpoint(folder))


@pytest.fixture(scope="module")
def exported(trained, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("ct2_export") / "ctranslate2")
    ctranslate2_export.export_ctranslate2(MODEL, trained["hparams"], trained["checkpoint"],
                                          path, HPARAMS_SET,
                                          hparams_overrides=HPARAMS,
                                          t2t_usr_dir=trained["usr_dir"])
    return path


def test_model_bin_holds_the_checkpoints_tensors(trained, exported):
    written = read_model_bin(os.path.join(exported, "model.bin"))
    reader = tf.train.load_checkpoint(trained["checkpoint"])

    def tensor(name):
        return reader.get_tensor("transformer/" + name)

    attention = "body/encoder/layer_1/self_attention/multihead_attention/"
    fused = np.concatenate([tensor(attention + n + "/kernel").T for n in "qkv"], axis=0)
    np.testing.assert_array_equal(written["encoder/layer_1/self_attention/linear_0/weight"],
                                  fused)
    cross = "body/decoder/layer_0/encdec_attention/multihead_attention/"
    np.testing.assert_array_equal(written["decoder/layer_0/attention/linear_1/weight"],
                                  np.concatenate([tensor(cross + "k/kernel").T,
                                                  tensor(cross + "v/kernel").T], axis=0))
    np.testing.assert_array_equal(written["decoder/layer_1/ffn/linear_0/bias"],
                                  tensor("body/decoder/layer_1/ffn/conv1/bias"))
    np.testing.assert_array_equal(
        written["decoder/layer_norm/gamma"],
        tensor("body/decoder/layer_prepostprocess/layer_norm/layer_norm_scale"))
    # The softmax matrix: T2T's 16 shards, concatenated in order.
    shards = [reader.get_tensor(n) for n in sorted(
        (n for n in reader.get_variable_to_shape_map()
         if re.search(r"/softmax/weights_\d+$", n)),
        key=lambda n: int(n.rsplit("_", 1)[1]))]
    assert len(shards) == 16
    np.testing.assert_array_equal(written["decoder/projection/weight"],
                                  np.concatenate(shards, axis=0))
    with open(os.path.join(exported, "config.json")) as handle:
        config = json.load(handle)
    assert config["layer_norm_epsilon"] == pytest.approx(1e-6)
    assert (config["eos_token"], config["decoder_start_token"]) == ("1", "0")
    assert sorted(os.listdir(exported)) == sorted(
        ["config.json", "hparams.json", "model.bin", "shared_vocabulary.json",
         "t2t_model.json"])


def test_greedy_and_beam_decodes_equal_tensorflows(trained, exported):
    words = WORDS + [w for w, _ in dev_pairs(trained["data_dir"])]
    with t2t.load(trained["folder"]) as tf_model, t2t.load(exported) as ct2_model:
        assert ct2_model.engine_name == "ctranslate2"
        assert ct2_model.decode(words, beam_size=1) == tf_model.decode(words, beam_size=1)
        with pytest.raises(errors.UserError, match="stopping_bound='current_length' is for "
                           "the TensorFlow engines: CTranslate2 ends a beam search when"):
            ct2_model.decode(words, stopping_bound="current_length")
        beam_tf, beam_ct2 = (m.decode(words, beam_size=3, alpha=0.0)
                             for m in (tf_model, ct2_model))
        assert sum(a == b for a, b in zip(beam_tf, beam_ct2)) >= len(words) - 1
        # alpha means T2T's length penalty in both engines: the same best hypotheses, with
        # the same penalised scores (CTranslate2's own penalty divides by n ** alpha).
        nbest_tf, nbest_ct2 = (m.decode(words, beam_size=3, alpha=1.0, nbest=2)
                               for m in (tf_model, ct2_model))
        same = [(a[0], b[0]) for a, b in zip(nbest_tf, nbest_ct2) if a[0].text == b[0].text]
        assert len(same) >= len(words) - 1
        assert [b.score for _, b in same] == pytest.approx([a.score for a, _ in same],
                                                           abs=1e-3)
        pairs = [(w, w.upper()) for w in WORDS] + [("ab", "BA")]
        scores_tf, scores_ct2 = (m.score(*zip(*pairs)) for m in (tf_model, ct2_model))
        assert scores_ct2 == pytest.approx(scores_tf, abs=1e-4)


def test_int8_decodes_like_float32(trained, exported, tmp_path):
    path = str(tmp_path / "int8")
    ctranslate2_export.export_ctranslate2(MODEL, trained["hparams"], trained["checkpoint"],
                                          path, HPARAMS_SET, quantization="int8",
                                          hparams_overrides=HPARAMS,
                                          t2t_usr_dir=trained["usr_dir"])
    dtypes = {}
    read_model_bin(os.path.join(path, "model.bin"), dtypes)
    weights = [n for n in dtypes if n.endswith("/weight") and "/linear" in n]
    assert weights and all(dtypes[n] == INT8 for n in weights)
    with t2t.load(path) as int8, t2t.load(exported) as float32:
        same = sum(a == b for a, b in zip(int8.decode(WORDS, beam_size=1),
                                          float32.decode(WORDS, beam_size=1)))
    assert same >= len(WORDS) - 2
    # Loading int8 weights leaves the loading thread an OpenMP team (which throttles the
    # decode's spinning threads: 10x slower one sentence at a time); t2t loads in a passing
    # thread. Counted in a fresh process, whose main thread has no team yet.
    counts = subprocess.run(
        [sys.executable, "-c", THREAD_COUNTS, path], check=True, capture_output=True,
        text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")).stdout.split()
    in_main_thread, passing_thread = (int(n) for n in counts)
    assert in_main_thread == 2, counts  # the translator's worker and the load's team
    assert passing_thread == 1, counts  # the translator's worker alone


THREAD_COUNTS = """
import os, sys, time
import ctranslate2
from t2t.serving import ctranslate2_export
def threads():
    return len(os.listdir("/proc/self/task"))
before = threads()
kept = ctranslate2_export.load_translator(sys.argv[1], device="cpu", intra_threads=2,
                                          inter_threads=1)
# The passing thread's team is told to end as it ends, and takes a moment to.
deadline = time.time() + 10
while threads() - before > 1 and time.time() < deadline:
    time.sleep(0.02)
passing = threads() - before
before = threads()
plain = ctranslate2.Translator(sys.argv[1], device="cpu", intra_threads=2, inter_threads=1)
print(threads() - before, passing)
"""


# Other layouts CTranslate2 must get right: shared embeddings and softmax (with the
# target-space embedding folded into the positions), and post-norm with learned positions.
LAYOUTS = {
    "shared_prenorm": "shared_embedding_and_softmax_weights=true",
    "postnorm_learned_positions": ("layer_preprocess_sequence=none,"
                                   "layer_postprocess_sequence=dan,pos=emb,max_length=64"),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_other_layouts_decode_as_tensorflow(trained, tmp_path, layout):
    overrides = HPARAMS.replace(",shared_embedding_and_softmax_weights=false", "") + "," + \
        LAYOUTS[layout]
    hparams = registry.hparams(HPARAMS_SET)
    hparams.parse(overrides)
    hparams.add_hparam("data_dir", trained["data_dir"])
    from t2t.model import model_hparams
    model_hparams.add_problem_hparams(hparams, trained["hparams"].problem)
    folder = str(tmp_path / "train")
    train_in_graph(MODEL, hparams, folder, steps=30, seed=2)
    decoding_assets.save_decoding_assets(folder, hparams, MODEL, HPARAMS_SET,
                                         hparams_overrides=overrides,
                                         t2t_usr_dir=trained["usr_dir"])
    with t2t.load(folder) as tf_model, t2t.load(folder, engine="ctranslate2") as ct2_model:
        assert ct2_model.decode(WORDS, beam_size=1, extra_length=8) == tf_model.decode(
            WORDS, beam_size=1, extra_length=8)
    cached = os.path.join(folder, "export", "ctranslate2-model.ckpt-30-float32")
    assert os.path.exists(os.path.join(cached, "model.bin"))


def test_what_ctranslate2_cannot_represent_is_one_line(trained):
    hparams = trained["hparams"]
    with pytest.raises(errors.UserError, match="lstm_seq2seq .* has no CTranslate2 equivalent"):
        ctranslate2_export.check_convertible("lstm_seq2seq", hparams)
    for override, named in (("self_attention_type=dot_product_relative", "self_attention_type"),
                            ("ffn_layer=conv_relu_conv", "ffn_layer"),
                            ("layer_preprocess_sequence=nd", "pre-norm")):
        changed = registry.hparams(HPARAMS_SET)
        changed.parse(HPARAMS + "," + override)
        from t2t.model import model_hparams
        model_hparams.add_problem_hparams(changed, hparams.problem)
        with pytest.raises(errors.UserError, match=named) as error:
            ctranslate2_export.check_convertible(MODEL, changed)
        assert "\n" not in str(error.value)
    with pytest.raises(errors.UserError, match="did you mean int8"):
        ctranslate2_export.check_quantization("int9")
