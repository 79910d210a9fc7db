"""The Estimator-free predictor: same decodes as `Estimator.predict` (where TensorFlow still
has tf.estimator), backend choice, and its own errors."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import backend_choice
from t2t.core import errors
from t2t.decoding import decoding
from t2t.decoding import predictor

from decoding_testing import (DEV_SIZE, MODEL, assert_decodes_in_input_order, dev_pairs,
                              make_estimator, make_hparams, trained_model)

needs_estimator = pytest.mark.skipif(not backend_choice.estimator_available(),
                                     reason="this TensorFlow has no tf.estimator")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return trained_model(tmp_path_factory)


def _both(model, overrides):
    hparams = make_hparams(model["data_dir"])
    decode_hp = decoding.decode_hparams(overrides)
    return (make_estimator(hparams, model["model_dir"], decode_hp, backend="estimator"),
            make_estimator(hparams, model["model_dir"], decode_hp, backend="native"),
            hparams, decode_hp)


@needs_estimator
@pytest.mark.parametrize("overrides", ["beam_size=1,alpha=0.0",
                                       "beam_size=3,alpha=0.6,return_beams=true"])
def test_predictions_equal_the_estimators(model, overrides):
    estimator, native, hparams, decode_hp = _both(model, overrides)
    assert isinstance(native, predictor.CheckpointPredictor)
    input_fn = decoding._dataset_input_fn(hparams.problem, hparams, decode_hp)
    expected = list(estimator.predict(input_fn))
    got = list(native.predict(input_fn))
    assert len(got) == len(expected) == DEV_SIZE
    for mine, theirs in zip(got, expected):
        assert sorted(mine) == sorted(theirs)
        for key in theirs:
            if np.asarray(theirs[key]).dtype.kind == "f":
                np.testing.assert_allclose(mine[key], theirs[key], rtol=1e-5, atol=1e-5)
            else:
                np.testing.assert_array_equal(mine[key], theirs[key])


@needs_estimator
@pytest.mark.parametrize("overrides", ["beam_size=1,alpha=0.0", "beam_size=4,alpha=0.6"])
def test_decode_from_file_equals_the_estimators(model, tmp_path, overrides):
    estimator, native, hparams, decode_hp = _both(model, overrides)
    words = [inputs for inputs, _ in dev_pairs(model["data_dir"])]
    source = tmp_path / "words.txt"
    source.write_text("\n".join(words) + "\n")
    outputs = []
    for name, runner in (("estimator", estimator), ("native", native)):
        out = str(tmp_path / ("%s.decodes" % name))
        outputs.append(decoding.decode_from_file(runner, str(source), hparams, decode_hp,
                                                 decode_to_file=out))
        with open(out) as f:
            assert f.read().splitlines() == outputs[-1]
    assert outputs[0] == outputs[1]
    assert_decodes_in_input_order(outputs[1], words)


def test_native_predictor_decodes_the_dev_set(model, tmp_path):
    hparams = make_hparams(model["data_dir"])
    decode_hp = decoding.decode_hparams("beam_size=2,alpha=0.6")
    native = make_estimator(hparams, model["model_dir"], decode_hp, backend="native")
    predictions = list(native.predict(decoding._dataset_input_fn(hparams.problem, hparams, decode_hp),
                                      predict_keys=["outputs", "targets"]))
    assert len(predictions) == DEV_SIZE and set(predictions[0]) == {"outputs", "targets"}
    vocab = hparams.problem_hparams.vocabulary["targets"]
    right = sum(vocab.decode(decoding._save_until_eos(p["outputs"]).tolist()) ==
                vocab.decode(decoding._save_until_eos(p["targets"]).tolist())
                for p in predictions)
    assert right >= DEV_SIZE - 2
    batches = list(native.predict(decoding._dataset_input_fn(hparams.problem, hparams, decode_hp),
                                  yield_single_examples=False))
    assert sum(len(b["outputs"]) for b in batches) == DEV_SIZE


def test_backend_choice_and_errors(model, tmp_path, monkeypatch):
    assert backend_choice.resolve_backend("native") == "native"
    assert backend_choice.resolve_backend("auto") == (
        "estimator" if backend_choice.estimator_available() else "native")
    with pytest.raises(errors.UserError,
                       match="--backend=tpu is not a backend; use one of auto, estimator"):
        backend_choice.resolve_backend("tpu")
    monkeypatch.setattr(backend_choice, "estimator_available", lambda: False)
    assert backend_choice.resolve_backend("auto") == "native"
    with pytest.raises(errors.UserError, match="--backend=estimator needs tf.estimator"):
        backend_choice.resolve_backend("estimator")
    hparams = make_hparams(model["data_dir"])
    empty = predictor.create_predictor(MODEL, hparams, str(tmp_path / "empty"))
    assert isinstance(empty, predictor.CheckpointPredictor)
    with pytest.raises(errors.UserError, match="no checkpoint in .*empty"):
        next(empty.predict(lambda: tf.data.Dataset.from_tensors({"inputs": [[[2]]]})))
