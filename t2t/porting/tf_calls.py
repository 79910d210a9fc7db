"""TensorFlow 1.x calls of T2T-era code, ported to calls TensorFlow 2.15 and 2.21 both have.

Two ways, chosen by `how`:
- "tf_upgrade_v2": TensorFlow's own upgrader (`tensorflow.tools.compatibility`), run in
  this process on the text; its log lines (what it renamed, what it could not) come back;
- "t2t": t2t's rules for the common cases (`t2t.core.tf1_rules`), with no TensorFlow import:

    >>> port_tf_calls("import tensorflow as tf\\ntf.logging.info(tf.gfile.Exists('a'))\\n",
    ...               how="t2t")[0]
    "import tensorflow as tf\\ntf.compat.v1.logging.info(tf.io.gfile.exists('a'))\\n"

Either way `tf.flags` / `tf.app.flags` become `tf.compat.v1.flags` first (absl's flags, what
T2T's `tf.flags` was; tf_upgrade_v2 only says they were removed). "auto" is tf_upgrade_v2
where it imports, else t2t's rules; "none" leaves TensorFlow calls alone. Code importing
`tensorflow.compat.v1 as tf` already runs on TensorFlow 2 and keeps its calls.
"""
import ast
import contextlib
import io
import re
import warnings

from t2t.core import tf1_rules
from t2t.core.source_edits import Source

HOWS = ("auto", "tf_upgrade_v2", "t2t", "none")

def _rule_edits(source, tree, flags_only):
    """t2t's rules (`t2t.core.tf1_rules`) and the tf.contrib notes: (edits, notes)."""
    edits, notes = tf1_rules.rule_edits(source, tree, flags_only=flags_only)
    if not flags_only:  # tf_upgrade_v2 says this itself
        tf_names, v1_names = tf1_rules.tensorflow_aliases(tree)
        for nodes, parts in tf1_rules.attribute_chains(tree, tf_names | v1_names):
            if parts[1:2] == ["contrib"]:
                notes.append((nodes[0].lineno, contrib_note(".".join(parts))))
    return edits, notes


def contrib_note(name):
    """What to say about a tf.contrib name (no TensorFlow 2 has tf.contrib)."""
    if name.endswith("contrib.training.HParams"):
        return "%s is not in TensorFlow 2: use t2t.utils.hparam.HParams" % name
    return "%s is not in TensorFlow 2 (tf.contrib is gone): replace it by hand" % name


def _upgrader():
    """TensorFlow's tf_upgrade_v2 (an ASTCodeUpgrader), or None where it does not import."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(
                io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # its ast.Str, on 3.12+
            from tensorflow.tools.compatibility import ast_edits, tf_upgrade_v2
            return ast_edits.ASTCodeUpgrader(tf_upgrade_v2.TFAPIChangeSpec())
    except (ImportError, AttributeError):  # not installed, or an ast it predates
        return None


_LOG_LINE = re.compile(r"^(?:.*?:)?(\d+):(\d+): (\w+): (.*)$", re.S)
# tf_upgrade_v2 calls tf.flags removed; under tensorflow.compat.v1 (and as ported here, to
# tf.compat.v1.flags) they are absl's flags and run.
_SPURIOUS = ("in deprecated module tf.flags", "in deprecated module tf.app.flags")


def _run_tf_upgrade_v2(upgrader, text):
    """(text, [(line, message)]) from tf_upgrade_v2."""
    # It prints its log too, and pasta warns about the ast of new Pythons.
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _, new_text, logs, errors = upgrader.update_string_pasta(text, "<ported>")
    notes = []
    for entry in list(logs):
        match = _LOG_LINE.match(entry.strip())
        if match and not any(s in match.group(4) for s in _SPURIOUS):
            notes.append((int(match.group(1)), "tf_upgrade_v2: %s: %s" % (
                match.group(3), " ".join(match.group(4).split()))))
    if not new_text:  # it could not parse: keep the text, say why
        return text, [(0, "tf_upgrade_v2: " + " ".join(" ".join(errors).split())[:200])]
    return new_text, notes


_UPGRADER = {}


def upgrader_for(how):
    """The upgrader `how` asks for: tf_upgrade_v2's, None for t2t's rules; UserError-free."""
    if how in ("auto", "tf_upgrade_v2"):
        if "tf" not in _UPGRADER:
            _UPGRADER["tf"] = _upgrader()
        return _UPGRADER["tf"]
    return None


def uses_tensorflow(tree):
    tf_names, v1_names = tf1_rules.tensorflow_aliases(tree)
    return bool(tf_names or v1_names)


def port_tf_calls(text, how="auto", tree=None):
    """(text with TF 1.x calls ported, [(line, message)], the way used: "tf_upgrade_v2",
    "t2t" or None when nothing was done)."""
    tree = tree if tree is not None else ast.parse(text)
    if how == "none" or not uses_tensorflow(tree):
        return text, [], None
    upgrader = upgrader_for(how)
    if upgrader is None and how == "tf_upgrade_v2":
        raise ImportError("tf_upgrade_v2 (tensorflow.tools.compatibility) does not import here")
    source = Source(text)
    edits, notes = _rule_edits(source, tree, flags_only=upgrader is not None)
    text = source.apply(edits)
    if upgrader is None:
        return text, sorted(notes), "t2t"
    text, more = _run_tf_upgrade_v2(upgrader, text)
    return text, sorted(notes + more), "tf_upgrade_v2"
