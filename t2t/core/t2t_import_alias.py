"""`import tensor2tensor...` served by t2t, so T2T code runs with no edits.

Installed when a `--t2t_usr_dir` is imported (the programs, `t2t.load`), or by calling
`install()`; never where a real `tensor2tensor` package is installed. Package by package:

    tensor2tensor.data_generators.X   -> t2t.problems.X
    tensor2tensor.utils.X             -> t2t.utils.X
    tensor2tensor.layers.X            -> t2t.layers.X
    tensor2tensor.models.X            -> t2t.models.X
    tensor2tensor.models.research.X   -> t2t.models.research.X, else t2t.models.X
    tensor2tensor.bin.X               -> t2t.bin.X
    tensor2tensor.serving.X           -> t2t.serving.X
    tensor2tensor.visualization.X     -> t2t.visualization.X
    tensor2tensor.problems            -> t2t.problems.all_problems (problem(name), available())
    tensor2tensor.data_generators.librispeech (and T2T's other audio modules, `LEFT_OUT`)
                                      -> a stand-in that imports; using a name of it fails

    from t2t.core import t2t_import_alias
    t2t_import_alias.install()
    from tensor2tensor.utils import registry   # t2t.core.registry itself
    from tensor2tensor.layers.common_layers import dense_relu_densee
    # ImportError: cannot import name 'dense_relu_densee': t2t has no
    #   common_layers.dense_relu_densee (module t2t.layers.common_layers); closest:
    #   common_layers.dense_relu_dense, ...

The served modules are t2t's own objects (see `t2t.core.module_alias`).
"""
import importlib.util
import sys
import types

from absl import logging

from t2t.core import module_alias

TOP = "tensor2tensor"
# T2T's packages -> t2t's; the first existing real module is served.
PACKAGES = {
    "data_generators": ("t2t.problems",),
    "utils": ("t2t.utils",),
    "layers": ("t2t.layers",),
    "models.research": ("t2t.models.research", "t2t.models"),
    "models": ("t2t.models", "t2t.models.research"),  # T2T moved some models to research/
    "bin": ("t2t.bin",),
    "serving": ("t2t.serving",),
    "visualization": ("t2t.visualization",),
}
# T2T's modules directly under tensor2tensor/.
MODULES = {"problems": "t2t.problems.all_problems"}
# T2T's modules t2t leaves out (docs/t2t_differences.md), and why. Importing one works (user
# code that imports and never uses it runs); reading any name of it is a one-line error.
_AUDIO = ("T2T's speech and audio problems are left out of t2t (text only: no audio "
          "features or modalities)")
LEFT_OUT = {
    "data_generators.audio": _AUDIO,
    "data_generators.audio_encoder": _AUDIO,
    "data_generators.common_voice": _AUDIO,
    "data_generators.librispeech": _AUDIO,
    "data_generators.speech_recognition": _AUDIO,
}

_finder = None


def resolve(fullname):
    """The t2t module names for `fullname` (tensor2tensor.*), best first; None if no alias.

        resolve("tensor2tensor.utils.registry")    # ["t2t.utils.registry"]
    """
    if fullname == TOP:
        return _top_module()
    if not fullname.startswith(TOP + "."):
        return None
    rest = fullname[len(TOP) + 1:]
    if rest in LEFT_OUT:
        return left_out_module(fullname, LEFT_OUT[rest])
    if rest in MODULES:
        return [MODULES[rest]]
    for package in sorted(PACKAGES, key=len, reverse=True):  # models.research before models
        if rest == package or rest.startswith(package + "."):
            tail = rest[len(package):]
            return [target + tail for target in PACKAGES[package]]
    return ["t2t." + rest]  # a T2T package t2t does not have: named as t2t would


def _describe(name):
    return name[len("t2t."):] if name.startswith("t2t.") else name


def _top_module():
    module = sys.modules.get(TOP)
    if module is not None:
        return module
    module = types.ModuleType(TOP, "T2T's top-level package, served by t2t (see "
                                   "t2t.core.t2t_import_alias).")
    module.__path__ = []  # a package: its submodules come from the finder

    def __getattr__(name):
        # T2T's `import tensor2tensor; tensor2tensor.problems.problem(name)`.
        if name.startswith("__") or name not in set(MODULES) | {
                p.split(".")[0] for p in PACKAGES}:
            raise AttributeError("module %r has no attribute %r" % (TOP, name))
        return importlib.import_module(TOP + "." + name)

    module.__getattr__ = __getattr__
    return module


_STAND_INS = {}  # T2T module name -> its stand-in (one object, however it is reached)


class LeftOutError(AttributeError):
    """A name of a T2T module t2t leaves out, read (an AttributeError: `hasattr` is False)."""


def left_out_module(fullname, why):
    """A stand-in for T2T's module `fullname` that t2t leaves out: it imports (said once in
    the log) and registers nothing; reading any of its names fails, naming it and `why`.

        from tensor2tensor.data_generators import librispeech   # imports
        librispeech.Librispeech
        # LeftOutError: tensor2tensor.data_generators.librispeech.Librispeech: T2T's speech
        #   and audio problems are left out of t2t (...); see docs/t2t_differences.md
    """
    if fullname in _STAND_INS:
        return _STAND_INS[fullname]
    logging.info("%s imports as an empty stand-in: %s; using a name of it fails", fullname,
                 why)
    module = types.ModuleType(fullname, "Left out of t2t: %s." % why)

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError("module %r has no attribute %r" % (fullname, name))
        message = "%s.%s: %s; see docs/t2t_differences.md" % (fullname, name, why)
        if module_alias.read_by_from_import(sys._getframe(1)):  # pylint: disable=protected-access
            raise ImportError("cannot import name %r: %s" % (name, message), name=fullname)
        raise LeftOutError(message)

    __getattr__.names_the_closest = True  # the message is its own, not "closest: ..."
    module.__getattr__ = __getattr__
    _STAND_INS[fullname] = module
    return module


def _left_out_stand_ins():
    """{t2t package: stand_in(name)}: `from tensor2tensor.data_generators import librispeech`
    reads the attribute of t2t's own package object, so the stand-in is served there too."""
    by_package = {}
    for rest in LEFT_OUT:
        package, _, leaf = rest.rpartition(".")
        by_package.setdefault(PACKAGES[package][0], {})[leaf] = TOP + "." + rest

    def stand_in_of(leaves):
        return lambda name: (left_out_module(leaves[name], LEFT_OUT[leaves[name][len(TOP) + 1:]])
                             if name in leaves else None)
    return {package: stand_in_of(leaves) for package, leaves in by_package.items()}


def real_tensor2tensor_installed():
    """True where a `tensor2tensor` package other than this alias can be imported."""
    module = sys.modules.get(TOP)
    if module is not None:
        return not isinstance(getattr(module, "__loader__", None), module_alias.ServedLoader)
    if _finder is not None and _finder in sys.meta_path:
        return False
    return importlib.util.find_spec(TOP) is not None


def install():
    """Serve `tensor2tensor.*` imports from t2t (once; a no-op when a real tensor2tensor is
    installed). Returns True when the alias is in place."""
    global _finder
    if _finder is not None and _finder in sys.meta_path:
        return True
    if real_tensor2tensor_installed():
        logging.info("a tensor2tensor package is installed: its imports are not served by t2t")
        return False
    _finder = module_alias.AliasFinder(_resolve_and_say, _describe, owner="t2t",
                                       fallbacks={"t2t.models": ("t2t.models.research",)},
                                       stand_ins=_left_out_stand_ins())
    _finder.install()
    return True


_said = False


def _resolve_and_say(fullname):
    """`resolve`, saying once in the log that t2t serves tensor2tensor imports: at the
    first one (a usr dir that imports only t2t hears nothing)."""
    global _said
    targets = resolve(fullname)
    if targets is not None and not _said:
        _said = True
        logging.info("tensor2tensor imports are served by t2t (docs/porting.md)")
    return targets


def uninstall():
    """Stop serving `tensor2tensor.*` and forget the alias names imported so far."""
    global _finder, _said
    _said = False
    _STAND_INS.clear()
    if _finder is not None:
        _finder.uninstall()
        _finder = None
    for name in [n for n in sys.modules if n == TOP or n.startswith(TOP + ".")]:
        del sys.modules[name]
