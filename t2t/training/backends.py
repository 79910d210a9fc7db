"""What the native training backend cannot run, and the schedules both backends run.

Which backend runs a job is `t2t.core.backend_choice`'s (`resolve_backend`).

    check_native_supported(use_tpu=True)
    # UserError: --use_tpu needs the Estimator backend (--backend=estimator, ...)

Both backends run the same schedules (`SCHEDULES`, the --schedule values) and write the
same files; TPUs and parameter-server clusters need the Estimator backend.
"""
from t2t.core import errors

SCHEDULES = ("train", "evaluate", "train_and_evaluate", "continuous_train_and_eval",
             "continuous_eval", "continuous_eval_on_train_data", "evaluate_on_train_data",
             "run_std_server")
# The schedules that train (and so may resume a run and set broken checkpoints aside).
TRAINING_SCHEDULES = ("train", "train_and_evaluate", "continuous_train_and_eval")


def check_native_supported(use_tpu=False, use_tpu_estimator=False, cluster=None,
                           schedule=None):
    """One-line UserErrors for what only the Estimator backend runs.

    `cluster` is TF_CONFIG's "cluster" dict ({"chief": [...], "ps": [...]}).
    """
    if use_tpu or use_tpu_estimator:
        raise errors.UserError(
            "--use_tpu%s needs the Estimator backend (--backend=estimator, TensorFlow 2.15); "
            "the native backend trains on CPUs and GPUs" % ("" if use_tpu else "_estimator"))
    if (cluster or {}).get("ps"):
        raise errors.UserError(
            "parameter servers (a 'ps' task in TF_CONFIG) need the Estimator backend "
            "(--backend=estimator, TensorFlow 2.15); the native backend trains a cluster of "
            "chief and workers synchronously (MultiWorkerMirroredStrategy)")
    if schedule == "run_std_server":
        raise errors.UserError(
            "--schedule=run_std_server serves a parameter server, which needs the Estimator "
            "backend (--backend=estimator, TensorFlow 2.15)")
