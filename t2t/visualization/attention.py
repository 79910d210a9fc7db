"""Draw a Transformer's attention weights: in a notebook (`show`) or a page (`write_html`).

T2T's `tensor2tensor.visualization.attention`, with its view redrawn in plain JavaScript
and SVG (T2T's needed d3 and jQuery from a notebook's require.js), so the same view also
works as a file opened from disk, with nothing to download.

    from t2t.visualization import attention, visualization
    viz = visualization.AttentionVisualizer("transformer_multi30k", "transformer", data_dir,
                                            "translate_ende_multi30k", checkpoint_dir=run)
    _, inp_text, out_text, att_mats = viz.get_vis_data_from_string(None, "A dog runs.")
    attention.show(inp_text, out_text, *att_mats)                     # in Jupyter
    attention.write_html("dog.html", inp_text, out_text, *att_mats)   # anywhere

Each of the three attention lists holds one array per layer, of shape
[batch, heads, query length, key length] (a 3-D array is taken as batch 1); only the
batch's first sentence is drawn.
"""
import html
import json

import numpy as np

from t2t.core import atomic_files
from t2t.visualization.attention_view import VIEW_JS

vis_html = """
  <span style="user-select:none">
    Layer: <select id="layer"></select>
    Attention: <select id="att_type">
      <option value="all">All</option>
      <option value="inp_inp">Input - Input</option>
      <option value="inp_out">Input - Output</option>
      <option value="out_out">Output - Output</option>
    </select>
  </span>
  <div id='vis'></div>
"""

vis_js = VIEW_JS


def show(inp_text, out_text, enc_atts, dec_atts, encdec_atts):
    """Display the attention view in the running Jupyter notebook (needs IPython)."""
    att_json = attention_json(inp_text, out_text, enc_atts, dec_atts, encdec_atts)
    try:
        from IPython import display
    except ImportError:
        raise ImportError("attention.show draws in a Jupyter notebook and needs IPython "
                          "(pip install ipython); outside one, attention.write_html(path, "
                          "...) writes the same view as a page") from None
    display.display(display.HTML(vis_html))
    display.display(display.Javascript("window.attention = %s" % att_json))
    display.display(display.Javascript(vis_js))


def attention_json(inp_text, out_text, enc_atts, dec_atts, encdec_atts):
    """The view's data (`get_attention` of the resized matrices) as JSON text."""
    attention = get_attention(_texts(inp_text), _texts(out_text), resize(enc_atts),
                              resize(dec_atts), resize(encdec_atts))
    return json.dumps(attention)


def _texts(tokens):
    # Byte-level vocabularies decode to bytes tokens (b"a"), as T2T's did.
    return [t.decode("utf-8", "replace") if isinstance(t, bytes) else str(t) for t in tokens]


def to_html(inp_text, out_text, enc_atts, dec_atts, encdec_atts, title="Attention"):
    """A page of its own holding the view, its data and its script."""
    att_json = attention_json(inp_text, out_text, enc_atts, dec_atts, encdec_atts)
    # "</" would end the script element early if a token held "</script>".
    att_json = att_json.replace("</", "<\\/")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<title>%s</title>\n</head>\n<body style=\"font-family: sans-serif\">\n%s\n"
            "<script>window.attention = %s;</script>\n<script>%s</script>\n</body>\n</html>\n"
            % (html.escape(title), vis_html, att_json, vis_js))


def write_html(path, inp_text, out_text, enc_atts, dec_atts, encdec_atts, title="Attention"):
    """Write `to_html(...)` to `path` (complete or not at all); returns `path`."""
    page = to_html(inp_text, out_text, enc_atts, dec_atts, encdec_atts, title=title)
    with atomic_files.atomic_write(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path


def resize(att_mat, max_length=None):
    """Each layer's attention as [batch, heads, query, key]; with `max_length`, cut to
    the first `max_length` queries and keys and renormalized so each query's weights
    sum to 1 again.

        resize([np.full((2, 3, 3), 1 / 3)], max_length=2)[0]   # shape (1, 2, 2, 2), all 0.5

    (T2T divided by the sums over the queries instead, and changed the caller's arrays
    in place; this returns new arrays.)
    """
    resized = []
    for att in att_mat:
        att = np.asarray(att, dtype=np.float64)
        if att.ndim == 3:  # one sentence: the view reads a batch
            att = att[np.newaxis]
        if att.ndim != 4:
            raise ValueError("an attention matrix has shape %s; expected [batch, heads, "
                             "query length, key length]" % (att.shape,))
        if max_length is not None:
            att = att[:, :, :max_length, :max_length]
            sums = att.sum(axis=-1, keepdims=True)
            att = np.divide(att, sums, out=np.zeros_like(att), where=sums > 0)
        resized.append(att)
    return resized


def get_attention(inp_text, out_text, enc_atts, dec_atts, encdec_atts):
    """The view's data: for each kind of attention, its matrices and the two token lists.

    Returns {"all", "inp_inp", "inp_out", "out_out"}, each {"att", "top_text",
    "bot_text"}: `att[layer][head][q][k]` is the weight query q (a token of `bot_text`,
    drawn on the right) gives key k (of `top_text`, on the left). "all" is the input and
    output tokens together: encoder self-attention, encoder-decoder attention and decoder
    self-attention in one matrix, 0 where no attention exists (inputs never attend to
    outputs).

        get_attention(["a"], ["b"], [e], [d], [ed])["inp_out"]["att"][0]  # ed[0] as lists
    """
    def first(att):
        return np.asarray(att)[0]  # [heads, query, key] of the batch's first sentence

    def full(layer):
        enc, dec, encdec = first(enc_atts[layer]), first(dec_atts[layer]), first(encdec_atts[layer])
        heads, enc_length, dec_length = enc.shape[0], enc.shape[1], dec.shape[1]
        inputs_rows = np.concatenate([enc, np.zeros((heads, enc_length, dec_length))], axis=2)
        outputs_rows = np.concatenate([encdec, dec], axis=2)
        return np.concatenate([inputs_rows, outputs_rows], axis=1).tolist()

    def per_layer(atts):
        return [first(att).tolist() for att in atts]

    return {
        "all": {"att": [full(i) for i in range(len(enc_atts))],
                "top_text": inp_text + out_text, "bot_text": inp_text + out_text},
        "inp_inp": {"att": per_layer(enc_atts), "top_text": inp_text, "bot_text": inp_text},
        "inp_out": {"att": per_layer(encdec_atts), "top_text": inp_text, "bot_text": out_text},
        "out_out": {"att": per_layer(dec_atts), "top_text": out_text, "bot_text": out_text},
    }
