"""Using a trained model from Python: `t2t.load(path)` and the `TrainedModel` it returns.

    import t2t
    model = t2t.load("~/t2t_train/m30k")          # a t2t-trainer --output_dir
    model.decode(["A man rides a horse.", "Two dogs play."], beam_size=4)
    # ['Ein Mann reitet auf einem Pferd.', 'Zwei Hunde spielen.']

    t2t.load("~/t2t_train/m30k/export/1700000000")      # a t2t-exporter SavedModel
    t2t.load("~/t2t_train/m30k/export/ctranslate2")     # a CTranslate2 export
    t2t.load("~/t2t_train/m30k", engine="ctranslate2", quantization="int8")
    # converts the latest checkpoint once (cached in <output_dir>/export/) and decodes with it
"""
import os

from absl import logging

from t2t.core import errors
from t2t.core import registry
from t2t.decoding import input_checks
import t2t.inference.loading as loading
import t2t.inference.tf_engines as tf_engines
from t2t.inference.trained_model import Hypothesis, InputLimit, TrainedModel

ENGINES = ("tensorflow", "ctranslate2")

__all__ = ["load", "TrainedModel", "Hypothesis", "ENGINES"]


def _check_engine(engine):
    if engine is not None and engine not in ENGINES:
        close = registry.closest_names(str(engine), ENGINES, n=1)
        raise errors.UserError("engine=%r: use %s%s" % (
            engine, " or ".join(ENGINES), "; did you mean %s?" % close[0] if close else ""))


def _check_engine_for(source, engine, quantization):
    """The engine and weight type `source` can be decoded with (one-line UserErrors)."""
    if source.kind == "ctranslate2" and engine == "tensorflow":
        raise errors.UserError("%s is a CTranslate2 export; load it with engine='ctranslate2' "
                               "(its default), or load the training folder for "
                               "engine='tensorflow'" % source.model_path)
    if source.kind == "saved_model" and engine == "ctranslate2":
        raise errors.UserError("%s is a SavedModel; for engine='ctranslate2' load the "
                               "training folder or a CTranslate2 export" % source.model_path)
    if quantization != "float32" and (source.kind == "saved_model" or (
            source.kind == "checkpoint" and engine != "ctranslate2")):
        raise errors.UserError("quantization=%r is for engine='ctranslate2'; the TensorFlow "
                               "engine decodes the checkpoint's float32 weights" % (
                                   quantization,))
    if source.kind == "checkpoint" and engine == "ctranslate2":
        from t2t.serving import ctranslate2_export
        ctranslate2_export.check_quantization(quantization)


def input_limit(hparams, max_input_size=None):
    """The InputLimit of decoding: `max_input_size` ids when given (> 0; longer inputs are
    cut to it), else the length the model was trained on (longer inputs are decoded in full,
    with a warning), else none. t2t-decoder's rule (`decoding.input_checks`)."""
    if max_input_size and max_input_size > 0:
        return InputLimit(int(max_input_size), "max_input_size=%d" % max_input_size, cut=True)
    limit, what_sets_it = input_checks.trained_input_length(hparams)
    return InputLimit(int(limit), what_sets_it) if limit else None


def _ctranslate2_cache(source, quantization):
    """`<folder>/export/ctranslate2-<checkpoint>-<quantization>`: where a training folder's
    checkpoint is converted for engine="ctranslate2" (once; reused after)."""
    name = "%s-%s-%s" % ("ctranslate2", os.path.basename(source.checkpoint_path), quantization)
    return os.path.join(source.folder, "export", name)


def load(path, checkpoint=None, engine=None, data_dir=None, quantization="float32",
         threads=0, max_input_size=None, t2t_usr_dir=None) -> TrainedModel:
    """Load a trained model once, to decode and score text with it.

    Args:
      path: a t2t-trainer --output_dir (its latest checkpoint), a checkpoint prefix, a
        t2t-exporter SavedModel (or its export folder: the newest) or a CTranslate2 export.
      checkpoint: in a training folder, the checkpoint to load ("model.ckpt-300" or 300).
      engine: "tensorflow" (default for checkpoints and SavedModels) or "ctranslate2"
        (default for CTranslate2 exports; for a training folder, its checkpoint is
        converted once into <output_dir>/export/ctranslate2-<checkpoint>-<quantization>).
      data_dir: where the problem's vocabulary is, for training folders made before t2t
        copied it into the folder.
      quantization: with engine="ctranslate2" on a checkpoint: the weights' type.
      threads: CPU threads for the engine (0: its default, all cores).
      max_input_size: cut inputs to this many ids (EOS included), with a warning; without
        it, inputs longer than the model was trained on are decoded in full, with a warning
        (as t2t-decoder does).
      t2t_usr_dir: the folder of your registrations (default: the one it was trained with).

    Returns a `TrainedModel`. Errors (no model at `path`, an unknown engine, a missing
    vocabulary) are one-line `t2t.core.errors.UserError`s.
    """
    _check_engine(engine)
    source = loading.find_model(path, checkpoint=checkpoint, data_dir=data_dir)
    _check_engine_for(source, engine, quantization)
    loading.import_user_code(source, t2t_usr_dir)
    hparams = loading.model_hparams_for(source)
    from t2t.model import model_hparams
    problem = model_hparams.attached_problem(hparams, "t2t.load")
    encoders = problem.feature_encoders(source.data_dir)
    if "inputs" not in encoders:
        raise errors.UserError("%s is a language model (its problem %s has no inputs); "
                               "t2t.load decodes models with inputs" % (
                                   source.folder, source.assets.problem))
    settings = tf_engines.DecodeSettings()
    if source.kind == "saved_model":
        eng = tf_engines.SavedModelEngine(source.model_path, source.assets.export_settings)
        settings = eng.settings
    elif source.kind == "ctranslate2" or engine == "ctranslate2":
        import t2t.inference.ctranslate2_engine as ctranslate2_engine
        model_path = source.model_path
        if source.kind == "checkpoint":
            model_path = _ctranslate2_cache(source, quantization)
            if not os.path.exists(os.path.join(model_path, "model.bin")):
                from t2t.serving import ctranslate2_export
                ctranslate2_export.export_ctranslate2(
                    source.assets.model, hparams, source.checkpoint_path, model_path,
                    quantization=quantization, hparams_set=source.assets.hparams_set,
                    hparams_overrides=source.assets.hparams_overrides,
                    t2t_usr_dir=source.assets.t2t_usr_dir)
        eng = ctranslate2_engine.CTranslate2Engine(
            model_path, threads=threads,
            max_positions=source.assets.export_settings.get("max_positions"))
    else:
        eng = tf_engines.CheckpointEngine(source.assets.model, hparams, source.checkpoint_path,
                                          threads=threads)
    logging.info("Loaded %s (%s engine)", source.model_path or source.checkpoint_path,
                 eng.name)
    return TrainedModel(eng, encoders, source, input_limit(hparams, max_input_size), settings)
