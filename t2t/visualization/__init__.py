"""Attention views of a trained Transformer (T2T's `tensor2tensor.visualization`).

`visualization.AttentionVisualizer` translates a sentence and fetches every layer's and
head's attention weights; `attention.show` draws them in a notebook, `attention.write_html`
in a page of its own.
"""
