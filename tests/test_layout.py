"""The architecture as the folders show it: packages depend on each other in one direction.

Every import statement of every module under t2t/ counts, at module level or inside a
function (a function-level import still makes one module need the other). Two checks:
- no cycle between modules (A imports B imports ... imports A);
- no cycle between packages, and each package imports only packages below it in LAYERS,
  so a new dependency that points upwards fails here with the edge named.
Two more, below what imports show:
- a name is imported from (or read as an attribute of) the module that defines it, never
  through a module that only re-exports it for ported T2T/seqio code;
- no `obj._name` read of a private name that only another package defines.
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
    "seqio",       # SeqIO's API: tasks, mixtures, vocabularies, feature converters, Evaluator
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
    "serving",     # SavedModel and CTranslate2 export, in-graph vocabularies
    "inference",   # t2t.load: trained models from Python (TensorFlow or CTranslate2 engines)
    "visualization",  # attention views of a Transformer (notebook, page)
    "seqio_training",  # t2t models on SeqIO: T2T problems as tasks, TaskProblem, predict/score
    "hub",         # TF Hub text SavedModels (preprocessor, encoder, embedding)
    "porting",     # t2t-port: T2T 1.x code to t2t (imports, TF 1.x calls, missing names)
    "server",      # t2t-serve: models over HTTP, batching across requests, metrics
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


# ----------------------------------------------------------------------------- names
def _top_level_names(path):
    """(names the module defines, {name: (module, original name)} it imports from t2t)."""
    defined, imported = set(), {}

    def scan(nodes):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined.update(n.id for t in targets for n in ast.walk(t)
                               if isinstance(n, ast.Name))
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for alias in node.names:
                    imported[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                scan(node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", []))
                for handler in getattr(node, "handlers", []):
                    scan(handler.body)

    scan(ast.parse(open(path, encoding="utf-8").read(), path).body)
    return defined, imported


NAMES = {module: _top_level_names(path) for module, path in MODULES.items()}
SHIMS = {m for m, p in MODULES.items() if "sys.modules[__name__]" in open(p).read()}


def re_export_home(module, name):
    """The module defining `name` when `module` only re-exports it; None otherwise."""
    defined, imported = NAMES[module]
    if name in defined or name not in imported or module + "." + name in MODULES:
        return None
    source, original = imported[name]
    if source + "." + original in MODULES or source not in MODULES:
        return None
    return re_export_home(source, original) or source


def reads_through_re_exports(module, path):
    """`from M import name` and `M.name` where M only re-exports name: "line: M.name -> home"."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    aliases = {}  # local name -> t2t module, for `from t2t.a import b` / `import t2t.a.b as b`
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module in MODULES:
            for alias in node.names:
                if node.module + "." + alias.name in MODULES:
                    aliases[alias.asname or alias.name] = node.module + "." + alias.name
                elif node.module != module:
                    home = re_export_home(node.module, alias.name)
                    if home:
                        found.append((node.lineno, node.module, alias.name, home))
        elif isinstance(node, ast.Import):
            aliases.update((a.asname, a.name) for a in node.names if a.asname and a.name in MODULES)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and aliases.get(node.value.id, module) != module):
            home = re_export_home(aliases[node.value.id], node.attr)
            if home and home != module:
                found.append((node.lineno, aliases[node.value.id], node.attr, home))
    return ["%s:%d: %s.%s (defined in %s)" % (path, *f) for f in sorted(found)]


def test_library_code_reads_names_from_their_home_module():
    # The re-exports stay for ported code (T2T's common_layers.shape_list, problem.DatasetSplit,
    # seqio's dataset_providers.TextLineDataSource, ...); t2t itself uses the real home.
    found = [line for module, path in sorted(MODULES.items())
             if not module.startswith("t2t.utils") and module not in SHIMS
             for line in reads_through_re_exports(module, path)]
    assert not found, "import these from the module that defines them:\n" + "\n".join(found)


def private_definitions():
    """private name -> the packages that define it (def, class, assignment, argument)."""
    owners = {}
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = node.name
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                name = node.attr
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                name = node.id
            elif isinstance(node, ast.alias):
                name = (node.asname or node.name).rpartition(".")[2]
            else:
                continue
            if name.startswith("_") and not name.startswith("__"):
                owners.setdefault(name, set()).add(package_of(module))
    return owners


def private_reads_across_packages(module, path, owners):
    """`obj._name` reads (obj not self/cls) of a private name only other packages define."""
    package = package_of(module)
    found = []
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
        if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)
                and node.attr.startswith("_") and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and owners.get(node.attr) and package not in owners[node.attr]):
            found.append("%s:%d: %s.%s (private to %s)" % (
                path, node.lineno, ast.unparse(node.value), node.attr,
                ", ".join(sorted(owners[node.attr]))))
    return found


def test_no_package_reads_another_packages_private_names():
    owners = private_definitions()
    found = [line for module, path in sorted(MODULES.items())
             for line in private_reads_across_packages(module, path, owners)]
    assert not found, "use (or add) a public name instead:\n" + "\n".join(found)


def test_the_name_rules_find_planted_reads(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("from t2t.layers import common_layers\n"
                       "from t2t.problems.problem import DatasetSplit\n"
                       "x = common_layers.shape_list, common_layers.dense\n"
                       "y = model._slow_decode_impl, self._own\n")
    assert reads_through_re_exports("t2t.bin.planted", str(planted)) == [
        "%s:2: t2t.problems.problem.DatasetSplit (defined in t2t.problems.spaces)" % planted,
        "%s:3: t2t.layers.common_layers.shape_list (defined in t2t.layers.shape_utils)" % planted]
    owners = {"_slow_decode_impl": {"model"}, "_own": {"model"}}
    assert private_reads_across_packages("t2t.bin.planted", str(planted), owners) == [
        "%s:4: model._slow_decode_impl (private to model)" % planted]


# ----------------------------------------------------------------------------- hparams.problem
# The problem rides on the hparams only for T2T's entry points; it is read in one place,
# `model_hparams.attached_problem`, and passed on as an argument. The one other reader:
# `create_evaluation_metrics` when a T2T caller does not say which multi-problem it trains.
PROBLEM_READERS = {"t2t.model.model_hparams", "t2t.evaluation.metric_ops"}


def _is_hparams(node):
    return ast.unparse(node).split(".")[-1].endswith("hparams")


def attached_problem_reads(path):
    """`hparams.problem` / `getattr(hparams, "problem", ...)` reads (any *hparams object)."""
    found = []
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
        if (isinstance(node, ast.Attribute) and node.attr == "problem"
                and isinstance(node.ctx, ast.Load) and _is_hparams(node.value)):
            found.append((node.lineno, ast.unparse(node)))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
              and _is_hparams(node.args[0]) and isinstance(node.args[1], ast.Constant)
              and node.args[1].value == "problem"):
            found.append((node.lineno, ast.unparse(node)))
    return ["%s:%d: %s" % (path, line, text) for line, text in sorted(found)]


def test_only_attached_problem_reads_the_problem_off_hparams():
    found = [line for module, path in sorted(MODULES.items()) if module not in PROBLEM_READERS
             for line in attached_problem_reads(path)]
    assert not found, ("take the problem as an argument, or read it once with "
                       "model_hparams.attached_problem at a T2T entry point:\n" + "\n".join(found))


def test_the_problem_rule_finds_planted_reads(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("a = hparams.problem.name\n"
                       "b = self._hparams.problem\n"
                       "c = getattr(model_hparams, 'problem', None)\n"
                       "d = model.problem, hparams.problem_hparams, registry.problem('x')\n")
    assert attached_problem_reads(str(planted)) == [
        "%s:1: hparams.problem" % planted, "%s:2: self._hparams.problem" % planted,
        "%s:3: getattr(model_hparams, 'problem', None)" % planted]


# --------------------------------------------------------------- one home for two chores
# Close-name suggestions are `registry.closest_names`' (the same suggestions for every
# typo); renames of files into place are `atomic_files`' (durable, remote-aware).
ONE_HOME_CALLS = {"get_close_matches": "t2t.core.registry", "replace": "t2t.core.atomic_files",
                  "rename": "t2t.core.atomic_files", "Rename": "t2t.core.atomic_files"}


def one_home_calls(path):
    """`difflib.get_close_matches(...)`, `os.replace/rename(...)`, `gfile.rename(...)` calls."""
    found = []
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ONE_HOME_CALLS
                and ast.unparse(node.func.value).split(".")[-1] in ("difflib", "os", "gfile")):
            found.append((node.lineno, node.func.attr, ast.unparse(node.func)))
    return [(attr, "%s:%d: %s" % (path, line, text)) for line, attr, text in sorted(found)]


def test_suggestions_and_renames_have_one_home():
    found = [line for module, path in sorted(MODULES.items())
             for attr, line in one_home_calls(path) if ONE_HOME_CALLS[attr] != module]
    assert not found, ("suggest names with registry.closest_names; rename files into place "
                       "with atomic_files (commit_file, move_into, atomic_output_path):\n"
                       + "\n".join(found))


def test_the_one_home_rule_finds_planted_calls(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("a = difflib.get_close_matches('x', ['y'])\n"
                       "os.replace('a', 'b')\n"
                       "tf.io.gfile.rename('a', 'b')\n"
                       "s = 'x'.replace('a', 'b')\n")
    assert [line for _, line in one_home_calls(str(planted))] == [
        "%s:1: difflib.get_close_matches" % planted, "%s:2: os.replace" % planted,
        "%s:3: tf.io.gfile.rename" % planted]


# ----------------------------------------------------------------------------- builtins
# Which packages may hold the modules each table of core/builtins.py imports by name.
BUILTIN_PACKAGES = {"problems": {"problems"}, "models": {"layers", "models"},
                    "optimizers": {"optim"}}
REGISTER_TO_TABLE = {"register_problem": "problems", "register_model": "models",
                     "register_hparams": "models", "register_ranged_hparams": "models",
                     "register_optimizer": "optimizers"}


def registrations(path):
    """The tables a module registers into: its uses of `registry.register_*` (decorators
    and calls)."""
    return {REGISTER_TO_TABLE[node.attr]
            for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path))
            if isinstance(node, ast.Attribute) and node.attr in REGISTER_TO_TABLE
            and isinstance(node.value, ast.Name) and node.value.id == "registry"}


def test_builtins_table_lists_every_registering_module_in_its_layer():
    # core/builtins.py imports these by name, which no import statement shows: each listed
    # module exists, registers into its table, and lives in a package that holds that kind;
    # every module that registers something is listed (else its names are never found).
    from t2t.core import builtins
    listed = {(table, m) for table, modules in builtins.BUILTIN_MODULES.items() for m in modules}
    assert set(builtins.BUILTIN_MODULES) == set(BUILTIN_PACKAGES)
    wrong = sorted("%s (%s)" % (m, table) for table, m in listed
                   if m not in MODULES or table not in registrations(MODULES[m])
                   or package_of(m) not in BUILTIN_PACKAGES[table])
    assert not wrong, "core/builtins.py lists modules that do not register there: %s" % wrong
    registering = {(table, m) for m, p in MODULES.items() if not m.startswith("t2t.utils")
                   for table in registrations(p)}
    missing = sorted("%s (%s)" % (m, table) for table, m in registering - listed)
    assert not missing, "add these to BUILTIN_MODULES in t2t/core/builtins.py: %s" % missing


@pytest.mark.parametrize("graph,cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": set()}, None),
])
def test_find_cycle_finds_a_planted_cycle(graph, cycle):
    assert find_cycle(graph) == cycle
