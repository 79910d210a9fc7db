"""Serving: export a trained model as a SavedModel (`export`). The in-graph encoders it
uses live in `t2t.encoders.graph_ops` (`t2t.serving.vocab_ops` is kept as that path)."""
