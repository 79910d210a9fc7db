"""t2t.load: a trained model used from Python, on the TensorFlow and SavedModel engines."""
import logging as std_logging
import os
import shutil

import pytest

import t2t
from t2t.core import errors
from t2t.decoding import decoding, scoring
from t2t.inference import input_limit, loading
from t2t.inference.trained_model import TrainedModel
from t2t.serving import export

from decoding_testing import (copy_as_training_folder, dev_pairs, make_estimator, make_hparams,
                              trained_model, HPARAMS, HPARAMS_SET, MODEL)

WORDS = ["ab", "dcbad", "c", "bbb", "cabd", "dada", "a", "ddcb"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A copy of the shared trained model with what t2t-trainer's chief records."""
    trained = trained_model(tmp_path_factory)
    folder = str(tmp_path_factory.mktemp("load") / "train")
    return {"folder": copy_as_training_folder(trained, folder), **trained}


@pytest.fixture(scope="module")
def model(folder):
    with t2t.load(folder["folder"]) as loaded:
        yield loaded


def decoder_decodes(folder, tmp_path, words, beam_size):
    """What decoding.decode_from_file (t2t-decoder's TensorFlow path) writes for `words`."""
    hparams = make_hparams(folder["data_dir"])
    decode_hp = decoding.decode_hparams("beam_size=%d,alpha=0.6" % beam_size)
    source = tmp_path / "words.txt"
    source.write_text("\n".join(words) + "\n")
    estimator = make_estimator(hparams, folder["folder"], decode_hp)
    return decoding.decode_from_file(estimator, str(source), hparams, decode_hp,
                                     str(tmp_path / "out.txt"))


@pytest.mark.parametrize("beam_size", [1, 3])
def test_decodes_what_the_decoder_decodes_in_input_order(model, folder, tmp_path, beam_size):
    words = WORDS + [w for w, _ in dev_pairs(folder["data_dir"])]
    assert model.decode(words, beam_size=beam_size) == decoder_decodes(
        folder, tmp_path, words, beam_size)
    # Batches of 3 (sorted by length inside) give the same, in the same order.
    assert model.decode(words, beam_size=beam_size, batch_size=3) == model.decode(
        words, beam_size=beam_size)


def test_the_stopping_bound_is_a_decode_setting(model):
    words = WORDS + ["abcdabcd", "dd"]
    exact = model.decode(words, beam_size=3, nbest=3)
    sooner = model.decode(words, beam_size=3, nbest=3, stopping_bound="current_length")
    assert [h.text for hs in sooner for h in hs] and len(sooner) == len(words)
    # A sooner stop never finds a better best hypothesis than T2T's exact search.
    for a, b in zip(exact, sooner):
        assert b[0].score <= a[0].score + 1e-5
    assert model.decode(words, beam_size=3, stopping_bound="max_length") == [
        hs[0].text for hs in exact]
    with pytest.raises(errors.UserError, match="stopping_bound='current': did you mean "
                       "current_length\\? use max_length"):
        model.decode(words, stopping_bound="current")


def test_one_string_in_one_string_out(model):
    assert model.decode("dcba", beam_size=1) == model.decode(["dcba"], beam_size=1)[0]
    assert model.decode("dcba", beam_size=1).isupper()


def test_nbest_hypotheses_are_sorted_and_hold_no_padding(model):
    best = model.decode(WORDS, beam_size=3)
    nbest = model.decode(WORDS, beam_size=3, nbest=3)
    for hypotheses, first in zip(nbest, best):
        assert len(hypotheses) == 3
        assert hypotheses[0].text == first
        scores = [h.score for h in hypotheses]
        assert scores == sorted(scores, reverse=True)
        assert all("<pad>" not in h.text and "\x00" not in h.text for h in hypotheses)


def test_score_is_minus_the_decoders_loss(model, folder, tmp_path):
    # Without label smoothing (HPARAMS), t2t-decoder --score_file's loss is the mean
    # per-token cross-entropy times the problem's loss_multiplier (2 for characters, as in
    # T2T): minus the mean log-probability `score` gives, times that.
    pairs = [("ab", "AB"), ("dcbad", "DCBAD"), ("c", "X"), ("bbb", "BBBB")]
    path = tmp_path / "pairs.tsv"
    path.write_text("".join("%s\t%s\n" % pair for pair in pairs))
    hparams = make_hparams(folder["data_dir"])
    losses = scoring.score_file(str(path), MODEL, hparams, model.source.checkpoint_path)
    scores = model.score([p[0] for p in pairs], [p[1] for p in pairs], batch_size=3)
    multiplier = hparams.problem_hparams.loss_multiplier
    assert multiplier == 2.0
    assert scores == pytest.approx([-loss / multiplier for loss in losses], abs=1e-4)
    assert scores[0] > scores[2]  # the right uppercase word is likelier than a wrong one


def test_bad_inputs_are_one_line_errors_or_warnings(model, caplog):
    assert model.decode([]) == []
    with caplog.at_level(std_logging.WARNING):
        assert model.decode(["ab", "", "  "], beam_size=1) == ["AB", "", ""]
    assert "2 of 3 inputs are empty" in caplog.text
    for bad, message in ((b"a\xffb", "input 0: not UTF-8 (byte 0xff at column 2)"),
                         (3, "input 0 is a int; give text")):
        with pytest.raises(errors.UserError, match=message.replace("(", r"\(").replace(
                ")", r"\)")):
            model.decode([bad])
    assert model.decode([b"ab"], beam_size=1) == ["AB"]
    with pytest.raises(errors.UserError, match="nbest=5: give 1 to beam_size"):
        model.decode(["ab"], beam_size=2, nbest=5)
    for settings, message in (({"beam_size": 2.5}, "beam_size=2.5: give a whole number"),
                              ({"beam_size": 0}, "beam_size=0: give a whole number"),
                              ({"alpha": -1}, "alpha=-1: give the length penalty's exponent")):
        with pytest.raises(errors.UserError, match=message):
            model.decode(["ab"], **settings)
    with pytest.raises(errors.UserError, match="as many targets as inputs"):
        model.score(["ab"], ["AB", "CD"])


def test_long_inputs_are_cut_or_decoded_with_one_warning(model, caplog):
    encoders = {"inputs": model.inputs_encoder, "targets": model.targets_encoder}
    short = TrainedModel(model.engine, encoders, model.source,
                         input_limit(model.engine.hparams, max_input_size=3))
    with caplog.at_level(std_logging.WARNING):
        decoded = short.decode(["abcdab", "a", "dcba"], beam_size=1)
    assert "inputs: 2 of 3 inputs were cut to 3 ids (EOS included) by max_input_size=3" in \
        caplog.text
    assert decoded[1] == "A" and decoded[0] == model.decode("ab", beam_size=1)
    # Without max_input_size the limit is the length the model was trained on; longer
    # inputs are decoded in full, as t2t-decoder does, with the fix in the warning.
    trained = input_limit(model.engine.hparams)
    assert not trained.cut and trained.ids == model.engine.hparams.max_length
    long_word = "abcd" * (trained.ids // 4)
    caplog.clear()
    with caplog.at_level(std_logging.WARNING):
        assert len(model.decode([long_word, "ab"], beam_size=1, extra_length=2)) == 2
    assert ("inputs: 1 of 2 inputs are longer than the %d ids (EOS included) the model was "
            "trained on" % trained.ids) in caplog.text
    assert "cut them with t2t.load(..., max_input_size=%d)" % trained.ids in caplog.text


def test_paths_that_hold_no_model(tmp_path, folder):
    with pytest.raises(errors.UserError, match="does not exist"):
        t2t.load(str(tmp_path / "nothing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(errors.UserError, match=r"holds no t2t model \(no t2t_model.json"):
        t2t.load(str(tmp_path / "empty"))
    with pytest.raises(errors.UserError, match="did you mean ctranslate2"):
        t2t.load(folder["folder"], engine="ctranslat2")
    with pytest.raises(errors.UserError, match="checkpoint 'model.ckpt-7' is not in"):
        t2t.load(folder["folder"], checkpoint="model.ckpt-7")


def test_a_checkpoint_prefix_a_name_or_a_step_selects_that_checkpoint(folder, tmp_path):
    prefix = loading.find_model(folder["folder"]).checkpoint_path
    assert os.path.dirname(prefix) == folder["folder"]  # the copy's own, not the original's
    step = int(prefix.rsplit("-", 1)[1])
    for path, checkpoint in ((prefix, None), (folder["folder"], step),
                             (folder["folder"], os.path.basename(prefix))):
        assert loading.find_model(path, checkpoint=checkpoint).checkpoint_path == prefix
    # A moved folder whose `checkpoint` file is gone still finds its newest checkpoint.
    moved = str(tmp_path / "moved")
    shutil.copytree(folder["folder"], moved)
    os.remove(os.path.join(moved, "checkpoint"))
    assert loading.find_model(moved).checkpoint_path == os.path.join(
        moved, os.path.basename(prefix))


def test_saved_model_export_decodes_what_the_checkpoint_decodes(folder, model, tmp_path):
    hparams = make_hparams(folder["data_dir"])
    path = export.export_saved_model(
        MODEL, hparams, model.source.checkpoint_path, str(tmp_path / "export"),
        decoding.decode_hparams("beam_size=1"),
        assets={"hparams_set": HPARAMS_SET, "hparams_overrides": HPARAMS,
                "t2t_usr_dir": folder["usr_dir"]})
    assert not [n for n in os.listdir(str(tmp_path / "export")) if n.endswith("incomplete")]
    # The export folder means its newest version; no data_dir is needed.
    assert loading.find_model(str(tmp_path / "export")).model_path == path
    with t2t.load(path) as served:
        assert served.engine_name == "saved_model"
        assert served.decode(WORDS) == model.decode(WORDS, beam_size=1)
        with pytest.raises(errors.UserError, match="was exported with beam_size=1"):
            served.decode(WORDS, beam_size=4)
        with pytest.raises(errors.UserError, match="decodes only"):
            served.score(["ab"], ["AB"])
    # The stopping bound is fixed at export, as the beam size.
    path = export.export_saved_model(
        MODEL, hparams, model.source.checkpoint_path, str(tmp_path / "sooner"),
        decoding.decode_hparams("beam_size=3,stopping_bound=current_length"),
        assets={"hparams_set": HPARAMS_SET, "hparams_overrides": HPARAMS,
                "t2t_usr_dir": folder["usr_dir"]})
    with t2t.load(path) as served:
        assert served.decode(WORDS) == model.decode(WORDS, beam_size=3,
                                                    stopping_bound="current_length")
        with pytest.raises(errors.UserError, match="stopping_bound=current_length and 1 "
                           "hypotheses per input; decode with those"):
            served.decode(WORDS, stopping_bound="max_length")
