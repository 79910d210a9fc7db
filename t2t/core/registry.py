"""Registry of problems, models, hparams sets and ranged hparams.

Things are registered by decorator, with or without an explicit name::

    @registry.register_model
    class LSTMSeq2seq(t2t_model.T2TModel): ...      # registered as "lstm_seq2seq"

    @registry.register_hparams("my_tiny")
    def my_tiny_hparams(): ...

    registry.model("lstm_seq2seq")                  # -> the class
    registry.hparams("my_tiny")                     # -> a fresh HParams
    registry.problem("translate_ende_wmt8k_rev")    # -> an instance, inputs/targets swapped

An unknown name raises `UnknownNameError` (a `KeyError`) whose message lists the
closest registered names; a duplicate name raises `DuplicateNameError`.

The built-in problems and models are imported lazily on the first look-up, so
`registry.problem(...)` works without importing every dataset module first.
"""
import collections
import inspect
import difflib
import re
from typing import Any, Callable, Dict, List, Optional

from t2t.core import builtins

_FIRST_CAP_RE = re.compile("(.)([A-Z][a-z0-9]+)")
_ALL_CAP_RE = re.compile("([a-z0-9])([A-Z])")


def camelcase_to_snakecase(name: str) -> str:
    """`LSTMSeq2seq` -> `lstm_seq2seq`, `SliceNet` -> `slice_net`."""
    first = _FIRST_CAP_RE.sub(r"\1_\2", name)
    return _ALL_CAP_RE.sub(r"\1_\2", first).lower()


def snakecase_to_camelcase(name: str) -> str:
    """`lstm_seq2seq` -> `LstmSeq2seq`; the rest of each part keeps its case, as in T2T."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def default_name(class_or_fn) -> str:
    return camelcase_to_snakecase(class_or_fn.__name__)


class UnknownNameError(KeyError):
    """A look-up of a name that was never registered.

    Subclasses KeyError (as T2T raised) so existing `except KeyError` code keeps
    working; `str()` gives the plain one-line message.
    """

    def __str__(self):
        return self.args[0] if self.args else ""


class DuplicateNameError(KeyError):
    def __str__(self):
        return self.args[0] if self.args else ""


class InvalidNameError(KeyError, ValueError):
    """A name the registry refuses (T2T raised KeyError; a ValueError says what it is)."""

    def __str__(self):
        return self.args[0] if self.args else ""


def closest_names(name: str, candidates, n: int = 5) -> List[str]:
    """The names most like `name`: difflib matches, then prefix matches. The one home of
    close-name suggestions (registries, flags, hparams, engines, weight types)."""
    candidates = sorted(candidates)
    close = difflib.get_close_matches(name, candidates, n=n, cutoff=0.5)
    if len(close) < n:
        stem = name.split("_")[0]
        for candidate in candidates:
            if candidate.startswith(stem) and candidate not in close:
                close.append(candidate)
            if len(close) >= n:
                break
    return close[:n]


class Registry:
    """A name -> value mapping filled by a decorator.

    Args:
      registry_name: what is registered, for messages ("problems", "models").
      default_key_fn: name used when the decorator gets none.
      validator: called as validator(key, value) before registration.
      on_set: called as on_set(key, value) after registration.
      value_transformer: applied to the stored value on look-up.
    """

    def __init__(self, registry_name: str, default_key_fn: Callable = default_name,
                 validator: Optional[Callable] = None, on_set: Optional[Callable] = None,
                 value_transformer: Callable = (lambda k, v: v)):
        self._name = registry_name
        self._registry: Dict[str, Any] = collections.OrderedDict()
        self._default_key_fn = default_key_fn
        self._validator = validator
        self._on_set = on_set
        self._value_transformer = value_transformer

    @property
    def name(self) -> str:
        return self._name

    def default_key(self, value) -> str:
        return self._default_key_fn(value)

    def validate(self, key, value):
        if self._validator is not None:
            self._validator(key, value)

    def __setitem__(self, key, value):
        if key is None:
            key = self.default_key(value)
        if key in self._registry:
            raise DuplicateNameError(
                "key %s already registered in registry %s (by %s); choose another name" %
                (key, self._name, _describe(self._registry[key])))
        if not callable(value):
            raise ValueError("value must be callable: %s %r is a %s; register a function or "
                             "class" % (self._name, key, type(value).__name__))
        self.validate(key, value)
        self._registry[key] = value
        if self._on_set is not None:
            self._on_set(key, value)

    def register(self, key_or_value=None):
        """Decorator that registers under a given name, or the default one.

        Usable as `@reg.register`, `@reg.register()` or `@reg.register("name")`.
        """
        def decorator(value, key=None):
            self[key] = value
            return value

        if callable(key_or_value):
            return decorator(value=key_or_value)
        return lambda value: decorator(value, key=key_or_value)

    def _ensure_loaded(self):
        builtins.load(self._name)

    def __getitem__(self, key):
        if key not in self._registry:
            self._ensure_loaded()
        if key not in self._registry:
            raise UnknownNameError(self.unknown_message(key))
        return self._value_transformer(key, self._registry[key])

    def unknown_message(self, key) -> str:
        close = closest_names(str(key), self._registry.keys())
        hint = ("closest registered names: %s" % ", ".join(close)) if close else (
            "nothing similar is registered; see --registry_help")
        return "%s never registered with registry %s; %s" % (key, self._name, hint)

    def __contains__(self, key):
        if key not in self._registry:
            self._ensure_loaded()
        return key in self._registry

    def keys(self):
        self._ensure_loaded()
        return self._registry.keys()

    def list(self) -> List[str]:
        return sorted(self.keys())

    def values(self):
        return [self[k] for k in self.keys()]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def _clear(self):
        self._registry.clear()

    def get(self, key, default=None):
        return self[key] if key in self else default


def _describe(value) -> str:
    return "%s.%s" % (getattr(value, "__module__", "?"), getattr(value, "__qualname__", value))


# ----------------------------------------------------------------------------
# Problem names: "_rev" swaps inputs and targets, "_copy" uses the inputs'
# settings for the targets.
# ----------------------------------------------------------------------------
ProblemSpec = collections.namedtuple("ProblemSpec", ["base_name", "was_reversed", "was_copy"])
_REV_SUFFIX = "_rev"
_COPY_SUFFIX = "_copy"


def parse_problem_name(name: str) -> ProblemSpec:
    """`"ende_rev"` -> ProblemSpec("ende", True, False); suffixes may combine once each."""
    for suffix, field in ((_REV_SUFFIX, "was_reversed"), (_COPY_SUFFIX, "was_copy")):
        if name.endswith(suffix):
            base = parse_problem_name(name[:-len(suffix)])
            if getattr(base, field):
                raise ValueError("Invalid problem name %s: multiple '%s' instances (give the "
                                 "suffix %r once)" % (name, suffix, suffix))
            return base._replace(**{field: True})
    return ProblemSpec(name, False, False)


def get_problem_name(base_name: str, was_reversed: bool = False, was_copy: bool = False) -> str:
    """Inverse of `parse_problem_name`."""
    if any(base_name.endswith(s) for s in (_REV_SUFFIX, _COPY_SUFFIX)):
        raise ValueError("`base_name` cannot end in '_rev' or '_copy' (got %r; those suffixes "
                         "are added by was_reversed and was_copy)" % base_name)
    name = base_name
    if was_copy:
        name += _COPY_SUFFIX
    if was_reversed:
        name += _REV_SUFFIX
    return name


def _problem_name_validator(key, value):
    if any(key.endswith(s) for s in (_REV_SUFFIX, _COPY_SUFFIX)):
        raise InvalidNameError("Invalid problem name: cannot end in _rev or _copy (%r; those "
                               "suffixes are applied at look-up)" % key)


def _on_problem_set(key, value):
    value.name = key


def _on_model_set(key, value):
    value.REGISTERED_NAME = key


def _call_hparams_fn(key, value):
    hp = value()
    if hp is None:
        raise TypeError("HParams %s is None. Make sure the registered function returns the "
                        "HParams object (%s returned None)" % (key, _describe(value)))
    return hp


def _nargs_validator(nargs, message):
    """Registered functions must take exactly `nargs` positional arguments (no *args/**kw)."""
    def validator(key, value):
        try:
            params = inspect.signature(value).parameters
        except (TypeError, ValueError):
            return
        positional = [p for p in params.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        variadic = [p.name for p in params.values()
                    if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if len(positional) != nargs or variadic:
            detail = "%r takes %d" % (key, len(positional))
            if variadic:
                detail += " and *%s" % ", *".join(variadic)
            raise ValueError("%s (%s)" % (message, detail))
    return validator


def _hparams_validator(key, value):
    if not callable(value):
        raise ValueError("hparams set %r must be a function" % key)


class Registries:
    """All the registries, as T2T's `Registries` class."""
    problems = Registry("problems", validator=_problem_name_validator, on_set=_on_problem_set)
    models = Registry("models", on_set=_on_model_set)
    hparams = Registry("hparams", validator=_hparams_validator, value_transformer=_call_hparams_fn)
    ranged_hparams = Registry("ranged_hparams", validator=_nargs_validator(
        1, "Registered ranged_hparams functions must take a single argument, the RangedHParams "
        "object."))
    optimizers = Registry("optimizers", validator=_nargs_validator(
        2, "Registered optimizer functions must take exactly two arguments: learning_rate "
        "(float) and hparams (HParams)."))


# --- models -----------------------------------------------------------------
def register_model(name=None):
    return Registries.models.register(name)


def model(name):
    return Registries.models[name]


def list_models():
    return Registries.models.list()


# --- hparams ----------------------------------------------------------------
def register_hparams(name=None):
    return Registries.hparams.register(name)


def hparams(name):
    """A fresh HParams from the registered function `name`."""
    return Registries.hparams[name]


def list_hparams(prefix=None):
    names = Registries.hparams.list()
    return [n for n in names if n.startswith(prefix)] if prefix else names


def register_ranged_hparams(name=None):
    return Registries.ranged_hparams.register(name)


def ranged_hparams(name):
    return Registries.ranged_hparams[name]


def list_ranged_hparams():
    return Registries.ranged_hparams.list()


# --- optimizers -------------------------------------------------------------
_LEGACY_OPTIMIZER_NAMES = {"SGD": "sgd", "RMSProp": "rms_prop", "Adam": "adam",
                           "Adafactor": "adafactor", "Momentum": "momentum"}


def register_optimizer(name=None):
    return Registries.optimizers.register(name)


def optimizer(name):
    """The optimizer registered as `name`: snake_case, or T2T's legacy spellings (`SGD`,
    `RMSProp`, and any UpperCamelCase name: `AdamW` is `adam_w`, as in T2T 1.15.7)."""
    name = _LEGACY_OPTIMIZER_NAMES.get(name, name)
    _load_builtins_optimizers()
    if name not in Registries.optimizers and camelcase_to_snakecase(name) in \
            Registries.optimizers:
        name = camelcase_to_snakecase(name)
    return Registries.optimizers[name]


def list_optimizers():
    _load_builtins_optimizers()
    return Registries.optimizers.list()


def _load_builtins_optimizers():
    builtins.load("optimizers")


# --- problems ---------------------------------------------------------------
def register_problem(name=None):
    return Registries.problems.register(name)


register_base_problem = register_problem


def problem(name, **kwargs):
    """An instance of the problem `name`, honouring `_rev` and `_copy` suffixes."""
    spec = parse_problem_name(name)
    if spec.base_name not in Registries.problems:
        message = Registries.problems.unknown_message(spec.base_name)
        if spec.base_name != name:
            message = message.replace(spec.base_name + " never", "%s (from %s) never" %
                                      (spec.base_name, name), 1)
        raise UnknownNameError(message)
    cls = Registries.problems[spec.base_name]
    return cls(was_reversed=spec.was_reversed, was_copy=spec.was_copy, **kwargs)


base_problem = problem


def list_problems():
    return Registries.problems.list()


list_base_problems = list_problems


# --- help -------------------------------------------------------------------
def display_list_by_prefix(names_list, starting_spaces=0):
    """Names grouped by their first `_` component, one group a line."""
    cur_prefix, result_lines = None, []
    space = " " * starting_spaces
    for name in sorted(names_list):
        split = name.split("_", 1)
        prefix = split[0]
        if cur_prefix != prefix:
            result_lines.append(space + prefix + ":")
            cur_prefix = prefix
        result_lines.append(space + "  * " + name)
    return "\n".join(result_lines)


def help_string():
    """Text for --registry_help: every registered name by kind."""
    sections = [
        ("Problems", list_problems()),
        ("Models", list_models()),
        ("HParams", list_hparams()),
        ("RangedHParams", list_ranged_hparams()),
        ("Optimizers", list_optimizers()),
    ]
    lines = ["Registry contents:", "------------------"]
    for title, names in sections:
        lines.append("")
        lines.append("  %s:" % title)
        lines.append(display_list_by_prefix(names, starting_spaces=4))
    return "\n".join(lines)
