"""Training a t2t model on a SeqIO Task or Mixture, with the tasks' metrics at each evaluation.

The runner trains as for a Problem, on either backend (checkpoints, resume, hparams.json,
TF_CONFIG, schedules); the Problem is a `TaskProblem`. With an evaluation schedule, each
evaluation of a checkpoint also decodes the eval split of every task that has metric
functions or metric objects (`seqio.Evaluator`, each task on its own) and writes the task metrics:

    spec = TaskTrainingSpec("copy_mix", {"inputs": 32, "targets": 32}, pack=True)
    hparams = task_hparams("transformer_tiny", "num_hidden_layers=1", spec)
    run_spec = RunConfigSpec("transformer", model_dir="/runs/copy", random_seed=1)
    exp = create_task_experiment(run_spec, hparams, "transformer", spec,
                                 train_steps=300, eval_steps=5, min_eval_frequency=100)
    exp.train_and_evaluate()
    # <model_dir>/inference_eval/copy-metrics.jsonl: {"step": 300, "exact_match": 93.8}
    # <model_dir>/inference_eval/copy/events.out.tfevents.*: eval/exact_match, eval/examples
    # <model_dir>/inference_eval/copy-000300.jsonl: inputs, target, output, prediction
"""
import concurrent.futures
import dataclasses
import functools
import os
from typing import Mapping, Optional

import tensorflow as tf
from absl import logging

from t2t.core import backend_choice
from t2t.core import errors
from t2t.decoding import decoding
from t2t.model import model_hparams
from t2t.seqio_training import inference
from t2t.seqio_training import task_problem as task_problem_lib
from t2t.training import run_config as run_config_lib
from t2t.training import trainer_lib
import t2t.seqio.evaluation as evaluation
import t2t.seqio.loggers as loggers

INFERENCE_EVAL_DIR = "inference_eval"
# Greedy decoding of at most target length + 10 positions during training evaluations.
TRAINING_DECODE_HPARAMS = "beam_size=1,alpha=0.0,extra_length=10"


@dataclasses.dataclass(frozen=True)
class TaskTrainingSpec:
    """What to train on: a registered task or mixture, its lengths and how it is read.

        TaskTrainingSpec("mix", {"inputs": 256, "targets": 128})   # packed, enc-dec
    `decoder_only` picks the PrefixLM converter for tasks with inputs (LM without inputs);
    `eval_num_examples` caps the examples of each task decoded per evaluation.
    """
    mixture_or_task_name: str
    task_feature_lengths: Mapping[str, int]
    pack: bool = True
    decoder_only: bool = False
    eval_split: str = "validation"
    eval_num_examples: Optional[int] = None
    use_cached: bool = False
    seed: Optional[int] = None
    task_metrics: bool = True

    def __post_init__(self):
        if not self.mixture_or_task_name:
            raise errors.UserError("--mixture_or_task_name: give a registered task or mixture")
        if self.eval_num_examples is not None and self.eval_num_examples <= 0:
            raise errors.UserError("--task_eval_num_examples=%s: give a positive number"
                                   % self.eval_num_examples)

    def problem(self) -> task_problem_lib.TaskProblem:
        return task_problem_lib.TaskProblem(
            self.mixture_or_task_name, self.task_feature_lengths, pack=self.pack,
            decoder_only=self.decoder_only, eval_split=self.eval_split,
            use_cached=self.use_cached, seed=self.seed)


def task_hparams(hparams_set: str, overrides: str, spec: TaskTrainingSpec,
                 hparams_path: Optional[str] = None, strict_resume: bool = False):
    """`trainer_lib.create_hparams` with the task's problem hparams attached."""
    task_problem_lib.get_provider(spec.mixture_or_task_name)  # unknown names first
    hparams = trainer_lib.create_hparams(hparams_set, overrides, hparams_path=hparams_path,
                                         strict_resume=strict_resume)
    model_hparams.add_problem_hparams(hparams, spec.problem())
    return hparams


class TaskEvaluation:
    """After each evaluation: the tasks' metrics on real decodes of the checkpoint.

    An Exporter's `name` and `export(estimator, export_path, checkpoint_path, eval_result,
    is_the_final_export)`, without tf.estimator; `TaskEvalExporter` makes it an Estimator
    Exporter for `tf.estimator.train_and_evaluate`, which calls it in whichever task
    evaluates. The Evaluator (cached eval data) is built on the first call; its loggers write
    `<model_dir>/inference_eval` (TensorBoard with 3 examples as text, JSON lines, log).
    `estimator` is anything with `predict(input_fn, checkpoint_path=...)`; `problem` is the
    TaskProblem trained (default: the one attached to `hparams`).
    """

    def __init__(self, model_name: str, hparams, spec: TaskTrainingSpec, log_dir: str,
                 batch_size: int = 32, problem=None):
        self._model_name, self._hparams, self._spec = model_name, hparams, spec
        self._problem = (problem if problem is not None else
                         model_hparams.attached_problem(hparams, "TaskEvaluation"))
        self._log_dir, self._batch_size = log_dir, batch_size
        self._evaluator = None
        self._thread = None
        self.last_metrics = None

    @property
    def name(self):
        return "seqio_task_eval"

    def evaluator(self):
        if self._evaluator is None:
            problem = self._problem
            self._evaluator = evaluation.Evaluator(
                self._spec.mixture_or_task_name,
                task_problem_lib.make_feature_converter(problem.converter_kind, pack=False),
                eval_split=self._spec.eval_split, use_cached=self._spec.use_cached,
                sequence_length=dict(problem.task_feature_lengths),
                num_examples=self._spec.eval_num_examples,
                logger_cls=(loggers.ExamplesTensorBoardLogger, loggers.JSONLogger,
                            loggers.PyLoggingLogger),
                log_dir=self._log_dir, async_compute_metrics=False)
        return self._evaluator

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        del export_path, is_the_final_export
        # Called while the (finalized) training graph is the default graph of this thread;
        # the evaluation runs eagerly in a thread of its own (graphs are per thread).
        if self._thread is None:
            self._thread = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="seqio_task_eval")
        return self._thread.submit(self._evaluate, estimator, checkpoint_path,
                                   eval_result).result()

    def _evaluate(self, estimator, checkpoint_path, eval_result):
        evaluator = self.evaluator()
        if not evaluator.eval_tasks:
            return None
        problem = self._problem
        step = int((eval_result or {}).get("global_step") or 0)
        predict_fn = score_fn = None
        needed = evaluation.needed_output_types(evaluator.eval_tasks)  # metric_fns and _objs
        if evaluation.ModelOutputType.PREDICTION in needed:
            predict_fn = inference.estimator_predict_fn(estimator, problem, checkpoint_path,
                                                        self._batch_size)
        if evaluation.ModelOutputType.SCORE in needed:
            score_fn = inference.checkpoint_score_fn(self._model_name, self._hparams,
                                                     checkpoint_path, self._batch_size,
                                                     problem=problem)
        metrics, _ = evaluator.evaluate(compute_metrics=True, step=step,
                                        predict_fn=predict_fn, score_fn=score_fn)
        self.last_metrics = metrics.result()
        for task_name, values in sorted(self.last_metrics.items()):
            logging.info("Task metrics of %s at step %d: %s", task_name, step, ", ".join(
                "%s %s" % (k, getattr(v, "value", v)) for k, v in sorted(values.items())))
        return None


@functools.lru_cache(maxsize=None)
def _estimator_exporter_class():
    # Built on first use: TensorFlow 2.16+ has no tf.estimator.
    return type("TaskEvalExporter", (TaskEvaluation, tf.estimator.Exporter), {})


def TaskEvalExporter(*args, **kwargs):  # noqa: N802  (the class name callers know)
    """A `TaskEvaluation` that is a `tf.estimator.Exporter` (same arguments)."""
    return _estimator_exporter_class()(*args, **kwargs)


def task_exporters(model_name: str, hparams, spec: TaskTrainingSpec, model_dir: str,
                   backend: str, problem=None):
    """The exporter that writes the task metrics after each evaluation (none without
    `spec.task_metrics`): a `TaskEvalExporter` on the Estimator backend, a
    `TaskEvaluation` on the native one. `problem`: the TaskProblem trained (default: the
    one attached to `hparams`)."""
    if not spec.task_metrics:
        return []
    exporter_class = TaskEvalExporter if backend == "estimator" else TaskEvaluation
    return [exporter_class(model_name, hparams, spec,
                           os.path.join(model_dir, INFERENCE_EVAL_DIR), problem=problem)]


def create_task_experiment(run_config, hparams, model_name: str, spec: TaskTrainingSpec,
                           train_steps: int, eval_steps: Optional[int] = None,
                           decode_hparams=None, backend: str = "auto", **experiment_kwargs):
    """An experiment training on the task, with its metrics after each evaluation.

    `run_config` is a `run_config.RunConfigSpec` (either backend: `backend` "auto" picks
    the Estimator where tf.estimator exists) or a `tf.estimator.RunConfig` (Estimator).
    `experiment_kwargs` are the other `trainer_lib.ExperimentSpec` fields
    (min_eval_frequency, schedule, eval_early_stopping_steps, ...).

        run_spec = RunConfigSpec("transformer", model_dir="/runs/copy", random_seed=1)
        create_task_experiment(run_spec, hparams, "transformer", spec, train_steps=300,
                               schedule="train_and_evaluate").train_and_evaluate()
    """
    problem = model_hparams.attached_problem(hparams)
    if not isinstance(problem, task_problem_lib.TaskProblem):
        problem = spec.problem()
        model_hparams.add_problem_hparams(hparams, problem)
    if decode_hparams is None:
        decode_hparams = decoding.decode_hparams(TRAINING_DECODE_HPARAMS)
    is_spec = isinstance(run_config, run_config_lib.RunConfigSpec)
    backend = backend_choice.resolve_backend(backend) if is_spec else "estimator"
    if is_spec and backend == "estimator":
        run_config = run_config_lib.run_config_from_spec(run_config)
    exporters = list(experiment_kwargs.pop("additional_exporters", None) or [])
    exporters += task_exporters(model_name, hparams, spec, run_config.model_dir, backend,
                                problem=problem)
    experiment_spec = trainer_lib.ExperimentSpec(
        model_name, problem.name, None, train_steps=train_steps, eval_steps=eval_steps,
        decode_hparams=decode_hparams, additional_exporters=exporters, **experiment_kwargs)
    if backend == "native":
        from t2t.training.native import experiment as native_experiment_lib
        return native_experiment_lib.native_experiment(run_config, hparams, experiment_spec)
    return trainer_lib.experiment_from_spec(run_config, hparams, experiment_spec)
