"""Which backend runs a program: `tf.estimator` (TensorFlow 2.15) or t2t's native TF2 one.

Training (`t2t-trainer`), decoding (`t2t-decoder`) and SeqIO task training share one rule
and one message:

    estimator_available()          # True on TF 2.15, False on 2.16+ (no tf.estimator)
    resolve_backend("auto")        # "estimator" where tf.estimator exists, else "native"
    resolve_backend("estimator")   # on TF 2.16+: UserError naming the fix
"""
import tensorflow as tf

from t2t.core import errors
from t2t.core import registry

BACKENDS = ("auto", "estimator", "native")


def estimator_available():
    """Whether this TensorFlow has `tf.estimator` (2.15 and older)."""
    try:
        return hasattr(tf, "estimator") and hasattr(tf.estimator, "Estimator")
    except (AttributeError, ImportError):  # tensorflow_estimator missing behind the loader
        return False


def check_backend_name(name):
    """A UserError naming the backends (closest first) unless `name` is one.

        check_backend_name("nativ")   # UserError: --backend=nativ is not a backend; did you
                                      # mean native? (auto, estimator, native)
    """
    if name in BACKENDS:
        return
    close = registry.closest_names(str(name), BACKENDS, n=1)
    hint = "did you mean %s? (%s)" % (close[0], ", ".join(BACKENDS)) if close else (
        "use one of %s" % ", ".join(BACKENDS))
    raise errors.UserError("--backend=%s is not a backend; %s" % (name, hint))


def resolve_backend(name="auto"):
    """"auto" -> "estimator" or "native"; an explicit name is checked (one-line UserError
    for an unknown one, or for "estimator" on a TensorFlow without it).

        resolve_backend("native")   # "native"
    """
    check_backend_name(name)
    if name == "auto":
        return "estimator" if estimator_available() else "native"
    if name == "estimator" and not estimator_available():
        raise errors.UserError(
            "--backend=estimator needs tf.estimator, which TensorFlow %s does not have; use "
            "--backend=native (or auto), or TensorFlow 2.15 on Python 3.9-3.11" %
            tf.__version__)
    return name
