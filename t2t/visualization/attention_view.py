"""The attention view's page script: plain JavaScript and SVG, nothing to download.

It draws `window.attention` (see `attention.get_attention`) into the elements of
`attention.vis_html`: the keys (the tokens attended to) on the left, the queries on the
right, one line per (query, key) pair and head, as opaque as the weight. Hovering a token
keeps only its lines. The page's address may choose what is shown first:
`#layer=1&att_type=inp_out&heads=0,2` (a link to one view).
"""

VIEW_JS = r"""
(function () {
  "use strict";
  var attention = window.attention;
  var COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var BOX_WIDTH = 120, BOX_HEIGHT = 22, GAP = 150, TEXT_SIZE = 15, PAD = 4;
  var SVG_NS = "http://www.w3.org/2000/svg";
  var layerSelect = document.getElementById("layer");
  var typeSelect = document.getElementById("att_type");
  var vis = document.getElementById("vis");
  var numLayers = attention.all.att.length;
  var numHeads = attention.all.att[0].length;
  var heads = [];
  for (var h = 0; h < numHeads; h++) heads.push(true);

  function fromAddress() {
    var settings = {};
    (window.location.hash || "").replace(/^#/, "").split("&").forEach(function (part) {
      var kv = part.split("=");
      if (kv.length === 2) settings[kv[0]] = decodeURIComponent(kv[1]);
    });
    var layer = parseInt(settings.layer, 10);
    if (layer >= 0 && layer < numLayers) layerSelect.value = String(layer);
    if (settings.att_type && attention[settings.att_type]) typeSelect.value = settings.att_type;
    if (settings.heads !== undefined) {
      var chosen = settings.heads.split(",").map(function (s) { return parseInt(s, 10); });
      for (var i = 0; i < numHeads; i++) heads[i] = chosen.indexOf(i) >= 0;
    }
  }

  function element(name, attributes, parent) {
    var node = document.createElementNS(SVG_NS, name);
    for (var key in attributes) node.setAttribute(key, attributes[key]);
    if (parent) parent.appendChild(node);
    return node;
  }

  function drawTokens(svg, tokens, x, side) {
    tokens.forEach(function (token, i) {
      var y = PAD + i * BOX_HEIGHT;
      var group = element("g", {"class": "token " + side, "data-index": i}, svg);
      element("rect", {x: x, y: y, width: BOX_WIDTH, height: BOX_HEIGHT - 2,
                       fill: "#f4f4f4"}, group);
      var text = element("text", {x: side === "left" ? x + BOX_WIDTH - PAD : x + PAD,
                                  y: y + TEXT_SIZE, "font-size": TEXT_SIZE,
                                  "text-anchor": side === "left" ? "end" : "start"}, group);
      text.textContent = token;
      group.addEventListener("mouseenter", function () { only(side, i); });
      group.addEventListener("mouseleave", function () { only(null, -1); });
    });
  }

  function only(side, index) {
    var lines = vis.querySelectorAll("line.att-line");
    for (var i = 0; i < lines.length; i++) {
      var line = lines[i];
      var shown = side === null || line.getAttribute("data-" + side) === String(index);
      line.style.display = shown ? "" : "none";
    }
  }

  function drawHeadBoxes() {
    var box = document.createElement("div");
    box.id = "heads";
    heads.forEach(function (on, h) {
      var label = document.createElement("label");
      label.style.color = COLOURS[h % COLOURS.length];
      label.style.marginRight = "1em";
      var check = document.createElement("input");
      check.type = "checkbox";
      check.checked = on;
      check.setAttribute("data-head", h);
      check.addEventListener("change", function () { heads[h] = check.checked; render(); });
      label.appendChild(check);
      label.appendChild(document.createTextNode(" head " + h));
      box.appendChild(label);
    });
    vis.appendChild(box);
  }

  function render() {
    var view = attention[typeSelect.value];
    var layer = parseInt(layerSelect.value, 10);
    vis.innerHTML = "";
    drawHeadBoxes();
    var rows = Math.max(view.top_text.length, view.bot_text.length);
    var svg = element("svg", {width: 2 * BOX_WIDTH + GAP, height: 2 * PAD + rows * BOX_HEIGHT});
    vis.appendChild(svg);
    var lines = element("g", {"class": "attention_heads"}, svg);
    view.att[layer].forEach(function (matrix, h) {
      if (!heads[h]) return;
      matrix.forEach(function (row, right) {
        row.forEach(function (weight, left) {
          if (!(weight > 0.01)) return;  // nothing to see; keeps the page light
          element("line", {"class": "att-line", "data-head": h, "data-left": left,
                           "data-right": right, "data-weight": weight.toFixed(4),
                           x1: BOX_WIDTH, y1: PAD + left * BOX_HEIGHT + BOX_HEIGHT / 2,
                           x2: BOX_WIDTH + GAP, y2: PAD + right * BOX_HEIGHT + BOX_HEIGHT / 2,
                           stroke: COLOURS[h % COLOURS.length], "stroke-width": 2,
                           "stroke-opacity": weight}, lines);
        });
      });
    });
    drawTokens(svg, view.top_text, 0, "left");
    drawTokens(svg, view.bot_text, BOX_WIDTH + GAP, "right");
  }

  layerSelect.innerHTML = "";
  for (var i = 0; i < numLayers; i++) {
    var option = document.createElement("option");
    option.value = String(i);
    option.textContent = String(i);
    layerSelect.appendChild(option);
  }
  fromAddress();
  layerSelect.onchange = render;
  typeSelect.onchange = render;
  render();
})();
"""
