"""Decoding library: decode_hparams, file/dataset/interactive decoding, scoring (on the
tiny trained model of `decoding_testing`)."""
import os

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import errors, registry
from t2t.decoding import decoding
from t2t.decoding import scoring
from t2t.encoders import text_encoder
from t2t.model import model_hparams

from decoding_testing import (DEV_SIZE, HPARAMS_SET, MODEL, PROBLEM, assert_decodes_in_input_order,
                              dev_pairs, make_estimator, make_hparams, trained_model)


# ---------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return trained_model(tmp_path_factory)


@pytest.fixture()
def estimator_for(model):
    def build(decode_overrides=""):
        hparams = make_hparams(model["data_dir"])
        decode_hp = decoding.decode_hparams(decode_overrides)
        return make_estimator(hparams, model["model_dir"], decode_hp), hparams, decode_hp
    return build


# ---------------------------------------------------------------------------- tests
def test_decode_hparams_have_t2t_defaults():
    hp = decoding.decode_hparams()
    assert (hp.beam_size, hp.alpha, hp.extra_length, hp.batch_size) == (4, 0.6, 100, 0)
    assert (hp.return_beams, hp.write_beam_scores, hp.max_input_size, hp.num_samples) == (
        False, False, -1, -1)
    assert (hp.delimiter, hp.decode_to_file, hp.decode_reference, hp.decode_in_memory) == (
        "\n", "", "", False)
    assert (hp.shards, hp.shard_id, hp.log_results, hp.num_decodes) == (1, 0, True, 1)
    assert (hp.decode_timeout_mins, hp.force_decode_length, hp.save_images,
            hp.identity_output, hp.skip_eos_postprocess, hp.min_length_ratio,
            hp.eos_penalty, hp.block_size) == (240, False, False, False, False, 0.0, 0.0, 0)
    hp = decoding.decode_hparams("beam_size=1,alpha=0.0,delimiter=\\t,return_beams=true")
    assert (hp.beam_size, hp.alpha, hp.delimiter, hp.return_beams) == (1, 0.0, "\t", True)
    with pytest.raises(ValueError, match="beam_sise"):
        decoding.decode_hparams("beam_sise=2")


def test_decode_filename_and_shards():
    hp = decoding.decode_hparams("beam_size=2,alpha=0.5")
    assert decoding._decode_filename("dev.en", "p", hp, "transformer", "t_tiny") == (
        "dev.en.transformer.t_tiny.p.beam2.alpha0.5.decodes")
    named = "out.m.h.p.beam2.alpha0.5.decodes"
    assert decoding._decode_filename(named, "p", hp) == named
    hp.shards, hp.shard_id = 4, 2
    assert decoding._add_shard_to_filename("f", hp) == "f002"
    hp.shard_google_format = True
    assert decoding._add_shard_to_filename("f", hp) == "f-00002-of-00004"
    with pytest.raises(ValueError, match="model_name and hparams_set"):
        decoding._decode_filename("dev.en", "p", decoding.decode_hparams())


def test_sorted_inputs_longest_first_and_restorable(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("a b\nc d e\nf\ng h\n")
    sorted_inputs, keys = decoding._get_sorted_inputs(str(path))
    assert sorted_inputs == ["c d e", "a b", "g h", "f"]  # stable for equal lengths
    assert [sorted_inputs[keys[i]] for i in range(4)] == ["a b", "c d e", "f", "g h"]


def test_batches_are_padded_and_end_with_eos():
    vocab = text_encoder.TextEncoder()
    batches = list(decoding._decode_batch_input_fn(2, ["3 4 5", "6", "7 8"], vocab, 2,
                                                   max_input_size=-1))
    np.testing.assert_array_equal(batches[0]["inputs"], [[5, 6, 7, 1], [8, 1, 0, 0]])
    np.testing.assert_array_equal(batches[1]["inputs"], [[9, 10, 1]])
    cut = next(decoding._decode_batch_input_fn(1, ["3 4 5"], vocab, 1, max_input_size=2))
    np.testing.assert_array_equal(cut["inputs"], [[5, 1]])
    prompt = next(decoding._decode_batch_input_fn(1, ["3 4"], vocab, 1, -1, has_input=False))
    np.testing.assert_array_equal(prompt["inputs"], [[5, 6]])


def test_log_decode_results_cuts_at_eos():
    vocab = text_encoder.TextEncoder()
    assert decoding.log_decode_results([6, 9, 1, 0], [9, 6, 1, 7], "p", 0, vocab, vocab,
                                       targets=[9, 6, 1]) == ("4 7", "7 4", "7 4")
    assert decoding.log_decode_results(None, [9, 1, 7], "p", 0, vocab, vocab,
                                       skip_eos_postprocess=True) == (None, "7 <EOS> 5", None)
    assert decoding.log_decode_results([6], [9, 1], "p", 0, vocab, vocab,
                                       identity_output=True) == ("6", "9 1", None)


def test_decode_from_file_restores_input_order(estimator_for, model, tmp_path, caplog):
    estimator, hparams, decode_hp = estimator_for("beam_size=1,batch_size=3")
    words = ["ab", "dcbad", "c", "bbb", "a", "dd", "cabd"]
    source = tmp_path / "words.txt"
    source.write_text("\n".join(words) + "\n")
    # As if trained on examples of at most 5 ids: "dcbad" + EOS is longer, and is decoded
    # in full with a warning (the positions are sinusoids, so max_length changes nothing else).
    hparams.max_length = 5
    with caplog.at_level("WARNING"):
        decodes = decoding.decode_from_file(estimator, str(source), hparams, decode_hp,
                                            model_name=MODEL, hparams_set=HPARAMS_SET)
    assert_decodes_in_input_order(decodes, words)
    assert [r.getMessage() for r in caplog.records if "longer than" in r.getMessage()] == [
        "%s: 1 of 7 inputs are longer than the 5 ids (EOS included) the model was trained on "
        "(hparams.max_length=5: training dropped longer examples); they are decoded in full, "
        "slowly and likely badly; cut them with --decode_hparams=max_input_size=5" % source]
    out = tmp_path / ("words.txt.%s.%s.%s.beam1.alpha0.6.decodes" % (MODEL, HPARAMS_SET,
                                                                      PROBLEM))
    assert out.read_text() == "".join(d + "\n" for d in decodes)

    estimator, hparams, decode_hp = estimator_for(
        "beam_size=2,return_beams=true,write_beam_scores=true")
    target = tmp_path / "beams.txt"
    decodes = decoding.decode_from_file(estimator, str(source), hparams, decode_hp,
                                        decode_to_file=str(target))
    lines = target.read_text().splitlines()
    assert lines == decodes
    assert_decodes_in_input_order([line.split("\t")[0] for line in lines], words)
    for line in lines:
        fields = line.split("\t")  # decode, score, decode, score
        assert len(fields) == 4 and float(fields[1]) >= float(fields[3])


def test_decode_from_dataset_writes_decodes_targets_inputs(estimator_for, model, tmp_path):
    estimator, hparams, decode_hp = estimator_for("beam_size=2,batch_size=8")
    stem = str(tmp_path / "dev")
    decoding.decode_from_dataset(estimator, PROBLEM, hparams, decode_hp, decode_to_file=stem,
                                 model_name=MODEL, hparams_set=HPARAMS_SET)
    base = "%s.%s.%s.%s.beam2.alpha0.6." % (stem, MODEL, HPARAMS_SET, PROBLEM)
    read = {ext: open(base + ext).read().split("\n")[:-1]
            for ext in ("decodes", "targets", "inputs")}
    assert len(read["inputs"]) == DEV_SIZE
    assert sorted(zip(read["inputs"], read["targets"])) == sorted(dev_pairs(model["data_dir"]))
    correct = sum(d == t for d, t in zip(read["decodes"], read["targets"]))
    assert correct >= 0.75 * DEV_SIZE
    assert os.path.isdir(os.path.join(model["model_dir"], "decode_00000"))


def test_decode_dev_sample_for_the_demo(estimator_for, model):
    estimator, hparams, decode_hp = estimator_for("beam_size=1")
    summary = decoding.decode_dev_sample(estimator, hparams, decode_hp, num_examples=3)
    assert summary.num_decoded == DEV_SIZE
    assert len(summary.inputs) == len(summary.decodes) == len(summary.references) == 3
    pairs = dev_pairs(model["data_dir"])
    for inputs, reference in zip(summary.inputs, summary.references):
        assert (inputs, reference) in pairs
    assert summary.sequence_accuracy >= 0.75


def test_decode_interactively(estimator_for):
    estimator, hparams, decode_hp = estimator_for("beam_size=1")
    lines = iter(["abc", "ns=2", "dl=1", "dcba", "q"])
    written, said, prompts = [], [], []

    def read_line(prompt):
        prompts.append(prompt)
        return next(lines)

    count = decoding.decode_interactively(estimator, hparams, decode_hp, read_line=read_line,
                                          write=written.append, say=said.append)
    # ns=2 decodes two (greedy, so equal) samples of "dcba".
    assert count == 3 and written[1] == written[2]
    assert_decodes_in_input_order(written[:2], ["abc", "dcba"])
    # The banner once, then a short prompt per line.
    assert said[0].startswith("INTERACTIVE MODE  num_samples=1  decode_length=100")
    assert said[1:] == ["num_samples=2  decode_length=100", "num_samples=2  decode_length=1"]
    assert prompts == [">"] * 5


def test_score_file_ranks_the_right_target_best(model, tmp_path):
    hparams = make_hparams(model["data_dir"])
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("abc\tABC\nabc\tDDD\ncd\tCD\n")
    checkpoint = tf.train.latest_checkpoint(model["model_dir"])
    scores = scoring.score_file(str(pairs), MODEL, hparams, checkpoint)
    assert len(scores) == 3 and all(s >= 0 for s in scores)
    assert scores[0] < 0.5 and scores[2] < 0.5 and scores[1] > 2 * scores[0] + 1.0
    bad = tmp_path / "bad.txt"
    bad.write_text("abc\tABC\nno tab here\n")
    with pytest.raises(errors.UserError, match="line 2 has no tab"):
        scoring.score_file(str(bad), MODEL, hparams, checkpoint)


def test_missing_checkpoint_and_input_file_are_user_errors(estimator_for, model, tmp_path):
    hparams = make_hparams(model["data_dir"])
    empty = make_estimator(hparams, str(tmp_path / "empty"))
    with pytest.raises(errors.UserError, match="no checkpoint in"):
        decoding.decode_from_file(empty, str(tmp_path / "x"), hparams,
                                  decoding.decode_hparams())
    estimator, hparams, decode_hp = estimator_for()
    with pytest.raises(errors.UserError, match="does not exist"):
        decoding.decode_from_file(estimator, str(tmp_path / "missing.txt"), hparams,
                                  decode_hp)


# ---------------------------------------------------------------------------- beams
class FixedBeams:
    """Stands in for an Estimator: every input decodes to the same beams (ids [beams, L])."""

    def __init__(self, model_dir, outputs, scores):
        self.model_dir, self.outputs, self.scores = str(model_dir), outputs, scores

    def predict(self, input_fn, checkpoint_path=None):
        del checkpoint_path
        for features in input_fn():
            for _ in features["inputs"]:
                yield {"outputs": np.array(self.outputs), "scores": np.array(self.scores)}


def reverse_binary_hparams():
    hparams = registry.hparams("transformer_tiny")
    model_hparams.add_problem_hparams(hparams, "algorithmic_reverse_binary40_test")
    return hparams


# A small vocabulary (PAD, EOS, "0", "1"): a lower beam can emit PAD and go on.
BEAMS = [[2, 3, 2, 2, 2, 3, 1, 0], [2, 3, 2, 2, 2, 3, 0, 3], [3, 0, 0, 0, 0, 0, 0, 0]]


def test_each_beam_is_cut_at_its_own_eos_or_pad(tmp_path, caplog):
    hparams = reverse_binary_hparams()
    decode_hp = decoding.decode_hparams("beam_size=3,return_beams=true,write_beam_scores=true")
    estimator = FixedBeams(tmp_path, BEAMS, [-0.5, -1.5, -2.5])
    source = tmp_path / "in.txt"
    source.write_text("0 1\n1 1 0\n")
    with caplog.at_level("INFO"):
        decodes = decoding.decode_from_file(estimator, str(source), hparams, decode_hp,
                                            decode_to_file=str(tmp_path / "out"),
                                            checkpoint_path="unused")
    line = "0 1 0 0 0 1\t-0.50\t0 1 0 0 0 1\t-1.50\t1\t-2.50"
    assert decodes == [line, line]
    assert (tmp_path / "out").read_text() == line + "\n" + line + "\n"
    assert not [r for r in caplog.records if "<pad>" in r.getMessage()]

    written = []
    lines = iter(["0 1", "q"])
    estimator = FixedBeams(tmp_path, BEAMS, [-0.5, -1.5, -2.5])
    count = decoding.decode_interactively(estimator, hparams, decode_hp,
                                          checkpoint_path="unused",
                                          read_line=lambda prompt: next(lines),
                                          write=written.append, say=lambda text: None)
    assert count == 1
    assert written == ['"0 1 0 0 0 1"\tScore:-0.500000', '"0 1 0 0 0 1"\tScore:-1.500000',
                           '"1"\tScore:-2.500000']


def test_decode_from_file_names_a_line_that_is_not_utf8(tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(b"0 1\n1 \xe9 0\n")
    estimator = FixedBeams(tmp_path, BEAMS, [0.0, 0.0, 0.0])
    with pytest.raises(errors.UserError, match=r"in.txt line 2: not UTF-8 \(byte 0xe9 at "
                                               r"column 3\); convert it to UTF-8"):
        decoding.decode_from_file(estimator, str(source), reverse_binary_hparams(),
                                  decoding.decode_hparams(), checkpoint_path="unused")


def test_interactive_lines_that_are_not_utf8_are_reported(tmp_path):
    # A terminal's stdin gives undecodable bytes as lone surrogates.
    lines = iter(["1 \udce9", "q"])
    reported = []
    count = decoding.decode_interactively(
        FixedBeams(tmp_path, BEAMS[0], [0.0]), reverse_binary_hparams(),
        decoding.decode_hparams("beam_size=1"), checkpoint_path="unused",
        read_line=lambda prompt: next(lines), write=lambda text: None, say=lambda text: None,
        report=reported.append)
    assert count == 0
    assert reported == ["error: line 1: not UTF-8 (byte 0xe9 at column 3); type UTF-8 text "
                        "(q quits)"]
