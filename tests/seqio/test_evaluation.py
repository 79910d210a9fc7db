"""seqio.Evaluator: each task of a mixture on its own, outputs restored to example order,
decoding + post-processing, (targets, predictions) and (targets, scores) metrics, metric
objects (seqio's current API) and their sharded evaluation, loggers, seqio's public types."""
import dataclasses
import glob
import inspect
import json
import os
import typing

import numpy as np
import pytest
import tensorflow as tf

from t2t import seqio
from t2t.seqio import evaluation
from t2t.seqio import metrics as metrics_lib
from t2t.seqio import preprocessors

BYTES = seqio.ByteVocabulary()
FEATURES = {"inputs": seqio.Feature(BYTES), "targets": seqio.Feature(BYTES)}


def source(words, splits=("train", "validation")):
    def dataset_fn(split, shuffle_files, seed=None):
        del split, shuffle_files, seed
        return tf.data.Dataset.from_tensor_slices({"inputs": words, "targets": words})
    return seqio.FunctionDataSource(dataset_fn, splits=splits)


POSTPROCESS_CALLS = []


def upper_postprocess(text, example=None, is_target=False):
    POSTPROCESS_CALLS.append((text, example["inputs_pretokenized"], is_target))
    return text.upper()


def add_task(name, words, metric_fns, postprocess_fn=None, **kwargs):
    return seqio.TaskRegistry.add(
        name, source(words, **kwargs), output_features=FEATURES,
        preprocessors=[preprocessors.tokenize, preprocessors.append_eos],
        metric_fns=metric_fns, postprocess_fn=postprocess_fn)


def hits(targets, predictions):
    return {"hits": sum(t == p for t, p in zip(targets, predictions)),
            "n": metrics_lib.Scalar(len(targets))}


def mean_score(targets, scores):
    del targets
    return {"mean_score": float(np.mean(scores))}


def oracle_predict_fn(wrong_every=0):
    """Returns the targets (minus EOS/padding) in reversed order; every k-th ends in "q"."""
    def predict_fn(ds, model_feature_shapes=None):
        assert model_feature_shapes["decoder_target_tokens"][0] > 0
        out = []
        for index, ex in ds.as_numpy_iterator():
            tokens = [int(t) for t in ex["decoder_target_tokens"] if t > 1]
            if wrong_every and index % wrong_every == 0:
                tokens = tokens[:-1] + [BYTES.encode("q")[0]]
            out.append((int(index), tokens))
        return out[::-1]
    return predict_fn


def score_fn(ds, model_feature_shapes=None):
    del model_feature_shapes
    return [(int(i), -float(np.sum(ex["decoder_target_tokens"] > 0)))
            for i, ex in ds.as_numpy_iterator()]


def test_mixture_tasks_evaluated_separately_in_example_order(tmp_path):
    add_task("ev_a", ["ab", "cd", "ef", "gh"], [hits], postprocess_fn=upper_postprocess)
    add_task("ev_b", ["xyz", "uvw"], [hits, mean_score])
    add_task("ev_no_metrics", ["q"], [])
    seqio.MixtureRegistry.add("ev_mix", [("ev_a", 1), ("ev_b", 1), ("ev_no_metrics", 1)])
    evaluator = seqio.Evaluator("ev_mix", seqio.EncDecFeatureConverter(pack=False),
                                async_compute_metrics=False)
    assert [t.name for t in evaluator.eval_tasks] == ["ev_a", "ev_b"]
    assert evaluator.cached_targets["ev_a"] == ["AB", "CD", "EF", "GH"]
    assert POSTPROCESS_CALLS[:2] == [("ab", b"ab", True), ("cd", b"cd", True)]
    assert evaluator.cached_targets["ev_b"] == ["xyz", "uvw"]
    # Lengths detected from the data: "xyz" + EOS.
    assert evaluator.model_feature_shapes["decoder_target_tokens"] == (4,)

    future, outputs = evaluator.evaluate(compute_metrics=True, step=7,
                                         predict_fn=oracle_predict_fn(wrong_every=2),
                                         score_fn=score_fn)
    metrics = future.result()
    assert POSTPROCESS_CALLS[4:6] == [("aq", b"ab", False), ("cd", b"cd", False)]
    # Indices 0 and 2 are made wrong.
    assert metrics["ev_a"]["hits"] == 2 and metrics["ev_a"]["n"].value == 4
    assert metrics["ev_b"]["hits"] == 1
    assert metrics["ev_b"]["mean_score"] == pytest.approx(-4.0)
    predictions = outputs["ev_a"][seqio.metrics.ModelOutputType.PREDICTION]
    assert [BYTES.decode(p) for p in predictions] == ["aq", "cd", "eq", "gh"]
    assert seqio.metrics.ModelOutputType.SCORE not in outputs["ev_a"]
    assert outputs["ev_b"][seqio.metrics.ModelOutputType.SCORE] == [-4.0, -4.0]


def test_async_metrics_future_and_compute_metrics_false():
    add_task("ev_c", ["ab", "cd"], [hits])
    evaluator = seqio.Evaluator("ev_c", seqio.EncDecFeatureConverter(pack=False))
    future, outputs = evaluator.evaluate(compute_metrics=True, predict_fn=oracle_predict_fn())
    assert future.result() == {"ev_c": {"hits": 2, "n": metrics_lib.Scalar(2)}}
    future, outputs = evaluator.evaluate(compute_metrics=False, predict_fn=oracle_predict_fn())
    assert future.result() is None and len(outputs["ev_c"][1]) == 2
    evaluator.close()


def test_num_examples_shuffle_and_sequence_length():
    add_task("ev_d", [chr(ord("a") + i) * 3 for i in range(10)], [hits])
    evaluator = seqio.Evaluator("ev_d", seqio.EncDecFeatureConverter(pack=False),
                                num_examples=3, sequence_length={"inputs": 8, "targets": 2})
    assert len(evaluator.cached_targets["ev_d"]) == 3
    assert evaluator.model_feature_shapes == {
        "encoder_input_tokens": (8,), "decoder_target_tokens": (2,),
        "decoder_input_tokens": (2,), "decoder_loss_weights": (2,)}
    first = seqio.Evaluator("ev_d", seqio.EncDecFeatureConverter(pack=False), num_examples=3,
                            shuffle=True, seed=1).cached_targets["ev_d"]
    again = seqio.Evaluator("ev_d", seqio.EncDecFeatureConverter(pack=False), num_examples=3,
                            shuffle=True, seed=1).cached_targets["ev_d"]
    assert first == again


def test_errors():
    add_task("ev_e", ["ab"], [hits])
    with pytest.raises(ValueError, match="packing can't be used"):
        seqio.Evaluator("ev_e", seqio.EncDecFeatureConverter(pack=True))
    with pytest.raises(ValueError, match="'log_dir' must be provided"):
        seqio.Evaluator("ev_e", seqio.EncDecFeatureConverter(pack=False),
                        logger_cls=[seqio.JSONLogger])
    evaluator = seqio.Evaluator("ev_e", seqio.EncDecFeatureConverter(pack=False),
                                async_compute_metrics=False)
    with pytest.raises(ValueError, match="pass predict_fn"):
        evaluator.evaluate(compute_metrics=True, score_fn=score_fn)

    def needs_length(ds, sequence_length):
        return ds

    seqio.TaskRegistry.add("ev_f", source(["ab"]), output_features=FEATURES,
                           preprocessors=[preprocessors.tokenize, needs_length],
                           metric_fns=[hits])
    with pytest.raises(ValueError, match="Preprocessor 'needs_length' in task 'ev_f'"):
        seqio.Evaluator("ev_f", seqio.EncDecFeatureConverter(pack=False))


def test_task_without_split_or_metrics_is_skipped():
    add_task("ev_g", ["ab"], [hits], splits=("train",))
    evaluator = seqio.Evaluator("ev_g", seqio.EncDecFeatureConverter(pack=False))
    assert evaluator.eval_tasks == []
    future, outputs = evaluator.evaluate(compute_metrics=True, predict_fn=oracle_predict_fn())
    assert future.result() == {} and outputs == {}


def read_events(folder):
    values = {}
    for path in glob.glob(os.path.join(folder, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                tensor = tf.make_ndarray(value.tensor)
                values.setdefault(value.tag, []).append((event.step, tensor))
    return values


def test_loggers_write_seqio_files(tmp_path):
    add_task("ev_h", ["ab", "cd", "ef"], [hits])
    log_dir = str(tmp_path / "inference_eval")
    evaluator = seqio.Evaluator(
        "ev_h", seqio.EncDecFeatureConverter(pack=False),
        logger_cls=[seqio.JSONLogger,
                    type("TwoExamples", (seqio.TensorBoardLogger,), {"write_n_examples": 2})],
        log_dir=log_dir, async_compute_metrics=False)
    evaluator.evaluate(compute_metrics=True, step=10, predict_fn=oracle_predict_fn(2))
    evaluator.evaluate(compute_metrics=True, step=20, predict_fn=oracle_predict_fn())

    lines = open(os.path.join(log_dir, "ev_h-metrics.jsonl")).read().splitlines()
    assert [json.loads(line) for line in lines] == [{"step": 10, "hits": 1, "n": 3},
                                                   {"step": 20, "hits": 3, "n": 3}]
    records = [json.loads(line) for line in
               open(os.path.join(log_dir, "ev_h-000010.jsonl")).read().splitlines()]
    assert len(records) == 3
    assert records[0]["input"]["inputs_pretokenized"] == "ab"
    assert records[0]["input"]["targets"] == BYTES.encode("ab") + [1]
    assert (records[0]["target"], records[0]["output"], records[0]["prediction"]) == \
        ("ab", "aq", "aq")
    assert records[1]["prediction"] == "cd"
    assert sorted(os.listdir(log_dir)) == ["ev_h", "ev_h-000010.jsonl", "ev_h-000020.jsonl",
                                           "ev_h-metrics.jsonl"]

    events = read_events(os.path.join(log_dir, "ev_h"))
    assert [(s, float(v)) for s, v in events["eval/hits"]] == [(10, 1.0), (20, 3.0)]
    table = events["eval/examples"][0][1].item().decode()
    assert "| ab | ab | aq |" in table and "| cd | cd | cd |" in table
    assert "ef" not in table  # write_n_examples=2


def test_json_logger_write_n_results_and_encoder(tmp_path):
    logger = seqio.JSONLogger(str(tmp_path), write_n_results=1)
    ds = tf.data.Dataset.from_tensor_slices({"inputs": [[1, 2], [3, 4]]})
    logger("t", None, {"a": metrics_lib.Scalar(np.float32(0.5)),
                       "txt": metrics_lib.Text("hi"), "img": metrics_lib.Image(np.zeros([1]))},
           ds, {"prediction": ["x", "y"], "score": [np.float64(1.5), 2.0]}, ["X", "Y"])
    assert json.loads(open(tmp_path / "t-metrics.jsonl").read()) == \
        {"step": -1, "a": 0.5, "txt": "hi"}
    record_lines = open(tmp_path / "t--00001.jsonl").read().splitlines()
    assert [json.loads(line) for line in record_lines] == [
        {"input": {"inputs": [1, 2]}, "target": "X", "prediction": "x", "score": 1.5}]
    encoded = json.dumps(np.arange(40), cls=seqio.TensorAndNumpyEncoder)
    assert encoded.startswith('"ndarray(shape=(40,), dtype=int64); summary: 0, 1, 2, 3, 4 ...')


def test_text_metrics():
    assert metrics_lib.sequence_accuracy(["a", "b"], ["a", "c"]) == {"sequence_accuracy": 50.0}
    assert metrics_lib.exact_match([" a", "b"], ["a ", "b"]) == {"exact_match": 100.0}
    assert metrics_lib.accuracy([1, 2, 3, 4], [1, 2, 0, 0]) == {"accuracy": 50.0}
    assert metrics_lib.bleu(["the cat sat on the mat"],
                            ["the cat sat on the mat"]) == {"bleu": pytest.approx(100.0)}
    assert metrics_lib.bleu(["the cat sat on the mat"], ["a dog"])["bleu"] < 10
    with pytest.raises(ValueError, match="2 targets but 1 predictions"):
        metrics_lib.accuracy([1, 2], [1])


def test_pylogging_and_v1_loggers(tmp_path, caplog):
    from absl import logging as absl_logging
    absl_logging.set_verbosity(absl_logging.INFO)
    seqio.PyLoggingLogger(str(tmp_path))("t", 3, {"m": metrics_lib.Scalar(0.25),
                                                  "x": metrics_lib.Text("hi")},
                                         None, None, None)
    messages = [r.getMessage() for r in caplog.records]
    assert "t/m at step 3: 0.250" in messages and "t/x at step 3: hi" in messages
    seqio.TensorBoardLoggerV1(str(tmp_path))("t", 3, {"m": metrics_lib.Scalar(0.5)},
                                             None, None, None)
    values = [(e.step, v.tag, v.simple_value)
              for path in glob.glob(str(tmp_path / "t" / "events.*"))
              for e in tf.compat.v1.train.summary_iterator(path) for v in e.summary.value]
    assert values == [(3, "eval/m", 0.5)]
    with pytest.raises(ValueError, match="should be of type 'Scalar"):
        seqio.TensorBoardLoggerV1(str(tmp_path))("t", 3, {"x": metrics_lib.Text("a")},
                                                 None, None, None)


# --- metric objects (Task(metric_objs=...)), as seqio's docs and T5X configs write them ---

ModelOutputType = metrics_lib.ModelOutputType


@dataclasses.dataclass(frozen=True)  # seqio code: @flax.struct.dataclass
class ExactCount(metrics_lib.Metric):
    """Exact matches of the decoded outputs with the raw targets, merged by adding."""

    matches: int = 0
    total: int = 0
    model_output_type: ModelOutputType = ModelOutputType.PREDICTION

    @classmethod
    def empty(cls):
        return cls()

    @classmethod
    def from_model_output(cls, inputs, model_output, features, target_field_name="targets",
                          mask=None, indices_2d=None):
        vocab = features[target_field_name].vocabulary
        mask = np.ones(len(inputs)) if mask is None else np.asarray(mask)
        hit = [vocab.decode([int(t) for t in tokens]) ==
               ex[target_field_name + "_pretokenized"].decode()
               for ex, tokens in zip(inputs, model_output)]
        return cls(matches=int(np.sum(np.asarray(hit) * mask)), total=int(np.sum(mask)))

    def merge(self, other):
        return type(self)(matches=self.matches + other.matches, total=self.total + other.total)

    def compute(self):
        return {"exact": 100.0 * self.matches / self.total,
                "summary": metrics_lib.Text("%d of %d" % (self.matches, self.total))}


@dataclasses.dataclass(frozen=True)
class IntermediatesInOrder(metrics_lib.Metric):
    """Whether each score's intermediate value came with it (SCORE_WITH_INTERMEDIATES)."""

    in_order: bool = True
    model_output_type: ModelOutputType = ModelOutputType.SCORE_WITH_INTERMEDIATES

    @classmethod
    def from_model_output(cls, inputs, model_output, features, target_field_name="targets",
                          mask=None, indices_2d=None):
        scores, intermediates = model_output
        return cls(in_order=intermediates["index"].tolist() == list(range(len(scores)))
                   and len(scores) == len(inputs))

    def compute(self):
        return {"intermediates_in_order": float(self.in_order)}


def score_with_intermediates_fn(ds):
    pairs = [(int(i), -1.0) for i, _ in ds.as_numpy_iterator()][::-1]
    return pairs, {"index": [i for i, _ in pairs]}


def plain_upper(text, example=None, is_target=False):
    del example, is_target
    return text.upper()


class RecordingLogger(seqio.Logger):
    calls = []

    def __call__(self, task_name, step, metrics, dataset, inferences, targets):
        RecordingLogger.calls.append((task_name, step, metrics, inferences, targets))


def test_task_with_metric_objs_evaluated_from_predictions_and_scores(tmp_path):
    seqio.TaskRegistry.add(
        "ev_objs", source(["ab", "cd", "ef", "gh"]), output_features=FEATURES,
        preprocessors=[preprocessors.tokenize, preprocessors.append_eos],
        postprocess_fn=plain_upper,
        metric_objs=[ExactCount.empty(),
                     metrics_lib.LegacyMetric.empty(hits, plain_upper),
                     metrics_lib.PassthroughLegacyMetric.from_metric_fn(mean_score).empty(),
                     IntermediatesInOrder()],
        metric_fns=[metrics_lib.sequence_accuracy])
    RecordingLogger.calls.clear()
    evaluator = seqio.Evaluator("ev_objs", seqio.EncDecFeatureConverter(pack=False),
                                logger_cls=[RecordingLogger], log_dir=str(tmp_path),
                                async_compute_metrics=False)
    assert seqio.evaluation.needed_output_types(evaluator.eval_tasks) == {
        ModelOutputType.PREDICTION, ModelOutputType.SCORE,
        ModelOutputType.SCORE_WITH_INTERMEDIATES}
    with pytest.raises(ValueError, match="ev_objs has score metrics: pass score_fn"):
        evaluator.evaluate(compute_metrics=True, predict_fn=oracle_predict_fn())
    future, outputs = evaluator.evaluate(
        compute_metrics=True, step=3, predict_fn=oracle_predict_fn(wrong_every=2),
        score_fn=score_fn,
        model_fns={ModelOutputType.SCORE_WITH_INTERMEDIATES: score_with_intermediates_fn})
    # Indices 0 and 2 predict "aq" and "eq"; each score is -(2 letters + EOS).
    assert future.result() == {"ev_objs": {
        "exact": 50.0, "summary": metrics_lib.Text("2 of 4"), "hits": 2,
        "n": metrics_lib.Scalar(4), "mean_score": -3.0, "intermediates_in_order": 1.0,
        "sequence_accuracy": 50.0}}
    assert outputs["ev_objs"][ModelOutputType.SCORE] == [-3.0] * 4
    name, step, logged, inferences, targets = RecordingLogger.calls[-1]
    assert (name, step, targets) == ("ev_objs", 3, ["AB", "CD", "EF", "GH"])
    assert logged == {"exact": metrics_lib.Scalar(50.0), "summary": metrics_lib.Text("2 of 4"),
                      "hits": metrics_lib.Scalar(2), "n": metrics_lib.Scalar(4),
                      "mean_score": metrics_lib.Scalar(-3.0),
                      "intermediates_in_order": metrics_lib.Scalar(1.0),
                      "sequence_accuracy": metrics_lib.Scalar(50.0)}
    assert inferences["output"] == ["aq", "cd", "eq", "gh"]
    assert inferences["prediction"] == ["AQ", "CD", "EQ", "GH"]
    assert inferences["score"] == [-3.0] * 4


def test_sharded_batches_with_padding_give_the_evaluator_results(tmp_path):
    """seqio's MetricManager: outputs of two shards in padded batches of 3, merged in any
    order, give what the Evaluator gives on the whole split. With a custom metric object
    last, the loggers still get the legacy metrics' targets."""
    passthrough = metrics_lib.PassthroughLegacyMetric.from_metric_fn
    task = seqio.TaskRegistry.add(
        "ev_shards", source(["ab", "cd", "ef", "gh", "ij"]), output_features=FEATURES,
        preprocessors=[preprocessors.tokenize, preprocessors.append_eos],
        metric_objs=[passthrough(metrics_lib.sequence_accuracy).empty(),
                     passthrough(mean_score).empty(), ExactCount.empty()])
    RecordingLogger.calls.clear()
    evaluator = seqio.Evaluator("ev_shards", seqio.EncDecFeatureConverter(pack=False),
                                logger_cls=[RecordingLogger], log_dir=str(tmp_path),
                                async_compute_metrics=False)
    predict_fn = oracle_predict_fn(wrong_every=3)
    whole, outputs = evaluator.evaluate(compute_metrics=True, predict_fn=predict_fn,
                                        score_fn=score_fn)
    _, _, _, inferences, targets = RecordingLogger.calls[-1]
    assert targets == ["ab", "cd", "ef", "gh", "ij"]
    assert inferences["prediction"] == ["aq", "cd", "ef", "gq", "ij"]
    examples = list(evaluator.cached_task_datasets["ev_shards"].as_numpy_iterator())
    manager = seqio.evaluation.MetricManager([task])
    sharded = {}
    for output_type, per_example in outputs["ev_shards"].items():
        per_example = metrics_lib.model_output_arrays(per_example)
        manager.initialize_metrics("ev_shards", output_type)
        batches = []
        for shard, rows in enumerate([[0, 1, 2], [3, 4]]):       # shard 1: one padding row
            padded = rows + [rows[0]] * (3 - len(rows))
            batches.append(([examples[i] for i in padded], per_example[padded],
                             np.array([1] * len(rows) + [0] * (3 - len(rows))),
                             np.array([[shard, k] for k in range(3)])))
        for inputs, batch_output, mask, indices_2d in reversed(batches):
            manager.merge(manager.from_model_output(
                "ev_shards", output_type, inputs, batch_output, task.output_features,
                mask=mask, indices_2d=indices_2d), "ev_shards", output_type)
        manager.host_gather_and_reduce("ev_shards", output_type)
        collection = manager.output_metrics_collections["ev_shards"][output_type]
        for metric in collection.metrics.values():
            if isinstance(metric, metrics_lib.CollectingMetric):
                sharded.update(metric.actual_compute(examples, task.output_features)[0])
            else:
                sharded.update(metric.compute())
    assert sharded == whole.result()["ev_shards"]
    assert sharded["exact"] == sharded["sequence_accuracy"] == 60.0  # indices 0 and 3 wrong
    assert list(manager.metric_registry["ev_shards"][ModelOutputType.PREDICTION]) == [
        "FromMetricFun_0", "ExactCount_1"]
    assert collection.FromMetricFun_0.values["mask"].tolist() == [1, 1, 0, 1, 1, 1]


def test_public_types_have_seqios_meanings():
    # seqio 0.0.20's own tests annotate their model functions with these names.
    indices_and_tokens = typing.Sequence[typing.Tuple[int, typing.Sequence[int]]]
    with_aux = typing.Tuple[indices_and_tokens, typing.Mapping[str, typing.Sequence[typing.Any]]]
    assert typing.get_args(evaluation.PredictFnReturnType) == (indices_and_tokens, with_aux)
    indices_and_scores = typing.Sequence[typing.Tuple[int, float]]
    assert typing.get_args(evaluation.ScoreFnReturnType)[0] == indices_and_scores
    assert set(typing.get_args(evaluation.ModelFnReturnType)) == set(
        typing.get_args(evaluation.PredictFnReturnType) +
        typing.get_args(evaluation.ScoreFnReturnType))
    for name in ("PredictFnCallable", "ScoreFnCallable", "ModelFnCallable"):
        params = inspect.signature(getattr(evaluation, name).__call__).parameters
        assert list(params) == ["self", "dataset", "model_feature_shapes"], name
    assert typing.get_args(evaluation.MetricsAndOutputsType)[0] is evaluation.AllMetricsFuture
    assert evaluation.AllMetricsFuture.result.__annotations__["return"] == (
        evaluation.AllMetricsType)


def test_evaluator_whose_init_sets_only_seqios_attributes(monkeypatch):
    # seqio's own tests replace Evaluator.__init__ by one that sets the datasets, tasks,
    # loggers and executor only; evaluate() must not need more (model_feature_shapes is
    # derived from the cached model datasets), and calls a `*args` model function with the
    # dataset alone, as seqio does.
    task = add_task("ev_bare", ["ab", "cd"], [hits])
    ab, cd = BYTES.encode("ab"), BYTES.encode("cd")
    model_ds = tf.data.Dataset.from_tensor_slices(
        {"decoder_target_tokens": [ab + [1], cd + [1]]}).enumerate()
    task_ds = tf.data.Dataset.from_tensor_slices(
        {"targets": [ab + [1], cd + [1]], "targets_pretokenized": ["ab", "cd"]})

    def seqio_test_init(self):
        self._cached_model_datasets = {task.name: model_ds}
        self._cached_task_datasets = {task.name: task_ds}
        self._eval_tasks = [task]
        self._loggers = ()
        self._metrics_future = None
        self._metrics_executor = None
        self._target_field_name = "targets"

    monkeypatch.setattr(seqio.Evaluator, "__init__", seqio_test_init)
    evaluator = seqio.Evaluator()
    assert evaluator.model_feature_shapes == {"decoder_target_tokens": (3,)}
    calls = []

    def any_args_predict_fn(*args):
        calls.append(args)
        return [(1, cd), (0, BYTES.encode("aq"))]

    def predict_fn(ds, model_feature_shapes=None) -> evaluation.PredictFnReturnType:
        calls.append((ds, model_feature_shapes))
        return [(0, ab), (1, cd)]

    future, _ = evaluator.evaluate(compute_metrics=True, predict_fn=any_args_predict_fn)
    assert calls == [(model_ds,)]
    assert future.result()[task.name]["hits"] == 1
    future, _ = evaluator.evaluate(compute_metrics=True, predict_fn=predict_fn)
    assert calls[1] == (model_ds, {"decoder_target_tokens": (3,)})
    assert future.result()[task.name]["hits"] == 2
