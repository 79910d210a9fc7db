"""TyDi QA (primary task) in pure Python: data, preprocessing, windows, predictions, metrics.

One concept per module, none of them importing TensorFlow (worker processes of the
parallel preprocessing start fast):

* `data`: the released jsonl.gz schema as frozen dataclasses, byte helpers, enums.
* `preprocess`: the annotation to learn from, the candidate contexts with a marker per
  candidate, the context -> document byte map and the verified answer span.
* `tokenizers`: codepoint ids (CANINE-style) and subwords, both with byte offsets.
* `windows`: `[CLS] question [SEP] window [SEP]` features and their labels.
* `pipeline`: a jsonl.gz file -> features, in parallel processes, with a summary.
* `records`: tf.train.Example bytes without TensorFlow (made in the worker processes).
* `postprocess`: per-window logits -> one official-format prediction per example.
* `evaluation`: the official TyDi QA metrics (`t2t-tydi-eval`).
* `synthetic`: TyDi-format files for tests and benchmarks.

The registered problems live in `t2t.problems.tydiqa`, the span model in
`t2t.models.transformer_span`.
"""
