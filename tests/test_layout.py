"""The architecture as the folders show it: packages depend on each other in one direction.

Every import statement of every module under t2t/ counts, at module level or inside a
function (a function-level import still makes one module need the other). Two checks:
- no cycle between modules (A imports B imports ... imports A);
- no cycle between packages, and each package imports only packages below it in LAYERS,
  so a new dependency that points upwards fails here with the edge named.
"""
import ast
import os

import pytest

import t2t

ROOT = os.path.dirname(os.path.abspath(t2t.__file__))

# Lowest first. A package may import packages listed before it, never after it.
LAYERS = [
    "core",        # registry, hparams, errors, progress, usr_dir, atomic files, downloads
    "encoders",    # text encoders, tokenizer, subword vocabulary builder
    "data",        # TFRecord writing, packing, input pipeline
    "layers",      # common layers, attention, modalities, common hparams
    "search",      # beam search, sampling
    "optim",       # optimizers, learning-rate schedules
    "evaluation",  # metrics, BLEU, ROUGE
    "tydiqa",      # TyDi QA: byte-exact pipeline, windows, records, official metrics
    "problems",    # Problem and the registered datasets
    "model",       # T2TModel and its specs, summaries, generic decoding
    "models",      # registered architectures
    "decoding",    # decoding from a dataset, a file or a prompt
    "training",    # run config, experiment, trainer_lib, checkpoint averaging
    "tuning",      # hyperparameter search on Optuna (trials are trainer runs)
    "datagen",     # t2t-datagen's library
    "serving",     # SavedModel export, in-graph vocabularies
    "seqio",       # SeqIO's API: tasks, mixtures, vocabularies, feature converters, T2T bridge
    "seqio_training",  # t2t models on SeqIO tasks: TaskProblem, checkpoint predict/score
    "hub",         # TF Hub text SavedModels (preprocessor, encoder, embedding)
    "bin",         # the programs and their flags
    "utils",       # T2T's module paths, re-exporting from the packages above
]


def module_files():
    for folder, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                yield (rel[:-len(".__init__")] if rel.endswith(".__init__") else rel), path


MODULES = dict(module_files())


def imports_of(module, path):
    """The t2t modules `module` imports (any statement, any depth of the file)."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    package = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names = [base] + [base + "." + alias.name for alias in node.names]
        else:
            continue
        for name in names:
            # `import t2t.a.b` needs t2t.a.b; a name imported from a module is that module.
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module and name != "t2t":
                found.add(name)
    return found


GRAPH = {module: imports_of(module, path) for module, path in MODULES.items()}


def package_of(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and module in PACKAGES) else "t2t"


PACKAGES = {m for m, p in MODULES.items() if p.endswith("__init__.py") and m.count(".") == 1}


def find_cycle(graph):
    """One cycle as a list of nodes [a, b, ..., a], or None."""
    state = {}
    stack = []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_no_import_cycle_between_modules():
    cycle = find_cycle(GRAPH)
    assert cycle is None, "modules import each other in a circle: " + " -> ".join(cycle)


def test_no_import_cycle_between_packages():
    packages = {}
    for module, targets in GRAPH.items():
        for target in targets:
            a, b = package_of(module), package_of(target)
            if a != b:
                packages.setdefault(a, set()).add(b)
    cycle = find_cycle(packages)
    assert cycle is None, "packages import each other in a circle: " + " -> ".join(cycle)


def test_every_package_is_in_a_layer():
    assert sorted(PACKAGES) == sorted("t2t." + name for name in LAYERS if "t2t." + name in PACKAGES)
    missing = sorted(p for p in PACKAGES if p.split(".")[1] not in LAYERS)
    assert not missing, "add these packages to LAYERS in %s: %s" % (__file__, missing)


def test_packages_import_only_downwards():
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = []
    for module, targets in sorted(GRAPH.items()):
        for target in sorted(targets):
            a, b = package_of(module), package_of(target)
            if a in rank and b in rank and rank[b] > rank[a]:
                upward.append("%s -> %s" % (module, target))
    assert not upward, "imports that point up the layers (%s): %s" % (
        " <- ".join(LAYERS), "; ".join(upward))


def test_library_code_does_not_import_the_t2t_compatibility_paths():
    # t2t.utils.X (and the shims in t2t.problems) exist for ported user code only.
    shims = {m for m, p in MODULES.items() if "sys.modules[__name__]" in open(p).read()}
    shims |= {"t2t.utils.metrics", "t2t.problems.text_problems", "t2t.problems.all_problems"}
    users = sorted("%s -> %s" % (m, t) for m, ts in GRAPH.items() for t in ts
                   if t in shims and not m.startswith("t2t.utils"))
    assert not users, "import the real home instead of the T2T path: " + "; ".join(users)


@pytest.mark.parametrize("graph,cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": set()}, None),
])
def test_find_cycle_finds_a_planted_cycle(graph, cycle):
    assert find_cycle(graph) == cycle
