"""Edits of source text at positions the parser gives, leaving every other character as is.

`ast` gives (line, UTF-8 byte column) positions; `Source` turns them into offsets in the
text so edits keep comments, blank lines and formatting around them.

    >>> src = Source("x = 1  # one\\n")
    >>> src.apply([(src.offset(1, 4), src.offset(1, 5), "2")])
    'x = 2  # one\\n'
"""
import ast
import io
import tokenize


def reference_chains(tree, roots):
    """(nodes [Name, Attribute, ...], dotted parts) of every `root.a.b` read or written, and
    bare `root` names, for the names in `roots`; each the longest chain (not its prefixes).

        [parts for _, parts in reference_chains(ast.parse("tf.a.b(tf.c)"), {"tf"})]
        # [["tf", "a", "b"], ["tf", "c"]]
    """
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Attribute, ast.Name)) or id(node) in inner:
            continue
        nodes = []
        while isinstance(node, ast.Attribute):
            nodes.append(node)
            node = node.value
        if isinstance(node, ast.Name) and node.id in roots:
            nodes = [node] + nodes[::-1]
            yield nodes, [node.id] + [n.attr for n in nodes[1:]]


class Source:
    """A module's text and the offset of each of its lines."""

    def __init__(self, text):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno, byte_col):
        """Offset in the text of `ast`'s (1-based line, UTF-8 byte column)."""
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:byte_col].decode("utf-8"))

    def char_offset(self, lineno, char_col):
        """Offset of `tokenize`'s (1-based line, character column)."""
        return self.starts[lineno - 1] + char_col

    def node_span(self, node):
        return (self.offset(node.lineno, node.col_offset),
                self.offset(node.end_lineno, node.end_col_offset))

    def tokens(self, start, end):
        """The NAME and OP tokens of text[start:end] as (string, start, end) offsets."""
        found = []
        readline = io.StringIO(self.text[start:end]).readline
        base = Source(self.text[start:end])
        try:
            for token in tokenize.generate_tokens(readline):
                if token.type in (tokenize.NAME, tokenize.OP):
                    found.append((token.string, start + base.char_offset(*token.start),
                                  start + base.char_offset(*token.end)))
        except (tokenize.TokenError, IndentationError):
            pass  # a statement cut out of its block: the tokens read so far are enough
        return found

    def apply(self, edits):
        """The text with each (start, end, replacement) done; overlapping edits are a bug."""
        out, last = [], len(self.text)
        for start, end, replacement in sorted(edits, reverse=True):
            if end > last:
                raise ValueError("overlapping edits at offset %d" % start)
            out.append(self.text[end:last])
            out.append(replacement)
            last = start
        out.append(self.text[:last])
        return "".join(reversed(out))
