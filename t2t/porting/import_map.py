"""T2T 1.x module paths and their t2t homes.

A dotted name is ported by its longest matching prefix:

    >>> port_name("tensor2tensor.data_generators.problem")
    't2t.problems.problem'
    >>> port_name("tensor2tensor.models.research.universal_transformer.foo")
    't2t.models.research.universal_transformer.foo'
    >>> port_name("tensorflow.compat.v1") is None
    True
    >>> port_name("tensor2tensor.data_generators.librispeech")  # left out: served as it is
    'tensor2tensor.data_generators.librispeech'
"""
from t2t.core import t2t_import_alias

T2T_ROOT = "tensor2tensor"
T2T_NEW_ROOT = "t2t"

# (T2T prefix, t2t prefix), as tuples of components, longer prefixes first: the longest
# match wins. Any other `tensor2tensor.X` becomes `t2t.X` (the name check then says
# whether t2t has it).
# T2T's modules t2t leaves out stay as they are: the tensor2tensor alias serves a stand-in
# that imports (user code importing one it never uses runs) and names what is left out.
LEFT_OUT = tuple((T2T_ROOT + "." + rest, T2T_ROOT + "." + rest)
                 for rest in sorted(t2t_import_alias.LEFT_OUT))
RULES = tuple((tuple(old.split(".")), tuple(new.split("."))) for old, new in LEFT_OUT + (
    ("tensor2tensor.data_generators", "t2t.problems"),
    ("tensor2tensor.utils", "t2t.utils"),
    ("tensor2tensor.layers", "t2t.layers"),
    # T2T's paths before the Universal Transformer moved to research/ (still in user code).
    ("tensor2tensor.models.universal_transformer",
     "t2t.models.research.universal_transformer"),
    ("tensor2tensor.models.universal_transformer_util",
     "t2t.models.research.universal_transformer_util"),
    ("tensor2tensor.models", "t2t.models"),
    ("tensor2tensor.bin", "t2t.bin"),
    # T2T's serving/export.py was the exporter program (export.main).
    ("tensor2tensor.serving.export", "t2t.bin.t2t_exporter"),
    ("tensor2tensor.serving", "t2t.serving"),
    ("tensor2tensor", "t2t"),
))


def port_parts(parts):
    """(number of leading components replaced, their replacement) or None.

        port_parts(("tensor2tensor", "models", "research", "ut")) -> (2, ("t2t", "models"))
    """
    parts = tuple(parts)
    for old, new in RULES:  # the longer prefixes come first
        if parts[:len(old)] == old:
            return len(old), new
    return None


def port_name(dotted):
    """The t2t name of the dotted T2T name, or None when it is not a T2T name."""
    parts = tuple(dotted.split("."))
    match = port_parts(parts)
    if match is None:
        return None
    used, new = match
    return ".".join(new + parts[used:])


def is_t2t_name(dotted):
    return dotted == T2T_NEW_ROOT or dotted.startswith(T2T_NEW_ROOT + ".")
