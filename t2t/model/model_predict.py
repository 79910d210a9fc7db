"""PREDICT outputs of a built T2TModel, with no `tf.estimator`: the decode and its exports.

The Estimator backend wraps them in an EstimatorSpec (`model_specs.estimator_spec_predict`);
the Estimator-free predictor (`t2t.decoding.predictor`) and the SavedModel exporter
(`t2t.serving.export`) run them as they are, so every path decodes with the same graph:

    model = registry.model("transformer")(hparams, ModeKeys.PREDICT, decode_hparams=decode_hp)
    predictions, exports = model.predict_outputs({"inputs": ids})   # ids int32 [B, L, 1, 1]
    predictions["outputs"]       # int32 [B, L'] decoded ids (greedy or beam: decode_hp)
    predictions["scores"]        # float [B] (beam search)
    exports["serving_default"]   # {"outputs": ..., "scores": ...}
"""
import tensorflow as tf

from t2t.layers import normalization
from t2t.layers import shape_utils


def del_dict_non_tensors(d):
    """Remove entries that are not tensors (e.g. scores None) so specs accept the dict."""
    for key in list(d):
        if not isinstance(d[key], (tf.Tensor, tf.SparseTensor, tf.Variable)):
            del d[key]


def predict_outputs(model, features, use_tpu=False):
    """(predictions, {signature name: outputs}) of `model.infer` with its decode hparams.

    Predictions hold "outputs", "scores", "inputs", "targets" (from "infer_targets") and
    every other batched feature (scalars are tiled to the batch). The one export signature
    (`serving_default`) returns "outputs", "scores" and "batch_prediction_key" when fed.
    """
    decode_hparams = model._decode_hparams
    # The space ids join the predictions, as in T2T.
    model.fill_problem_hparams_features(features)
    beam_size = decode_hparams.get("beam_size") or 1
    top_beams = beam_size if decode_hparams.get("return_beams") else 1
    infer_out = model.infer(features, beam_size=beam_size, top_beams=top_beams,
                            alpha=decode_hparams.get("alpha") or 0.0,
                            decode_length=decode_hparams.get("extra_length") or 0,
                            use_tpu=use_tpu)
    if isinstance(infer_out, dict):
        outputs, scores = infer_out["outputs"], infer_out.get("scores")
    else:
        outputs, scores = infer_out, None

    inputs = features.get("inputs")
    if inputs is None:
        inputs = features.get("targets")
    predictions = {"outputs": outputs, "scores": scores, "inputs": inputs,
                   "targets": features.get("infer_targets")}
    batch_size = shape_utils.shape_list(outputs)[0]
    for name, feature in features.items():
        if name in predictions or name in ("infer_targets", "decode_loop_step"):
            continue
        if not isinstance(feature, tf.Tensor):
            continue
        if not feature.shape.as_list():
            # Every prediction needs a batch dimension.
            feature = tf.tile(tf.expand_dims(feature, 0), [batch_size])
        predictions[name] = feature
    del_dict_non_tensors(predictions)

    export_out = {"outputs": predictions["outputs"]}
    if "scores" in predictions:
        export_out["scores"] = predictions["scores"]
    if "batch_prediction_key" in predictions:
        # Rejoins examples in order with Cloud ML Engine batch prediction.
        export_out["batch_prediction_key"] = predictions["batch_prediction_key"]
    return predictions, {tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY: export_out}


def build_predictions(model, features, use_tpu=False):
    """`model.predict_outputs(features)` built forward only (`normalization.forward_only`):
    no custom gradients, which a SavedModel of the decode could not save."""
    with normalization.forward_only():
        return model.predict_outputs(features, use_tpu=use_tpu)
