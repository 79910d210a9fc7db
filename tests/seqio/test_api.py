"""`from t2t import seqio` has seqio 0.0.20's public names and signatures.

tests/fixtures/seqio/seqio_0_0_20_api.json was recorded from seqio 0.0.20 itself
(make_signatures.py, run in a separate venv with seqio installed): every public class and
function of the top level and of preprocessors/utils/vocabularies/feature_converters/
dataset_providers, with parameter names, kinds and defaults.
"""
import importlib
import inspect
import json
import os

import pytest

from t2t import seqio

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "seqio",
                       "seqio_0_0_20_api.json")
API = json.load(open(FIXTURE))

# Not in t2t.seqio (PyGlove and Grain are not t2t dependencies).
MISSING = {"PyGloveTunableMixture"}
# Internal helpers seqio defines at module level that are not part of its API.
INTERNAL = {"DataSourceInterface", "DatasetFnCallable"}


def normalize(default):
    if default is None:
        return None
    return {"Split('train')": "'train'"}.get(default, default)


def signature_of(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    params = []
    for p in inspect.signature(target).parameters.values():
        if p.name == "self":
            continue
        default = None if p.default is p.empty else repr(p.default)
        if default and (" at 0x" in default or "functools.partial" in default or "<" in default):
            default = "<object>"
        params.append([p.name, str(p.kind), default])
    return params


def assert_same_signature(ours, theirs, where):
    ours = [[n, k, normalize(d)] for n, k, d in ours]
    theirs = [[n, k, normalize(d)] for n, k, d in theirs]
    assert ours == theirs, where


def test_top_level_names():
    missing = sorted(set(API["top_level"]) - set(dir(seqio)) - MISSING)
    assert missing == []


@pytest.mark.parametrize("name", sorted(set(API["top_level"]) - MISSING - INTERNAL))
def test_top_level_signatures(name):
    theirs = API["top_level"][name]
    obj = getattr(seqio, name)
    if theirs is None or not (inspect.isclass(obj) or inspect.isfunction(obj)):
        return
    assert_same_signature(signature_of(obj), theirs, name)


@pytest.mark.parametrize("module", sorted(API["modules"]))
def test_module_names_and_signatures(module):
    ours = importlib.import_module("t2t.seqio." + module)
    for name, theirs in sorted(API["modules"][module].items()):
        if name in MISSING or name in INTERNAL or name.startswith("_Grain"):
            continue
        assert hasattr(ours, name), "%s.%s" % (module, name)
        obj = getattr(ours, name)
        if theirs is not None and (inspect.isclass(obj) or inspect.isfunction(obj)):
            assert_same_signature(signature_of(obj), theirs, "%s.%s" % (module, name))


@pytest.mark.parametrize("method", sorted(API["methods"]))
def test_method_signatures(method):
    cls, name = method.split(".")
    assert_same_signature(signature_of(getattr(getattr(seqio, cls), name)),
                          API["methods"][method], method)


def test_no_jax_clu_or_pyglove():
    import sys
    assert not {"jax", "jaxlib", "clu", "pyglove"} & set(sys.modules)


def test_importing_seqio_loads_only_core_data_and_encoders():
    # A fresh interpreter: this test session has loaded every package already.
    import subprocess
    import sys
    code = ("import sys; from t2t import seqio; "
            "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('t2t.')}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split("\n")[-2] == str(["core", "data", "encoders", "seqio"])


def test_the_t2t_problem_bridge_names_load_on_first_use():
    from t2t.seqio_training import problem_tasks
    assert seqio.add_t2t_problem_task is problem_tasks.add_t2t_problem_task
    assert seqio.t2t_problem_source is problem_tasks.t2t_problem_source
    assert {"add_t2t_problem_task", "t2t_problem_source"} <= set(dir(seqio))
    with pytest.raises(AttributeError, match="no attribute 'add_t2t_problem_tsk'"):
        seqio.add_t2t_problem_tsk
