"""The SeqIO page's examples run as written (the code blocks are read from docs/seqio.md)."""
import contextlib
import importlib.util
import io
import os
import re

PAGE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "seqio.md")


def first_task_code():
    text = open(PAGE, encoding="utf-8").read()
    section = text[text.index("## A first Task and Mixture"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_first_task_and_mixture_example_runs(tmp_path):
    namespace = {"workdir": str(tmp_path)}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(first_task_code(), "docs/seqio.md", "exec"), namespace)  # pylint: disable=exec-used
    batch = namespace["batch"]
    shapes = {name: tuple(t.shape) for name, t in batch.items()}
    assert shapes == {"encoder_input_tokens": (4, 64), "decoder_target_tokens": (4, 32),
                      "decoder_input_tokens": (4, 32), "decoder_loss_weights": (4, 32),
                      "encoder_segment_ids": (4, 64), "decoder_segment_ids": (4, 32),
                      "encoder_positions": (4, 64), "decoder_positions": (4, 32)}
    assert batch["encoder_segment_ids"].numpy().max() >= 2  # packed
    printed = out.getvalue().splitlines()
    assert printed[0] == str(shapes)
    # The output shown on the page is the output.
    code = first_task_code()
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


def walkthrough_blocks():
    """The walk-through's task module and its metric_objs variant, as code blocks."""
    text = open(PAGE, encoding="utf-8").read()
    section = text[text.index("## Walk-through: define a task"):]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    return blocks[0], blocks[1]


def test_walkthrough_metric_objs_task_evaluates(tmp_path):
    module, metric_objs = walkthrough_blocks()
    assert "metric_objs=[Matches.empty()" in metric_objs
    for split, name in (("train", "train.tsv"), ("validation", "dev.tsv")):
        (tmp_path / name).write_text("ab\tab\ncd\tcd\nef\tef\ngh\tgh\n")
    # As the page says: a module the programs import (AutoGraph reads its source).
    (tmp_path / "docs_tasks.py").write_text(
        module.replace("/data/copy", str(tmp_path)) + metric_objs)
    spec = importlib.util.spec_from_file_location("docs_tasks", tmp_path / "docs_tasks.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    from t2t import seqio
    evaluator = seqio.Evaluator("copy_words_objs", seqio.EncDecFeatureConverter(pack=False),
                                async_compute_metrics=False)

    def predict_fn(ds, model_feature_shapes=None):  # the targets; example 1 ends in "q"
        out = []
        for index, ex in ds.as_numpy_iterator():
            tokens = [int(t) for t in ex["decoder_target_tokens"] if t > 1]
            out.append((int(index), tokens[:-1] + [ord("q") + 3] if index == 1 else tokens))
        return out

    metrics, _ = evaluator.evaluate(compute_metrics=True, predict_fn=predict_fn)
    values = metrics.result()["copy_words_objs"]
    assert values["matches"] == values["exact_match"] == 75.0
    assert values["bleu"] == seqio.metrics.bleu(["ab", "cd", "ef", "gh"],
                                                ["ab", "cq", "ef", "gh"])["bleu"]
