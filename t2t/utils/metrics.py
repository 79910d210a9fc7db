"""T2T's `tensor2tensor.utils.metrics` path: the metric functions by name
(`t2t.evaluation.metrics`) and the EVAL/eager metric ops built from them
(`t2t.evaluation.metric_ops`: `create_evaluation_metrics`, `create_eager_metrics`, ...).

    from t2t.utils import metrics
    metrics.METRICS_FNS["accuracy"]
    metrics.create_evaluation_metrics([problem], model_hparams)
"""
from t2t.evaluation import metric_ops as _metric_ops
from t2t.evaluation import metrics as _metrics
from t2t.evaluation.metric_ops import *  # noqa: F401,F403
from t2t.evaluation.metrics import *  # noqa: F401,F403


def __getattr__(name):
    # Private names T2T's own code and tests reach for (`metrics._foo`).
    for module in (_metrics, _metric_ops):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
