"""Import one module name as another: the same module object under a second name.

    finder = AliasFinder(lambda name: ["t2t" + name[len("old_t2t"):]]
                         if name == "old_t2t" or name.startswith("old_t2t.") else None,
                         owner="t2t")
    finder.install()
    import old_t2t.core.registry as r       # r is t2t.core.registry, the same object
    finder.uninstall()

An alias is served from `sys.meta_path`: the finder imports the real module and hands it to
the import system under the alias, so both names give one object (one registry, one class
per name, `isinstance` holds). A real module keeps its own `__spec__`.

With an `owner`, a name the real side lacks fails with a message naming the closest real names: an alias of
a missing module is a `ModuleNotFoundError`, and a missing attribute of a served module
(`from old_t2t.core.registry import problme`) an `ImportError` (an `AttributeError` when
read as `module.problme`), each naming the closest.
"""
import dis
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import pkgutil
import sys

from t2t.core import registry

_IMPORT_FROM = dis.opmap["IMPORT_FROM"]


class ServedLoader(importlib.abc.Loader):
    """Hands an already imported module to the import system under another name."""

    def __init__(self, module):
        self._module = module
        self._spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        # module_from_spec set the alias spec on the real module: give it back its own.
        if self._spec is not None:
            module.__spec__ = self._spec


class AliasFinder(importlib.abc.MetaPathFinder):
    """Serves alias names from `resolve(fullname)`.

    `resolve` returns None for a name that is no alias of this finder, else the real
    module names to try in order (the first that exists is served), or a module object
    to serve as it is (for an alias package of its own, such as `tensor2tensor`).
    With `owner` ("t2t"), a missing name is an error naming the closest ones ("t2t has no
    ..."), and `describe(name)` is how those messages show a real name (default: as it is);
    without, the import system's own errors stand.
    """

    def __init__(self, resolve, describe=None, owner=None, fallbacks=None, stand_ins=None):
        self._resolve = resolve
        self._describe = describe or (lambda name: name)
        self._owner = owner
        # {real package: packages whose submodules stand in for its missing attributes}
        self._fallbacks = fallbacks or {}
        # {real package: stand_in(name) -> a module served for its missing attribute, or None}
        self._stand_ins = stand_ins or {}

    def install(self):
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def uninstall(self):
        if self in sys.meta_path:
            sys.meta_path.remove(self)

    def find_spec(self, fullname, path=None, target=None):
        targets = self._resolve(fullname)
        if targets is None:
            return None
        module = targets if not isinstance(targets, (list, tuple)) else self._import(
            fullname, targets)
        if self._owner:
            real = getattr(module, "__name__", "")
            name_errors_name_the_closest(module, self._owner, self._fallbacks.get(real),
                                         self._stand_ins.get(real))
        return importlib.machinery.ModuleSpec(fullname, ServedLoader(module),
                                              is_package=hasattr(module, "__path__"))

    def _import(self, fullname, targets):
        for name in targets:
            try:
                return importlib.import_module(name)
            except ModuleNotFoundError as error:
                # Only this name (or its package) missing means "try the next"; a module
                # that t2t's own code fails to import is an error to see as it is.
                if not self._owner or not error.name or not (
                        name == error.name or name.startswith(error.name + ".")):
                    raise
        raise _missing_module_error(fullname, targets[0], self._describe, self._owner)


def _missing_module_error(fullname, real_name, describe, owner):
    package, _, leaf = real_name.rpartition(".")
    close = []
    while package:
        try:
            parent = importlib.import_module(package)
            close = closest_attributes(parent, leaf)
            break
        except ImportError:
            package, _, leaf = package.rpartition(".")
    return ModuleNotFoundError("%s: %s has no %s%s" % (
        fullname, owner, describe(real_name),
        _closest_text(close, package and describe(package))), name=fullname)


def _closest_text(close, prefix):
    if not close:
        return "; see docs/t2t_differences.md for what t2t left out"
    return "; closest: " + ", ".join((prefix + "." if prefix else "") + name for name in close)


def closest_attributes(module, name):
    """The public names of `module` (and its submodules, for a package) most like `name`."""
    names = {n for n in vars(module) if not n.startswith("_")}
    if hasattr(module, "__path__"):
        names.update(info.name for info in pkgutil.iter_modules(module.__path__))
    return registry.closest_names(name, names, n=3)


def _missing_attribute_text(module, name, owner):
    short = module.__name__.rpartition(".")[2]
    return "%s has no %s.%s (module %s)%s" % (
        owner, short, name, module.__name__,
        _closest_text(closest_attributes(module, name), short))


class MissingAttributeError(AttributeError):
    """`module.name` that is not there; the closest names are looked up only when the
    message is read (`hasattr` on a served module stays cheap)."""

    def __init__(self, module, name, owner):
        super().__init__(name)
        self.name, self.obj, self._owner = name, module, owner

    def __str__(self):
        return _missing_attribute_text(self.obj, self.name, self._owner)


def read_by_from_import(frame):
    """True when `frame` (a module `__getattr__`'s caller) is running `from m import name`,
    where Python replaces an AttributeError's message by its own "cannot import name"."""
    return frame.f_code.co_code[frame.f_lasti] == _IMPORT_FROM


def name_errors_name_the_closest(module, owner="t2t", fallback_packages=None, stand_in=None):
    """Give `module` a `__getattr__` whose errors name the closest names (keeping any
    `__getattr__` it has). `from module import missing` raises ImportError, as Python
    does; `module.missing` and `getattr`/`hasattr` see an AttributeError, as before.
    A submodule `missing` of one of `fallback_packages` is returned instead (T2T moved
    models into `research`: `from tensor2tensor.models import universal_transformer`), and
    so is `stand_in(missing)` when that is not None (`from tensor2tensor.data_generators
    import librispeech`: a module t2t leaves out)."""
    old = vars(module).get("__getattr__")
    if getattr(old, "names_the_closest", False):
        return

    def __getattr__(name):
        if old is not None:
            try:
                return old(name)
            except AttributeError:
                pass
        if name.startswith("__"):
            raise AttributeError("module %r has no attribute %r" % (module.__name__, name))
        submodule = sys.modules.get(module.__name__ + "." + name)
        if submodule is not None:  # a circular import's submodule, as Python's fallback
            return submodule
        for package in fallback_packages or ():
            if importlib.util.find_spec(package + "." + name) is not None:
                return importlib.import_module(package + "." + name)
        served = stand_in(name) if stand_in is not None else None
        if served is not None:
            return served
        if read_by_from_import(sys._getframe(1)):  # pylint: disable=protected-access
            # `from m import name`: Python would replace an AttributeError's message.
            raise ImportError("cannot import name %r: %s" % (
                name, _missing_attribute_text(module, name, owner)), name=module.__name__)
        raise MissingAttributeError(module, name, owner)

    __getattr__.names_the_closest = True
    module.__getattr__ = __getattr__
