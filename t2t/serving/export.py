"""Export a trained model as a SavedModel that serves raw strings and tf.Examples.

    path = export_saved_model("transformer", hparams, "/train/model.ckpt-1000",
                              "/train/export", decode_hparams("beam_size=1"))
    # /train/export/1700000000/saved_model.pb(txt) + variables/

In any process, with TensorFlow only:

    loaded = tf.saved_model.load(path)
    out = loaded.signatures["serving_default"](inputs=tf.constant(["abc", "dd"]))
    out["outputs"]          # int32 [2, L] output ids (0 after EOS); [2, beams, L] with
                            # decode hparam return_beams
    out["decoded_outputs"]  # [b"ABC", b"DD"]: the ids up to EOS, decoded as t2t-decoder does
    out["scores"]           # float [2] (or [2, beams])
    serialized = [tf.train.Example(...).SerializeToString(), ...]   # int64 "inputs" + EOS
    loaded.signatures["serialized_example"](serialized_example=tf.constant(serialized))

The graph encodes the strings itself (`t2t.encoders.graph_ops`): byte, TextEncoder,
TokenTextEncoder and SubwordTextEncoder vocabularies. Decoding runs exactly as in
`t2t-decoder` (the same PREDICT graph, `T2TModel.predict_outputs`, and decode hparams), so
both give the same outputs, with no tf.estimator (TensorFlow 2.15 and 2.21). T2T's
exporter served only serialized tf.Examples and returned ids.
"""
import os
import time

import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
from t2t.core import errors
from t2t.decoding import decoding
from t2t.decoding import predictor
from t2t.encoders import graph_ops
from t2t.model import decoding_assets
from t2t.model import model_hparams
from t2t.training import trainer_lib

_v1 = tf.compat.v1

STRING_SIGNATURE = "serving_default"
ASSETS_EXTRA = "assets.extra"
EXAMPLE_SIGNATURE = "serialized_example"


def string_signature_support(hparams):
    """None when the inputs vocabulary can be encoded in the graph, else the reason."""
    p_hparams = model_hparams.attached_problem_hparams(hparams, "the SavedModel export")
    has_inputs = "inputs" in p_hparams.modality
    vocabulary = p_hparams.vocabulary.get("inputs" if has_inputs else "targets")
    return graph_ops.unsupported_reason(vocabulary)


def _predict(model_name, hparams, features, decode_hp):
    """The PREDICT graph of `model_name` on `features`: {"outputs", "scores", ...}."""
    return predictor.model_predictions(model_name, hparams, features, decode_hp)


def _outputs(predictions, targets_vocab):
    """Signature outputs: ids, their decoded strings (when the graph can decode) and scores."""
    outputs = {"outputs": predictions["outputs"]}
    if "scores" in predictions:
        outputs["scores"] = predictions["scores"]
    if graph_ops.unsupported_reason(targets_vocab) is None:
        outputs["decoded_outputs"] = graph_ops.decode_ids(predictions["outputs"],
                                                          targets_vocab)
    return outputs


def _string_features(hparams, decode_hp):
    """(the string placeholder, model features from its in-graph encoding)."""
    p_hparams = model_hparams.attached_problem_hparams(hparams, "the SavedModel export")
    has_inputs = "inputs" in p_hparams.modality
    vocabulary = p_hparams.vocabulary["inputs" if has_inputs else "targets"]
    strings = _v1.placeholder(tf.string, [None], name="inputs")
    ids = graph_ops.encode_strings(strings, vocabulary, append_eos=has_inputs,
                                   max_input_size=decode_hp.max_input_size)
    features = {
        "inputs": tf.expand_dims(ids, axis=2),  # [B, L, 1], as t2t-decoder's file input
        "input_space_id": tf.constant(p_hparams.input_space_id),
        "target_space_id": tf.constant(p_hparams.target_space_id),
    }
    return strings, features


def _example_features(problem, hparams, decode_hp):
    """(the serialized tf.Example placeholder, parsed model features)."""
    receiver = problem.serving_input_fn(hparams, decode_hp)
    serialized = receiver.receiver_tensors
    if isinstance(serialized, dict):
        serialized = next(iter(serialized.values()))
    return serialized, dict(receiver.features)


def _new_export_path(export_dir):
    """<export_dir>/<unix time> (as Estimator exporters name versions), not yet existing."""
    stamp = int(time.time())
    while tf.io.gfile.exists(os.path.join(export_dir, str(stamp))):
        stamp += 1
    return os.path.join(export_dir, str(stamp))


def export_saved_model(model_name, hparams, checkpoint_path, export_dir, decode_hp=None,
                       as_text=False, assets=None):
    """Write a SavedModel of `model_name` with `checkpoint_path`'s weights.

    Args:
      model_name: registered model name.
      hparams: model hparams with the problem attached (`add_problem_hparams`); the
        problem's vocabularies must be loadable (data_dir).
      checkpoint_path: checkpoint prefix (or folder: its latest checkpoint).
      export_dir: parent folder; the model goes to a new `<export_dir>/<timestamp>`.
      decode_hp: decode hparams (beam_size, alpha, extra_length, return_beams,
        max_input_size); default `decoding.decode_hparams()`.
      as_text: write saved_model.pbtxt instead of saved_model.pb.
      assets: {"hparams_set", "hparams_overrides", "t2t_usr_dir"} recorded in
        `assets.extra/t2t_model.json` beside the vocabularies, so `t2t.load(path)` decodes
        text with the SavedModel (t2t-exporter gives them; without them TensorFlow alone
        serves it).

    Returns:
      The path of the SavedModel. Signatures: "serving_default" (string "inputs") when
      the inputs vocabulary can be encoded in the graph, and "serialized_example" (string
      "serialized_example"), both returning "outputs", "scores" and "decoded_outputs".
    """
    decode_hp = decode_hp or decoding.decode_hparams()
    if tf.io.gfile.isdir(checkpoint_path):
        checkpoint_path = tf.train.latest_checkpoint(checkpoint_path)
    if not checkpoint_path or not tf.io.gfile.exists(checkpoint_path + ".index"):
        raise errors.UserError("no checkpoint %s to export; train first or pass "
                               "--checkpoint_path" % checkpoint_path)
    p_hparams = model_hparams.attached_problem_hparams(hparams, "the SavedModel export")
    problem = model_hparams.attached_problem(hparams, "export_saved_model")
    targets_vocab = p_hparams.vocabulary["targets"]
    reason = string_signature_support(hparams)
    graph = tf.Graph()
    with graph.as_default():
        signatures = {}
        if reason is None:
            strings, features = _string_features(hparams, decode_hp)
            outputs = _outputs(_predict(model_name, hparams, features, decode_hp),
                               targets_vocab)
            signatures[STRING_SIGNATURE] = _v1.saved_model.signature_def_utils.\
                predict_signature_def({"inputs": strings}, outputs)
        else:
            logging.warning("No raw-string signature: %s. Serving serialized tf.Examples "
                            "only.", reason)
        serialized, features = _example_features(problem, hparams, decode_hp)
        outputs = _outputs(_predict(model_name, hparams, features, decode_hp), targets_vocab)
        example_signature = _v1.saved_model.signature_def_utils.predict_signature_def(
            {"serialized_example": serialized}, outputs)
        signatures[EXAMPLE_SIGNATURE] = example_signature
        if reason is not None:
            signatures[STRING_SIGNATURE] = example_signature
        saver = _v1.train.Saver(_v1.global_variables())
        path = _new_export_path(export_dir)
        # Written under a temporary name: an interrupted export leaves no partial version.
        with atomic_files.atomic_output_dir(path) as tmp, \
                _v1.Session(graph=graph) as sess:
            saver.restore(sess, checkpoint_path)
            builder = _v1.saved_model.Builder(tmp)
            builder.add_meta_graph_and_variables(
                sess, [tf.saved_model.SERVING], signature_def_map=signatures,
                main_op=_v1.tables_initializer(), strip_default_attrs=True)
            builder.save(as_text=as_text)
            if assets and assets.get("hparams_set"):
                save_assets(tmp, model_name, hparams, checkpoint_path, decode_hp, assets)
    logging.info("Exported %s (checkpoint %s) to %s", model_name, checkpoint_path, path)
    return path


def assets_dir(saved_model_path):
    """Where t2t keeps `t2t_model.json`, hparams.json and vocabularies in a SavedModel."""
    return os.path.join(saved_model_path, ASSETS_EXTRA)


def save_assets(path, model_name, hparams, checkpoint_path, decode_hp, assets):
    """`t2t_model.json` (with the decode settings the graph was built with), hparams.json
    and the vocabulary files in `<path>/assets.extra`, for `t2t.load(path)`."""
    folder = assets_dir(path)
    os.makedirs(folder, exist_ok=True)
    trainer_lib.save_metadata(folder, hparams)
    decoding_assets.save_decoding_assets(
        folder, hparams, model_name, assets["hparams_set"],
        hparams_overrides=assets.get("hparams_overrides", ""),
        t2t_usr_dir=assets.get("t2t_usr_dir", ""), export="saved_model",
        export_settings={
            "checkpoint": os.path.basename(checkpoint_path),
            "beam_size": int(decode_hp.beam_size), "alpha": float(decode_hp.alpha),
            "nbest": int(decode_hp.beam_size) if decode_hp.return_beams else 1,
            "extra_length": int(decode_hp.extra_length),
            "stopping_bound": str(decode_hp.stopping_bound),
            "max_input_size": int(decode_hp.max_input_size)})


def make_example(inputs_ids):
    """A serialized tf.Example with int64 "inputs" (give the ids with EOS appended).

        make_example(ByteTextEncoder().encode("abc") + [1])   # "abc" + EOS
    """
    feature = {"inputs": tf.train.Feature(int64_list=tf.train.Int64List(
        value=[int(i) for i in inputs_ids]))}
    example = tf.train.Example(features=tf.train.Features(feature=feature))
    return example.SerializeToString(deterministic=True)
