"""t2t-port's import rewriting: every statement form, references, what stays as it was, and
(Hypothesis) random import statements port to the same bindings and port once."""
import ast

import pytest
from hypothesis import given, settings, strategies as st

from t2t.porting import import_map, imports

CASES = [
    ("from tensor2tensor.data_generators import problem\n",
     "from t2t.problems import problem\n"),
    ("from tensor2tensor.data_generators.text_problems import Text2TextProblem as T\n",
     "from t2t.problems.text_problems import Text2TextProblem as T\n"),
    ("import tensor2tensor.utils.registry as registry  # the registry\n",
     "import t2t.utils.registry as registry  # the registry\n"),
    ("from tensor2tensor.layers import (common_layers,  # layers\n"
     "                                  common_attention)\n",
     "from t2t.layers import (common_layers,  # layers\n"
     "                                  common_attention)\n"),
    ("from tensor2tensor.models.research import universal_transformer\n",
     "from t2t.models.research import universal_transformer\n"),
    # T2T's path before research/: the module moves, the local name stays.
    ("from tensor2tensor.models import transformer, universal_transformer as ut\n",
     "from t2t.models import transformer; "
     "from t2t.models.research import universal_transformer as ut\n"),
    ("import tensor2tensor.models.universal_transformer_util\n"
     "f = tensor2tensor.models.universal_transformer_util.universal_transformer_layer\n",
     "import t2t.models.research.universal_transformer_util\n"
     "f = t2t.models.research.universal_transformer_util.universal_transformer_layer\n"),
    # A module t2t leaves out stays (the alias serves a stand-in); the others move.
    ("from tensor2tensor.data_generators import librispeech, problem\n",
     "from tensor2tensor.data_generators import librispeech; from t2t.problems import problem\n"),
    ("import tensor2tensor.data_generators.librispeech as ls\n",
     "import tensor2tensor.data_generators.librispeech as ls\n"),
    ("from tensor2tensor.models import research, transformer as tr\n",
     "from t2t.models import research, transformer as tr\n"),
    ("from tensor2tensor import models  # registers them\n",
     "from t2t import models  # registers them\n"),
    ("from tensor2tensor.bin import t2t_trainer\n", "from t2t.bin import t2t_trainer\n"),
    # T2T's serving/export.py was the exporter program: t2t's is t2t.bin.t2t_exporter.
    ("from tensor2tensor.serving import export\n",
     "from t2t.bin import t2t_exporter as export\n"),
    ("from tensor2tensor.serving import export, serving_utils\n",
     "from t2t.bin import t2t_exporter as export; from t2t.serving import serving_utils\n"),
    ("from \\\n  tensor2tensor.utils import trainer_lib\n",
     "from \\\n  t2t.utils import trainer_lib\n"),
    ("def f():\n    import tensor2tensor.models.research.universal_transformer\n"
     "    return tensor2tensor.models.research.universal_transformer.x(\n"
     "        tensor2tensor.utils.registry)\n",
     "def f():\n    import t2t.models.research.universal_transformer\n"
     "    return t2t.models.research.universal_transformer.x(\n        t2t.utils.registry)\n"),
    ("import os, tensor2tensor.layers.common_layers as cl, sys\n",
     "import os, t2t.layers.common_layers as cl, sys\n"),
    ("s = 'caf\u00e9'; import tensor2tensor\nprint(tensor2tensor.__name__)\n",
     "s = 'caf\u00e9'; import t2t\nprint(t2t.__name__)\n"),
]


@pytest.mark.parametrize("before,after", CASES)
def test_each_form_ports_and_keeps_the_rest_of_the_line(before, after):
    assert imports.port_imports(before) == after
    assert imports.port_imports(after) == after


def test_other_code_is_left_as_it_was():
    text = ("from . import sibling\nfrom .tensor2tensor import x\nimport tensorflow as tf\n"
            "name = 'tensor2tensor.utils'  # tensor2tensor.utils\n"
            "tensor2tensor = object()\ntensor2tensor.utils = 1\n")
    assert imports.port_imports(text) == text


def test_syntax_errors_propagate():
    with pytest.raises(SyntaxError):
        imports.port_imports("from tensor2tensor.utils import (registry\n")


# ----------------------------------------------------------------------------- Hypothesis
IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda n: n not in {"as", "if", "in", "is", "or", "and", "not", "for", "def", "del",
                        "try", "from", "with", "else", "elif", "pass", "None", "True", "lambda",
                        "class", "while", "yield", "async", "await", "break", "raise",
                        "global", "import", "return", "assert", "except", "finally",
                        "continue", "nonlocal"})
T2T_PREFIXES = ["tensor2tensor", "tensor2tensor.data_generators", "tensor2tensor.utils",
                "tensor2tensor.layers", "tensor2tensor.models", "tensor2tensor.models.research",
                "tensor2tensor.bin", "tensor2tensor.serving", "os", "tensorflow.compat"]


@st.composite
def module_paths(draw):
    return ".".join([draw(st.sampled_from(T2T_PREFIXES))] + draw(st.lists(IDENT, max_size=2)))


@st.composite
def import_statements(draw):
    """One import statement in any form, with optional aliases, parentheses and comments."""
    module = draw(module_paths())
    comment = draw(st.sampled_from(["", "  # why", "  # tensor2tensor.utils"]))
    if draw(st.booleans()):
        aliases = []
        for _ in range(draw(st.integers(1, 2))):
            name = draw(module_paths())
            aliases.append(name + (" as " + draw(IDENT) if draw(st.booleans()) else ""))
        return "import %s%s" % (", ".join(aliases), comment)
    names = [draw(IDENT) + (" as " + draw(IDENT) if draw(st.booleans()) else "")
             for _ in range(draw(st.integers(1, 3)))]
    if draw(st.booleans()):
        return "from %s import (%s,%s\n    )" % (module, ",\n    ".join(names), comment)
    return "from %s import %s%s" % (module, ", ".join(names), comment)


def bindings(text, port=False):
    """[(local name, the qualified name it is bound to)] of the text's imports; with `port`,
    as the original's names will be after porting."""
    def ported(name):
        return (import_map.port_name(name) or name) if port else name
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = ported(alias.name)
                found.append((alias.asname or target.split(".")[0], target))
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                found.append((alias.asname or alias.name, ported(node.module + "." + alias.name)))
    return sorted(found)


@settings(max_examples=60, deadline=None)
@given(st.lists(import_statements(), min_size=1, max_size=4), st.sampled_from(["", "    "]))
def test_random_imports_port_to_the_same_bindings_once(statements, indent):
    body = "".join(indent + s.replace("\n", "\n" + indent) + "\n" for s in statements)
    text = ("def f():\n" + body) if indent else body
    once = imports.port_imports(text)
    assert bindings(once) == bindings(text, port=True)
    assert imports.port_imports(once) == once
    code = [line.split("#")[0] for line in once.splitlines()]
    assert not any("tensor2tensor" in line for line in code)
    # The comments are kept, each once.
    assert once.count("# why") == text.count("# why")
