"""The README's SeqIO example runs as written (the code block is read from README.md)."""
import contextlib
import io
import os
import re

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def readme_seqio_code():
    text = open(README, encoding="utf-8").read()
    section = text[text.index("## SeqIO tasks and mixtures"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_seqio_example_runs(tmp_path):
    namespace = {"workdir": str(tmp_path)}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(readme_seqio_code(), "README.md", "exec"), namespace)  # pylint: disable=exec-used
    batch = namespace["batch"]
    shapes = {name: tuple(t.shape) for name, t in batch.items()}
    assert shapes == {"encoder_input_tokens": (4, 64), "decoder_target_tokens": (4, 32),
                      "decoder_input_tokens": (4, 32), "decoder_loss_weights": (4, 32),
                      "encoder_segment_ids": (4, 64), "decoder_segment_ids": (4, 32),
                      "encoder_positions": (4, 64), "decoder_positions": (4, 32)}
    assert batch["encoder_segment_ids"].numpy().max() >= 2  # packed
    printed = out.getvalue().splitlines()
    assert printed[0] == str(shapes)
    # The output shown in the README is the output.
    code = readme_seqio_code()
    shown = code[code.index("# {'encoder"):code.index("}", code.index("# {'encoder")) + 1]
    assert " ".join(line.lstrip("# ").strip() for line in shown.splitlines()) == printed[0]
    first = printed[1]
    assert first.startswith("what is") or set(first) <= set("01 ")
    # The mixture draws from both tasks.
    vocab = namespace["vocab"]
    seen = set()
    for batch in namespace["ds"].take(6):
        for row, segments in zip(batch["encoder_input_tokens"].numpy(),
                                 batch["encoder_segment_ids"].numpy()):
            for s in set(segments[segments > 0].tolist()):
                text = vocab.decode(row[segments == s])
                seen.add("qa" if text.startswith("what is") else "binary")
    assert seen == {"qa", "binary"}
