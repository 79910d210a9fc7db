"""t2t-trainer: train and evaluate a registered model on a registered problem.

    t2t-trainer --problem=algorithmic_reverse_binary40 --model=transformer \\
        --hparams_set=transformer_tiny --hparams='num_hidden_layers=1' \\
        --data_dir=~/t2t_data --output_dir=~/t2t_train/reverse --train_steps=2000 \\
        --generate_data
    # I train transformer: step 100, loss 0.8123 (mean of 100 steps), 21.4 steps/s, ...
    # I train transformer done: 2,000 steps, 2,000 final step, 20.9 steps/s, ...

On a SeqIO Task or Mixture (registered by --module_import modules or --t2t_usr_dir):

    t2t-trainer --mixture_or_task_name=my_mix --module_import=my_project.tasks \\
        --task_feature_lengths=inputs=256,targets=128 --model=transformer \\
        --hparams_set=transformer_base --output_dir=~/t2t_train/mix \\
        --schedule=train_and_evaluate --train_steps=20000
    # packed rows (--nopack pads); each evaluation also decodes every task's validation
    # split: <output_dir>/inference_eval/<task>-metrics.jsonl and TensorBoard events

Rerunning the same command resumes from the latest checkpoint with the hparams saved in
`<output_dir>/hparams.json`; an override that disagrees with them is a one-line error.
`--hp_NAME VALUE` arguments are appended to --hparams (`--hp_learning_rate 0.2`). Several
machines: set TF_CONFIG on each (chief, workers, ps, evaluator) and use
--schedule=train_and_evaluate. Errors a user can fix are one line on stderr, exit 2.

Checkpoints come every --local_eval_frequency steps and every --save_checkpoints_secs
seconds (600), whichever first. SIGTERM (how schedulers stop jobs) or Ctrl-C saves one at
the current step and exits with the shell's code for the signal, 143 or 130:

    # W Received SIGTERM: saving a checkpoint at the current step, then stopping (...)
    t2t-trainer: stopped by SIGTERM at step 1,234; saved ~/t2t_train/reverse/model.ckpt-1234:
    rerun the same command to resume

A second signal ends it at once. A resumed run whose newest checkpoint cannot be read
(a truncated file) resumes from the newest one that can, and says which it skipped.

Also runnable as `python -m t2t.bin.t2t_trainer`. This file reads the flags and calls
`t2t.training.runner` (which picks the backend: --backend=auto|estimator|native).
"""
import os
import sys

from absl import flags, logging

from t2t.bin import cli
from t2t.bin import flags as t2t_flags  # noqa: F401  (defines the trainer flags)
from t2t.core import errors
from t2t.core import random_seed, usr_dir
from t2t.training import stop_signals  # noqa: E402  (no TensorFlow import)

FLAGS = flags.FLAGS

HP_PREFIX = "--hp_"


def split_hp_args(argv):
    """Take `--hp_NAME VALUE` / `--hp_NAME=VALUE` out of argv: (other args, overrides).

        split_hp_args(["t2t-trainer", "--model=m", "--hp_dropout", "0.3", "--hp_x=1"])
        # (["t2t-trainer", "--model=m"], "dropout=0.3,x=1")
    """
    rest, pairs = [], []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg.startswith(HP_PREFIX):
            name = arg[len(HP_PREFIX):]
            if "=" in name:
                name, value = name.split("=", 1)
            elif index + 1 < len(argv):
                value = argv[index + 1]
                index += 1
            else:
                raise errors.UserError("%s needs a value: %s VALUE or %s=VALUE" % (arg, arg, arg))
            if not name:
                raise errors.UserError("%r: give the hparam name, e.g. --hp_dropout 0.1" % arg)
            pairs.append("%s=%s" % (name, value))
        else:
            rest.append(arg)
        index += 1
    return rest, ",".join(pairs)


def set_hparams_from_args(args):
    """T2T's name: fold `--hp_NAME VALUE` pairs in `args` into FLAGS.hparams."""
    _, overrides = split_hp_args([""] + list(args))
    FLAGS.hparams = join_overrides(FLAGS.hparams, overrides)


def join_overrides(*overrides):
    """"a=1", "", "b=2" -> "a=1,b=2"."""
    return ",".join(part.strip(",") for part in overrides if part and part.strip(","))


def _require(name):
    value = getattr(FLAGS, name)
    if not value:
        raise errors.UserError("--%s is required; see --helpfull (and --registry_help for the "
                               "registered names)" % name)
    return value


def output_dir():
    return os.path.abspath(os.path.expanduser(_require("output_dir")))


def data_dir():
    return os.path.abspath(os.path.expanduser(FLAGS.data_dir)) if FLAGS.data_dir else None


def generate_data():
    """--generate_data: write the problem's data (existing files are kept)."""
    from t2t.datagen import datagen
    if not FLAGS.data_dir:
        raise errors.UserError("--generate_data needs --data_dir")
    seed = FLAGS.random_seed if FLAGS.random_seed is not None else datagen.DEFAULT_RANDOM_SEED
    datagen.generate_problems([FLAGS.problem], data_dir(), os.path.expanduser(FLAGS.tmp_dir),
                              random_seed=seed, num_concurrent_processes=1,
                              t2t_usr_dir=FLAGS.t2t_usr_dir)


def run_config_flag_kwargs():
    """The RunConfigSpec fields set by flags (model_name and model_dir come from the job)."""
    save_ckpt_steps = FLAGS.local_eval_frequency
    if FLAGS.use_tpu or FLAGS.use_tpu_estimator:
        # A TPU training loop can only stop (and checkpoint) at a loop boundary.
        save_ckpt_steps = max(FLAGS.iterations_per_loop, save_ckpt_steps)
    save_ckpt_secs = FLAGS.save_checkpoints_secs or None  # besides the steps
    return dict(
        master=FLAGS.master,
        iterations_per_loop=FLAGS.iterations_per_loop,
        num_shards=FLAGS.tpu_num_shards,
        log_device_placement=FLAGS.log_device_placement,
        save_checkpoints_steps=save_ckpt_steps,
        save_checkpoints_secs=save_ckpt_secs,
        keep_checkpoint_max=FLAGS.keep_checkpoint_max,
        keep_checkpoint_every_n_hours=FLAGS.keep_checkpoint_every_n_hours,
        num_gpus=FLAGS.worker_gpu,
        gpu_order=FLAGS.gpu_order,
        num_async_replicas=FLAGS.worker_replicas,
        gpu_mem_fraction=FLAGS.worker_gpu_memory_fraction,
        enable_graph_rewriter=FLAGS.enable_graph_rewriter,
        use_tpu=FLAGS.use_tpu,
        use_tpu_estimator=FLAGS.use_tpu_estimator,
        xla_jit_level=FLAGS.xla_jit_level,
        schedule=FLAGS.schedule,
        random_seed=FLAGS.random_seed,
        tpu_infeed_sleep_secs=FLAGS.tpu_infeed_sleep_secs,
        inter_op_parallelism_threads=FLAGS.inter_op_parallelism_threads,
        intra_op_parallelism_threads=FLAGS.intra_op_parallelism_threads,
        log_step_count_steps=FLAGS.log_step_count_steps)


def create_run_config(hp, output_dir=None):
    """T2T's `t2t_trainer.create_run_config`: the RunConfig the flags describe, for the model
    hparams `hp` (their `daisy_chain_variables` holds only in float32, as in T2T).

        create_run_config(hparams)                     # model_dir: --output_dir
        create_run_config(hparams, "/tmp/other_dir")
    """
    from t2t.training import run_config as run_config_lib
    daisy_chain_variables = (getattr(hp, "daisy_chain_variables", True) and
                             getattr(hp, "activation_dtype", "float32") == "float32" and
                             getattr(hp, "weight_dtype", "float32") == "float32")
    model_dir = os.path.abspath(os.path.expanduser(output_dir or _require("output_dir")))
    return run_config_lib.create_run_config(model_name=FLAGS.model, model_dir=model_dir,
                                            daisy_chain_variables=daisy_chain_variables,
                                            **run_config_flag_kwargs())


def experiment_flag_kwargs():
    """The ExperimentSpec fields set by flags, besides model, problem, data and steps."""
    return dict(
        min_eval_frequency=FLAGS.local_eval_frequency,
        eval_throttle_seconds=FLAGS.eval_throttle_seconds,
        schedule=FLAGS.schedule,
        use_dbgprofile=FLAGS.dbgprofile,
        eval_early_stopping_steps=FLAGS.eval_early_stopping_steps,
        eval_early_stopping_metric=FLAGS.eval_early_stopping_metric,
        eval_early_stopping_metric_delta=FLAGS.eval_early_stopping_metric_delta,
        eval_early_stopping_metric_minimize=FLAGS.eval_early_stopping_metric_minimize,
        eval_timeout_mins=FLAGS.eval_timeout_mins,
        eval_use_test_set=FLAGS.eval_use_test_set,
        use_tpu=FLAGS.use_tpu,
        use_tpu_estimator=FLAGS.use_tpu_estimator,
        use_xla=FLAGS.xla_compile,
        export_saved_model_api_version=FLAGS.export_saved_model_api_version,
        warm_start_from=FLAGS.warm_start_from,
        std_server_protocol=FLAGS.std_server_protocol,
        log_step_count_steps=FLAGS.log_step_count_steps)


def training_job(overrides, **names):
    """The TrainingJob of the flags; `names` give problem_name or mixture_or_task_name."""
    from t2t.training import runner
    return runner.TrainingJob(
        model_name=FLAGS.model, hparams_set=FLAGS.hparams_set, output_dir=output_dir(),
        data_dir=data_dir(), hparams_overrides=overrides, backend=FLAGS.backend,
        train_steps=FLAGS.train_steps, eval_steps=FLAGS.eval_steps,
        run_config=run_config_flag_kwargs(), experiment=experiment_flag_kwargs(),
        t2t_usr_dir=FLAGS.t2t_usr_dir or "", **names)


def flags_text(names=None):
    """--name=value lines of the flags (all parsed flags, or only `names`)."""
    if names is None:
        return FLAGS.flags_into_string()
    lines = []
    for name in names:
        if name in FLAGS and FLAGS[name].value is not None:
            lines.append(FLAGS[name].serialize())
    return "\n".join(line for line in lines if line) + "\n"


# The splits each schedule reads; the trainer checks their files before building anything.
_SCHEDULE_SPLITS = {
    "train": ("train",),
    "evaluate": ("eval",),
    "continuous_eval": ("eval",),
    "continuous_eval_on_train_data": ("train",),
    "evaluate_on_train_data": ("train",),
    "train_and_evaluate": ("train", "eval"),
    "continuous_train_and_eval": ("train", "eval"),
    "run_std_server": (),
}


def data_files_to_check(problem, schedule):
    """The data files `schedule` will read, checked (UserError if missing or short)."""
    files = []
    for split in _SCHEDULE_SPLITS.get(schedule, ("train", "eval")):
        if split == "eval" and FLAGS.eval_use_test_set:
            split = "test"
        files += problem.data_files(data_dir(), split)
    return files


def main(argv, hp_overrides=""):
    """Train as the flags say. T2T's entry point too: a wrapper script that defines flags
    of its own and runs `tf.compat.v1.app.run()` (or `absl.app.run(main)`) calls
    `t2t_trainer.main(argv)`; `--hp_NAME VALUE` pairs left in `argv` by its flag parser are
    folded into --hparams, and argv may be None, as T2T's main allowed."""
    argv, more_overrides = split_hp_args(list(argv or [""]))
    hp_overrides = join_overrides(hp_overrides, more_overrides)
    cli.reject_extra_args(argv, "t2t-trainer", accepted="--flags (and --hp_NAME VALUE pairs)")
    logging.set_verbosity(logging.INFO)
    cli.show_tensorflow_deprecations(FLAGS.show_tf_deprecations)  # wrappers skip run_main
    cli.apply_common_flags(FLAGS.t2t_usr_dir, FLAGS.registry_help)
    from t2t.core import registry
    from t2t.data import shard_check
    from t2t.training import runner

    # Flags, names, folders and data files first: a mistake is one line before any
    # TensorFlow work.
    schedule = FLAGS.schedule
    if FLAGS.mixture_or_task_name:
        return main_task(hp_overrides)
    model_name, hparams_set = _require("model"), _require("hparams_set")
    problem_name = _require("problem")
    registry.model(model_name)  # unknown names fail here, before any work
    problem = registry.problem(problem_name)
    model_dir = output_dir()
    cli.check_writable_dir("--output_dir", model_dir)
    if FLAGS.generate_data:
        if not FLAGS.data_dir:
            raise errors.UserError("--generate_data needs --data_dir")
        cli.check_writable_dir("--data_dir", data_dir())
        cli.check_writable_dir("--tmp_dir", FLAGS.tmp_dir)
    overrides = join_overrides(FLAGS.hparams, hp_overrides)
    if FLAGS.hparams_range:
        return run_autotune(problem, model_dir, overrides)
    prepared = runner.prepare(training_job(overrides, problem_name=problem_name))
    if not FLAGS.generate_data:
        files = data_files_to_check(problem, schedule)

    random_seed.set_random_seed(FLAGS.random_seed)
    if FLAGS.generate_data:
        generate_data()
        files = data_files_to_check(problem, schedule)

    FLAGS.hparams = overrides  # flags.txt records what was applied, --hp_ pairs included
    try:
        runner.run(prepared, flags_text=flags_text(),
                   t2t_flags_text=flags_text(t2t_flags.T2T_FLAG_NAMES))
    except tf_data_loss_error() as error:
        raise shard_check.explain_data_loss(error, files, problem_name=problem_name,
                                            data_dir=data_dir()) from None
    except stop_signals.TrainingStopped as stop:
        return report_stop(stop)
    return 0


def report_stop(stop):
    """A run a signal stopped: its one line on stderr; the exit code (128 + signal)."""
    sys.stderr.write("t2t-trainer: %s\n" % stop)
    sys.stderr.flush()
    return stop.exit_code


def task_training_spec():
    """The TaskTrainingSpec of the --mixture_or_task_name flags (modules imported first)."""
    from t2t.seqio_training import task_problem, training
    usr_dir.import_user_modules(FLAGS.module_import)
    return training.TaskTrainingSpec(
        FLAGS.mixture_or_task_name,
        task_problem.parse_feature_lengths(FLAGS.task_feature_lengths),
        pack=FLAGS.pack, decoder_only=FLAGS.decoder_only, eval_split=FLAGS.task_eval_split,
        eval_num_examples=FLAGS.task_eval_num_examples, use_cached=FLAGS.use_cached_tasks,
        seed=FLAGS.random_seed)


def checks_lib():
    from t2t.seqio import checks
    return checks


def check_task_data(spec, splits):
    """Every task of --mixture_or_task_name has its files (or, with --use_cached_tasks, its
    cache) for `splits`: a UserError naming task, split and pattern before any work."""
    from t2t.seqio_training import task_problem
    checks = checks_lib()
    checks.check_task_data(task_problem.get_provider(spec.mixture_or_task_name), splits,
                           use_cached=spec.use_cached,
                           fix_args=checks.module_args(FLAGS.module_import, FLAGS.t2t_usr_dir))


def main_task(hp_overrides=""):
    """--mixture_or_task_name: train on a SeqIO Task or Mixture (t2t.seqio_training)."""
    from t2t.core import registry
    from t2t.decoding import decoding
    from t2t.seqio_training import training
    from t2t.training import runner

    if FLAGS.problem:
        raise errors.UserError("give --problem or --mixture_or_task_name, not both")
    for name in ("generate_data", "hparams_range"):
        if getattr(FLAGS, name):
            raise errors.UserError("--%s works with --problem, not with --mixture_or_task_name"
                                   % name)
    model_name, hparams_set = _require("model"), _require("hparams_set")
    registry.model(model_name)
    spec = task_training_spec()
    check_task_data(spec, checks_lib().splits_for_schedule(FLAGS.schedule,
                                                           eval_split=spec.eval_split))
    cli.check_writable_dir("--output_dir", output_dir())
    overrides = join_overrides(FLAGS.hparams, hp_overrides)
    job = training_job(overrides, mixture_or_task_name=spec.mixture_or_task_name,
                       resume_flags={"mixture_or_task_name": spec.mixture_or_task_name,
                                     "task_feature_lengths": FLAGS.task_feature_lengths})
    prepared = runner.prepare(job, hparams_fn=lambda hparams_path: training.task_hparams(
        hparams_set, overrides, spec, hparams_path=hparams_path, strict_resume=True))
    random_seed.set_random_seed(FLAGS.random_seed)

    def exporters(backend):
        return training.task_exporters(model_name, prepared.hparams, spec, job.output_dir,
                                       backend)

    FLAGS.hparams = overrides
    try:
        runner.run(prepared, flags_text=flags_text(),
                   t2t_flags_text=flags_text(t2t_flags.T2T_FLAG_NAMES), exporters_fn=exporters,
                   decode_hparams=decoding.decode_hparams(training.TRAINING_DECODE_HPARAMS))
    except stop_signals.TrainingStopped as stop:
        return report_stop(stop)
    return 0


# Flags a trial's training run does not get from the search's command line.
_NOT_FOR_TRIALS = ("hparams_range", "output_dir", "hparams", "generate_data", "registry_help",
                   "autotune_objective", "autotune_maximize", "autotune_max_trials",
                   "autotune_parallel_trials", "autotune_storage", "autotune_study_name")


def trial_flag_args():
    """--name=value of every flag given on the command line that a trial run takes."""
    names = list(t2t_flags.T2T_FLAG_NAMES) + ["show_tf_deprecations"]
    return [FLAGS[name].serialize() for name in names
            if name in FLAGS and FLAGS[name].present and name not in _NOT_FOR_TRIALS]


def run_autotune(problem, model_dir, overrides):
    """--hparams_range: an Optuna study whose trials are runs of this trainer."""
    from t2t.core import registry
    from t2t.tuning import autotune

    autotune.import_optuna()
    ranges = FLAGS.hparams_range
    registry.ranged_hparams(ranges)  # an unknown name fails here with the closest names
    objective = _require("autotune_objective")
    if FLAGS.autotune_max_trials < 1 or FLAGS.autotune_parallel_trials < 1:
        raise errors.UserError("--autotune_max_trials and --autotune_parallel_trials must be "
                               "at least 1")
    if FLAGS.schedule not in ("continuous_train_and_eval", "train_and_evaluate"):
        raise errors.UserError("--hparams_range needs evaluations during training: use "
                               "--schedule=continuous_train_and_eval (the default)")
    if FLAGS.generate_data:  # once, before the trials (not in each of them)
        generate_data()
    data_files_to_check(problem, FLAGS.schedule)
    study_name = FLAGS.autotune_study_name or "-".join(
        (FLAGS.problem, FLAGS.model, FLAGS.hparams_set, ranges))
    spec = autotune.StudySpec(
        output_dir=model_dir, ranges=ranges, objective=objective,
        maximize=FLAGS.autotune_maximize, max_trials=FLAGS.autotune_max_trials,
        parallel_trials=FLAGS.autotune_parallel_trials, storage=FLAGS.autotune_storage,
        study_name=study_name, base_hparams=overrides, seed=FLAGS.random_seed)

    def say(line):
        print("t2t-trainer: %s" % line, flush=True)

    say("study %s in %s: %d trials over %s, %s %s" % (
        study_name, autotune.storage_url(spec), spec.max_trials, ranges,
        "maximizing" if spec.maximize else "minimizing", objective))
    results = autotune.run_study(spec, autotune.python_trainer_command(trial_flag_args()),
                                 out=say)
    print(autotune.results_table(results, objective, spec.maximize), flush=True)
    if autotune.best_result(results, spec.maximize) is None:
        failures = [r.error for r in results if r.error]
        raise errors.UserError("no trial completed; %s" % (
            failures[0] if failures else "see the trials' train.log files"))
    return 0


def tf_data_loss_error():
    import tensorflow as tf
    return tf.errors.DataLossError


def console_main(argv=None):
    """Entry point of the `t2t-trainer` console script."""
    argv = list(sys.argv if argv is None else argv)
    try:
        argv, hp_overrides = split_hp_args(argv)
    except errors.UserError as error:
        cli.exit_with_user_error("t2t-trainer", error)
    cli.run_main(lambda args: main(args, hp_overrides), "t2t-trainer", argv=argv,
                 doc=__doc__)


if __name__ == "__main__":
    console_main()
