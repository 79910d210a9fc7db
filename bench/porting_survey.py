"""How many public T2T 1.x user dirs port to t2t: import, names, and a tiny end-to-end run.

Each entry of `bench/porting_survey_repos.json` names a public repository's `--t2t_usr_dir`
(checked out beforehand under `--survey_dir/<owner>+<name>` at the listed commit; the
script never fetches anything). For each one the script

1. copies the user dir to a temporary folder and ports it (`--port`):
   `sed` rewrites the four module paths of docs/porting.md's table,
   `none` leaves it unchanged (t2t's own `tensor2tensor` alias, where present, does the rest),
   `t2t-port` runs `python -m t2t.bin.t2t_port --in_place DIR` (when that module exists);
2. imports it in a subprocess as the programs do (`t2t.core.usr_dir.import_usr_dir`) and
   records "ok" or the one-line error;
3. lists every T2T name the unported code uses (`module.attr` on a tensor2tensor module and
   `from tensor2tensor.x import y`) and checks which exist in t2t (import + hasattr);
4. for the entries with a `run` recipe, writes the tiny local data the problem reads into
   `--tmp_dir` and runs t2t-datagen, t2t-trainer (a few steps) and t2t-decoder, each in a
   subprocess with a timeout, recording the step that failed and its one-line error.

    PYTHONPATH=$PWD python bench/porting_survey.py --survey_dir=/work/survey --port=sed

Writes `bench/results/porting_survey.json` under "runs" / "<date>-<t2t commit>-<port>" (the
other runs are kept, so before/after figures sit side by side) and prints a table.
"""
import argparse
import ast
import datetime
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_REPOS = os.path.join(HERE, "porting_survey_repos.json")
DEFAULT_OUT = os.path.join(HERE, "results", "porting_survey.json")

# docs/porting.md's table: T2T package -> t2t package.
PACKAGE_MAP = {
    "tensor2tensor.data_generators": "t2t.problems",
    "tensor2tensor.utils": "t2t.utils",
    "tensor2tensor.layers": "t2t.layers",
    "tensor2tensor.models": "t2t.models",
}
_SED = re.compile(r"\btensor2tensor\.(data_generators|utils|layers|models)\b")

# T2T 1.15.7's packages have empty __init__s: `from tensor2tensor.utils import x` imports the
# module x, whether or not this code then uses x.attr.
T2T_PACKAGES = {"tensor2tensor", "tensor2tensor.bin", "tensor2tensor.data_generators",
                "tensor2tensor.layers", "tensor2tensor.models", "tensor2tensor.models.research",
                "tensor2tensor.models.video", "tensor2tensor.serving", "tensor2tensor.utils",
                "tensor2tensor.rl", "tensor2tensor.envs", "tensor2tensor.visualization"}

STEPS = ("datagen", "trainer", "decoder")
# Tiny model overrides for a few training steps (a repo's entry may add its own).
TINY_HPARAMS = ("batch_size=256,hidden_size=16,filter_size=32,num_heads=2,num_hidden_layers=1,"
                "max_length=64")


def log(message):
    print(message, flush=True)


# ---- porting ---------------------------------------------------------------------------

def sed_port_text(text):
    """The source with docs/porting.md's four module paths rewritten:

        sed_port_text("from tensor2tensor.utils import registry")
        # "from t2t.utils import registry"
    """
    return _SED.sub(lambda m: PACKAGE_MAP["tensor2tensor." + m.group(1)], text)


def python_files(folder):
    for parent, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(parent, name)


def port_dir(folder, mode, python=sys.executable, timeout=120):
    """Port `folder` in place; None when done, else a one-line reason it could not be."""
    if mode == "none":
        return None
    if mode == "sed":
        for path in python_files(folder):
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
            ported = sed_port_text(text)
            if ported != text:
                with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(ported)
        return None
    if mode == "t2t-port":
        result = run_child([python, "-c", "import importlib.util, sys; sys.exit(0 if "
                            "importlib.util.find_spec('t2t.bin.t2t_port') else 3)"], timeout)
        if result["returncode"] == 3:
            return "t2t.bin.t2t_port does not exist in this t2t"
        result = run_child([python, "-m", "t2t.bin.t2t_port", "--in_place", folder], timeout)
        return None if result["returncode"] == 0 else "t2t_port: " + result["error"]
    raise ValueError("unknown --port %r; choose sed, none or t2t-port" % mode)


def copy_usr_dir(source, dest_root, files=None, init=None):
    """Copy `source` (only `files` when given) to a folder under `dest_root` whose name is a
    Python package name (the original's when it is one, so the code's own
    `from usr_dir.x import y` still works). `init` is written as __init__.py when the
    original has none (a repo whose problems.py its own scripts import directly)."""
    name = os.path.basename(os.path.normpath(source))
    if not name.isidentifier():
        name = "usr_" + re.sub(r"\W", "_", name)
    dest = os.path.join(dest_root, name)
    if files:
        os.makedirs(dest)
        for rel in files:
            shutil.copy(os.path.join(source, rel), os.path.join(dest, rel))
    else:
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".git", "*.pyc"))
    init_path = os.path.join(dest, "__init__.py")
    if init is not None and not os.path.exists(init_path):
        with open(init_path, "w", encoding="utf-8") as f:
            f.write(init)
    return dest


# ---- subprocesses ----------------------------------------------------------------------

def one_line_error(stderr):
    """The line that says what went wrong: the last exception line or program error, else
    the last non-empty line.

        one_line_error("Traceback ...\\n  File x\\nImportError: no foo\\n")  # "ImportError: no foo"
    """
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    pattern = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b|[\w-]+: error:)")
    for line in reversed(lines):
        if pattern.match(line):
            return line[:400]
    return lines[-1][:400] if lines else ""


def run_child(argv, timeout, env=None, cwd=None):
    start = time.time()
    child_env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONHASHSEED="0")
    child_env["PYTHONPATH"] = os.pathsep.join(
        [ROOT] + [p for p in child_env.get("PYTHONPATH", "").split(os.pathsep) if p])
    child_env.update(env or {})
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                env=child_env, cwd=cwd)
    except subprocess.TimeoutExpired:
        return {"returncode": None, "error": "timed out after %d s" % timeout,
                "seconds": round(time.time() - start, 1), "stdout": ""}
    return {"returncode": result.returncode, "stdout": result.stdout,
            "error": one_line_error(result.stderr) if result.returncode else "",
            "seconds": round(time.time() - start, 1)}


_IMPORT_CHILD = r"""
import json, sys
from t2t.core import registry, usr_dir
before = {k: set(f()) for k, f in (("problems", registry.list_problems),
                                   ("models", registry.list_models),
                                   ("hparams", registry.list_hparams))}
try:
    usr_dir.import_usr_dir(sys.argv[1])
except BaseException as e:
    import traceback
    root = e.__cause__ or e.__context__ or e  # t2t's UserCodeError wraps the user's error
    message = str(root).strip().splitlines()
    frames = [f for f in traceback.extract_tb(root.__traceback__) if sys.argv[1] in f.filename]
    where = " (%s:%d)" % (frames[-1].filename[len(sys.argv[1]) + 1:], frames[-1].lineno) if frames else ""
    print(json.dumps({"ok": False, "error": "%s: %s%s" % (
        type(root).__name__, message[-1] if message else "", where)}))
    sys.exit(0)
after = {k: set(f()) for k, f in (("problems", registry.list_problems),
                                  ("models", registry.list_models),
                                  ("hparams", registry.list_hparams))}
print(json.dumps({"ok": True, "registered": {k: sorted(after[k] - before[k]) for k in after}}))
"""


def error_cause(error):
    """What an import error says is missing: "t2t" (a T2T module or name t2t lacks),
    "dependency <module>" (a third-party module not installed here), "TensorFlow 1 API"
    (`tf.flags`, `tf.contrib`, ... gone from TF 2) or "user code".

        error_cause("ModuleNotFoundError: No module named 'pandas' (a.py:2)")  # "dependency pandas"
    """
    missing = re.match(r"ModuleNotFoundError: No module named '([\w.]+)'", error or "")
    if missing:
        top = missing.group(1).split(".")[0]
        return "t2t" if top in ("t2t", "tensor2tensor") else "dependency " + top
    if re.search(r"cannot import name .* from 't2t[.']|module 't2t[\w.]*' has no attribute",
                 error or ""):
        return "t2t"
    if re.search(r"module 'tensorflow[\w.]*' has no attribute", error or ""):
        return "TensorFlow 1 API"
    return "user code"


def import_in_child(folder, python, timeout, env=None, cwd=None):
    """{"ok": bool, "error"?: one line, "registered"?: {"problems": [...], ...}}."""
    result = run_child([python, "-c", _IMPORT_CHILD, folder], timeout, env=env, cwd=cwd)
    lines = result["stdout"].strip().splitlines()
    outcome = {"ok": False, "error": result["error"] or "import child printed no result"}
    if result["returncode"] == 0 and lines:
        try:
            outcome = json.loads(lines[-1])
        except ValueError:
            pass
    if not outcome["ok"]:
        outcome["cause"] = error_cause(outcome["error"])
    return outcome


# ---- names used ------------------------------------------------------------------------

def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def t2t_names_in_source(source):
    """The T2T names one file uses, as "tensor2tensor.pkg.module" (a module) or
    "tensor2tensor.pkg.module:attr" (a name in it):

        t2t_names_in_source("from tensor2tensor.utils import registry\\n"
                            "@registry.register_problem\\nclass P: pass\\n")
        # ["tensor2tensor.utils.registry", "tensor2tensor.utils.registry:register_problem"]

    `from tensor2tensor.x import y` counts y as a module when x is one of T2T's packages or
    the code uses `y.attr`, else as a name in tensor2tensor.x. Raises SyntaxError for code
    that does not parse.
    """
    tree = ast.parse(source)
    aliases, modules, names = {}, set(), set()
    attr_bases = {_dotted(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "tensor2tensor":
                    continue
                modules.add(alias.name)
                names.add(alias.name)
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    aliases.setdefault("tensor2tensor", "tensor2tensor")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "tensor2tensor":
                continue
            for alias in node.names:
                bound = alias.asname or alias.name
                if alias.name == "*":
                    names.add(node.module)
                elif node.module in T2T_PACKAGES or bound in attr_bases:
                    full = node.module + "." + alias.name
                    aliases[bound] = full
                    modules.add(full)
                    names.add(full)
                else:
                    names.add("%s:%s" % (node.module, alias.name))
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or id(node) in inner:
            continue  # only whole chains: a.b.c.d, not its a.b.c
        dotted = _dotted(node)
        if not dotted:
            continue
        head, _, rest = dotted.partition(".")
        if head not in aliases:
            continue
        parts = (aliases[head] + "." + rest).split(".")
        # The longest imported module prefix; the next part is the name used in it.
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in modules or module == aliases[head]:
                names.add("%s:%s" % (module, parts[cut]))
                break
    return sorted(names)


def scan_names(folder):
    """({name: [files using it]}, [files that do not parse, with the error])."""
    used, unparsed = {}, []
    for path in python_files(folder):
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        rel = os.path.relpath(path, folder)
        try:
            file_names = t2t_names_in_source(source)
        except SyntaxError as e:
            unparsed.append("%s: SyntaxError: %s (line %s)" % (rel, e.msg, e.lineno))
            continue
        for name in file_names:
            used.setdefault(name, []).append(rel)
    return used, unparsed


def t2t_module_for(module):
    """The t2t module docs/porting.md maps T2T's `module` to, or None (not in the table).

        t2t_module_for("tensor2tensor.data_generators.text_problems")  # "t2t.problems.text_problems"
    """
    for t2t_pkg, ours in PACKAGE_MAP.items():
        if module == t2t_pkg or module.startswith(t2t_pkg + "."):
            return ours + module[len(t2t_pkg):]
    return None


_NAMES_CHILD = r"""
import importlib, json, sys
names = json.loads(sys.stdin.read())
out = {}
for name, (module, attr) in names.items():
    if module is None:
        out[name] = "not in docs/porting.md's table"
        continue
    try:
        m = importlib.import_module(module)
    except Exception as e:
        out[name] = "no module %s" % module
        continue
    if attr is not None and not hasattr(m, attr):
        out[name] = "%s has no %s" % (module, attr)
    else:
        out[name] = None
print(json.dumps(out))
"""


def check_names(names, python, timeout=300):
    """{T2T name: None if t2t has it, else the reason}, checked in one child process."""
    query = {}
    for name in names:
        module, _, attr = name.partition(":")
        query[name] = (t2t_module_for(module), attr or None)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3",
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([python, "-c", _NAMES_CHILD], input=json.dumps(query),
                            capture_output=True, text=True, timeout=timeout, env=env)
    if result.returncode:
        raise RuntimeError("name check failed: " + one_line_error(result.stderr))
    return json.loads(result.stdout.strip().splitlines()[-1])


# ---- tiny local data -------------------------------------------------------------------

_WORDS = ("the a one two small big red blue cat dog house tree river song night day light "
          "water stone bird word road city book hand sea sky").split()


def tiny_pairs(count, seed=0):
    """`count` (source, target) sentence pairs: target is the source's words reversed and
    uppercased, so a task can be learned from a few lines. Same seed, same pairs.

        tiny_pairs(1)  # [("dog the river", "RIVER THE DOG")]  (the words vary with the seed)
    """
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 8))]
        pairs.append((" ".join(words), " ".join(w.upper() for w in reversed(words))))
    return pairs


def _fill(template, index, pair):
    return template.format(i=index, src=pair[0], tgt=pair[1])


def write_recipe_data(recipe, tmp_dir, data_dir=None, lines=50, checkout=None):
    """Write the files a run recipe names into `tmp_dir` (`data_dir` for those with
    "in": "data_dir"): "line" is a template over the tiny pairs ({src}, {tgt}, {i}), "members"
    makes a .tgz of such files, "copy" the first `lines` lines of a file the repo's
    `checkout` ships (its own data), "vocab" a token vocabulary of the pairs' words (of
    "tokens", a space-separated list, when given). Returns the paths written.

        write_recipe_data({"data": [{"path": "train.txt", "line": "{src}\\t{tgt}"}]}, tmp)
        # [tmp + "/train.txt"]: 50 lines "dog the river\\tRIVER THE DOG", ...
    """
    pairs = tiny_pairs(recipe.get("lines", lines), seed=recipe.get("seed", 0))
    written = []
    for entry in recipe["data"]:
        path = os.path.join(data_dir if entry.get("in") == "data_dir" else tmp_dir,
                            entry["path"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if entry.get("vocab"):  # a token vocabulary: T2T's reserved ids, then every word
            words = (entry["tokens"].split() if "tokens" in entry else
                     list(_WORDS) + [w.upper() for w in _WORDS])
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(t + "\n" for t in ["<pad>", "<EOS>"] + words)
        elif "copy" in entry:
            with open(os.path.join(checkout, entry["copy"]), encoding="utf-8") as f:
                head = [line for _, line in zip(range(recipe.get("lines", lines)), f)]
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(head)
        elif "members" in entry:
            with tarfile.open(path, "w:gz") as archive:
                for member, template in sorted(entry["members"].items()):
                    text = "".join(_fill(template, i, p) + "\n" for i, p in enumerate(pairs))
                    member_path = os.path.join(tmp_dir, ".members", member)
                    os.makedirs(os.path.dirname(member_path), exist_ok=True)
                    with open(member_path, "w", encoding="utf-8") as f:
                        f.write(text)
                    archive.add(member_path, arcname=member)
            shutil.rmtree(os.path.join(tmp_dir, ".members"))
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(entry.get("header", ""))
                f.writelines(_fill(entry["line"], i, p) + "\n" for i, p in enumerate(pairs))
        written.append(path)
    return written


# ---- the three programs ----------------------------------------------------------------

def run_steps(usr_dir, recipe, work, python, timeout, train_steps):
    """{"datagen"|"trainer"|"decoder": {"ok", "seconds", "error"?}} up to the first failure."""
    tmp_dir, data_dir, out_dir = (os.path.join(work, d) for d in ("tmp", "data", "train"))
    subst = {"tmp_dir": tmp_dir, "data_dir": data_dir}
    env = {k: v.format(**subst) for k, v in recipe.get("env", {}).items()}
    decode_in, decode_out = os.path.join(work, "decode_in.txt"), os.path.join(work, "decoded.txt")
    sources = recipe.get("decode_inputs") or [p[0] for p in tiny_pairs(3, seed=99)]
    with open(decode_in, "w", encoding="utf-8") as f:
        f.writelines(s + "\n" for s in sources)
    common = ["--t2t_usr_dir=" + usr_dir, "--problem=" + recipe["problem"],
              "--data_dir=" + data_dir]
    model = ["--model=" + recipe.get("model", "transformer"),
             "--hparams_set=" + recipe["hparams_set"],
             "--hparams=" + ",".join(h for h in (recipe.get("tiny", TINY_HPARAMS),
                                                 recipe.get("hparams", "")) if h),
             "--output_dir=" + out_dir]
    argv = {
        "datagen": ["-m", "t2t.bin.t2t_datagen", "--tmp_dir=" + tmp_dir] + common,
        "trainer": ["-m", "t2t.bin.t2t_trainer", "--train_steps=%d" % train_steps,
                    "--eval_steps=1", "--local_eval_frequency=%d" % train_steps] + common + model,
        "decoder": ["-m", "t2t.bin.t2t_decoder", "--decode_from_file=" + decode_in,
                    "--decode_to_file=" + decode_out,
                    "--decode_hparams=beam_size=1,alpha=0.6,batch_size=4"] + common + model,
    }
    results = {}
    for step in STEPS:
        result = run_child([python] + argv[step], timeout, env=env, cwd=tmp_dir)
        error = result["error"]
        if not error and step == "decoder":
            lines = (open(decode_out, encoding="utf-8").read().splitlines()
                     if os.path.exists(decode_out) else [])
            if len(lines) != len(sources):
                error = "decoded %d lines for %d inputs" % (len(lines), len(sources))
        results[step] = {"ok": not error, "seconds": result["seconds"]}
        if error:
            results[step]["error"] = error
            break
    return results


# ---- one repo, all repos, the report ---------------------------------------------------

def strip_paths(text, *folders):
    """`text` with the given folders' paths cut (so results name files, not this machine):

        strip_paths("no module (/w/t2t/x.py)", "/w")  # "no module (t2t/x.py)"
    """
    for folder in folders:
        text = text.replace(folder.rstrip(os.sep) + os.sep, "")
    return text


def survey_repo(entry, args, work_root):
    source = os.path.join(args.survey_dir, entry["repo"].replace("/", "+"), entry["usr_dir"])
    record = {"repo": entry["repo"], "commit": entry["commit"], "usr_dir": entry["usr_dir"],
              "task": entry["task"]}
    if not os.path.isdir(source):
        record["error"] = "not checked out: no folder %s" % source
        return record
    work = tempfile.mkdtemp(prefix=entry["repo"].replace("/", "+") + "-", dir=work_root)
    usr_dir = copy_usr_dir(source, os.path.join(work, "usr"), entry.get("files"),
                           entry.get("init"))
    used, unparsed = scan_names(usr_dir)  # before porting: the names as T2T spelled them
    record["names_used"] = sorted(used)
    record["unparsed_files"] = unparsed
    tmp_dir, data_dir = os.path.join(work, "tmp"), os.path.join(work, "data")
    for folder in (tmp_dir, data_dir):
        os.makedirs(folder)
    recipe = entry.get("run") or {}
    if recipe:  # before the import: some user dirs list their data files at import time
        write_recipe_data(recipe, tmp_dir, data_dir,
                          checkout=os.path.join(args.survey_dir, entry["repo"].replace("/", "+")))
    port_error = port_dir(usr_dir, args.port, python=args.python)
    if port_error:
        record["import"] = {"ok": False, "error": port_error}
    else:
        env = {k: v.format(tmp_dir=tmp_dir, data_dir=data_dir)
               for k, v in recipe.get("env", {}).items()}
        record["import"] = import_in_child(usr_dir, args.python, args.import_timeout, env=env,
                                           cwd=tmp_dir)
    if not record["import"]["ok"]:
        record["import"]["error"] = strip_paths(record["import"]["error"], work, ROOT)
    if entry.get("run") and record["import"]["ok"]:
        record["run"] = run_steps(usr_dir, entry["run"], work, args.python, args.timeout,
                                  args.train_steps)
        for result in record["run"].values():
            if "error" in result:
                result["error"] = strip_paths(result["error"], work, ROOT)
    elif entry.get("run"):
        record["run"] = {"skipped": "the user dir does not import"}
    else:
        record["not_runnable"] = entry.get("not_runnable", "")
    return record


def totals(records, name_status):
    runnable = [r for r in records if isinstance(r.get("run"), dict) or r.get("runnable")]
    used = sorted({n for r in records for n in r.get("names_used", [])})
    missing = {n: why for n, why in name_status.items() if why}
    counts = {}
    for r in records:
        for n in r.get("names_used", []):
            if n in missing:
                counts[n] = counts.get(n, 0) + 1
    ranked = sorted(counts, key=lambda n: (-counts[n], n))
    # The same per T2T module: how many repos need something t2t lacks from it.
    module_repos, module_names = {}, {}
    for r in records:
        for module in {n.partition(":")[0] for n in r.get("names_used", []) if n in missing}:
            module_repos[module] = module_repos.get(module, 0) + 1
    for n in missing:
        module, _, attr = n.partition(":")
        module_names.setdefault(module, set())
        if attr:
            module_names[module].add(attr)
    modules = sorted(module_repos, key=lambda m: (-module_repos[m], m))
    end_to_end = [r for r in records
                  if all(r.get("run", {}).get(s, {}).get("ok") for s in STEPS)]
    per_step = {s: sum(1 for r in records if r.get("run", {}).get(s, {}).get("ok"))
                for s in STEPS}
    return {
        "repos": len(records),
        "import_ok": sum(1 for r in records if r.get("import", {}).get("ok")),
        "names_used": len(used),
        "names_present": len(used) - len(missing),
        "uses_per_repo_sum": sum(len(r.get("names_used", [])) for r in records),
        "uses_present_per_repo_sum": sum(1 for r in records for n in r.get("names_used", [])
                                         if n not in missing),
        "runnable": len(runnable),
        "steps_ok": per_step,
        "end_to_end": len(end_to_end),
        "missing_ranked": [{"name": n, "repos": counts[n], "why": missing[n]} for n in ranked],
        "missing_modules_ranked": [
            {"module": m, "repos": module_repos[m],
             "whole_module": missing.get(m) is not None or any(
                 missing[n].startswith("no module") for n in missing
                 if n.partition(":")[0] == m),
             "names": sorted(module_names[m])} for m in modules],
    }


def step_cell(record, step):
    run = record.get("run")
    if not isinstance(run, dict) or "skipped" in run:
        return "-" if not run else "skip"
    if step not in run:
        return ""
    return "ok" if run[step]["ok"] else "FAIL"


def print_table(records):
    header = ("repo", "task", "import", "names", "datagen", "trainer", "decoder")
    rows = []
    for r in records:
        used = r.get("names_used", [])
        present = len(used) - len(r.get("names_missing", []))
        rows.append((r["repo"], r["task"][:22], "ok" if r.get("import", {}).get("ok") else "FAIL",
                     "%d/%d" % (present, len(used))) + tuple(step_cell(r, s) for s in STEPS))
    widths = [max(len(str(row[i])) for row in rows + [header]) for i in range(len(header))]
    for row in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))


def run_key(port, today=None):
    """"<date>-<t2t commit>-<port mode>", the key this run's figures are stored under."""
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    return "%s-%s-%s" % (today or datetime.date.today().isoformat(), commit, port)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--survey_dir", required=True,
                        help="folder holding each repo's checkout as <owner>+<name>")
    parser.add_argument("--repos", default=DEFAULT_REPOS)
    parser.add_argument("--out", default=DEFAULT_OUT, help="results JSON ('' to write none)")
    parser.add_argument("--port", default="sed", choices=("sed", "none", "t2t-port"))
    parser.add_argument("--only", default="", help="comma-separated owner/name to survey")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per program run")
    parser.add_argument("--import_timeout", type=int, default=180)
    parser.add_argument("--train_steps", type=int, default=5)
    parser.add_argument("--key", default="", help="run key (default <date>-<commit>-<port>)")
    args = parser.parse_args(argv)
    with open(args.repos, encoding="utf-8") as f:
        entries = json.load(f)
    if args.only:
        wanted = set(args.only.split(","))
        entries = [e for e in entries if e["repo"] in wanted]
    records = []
    work_root = tempfile.mkdtemp(prefix="porting_survey-")
    try:
        for index, entry in enumerate(entries, 1):
            log("[%d/%d] %s (%s)" % (index, len(entries), entry["repo"], entry["task"]))
            record = survey_repo(entry, args, work_root)
            log("    import: %s" % ("ok" if record.get("import", {}).get("ok")
                                    else record.get("import", {}).get("error",
                                                                     record.get("error"))))
            for step, result in (record.get("run") or {}).items():
                if isinstance(result, dict):
                    log("    %s: %s (%.0f s)" % (step, "ok" if result["ok"] else result["error"],
                                                 result["seconds"]))
            records.append(record)
    finally:
        shutil.rmtree(work_root, ignore_errors=True)
    names = sorted({n for r in records for n in r.get("names_used", [])})
    status = check_names(names, args.python)
    for r in records:
        r["names_missing"] = [n for n in r.get("names_used", []) if status.get(n)]
    summary = totals(records, status)
    print_table(records)
    log("summary (%s): %d/%d import, %d/%d T2T names present, %d runnable, %d end to end"
        % (args.port, summary["import_ok"], summary["repos"], summary["names_present"],
           summary["names_used"], summary["runnable"], summary["end_to_end"]))
    if args.out:
        existing = {}
        if os.path.exists(args.out):
            with open(args.out, encoding="utf-8") as f:
                existing = json.load(f)
        existing.setdefault("runs", {})[args.key or run_key(args.port)] = {
            "port": args.port, "totals": summary, "repos": records}
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(existing, f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
