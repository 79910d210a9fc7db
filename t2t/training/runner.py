"""One training run from a job description: backend, resume, hparams, schedule.

t2t-trainer maps its flags to a `TrainingJob`; everything after that lives here, for
problems and SeqIO tasks alike, on either backend:

    job = TrainingJob(model_name="transformer", hparams_set="transformer_tiny",
                      output_dir="/run", problem_name="algorithmic_reverse_binary40",
                      data_dir="/data", train_steps=2000, backend="auto",
                      run_config={"save_checkpoints_steps": 500},
                      experiment={"schedule": "train_and_evaluate", "min_eval_frequency": 500})
    prepared = prepare(job)      # backend chosen (logged), resume checked, hparams restored
    run(prepared)                # runs the schedule; writes hparams.json, job.json, ...

`prepare` raises one-line `UserError`s before any TensorFlow work: an unknown backend,
`--backend=estimator` without tf.estimator, TPUs or parameter servers on the native
backend, a resumed `output_dir` trained with other flags, `--hparams` that contradict its
`hparams.json`, a folder none of whose checkpoints reads. A resumed run whose newest
checkpoint is broken (a truncated data file) resumes from the newest one that reads,
setting the broken ones aside (`checkpoint_recovery`). The job is saved as
`<output_dir>/job.json` and read back with `TrainingJob.load(output_dir)` (what a decoder
needs: model, hparams set, problem or task, overrides, data_dir).
"""
import dataclasses
import json
import os
from typing import Any, Callable, Mapping, Optional

import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
from t2t.core import backend_choice
from t2t.core import errors
from t2t.model import decoding_assets
from t2t.model import model_hparams
from t2t.training import backends
from t2t.training import checkpoint_recovery
from t2t.training import run_config as run_config_lib
from t2t.training import trainer_lib

JOB_FILENAME = "job.json"


@dataclasses.dataclass(frozen=True)
class TrainingJob:
    """What to train, where and how: everything a run (and its resume) needs.

    `run_config` holds `run_config.RunConfigSpec` fields (model_dir is `output_dir`),
    `experiment` the `trainer_lib.ExperimentSpec` fields besides model, problem, data_dir
    and steps; `resume_flags` more flags a resumed run must repeat (e.g. a task's
    feature lengths); `t2t_usr_dir` the user's folder of registrations, recorded so the
    trained model loads without the flag (`t2t.load`).
    """
    model_name: str
    hparams_set: str
    output_dir: str
    problem_name: Optional[str] = None
    mixture_or_task_name: Optional[str] = None
    data_dir: Optional[str] = None
    hparams_overrides: str = ""
    backend: str = "auto"
    train_steps: int = 250000
    eval_steps: Optional[int] = 100
    run_config: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    experiment: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    resume_flags: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    t2t_usr_dir: str = ""

    def __post_init__(self):
        if bool(self.problem_name) == bool(self.mixture_or_task_name):
            raise errors.UserError("give --problem or --mixture_or_task_name (one of them)")
        backend_choice.check_backend_name(self.backend)

    @property
    def schedule(self):
        return self.experiment.get("schedule", "train_and_evaluate")

    def run_config_spec(self):
        """The RunConfigSpec of this job (checked: one-line errors for bad values)."""
        return run_config_lib.RunConfigSpec(model_name=self.model_name,
                                            model_dir=self.output_dir, **self.run_config)

    def experiment_spec(self, problem_name=None):
        """The ExperimentSpec of this job (on `problem_name`, default the job's problem)."""
        return trainer_lib.ExperimentSpec(
            model_name=self.model_name, problem_name=problem_name or self.problem_name,
            data_dir=self.data_dir, train_steps=self.train_steps, eval_steps=self.eval_steps,
            **self.experiment)

    def to_json(self):
        return json.dumps(dataclasses.asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text):
        values = json.loads(text)
        names = {field.name for field in dataclasses.fields(cls)}
        return cls(**{name: value for name, value in values.items() if name in names})

    def save(self):
        """Write `<output_dir>/job.json` (atomically)."""
        with atomic_files.atomic_write(os.path.join(self.output_dir, JOB_FILENAME), "w") as out:
            out.write(self.to_json() + "\n")

    @classmethod
    def load(cls, output_dir):
        """The job saved in `output_dir` (None when there is none).

            TrainingJob.load("/run").hparams_set      # "transformer_tiny"
        """
        path = os.path.join(output_dir, JOB_FILENAME)
        if not tf.io.gfile.exists(path):
            return None
        with tf.io.gfile.GFile(path, "r") as job_file:
            text = job_file.read()
        try:
            return cls.from_json(text)
        except (ValueError, TypeError) as error:
            raise errors.UserError("%s is not a t2t job description (%s); delete it to "
                                   "train again" % (path, error)) from None


@dataclasses.dataclass
class PreparedRun:
    """A job with its backend chosen and its hparams made (restored when resuming).

    `problem_name` is the job's, or that of the problem `hparams_fn` attached (a SeqIO task's).
    """
    job: TrainingJob
    backend: str
    hparams: Any
    resuming: bool
    problem_name: Optional[str] = None


def has_checkpoint(model_dir):
    """Whether `model_dir` names a newest checkpoint (readable or not: a resumed run falls
    back to an older one that reads, `checkpoint_recovery`)."""
    state = tf.train.get_checkpoint_state(model_dir)
    return bool(state and state.model_checkpoint_path)


def choose_backend(job):
    """The backend that runs `job` ("estimator" or "native"), logged; one-line errors
    for what the chosen backend cannot run."""
    backend = backend_choice.resolve_backend(job.backend)
    if backend == "native":
        backends.check_native_supported(
            use_tpu=job.run_config.get("use_tpu", False),
            use_tpu_estimator=job.run_config.get("use_tpu_estimator", False),
            cluster=run_config_lib.tf_config().get("cluster"), schedule=job.schedule)
    logging.info("Training backend: %s (--backend=%s, TensorFlow %s)", backend, job.backend,
                 tf.__version__)
    return backend


def prepare(job: TrainingJob, hparams_fn: Optional[Callable[[Optional[str]], Any]] = None):
    """Choose the backend, check a resumed output_dir, make the hparams.

    `hparams_fn(hparams_path_or_None)` makes the hparams instead of
    `trainer_lib.create_hparams` (SeqIO tasks attach their problem so).
    """
    backend = choose_backend(job)
    if backend == "native":
        from t2t.training.native import strategies
        strategies.ensure_cpu_devices(job.run_config.get("num_gpus", 1))
    hparams_path = os.path.join(job.output_dir, trainer_lib.HPARAMS_FILENAME)
    # A folder without a checkpoint holds no run to resume (e.g. a first run that stopped
    # before training): its saved hparams.json and flags are replaced, not enforced.
    resuming = has_checkpoint(job.output_dir)
    if resuming:
        trainer_lib.check_resume_flags(job.output_dir, model=job.model_name,
                                       hparams_set=job.hparams_set, problem=job.problem_name,
                                       **job.resume_flags)
    elif os.path.exists(hparams_path):
        logging.info("%s has no checkpoint: starting a new run there", job.output_dir)
    restore_from = hparams_path if resuming else None
    if hparams_fn is not None:
        hparams = hparams_fn(restore_from)
    else:
        hparams = trainer_lib.create_hparams(job.hparams_set, job.hparams_overrides,
                                             hparams_path=restore_from, strict_resume=True)
    problem_name = job.problem_name
    if not problem_name:
        problem_name = model_hparams.attached_problem(
            hparams, "a job without --problem (its hparams_fn)").name
    if resuming and job.schedule in backends.TRAINING_SCHEDULES:
        # After the flags and hparams checks: a run that stops there moves no files.
        checkpoint_recovery.resume_from_readable(job.output_dir,
                                                 is_chief=run_config_lib.is_chief())
    return PreparedRun(job, backend, hparams, resuming, problem_name)


def make_experiment(prepared: PreparedRun, exporters_fn=None, decode_hparams=None):
    """(experiment, is_chief): a T2TExperiment or a NativeExperiment for the job.

    `exporters_fn(backend)` gives more exporters, called after each evaluation on either
    backend (SeqIO tasks add their task metrics so); `decode_hparams` those of the
    experiment's decodes.
    """
    job, hparams = prepared.job, prepared.hparams
    spec = job.experiment_spec(problem_name=prepared.problem_name)
    changes = {}
    if decode_hparams is not None:
        changes["decode_hparams"] = decode_hparams
    if exporters_fn is not None:
        changes["additional_exporters"] = (list(spec.additional_exporters or []) +
                                           list(exporters_fn(prepared.backend)))
    spec = dataclasses.replace(spec, **changes)
    if prepared.backend == "estimator":
        run_config = run_config_lib.run_config_from_spec(job.run_config_spec())
        experiment = trainer_lib.experiment_from_spec(run_config, hparams, spec)
        return experiment, trainer_lib.is_chief(run_config)
    from t2t.training.native import experiment as native_experiment_lib
    experiment = native_experiment_lib.native_experiment(job.run_config_spec(), hparams, spec)
    return experiment, experiment.placement.is_chief


def run(prepared: PreparedRun, flags_text=None, t2t_flags_text=None, exporters_fn=None,
        decode_hparams=None):
    """Run the job's schedule; the chief first writes hparams.json, flags.txt and job.json,
    and for a problem (not a SeqIO task) `t2t_model.json` with copies of the vocabulary
    files, so the folder decodes without the data (`model.decoding_assets`).

    Returns what the schedule returns (the last evaluation's metrics, or None).
    """
    job = prepared.job
    experiment, is_chief = make_experiment(prepared, exporters_fn, decode_hparams)
    if is_chief and job.schedule != "run_std_server":
        trainer_lib.save_metadata(job.output_dir, prepared.hparams, flags_text=flags_text,
                                  t2t_flags_text=t2t_flags_text)
        if job.problem_name:
            decoding_assets.save_decoding_assets(
                job.output_dir, prepared.hparams, job.model_name, job.hparams_set,
                hparams_overrides=job.hparams_overrides, t2t_usr_dir=job.t2t_usr_dir)
        job.save()
    logging.info("Running schedule %s on %s in %s (%s backend)", job.schedule,
                 job.problem_name or job.mixture_or_task_name, job.output_dir, prepared.backend)
    result = getattr(experiment, job.schedule)()
    if isinstance(result, dict):
        logging.info("%s finished: %s", job.schedule, ", ".join(
            "%s %s" % (name, result[name]) for name in sorted(result)))
    return result
