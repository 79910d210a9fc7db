"""seqio model functions backed by a t2t checkpoint, and decoding a task's split or a file.

`predict_fn`/`score_fn` for `seqio.Evaluator.evaluate`, over its enumerated cached model
datasets (encoder-decoder features):

    estimator = create_estimator("transformer", hparams, "/runs/copy")
    predict_fn = estimator_predict_fn(estimator, hparams.problem, checkpoint_path)
    predict_fn(evaluator.cached_model_datasets["copy"])   # [(0, [104, 105]), (1, ...), ...]
    score_fn = checkpoint_score_fn("transformer", hparams, checkpoint_path)
    score_fn(evaluator.cached_model_datasets["copy"])     # [(0, -0.73), ...] log-likelihoods

Predictions run the model's PREDICT spec (the Transformer's cached fast decoding, greedy
or beam search by the estimator's decode hparams) and stop at EOS. Scores are the sum of
the target tokens' log-probabilities (EVAL mode, no dropout), seqio's convention.

`decode_task(...)` writes the post-processed outputs of a task's split, one per line, in
the split's order; `decode_lines(...)` does the same for input lines of a file.
"""
import os
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
from t2t.core import errors
from t2t.core import registry
from t2t.core.progress import Progress
from t2t.data import data_reader
from t2t.decoding import decoding
from t2t.problems import problem as problem_lib
from t2t.seqio_training import task_problem as task_problem_lib
from t2t.training import trainer_lib

EOS_ID = 1
_PREDICT = tf.estimator.ModeKeys.PREDICT


def _until_eos(ids) -> List[int]:
    ids = [int(i) for i in np.asarray(ids).reshape([-1])]
    return ids[:ids.index(EOS_ID)] if EOS_ID in ids else [i for i in ids if i != 0]


def _materialize(enumerated_ds):
    """An enumerated dataset (eager) as numpy: (indices [N], {feature: [N, ...]})."""
    indices, columns = [], {}
    for index, features in enumerated_ds.as_numpy_iterator():
        indices.append(int(index))
        for name, value in features.items():
            columns.setdefault(name, []).append(value)
    return (np.array(indices, np.int64),
            {name: np.stack(values) for name, values in columns.items()})


def _batched_model_features(arrays, problem, batch_size, with_targets):
    """Materialized (indices, converter features) -> a dataset (in the current graph) of
    batched t2t features with an "index" feature."""
    p_hparams = problem.get_hparams()
    kind = problem.converter_kind
    indices, columns = arrays

    def to_features(index, features):
        out = task_problem_lib.to_model_features(features, kind)
        out["index"] = index
        return out

    ds = tf.data.Dataset.from_tensor_slices((indices, columns)).map(to_features)
    ds = ds.batch(batch_size)

    def finish(features):
        features = data_reader.standardize_shapes(dict(features))
        if not with_targets:
            features.pop("targets", None)
        features.update(problem_lib.problem_hparams_to_features(p_hparams))
        return features

    return ds.map(finish)


def create_estimator(model_name: str, hparams, model_dir: str,
                     decode_hparams: str = "beam_size=1,alpha=0.0,extra_length=10"):
    """An Estimator of a trained model for `estimator_predict_fn` (greedy by default;
    `decode_hparams` as t2t-decoder's --decode_hparams)."""
    run_config = trainer_lib.create_run_config(model_name=model_name, model_dir=model_dir)
    return trainer_lib.create_estimator(model_name, hparams, run_config,
                                        decode_hparams=decoding.decode_hparams(decode_hparams))


def estimator_predict_fn(estimator, problem, checkpoint_path: Optional[str] = None,
                         batch_size: int = 32) -> Callable[..., List[Tuple[int, List[int]]]]:
    """A seqio `predict_fn(ds, model_feature_shapes=None)` running `estimator.predict`."""
    if not problem.has_inputs:
        raise errors.UserError("predictions on task %s need an encoder-decoder model (the task "
                               "has no inputs, or the model is decoder-only)" % problem.name)

    def predict_fn(dataset, model_feature_shapes=None):
        del model_feature_shapes
        arrays = _materialize(dataset)
        if not len(arrays[0]):
            return []

        def input_fn(params=None, config=None):
            del params, config
            return _batched_model_features(arrays, problem, batch_size, with_targets=False)

        results = []
        for prediction in estimator.predict(input_fn, checkpoint_path=checkpoint_path,
                                            yield_single_examples=True):
            results.append((int(prediction["index"]), _until_eos(prediction["outputs"])))
        return results

    return predict_fn


def checkpoint_score_fn(model_name: str, hparams, checkpoint_path: str,
                        batch_size: int = 32) -> Callable[..., List[Tuple[int, float]]]:
    """A seqio `score_fn(ds, model_feature_shapes=None)`: each target's log-likelihood."""
    problem = hparams.problem

    def score_fn(dataset, model_feature_shapes=None):
        del model_feature_shapes
        arrays = _materialize(dataset)
        graph = tf.Graph()
        results = []
        if not len(arrays[0]):
            return results
        with graph.as_default():
            ds = _batched_model_features(arrays, problem, batch_size, with_targets=True)
            features = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
            index = features.pop("index")
            model = registry.model(model_name)(hparams, tf.estimator.ModeKeys.EVAL)
            logits, _ = model(dict(features))
            targets = tf.squeeze(features["targets"], [2, 3])
            logits = tf.reshape(logits, tf.concat([tf.shape(targets), [-1]], 0))
            log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
            token_lp = tf.gather(log_probs, targets, batch_dims=2)
            weights = tf.cast(tf.not_equal(targets, 0), tf.float32)
            if "targets_mask" in features:
                weights *= tf.cast(features["targets_mask"], tf.float32)
            scores = tf.reduce_sum(token_lp * weights, axis=1)
            saver = tf.compat.v1.train.Saver()
            with tf.compat.v1.Session(graph=graph) as sess:
                saver.restore(sess, checkpoint_path)
                while True:
                    try:
                        batch_index, batch_scores = sess.run([index, scores])
                    except tf.errors.OutOfRangeError:
                        break
                    results += [(int(i), float(s)) for i, s in zip(batch_index, batch_scores)]
        return results

    return score_fn


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _write_lines(path: str, lines: Sequence[str]):
    folder = os.path.dirname(os.path.abspath(path))
    tf.io.gfile.makedirs(folder)
    with atomic_files.atomic_write(path, "w") as out:
        for line in lines:
            out.write(line.replace("\n", " ") + "\n")


def decode_task(estimator, problem, task_name: str, split: str, decode_to_file: Optional[str],
                checkpoint_path: Optional[str] = None, batch_size: int = 32,
                num_examples: Optional[int] = None) -> List[Any]:
    """Decode `split` of a task: the post-processed predictions, in the split's order.

    With `decode_to_file`, also writes them one per line (and the post-processed targets
    to `<decode_to_file>.targets`), each file complete or absent.
    """
    from t2t import seqio
    task = seqio.get_mixture_or_task(task_name)
    if not isinstance(task, seqio.Task):
        raise errors.UserError("%s is a mixture: decode one of its tasks (%s)" % (
            task_name, ", ".join(t.name for t in seqio.get_subtasks(task))))
    if split not in task.splits:
        raise errors.UserError("task %s has no split %r; its splits: %s"
                               % (task_name, split, ", ".join(task.splits)))
    task_ds = task.get_dataset(problem.task_feature_lengths, split=split, shuffle=False,
                               num_epochs=1, seed=problem.seed, use_cached=problem.use_cached)
    if num_examples:
        task_ds = task_ds.take(num_examples)
    examples = list(task_ds.as_numpy_iterator())
    model_ds = problem.feature_converter(_PREDICT)(task_ds, problem.task_feature_lengths)
    progress = Progress("decode %s" % task_name, unit="examples", total=len(examples))
    outputs = estimator_predict_fn(estimator, problem, checkpoint_path, batch_size)(
        model_ds.enumerate())
    outputs = [ids for _, ids in sorted(outputs, key=lambda pair: pair[0])]
    vocab = task.output_features["targets"].vocabulary
    predictions, targets = [], []
    for example, ids in zip(examples, outputs):
        predictions.append(task.postprocess_fn(_text(vocab.decode(ids)), example=example,
                                               is_target=False))
        target = example.get("targets_pretokenized")
        if target is None:
            target = vocab.decode([int(i) for i in example["targets"]])
        targets.append(task.postprocess_fn(_text(target), example=example, is_target=True))
        progress.update(1, tokens=len(ids))
    progress.done()
    if decode_to_file:
        _write_lines(decode_to_file, [str(p) for p in predictions])
        _write_lines(decode_to_file + ".targets", [str(t) for t in targets])
        logging.info("Wrote %d decodes of %s/%s to %s", len(predictions), task_name, split,
                     decode_to_file)
    return predictions


def decode_lines(estimator, problem, task_name: str, lines: Sequence[str],
                 decode_to_file: Optional[str], checkpoint_path: Optional[str] = None,
                 batch_size: int = 32) -> List[Any]:
    """Decode input lines with the task's inputs vocabulary (EOS appended, truncated to the
    inputs length); returns (and writes) the post-processed outputs in the lines' order."""
    from t2t import seqio
    task = seqio.get_mixture_or_task(task_name)
    tasks = seqio.get_subtasks(task)
    features = tasks[0].output_features
    length = problem.task_feature_lengths["inputs"]
    ids = [list(features["inputs"].vocabulary.encode(line))[:length - 1] + [EOS_ID]
           for line in lines]
    task_ds = tf.data.Dataset.from_generator(
        lambda: ({"inputs": np.array(i, np.int32), "targets": np.array([EOS_ID], np.int32)}
                 for i in ids),
        output_signature={"inputs": tf.TensorSpec([None], tf.int32),
                          "targets": tf.TensorSpec([None], tf.int32)})
    model_ds = problem.feature_converter(_PREDICT)(task_ds, problem.task_feature_lengths)
    outputs = estimator_predict_fn(estimator, problem, checkpoint_path, batch_size)(
        model_ds.enumerate())
    outputs = [o for _, o in sorted(outputs, key=lambda pair: pair[0])]
    vocab = features["targets"].vocabulary
    postprocess = tasks[0].postprocess_fn
    predictions = [postprocess(_text(vocab.decode(o)), example={"inputs_pretokenized": line},
                               is_target=False) for line, o in zip(lines, outputs)]
    if decode_to_file:
        _write_lines(decode_to_file, [str(p) for p in predictions])
    return predictions
