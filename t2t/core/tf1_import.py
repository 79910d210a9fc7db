"""A `--t2t_usr_dir`'s modules that call TensorFlow 1.x names run with t2t-port's rewrite.

T2T-era code often does `import tensorflow as tf` and then `tf.flags`, `tf.logging`,
`tf.gfile.Exists` or `tf.app.run`, which TensorFlow 2 lacks. Such a module of a usr dir is
imported from its text rewritten in memory by `t2t.core.tf1_rules` (the rules t2t-port
applies when TensorFlow's tf_upgrade_v2 is not at hand); the file stays as it is, nothing is
written to the folder (no bytecode cache either), and each name keeps its line, so the
user's frames and tracebacks point at their real lines. The rewrite is the module's source
for `linecache` (tracebacks show the ported line, `inspect.getsource` reads it), and
TensorFlow's autograph calls its functions as compiled (in a `tf.data` map, say) rather than
recompiling them from the file:

    spec = importlib.util.spec_from_file_location(
        name, init_path, loader=RewritingLoader(name, init_path),
        submodule_search_locations=[dir_path])
    install(name)                      # its submodules too
    # my_usr_dir/problems.py, line 7: `flags = tf.flags` runs as `tf.compat.v1.flags`
    # log, once per file: "/home/me/my_usr_dir/problems.py: TF 1.x calls run through
    #   t2t-port's rewrite in memory; `t2t-port DIR --in_place` makes it permanent"

A module with no such call is imported as Python would (its cache and all).
"""
import ast
import importlib.abc
import importlib.machinery
import importlib.util
import linecache
import sys

from absl import logging

from t2t.core import tf1_rules

_said = set()


def _said_once(path):
    if path not in _said:
        _said.add(path)
        logging.info("%s: TF 1.x calls run through t2t-port's rewrite in memory; "
                     "`t2t-port DIR --in_place` makes it permanent", path)


class RewritingLoader(importlib.machinery.SourceFileLoader):
    """A .py file's loader that compiles t2t-port's rewrite of it when it calls TF 1.x names."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        text = importlib.util.decode_source(self.get_data(path))
        try:
            tree = ast.parse(text, path)
        except SyntaxError:
            return super().get_code(fullname)  # Python's own error, as an import gives it
        ported, notes = tf1_rules.port_tf1_text(text, tree, keep_lines=True)
        if not notes:
            return super().get_code(fullname)
        _said_once(path)
        # What reads the module's source (tracebacks, inspect, TensorFlow's autograph, which
        # recompiles a function from it) reads the rewrite: same lines, ported names.
        linecache.cache[path] = (len(ported), None, ported.splitlines(True), path)
        _autograph_runs_as_compiled(fullname)
        return compile(ported, path, "exec", dont_inherit=True)


def _autograph_runs_as_compiled(module_name):
    """TensorFlow's autograph would recompile the module's functions from the file on disk
    (it re-reads it), undoing the rewrite: it calls them as compiled instead, as it does
    TensorFlow's own code (T2T-era code is graph code, written without autograph)."""
    try:
        from tensorflow.python.autograph.core import config, config_lib  # pylint: disable=g-import-not-at-top
    except ImportError:  # no TensorFlow, or one whose autograph is laid out otherwise
        return
    if not any(isinstance(rule, config_lib.DoNotConvert) and rule.matches(module_name)
               for rule in config.CONVERSION_RULES):
        config.CONVERSION_RULES = (config_lib.DoNotConvert(module_name),) + tuple(
            config.CONVERSION_RULES)


class UsrDirFinder(importlib.abc.MetaPathFinder):
    """Finds the submodules of the usr dir packages as the path finder does, and gives
    them a RewritingLoader; any other name is left to the rest of `sys.meta_path`."""

    def __init__(self):
        self.packages = set()

    def find_spec(self, fullname, path=None, target=None):
        package = fullname.partition(".")[0]
        if package not in self.packages or fullname == package:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader:
            spec.loader = RewritingLoader(spec.loader.name, spec.loader.path)
        return spec


_FINDER = UsrDirFinder()


def install(package):
    """Rewrite the TF 1.x calls of the submodules of usr dir `package` (its private name)
    as they are imported; its `__init__.py` is loaded by a `RewritingLoader` of its own."""
    _FINDER.packages.add(package)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
