"""The page at `/`: type a text, pick a model, translate (it calls POST /v1/translate).

`/?q=TEXT` fills the text and translates it when the page opens (a link that shows a
translation; the browser test loads one).
"""

HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>t2t-serve</title>
<style>
body { font-family: sans-serif; max-width: 48em; margin: 2em auto; }
textarea, pre { width: 100%; min-height: 8em; box-sizing: border-box; font-size: 1em; }
pre { background: #f4f4f4; padding: .5em; white-space: pre-wrap; }
#status { color: #a00; }
</style>
</head>
<body>
<h1>t2t-serve</h1>
<p><label>Model <select id="model"></select></label>
<label>Beam size <input id="beam_size" type="number" min="1" value="" size="3"></label></p>
<textarea id="input" placeholder="Text to translate (each line on its own)"></textarea>
<p><button id="translate">Translate</button> <span id="status"></span></p>
<pre id="output"></pre>
<script>
const $ = (id) => document.getElementById(id);

async function loadModels() {
  const answer = await fetch("/v1/models");
  const listed = await answer.json();
  for (const model of listed.models) {
    const option = document.createElement("option");
    option.value = option.textContent = model.name;
    $("model").appendChild(option);
  }
}

async function translate() {
  $("status").textContent = "translating...";
  const body = {model: $("model").value || null, inputs: $("input").value};
  if ($("beam_size").value) body.beam_size = parseInt($("beam_size").value, 10);
  try {
    const answer = await fetch("/v1/translate", {method: "POST",
      headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
    const result = await answer.json();
    if (answer.ok) {
      $("output").textContent = result.outputs;
      $("status").textContent = "";
    } else {
      $("status").textContent = answer.status + ": " + result.error;
    }
  } catch (failure) {
    $("status").textContent = String(failure);
  }
  document.body.setAttribute("data-done", "1");
}

$("translate").addEventListener("click", translate);
loadModels().then(() => {
  const q = new URLSearchParams(window.location.search).get("q");
  if (q !== null) { $("input").value = q; translate(); }
});
</script>
</body>
</html>
"""
