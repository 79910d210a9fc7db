"""Which backend runs a program: `tf.estimator` (TensorFlow 2.15) or t2t's native TF2 one.

Training (`t2t-trainer`), decoding (`t2t-decoder`) and SeqIO task training share one rule
and one message:

    estimator_available()          # True on TF 2.15, False on 2.16+ (no tf.estimator)
    resolve_backend("auto")        # "estimator" where tf.estimator exists, else "native"
    resolve_backend("estimator")   # on TF 2.16+: UserError naming the fix
"""
import tensorflow as tf

from t2t.core import errors

BACKENDS = ("auto", "estimator", "native")


def estimator_available():
    """Whether this TensorFlow has `tf.estimator` (2.15 and older)."""
    try:
        return hasattr(tf, "estimator") and hasattr(tf.estimator, "Estimator")
    except (AttributeError, ImportError):  # tensorflow_estimator missing behind the loader
        return False


def resolve_backend(name="auto"):
    """"auto" -> "estimator" or "native"; an explicit name is checked (one-line UserError
    for an unknown one, or for "estimator" on a TensorFlow without it).

        resolve_backend("native")   # "native"
    """
    if name not in BACKENDS:
        raise errors.UserError("--backend=%s is not a backend; use one of %s" %
                               (name, ", ".join(BACKENDS)))
    if name == "auto":
        return "estimator" if estimator_available() else "native"
    if name == "estimator" and not estimator_available():
        raise errors.UserError(
            "--backend=estimator needs tf.estimator, which TensorFlow %s does not have; use "
            "--backend=native (or auto), or TensorFlow 2.15 on Python 3.9-3.11" %
            tf.__version__)
    return name
