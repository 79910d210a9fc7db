"""seqio model functions backed by a t2t checkpoint, and decoding a task's split or a file.

`predict_fn`/`score_fn` for `seqio.Evaluator.evaluate`, over its enumerated cached model
datasets (encoder-decoder features):

    estimator = create_estimator("transformer", hparams, "/runs/copy")   # or a predictor
    predict_fn = estimator_predict_fn(estimator, problem, checkpoint_path)
    predict_fn(evaluator.cached_model_datasets["copy"])   # [(0, [104, 105]), (1, ...), ...]
    score_fn = checkpoint_score_fn("transformer", hparams, checkpoint_path)
    score_fn(evaluator.cached_model_datasets["copy"])     # [(0, -0.73), ...] log-likelihoods

Predictions run the model's PREDICT spec (the Transformer's cached fast decoding, greedy
or beam search by the estimator's decode hparams) and stop at EOS. A decoder-only model
(`--decoder_only`) continues a prompt: a PrefixLM example's inputs (with their EOS, as in
training), and the prediction is the continuation only, at most the targets length; an LM
task's examples (no inputs) are generated from an empty prompt. Scores are the sum of the
target tokens' log-probabilities (EVAL mode, no dropout), seqio's convention.

`decode_task(...)` writes the post-processed outputs of a task's split, one per line, in
the split's order; `decode_lines(...)` does the same for input lines of a file,
`decode_interactively(...)` for typed lines, and `score_file(...)` gives the loss of each
"input<TAB>target" line (t2t-decoder --score_file).
"""
import os
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
from t2t.core import errors
from t2t.core.modes import ModeKeys
from t2t.core.progress import Progress
from t2t.core import registry
from t2t.core import tf_notices
from t2t.data import data_reader
from t2t.decoding import batch_input
from t2t.decoding import decoding
from t2t.decoding import input_checks
from t2t.decoding import predictor
from t2t.decoding import scoring
from t2t.model import model_hparams
from t2t.problems import problem as problem_lib
from t2t.problems import problem_hparams_schema
from t2t.seqio import dataset_providers
from t2t.seqio_training import task_problem as task_problem_lib

EOS_ID = 1
_PREDICT = ModeKeys.PREDICT


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
        features.update(problem_hparams_schema.problem_hparams_to_features(p_hparams))
        return features

    return ds.map(finish)


@tf_notices.quiet_deprecations
def create_estimator(model_name: str, hparams, model_dir: str,
                     decode_hparams: str = "beam_size=1,alpha=0.0,extra_length=10",
                     backend: str = "auto"):
    """What `estimator_predict_fn` decodes a trained model with (greedy by default;
    `decode_hparams` as t2t-decoder's --decode_hparams): an Estimator on the estimator
    backend, else a checkpoint predictor without tf.estimator (`t2t.decoding.predictor`)."""
    return predictor.create_predictor(model_name, hparams, model_dir,
                                      decode_hparams=decoding.decode_hparams(decode_hparams),
                                      backend=backend)


def _rows(dataset, kind: str):
    """(indices, rows) of an enumerated converter dataset: the ids each decoding starts
    from, i.e. the encoder inputs (padded as the converter gives them) or, decoder-only,
    the prompt (`task_problem.prompt_of`)."""
    def select(index, features):
        if kind == "encdec":
            return index, tf.cast(features["encoder_input_tokens"], tf.int32)
        return index, task_problem_lib.prompt_of(features, kind)

    indices, rows = [], []
    for index, ids in dataset.map(select).as_numpy_iterator():
        indices.append(int(index))
        rows.append([int(i) for i in ids])
    return indices, rows


def _decode_length(problem) -> Optional[int]:
    """Decoder-only: ids generated after the prompt (at most the targets length); None:
    encoder-decoder, the decode hparams' input length + extra_length."""
    return None if problem.has_inputs else problem.task_feature_lengths["targets"]


def _batches(indices, rows, batch_size: int, decode_length: Optional[int]):
    """Batches {"index": [B], "inputs": int32 [B, L] (0-padded)} in order of row length;
    decoder-only batches hold prompts of one length and a "decode_length"."""
    order = sorted(range(len(rows)), key=lambda k: len(rows[k]))
    batch = []

    def make(ks):
        inputs = np.zeros([len(ks), max(len(rows[k]) for k in ks)], np.int32)
        for r, k in enumerate(ks):
            inputs[r, :len(rows[k])] = rows[k]
        out = {"index": np.array([indices[k] for k in ks], np.int64), "inputs": inputs}
        if decode_length is not None:
            out["decode_length"] = np.array(decode_length, np.int32)
        return out

    for k in order:
        if batch and (len(batch) == batch_size or (
                decode_length is not None and len(rows[k]) != len(rows[batch[0]]))):
            yield make(batch)
            batch = []
        batch.append(k)
    if batch:
        yield make(batch)


@tf_notices.quiet_deprecations
def _predict(estimator, problem, batches, checkpoint_path, lazy=False):
    """Yield (index, output ids up to EOS) of every row of `batches` (`_batches`-like
    dicts): held in the graph a chunk at a time, or with `lazy` read one batch per model
    run (typed lines: each is decoded before the next is read)."""
    space_ids = problem_hparams_schema.problem_hparams_to_features(problem.get_hparams())

    def input_fn_of(make_dataset):
        def input_fn(params=None, config=None):
            del params, config

            def finish(features):
                features = dict(features)
                features["inputs"] = tf.cast(features["inputs"], tf.int32)[:, :, None, None]
                features.update(space_ids)
                return features

            return make_dataset().map(finish)
        return input_fn

    if lazy:
        try:
            datasets = [decoding.make_input_fn_from_generator(iter(batches))]
        except StopIteration:
            return
    else:
        datasets = (batch_input.make_input_fn_from_batches(chunk)
                    for chunk in batch_input.chunks_of_batches(batches))
    for make_dataset in datasets:
        for prediction in estimator.predict(input_fn_of(make_dataset),
                                            checkpoint_path=checkpoint_path,
                                            yield_single_examples=True):
            yield int(prediction["index"]), _until_eos(prediction["outputs"])


def estimator_predict_fn(estimator, problem, checkpoint_path: Optional[str] = None,
                         batch_size: int = 32) -> Callable[..., List[Tuple[int, List[int]]]]:
    """A seqio `predict_fn(ds, model_feature_shapes=None)` running `estimator.predict`
    (an Estimator or a `t2t.decoding.predictor.CheckpointPredictor`).

    Encoder-decoder: the encoder inputs are decoded. Decoder-only: a PrefixLM example's
    inputs are the prompt and the prediction is its continuation; an LM example (no
    inputs) is generated from an empty prompt.
    """
    @tf_notices.quiet_deprecations
    def predict_fn(dataset, model_feature_shapes=None):
        del model_feature_shapes
        indices, rows = _rows(dataset, problem.converter_kind)
        return list(_predict(estimator, problem,
                             _batches(indices, rows, batch_size, _decode_length(problem)),
                             checkpoint_path))

    return predict_fn


def checkpoint_score_fn(model_name: str, hparams, checkpoint_path: str,
                        batch_size: int = 32,
                        problem=None) -> Callable[..., List[Tuple[int, float]]]:
    """A seqio `score_fn(ds, model_feature_shapes=None)`: each target's log-likelihood.

    `problem`: the TaskProblem the model was trained on (default: the one attached to
    `hparams`).
    """
    if problem is None:
        problem = model_hparams.attached_problem(hparams, "checkpoint_score_fn")

    @tf_notices.quiet_deprecations
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
            model = registry.model(model_name)(hparams, ModeKeys.EVAL)
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
    task = dataset_providers.get_mixture_or_task(task_name)
    if not isinstance(task, dataset_providers.Task):
        raise errors.UserError("%s is a mixture: decode one of its tasks (%s)" % (
            task_name, ", ".join(t.name for t in dataset_providers.get_subtasks(task))))
    if split not in task.splits:
        raise errors.UserError("task %s has no split %r; its splits: %s"
                               % (task_name, split, ", ".join(task.splits)))
    task_ds = task.get_dataset(problem.task_feature_lengths, split=split, shuffle=False,
                               num_epochs=1, seed=problem.seed, use_cached=problem.use_cached)
    if num_examples:
        task_ds = task_ds.take(num_examples)
    examples = list(task_ds.as_numpy_iterator())
    if problem.converter_kind == "lm":
        logging.info("Task %s has no inputs: each example of %s is generated from an empty "
                     "prompt (identical under greedy decoding; sample with --decode_hparams, "
                     "or score the targets with --score_file)", task_name, split)
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


def _task_of(task_name: str):
    """The first task of a task or mixture (its features and post-processor decode)."""
    return dataset_providers.get_subtasks(dataset_providers.get_mixture_or_task(task_name))[0]


def _line_ids(problem, task, line: str, strict: bool = False) -> List[int]:
    """The ids a typed or file line is decoded from: encoder inputs or a PrefixLM prompt
    (the inputs vocabulary, EOS appended) or an LM prompt (the targets vocabulary, no EOS).

    ValueError (one line) if the vocabulary cannot encode it or, with `strict`, if it is
    longer than the task's length (else it is cut, keeping the EOS).
    """
    feature = "targets" if problem.converter_kind == "lm" else "inputs"
    vocab = task.output_features[feature].vocabulary
    ids = input_checks.encode_input(task_problem_lib.VocabularyEncoder(vocab), line,
                                vocab.vocab_size)
    ids = list(ids) + ([] if feature == "targets" else [EOS_ID])
    length = problem.task_feature_lengths[feature]
    if len(ids) > length:
        if strict:
            raise ValueError("%d ids%s, more than the task's %s length %d "
                             "(--task_feature_lengths)" % (
                                 len(ids), "" if feature == "targets" else " with EOS",
                                 feature, length))
        ids = ids[:length] if feature == "targets" else ids[:length - 1] + [EOS_ID]
    if problem.converter_kind == "encdec":
        ids += [0] * (length - len(ids))  # as the converter pads them
    return ids


def _postprocess(task, ids, line: str):
    vocab = task.output_features["targets"].vocabulary
    return task.postprocess_fn(_text(vocab.decode(ids)), example={"inputs_pretokenized": line},
                               is_target=False)


def decode_lines(estimator, problem, task_name: str, lines: Sequence[str],
                 decode_to_file: Optional[str], checkpoint_path: Optional[str] = None,
                 batch_size: int = 32, source: str = "input") -> List[Any]:
    """Decode input lines; returns (and writes) the post-processed outputs in their order.

    Each line is encoded as `_line_ids` (cut to the task's length); a line the vocabulary
    cannot encode is a UserError naming `source` and the line number. Decoder-only: a
    PrefixLM model continues each line as its inputs; an LM model continues the line.
    """
    task = _task_of(task_name)
    rows = []
    for number, line in enumerate(lines, 1):
        try:
            rows.append(_line_ids(problem, task, line))
        except ValueError as error:
            raise errors.UserError("%s line %d: %s" % (source, number, error)) from None
    outputs = dict(_predict(estimator, problem, _batches(
        list(range(len(rows))), rows, batch_size, _decode_length(problem)), checkpoint_path))
    predictions = [_postprocess(task, outputs[k], line) for k, line in enumerate(lines)]
    if decode_to_file:
        _write_lines(decode_to_file, [str(p) for p in predictions])
    return predictions


def decode_interactively(estimator, problem, task_name: str,
                         checkpoint_path: Optional[str] = None, read_line=input, write=print,
                         say=print, report=decoding.report_to_stderr) -> int:
    """Decode lines typed in the terminal (`read_line`), writing each post-processed output.

    "q" (or the end of input) quits. A line the task's vocabulary cannot encode or longer
    than the task's length is reported (`report`, stderr) with its number and skipped, and
    so is an output the task's post-processor fails on. Returns the number decoded.
    """
    task = _task_of(task_name)
    kind = problem.converter_kind
    say("INTERACTIVE MODE  task %s (%s)\n  <%s>  (decode)\n  q  (quit)" % (
        task.name, {"encdec": "encoder-decoder", "prefix_lm": "decoder-only, PrefixLM",
                    "lm": "decoder-only, LM"}[kind],
        "target_prefix" if kind == "lm" else "source_string"))
    typed = {}

    def batches():
        for number, line in decoding.typed_lines(read_line):
            try:
                ids = _line_ids(problem, task, line, strict=True)
            except ValueError as error:
                report("error: line %d %r: %s; type another line (q quits)"
                       % (number, line, error))
                continue
            typed[number] = line
            yield next(_batches([number], [ids], 1, _decode_length(problem)))

    count = 0
    for number, ids in _predict(estimator, problem, batches(), checkpoint_path,
                                lazy=True):
        line = typed.pop(number)
        try:
            output = _postprocess(task, ids, line)
        except Exception as error:  # pylint: disable=broad-except  (the session goes on)
            report("error: line %d %r: the task's postprocess_fn failed on %r: %s" % (
                number, line, ids, error))
            continue
        write(str(output))
        count += 1
    return count


def score_file(model_name: str, hparams, task_name: str, filename: str, checkpoint_path: str,
               batch_size: int = 32, problem=None) -> List[float]:
    """The loss of each "input<TAB>target" line of `filename` ("target" for a task without
    inputs), as `t2t-decoder --score_file` with --problem: the mean negative log-probability
    of the target's ids (EOS included), given the input, in the task's vocabularies.

    A line longer than the task's lengths or that its vocabulary cannot encode is a
    UserError naming the line (nothing is cut: a cut target would get another score).
    `problem`: the TaskProblem (default: the one attached to `hparams`).
    """
    if problem is None:
        problem = model_hparams.attached_problem(hparams, "score_file")
    task = _task_of(task_name)
    has_inputs = "inputs" in task.output_features
    examples = []
    for number, (inputs, targets) in enumerate(
            scoring.read_score_pairs(filename, has_inputs), 1):
        example = {}
        for feature, text in (("inputs", inputs), ("targets", targets)):
            if feature == "targets" or has_inputs:
                vocab = task.output_features[feature].vocabulary
                try:
                    ids = input_checks.encode_input(task_problem_lib.VocabularyEncoder(vocab), text,
                                                vocab.vocab_size) + [EOS_ID]
                except ValueError as error:
                    raise errors.UserError("%s line %d: the %s %s" % (
                        filename, number, feature[:-1], error)) from None
                length = problem.task_feature_lengths[feature]
                if len(ids) > length:
                    raise errors.UserError(
                        "%s line %d: the %s has %d ids with EOS, more than the task's %s "
                        "length %d (--task_feature_lengths)" % (
                            filename, number, feature[:-1], len(ids), feature, length))
                example[feature] = np.array(ids, np.int32)
        examples.append(example)
    if not examples:
        raise errors.UserError("%s has no lines to score" % filename)
    signature = {k: tf.TensorSpec([None], tf.int32) for k in examples[0]}
    task_ds = tf.data.Dataset.from_generator(lambda: iter(examples),
                                             output_signature=signature)
    model_ds = problem.feature_converter(_PREDICT)(task_ds, problem.task_feature_lengths)
    progress = Progress("score %s" % os.path.basename(filename), unit="lines",
                        total=len(examples))
    scores = dict(checkpoint_score_fn(model_name, hparams, checkpoint_path, batch_size,
                                      problem=problem)(
        model_ds.enumerate()))
    progress.update(len(examples))
    progress.done()
    return [-scores[k] / len(example["targets"]) for k, example in enumerate(examples)]
