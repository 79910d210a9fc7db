"""Hyperparameters: a typed bag of named values, compatible with T2T's `HParams`.

    hp = HParams(learning_rate=0.1, num_layers=2, optimizer="adam", filters=[3, 5])
    hp.parse("learning_rate=0.2,num_layers=4,filters=[7]")
    hp.num_layers            # 4
    hp.parse("num_layers=2.5")
    # ValueError: hparam 'num_layers' holds an int; cannot set it to '2.5' (a float)

Each hparam keeps the type of its first value: an int may be set where a float is
expected, but not a float where an int is, and a list stays a list of its element
type. Hparams whose value is None take whatever type is parsed.
"""
import json
import numbers
import re
from typing import Any, Dict

# One assignment: name=value, name=[v1, v2], name[index]=value.
_PARAM_RE = re.compile(r"""
  (?P<name>[a-zA-Z][\w\.]*)      # variable name: "var" or "x"
  (\[\s*(?P<index>\d+)\s*\])?    # (optional) index: "1" or None
  \s*=\s*
  ((?P<val>[^,\[]*)              # single value: "a" or None
   |
   \[(?P<vals>[^\]]*)\])         # list of values: None or "1,2,3"
  ($|,\s*)""", re.VERBOSE)

_BOOL_STRINGS = {"true": True, "false": False, "1": True, "0": False}


def _type_name(t) -> str:
    return {int: "an int", float: "a float", bool: "a bool", str: "a string"}.get(
        t, getattr(t, "__name__", str(t)))


def _infer_value(text: str):
    """Parse a literal of unknown type: int, float, bool, None or string."""
    text = text.strip()
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text in ("None", "none"):
        return None
    return _unquote(text)


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _cast(name: str, value, param_type):
    """Cast `value` (a string from `parse`, or any Python value) to `param_type`."""
    if param_type is None or value is None:
        return _infer_value(value) if isinstance(value, str) and param_type is None else value
    if param_type is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _BOOL_STRINGS:
            return _BOOL_STRINGS[value.strip().lower()]
        if isinstance(value, numbers.Integral) and value in (0, 1):
            return bool(value)
        raise ValueError("hparam %r holds a bool; cannot set it to %r (use true or false)" %
                         (name, value))
    if param_type is str:
        return _unquote(value) if isinstance(value, str) else str(value)
    if param_type is int:
        if isinstance(value, bool):
            raise ValueError("hparam %r holds an int; cannot set it to %r (a bool)" % (name, value))
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ValueError("hparam %r holds an int; cannot set it to %r (%s)" %
                         (name, value, _type_name(type(_infer_value(value)) if isinstance(
                             value, str) else type(value))))
    if param_type is float:
        if isinstance(value, bool):
            raise ValueError("hparam %r holds a float; cannot set it to %r (a bool)" % (name, value))
        if isinstance(value, numbers.Real):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise ValueError("hparam %r holds a float; cannot set it to %r" % (name, value))
    if param_type is dict:
        if isinstance(value, dict):
            return value
        raise ValueError("hparam %r holds a dict; set it from Python, not from a string" % name)
    if isinstance(value, param_type):
        return value
    raise ValueError("hparam %r holds %s; cannot set it to %r" % (name, _type_name(param_type), value))


class HParams:
    """Named hyperparameters with T2T's `HParams` API."""

    def __init__(self, model_structure=None, **kwargs):
        # name -> (element type or None, is_list)
        object.__setattr__(self, "_hparam_types", {})
        object.__setattr__(self, "_model_structure", model_structure)
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    # -- adding and changing -------------------------------------------------
    def add_hparam(self, name: str, value: Any) -> None:
        """Add a new hparam; its type is fixed by `value`."""
        if getattr(self, name, None) is not None or name in self._hparam_types:
            raise ValueError("hparam %r already exists; use set_hparam to change it" % name)
        if name.startswith("_") or hasattr(HParams, name):
            raise ValueError("%r is not a valid hparam name (reserved)" % name)
        self._hparam_types[name] = self._type_of(value)
        object.__setattr__(self, name, value)

    @staticmethod
    def _type_of(value):
        if isinstance(value, (list, tuple)):
            if not value:
                return (None, True)
            return (type(value[0]) if value[0] is not None else None, True)
        return (type(value) if value is not None else None, False)

    def set_hparam(self, name: str, value: Any) -> None:
        """Set an existing hparam, checking the type against the current one."""
        if name not in self._hparam_types:
            raise ValueError("unknown hparam %r; %s" % (name, self._closest_hint(name)))
        param_type, is_list = self._hparam_types[name]
        if is_list:
            if not isinstance(value, (list, tuple)):
                raise ValueError("hparam %r holds a list; cannot set it to %r (use [a,b])" %
                                 (name, value))
            value = [_cast(name, v, param_type) for v in value]
        else:
            if isinstance(value, (list, tuple)):
                raise ValueError("hparam %r holds a single value; cannot set it to a list %r" %
                                 (name, value))
            value = _cast(name, value, param_type)
            if param_type is None and value is not None:
                self._hparam_types[name] = self._type_of(value)
        object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        # Plain attribute assignment keeps T2T's loose semantics (hparams.x = y
        # on an existing name changes it, on a new name adds it) so that model
        # code ported from T2T keeps working.
        if name in self._hparam_types:
            self._hparam_types[name] = self._type_of(value)
            object.__setattr__(self, name, value)
        else:
            self.add_hparam(name, value)

    def del_hparam(self, name: str) -> None:
        if name in self._hparam_types:
            object.__delattr__(self, name)
            del self._hparam_types[name]

    def _closest_hint(self, name):
        """"did you mean a, b, c?": the closest existing names (always some, if any exist).

        A command-line user cannot call add_hparam, so even a poor match is worth naming.
        """
        import difflib
        names = list(self._hparam_types)
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        if not close:
            def similarity(other):
                return difflib.SequenceMatcher(None, name, other).ratio()
            close = sorted(names, key=lambda other: (-similarity(other), other))[:3]
        if not close:
            return "this HParams has no hparams yet"
        return "did you mean %s?" % ", ".join(close)

    # -- parsing ---------------------------------------------------------------
    def parse(self, values: str) -> "HParams":
        """Override from a string "a=1,b=0.5,c=name,d=[1,2]"; returns self."""
        for name, value in self._parse_string(values).items():
            self.set_hparam(name, value)
        return self

    def _parse_string(self, values: str) -> Dict[str, Any]:
        result: Dict[str, Any] = {}
        pos = 0
        values = (values or "").strip()
        while pos < len(values):
            match = _PARAM_RE.match(values, pos)
            if not match:
                raise ValueError("malformed hparams string at %r; expected name=value pairs "
                                 "separated by commas, e.g. 'a=1,b=0.5,c=name,d=[1,2]'" %
                                 values[pos:])
            pos = match.end()
            name = match.group("name")
            if name not in self._hparam_types:
                raise ValueError("unknown hparam %r; %s" % (name, self._closest_hint(name)))
            if match.group("index") is not None:
                index = int(match.group("index"))
                current = list(result.get(name, getattr(self, name) or []))
                if not self._hparam_types[name][1]:
                    raise ValueError("hparam %r is not a list; cannot index it" % name)
                if index >= len(current):
                    raise ValueError("hparam %r has %d elements; index %d is out of range" %
                                     (name, len(current), index))
                current[index] = match.group("val")
                result[name] = current
            elif match.group("vals") is not None:
                text = match.group("vals").strip()
                result[name] = [v.strip() for v in text.split(",")] if text else []
                if not self._hparam_types[name][1]:
                    raise ValueError("hparam %r holds a single value; got a list [%s]" %
                                     (name, text))
            else:
                if name in result:
                    raise ValueError("hparam %r is set twice in %r" % (name, values))
                result[name] = match.group("val").strip()
        return result

    def override_from_dict(self, values_dict: Dict[str, Any]) -> "HParams":
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    # -- reading ---------------------------------------------------------------
    def values(self) -> Dict[str, Any]:
        """A dict of every hparam name to its value."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key: str, default=None):
        if key in self._hparam_types:
            value = getattr(self, key)
            if default is not None and value is not None:
                # Checks the type as T2T did, so typos in callers show up.
                param_type, is_list = self._hparam_types[key]
                if not is_list and param_type is not None and not isinstance(
                        default, (param_type, numbers.Number if param_type in (int, float)
                                  else param_type)):
                    raise ValueError("hparam %r holds %s; default %r has another type" %
                                     (key, _type_name(param_type), default))
            return value
        return default

    def __contains__(self, key) -> bool:
        return key in self._hparam_types

    def __iter__(self):
        return iter(self.values().items())

    def __repr__(self):
        return "HParams(%s)" % ", ".join("%s=%r" % kv for kv in sorted(self.values().items()))

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, HParams) and self.values() == other.values()

    def copy(self) -> "HParams":
        import copy
        return copy.deepcopy(self)

    def set_model_structure(self, model_structure):
        object.__setattr__(self, "_model_structure", model_structure)

    def get_model_structure(self):
        return self._model_structure

    # -- JSON ------------------------------------------------------------------
    def to_json(self, indent=None, separators=None, sort_keys=False) -> str:
        def default(value):
            if hasattr(value, "item"):  # numpy scalars
                return value.item()
            return str(value)
        return json.dumps(self.values(), indent=indent, separators=separators,
                          sort_keys=sort_keys, default=default)

    def parse_json(self, values_json: str) -> "HParams":
        return self.override_from_dict(json.loads(values_json))


def hparams_from_json(values_json: str) -> HParams:
    """A new HParams holding exactly the values in a JSON object."""
    return HParams(**json.loads(values_json))
