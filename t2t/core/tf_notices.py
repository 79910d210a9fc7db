"""TensorFlow's deprecation notices kept out of a user's output while t2t's own code runs.

The programs hide them for the whole run (`--show_tf_deprecations` shows them); a library
call from a user's Python (the README's `seqio.Evaluator` with `estimator_predict_fn`)
printed about 45 "Instructions for updating" blocks, each twice, from the Estimator and
graph code t2t calls. Those calls now run under `quiet_deprecations`:

    @quiet_deprecations
    def predict_fn(dataset, model_feature_shapes=None):
        ...   # TF deprecation notices raised in here are not printed

The user's own calls to deprecated TensorFlow functions still warn, as TensorFlow decides.
"""
import functools


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
