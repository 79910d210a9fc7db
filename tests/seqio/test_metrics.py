"""seqio.metrics: metric objects (Metric, CollectingMetric, LegacyMetric,
PassthroughLegacyMetric) with seqio 0.0.20's semantics in numpy, padding removal, global
sorting, merge properties, and sharded outputs giving the unsharded results."""
import dataclasses
import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t import seqio
from t2t.seqio import metrics

ModelOutputType = metrics.ModelOutputType
BYTES = seqio.ByteVocabulary()
FEATURES = {"targets": seqio.Feature(BYTES)}
WORDS = ["ab", "cd", "ef", "gh", "ij", "kl", "mn", "op", "qr", "st", "uv", "wx"]


def example(word):
    return {"targets": np.array(BYTES.encode(word) + [1]), "targets_pretokenized": word.encode()}


def token_rows(words, length=4):
    """Decoded outputs padded to one length (as a model's batch of predictions)."""
    return np.array([(BYTES.encode(w) + [1] + [0] * length)[:length] for w in words])


@dataclasses.dataclass(frozen=True)
class Count(metrics.Metric):
    """seqio's test metric: the number of (unmasked) examples."""

    count: int = 0
    model_output_type: ModelOutputType = ModelOutputType.PREDICTION

    @classmethod
    def empty(cls):
        return cls(count=0)

    @classmethod
    def from_model_output(cls, inputs, model_output, features, target_field_name="targets",
                          mask=None, indices_2d=None):
        if mask is None:
            mask = np.ones((len(inputs),))
        return cls(count=int(mask.sum()))

    def merge(self, other):
        return type(self)(count=self.count + other.count)

    def compute(self):
        return {"count": self.count}


def exact(targets, predictions):
    return {"exact": 100.0 * np.mean([t == p for t, p in zip(targets, predictions)])}


def upper(text, example=None, is_target=False):
    del example, is_target
    return text.upper()


def test_remove_padding_and_globally_sort_as_seqio():
    mask = np.array([1, 1, 0])
    indices_2d = np.array([[0, 1], [0, 2], [0, 0]])
    output = np.array([[1, 2, 3], [1, 3, 4], [1, 2, 3]])
    kept_indices, kept = metrics.remove_padding_examples(output, indices_2d, mask)
    np.testing.assert_array_equal(kept_indices, [[0, 1], [0, 2]])
    np.testing.assert_array_equal(kept, [[1, 2, 3], [1, 3, 4]])
    np.testing.assert_array_equal(metrics.globally_sort_model_output(output, indices_2d),
                                  [[1, 2, 3], [1, 2, 3], [1, 3, 4]])
    # Trees (predictions with aux values) are cut and sorted leaf by leaf.
    tree = (output, {"p": np.array([0.5, 0.25, 0.125])})
    _, kept = metrics.remove_padding_examples(tree, indices_2d, mask)
    np.testing.assert_array_equal(kept[1]["p"], [0.5, 0.25])
    ordered = metrics.globally_sort_model_output(tree, np.array([[1, 0], [0, 1], [0, 0]]))
    np.testing.assert_array_equal(ordered[1]["p"], [0.125, 0.25, 0.5])


def test_metric_base_and_subclass():
    assert Count.empty().merge(Count.from_model_output([{}, {}], None, {})).compute() == {
        "count": 2}
    assert Count.from_model_output([{}] * 3, None, {}, mask=np.array([1, 0, 1])).count == 2
    assert Count(count=3).compute_value() == metrics.Scalar({"count": 3})
    with pytest.raises(NotImplementedError, match="Must override from_model_output"):
        metrics.Metric.from_model_output([], None, {})
    with pytest.raises(NotImplementedError, match="Must override merge"):
        metrics.Metric(ModelOutputType.SCORE).merge(None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Count().count = 1  # frozen, as a flax.struct.dataclass
    assert ModelOutputType.to_str(ModelOutputType.SCORE_WITH_INTERMEDIATES) == \
        "score_with_intermediates"


def test_legacy_metric_types_and_values():
    def by_score(targets, scores):
        return {"mean": float(np.mean(scores))}

    def with_aux(targets, predictions, aux_values, k=1):
        return {"aux": float(np.sum(aux_values["p"]))}

    assert metrics.LegacyMetric.empty(exact, None).model_output_type == \
        ModelOutputType.PREDICTION
    assert metrics.LegacyMetric.empty(by_score, None).model_output_type == ModelOutputType.SCORE
    assert metrics.LegacyMetric.empty(with_aux, None).model_output_type == \
        ModelOutputType.PREDICTION_WITH_AUX
    with pytest.raises(ValueError, match=r"Got: \('predictions', 'targets'\)"):
        metrics.LegacyMetric.empty(lambda predictions, targets: {}, None)

    examples = [example(w) for w in ["ab", "cd", "ef"]]
    metric = metrics.LegacyMetric.empty(exact, upper)
    metric = metric.from_model_output(examples, token_rows(["ab", "cq", "ef"]), FEATURES)
    assert metric.compute() == {"exact": pytest.approx(200 / 3)}
    assert metric.targets_and_inferences["targets"] == ["AB", "CD", "EF"]
    assert metric.targets_and_inferences["output"] == ["ab", "cq", "ef"]
    assert metric.targets_and_inferences["prediction"] == ["AB", "CQ", "EF"]

    scored = metrics.LegacyMetric.empty(by_score, None).from_model_output(
        examples, np.array([-1.0, -2.0, -3.0]), FEATURES)
    assert scored.compute() == {"mean": -2.0}
    aux = metrics.LegacyMetric.empty(with_aux, None).from_model_output(
        examples, (token_rows(["ab", "cd", "ef"]), {"p": np.array([0.5, 0.25, 0.25])}),
        FEATURES)
    assert aux.compute() == {"aux": 1.0}
    assert aux.targets_and_inferences["prediction"] == ["ab", "cd", "ef"]


def test_passthrough_legacy_metric_decodes_top_k_ragged_and_text():
    examples = [example(w) for w in ["ab", "cd"]]
    metric_cls = metrics.PassthroughLegacyMetric.from_metric_fn(exact, upper)
    assert metric_cls.model_output_type == ModelOutputType.PREDICTION
    assert metric_cls.empty().values == {}
    for output in (token_rows(["ab", "cq"]),                       # [batch, length] ids
                   [BYTES.encode("ab"), BYTES.encode("cq") + [1]],    # rows of two lengths
                   ["ab", "cq"]):                                 # already decoded
        metric = metric_cls.from_model_output(examples, metrics.model_output_arrays(output),
                                              FEATURES)
        value, inferences = metric.actual_compute(examples, FEATURES)
        assert value == {"exact": 50.0}
        assert inferences["prediction"] == ["AB", "CQ"] and inferences["targets"] == ["AB", "CD"]
    top_k = np.stack([token_rows(["ab", "cq"]), token_rows(["xy", "zz"])], axis=1)
    metric = metrics.PassthroughLegacyMetric.from_metric_fn(
        lambda targets, predictions: {"hit": np.mean([t in p for t, p in zip(targets,
                                                                           predictions)])}
    ).empty().from_model_output(examples, top_k, FEATURES)
    value, inferences = metric.actual_compute(examples, FEATURES)
    assert inferences["prediction"] == [["ab", "xy"], ["cq", "zz"]] and value == {"hit": 0.5}
    with pytest.raises(ValueError, match="2 targets but 1 model outputs"):
        metric_cls.from_model_output(examples[:1], token_rows(["ab"]), FEATURES).actual_compute(
            examples, FEATURES)


def test_collecting_metric_merge_as_clu():
    a = metrics.CollectingMetric.from_model_output([{}], np.array([[5, 6]]), {})
    b = metrics.CollectingMetric.from_model_output([{}], np.array([[7, 8]]), {})
    merged = a.merge(b)
    np.testing.assert_array_equal(merged.values["model_output"], [[5, 6], [7, 8]])
    np.testing.assert_array_equal(merged.values["mask"], [1, 1])
    np.testing.assert_array_equal(merged.values["indices_2d"], [[0, 0], [0, 0]])
    empty = metrics.CollectingMetric.empty()
    assert empty.merge(a) is a and a.merge(empty) is a
    # Rows of different lengths (shards decoded to different lengths) stay rows.
    c = metrics.CollectingMetric.from_model_output([{}], np.array([[9, 9, 9]]), {})
    assert [list(r) for r in a.merge(c).values["model_output"]] == [[5, 6], [9, 9, 9]]
    with pytest.raises(NotImplementedError, match="actual_compute"):
        a.actual_compute([], {})


def test_task_metric_objs_and_metric_fns_together():
    def score_fn_1(targets, scores):
        return {}

    source = seqio.FunctionDataSource(lambda split, shuffle_files: None, splits=["validation"])
    given_obj = metrics.LegacyMetric.empty(metric_fn=score_fn_1, postprocess_fn=None)
    task = seqio.Task("objs_and_fns", source, output_features=FEATURES,
                      metric_fns=[exact], metric_objs=[given_obj], postprocess_fn=upper)
    objs = task.metric_objs
    assert len(objs) == 2 and objs[0] is given_obj
    assert isinstance(objs[1], metrics.PassthroughLegacyMetric)
    assert objs[1].model_output_type == ModelOutputType.PREDICTION
    assert task.predict_metric_fns == [exact] and task.score_metric_fns == []
    assert task.replace(name="objs_and_fns2").metric_objs[0] is given_obj


# --- sharded outputs: padding and shard order do not change the results ------------------

def shard_batches(words, outputs, num_shards, batch_size):
    """Split `words` into contiguous shards, each into batches padded to `batch_size` with
    copies of its first example (mask 0); yields (inputs, outputs, mask, indices_2d)."""
    bounds = np.linspace(0, len(words), num_shards + 1).astype(int)
    for shard in range(num_shards):
        lo, hi = bounds[shard], bounds[shard + 1]
        for start in range(lo, hi, batch_size):
            rows = list(range(start, min(start + batch_size, hi)))
            pad = batch_size - len(rows)
            rows_padded = rows + [rows[0]] * pad
            yield ([example(words[i]) for i in rows_padded], outputs[rows_padded],
                   np.array([1] * len(rows) + [0] * pad),
                   np.array([[shard, i - lo] for i in rows] + [[shard, 0]] * pad))


def merged_over_batches(metric, batches, order):
    result = metric.empty() if isinstance(metric, metrics.CollectingMetric) else metric
    for k in order:
        inputs, outputs, mask, indices_2d = batches[k]
        result = result.merge(type(metric).from_model_output(
            inputs, outputs, FEATURES, "targets", mask=mask, indices_2d=indices_2d))
    return result


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, len(WORDS)), num_shards=st.integers(1, 3),
       batch_size=st.integers(1, 4), data=st.data())
def test_sharded_outputs_with_padding_equal_unsharded(n, num_shards, batch_size, data):
    words = WORDS[:n]
    wrong = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    predicted = [w[0] + "q" if bad else w for w, bad in zip(words, wrong)]
    outputs = token_rows(predicted)
    num_shards = min(num_shards, n)
    batches = list(shard_batches(words, outputs, num_shards, batch_size))
    order = data.draw(st.permutations(range(len(batches))))
    examples = [example(w) for w in words]

    passthrough = metrics.PassthroughLegacyMetric.from_metric_fn(exact, upper).empty()
    unsharded, _ = passthrough.from_model_output(examples, outputs, FEATURES).actual_compute(
        examples, FEATURES)
    sharded, inferences = merged_over_batches(passthrough, batches, order).actual_compute(
        examples, FEATURES)
    assert sharded == unsharded
    assert sharded["exact"] == pytest.approx(100.0 * (n - sum(wrong)) / n)
    assert inferences["output"] == predicted
    assert merged_over_batches(Count.empty(), batches, order).compute() == {"count": n}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=3), min_size=1, max_size=4))
def test_collecting_merge_is_associative_with_empty_identity(batches):
    parts = [metrics.CollectingMetric.from_model_output([{}] * len(b), np.array(b), {})
             for b in batches]
    empty = metrics.CollectingMetric.empty()
    left = empty
    for part in parts:
        left = left.merge(part)
    right = empty
    for part in reversed(parts):
        right = part.merge(right)
    for key in ("model_output", "mask", "indices_2d"):
        np.testing.assert_array_equal(left.values[key], right.values[key])
    np.testing.assert_array_equal(left.values["model_output"], np.concatenate(batches))


SEQIO_SIGNATURES = {  # read from seqio 0.0.20's metrics.py and evaluation.py
    "Metric.from_model_output": "(inputs, model_output, features, target_field_name='targets', "
                                "mask=None, indices_2d=None)",
    "CollectingMetric.from_model_output": "(inputs, model_output, features, "
                                          "target_field_name='targets', mask=None, "
                                          "indices_2d=None)",
    "CollectingMetric.actual_compute": "(self, task_dataset_as_numpy, task_output_features, "
                                       "target_field_name='targets', cached_targets=None)",
    "LegacyMetric.empty": "(metric_fn, postprocess_fn)",
    "LegacyMetric.from_model_output": "(self, inputs, model_output, features, "
                                      "target_field_name='targets', mask=None)",
    "PassthroughLegacyMetric.from_metric_fn": "(metric_fn, postprocess_fn=None)",
    "remove_padding_examples": "(model_output, indices_2d, mask)",
    "globally_sort_model_output": "(model_output, indices_2d)",
}


@pytest.mark.parametrize("name", sorted(SEQIO_SIGNATURES))
def test_seqio_signatures(name):
    obj = metrics
    for part in name.split("."):
        obj = getattr(obj, part)
    params = [p.replace(annotation=p.empty) for p in inspect.signature(obj).parameters.values()]
    assert "(%s)" % ", ".join(str(p) for p in params) == SEQIO_SIGNATURES[name]


def test_metric_manager_signature():
    assert list(inspect.signature(seqio.evaluation.MetricManager.from_model_output).parameters
                ) == ["self", "task_name", "model_output_type", "inputs", "model_output",
                      "features", "target_field_name", "mask", "indices_2d"]
