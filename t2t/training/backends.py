"""Which training backend runs a job: `tf.estimator` (TF 2.15) or the native TF2 loop.

    resolve_backend("auto")        # "estimator" where tf.estimator exists, else "native"
    resolve_backend("estimator")   # on TF 2.16+: UserError naming the fix
    check_native_supported(use_tpu=True)
    # UserError: --use_tpu needs the Estimator backend (--backend=estimator, ...)

Both backends run the same schedules (`SCHEDULES`, the --schedule values) and write the
same files; TPUs and parameter-server clusters need the Estimator backend.
"""
import tensorflow as tf

from t2t.core import errors

BACKENDS = ("auto", "estimator", "native")
SCHEDULES = ("train", "evaluate", "train_and_evaluate", "continuous_train_and_eval",
             "continuous_eval", "continuous_eval_on_train_data", "evaluate_on_train_data",
             "run_std_server")


def estimator_available():
    """Whether this TensorFlow has `tf.estimator` (2.15 and older)."""
    try:
        return hasattr(tf, "estimator") and hasattr(tf.estimator, "Estimator")
    except (AttributeError, ImportError):
        return False


def resolve_backend(name):
    """"auto" -> "estimator" or "native"; an explicit name is checked.

        resolve_backend("native")   # "native"
    """
    if name not in BACKENDS:
        raise errors.UserError("--backend=%r is not a backend; use one of %s" %
                               (name, ", ".join(BACKENDS)))
    if name == "auto":
        return "estimator" if estimator_available() else "native"
    if name == "estimator" and not estimator_available():
        raise errors.UserError(
            "--backend=estimator needs tf.estimator, which TensorFlow %s does not have; use "
            "--backend=native (or auto), or TensorFlow 2.15 on Python 3.9-3.11" %
            tf.__version__)
    return name


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
