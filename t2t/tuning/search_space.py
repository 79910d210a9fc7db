"""A `RangedHParams` (T2T's search ranges) as Optuna suggestions and hparams strings.

    rhp = ranged_hparams_by_name("transformer_base_range")     # a filled RangedHParams
    values = suggest(trial, rhp)     # inside an Optuna objective:
    # {"learning_rate": 0.87, "learning_rate_warmup_steps": 4000, "initializer_gain": 1.2,
    #  ...}: float ranges with scale LOG_SCALE sampled in log space, discrete points and
    #  categories as Optuna categoricals, ints with suggest_int
    hparams_string(values)           # "initializer_gain=1.2,learning_rate=0.87,..."

REVERSE_LOG_SCALE (dense near the maximum, e.g. Adam's beta2) takes `max + min - x` with
x log-uniform in [min, max] (Optuna's param `<name>__reverse_log` holds x). The values
actually used are in each trial's user attribute "hparams" (an hparams string).
"""
from t2t.core import errors
from t2t.core import registry
from t2t.layers.common_hparams import RangedHParams


def ranged_hparams_by_name(name, fixed=None):
    """The registered ranges `name`, filled; names in the HParams `fixed` are fixed to
    their values there (T2T's `fix_select_params`)."""
    rhp = RangedHParams()
    registry.ranged_hparams(name)(rhp)
    if fixed is not None:
        rhp.fix_select_params(fixed)
    return rhp


def parameters(rhp):
    """[(name, kind, spec)] of a RangedHParams, sorted by name (a stable search space).

        # rhp.set_float("dropout", 0.0, 0.5) -> ("dropout", "float", (0.0, 0.5, None))
    """
    found = []
    for name, categories in rhp.categorical_params.values():
        found.append((name, "categorical", (list(categories),)))
    for name, points, scale in rhp.discrete_params.values():
        found.append((name, "discrete", (list(points), scale)))
    for name, low, high, scale in rhp.float_params.values():
        found.append((name, "float", (low, high, scale)))
    for name, low, high, scale in rhp.int_params.values():
        found.append((name, "int", (low, high, scale)))
    return sorted(found)


def _check_log_range(name, low, high):
    if low <= 0:
        raise errors.UserError("ranged hparam %r: a log scale needs a minimum above 0, got %r"
                               % (name, low))


def suggest(trial, rhp):
    """{hparam name: value} drawn for `trial` from the ranges of `rhp`."""
    values = {}
    for name, kind, spec in parameters(rhp):
        if kind == "categorical":
            values[name] = trial.suggest_categorical(name, spec[0])
        elif kind == "discrete":
            points = spec[0]
            values[name] = points[0] if len(points) == 1 else trial.suggest_categorical(
                name, points)
        elif kind == "float":
            low, high, scale = spec
            if scale in (RangedHParams.LOG_SCALE, RangedHParams.REVERSE_LOG_SCALE):
                _check_log_range(name, low, high)
            if scale == RangedHParams.REVERSE_LOG_SCALE:
                drawn = trial.suggest_float(name + "__reverse_log", low, high, log=True)
                values[name] = high + low - drawn
                trial.set_user_attr("param_" + name, values[name])
            else:
                values[name] = trial.suggest_float(name, low, high,
                                                   log=scale == RangedHParams.LOG_SCALE)
        else:
            low, high, scale = spec
            if scale == RangedHParams.LOG_SCALE:
                _check_log_range(name, low, high)
            values[name] = trial.suggest_int(name, low, high,
                                             log=scale == RangedHParams.LOG_SCALE)
    return values


def hparams_string(values):
    """"a=1,b=0.5,c=name" of {name: value}, sorted by name (what --hparams takes).

        hparams_string({"learning_rate": 0.25, "hidden_size": 64})
        # "hidden_size=64,learning_rate=0.25"
    """
    def show(value):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return repr(value)
        return str(value)

    return ",".join("%s=%s" % (name, show(values[name])) for name in sorted(values))
