"""TensorFlow's start-up lines and deprecation notices kept out of a user's output.

**Start-up lines.** `import tensorflow` and TensorFlow's first op print 6-9 lines from its
C++ libraries on a machine without a GPU (CUDA probing, "E0000 ... failed call to cuInit",
the CPU instructions it was not built for). `import t2t` hides them when the user has not
set TF_CPP_MIN_LOG_LEVEL (`quiet_tensorflow_logs`, the one place that decides it, for the
programs too): it sets the variable to 3 (errors and below hidden) and, TensorFlow 2.16+
printing a few lines at import whatever the level says, filters those out of stderr while
TensorFlow is imported, passing every other line on. To see them, set the level yourself:

    $ TF_CPP_MIN_LOG_LEVEL=0 python -c "import t2t, tensorflow as tf; tf.constant(1) + 1"
    I0000 00:00:1795882327.527019   13678 cudart_stub.cc:31] Could not find cuda drivers ...

(any value is respected; 0 shows them all). t2t must be imported before TensorFlow for this:
a process that imported TensorFlow first has printed them already.

**Deprecation notices.** The programs hide them for the whole run (`--show_tf_deprecations`
shows them); a library call from a user's Python (the README's `seqio.Evaluator` with
`estimator_predict_fn`) printed about 45 "Instructions for updating" blocks, each twice,
from the Estimator and graph code t2t calls. Those calls now run under `quiet_deprecations`:

    @quiet_deprecations
    def predict_fn(dataset, model_feature_shapes=None):
        ...   # TF deprecation notices raised in here are not printed

The user's own calls to deprecated TensorFlow functions still warn, as TensorFlow decides.
"""
import contextlib
import functools
import os
import re
import sys
import tempfile

LOG_LEVEL_VARIABLE = "TF_CPP_MIN_LOG_LEVEL"
QUIET_LOG_LEVEL = "3"

# What TensorFlow 2.16+'s native libraries print while `import tensorflow` runs, whatever
# TF_CPP_MIN_LOG_LEVEL says: absl's pre-initialisation notice and its I/W/E lines.
NATIVE_NOISE = re.compile(
    r"WARNING: All log messages before absl::InitializeLog\(\) is called are written to "
    r"STDERR$|[IWE]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ \S+:\d+\] ")


def quiet_tensorflow_logs():
    """Hide TensorFlow's native start-up lines unless the user set TF_CPP_MIN_LOG_LEVEL.

    Run by `import t2t` (so by every program before it imports TensorFlow). Unset, the
    level becomes 3; at 3 (ours or the user's), the import of TensorFlow that comes next
    has its stderr filtered of `NATIVE_NOISE`. Real failures still raise Python exceptions.

        quiet_tensorflow_logs()               # TF_CPP_MIN_LOG_LEVEL unset
        os.environ["TF_CPP_MIN_LOG_LEVEL"]    # "3" (a value the user set stays as it is)
        import tensorflow                     # no "cudart_stub.cc ..." lines on stderr
    """
    level = os.environ.setdefault(LOG_LEVEL_VARIABLE, QUIET_LOG_LEVEL)
    if level == QUIET_LOG_LEVEL and "tensorflow" not in sys.modules and not any(
            isinstance(finder, _QuietTensorFlowImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _QuietTensorFlowImport())


@contextlib.contextmanager
def native_stderr_filtered(noise=NATIVE_NOISE):
    """Capture file descriptor 2 (where C++ libraries write) while the block runs, then
    pass on every line that `noise` does not match."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            for line in capture.read().decode("utf-8", "replace").splitlines(True):
                if not noise.match(line.rstrip("\n")):
                    sys.stderr.write(line)
            sys.stderr.flush()


class _QuietTensorFlowImport:
    """A `sys.meta_path` finder that finds `tensorflow` as the others do and runs its
    import under `native_stderr_filtered`; it leaves `sys.meta_path` after that import.

    TensorFlow itself is not imported by `import t2t` (`t2t.core.modes` and the
    pure-Python parts load without it); this waits for whoever imports it first.
    """

    def __init__(self):
        self._finding = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tensorflow" or self._finding:
            return None
        self._finding = True
        try:
            spec = next((spec for spec in (
                finder.find_spec(fullname, path, target) for finder in sys.meta_path
                if finder is not self and hasattr(finder, "find_spec")) if spec), None)
        finally:
            self._finding = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _QuietLoader(spec.loader, self)
        return spec

    def remove(self):
        if self in sys.meta_path:
            sys.meta_path.remove(self)


class _QuietLoader:
    """Runs the real loader's `exec_module` with the native stderr filtered; the module
    keeps the real loader (`__loader__`, `__spec__.loader`)."""

    def __init__(self, loader, finder):
        self._loader = loader
        self._finder = finder

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        try:
            with native_stderr_filtered():
                self._loader.exec_module(module)
        finally:
            self._finder.remove()




def quiet_deprecations(fn):
    """`fn` with TensorFlow's deprecation notices silenced while it runs (also for a
    generator function, while it is iterated)."""
    import inspect

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            from tensorflow.python.util import deprecation
            iterator = fn(*args, **kwargs)
            while True:
                with deprecation.silence():
                    try:
                        item = next(iterator)
                    except StopIteration:
                        return
                yield item
        return generator

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from tensorflow.python.util import deprecation
        with deprecation.silence():
            return fn(*args, **kwargs)
    return wrapper
