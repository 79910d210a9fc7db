"""T2T 1.15.7's own tests, run against t2t through the `tensor2tensor` import alias.

    PYTHONPATH=. .venv-3.13/bin/python bench/t2t_own_tests.py             # the in-scope files
    PYTHONPATH=. .venv-3.13/bin/python bench/t2t_own_tests.py layers/common_layers_test.py
    PYTHONPATH=. .venv-3.13/bin/python bench/t2t_own_tests.py --also      # + T2T's other tests
                                                                          #   of modules t2t has
    options: --wheel tensor2tensor-1.15.7-py2.py3-none-any.whl (no download), --t2t_repo
             GIT_DIR (a tensorflow/tensor2tensor clone: its tensor2tensor/test_data, which
             the wheel lacks, e.g. trainer_lib_test's hparams.json), --timeout 900
             (seconds per file), --memory_gb 8 (address space per file), --keep (keep the
             temporary folder), --json PATH (default bench/results/t2t_own_tests.json; "" = none)

The test files are never part of this repository: the tensor2tensor==1.15.7 wheel (it ships
its *_test.py files and data_generators/test_data) is fetched from the package index at run
time (`pip download --no-deps`) into a temporary folder, and the listed files are unpacked
there under their package paths (layers/, models/research/, ...), not as a `tensor2tensor`
package. A conftest.py written next to them installs t2t's alias
(`t2t.core.t2t_import_alias.install()`), so `from tensor2tensor.layers import common_layers`
is t2t's module, and runs each file as TF 1.15 ran it: graph mode (eager execution disabled)
unless the file turns eager on itself at the top (`tf.enable_eager_execution()`), with absl
flags parsed as `tf.test.main()` would. Each file is one `pytest --junitxml` subprocess,
under a timeout and an address-space limit. Prints per-file counts (passed, failed, errors,
skipped, or "does not import" with the reason) and a total, and writes the JSON with each
failing test's reason class (missing name X, TF1-only, numeric mismatch, ...).
"""
import argparse
import collections
import importlib.metadata
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # no TensorFlow noise
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
VERSION = "1.15.7"
DEFAULT_JSON = os.path.join(HERE, "results", "t2t_own_tests.json")

# Issue 47's scope: T2T's tests of the text models, layers, utils and text problems.
IN_SCOPE = (
    "layers/common_layers_test.py",
    "layers/common_attention_test.py",
    "layers/modalities_test.py",
    "models/transformer_test.py",
    "models/lstm_test.py",
    "models/basic_test.py",
    "models/evolved_transformer_test.py",
    "models/research/universal_transformer_test.py",
    "models/research/neural_stack_test.py",
    "models/research/transformer_aux_test.py",
    "models/bytenet_test.py",
    "models/neural_gpu_test.py",
    "utils/metrics_test.py",
    "utils/optimize_test.py",
    "utils/multistep_optimizer_test.py",
    "utils/rouge_test.py",
    "utils/t2t_model_test.py",
    "utils/trainer_lib_test.py",
    "utils/expert_utils_test.py",
    "data_generators/text_problems_test.py",
    "data_generators/translate_test.py",
    "data_generators/text_encoder_test.py",
    "data_generators/tokenizer_test.py",
    "data_generators/generator_utils_test.py",
    "data_generators/problem_test.py",
    # T2T's other text data_generators tests (lm1b, imdb, ... have none in 1.15.7).
    "data_generators/translate_ende_test.py",
    "data_generators/algorithmic_test.py",
    "data_generators/algorithmic_math_test.py",
    "data_generators/multi_problem_v2_test.py",
    "data_generators/paraphrase_ms_coco_test.py",
    "data_generators/transduction_problems_test.py",
    "data_generators/desc2code_test.py",
)
# --also: T2T's tests of other modules t2t has (beyond the scope).
ALSO = (
    "problems_test.py",
    "utils/beam_search_test.py",
    "utils/bleu_hook_test.py",
    "utils/data_reader_test.py",
    "utils/hparam_test.py",
    "utils/hparams_lib_test.py",
    "utils/misc_utils_test.py",
    "utils/multistep_with_adamoptimizer_test.py",
    "utils/registry_test.py",
    "utils/test_utils_test.py",
)

CONFTEST = '''"""Written by bench/t2t_own_tests.py: T2T's tests run against t2t, as TF 1.15 ran them."""
import importlib
import os
import sys
import types
import unittest
import unittest.mock

import tensorflow as tf
from absl import flags

from t2t.core import t2t_import_alias
from t2t.core.modes import ModeKeys

if os.environ.get("T2T_OWN_TESTS_EAGER") != "1":
    tf.compat.v1.disable_eager_execution()  # TF 1.x's default: graph mode
if not hasattr(tf.compat.v1, "estimator"):  # TF 2.16+: the tests' mode names only
    _estimator = types.ModuleType("tf.estimator, gone in TF 2.16+,")
    _estimator.ModeKeys = ModeKeys
    _v1 = importlib.import_module("tensorflow.compat.v1")  # the wrapper and what it wraps
    for _module in (_v1, getattr(_v1, "_tfmw_wrapped_module", None)):
        if _module is not None:
            _module.estimator = _estimator
STAND_INS = {stand_ins}
assert t2t_import_alias.install(), "a real tensor2tensor is installed"
try:
    import mock  # T2T's test dependency: the backport of unittest.mock
except ImportError:
    sys.modules["mock"] = unittest.mock


def _stand_in(name, why):
    """A module whose every use skips the test: `why` it is not there."""
    def skip(attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise unittest.SkipTest("%s is not available: %s" % (name, why))
    module = sys.modules[name] = types.ModuleType(name)
    module.__getattr__ = skip
    if "." in name:  # `from parent import child` asks the parent first
        parent, child = name.rsplit(".", 1)
        setattr(importlib.import_module(parent), child, module)


for _name, _why in STAND_INS.items():
    try:
        importlib.import_module(_name)
    except ImportError:
        _stand_in(_name, _why)
    else:  # the alias's own stand-in of a module t2t leaves out: its names fail, not skip
        if _name.split(".", 1)[1] in t2t_import_alias.LEFT_OUT:
            _stand_in(_name, _why)


def pytest_collection_finish(session):
    flags.FLAGS.mark_as_parsed()  # what tf.test.main() does before the tests run
'''
# Modules the test files import at the top that are not there (T2T's test dependencies
# for TF 1, T2T modules outside t2t's text scope, and those the alias serves as left out,
# `t2t_import_alias.LEFT_OUT`): stand-ins whose use skips the test, so the file's other
# tests run.
STAND_INS = {
    "kfac": "K-FAC, a T2T test dependency for TF 1 only",
    "tensor2tensor.data_generators.librispeech": "speech problems are outside t2t's scope",
    "tensor2tensor.data_generators.mnist": "image problems are outside t2t's scope",
}
# Reason classes, first match wins: (regex on the failure text, class; \\1 = the name).
REASONS = (
    (r"cannot import name '(\w+)'", r"missing name \1"),
    (r"No module named '((?:t2t|tensor2tensor)[\w.]*)'", r"missing module \1"),
    (r"has no attribute 'contrib'|tf\.contrib|tensorflow\.contrib", "TF1-only: tf.contrib"),
    (r"module '(?:t2t|tensor2tensor)[\w.]*' has no attribute '(\w+)'", r"missing name \1"),
    (r"module 'tensorflow[\w.]*' has no attribute 'estimator'", "TF 2.16+: no tf.estimator"),
    (r"module 'tensorflow[\w.]*' has no attribute '(\w+)'", r"TF1-only: tf.\1"),
    (r"Dataset' object has no attribute '(output_shapes|output_types|make_\w+_iterator)'",
     r"TF1-only: Dataset.\1 (a TF 1 dataset)"),
    (r"has no attribute '(_\w*tpu\w*)'", r"TPU-only: \1"),
    (r"module 'tf.estimator, gone in TF 2.16\+,' has no attribute '(\w+)'",
     r"TF 2.16+: no tf.estimator.\1"),
    (r"t2t has no ([\w.]+)", r"missing name \1"),
    (r"got an unexpected keyword argument '(\w+)'", r"signature: no argument \1"),
    (r"missing \d+ required positional argument", "signature: required argument"),
    (r"takes \d+ positional arguments? but \d+ (?:were|was) given", "signature: arguments"),
    (r"Hparam name '?(\w+)'? not found|has no attribute '(\w+)'.*HParams|HParams.*"
     r"has no attribute '(\w+)'", r"missing hparam \1\2\3"),
    (r"ConnectionError|Name or service not known|Network is unreachable",
     "needs the internet"),
    (r"placeholder\(\) is not compatible with eager|Session|session graph|"
     r"graph is finalized|not an element of this graph|Tensor\.graph is undefined|"
     r"eager execution|executing eagerly|tf\.function|symbolic Keras|KerasTensor",
     "TF1 session/graph vs TF2"),
    (r"[Ii]mage|[Vv]ideo|cifar|mnist|[Aa]udio", "image/video/audio (out of scope)"),
    (r"Not equal to tolerance|Arrays are not (?:almost )?equal|not almost equal|"
     r"Mismatched elements", "numeric mismatch"),
    (r"truth value of an array with more than one element",
     "per-example scores where T2T gave a scalar"),
    (r"has type \w+ that does not match type|expected dtype|dtype mismatch", "dtype mismatch"),
    (r"Shapes? .*(?:incompatible|must be equal|mismatch)|Cannot reshape|Dimensions must be "
     r"equal", "shape mismatch"),
    (r"AssertionError", "assertion"),
    (r"timed out", "timeout"),
)


def fetch_wheel(dest):
    """pip download tensor2tensor==VERSION --no-deps into `dest`; the wheel's path."""
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--no-cache-dir", "tensor2tensor==" + VERSION, "-d", dest],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wheels = [n for n in os.listdir(dest) if n.endswith(".whl")]
    if not wheels:
        sys.exit("pip download gave no tensor2tensor %s wheel in %s" % (VERSION, dest))
    return os.path.join(dest, wheels[0])


def unpack(wheel, files, dest):
    """The listed test files and T2T's test_data folders into `dest`, by package path."""
    prefix = "tensor2tensor/"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in names:
            rel = name[len(prefix):]
            if name.startswith(prefix) and (rel in files or "/test_data/" in rel):
                target = os.path.join(dest, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with archive.open(name) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
    with open(os.path.join(dest, "conftest.py"), "w") as f:
        f.write(CONFTEST.replace("{stand_ins}", repr(STAND_INS)))
    with open(os.path.join(dest, "pytest.ini"), "w") as f:  # not the repo's pytest config
        f.write("[pytest]\naddopts = -p no:cacheprovider\n")
    return [f for f in files if prefix + f not in names]


def unpack_repo_test_data(git_dir, dest):
    """tensor2tensor/test_data (not in the wheel: trainer_lib_test's hparams.json, ...) from
    a git clone of tensorflow/tensor2tensor into `dest`/test_data; absent blobs are left out."""
    git = ["git", "--git-dir", git_dir]
    names = subprocess.run(git + ["ls-tree", "-r", "--name-only", "HEAD",
                                  "tensor2tensor/test_data"], check=True, text=True,
                           capture_output=True).stdout.split()
    for name in names:
        blob = subprocess.run(git + ["cat-file", "blob", "HEAD:" + name], capture_output=True)
        if blob.returncode == 0:
            target = os.path.join(dest, name.split("/", 1)[1])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(blob.stdout)


def turns_eager_on(path):
    """True where the file calls tf.enable_eager_execution() at its top level."""
    with open(path) as f:
        return any(re.match(r"tf\.(compat\.v1\.)?enable_eager_execution\(\)", line)
                   for line in f)


def _limit_memory(gigabytes):
    def limit():
        size = int(gigabytes * 2 ** 30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return limit


def run_file(root, rel, timeout, memory_gb):
    """pytest on one file in a subprocess; (junit XML path or None, output, seconds)."""
    xml = os.path.join(root, rel.replace("/", "__") + ".xml")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (REPO, os.environ.get("PYTHONPATH")) if p),
        T2T_OWN_TESTS_EAGER="1" if turns_eager_on(os.path.join(root, rel)) else "0",
        TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    command = [sys.executable, "-m", "pytest", "-q", "--import-mode=importlib",
               "--rootdir", root, "-c", os.path.join(root, "pytest.ini"),
               "--junitxml", xml, "-o", "junit_family=xunit1", rel]
    start = time.time()
    try:
        done = subprocess.run(command, cwd=root, env=env, timeout=timeout, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              preexec_fn=_limit_memory(memory_gb))
        output = done.stdout
    except subprocess.TimeoutExpired as e:
        output = "timed out after %ds\n%s" % (timeout, e.stdout or "")
    return (xml if os.path.exists(xml) else None), output, time.time() - start


def _documented(name):
    """True where docs/t2t_differences.md names `name` (a name t2t left out on purpose)."""
    with open(os.path.join(REPO, "docs", "t2t_differences.md")) as f:
        return "`%s" % name in f.read()


def reason_class(text):
    """A one-line class for a failure's message and traceback."""
    for pattern, label in REASONS:
        match = re.search(pattern, text)
        if match:
            label = match.expand(label) if "\\" in label else label
            if label.startswith("missing name ") and _documented(label.split()[-1]):
                label += " (left out: docs/t2t_differences.md)"
            return label
    lines = [l for l in text.splitlines() if l.startswith("E ")]
    return (lines[-1][1:].strip() if lines else text.strip().split("\n")[-1])[:120]


def _error_line(text):
    """The exception line of a traceback (pytest's last `E   ...` line)."""
    lines = [l[1:].strip() for l in text.splitlines() if l.startswith("E ")]
    return (lines[-1] if lines else text.strip().splitlines()[-1] if text.strip()
            else "?")[:200]


def parse(xml, output):
    """Counts and failures of one file from its junit XML (or its output when none)."""
    result = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "failures": {}}
    if xml is None:
        if output.startswith("timed out"):
            result["timed_out"] = output.splitlines()[0]
        else:
            result["does_not_import"] = _error_line(output)
        return result
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = ".".join(filter(None, (case.get("classname", "").split(".")[-1],
                                      case.get("name"))))
        outcome = next((c for c in case if c.tag in ("failure", "error", "skipped")), None)
        if case.get("name") == "test_session" and outcome is not None:
            continue  # tf.test.TestCase's own helper, which pytest collects and skips
        if outcome is None:
            result["passed"] += 1
            continue
        text = (outcome.get("message") or "") + "\n" + (outcome.text or "")
        if outcome.tag == "skipped":
            result["skipped"] += 1
        elif not case.get("name") or "collection failure" in text or (
                outcome.tag == "error" and case.get("classname", "") == ""):
            result["does_not_import"] = _error_line(outcome.text or text)
        else:
            result["failed" if outcome.tag == "failure" else "errors"] += 1
            result["failures"][name] = reason_class(text)
    if not sum(result[k] for k in ("passed", "failed", "errors", "skipped")) and \
            "does_not_import" not in result:
        result["does_not_import"] = _error_line(output)
    return result


def summarize(results):
    total = collections.Counter()
    print("%-48s %6s %6s %6s %7s  %s" % ("file", "passed", "failed", "errors", "skipped",
                                          "note"))
    for rel, r in results.items():
        note = ("does not import: " + r["does_not_import"] if "does_not_import" in r
                else r.get("timed_out", ""))
        print("%-48s %6d %6d %6d %7d  %s" % (rel, r["passed"], r["failed"], r["errors"],
                                              r["skipped"], note[:110]))
        total.update({k: r[k] for k in ("passed", "failed", "errors", "skipped")})
        total["does_not_import"] += "does_not_import" in r
    print("%-48s %6d %6d %6d %7d  %d files do not import" % (
        "total (%d files)" % len(results), total["passed"], total["failed"],
        total["errors"], total["skipped"], total["does_not_import"]))
    reasons = collections.Counter(c for r in results.values() for c in r["failures"].values())
    for reason, count in reasons.most_common():
        print("  %4d  %s" % (count, reason))
    return dict(total)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="test files by package path (default: "
                        "the in-scope set)")
    parser.add_argument("--also", action="store_true", help="also T2T's other tests")
    parser.add_argument("--wheel", help="a local tensor2tensor-%s wheel" % VERSION)
    parser.add_argument("--t2t_repo", help="git dir of a tensorflow/tensor2tensor clone: "
                        "its tensor2tensor/test_data, which the wheel lacks")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per file")
    parser.add_argument("--memory_gb", type=float, default=8, help="address space per file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--json", default=DEFAULT_JSON, help='results file ("" = none)')
    args = parser.parse_args(argv)
    files = list(args.files or IN_SCOPE + (ALSO if args.also else ()))
    unknown = [f for f in files if not f.endswith("_test.py")]
    if unknown:
        print("not a test file: %s (e.g. layers/common_layers_test.py)" % unknown[0],
              file=sys.stderr)
        return 2
    root = tempfile.mkdtemp(prefix="t2t_own_tests_")
    try:
        wheel = args.wheel or fetch_wheel(root)
        missing = unpack(wheel, files, root)
        if args.t2t_repo:
            unpack_repo_test_data(args.t2t_repo, root)
        results = collections.OrderedDict()
        for rel in files:
            if rel in missing:
                results[rel] = dict(parse(None, "not in the %s wheel" % VERSION))
                continue
            xml, output, seconds = run_file(root, rel, args.timeout, args.memory_gb)
            results[rel] = dict(parse(xml, output), seconds=round(seconds, 1))
            r = results[rel]
            print("%s: %d passed, %d failed, %d errors, %d skipped (%.0fs)%s" % (
                rel, r["passed"], r["failed"], r["errors"], r["skipped"], seconds,
                "; does not import: " + r["does_not_import"] if "does_not_import" in r
                else "; " + r["timed_out"] if "timed_out" in r else ""), flush=True)
        print()
        total = summarize(results)
        if args.json and args.files and os.path.exists(args.json):
            with open(args.json) as f:  # some files again: update their entries
                previous = json.load(f)["files"]
            results = collections.OrderedDict(
                (rel, results.get(rel, previous.get(rel))) for rel in
                list(previous) + [r for r in results if r not in previous])
            print("\nall files in %s:" % args.json)
            total = summarize(results)
        if args.json:
            report = {"tensor2tensor": VERSION, "python": sys.version.split()[0],
                      "tensorflow": importlib.metadata.version("tensorflow"),
                      "total": total, "files": results}
            from t2t.core import atomic_files
            with atomic_files.atomic_write(args.json, "w", "utf-8") as f:
                json.dump(report, f, indent=1, sort_keys=False)
                f.write("\n")
            print("wrote", args.json)
    finally:
        if args.keep:
            print("test folder kept:", root)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
