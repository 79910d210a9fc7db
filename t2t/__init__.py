"""t2t: Tensor2Tensor-style sequence-model toolkit on TensorFlow (2.15 and 2.21).

Importing t2t selects Keras 2 (the `tf-keras` package) for `tf.keras` on TensorFlow 2.16+,
by setting TF_USE_LEGACY_KERAS=1 before tf.keras is first used: t2t's LSTM cells and
`hub.KerasLayer` inside `tf.keras` models need it, as in TF Model Garden. TensorFlow binds
`tf.keras` when it is first used, so t2t may come after `import tensorflow`; a process that
already used `tf.keras` as Keras 3 cannot switch back, and importing t2t there raises
`KerasVersionError` with the fix:

    import tensorflow as tf
    import t2t                 # before the first use of tf.keras (or TF_USE_LEGACY_KERAS=1)
    tf.keras.layers.LSTMCell.__module__   # "tf_keras.src...." on TensorFlow 2.21
                                          # ("keras.src...." on 2.15: Keras 2 as it is)

Importing t2t also hides TensorFlow's C++ start-up lines ("Could not find cuda drivers",
"E0000 ... failed call to cuInit", the CPU instructions TensorFlow was not built for) when
TF_CPP_MIN_LOG_LEVEL is not set: it sets the variable to 3 and, on TensorFlow 2.16+, filters
the few lines TensorFlow prints at import whatever the level (`t2t.core.tf_notices`). A
value you set is respected; to see the lines, set it to 0 and import t2t before TensorFlow:

    $ TF_CPP_MIN_LOG_LEVEL=0 python -c "import t2t, tensorflow as tf; tf.constant(1) + 1"
"""
import os as _os
import sys as _sys

_LEGACY_KERAS = "TF_USE_LEGACY_KERAS"


class KerasVersionError(ImportError):
    """tf.keras was already Keras 3 when t2t was imported (one line: the fix)."""


def _keras_3_already_loaded():
    """True when TensorFlow 2.16+ has already bound `tf.keras` to Keras 3.

    TensorFlow binds `tf.keras` on its first use, reading TF_USE_LEGACY_KERAS then, so a
    process that imported TensorFlow but has not touched `tf.keras` yet still gets tf-keras.
    """
    tf = _sys.modules.get("tensorflow")
    keras = getattr(tf, "__dict__", {}).get("keras")
    if keras is None:
        return False
    loader = keras.__dict__
    if "_tfll_initialized" in loader:  # still TensorFlow's lazy loader
        return (bool(loader["_tfll_initialized"]) and
                loader.get("_tfll_keras_version") == "keras_3")
    # Once used, tf.keras is the module itself: Keras 3's is keras._tf_keras.keras.
    return getattr(keras, "__name__", "").startswith("keras._tf_keras")


def _tensorflow_version():
    """(major, minor) of the installed TensorFlow, without importing it; None if unknown."""
    tf = _sys.modules.get("tensorflow")
    version = getattr(tf, "__version__", None)
    if version is None:
        from importlib import metadata
        for dist in ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly"):
            try:
                version = metadata.version(dist)
                break
            except metadata.PackageNotFoundError:
                continue
    try:
        return tuple(int(part) for part in version.split(".")[:2])
    except (AttributeError, ValueError):
        return None


if _keras_3_already_loaded():
    raise KerasVersionError(
        "t2t needs Keras 2 (tf-keras) but this process already uses tf.keras as Keras 3; "
        "import t2t before the first use of tf.keras, or set %s=1 in the environment"
        % _LEGACY_KERAS)
if (_tensorflow_version() or (2, 16)) >= (2, 16):
    # Not on TensorFlow 2.15, whose tf.keras is Keras 2 already (and which would need the
    # tf-keras package once the variable is set).
    _os.environ[_LEGACY_KERAS] = "1"

from t2t.core import tf_notices as _tf_notices  # noqa: E402  (after the Keras choice)

_tf_notices.quiet_tensorflow_logs()


def load(path, **kwargs):
    """A trained model, loaded once to decode and score text: `t2t.inference.load`.

        model = t2t.load("~/t2t_train/m30k")
        model.decode(["A man rides a horse."])      # ['Ein Mann reitet auf einem Pferd.']
    """
    from t2t import inference  # TensorFlow and the model code load only when used
    return inference.load(path, **kwargs)
