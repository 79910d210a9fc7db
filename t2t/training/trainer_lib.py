"""Library of training functions: hparams, run configs, estimators and experiments.

The trainer (`t2t-trainer`) is a thin layer over these; they can be called directly:

    hparams = create_hparams("transformer_tiny", "num_hidden_layers=1",
                             data_dir="/data", problem_name="algorithmic_reverse_binary40")
    run_config = create_run_config("transformer", model_dir="/tmp/run",
                                   save_checkpoints_steps=100)
    exp = create_experiment(run_config, hparams, "transformer",
                            "algorithmic_reverse_binary40", "/data",
                            train_steps=500, eval_steps=10, min_eval_frequency=100)
    save_metadata("/tmp/run", hparams)       # hparams.json (and flags.txt when given flags)
    exp.continuous_train_and_eval()          # {"loss": ..., "global_step": 500, ...}

Resuming: a second run with the same output dir restores the latest checkpoint (the
Estimator does) and, through `create_hparams(..., hparams_path=<output_dir>/hparams.json)`,
the saved hparams. For training (`strict_resume=True`, what t2t-trainer passes), overrides
that disagree with the saved values stop the run:

    create_hparams("transformer_tiny", "num_hidden_layers=2",
                   hparams_path="/tmp/run/hparams.json", strict_resume=True)
    # UserError: --hparams disagree with /tmp/run/hparams.json: num_hidden_layers 1 -> 2; ...

Schedules, hooks and early stopping live in `t2t.training.experiment`; RunConfigs in
`t2t.training.run_config`. Both are re-exported here under T2T's names.
"""
import dataclasses
import inspect
import json
import os
from typing import Any, Optional, Sequence

import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
from t2t.core import errors
from t2t.core import hparam
from t2t.core import registry
from t2t.core.random_seed import set_random_seed  # noqa: F401  (T2T's trainer_lib name)
from t2t.core.modes import ModeKeys
from t2t.model import model_hparams
from t2t.model import t2t_model
from t2t.training import backends
from t2t.training import checkpoint_recovery
from t2t.training import eval_events
from t2t.training import run_config as run_config_lib

# T2T's public names, defined in the split-out modules.
create_run_config = run_config_lib.create_run_config
create_session_config = run_config_lib.create_session_config
is_chief = run_config_lib.is_chief
next_checkpoint = eval_events.next_checkpoint
has_metric_plateaued = eval_events.has_metric_plateaued
add_problem_hparams = model_hparams.add_problem_hparams
copy_hparams = model_hparams.copy_hparams



def __getattr__(name):
    # T2TExperiment lives with the Estimator backend, imported only when asked for (the
    # rest of this module works where TensorFlow has no tf.estimator).
    if name == "T2TExperiment":
        from t2t.training import experiment as experiment_lib
        return experiment_lib.T2TExperiment
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


HPARAMS_FILENAME = "hparams.json"
FLAGS_FILENAME = "flags.txt"
T2T_FLAGS_FILENAME = "flags_t2t.txt"

# Hparams holding functions per feature: written to JSON as strings, never read back (T2T).
_UNSERIALIZABLE_HPARAMS = ("bottom", "loss", "name", "top", "weights_fn")


# ----------------------------------------------------------------------------
# Hparams
# ----------------------------------------------------------------------------
def _display(value):
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _load_json(json_path):
    try:
        with tf.io.gfile.GFile(json_path, "r") as json_file:
            values = json.load(json_file)
    except ValueError as error:
        raise errors.UserError("%s is not valid JSON (%s); delete it or restore it from a "
                               "backup" % (json_path, error)) from None
    if not isinstance(values, dict):
        raise errors.UserError("%s must hold a JSON object of hparams" % json_path)
    return values


def create_hparams_from_json(json_path, hparams=None):
    """Hparams from a saved hparams.json; with `hparams`, its values are updated in place.

    Only names that `hparams` already has are taken (run settings such as `train_steps`
    that the trainer adds are left out); the per-feature function dicts (`bottom`, `top`,
    `loss`, `name`, `weights_fn`) are never read back.

        hp = create_hparams_from_json("/run/hparams.json", registry.hparams("transformer_tiny"))
    """
    logging.info("Loading hparams from %s", json_path)
    values = _load_json(json_path)
    for name in _UNSERIALIZABLE_HPARAMS:
        values.pop(name, None)
    if hparams is None:
        return hparam.HParams(**values)
    for name in sorted(values):
        if name not in hparams:
            continue
        old_value, new_value = getattr(hparams, name), values[name]
        if old_value == new_value:
            continue
        try:
            hparams.set_hparam(name, new_value)
        except ValueError as error:
            raise errors.UserError("%s: %s; the hparams set no longer matches the saved run, "
                                   "use a new --output_dir" % (json_path, error)) from None
        logging.info("Restored hparam %s: %s -> %s", name, old_value, new_value)
    return hparams


def hparams_differences(old_values, new_values):
    """["name old -> new", ...] for names in both dicts whose values differ, sorted.

        hparams_differences({"a": 1, "b": "x"}, {"a": 2, "b": "x", "c": 3})   # ["a 1 -> 2"]
    """
    return ["%s %s -> %s" % (name, _display(old_values[name]), _display(new_values[name]))
            for name in sorted(set(old_values) & set(new_values))
            if old_values[name] != new_values[name]]


def create_hparams(hparams_set, hparams_overrides_str="", data_dir=None, problem_name=None,
                   hparams_path=None, strict_resume=False):
    """The registered hparams set, with saved values, overrides, data_dir and problem.

    Args:
      hparams_set: a registered hparams set name ("transformer_tiny").
      hparams_overrides_str: "name=value,..." overrides.
      data_dir: added as `hparams.data_dir` when given.
      problem_name: attaches `hparams.problem` and `hparams.problem_hparams`.
      hparams_path: a saved hparams.json; when it exists its values are restored before
        the overrides are applied.
      strict_resume: with a restored hparams.json, an override that disagrees with a saved
        value is an error naming each difference (training must resume the same model);
        otherwise (T2T's behaviour, e.g. for decoding) overrides win and are logged.

    Raises:
      registry.UnknownNameError: unknown hparams set or problem.
      errors.UserError: a malformed or unknown override, or (strict_resume) overrides that
        disagree with `hparams_path`.
    """
    if not hparams_set:
        raise errors.UserError("--hparams_set is required; see --registry_help for the names")
    hparams = registry.hparams(hparams_set)
    restored = bool(hparams_path) and tf.io.gfile.exists(hparams_path)
    if restored:
        hparams = create_hparams_from_json(hparams_path, hparams)
    if hparams_overrides_str:
        logging.info("Overriding hparams in %s with %s", hparams_set, hparams_overrides_str)
        before = hparams.values()
        try:
            hparams.parse(hparams_overrides_str)
        except hparam.UnknownHParamNameError as error:
            raise errors.UserError("--hparams=%r: %s (hparams set %s)" % (
                hparams_overrides_str, error.user_message(), hparams_set)) from None
        except ValueError as error:
            raise errors.UserError("--hparams=%r: %s" % (hparams_overrides_str, error)) from None
        differences = hparams_differences(before, hparams.values()) if restored else []
        if differences and not strict_resume:
            logging.warning("--hparams change values saved in %s: %s", hparams_path,
                            ", ".join(differences))
        elif differences:
            raise errors.UserError(
                "--hparams disagree with %s: %s; drop those overrides to resume with the "
                "saved values, or use a new --output_dir" % (hparams_path,
                                                             ", ".join(differences)))
    if data_dir:
        _set_or_add(hparams, "data_dir", data_dir)
    if problem_name:
        add_problem_hparams(hparams, problem_name)
    return hparams


def _set_or_add(hparams, name, value):
    if name in hparams:
        hparams.set_hparam(name, value)
    else:
        hparams.add_hparam(name, value)


# ----------------------------------------------------------------------------
# Run metadata: hparams.json, flags.txt, and what the output dir was trained with
# ----------------------------------------------------------------------------
def _atomic_write(path, text):
    """Write `text` to `path` under a temporary name, then rename (never a partial file).

    The file gets the permissions a plain open() would give it (the umask), as every
    other file of a run does.
    """
    with atomic_files.atomic_write(path, "w") as out:
        out.write(text)


def save_metadata(output_dir, hparams, flags_text=None, t2t_flags_text=None):
    """Write hparams.json (and flags.txt / flags_t2t.txt when given) into `output_dir`.

        save_metadata("/run", hparams, flags_text="--model=transformer\\n")
        sorted(os.listdir("/run"))       # ["flags.txt", "hparams.json"]
    """
    if flags_text is not None:
        _atomic_write(os.path.join(output_dir, FLAGS_FILENAME), flags_text)
    if t2t_flags_text is not None:
        _atomic_write(os.path.join(output_dir, T2T_FLAGS_FILENAME), t2t_flags_text)
    _atomic_write(os.path.join(output_dir, HPARAMS_FILENAME),
                  hparams.to_json(indent=0, sort_keys=True))


def read_saved_flag_lines(output_dir):
    """The lines of `<output_dir>/flags.txt`, stripped ([] when there is none); booleans are
    saved as `--name` / `--noname`, other flags as `--name=value`."""
    path = os.path.join(output_dir, FLAGS_FILENAME)
    if not tf.io.gfile.exists(path):
        return []
    with tf.io.gfile.GFile(path, "r") as flags_file:
        return [line.strip() for line in flags_file]


def read_saved_flags(output_dir):
    """{flag name: value} from `<output_dir>/flags.txt` ({} when there is none)."""
    saved = {}
    for line in read_saved_flag_lines(output_dir):
        if line.startswith("--") and "=" in line:
            name, value = line[2:].split("=", 1)
            saved[name] = value
    return saved


def check_resume_flags(output_dir, **requested):
    """Stop when `output_dir` was trained with another model, hparams set or problem.

        check_resume_flags("/run", model="lstm_seq2seq", hparams_set="lstm_seq2seq")
        # UserError: /run was trained with --model=transformer, not lstm_seq2seq; ...
    """
    saved = read_saved_flags(output_dir)
    differences = ["--%s=%s, not %s" % (name, saved[name], value)
                   for name, value in sorted(requested.items())
                   if value and saved.get(name) and saved[name] != value]
    if differences:
        raise errors.UserError("%s was trained with %s; use a new --output_dir or the same "
                               "flags" % (output_dir, "; ".join(differences)))


# ----------------------------------------------------------------------------
# Estimators and experiments
# ----------------------------------------------------------------------------
def _counting_model_fn(model_fn, count_tokens):
    """Wrap an Estimator model_fn so TRAIN records each replica's tokens and loss."""

    from t2t.training import experiment as experiment_lib

    def model_fn_with_counters(features, labels, mode, params=None, config=None):
        if mode == ModeKeys.TRAIN and count_tokens:
            tf.compat.v1.add_to_collection(experiment_lib.TOKENS_COLLECTION,
                                           experiment_lib.count_tokens(features))
            tf.compat.v1.add_to_collection(experiment_lib.EXAMPLES_COLLECTION,
                                           experiment_lib.count_examples(features))
        spec = model_fn(features, labels, mode, params=params, config=config)
        if mode == ModeKeys.TRAIN and getattr(spec, "loss", None) is not None:
            if count_tokens:
                tf.compat.v1.add_to_collection(experiment_lib.LOSS_COLLECTION, spec.loss)
        return spec

    return model_fn_with_counters


def create_estimator(model_name, hparams, run_config, schedule="train_and_evaluate",
                     decode_hparams=None, use_tpu=False, use_tpu_estimator=False,
                     use_xla=False, export_saved_model_api_version=1,
                     use_guarantee_const_getter=False):
    """An Estimator for the registered model; a TPUEstimator with use_tpu(_estimator).

    With `use_tpu_estimator` and not `use_tpu`, the TPUEstimator runs on CPU/GPU, which is
    how the TPU path is tested; the model then builds its CPU/GPU specs, as in T2T (its TPU
    optimizer sums gradients with `CrossReplicaSum`, which only runs on TPUs). The batch
    size is `problem.tpu_batch_size_per_shard(hparams) * num_shards`.
    """
    del use_guarantee_const_getter
    if use_xla:
        logging.info("Compiling the model function with XLA (--xla_compile)")
    model_fn = t2t_model.T2TModel.make_estimator_model_fn(
        model_name, hparams, decode_hparams=decode_hparams, use_tpu=use_tpu, use_xla=use_xla)
    # On a real TPU the features live inside the TPU computation and cannot be fetched.
    model_fn = _counting_model_fn(model_fn, count_tokens=not use_tpu)
    if not (use_tpu or use_tpu_estimator):
        # params={}: the model_fn takes `params`; None would make the Estimator warn.
        return tf.estimator.Estimator(model_fn=model_fn, model_dir=run_config.model_dir,
                                      config=run_config, params={})
    problem = model_hparams.attached_problem(hparams, "create_estimator with a TPUEstimator")
    batch_size = problem.tpu_batch_size_per_shard(hparams) * run_config.tpu_config.num_shards
    predict_batch_size = batch_size
    if decode_hparams is not None and decode_hparams.get("batch_size"):
        predict_batch_size = decode_hparams.batch_size
    tpu = tf.compat.v1.estimator.tpu
    # The enum is not in the public API; TPUEstimator's own module holds it.
    from tensorflow_estimator.python.estimator.tpu import tpu_estimator as tpu_estimator_lib
    versions = tpu_estimator_lib.ExportSavedModelApiVersion
    api_version = versions.V2 if export_saved_model_api_version == 2 else versions.V1
    del schedule  # T2T sized eval batches only for eval schedules; always sizing them is safe.
    return tpu.TPUEstimator(model_fn=model_fn, model_dir=run_config.model_dir,
                            config=run_config, use_tpu=use_tpu, train_batch_size=batch_size,
                            eval_batch_size=batch_size, predict_batch_size=predict_batch_size,
                            export_saved_model_api_version=api_version)


def create_hooks(use_dbgprofile=False, dbgprofile_kwargs=None, use_early_stopping=False,
                 early_stopping_kwargs=None, log_step_count_steps=100, model_name="model",
                 eval_steps=None):
    """(train_hooks, eval_hooks): progress logging, profiling and early stopping."""
    from t2t.training import experiment as experiment_lib
    train_hooks = [experiment_lib.TrainingLogHook(
        every_n_steps=log_step_count_steps, description="train %s" % model_name)]
    eval_hooks = [experiment_lib.EvalStartHook(eval_steps)]
    if use_dbgprofile:
        kwargs = dict(save_steps=10, show_dataflow=True, show_memory=True)
        kwargs.update(dbgprofile_kwargs or {})
        train_hooks.append(tf.compat.v1.train.ProfilerHook(**kwargs))
    if use_early_stopping:
        train_hooks.append(experiment_lib.EarlyStoppingHook(**(early_stopping_kwargs or {})))
    return train_hooks, eval_hooks


@dataclasses.dataclass(frozen=True)
class ExperimentSpec:
    """What a T2TExperiment is made from besides its RunConfig and hparams: T2T's
    `create_experiment` arguments after those two, in T2T's order, with T2T's defaults,
    checked when the spec is made.

        spec = ExperimentSpec("transformer", "algorithmic_reverse_binary40_test", "/data",
                              train_steps=2000, eval_steps=10, schedule="train")
        experiment = experiment_from_spec(run_config, hparams, spec)
        ExperimentSpec("transformer", "p", "/data", train_steps=0, eval_steps=10)
        # UserError: --train_steps=0: give a positive number of steps

    Early stopping is on when `eval_early_stopping_steps` is set: training stops once
    `eval_early_stopping_metric` (default "loss") has not improved by
    `eval_early_stopping_metric_delta` (default 0.1) over that many steps.
    `decode_from_file`, `decode_to_file` and `decode_reference` are accepted for T2T's
    signature (t2t-decoder takes them).
    """
    model_name: str
    problem_name: str
    data_dir: Optional[str]
    train_steps: int
    eval_steps: Optional[int]
    min_eval_frequency: int = 2000
    eval_throttle_seconds: int = 600
    schedule: str = "train_and_evaluate"
    export: bool = False
    decode_hparams: Any = None
    use_tfdbg: bool = False
    use_dbgprofile: bool = False
    eval_early_stopping_steps: Optional[int] = None
    eval_early_stopping_metric: Optional[str] = None
    eval_early_stopping_metric_delta: Optional[float] = None
    eval_early_stopping_metric_minimize: bool = True
    eval_timeout_mins: int = 240
    eval_use_test_set: bool = False
    use_tpu: bool = False
    use_tpu_estimator: bool = False
    use_xla: bool = False
    export_saved_model_api_version: int = 1
    use_guarantee_const_getter: bool = False
    additional_train_hooks: Optional[Sequence[Any]] = None
    additional_eval_hooks: Optional[Sequence[Any]] = None
    warm_start_from: Optional[str] = None
    decode_from_file: str = ""
    decode_to_file: str = ""
    decode_reference: str = ""
    std_server_protocol: Optional[str] = None
    log_step_count_steps: Optional[int] = None
    # t2t: more tf.estimator.Exporters, called after each evaluation (e.g. the SeqIO
    # task metrics of t2t.seqio_training).
    additional_exporters: Optional[Sequence[Any]] = None

    def __post_init__(self):
        if self.use_tfdbg:
            raise errors.UserError("--tfdbg is not supported by t2t (TF 2 has no tfdbg CLI); "
                                   "drop the flag")
        if self.export:
            raise errors.UserError("--export_saved_model is deprecated; use t2t-exporter")
        if not self.train_steps or self.train_steps < 0:
            raise errors.UserError("--train_steps=%s: give a positive number of steps" %
                                   self.train_steps)
        if self.eval_steps is not None and self.eval_steps <= 0:
            raise errors.UserError("--eval_steps=%s: give a positive number of batches" %
                                   self.eval_steps)
        if self.schedule not in backends.SCHEDULES:
            raise errors.UserError("--schedule=%r is not a schedule; use one of %s" %
                                   (self.schedule, ", ".join(backends.SCHEDULES)))


def create_experiment(run_config, hparams, *args, **kwargs):
    """A T2TExperiment: estimator, input functions, hooks and specs for the schedules.

    Takes T2T's arguments: `run_config`, `hparams`, then those of `ExperimentSpec`
    (positionally or by name), e.g.

        create_experiment(run_config, hparams, "transformer", "algorithmic_identity_binary40",
                          "/data", train_steps=1000, eval_steps=10)
    """
    return experiment_from_spec(run_config, hparams, ExperimentSpec(*args, **kwargs))


create_experiment.__signature__ = inspect.Signature(
    [inspect.Parameter("run_config", inspect.Parameter.POSITIONAL_OR_KEYWORD),
     inspect.Parameter("hparams", inspect.Parameter.POSITIONAL_OR_KEYWORD)] +
    list(inspect.signature(ExperimentSpec).parameters.values()))


def add_run_settings(hparams, model_dir, spec: ExperimentSpec):
    """Add the run settings to `hparams` (model_dir, data_dir, train_steps, eval_steps,
    schedule, warm_start_from, std_server_protocol, eval_freq_in_steps, eval_timeout_mins),
    attach the problem, and give decode_hparams a decode_path; both backends call it.
    Returns the problem, which the experiment takes as an argument.

        problem = add_run_settings(hparams, "/run", spec)
        hparams.model_dir, problem.name    # "/run", spec.problem_name
    """
    for name, value in (("model_dir", model_dir), ("data_dir", spec.data_dir),
                        ("train_steps", spec.train_steps), ("eval_steps", spec.eval_steps),
                        ("schedule", spec.schedule), ("warm_start_from", spec.warm_start_from),
                        ("std_server_protocol", spec.std_server_protocol),
                        ("eval_freq_in_steps", spec.min_eval_frequency),
                        ("eval_timeout_mins", spec.eval_timeout_mins)):
        _set_or_add(hparams, name, value)
    problem = model_hparams.attached_problem(hparams)
    if problem is None or spec.problem_name != problem.name:
        add_problem_hparams(hparams, spec.problem_name)
        problem = model_hparams.attached_problem(hparams)
    decode_hparams = spec.decode_hparams
    if decode_hparams is not None and "decode_path" not in decode_hparams:
        decode_hparams.add_hparam("decode_path", os.path.join(model_dir, "decode"))
    return problem


def experiment_from_spec(run_config, hparams, spec: ExperimentSpec):
    """The T2TExperiment an `ExperimentSpec` describes, on `run_config` and `hparams`.

    Adds the run settings to `hparams` (model_dir, data_dir, train_steps, eval_steps,
    schedule, warm_start_from, std_server_protocol, eval_freq_in_steps, eval_timeout_mins)
    and attaches the problem.
    """
    from t2t.training import experiment as experiment_lib
    model_name, data_dir = spec.model_name, spec.data_dir
    train_steps, eval_steps, schedule = spec.train_steps, spec.eval_steps, spec.schedule
    min_eval_frequency, use_tpu = spec.min_eval_frequency, spec.use_tpu
    eval_timeout_mins, decode_hparams = spec.eval_timeout_mins, spec.decode_hparams
    if use_tpu and run_config.tpu_config.num_shards > 8 and "eval" in schedule:
        raise errors.UserError("evaluation on a TPU pod (--tpu_num_shards > 8) is not "
                               "supported; use --schedule=train")
    problem = add_run_settings(hparams, run_config.model_dir, spec)

    estimator = create_estimator(
        model_name, hparams, run_config, schedule=schedule, decode_hparams=decode_hparams,
        use_tpu=use_tpu, use_tpu_estimator=spec.use_tpu_estimator, use_xla=spec.use_xla,
        export_saved_model_api_version=spec.export_saved_model_api_version,
        use_guarantee_const_getter=spec.use_guarantee_const_getter)

    train_input_fn = _resumed_input_fn(
        problem.make_estimator_input_fn(ModeKeys.TRAIN, hparams, data_dir=data_dir),
        run_config, use_tpu or spec.use_tpu_estimator)
    eval_name = "test" if spec.eval_use_test_set else None
    eval_input_fn = problem.make_estimator_input_fn(
        ModeKeys.EVAL, hparams, data_dir=data_dir,
        dataset_kwargs={"dataset_split": "test" if spec.eval_use_test_set else None})

    use_early_stopping = bool(spec.eval_early_stopping_steps)
    early_stopping_kwargs = dict(
        eval_dir=estimator.eval_dir(eval_name),
        metric=spec.eval_early_stopping_metric or "loss",
        num_plateau_steps=spec.eval_early_stopping_steps,
        plateau_delta=(0.1 if spec.eval_early_stopping_metric_delta is None
                       else spec.eval_early_stopping_metric_delta),
        plateau_decrease=spec.eval_early_stopping_metric_minimize,
        every_n_steps=min_eval_frequency or run_config.save_checkpoints_steps or 100)
    train_hooks, eval_hooks = create_hooks(
        use_dbgprofile=spec.use_dbgprofile,
        dbgprofile_kwargs={"output_dir": run_config.model_dir},
        use_early_stopping=use_early_stopping, early_stopping_kwargs=early_stopping_kwargs,
        log_step_count_steps=spec.log_step_count_steps or run_config.log_step_count_steps or 100,
        model_name=model_name, eval_steps=eval_steps)
    train_hooks += list(spec.additional_train_hooks or [])
    eval_hooks += list(spec.additional_eval_hooks or [])
    # The stop listener before tf.estimator's own (train_and_evaluate appends its
    # evaluation listener): a checkpoint saved for a signal is not evaluated.
    train_hooks.append(experiment_lib.StopOnSignalHook())
    training_log = next((hook for hook in train_hooks
                         if isinstance(hook, experiment_lib.TrainingLogHook)), None)
    saving_listeners = [experiment_lib.CheckpointLogListener(),
                        experiment_lib.StopOnSignalListener(run_config.model_dir,
                                                            training_log=training_log)]
    saves = run_config.save_checkpoints_steps or run_config.save_checkpoints_secs
    # A caller's own saver (in additional_train_hooks) is the one the Estimator uses.
    callers_saver = any(isinstance(hook, tf.compat.v1.train.CheckpointSaverHook)
                        for hook in train_hooks)
    if saves and run_config.is_chief and not (use_tpu or spec.use_tpu_estimator or
                                              callers_saver):
        train_hooks.append(experiment_lib.checkpoint_saver_hook(run_config))
    timed_secs = getattr(run_config, "t2t_save_checkpoints_secs", None)
    if timed_secs and run_config.is_chief:
        timed = experiment_lib.TimedCheckpointHook(run_config.model_dir, timed_secs)
        train_hooks.append(timed)
        saving_listeners.append(timed.listener)

    train_spec = tf.estimator.TrainSpec(
        train_input_fn, max_steps=train_steps, hooks=train_hooks,
        saving_listeners=saving_listeners)
    eval_spec = tf.estimator.EvalSpec(
        eval_input_fn, steps=eval_steps, hooks=eval_hooks, name=eval_name,
        exporters=[experiment_lib.EvalResultLogger()] + list(spec.additional_exporters or []),
        # T2T waited 120 s before a first evaluation; never longer than the throttle.
        start_delay_secs=0 if schedule == "evaluate" else min(120, spec.eval_throttle_seconds),
        throttle_secs=spec.eval_throttle_seconds)
    return experiment_lib.T2TExperiment(
        estimator, hparams, train_spec, eval_spec, use_validation_monitor=False,
        decode_hparams=decode_hparams, eval_name=eval_name, eval_timeout_mins=eval_timeout_mins,
        problem=problem)


def _resumed_input_fn(input_fn, run_config, on_tpu):
    """The training `input_fn`, past the batches the checkpoint it resumes from trained on
    (`checkpoint_recovery.skip_trained_batches`; seeded runs). Each step takes one batch
    per replica of its MirroredStrategy. The tasks of a cluster train asynchronously and
    TPU hosts read their own partitions: their global step does not say which batches
    were trained on, so they start from the first one (as T2T did)."""
    if on_tpu or run_config_lib.is_distributed():
        return input_fn
    strategy = run_config.train_distribute
    replicas = strategy.num_replicas_in_sync if strategy is not None else 1

    def resumed_input_fn(params, config):
        return checkpoint_recovery.skip_trained_batches(
            input_fn(params, config), checkpoint_recovery.resume_step(run_config.model_dir),
            replicas, run_config.tf_random_seed)

    return resumed_input_fn


def create_experiment_fn(*args, **kwargs):
    """`experiment_fn(run_config, hparams)` calling create_experiment with these arguments."""

    def experiment_fn(run_config, hparams):
        return create_experiment(run_config, hparams, *args, **kwargs)

    return experiment_fn


def restore_checkpoint(ckpt_dir, saver, sess, must_restore=False):
    """Restore the latest checkpoint of `ckpt_dir` into `sess`; returns its global step.

    Returns 0 when there is none, unless `must_restore` (then a UserError).
    """
    ckpt = tf.train.get_checkpoint_state(ckpt_dir)
    if must_restore and not (ckpt and ckpt.model_checkpoint_path):
        raise errors.UserError("no checkpoint in %s; train first or give the right "
                               "--output_dir / --checkpoint_path" % ckpt_dir)
    if not (ckpt and ckpt.model_checkpoint_path):
        return 0
    path = ckpt.model_checkpoint_path
    if not os.path.isabs(path) and "://" not in path:
        path = os.path.join(ckpt_dir, path)
    logging.info("Restoring checkpoint %s", path)
    saver.restore(sess, path)
    return eval_events.checkpoint_step(path) or 0
