"""The T2T names ported code uses that t2t does not have, each with the closest t2t names.

Every `from t2t.x import name`, `import t2t.x.y` and `module.attr` read (where `module`
was bound by such an import) is looked up by importing the t2t module and reading its
attributes (or submodules):

    >>> missing_names("from t2t.layers import common_layers\\n"
    ...               "y = common_layers.dense_relu_dens(x)\\n")
    [(2, 'common_layers.dense_relu_dens is not in t2t; closest: dense_relu_dense')]
"""
import ast
import importlib
import pkgutil
import types

from t2t.core import registry
from t2t.porting import import_map
from t2t.core.source_edits import reference_chains

CLOSEST = 1
_NOT_FOUND = object()
_MODULES = {}


def import_t2t_module(name):
    """The module `name`, None if t2t has no such module; other import errors propagate."""
    if name not in _MODULES:
        try:
            _MODULES[name] = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if not error.name or not (name == error.name or name.startswith(error.name + ".")):
                raise  # a module the t2t module itself needs: not a porting matter
            _MODULES[name] = None
    return _MODULES[name]


def member(obj, name):
    """obj.name, or the submodule `name` of package `obj`; _NOT_FOUND when neither."""
    value = getattr(obj, name, _NOT_FOUND)
    if value is _NOT_FOUND and isinstance(obj, types.ModuleType) and hasattr(obj, "__path__"):
        value = import_t2t_module(obj.__name__ + "." + name) or _NOT_FOUND
    return value


def candidates(obj):
    """The public names of `obj` and, for a package, its submodules (not the modules it
    imports, such as `tf` or `np`)."""
    prefix = getattr(obj, "__name__", "") + "."
    names = {n for n in dir(obj) if not n.startswith("_") and not (
        isinstance(getattr(obj, n), types.ModuleType)
        and not getattr(obj, n).__name__.startswith(prefix))}
    if hasattr(obj, "__path__"):
        names.update(m.name for m in pkgutil.iter_modules(obj.__path__))
    return names


def not_in_t2t(shown, name, obj):
    """'<shown> is not in t2t; closest: a, b' (the closest of obj's names to `name`)."""
    close = registry.closest_names(name, candidates(obj), n=CLOSEST)
    return "%s is not in t2t; %s" % (
        shown, ("closest: " + ", ".join(close)) if close else "no close name in %s" % (
            getattr(obj, "__name__", shown.rpartition(".")[0])))


def resolve(dotted):
    """(the object `dotted` names, None) or (None, the message saying what t2t lacks)."""
    parts = dotted.split(".")
    obj = import_t2t_module(parts[0])
    for index, name in enumerate(parts[1:], 1):
        value = member(obj, name)
        if value is _NOT_FOUND:
            return None, not_in_t2t(".".join(parts[:index + 1]), name, obj)
        obj = value
    return obj, None


def _chains(tree, roots):
    """(line, root, attributes) of the `root.a.b` reads."""
    for nodes, parts in reference_chains(tree, roots):
        if len(parts) > 1 and isinstance(nodes[-1].ctx, ast.Load):
            yield nodes[0].lineno, parts[0], parts[1:]


def _bindings(tree, found):
    """{local name: t2t module it is bound to} of the imports; import problems into found."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not import_map.is_t2t_name(alias.name):
                    continue
                obj, problem = resolve(alias.name)
                if problem:
                    found.append((node.lineno, problem))
                elif alias.asname:
                    bound[alias.asname] = obj
                else:
                    bound[alias.name.split(".")[0]] = import_t2t_module(import_map.T2T_NEW_ROOT)
        elif isinstance(node, ast.ImportFrom) and not node.level and import_map.is_t2t_name(
                node.module or ""):
            module, problem = resolve(node.module)
            if problem:
                found.append((node.lineno, problem))
                continue
            for alias in node.names:
                if alias.name == "*":
                    continue
                value = member(module, alias.name)
                if value is _NOT_FOUND:
                    found.append((node.lineno, not_in_t2t(node.module + "." + alias.name,
                                                          alias.name, module)))
                elif isinstance(value, types.ModuleType):
                    bound[alias.asname or alias.name] = value
    return bound


def missing_names(text, tree=None):
    """[(line, "<name> is not in t2t; closest: ...")] for the t2t names `text` uses."""
    tree = tree if tree is not None else ast.parse(text)
    found = []
    bound = _bindings(tree, found)
    for lineno, root, attrs in _chains(tree, bound):
        obj = bound[root]
        for index, name in enumerate(attrs):
            if not isinstance(obj, types.ModuleType):
                break  # attributes of classes and values are not the port's business
            value = member(obj, name)
            if value is _NOT_FOUND:
                found.append((lineno, not_in_t2t(".".join([root] + attrs[:index + 1]), name,
                                                 obj)))
                break
            obj = value
    return sorted(set(found))
