"""Predicting from a checkpoint without `tf.estimator`: `Estimator.predict`'s interface.

TensorFlow 2.16+ has no `tf.estimator`; `CheckpointPredictor` builds the same PREDICT graph
as the Estimator backend's model_fn (`T2TModel.predict_outputs`: the Transformer's cached
greedy or beam decoding), restores the checkpoint into a `tf.compat.v1.Session` and runs it
batch by batch. It has the Estimator's `model_dir` and `predict(input_fn, ...)`, so every
decoding function that takes an `estimator` takes it too, with identical decodes:

    predictor = CheckpointPredictor("transformer", hparams, "/train/reverse",
                                    decode_hparams=decoding.decode_hparams("beam_size=1"))
    decoding.decode_from_file(predictor, "src.txt", hparams, decode_hp, ...)
    for prediction in predictor.predict(input_fn):   # input_fn() -> tf.data.Dataset
        prediction["outputs"]                       # one example's decoded ids

`create_predictor(..., backend="auto")` gives an Estimator where `tf.estimator` exists and
the backend asks for it, and a `CheckpointPredictor` otherwise.
"""
import inspect

import numpy as np
import tensorflow as tf

from t2t.core import backend_choice
from t2t.core import errors
from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.model import checkpoint_files
from t2t.model import model_hparams
from t2t.model import model_predict

_v1 = tf.compat.v1


def model_predictions(model_name, hparams, features, decode_hparams=None):
    """The PREDICT predictions of `model_name` on `features`, built in the current graph,
    exactly as the Estimator backend's model_fn builds them (no tf.estimator)."""
    model_cls = registry.model(model_name)
    model = model_cls(model_hparams.copy_hparams(hparams), ModeKeys.PREDICT,
                      decode_hparams=decode_hparams)
    predictions, _ = model_predict.build_predictions(model, dict(features))
    return predictions


def default_session_config():
    """The session options the Estimator backend decodes with (run_config's defaults)."""
    return _v1.ConfigProto(
        allow_soft_placement=True,
        graph_options=_v1.GraphOptions(optimizer_options=_v1.OptimizerOptions(
            opt_level=_v1.OptimizerOptions.L1, do_function_inlining=False)),
        isolate_session_state=True)


def _call_input_fn(input_fn):
    """input_fn() with the arguments it names (mode, params, config), as Estimator calls it."""
    names = inspect.signature(input_fn).parameters
    kwargs = {}
    if "mode" in names:
        kwargs["mode"] = ModeKeys.PREDICT
    if "params" in names:
        kwargs["params"] = {}
    if "config" in names:
        kwargs["config"] = None
    return input_fn(**kwargs)


def _features_of(input_fn_result):
    """Features (a dict of tensors) from a Dataset, a (features, labels) pair or a dict."""
    result = input_fn_result
    if isinstance(result, tf.data.Dataset):
        result = _v1.data.make_one_shot_iterator(result).get_next()
    if isinstance(result, (tuple, list)):
        result = result[0]
    if not isinstance(result, dict):
        result = {"feature": result}
    return dict(result)


def _split_batch(batch):
    """One dict per example of a dict of equal-length batched arrays."""
    sizes = {name: np.shape(value)[0] for name, value in batch.items() if np.ndim(value)}
    if len(set(sizes.values())) > 1:
        raise ValueError("predictions of different batch sizes cannot be split into examples: "
                         "%s" % sizes)
    size = next(iter(sizes.values()), 0)
    for row in range(size):
        yield {name: value[row] for name, value in batch.items()}


class CheckpointPredictor:
    """`Estimator.predict` for a registered T2TModel, on a v1 graph and Session.

    Args:
      model_name: registered model name.
      hparams: model hparams with the problem attached (`add_problem_hparams`).
      model_dir: the training folder (its latest checkpoint is the default).
      decode_hparams: decode hparams (beam_size, alpha, extra_length, return_beams).
      session_config: a `tf.compat.v1.ConfigProto` (default: `default_session_config()`).
      random_seed: graph-level seed (the Estimator's `tf_random_seed`), for sampling.
    """

    def __init__(self, model_name, hparams, model_dir, decode_hparams=None,
                 session_config=None, random_seed=None):
        self.model_name = model_name
        self.hparams = hparams
        self.model_dir = model_dir
        self.decode_hparams = decode_hparams
        self.session_config = session_config or default_session_config()
        self.random_seed = random_seed

    def latest_checkpoint(self):
        return tf.train.latest_checkpoint(self.model_dir)

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yield the predictions of every element `input_fn()` gives, until it ends.

        As `Estimator.predict`: one dict per example (or per batch without
        `yield_single_examples`), restricted to `predict_keys` when given; the checkpoint
        is `checkpoint_path` or the latest one in `model_dir` (a UserError names a
        broken one and the intact ones). The input is read lazily: one model run per
        element.
        """
        if hooks:
            raise ValueError("CheckpointPredictor.predict takes no hooks")
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if not checkpoint_path:
            raise errors.UserError(
                "no checkpoint in %s to predict with; train a model there first (t2t-trainer "
                "--output_dir=%s) or pass --checkpoint_path" % (self.model_dir, self.model_dir))
        checkpoint_files.check_readable(checkpoint_path)
        graph = tf.Graph()
        with graph.as_default():
            if self.random_seed is not None:
                _v1.set_random_seed(self.random_seed)
            # As the Estimator: the global step exists before the model is built.
            _v1.train.get_or_create_global_step()
            features = _features_of(_call_input_fn(input_fn))
            predictions = model_predictions(self.model_name, self.hparams, features,
                                            self.decode_hparams)
            if predict_keys:
                missing = sorted(set(predict_keys) - set(predictions))
                if missing:
                    raise ValueError("predict_keys %s are not predictions (%s)"
                                     % (missing, sorted(predictions)))
                predictions = {k: predictions[k] for k in predict_keys}
            saver = _v1.train.Saver(sharded=True, allow_empty=True)
            local_init = [_v1.local_variables_initializer(), _v1.tables_initializer()]
            graph.finalize()
            with _v1.Session(graph=graph, config=self.session_config) as session:
                saver.restore(session, checkpoint_path)
                session.run(local_init)
                while True:
                    try:
                        batch = session.run(predictions)
                    except tf.errors.OutOfRangeError:
                        return
                    if yield_single_examples:
                        yield from _split_batch(batch)
                    else:
                        yield batch


def create_predictor(model_name, hparams, model_dir, decode_hparams=None, backend="auto",
                     session_config=None, random_seed=None):
    """An object with `model_dir` and `predict(input_fn, checkpoint_path=...)`: a
    `tf.estimator.Estimator` on the estimator backend (TF 2.15, `backend` "estimator" or
    "auto"), else a `CheckpointPredictor`. Both decode identically."""
    if backend_choice.resolve_backend(backend) == "native":
        return CheckpointPredictor(model_name, hparams, model_dir, decode_hparams,
                                   session_config=session_config, random_seed=random_seed)
    from t2t.model import t2t_model
    config = tf.estimator.RunConfig(model_dir=model_dir, session_config=session_config,
                                    tf_random_seed=random_seed)
    model_fn = t2t_model.T2TModel.make_estimator_model_fn(model_name, hparams,
                                                          decode_hparams=decode_hparams)
    return tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir, config=config)
