"""The text a request sends, cut into what the model translates and put back together.

Each line of a text is translated on its own and the newlines stay where they were: an empty
(or blank) line stays as it is, and the whitespace around each line is kept around its
translation. A line longer than the model's input limit (in input ids) is split into
sentences after `.`, `!`, `?` (and their CJK forms) followed by whitespace; the sentences
are translated on their own and joined back with the whitespace that separated them.

    layout = Layout.of(["Hello.\\n\\n  Two dogs. "], count_ids, limit=0)
    layout.pieces        # ['Hello.', 'Two dogs.']: what the model decodes
    layout.join([[h1], [h2]])   # ['<h1>\\n\\n  <h2> ']
"""
import re

_LINE = re.compile(r"^(\s*)(.*?)(\s*)$", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])(\s+)")


def split_sentences(line):
    """[sentence, whitespace, sentence, ...] of `line` (whitespace kept between)."""
    return _SENTENCE_END.split(line)


class Layout:
    """Where each piece (a line, or a sentence of a long line) goes in each text.

    `pieces` are the texts to decode; `templates[t]` is text t as a list of literal strings
    and piece indices.
    """

    def __init__(self, pieces, templates):
        self.pieces = pieces
        self.templates = templates

    @classmethod
    def of(cls, texts, count_ids=None, limit=0):
        """The layout of `texts`; with `limit`, lines of more than `limit` ids (by
        `count_ids`) are split into sentences."""
        pieces, templates = [], []
        for text in texts:
            template = []
            for number, line in enumerate(text.split("\n")):
                if number:
                    template.append("\n")
                before, core, after = _LINE.match(line).groups()
                if not core:
                    template.append(line)
                    continue
                template.append(before)
                parts = [core]
                if limit and count_ids is not None and count_ids(core) > limit:
                    parts = split_sentences(core)
                for position, part in enumerate(parts):
                    if position % 2:  # the whitespace between sentences
                        template.append(part)
                    else:
                        template.append(len(pieces))
                        pieces.append(part)
                template.append(after)
            templates.append(template)
        return cls(pieces, templates)

    def join(self, decoded, nbest=1):
        """Texts (and their scores) from each piece's hypotheses.

        Returns (texts, scores): with nbest 1, one string and one score per text; else a list
        of `nbest` strings and scores per text, the i-th joining each piece's i-th
        hypothesis. A text's score is the sum of its pieces' scores (0 for a text with
        nothing to translate).
        """
        texts, scores = [], []
        for template in self.templates:
            options, option_scores = [], []
            for rank in range(nbest):
                parts, score = [], 0.0
                for item in template:
                    if isinstance(item, int):
                        hypotheses = decoded[item]
                        hypothesis = hypotheses[min(rank, len(hypotheses) - 1)]
                        parts.append(hypothesis.text)
                        score += float(hypothesis.score)
                    else:
                        parts.append(item)
                options.append("".join(parts))
                option_scores.append(score)
            texts.append(options[0] if nbest == 1 else options)
            scores.append(option_scores[0] if nbest == 1 else option_scores)
        return texts, scores
