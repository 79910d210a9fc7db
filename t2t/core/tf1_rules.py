"""t2t's rules for the TensorFlow 1.x calls of T2T-era code that TensorFlow 2 lacks.

No TensorFlow import: the rules read the code's `import tensorflow as tf` and rewrite
`tf.flags` / `tf.app.flags` (absl's flags, what T2T's were), `tf.logging.*`, `tf.app.*`,
`tf.gfile.*` and the top-level names of `COMPAT_V1_NAMES` (`tf.VarLenFeature`,
`tf.variable_scope`, `tf.to_float`, ...) to the names TensorFlow 2.15 and 2.21 both have:

    >>> port_tf1_text("import tensorflow as tf\\ntf.logging.info(tf.gfile.Exists('a'))\\n")[0]
    "import tensorflow as tf\\ntf.compat.v1.logging.info(tf.io.gfile.exists('a'))\\n"

t2t-port uses them where TensorFlow's own tf_upgrade_v2 does not import
(`t2t.porting.tf_calls`), and a `--t2t_usr_dir` module that needs them is imported from
its text rewritten by them in memory (`t2t.core.tf1_import`). Code importing
`tensorflow.compat.v1 as tf` already runs on TensorFlow 2 and keeps its calls.
"""
import ast

from t2t.core.source_edits import Source, reference_chains

# tf.gfile's functions -> tf.io.gfile's (same positional arguments).
GFILE_RENAMES = {
    "Copy": "copy", "DeleteRecursively": "rmtree", "Exists": "exists", "FastGFile": "GFile",
    "GFile": "GFile", "Glob": "glob", "IsDirectory": "isdir", "ListDirectory": "listdir",
    "MakeDirs": "makedirs", "MkDir": "mkdir", "Open": "GFile", "Remove": "remove",
    "Rename": "rename", "Stat": "stat", "Walk": "walk",
}
# tf.X -> tf.compat.v1.X for these modules (the names under them are unchanged).
COMPAT_V1_MODULES = ("logging", "app")
# TF 1.x names of the top level that TensorFlow 2 lacks -> tf.compat.v1.X (TF 1's behaviour
# and arguments: T2T-era problems' example_reading_spec, graph-mode model code).
COMPAT_V1_NAMES = (
    "AUTO_REUSE", "FixedLenFeature", "FixedLenSequenceFeature", "GraphKeys", "Session",
    "SparseFeature", "VarLenFeature", "decode_raw", "get_collection", "get_variable",
    "get_variable_scope", "global_variables_initializer", "layers", "log", "parse_example",
    "parse_single_example", "placeholder", "py_func", "random_normal", "random_uniform",
    "sparse_tensor_to_dense", "to_float", "to_int32", "to_int64", "trainable_variables",
    "truncated_normal", "variable_scope",
)
FLAGS_MODULES = (("flags",), ("app", "flags"))


def tensorflow_aliases(tree):
    """(names bound to `tensorflow`, names bound to `tensorflow.compat.v1`) by imports."""
    tf_names, v1_names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "tensorflow":
                    tf_names.add(alias.asname or "tensorflow")
                elif alias.name == "tensorflow.compat.v1" and alias.asname:
                    v1_names.add(alias.asname)
        elif isinstance(node, ast.ImportFrom) and node.module == "tensorflow.compat":
            v1_names.update(a.asname or a.name for a in node.names if a.name == "v1")
    return tf_names, v1_names


def attribute_chains(tree, roots):
    """`root.a...` references (bare names are left out)."""
    return ((nodes, parts) for nodes, parts in reference_chains(tree, roots) if len(parts) > 1)


def _new_name(rest, flags_only):
    """(the parts after `tf` that replace the first `used` ones, used) or (None, None)."""
    for module in FLAGS_MODULES:
        if rest[:len(module)] == module:
            return ["compat", "v1", "flags"], len(module)
    if not flags_only:
        if rest[:1] and (rest[0] in COMPAT_V1_MODULES or rest[0] in COMPAT_V1_NAMES):
            return ["compat", "v1", rest[0]], 1
        if rest[:1] == ("gfile",) and len(rest) > 1 and rest[1] in GFILE_RENAMES:
            return ["io", "gfile", GFILE_RENAMES[rest[1]]], 2
    return None, None


def rule_edits(source, tree, flags_only=False, keep_lines=False):
    """(edits (start, end, replacement), [(line, "renamed tf.x to tf.y")]) of the rules for
    `tree` (the parse of `source.text`); `flags_only`: only the tf.flags rule. With
    `keep_lines`, a name written over several lines is left as it is (the text keeps its
    line numbers)."""
    tf_names, _ = tensorflow_aliases(tree)
    edits, notes = [], []
    for nodes, parts in attribute_chains(tree, tf_names):
        new, used = _new_name(tuple(parts[1:]), flags_only)
        if new is None or (keep_lines and nodes[0].lineno != nodes[used].end_lineno):
            continue
        start = source.offset(nodes[0].lineno, nodes[0].col_offset)
        end = source.offset(nodes[used].end_lineno, nodes[used].end_col_offset)
        old_text, new_text = ".".join(parts[:used + 1]), ".".join([parts[0]] + new)
        edits.append((start, end, new_text))
        notes.append((nodes[0].lineno, "renamed %s to %s" % (old_text, new_text)))
    return edits, notes


def port_tf1_text(text, tree=None, keep_lines=False):
    """(text with the rules applied, [(line, message)]); the text itself when no rule
    applies (SyntaxError when it does not parse)."""
    tree = tree if tree is not None else ast.parse(text)
    source = Source(text)
    edits, notes = rule_edits(source, tree, keep_lines=keep_lines)
    return (source.apply(edits) if edits else text), sorted(notes)
