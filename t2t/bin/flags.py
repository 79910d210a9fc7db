"""Flag definitions of t2t-trainer (shared with t2t-decoder): T2T 1.15.7's names and defaults.

Importing this module defines the flags in absl's global `flags.FLAGS` (once; a flag that
is already defined is left alone, so the trainer and the decoder can both import it).
Only programs in `t2t/bin` read the values; library code takes them as arguments.

    from absl import flags
    from t2t.utils import flags as t2t_flags      # defines --model, --hparams_set, ...
    flags.FLAGS(["t2t-trainer", "--model=transformer", "--train_steps=10"])
    flags.FLAGS.train_steps                       # 10
    t2t_flags.T2T_FLAG_NAMES                      # the names written to flags_t2t.txt

`define_trainer_flags(flag_values)` defines the same flags in another `FlagValues`.
"""
from absl import flags

from t2t.bin import cli

# (kind, name, default, help)
_TRAINER_FLAGS = (
    # What to train.
    ("string", "problem", None, "Problem name (a registered problem; _rev/_copy allowed)."),
    ("string", "model", None, "Which model to use (a registered model name)."),
    ("string", "hparams_set", None, "Which hparams set to use (a registered name)."),
    ("string", "hparams_range", None, "Search hyperparameters in this registered "
     "RangedHParams (e.g. transformer_base_range) on Optuna; needs t2t-toolkit[tune] and "
     "--autotune_objective. Each trial trains in <output_dir>/trial_<n>."),
    ("string", "hparams", "", "A comma-separated list of name=value hyperparameter "
     "overrides, e.g. 'batch_size=1024,learning_rate=0.2'. Arguments --hp_NAME VALUE are "
     "appended to it."),
    ("string", "data_dir", None, "Directory with the training and dev data."),
    ("string", "output_dir", "", "Base output directory: checkpoints, events, hparams.json, "
     "flags.txt. Rerunning with the same directory resumes."),
    ("string", "tmp_dir", "/tmp/t2t_datagen", "Temporary storage directory, used with "
     "--generate_data."),
    ("bool", "generate_data", False, "Generate the problem's data into --data_dir before "
     "training (skipped for files that exist)."),
    ("string", "schedule", "continuous_train_and_eval", "Method of T2TExperiment to run: "
     "train, evaluate, train_and_evaluate, continuous_train_and_eval, continuous_eval, "
     "run_std_server."),
    # What to train on instead of --problem: a SeqIO Task or Mixture (t2t.seqio_training).
    ("string", "mixture_or_task_name", None, "A registered SeqIO Task or Mixture to train "
     "or decode on instead of --problem (register it in a --module_import module or "
     "--t2t_usr_dir)."),
    ("string", "task_feature_lengths", "", "With --mixture_or_task_name: the task feature "
     "lengths, e.g. inputs=256,targets=128 (the decoder reads them from the training "
     "folder's flags.txt when not given)."),
    ("multi_string", "module_import", [], "With --mixture_or_task_name: modules to import "
     "(they register tasks and mixtures); repeatable."),
    ("bool", "pack", True, "With --mixture_or_task_name: pack several examples per training "
     "row (segment ids and positions keep them apart); --nopack pads each example."),
    ("bool", "decoder_only", False, "With --mixture_or_task_name: train a decoder-only model "
     "on tasks with inputs (PrefixLM converter: inputs+targets in one sequence, loss on the "
     "targets). Tasks without inputs always use the LM converter."),
    ("string", "task_eval_split", "validation", "With --mixture_or_task_name: the split "
     "evaluated (task metrics on decodes) and decoded."),
    ("integer", "task_eval_num_examples", None, "With --mixture_or_task_name: decode at most "
     "this many examples of each task per evaluation (default: all)."),
    ("bool", "use_cached_tasks", False, "With --mixture_or_task_name: read the tasks' "
     "offline caches (use_cached=True)."),
    # Steps, checkpoints, evaluation.
    ("integer", "train_steps", 250000, "The number of steps to run training for."),
    ("integer", "eval_steps", 100, "Number of batches in an evaluation (fewer when the eval "
     "data runs out first)."),
    ("integer", "local_eval_frequency", 1000, "Save checkpoints and run evaluation every N "
     "steps during local training."),
    ("integer", "save_checkpoints_secs", 600, "Also save a checkpoint when this many "
     "seconds have passed since the last one (0: only every --local_eval_frequency steps), "
     "so a run that dies loses minutes; evaluations follow the step-based ones. Not on "
     "TPUs."),
    ("integer", "keep_checkpoint_max", 20, "How many recent checkpoints to keep."),
    ("integer", "keep_checkpoint_every_n_hours", 10000, "Also keep one checkpoint every this "
     "many hours (the default effectively disables it)."),
    ("integer", "eval_throttle_seconds", 600, "Do not re-evaluate unless the last evaluation "
     "was started at least this many seconds ago."),
    ("integer", "eval_timeout_mins", 240, "continuous_eval waits at most this long for a new "
     "checkpoint (-1: forever)."),
    ("integer", "eval_early_stopping_steps", None, "Stop training when "
     "--eval_early_stopping_metric has not improved over this many steps."),
    ("string", "eval_early_stopping_metric", "loss", "Evaluation metric watched for early "
     "stopping."),
    ("float", "eval_early_stopping_metric_delta", 0.1, "Smallest change of the metric that "
     "counts as an improvement."),
    ("bool", "eval_early_stopping_metric_minimize", True, "Whether improving the metric means "
     "lowering it."),
    ("bool", "eval_run_autoregressive", False, "Evaluate autoregressively, conditioning on "
     "the model's own outputs."),
    ("bool", "eval_use_test_set", False, "Evaluate on the test split instead of dev."),
    ("string", "warm_start_from", None, "Initialise matching variables from this checkpoint."),
    ("integer", "log_step_count_steps", 100, "Log steps/s, tokens/s and loss every N steps."),
    ("bool", "log_device_placement", False, "Whether to log device placement."),
    ("bool", "dbgprofile", False, "Record a chrome://tracing timeline every 10 steps."),
    # Devices and clusters.
    ("integer", "worker_gpu", 1, "How many GPUs to replicate the model on "
     "(MirroredStrategy; the batch per step grows with it). 0 is a CPU run, as 1 is "
     "without GPUs."),
    ("string", "gpu_order", "", "Order of the GPUs, e.g. \"1 3 2 4\"."),
    ("float", "worker_gpu_memory_fraction", 0.95, "Fraction of GPU memory to allocate."),
    ("integer", "worker_replicas", 1, "Asynchronous training tasks (the learning rate is "
     "divided by its square root); taken from TF_CONFIG when that names a cluster."),
    ("string", "master", "", "Ignored: TF 2 Estimators take the cluster from TF_CONFIG."),
    ("string", "std_server_protocol", "grpc", "Protocol for tf.distribute.Server."),
    ("string", "backend", "auto", "Training backend: estimator (tf.estimator, TensorFlow "
     "2.15; TPUs and parameter servers), native (TF2 tf.function steps, any TensorFlow) or "
     "auto (estimator where tf.estimator exists, else native)."),
    ("integer", "inter_op_parallelism_threads", 0, "Inter-op threads for CPU (0: TF "
     "chooses)."),
    ("integer", "intra_op_parallelism_threads", 0, "Intra-op threads for CPU (0: TF "
     "chooses)."),
    ("bool", "enable_graph_rewriter", False, "Enable graph optimizations that are not on by "
     "default."),
    ("bool", "optionally_use_dist_strat", False, "Accepted for T2T compatibility: "
     "--worker_gpu > 1 always uses MirroredStrategy."),
    # TPU and XLA.
    ("bool", "use_tpu", False, "Whether to use TPU."),
    ("bool", "use_tpu_estimator", False, "Whether to use TPUEstimator (always with "
     "--use_tpu; without it the TPUEstimator runs on CPU/GPU)."),
    ("integer", "tpu_num_shards", 8, "Number of TPU shards."),
    ("integer", "iterations_per_loop", 100, "Number of iterations in a TPU training loop."),
    ("integer", "tpu_infeed_sleep_secs", None, "How long to sleep the infeed thread."),
    ("integer", "xla_jit_level", -1, "GlobalJitLevel for compiling the full graph."),
    ("bool", "xla_compile", False, "Whether to use XLA to compile model_fn (its training "
     "and evaluation graph; see bench/bench_training.py for its effect on this machine)."),
    ("integer", "export_saved_model_api_version", 1, "TPUEstimator export API version "
     "(1 or 2)."),
    # Hyperparameter search (with --hparams_range).
    ("string", "autotune_objective", None, "Eval metric the search optimizes, e.g. "
     "metrics-<problem>/targets/accuracy (metrics-<problem>/accuracy also works) or loss."),
    ("bool", "autotune_maximize", True, "Whether to maximize the objective (minimize with "
     "--noautotune_maximize)."),
    ("integer", "autotune_max_trials", 10, "Number of trials to finish (completed or "
     "pruned)."),
    ("integer", "autotune_parallel_trials", 1, "Trials trained at the same time by this "
     "process."),
    ("string", "autotune_storage", "", "Optuna storage URL of the study (default: "
     "sqlite:///<output_dir>/autotune.db); machines running the same command with one "
     "postgresql:// or mysql:// URL share the study."),
    ("string", "autotune_study_name", "", "Study name in the storage (default: "
     "<problem>-<model>-<hparams_set>-<hparams_range>)."),
    # Decoding (read by t2t-decoder).
    ("string", "decode_hparams", "", "Comma-separated name=value pairs controlling decoding."),
    ("string", "decode_from_file", "", "Path to the source file for decoding."),
    ("string", "decode_to_file", "", "Path to the decoded file."),
    ("string", "decode_reference", "", "Path to the reference file for decoding."),
)

_DEFINE = {
    "string": flags.DEFINE_string,
    "integer": flags.DEFINE_integer,
    "float": flags.DEFINE_float,
    "bool": flags.DEFINE_bool,
    "multi_string": flags.DEFINE_multi_string,
}

# Written to flags_t2t.txt: the trainer's own flags (T2T wrote the flags of its modules).
T2T_FLAG_NAMES = tuple(name for _, name, _, _ in _TRAINER_FLAGS) + (
    "t2t_usr_dir", "registry_help", "random_seed")


def define_trainer_flags(flag_values=None):
    """Define every trainer flag in `flag_values` (default absl's FLAGS), skipping existing.

    The definitions allow a later one of the same name (e.g. t2t-datagen's --problem when
    both programs are imported in one process) to replace them instead of failing.
    """
    flag_values = flag_values if flag_values is not None else flags.FLAGS
    for kind, name, default, help_text in _TRAINER_FLAGS:
        if name not in flag_values:
            _DEFINE[kind](name, default, help_text, flag_values=flag_values,
                          allow_override=True)
    cli.define_common_flags(random_seed_default=None, flag_values=flag_values)
    return flag_values


define_trainer_flags()
