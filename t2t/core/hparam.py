"""Hyperparameters: T2T 1.15.7's `hparam` module (`HParams`, `parse_values`), same behaviour.

    hp = HParams(learning_rate=0.1, num_layers=2, optimizer="adam", filters=[3, 5])
    hp.parse("learning_rate=0.2,num_layers=4,filters=[7,9],filters[1]=11")
    hp.num_layers, hp.filters     # 4, [7, 11]
    hp.parse("num_layers=2.5")
    # ValueError: Could not parse hparam 'num_layers' of type 'int' with value '2.5' in
    #   num_layers=2.5 (expected an int, e.g. num_layers=4)

    parse_values("x=5,L=[1,2],arr[1]=3", {"x": int, "L": int, "arr": int})
    # {'x': 5, 'L': [1, 2], 'arr': {1: 3}}

Each hparam keeps the type of its first value (for a list, of its first element): an int
may be set where a float is expected, never a float where an int is, a bool only from a
bool. Error messages start with T2T's words ("Unknown hyperparameter type for", "Could not
parse hparam", "Must not pass a list for single-valued parameter", ...), so code that matches
on them keeps working, and end with what to do (the closest names, the expected type).

Where t2t goes further than T2T (see docs/t2t_differences.md): `parse` applies indexed
assignments (`arr[1]=3`) to the list instead of failing; an hparam whose value is None takes
the type of what `parse` reads; `hparams.name = value` on a new name adds it.
"""
import copy
import json
import numbers
import re
from typing import Any, Dict

from t2t.core import registry

# One clause of the input: <name>[<index>]? = <value or [list]>, e.g. "var[1] = a", "x = [1,2,3]".
PARAM_RE = re.compile(r"""
  (?P<name>[a-zA-Z][\w\.]*)      # variable name: "var" or "x"
  (\[\s*(?P<index>\d+)\s*\])?    # (optional) index: "1" or None
  \s*=\s*
  ((?P<val>[^,\[]*)              # single value: "a" or None
   |
   \[(?P<vals>[^\]]*)\])         # list of values: None or "1,2,3"
  ($|,\s*)""", re.VERBOSE)

_TYPE_EXAMPLES = {bool: "true or false", int: "an int, e.g. 4", float: "a number, e.g. 0.5",
                  str: "a string without commas or brackets"}


def _expected(var_type):
    return _TYPE_EXAMPLES.get(var_type, getattr(var_type, "__name__", str(var_type)))


def _parse_fail(name, var_type, value, values):
    """Raise T2T's error for a value that does not parse as the hparam's type."""
    raise ValueError("Could not parse hparam '%s' of type '%s' with value '%s' in %s "
                     "(expected %s)" % (name, var_type.__name__, value, values,
                                        _expected(var_type)))


def _reuse_fail(name, values):
    """Raise T2T's error for a name assigned twice in one string."""
    raise ValueError("Multiple assignments to variable '%s' in %s (give each name once)" %
                     (name, values))


def _process_scalar_value(name, parse_fn, var_type, m_dict, values, results_dictionary):
    """Record "s=5" as {"s": 5} or "arr[0]=5" as {"arr": {0: 5}} in results_dictionary."""
    try:
        parsed_value = parse_fn(m_dict["val"])
    except ValueError:
        _parse_fail(name, var_type, m_dict["val"], values)
    if not m_dict["index"]:
        if name in results_dictionary:
            _reuse_fail(name, values)
        results_dictionary[name] = parsed_value
        return
    if name in results_dictionary:
        if not isinstance(results_dictionary.get(name), dict):
            _reuse_fail(name, values)
    else:
        results_dictionary[name] = {}
    index = int(m_dict["index"])
    if index in results_dictionary[name]:
        _reuse_fail("{}[{}]".format(name, index), values)
    results_dictionary[name][index] = parsed_value


def _process_list_value(name, parse_fn, var_type, m_dict, values, results_dictionary):
    """Record "arr=[1,2,3]" as {"arr": [1, 2, 3]} in results_dictionary."""
    if m_dict["index"] is not None:
        raise ValueError("Assignment of a list to a list index. (%s[%s]=[...] in %s: assign "
                         "one value to an index, or the whole list to %s)" %
                         (name, m_dict["index"], values, name))
    elements = [e for e in re.split("[ ,]", m_dict["vals"]) if e]
    if name in results_dictionary:
        _reuse_fail(name, values)
    try:
        results_dictionary[name] = [parse_fn(e) for e in elements]
    except ValueError:
        _parse_fail(name, var_type, m_dict["vals"], values)


def _cast_to_type_if_compatible(name, param_type, value):
    """`value` as `param_type`, or ValueError if the kinds differ (T2T's rules).

    A str parameter takes only strings, a bool only bools (not 0/1), an int only integers
    (not 2.0), a float any number; a NoneType parameter takes anything unchanged.

        _cast_to_type_if_compatible("lr", float, 1)      # 1.0
        _cast_to_type_if_compatible("n", int, 2.5)       # ValueError
    """
    fail_msg = ("Could not cast hparam '%s' of type '%s' from value %r (expected %s)" %
                (name, param_type, value, _expected(param_type)))
    if issubclass(param_type, type(None)):
        return value
    if issubclass(param_type, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise ValueError(fail_msg)
    if issubclass(param_type, bool) != isinstance(value, bool):
        raise ValueError(fail_msg)
    if issubclass(param_type, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise ValueError(fail_msg)
    if issubclass(param_type, numbers.Number) and not isinstance(value, numbers.Number):
        raise ValueError(fail_msg)
    return param_type(value)


def _parse_bool(value):
    if value in ("true", "True"):
        return True
    if value in ("false", "False"):
        return False
    return bool(int(value))  # "1" / "0" (any int, as T2T); anything else: ValueError


def _infer_value(text):
    """For an hparam whose value is None: an int, float, bool or the string itself."""
    for cast in (int, float, _parse_bool):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _parse_fn(var_type):
    if var_type is bool:
        return _parse_bool
    if var_type is type(None):
        return _infer_value  # T2T failed here with a TypeError
    return var_type


def closest_names(name, names, n=3):
    """The known names most like `name`: the one did-you-mean of registries, flags and
    hparams (`registry.closest_names`), so a typo gets the same suggestions everywhere."""
    return registry.closest_names(name, names, n=n)


def _unknown_tail(name, names):
    close = closest_names(name, names)
    if close:
        return "; closest names: %s" % ", ".join(close)
    return "; no hparam has a similar name (%d names, e.g. %s)" % (
        len(names), ", ".join(sorted(names)[:5]))


class UnknownHParamNameError(ValueError):
    """`parse` of a name the hparams do not have. Its message keeps T2T's words ("Unknown
    hyperparameter type for x", which code matches on); `user_message` is the line for a
    person, who would read "type" as a wrong value:

        try:
            HParams(learning_rate=0.1).parse("learning_rat=0.2")
        except UnknownHParamNameError as error:
            error.name, error.closest   # "learning_rat", ["learning_rate"]
            error.user_message()        # "unknown hyperparameter learning_rat; did you
                                        #  mean learning_rate?"
    """

    def __init__(self, name, known_names):
        self.name = name
        self.closest = closest_names(name, known_names)
        self.num_known = len(known_names)
        self.some_known = sorted(known_names)[:5]
        super().__init__("Unknown hyperparameter type for %s%s" % (
            name, _unknown_tail(name, known_names)))

    def user_message(self, what="hyperparameter"):
        """"unknown <what> <name>; did you mean a, b?" (or some names when none is close)."""
        if self.closest:
            hint = "did you mean %s?" % ", ".join(self.closest)
        else:
            hint = "no name is close (%d names, e.g. %s)" % (self.num_known,
                                                            ", ".join(self.some_known))
        return "unknown %s %s; %s" % (what, self.name, hint)


def parse_values(values, type_map, ignore_unknown=False):
    """Parse "name=value,..." into {name: value}, typed by `type_map` (name -> type).

    A value is a scalar ("x=5"), a list in brackets ("L=[1,2]", elements split on commas or
    spaces) or an indexed element ("arr[1]=3", returned as {index: value}); bools read
    true/True/false/False or an int. Each name may be assigned once.

        parse_values("x=5,L=[1,2],arr[1]=3", {"x": int, "L": int, "arr": int})
        # {'x': 5, 'L': [1, 2], 'arr': {1: 3}}

    Raises ValueError: a malformed string, an unknown name (unless `ignore_unknown`), a value
    of the wrong type, a list assigned to an index, or a name assigned twice.
    """
    results_dictionary = {}
    pos = 0
    while pos < len(values):
        m = PARAM_RE.match(values, pos)
        if not m:
            raise ValueError("Malformed hyperparameter value: %s (expected name=value pairs "
                             "separated by commas, e.g. a=1,b=0.5,c=name,d=[1,2])" %
                             values[pos:])
        pos = m.end()
        m_dict = m.groupdict()
        name = m_dict["name"]
        if name not in type_map:
            if ignore_unknown:
                continue
            raise UnknownHParamNameError(name, type_map)
        var_type = type_map[name]
        parse = _parse_fn(var_type)
        if m_dict["val"] is not None:
            _process_scalar_value(name, parse, var_type, m_dict, values, results_dictionary)
        elif m_dict["vals"] is not None:
            _process_list_value(name, parse, var_type, m_dict, values, results_dictionary)
        else:
            _parse_fail(name, var_type, "", values)
    return results_dictionary


class UnknownHParamError(KeyError):
    """`set_hparam` of a name the HParams does not have (a KeyError, as in T2T)."""

    def __str__(self):
        return self.args[0] if self.args else ""


class HParams:
    """A set of named hyperparameters with types (T2T's `HParams`).

        hp = HParams(learning_rate=0.1, num_hidden_units=100, activations=["relu", "tanh"])
        hp.parse("learning_rate=0.3")
        hp.learning_rate, "learning_rate" in hp, hp.get("missing", 7)     # 0.3, True, 7
        hp.values()   # {'learning_rate': 0.3, 'num_hidden_units': 100, 'activations': [...]}
    """

    _HAS_DYNAMIC_ATTRIBUTES = True

    def __init__(self, model_structure=None, **kwargs):
        # name -> (type of the value, or of a list's elements; whether it is a list)
        object.__setattr__(self, "_hparam_types", {})
        object.__setattr__(self, "_model_structure", model_structure)
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    # -- adding, changing, removing ----------------------------------------------------
    def add_hparam(self, name, value):
        """Add hparam `name`; its type is fixed by `value` (a list: by its first element)."""
        if getattr(self, name, None) is not None:
            hint = ("an hparam of that name exists; change it with set_hparam" if
                    name in self._hparam_types else "it is an HParams attribute")
            raise ValueError("Hyperparameter name is reserved: %s (%s)" % (name, hint))
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError("Multi-valued hyperparameters cannot be empty: %s (give at "
                                 "least one element; it fixes the elements' type)" % name)
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        object.__setattr__(self, name, value)

    def set_hparam(self, name, value):
        """Set existing hparam `name`, checking `value` against its type (T2T's rules)."""
        if name not in self._hparam_types:
            raise UnknownHParamError("Unknown hyperparameter %s%s" % (
                name, _unknown_tail(name, self._hparam_types)))
        param_type, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError("Must not pass a list for single-valued parameter: %s "
                                 "(give one value, e.g. %s=%s)" % (name, name, value[0] if
                                                                   value else "..."))
            object.__setattr__(self, name, [
                _cast_to_type_if_compatible(name, param_type, v) for v in value])
            return
        if is_list:
            raise ValueError("Must pass a list for multi-valued parameter: %s. (write it in "
                             "brackets, e.g. %s=[%s])" % (name, name, value))
        value = _cast_to_type_if_compatible(name, param_type, value)
        if param_type is type(None) and value is not None:
            # t2t: a None-valued hparam takes the type of the first real value.
            self._hparam_types[name] = (type(value), False)
        object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        # `hparams.x = y` (everywhere in T2T model code): changes an existing hparam, with its
        # type following the new value, and adds a new one, so values() sees it.
        if name not in self._hparam_types and not (isinstance(value, (list, tuple)) and
                                                   not value):
            self.add_hparam(name, value)
            return
        old_type = self._hparam_types.get(name, (type(None), False))[0]
        if isinstance(value, (list, tuple)):
            self._hparam_types[name] = (type(value[0]) if value else old_type, True)
        else:
            self._hparam_types[name] = (type(value), False)
        object.__setattr__(self, name, value)

    def del_hparam(self, name):
        """Remove hparam `name`; nothing happens if there is none."""
        if hasattr(self, name):
            object.__delattr__(self, name)
            self._hparam_types.pop(name, None)

    # -- parsing --------------------------------------------------------------------------
    def parse(self, values):
        """Override hparams from "name=value,..." (see `parse_values`); returns self.

        `arr[1]=3` sets one element of list hparam `arr` (T2T raised "Must pass a list").
        """
        type_map = {name: param_type for name, (param_type, _) in self._hparam_types.items()}
        values_map = parse_values(values or "", type_map)
        for name, value in values_map.items():
            if isinstance(value, dict):
                values_map[name] = self._with_indexed_values(name, value, values)
        return self.override_from_dict(values_map)

    def _with_indexed_values(self, name, assignments, values):
        """The list hparam `name` with {index: value} applied."""
        if not self._hparam_types[name][1]:
            raise ValueError("Could not parse hparam '%s' in %s: it holds a single value, so "
                             "%s[%d]=... has no element to set (write %s=...)" %
                             (name, values, name, min(assignments), name))
        current = list(getattr(self, name))
        for index, value in sorted(assignments.items()):
            if index >= len(current):
                raise ValueError("Could not parse hparam '%s' in %s: index %d is out of range "
                                 "for its %d elements (give the whole list, %s=[...])" %
                                 (name, values, index, len(current), name))
            current[index] = value
        return current

    def override_from_dict(self, values_dict):
        """Set each name in `values_dict` with `set_hparam`; returns self."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    set_from_map = override_from_dict  # the name TF's contrib HParams used

    def set_model_structure(self, model_structure):
        object.__setattr__(self, "_model_structure", model_structure)

    def get_model_structure(self):
        return self._model_structure

    # -- JSON ------------------------------------------------------------------------------
    def to_json(self, indent=None, separators=None, sort_keys=False):
        """The hparams as a JSON object; callables (e.g. per-feature functions) are left out."""
        def remove_callables(x):
            if isinstance(x, dict):
                return {k: remove_callables(v) for k, v in x.items() if not callable(v)}
            if isinstance(x, list):
                return [remove_callables(i) for i in x if not callable(i)]
            return x

        def default(value):
            if hasattr(value, "item"):  # numpy scalars
                return value.item()
            return str(value)

        return json.dumps(remove_callables(self.values()), indent=indent,
                          separators=separators, sort_keys=sort_keys, default=default)

    def parse_json(self, values_json):
        """Override hparams from a JSON object string; returns self."""
        return self.override_from_dict(json.loads(values_json))

    # -- reading ---------------------------------------------------------------------------
    def values(self):
        """{name: value} of every hparam."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key, default=None):
        """The value of `key`, or `default` when there is no such hparam.

        A `default` of another kind than the hparam (a list for a scalar, a float for an
        int, ...) raises ValueError, as in T2T, so a caller's typo shows up.
        """
        if key not in self._hparam_types:
            return default
        if default is not None:
            param_type, is_param_list = self._hparam_types[key]
            type_str = "list<%s>" % param_type if is_param_list else str(param_type)
            fail_msg = "Hparam '%s' of type '%s' is incompatible with default=%s" % (
                key, type_str, default)
            if is_param_list != isinstance(default, list):
                raise ValueError(fail_msg)
            try:
                for value in (default if is_param_list else [default]):
                    _cast_to_type_if_compatible(key, param_type, value)
            except ValueError as error:
                raise ValueError("%s. %s" % (fail_msg, error)) from None
        return getattr(self, key)

    def __contains__(self, key):
        return key in self._hparam_types

    def __iter__(self):
        return iter(self.values().items())

    def __str__(self):
        return str(sorted(self.values().items()))

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, self.__str__())

    def __eq__(self, other):
        return isinstance(other, HParams) and self.values() == other.values()

    __hash__ = None

    def copy(self):
        return copy.deepcopy(self)

    @staticmethod
    def _get_kind_name(param_type, is_list):
        """T2T's field name for a type: int -> "int64_value", [str] -> "bytes_list", ..."""
        if issubclass(param_type, bool):
            typename = "bool"
        elif issubclass(param_type, int):
            typename = "int64"
        elif issubclass(param_type, (str, bytes)):
            typename = "bytes"
        elif issubclass(param_type, float):
            typename = "float"
        else:
            raise ValueError("Unsupported parameter type: %s" % str(param_type))
        return "_".join([typename, "list" if is_list else "value"])


def hparams_from_json(values_json: str) -> HParams:
    """A new HParams holding exactly the values of a JSON object."""
    values: Dict[str, Any] = json.loads(values_json)
    return HParams(**values)


def pprint_hparams(hparams):
    """The hparams' values as one pretty-printed dict, on a new line (T2T's misc_utils).

        pprint_hparams(HParams(a=1, b="x"))   # "\n{'a': 1,\n 'b': 'x'}"
    """
    import pprint  # only this helper needs it
    return "\n{}".format(pprint.pformat(hparams.values(), width=1))
