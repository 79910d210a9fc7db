"""Rewrite T2T's import statements and `tensor2tensor.x.y` references to t2t's paths.

Only the module names change; comments, spacing, aliases and the rest of each line stay:

    >>> port_imports("from tensor2tensor.data_generators import problem  # base\\n")
    'from t2t.problems import problem  # base\\n'
    >>> port_imports("import tensor2tensor.layers.common_layers as cl\\n")
    'import t2t.layers.common_layers as cl\\n'

A name that moves to another module keeps its local name.

`import tensor2tensor.x` binds `tensor2tensor`, so its references are ported too
(`tensor2tensor.models.research.universal_transformer.f` ->
`t2t.models.research.universal_transformer.f`).
Relative imports and other packages are left alone. Porting ported code changes nothing.
"""
import ast

from t2t.porting import import_map
from t2t.core.source_edits import Source, reference_chains


def _is_t2t1(dotted):
    return dotted == import_map.T2T_ROOT or dotted.startswith(import_map.T2T_ROOT + ".")


def _dotted_span(source, start, end, stop_word):
    """Offsets of the dotted name in text[start:end] that ends before `stop_word` (or the end)."""
    names = []
    for string, token_start, token_end in source.tokens(start, end):
        if string == stop_word:
            break
        names.append((token_start, token_end))
    return names[0][0], names[-1][1]


def _from_import_edits(source, node):
    new_module = import_map.port_name(node.module)
    moved = []
    for alias in node.names:
        if alias.name == "*":
            moved.append((new_module, "*", None))
            continue
        new_module_of, _, new_name = import_map.port_name(node.module + "." + alias.name).rpartition(".")
        local = alias.asname or alias.name
        moved.append((new_module_of, new_name, None if local == new_name else local))
    start, end = source.node_span(node)
    if all(module == new_module and (name == "*" or name == alias.name)
           for (module, name, _), alias in zip(moved, node.names)):
        tokens = source.tokens(start, end)
        module_start, module_end = _dotted_span(source, tokens[1][1], end, "import")
        return [(module_start, module_end, new_module)]
    # Some names move to another module: one statement per module, on the same line.
    statements, by_module = [], {}
    for module, name, local in moved:
        if module not in by_module:
            by_module[module] = []
            statements.append(module)
        by_module[module].append(name if local is None else "%s as %s" % (name, local))
    text = "; ".join("from %s import %s" % (module, ", ".join(by_module[module]))
                     for module in statements)
    return [(start, end, text)]


def _import_edits(source, node):
    edits, binds_root = [], False
    for alias in node.names:
        if not _is_t2t1(alias.name):
            continue
        start, end = source.node_span(alias)
        name_start, name_end = _dotted_span(source, start, end, "as")
        edits.append((name_start, name_end, import_map.port_name(alias.name)))
        binds_root = binds_root or alias.asname is None
    return edits, binds_root


def _reference_edits(source, tree):
    edits = []
    for chain, parts in reference_chains(tree, {import_map.T2T_ROOT}):
        used, new = import_map.port_parts(parts)
        start = source.offset(chain[0].lineno, chain[0].col_offset)
        end = source.offset(chain[used - 1].end_lineno, chain[used - 1].end_col_offset)
        edits.append((start, end, ".".join(new)))
    return edits


def import_edits(source, tree):
    """The (start, end, replacement) edits that port `tree`'s T2T imports and references."""
    edits, binds_root = [], False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and _is_t2t1(node.module or ""):
            edits += _from_import_edits(source, node)
        elif isinstance(node, ast.Import):
            more, binds = _import_edits(source, node)
            edits += more
            binds_root = binds_root or binds
    if binds_root:
        edits += _reference_edits(source, tree)
    return edits


def port_imports(text, tree=None):
    """`text` with T2T's module paths replaced by t2t's (SyntaxError if it does not parse)."""
    tree = tree if tree is not None else ast.parse(text)
    source = Source(text)
    return source.apply(import_edits(source, tree))
