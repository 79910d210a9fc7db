"""t2t: Tensor2Tensor-style sequence-model toolkit on TensorFlow (2.15 and 2.21).

Importing t2t selects Keras 2 (the `tf-keras` package) for `tf.keras` on TensorFlow 2.16+,
by setting TF_USE_LEGACY_KERAS=1 before TensorFlow is imported: t2t's LSTM cells and
`hub.KerasLayer` inside `tf.keras` models need it, as in TF Model Garden. A process that
imported TensorFlow with Keras 3 before t2t cannot switch back; importing t2t there raises
`KerasVersionError` with the fix:

    import t2t                 # first, or with TF_USE_LEGACY_KERAS=1 in the environment
    import tensorflow as tf
    tf.keras.__version__       # "2.21.0" (tf-keras) on TensorFlow 2.21; "2.15.0" on 2.15
"""
import os as _os
import sys as _sys

_LEGACY_KERAS = "TF_USE_LEGACY_KERAS"


class KerasVersionError(ImportError):
    """TensorFlow was imported with Keras 3 before t2t (one line: the fix)."""


def _keras_3_already_loaded():
    """True when TensorFlow 2.16+ is imported and its tf.keras is (or will be) Keras 3."""
    tf = _sys.modules.get("tensorflow")
    if tf is None:
        return False
    try:
        major, minor = (int(part) for part in tf.__version__.split(".")[:2])
    except (AttributeError, ValueError):
        return False  # TensorFlow is still being imported
    if (major, minor) < (2, 16):
        return False
    keras = tf.__dict__.get("keras")
    version = getattr(keras, "_tfll_keras_version", None)  # set once tf.keras was used
    if version is not None:
        return version != "keras_2"
    return _os.environ.get(_LEGACY_KERAS, "").lower() not in ("1", "true")


if _keras_3_already_loaded():
    raise KerasVersionError(
        "t2t needs Keras 2 (tf-keras) but TensorFlow was imported with Keras 3 before t2t; "
        "import t2t before tensorflow, or set %s=1 in the environment" % _LEGACY_KERAS)
_os.environ[_LEGACY_KERAS] = "1"
