"""The attention view's data, its page, and `show` in a notebook."""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from t2t.visualization import attention

INP, OUT = ["a", "b", "<EOS>"], ["A", "B"]


def matrices(layers=2, heads=3, queries=2, keys=3, start=0.0):
    """Distinct, recognisable values: layer*1000 + head*100 + query*10 + key (+start)."""
    grid = np.indices((layers, 1, heads, queries, keys))
    values = start + grid[0] * 1000 + grid[2] * 100 + grid[3] * 10 + grid[4]
    return [values[i].astype(np.float64) for i in range(layers)]


def test_each_kind_of_attention_keeps_queries_as_rows_and_all_joins_them():
    enc, dec, encdec = matrices(queries=3, keys=3), matrices(queries=2, keys=2, start=0.5), \
        matrices(queries=2, keys=3, start=0.25)
    views = attention.get_attention(INP, OUT, enc, dec, encdec)
    assert views["inp_out"]["top_text"] == INP and views["inp_out"]["bot_text"] == OUT
    assert views["all"]["top_text"] == INP + OUT == views["all"]["bot_text"]
    assert views["inp_inp"]["att"][1][2] == enc[1][0, 2].tolist()
    assert views["out_out"]["att"][0][1] == dec[0][0, 1].tolist()
    assert views["inp_out"]["att"][1][0] == encdec[1][0, 0].tolist()
    full = np.array(views["all"]["att"][1][2])  # layer 1, head 2: [inputs + outputs]^2
    assert full.shape == (5, 5)
    np.testing.assert_array_equal(full[:3, :3], enc[1][0, 2])
    np.testing.assert_array_equal(full[:3, 3:], 0)            # inputs never see outputs
    np.testing.assert_array_equal(full[3:, :3], encdec[1][0, 2])
    np.testing.assert_array_equal(full[3:, 3:], dec[1][0, 2])


def test_resize_adds_the_batch_and_leaves_the_callers_arrays_alone():
    one = np.full((2, 3, 3), 1 / 3)
    resized = attention.resize([one], max_length=2)
    assert resized[0].shape == (1, 2, 2, 2)
    np.testing.assert_allclose(resized[0], 0.5)
    np.testing.assert_array_equal(one, 1 / 3)
    with pytest.raises(ValueError, match=r"shape \(3, 3\); expected \[batch, heads"):
        attention.resize([np.ones((3, 3))])


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 2), st.integers(1, 3),
                                        st.integers(1, 6), st.integers(1, 6)),
                  elements=st.floats(0.001, 1.0)),
       st.integers(1, 7))
def test_cut_attention_sums_to_one_per_query(att, max_length):
    att = att / att.sum(axis=-1, keepdims=True)  # as softmax leaves it
    cut = attention.resize([att], max_length=max_length)[0]
    assert cut.shape == att.shape[:2] + (min(max_length, att.shape[2]),
                                         min(max_length, att.shape[3]))
    np.testing.assert_allclose(cut.sum(axis=-1), 1.0)


def test_write_html_writes_a_complete_page_whatever_the_tokens(tmp_path):
    tokens = [b"caf\xc3\xa9", "</script><b>", "<EOS>"]
    enc, dec, encdec = matrices(queries=3, keys=3), matrices(queries=2, keys=2), matrices()
    path = attention.write_html(str(tmp_path / "view.html"), tokens, OUT, enc, dec, encdec,
                                title="a <title>")
    assert os.listdir(tmp_path) == ["view.html"]  # no temporary file left
    page = open(path, encoding="utf-8").read()
    assert "<title>a &lt;title&gt;</title>" in page
    assert page.count("</script>") == 2  # the token's own is escaped inside the data
    data = re.search(r"window.attention = (.*?);</script>", page, re.S).group(1)
    views = json.loads(data.replace("<\\/", "</"))
    assert views["inp_inp"]["top_text"] == ["café", "</script><b>", "<EOS>"]


def test_show_displays_the_view_in_a_notebook_and_says_what_it_needs_outside(monkeypatch):
    shown = []
    display = types.ModuleType("IPython.display")
    display.HTML = lambda text: ("html", text)
    display.Javascript = lambda text: ("js", text)
    display.display = shown.append
    ipython = types.ModuleType("IPython")
    ipython.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    enc, dec, encdec = matrices(queries=3, keys=3), matrices(queries=2, keys=2), matrices()
    attention.show(INP, OUT, enc, dec, encdec)
    assert [kind for kind, _ in shown] == ["html", "js", "js"]
    assert 'id="att_type"' in shown[0][1]
    data = json.loads(shown[1][1][len("window.attention = "):])
    assert data["inp_out"]["bot_text"] == OUT
    assert shown[2][1] == attention.vis_js

    monkeypatch.setitem(sys.modules, "IPython", None)  # not installed
    with pytest.raises(ImportError, match=r"needs IPython \(pip install ipython\); outside "
                                          r"one, attention.write_html"):
        attention.show(INP, OUT, enc, dec, encdec)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install "
                    "chromium); the attention page's browser test needs it")
def test_the_page_draws_one_line_per_visible_weight_in_headless_chromium(tmp_path):
    rng = np.random.default_rng(0)

    def softmax(shape):
        logits = rng.normal(size=shape) * 3
        return np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)

    enc = [softmax((1, 2, 3, 3)) for _ in range(2)]
    dec = [softmax((1, 2, 2, 2)) for _ in range(2)]
    encdec = [softmax((1, 2, 2, 3)) for _ in range(2)]
    path = attention.write_html(str(tmp_path / "view.html"), INP, OUT, enc, dec, encdec)

    def dom(fragment):
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--user-data-dir=%s" % (tmp_path / "chromium"), "--virtual-time-budget=3000",
             "--dump-dom", "file://%s%s" % (path, fragment)],
            capture_output=True, text=True, timeout=120).stdout

    def drawn(page):
        return sorted((int(h), int(r), int(k)) for h, k, r in re.findall(
            r'<line class="att-line" data-head="(\d+)" data-left="(\d+)" data-right="(\d+)"',
            page))

    def texts(page):
        return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", page)]

    page = dom("")  # the first view: layer 0, all the attention, every head
    full = np.array(attention.get_attention(INP, OUT, enc, dec, encdec)["all"]["att"][0])
    assert drawn(page) == sorted(zip(*np.nonzero(full > 0.01)))
    assert texts(page) == (INP + OUT) * 2
    assert page.count('type="checkbox"') == 2

    page = dom("#layer=1&att_type=inp_out&heads=1")  # a link to one view
    expected = [(1, r, k) for r, k in zip(*np.nonzero(encdec[1][0, 1] > 0.01))]
    assert drawn(page) == sorted(expected)
    assert texts(page) == INP + OUT
