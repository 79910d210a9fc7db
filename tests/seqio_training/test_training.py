"""Training on a SeqIO Mixture: a copy task over a TSV file and a T2T problem through the
bridge (its metric a metric object), packed; each evaluation decodes both tasks' validation
splits and writes their metrics (JSON lines, TensorBoard scalars and example text), and the
copy task's exact match rises well above chance within 300 steps."""
import glob
import json
import os

import pytest
import tensorflow as tf

from t2t import seqio
from t2t.core import registry
from t2t.seqio_training import inference, training
from t2t.training.run_config import RunConfigSpec

from seqio_training_testing import BYTES, add_copy_tsv_task, write_copy_tsv

PROBLEM = "algorithmic_reverse_binary40_test"
TINY = ("hidden_size=64,filter_size=128,num_hidden_layers=1,learning_rate_warmup_steps=100,"
        "learning_rate=2.0,batch_size=1024")
STEPS = 300


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def event_values(folder):
    values = {}
    for path in glob.glob(os.path.join(folder, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                values.setdefault(value.tag, []).append(
                    (event.step, tf.make_ndarray(value.tensor)))
    return values


@pytest.fixture
def mixture(tmp_path):
    data_dir = tmp_path / "t2t_data"
    data_dir.mkdir()
    registry.problem(PROBLEM).generate_data(str(data_dir), str(data_dir))
    add_copy_tsv_task("copy_tsv", write_copy_tsv(tmp_path, {"train": 2000, "validation": 32}))
    seqio.add_t2t_problem_task(PROBLEM, str(data_dir), name="reverse_bits", vocabulary=BYTES,
                               metric_objs=[seqio.metrics.LegacyMetric.empty(
                                   seqio.metrics.sequence_accuracy, postprocess_fn=None)])
    seqio.MixtureRegistry.add("copy_mix", [("copy_tsv", 1), ("reverse_bits", 1)])
    return "copy_mix"


def test_mixture_training_writes_rising_task_metrics(mixture, tmp_path):
    model_dir = str(tmp_path / "model")
    spec = training.TaskTrainingSpec(mixture, {"inputs": 24, "targets": 24},
                                     eval_num_examples=32, seed=1)
    hparams = training.task_hparams("transformer_tiny", TINY, spec)
    assert hparams.problem.pack and hparams.problem_hparams.vocab_size["targets"] == 259
    run_config = RunConfigSpec("transformer", model_dir=model_dir,
                               save_checkpoints_steps=STEPS // 2,
                               random_seed=1)
    exp = training.create_task_experiment(run_config, hparams, "transformer", spec,
                                          train_steps=STEPS, eval_steps=2,
                                          min_eval_frequency=STEPS // 2,
                                          schedule="train_and_evaluate")
    result = exp.train_and_evaluate()
    assert result["global_step"] == STEPS

    log_dir = os.path.join(model_dir, training.INFERENCE_EVAL_DIR)
    copy_lines = read_jsonl(os.path.join(log_dir, "copy_tsv-metrics.jsonl"))
    assert [line["step"] for line in copy_lines] == [STEPS // 2, STEPS]
    first, last = copy_lines[0]["exact_match"], copy_lines[-1]["exact_match"]
    assert last >= 60.0 and last > first, copy_lines
    bits_lines = read_jsonl(os.path.join(log_dir, "reverse_bits-metrics.jsonl"))
    assert [line["step"] for line in bits_lines] == [STEPS // 2, STEPS]
    assert 0.0 <= bits_lines[-1]["sequence_accuracy"] <= 100.0

    # Inference outputs of each evaluation, in the validation split's order.
    records = read_jsonl(os.path.join(log_dir, "copy_tsv-%06d.jsonl" % STEPS))
    assert len(records) == 32
    assert all(set(r) == {"input", "target", "output", "prediction"} for r in records)
    assert records[0]["target"] == records[0]["input"]["targets_pretokenized"]
    correct = sum(r["prediction"] == r["target"] for r in records)
    assert correct * 100.0 / 32 == pytest.approx(last)

    events = event_values(os.path.join(log_dir, "copy_tsv"))
    assert [step for step, _ in events["eval/exact_match"]] == [STEPS // 2, STEPS]
    assert float(events["eval/exact_match"][-1][1]) == pytest.approx(last)
    table = events["eval/examples"][-1][1].item().decode()
    assert table.startswith("| inputs | targets | predictions |")
    assert len(table.splitlines()) == 2 + 3
    assert "eval/sequence_accuracy" in event_values(os.path.join(log_dir, "reverse_bits"))

    # docs/seqio.md's evaluation of a checkpoint: the same predictions as during training,
    # and log-likelihood scores (negative) of each target.
    def length_score(targets, scores):
        return {"mean_log_likelihood": sum(scores) / len(scores)}

    checkpoint = tf.train.latest_checkpoint(model_dir)
    seqio.TaskRegistry.add("copy_again", seqio.get_mixture_or_task("copy_tsv").source,
                           preprocessors=seqio.get_mixture_or_task("copy_tsv").preprocessors,
                           output_features=seqio.get_mixture_or_task("copy_tsv").output_features,
                           metric_fns=[seqio.metrics.exact_match, length_score])
    evaluator = seqio.Evaluator("copy_again", seqio.EncDecFeatureConverter(pack=False),
                                sequence_length={"inputs": 24, "targets": 24},
                                num_examples=8, async_compute_metrics=False)
    estimator = inference.create_estimator("transformer", hparams, model_dir)
    metrics, outputs = evaluator.evaluate(
        compute_metrics=True, step=STEPS,
        predict_fn=inference.estimator_predict_fn(estimator, hparams.problem, checkpoint),
        score_fn=inference.checkpoint_score_fn("transformer", hparams, checkpoint))
    metrics = metrics.result()["copy_again"]
    assert metrics["exact_match"] == pytest.approx(
        100.0 * sum(r["prediction"] == r["target"] for r in records[:8]) / 8)
    scores = outputs["copy_again"][seqio.metrics.ModelOutputType.SCORE]
    assert len(scores) == 8 and all(s < 0 for s in scores)
    assert metrics["mean_log_likelihood"] == pytest.approx(sum(scores) / 8)

    # The Estimator-free predictor (TensorFlow 2.16+) predicts the same ids.
    native = inference.create_estimator("transformer", hparams, model_dir, backend="native")
    dataset = evaluator.cached_model_datasets["copy_again"]
    expected = inference.estimator_predict_fn(estimator, hparams.problem, checkpoint)(dataset)
    assert inference.estimator_predict_fn(native, hparams.problem, checkpoint)(dataset) == \
        expected
    assert len(expected) == 8
