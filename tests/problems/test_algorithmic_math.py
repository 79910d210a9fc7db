"""Symbolic math datasets: expression trees, solver, sympy targets, ids, problems."""
import os
import random

from hypothesis import given, settings, strategies as st
import pytest
import sympy
import tensorflow as tf

from t2t.core import registry
from t2t.data import generator_utils
from t2t.layers.modality_type import ModalityType
from t2t.problems import algorithmic_math as am


def _visible(directory):
    """The files of `directory` without hidden ones (the shard records of shard_check)."""
    return [name for name in os.listdir(directory) if not name.startswith(".")]


def _sym(text, functions=None):
    """Parse a dataset string with every letter a Symbol (L is log for integrals)."""
    for name, char in (functions or {}).items():
        text = text.replace(char, name)
    names = {c: sympy.Symbol(c) for c in set(text) if c.isalpha()}
    names["log"] = sympy.log
    return sympy.sympify(text, locals=names)


def _clear_sympy_caches():
    am._sympy_simplify.cache_clear()
    am._sympy_integrate.cache_clear()


def test_tokens_and_ids_are_shifted_past_pad_and_eos():
    cfg = am.math_dataset_init(2)
    assert cfg.vlist == ["a", "b"] and cfg.dlist == [] and cfg.flist == []
    assert cfg.int_encoder("a:b") == [11, 3, 12]
    assert cfg.int_encoder(":") != [1], "':' no longer collides with EOS"
    assert cfg.int_decoder([11, 3, 12, 1, 0]) == "a:b"
    tokens = am.math_tokens(8, digits=5, functions={"log": "L"})[0]
    assert tokens[:9] == ["_", ":", "(", ")", "=", "+", "-", "*", "/"]
    assert tokens[-6:] == ["0", "1", "2", "3", "4", "L"]
    encoder = am.MathCharEncoder(tokens)
    assert encoder.vocab_size == len(tokens) + 2
    with pytest.raises(ValueError, match="'9'"):
        encoder.encode("a+9")
    with pytest.raises(ValueError, match="alphabet_size"):
        am.math_dataset_init(53)
    with pytest.raises(ValueError, match="digits"):
        am.math_dataset_init(5, digits=11)
    with pytest.raises(ValueError, match="duplicate"):
        am.math_dataset_init(26, functions={"log": "a"})


def test_expression_printing_uses_needed_parentheses():
    ops = am.math_dataset_init(3).ops
    plus, minus, times, div = ops["+"], ops["-"], ops["*"], ops["/"]
    assert str(am.ExprNode("a", am.ExprNode("b", "c", plus), times)) == "a*(b+c)"
    assert str(am.ExprNode(am.ExprNode("a", "b", plus), "c", plus)) == "a+b+c"
    assert str(am.ExprNode("a", am.ExprNode("b", "c", plus), plus)) == "a+b+c"
    assert str(am.ExprNode("a", am.ExprNode("b", "c", minus), minus)) == "a-(b-c)"
    assert str(am.ExprNode("a", am.ExprNode("b", "c", times), div)) == "a/(b*c)"
    node = am.ExprNode(am.ExprNode("a", "b", times), "c", minus)
    assert node.depth == 2 and am.is_in_expr(node, "b") and not am.is_in_expr(node, "d")


@given(st.integers(0, 10**6), st.integers(0, 4))
@settings(max_examples=40, deadline=None)
def test_random_expr_depth_and_required_var(seed, depth):
    random.seed(seed)
    ops = list(am.math_dataset_init(4).ops.values())
    expr = am.random_expr(depth, ["a", "b"], ops)
    assert (expr.depth if isinstance(expr, am.ExprNode) else 0) == depth
    with_var = am.random_expr_with_required_var(depth, "x", ["a", "b"], ops)
    assert str(with_var).count("x") == 1
    assert (with_var.depth if isinstance(with_var, am.ExprNode) else 0) == depth


@given(st.integers(0, 10**6))
@settings(max_examples=60, deadline=None)
def test_algebra_inverse_solutions_satisfy_the_equation(seed):
    random.seed(seed)
    cfg = am.math_dataset_init(6)
    sample, target = am.generate_algebra_inverse_sample(
        cfg.vlist, list(cfg.ops.values()), cfg.solve_ops, 0, 3)
    var, equation = sample.split(":")
    left, right = equation.split("=")
    assert (left + right).count(var) == 1
    assert var not in target
    solution, difference = _sym(target), _sym(left) - _sym(right)
    if (solution.has(sympy.zoo, sympy.nan) or difference.has(sympy.zoo, sympy.nan) or
            sympy.Symbol(var) not in difference.free_symbols):
        # A degenerate equation with a zero factor such as (b-b), kept as in T2T.
        return
    assert sympy.simplify(difference.subs(sympy.Symbol(var), solution)) == 0


def test_algebra_inverse_solve_rejects_bad_equations():
    cfg = am.math_dataset_init(3)
    plus = cfg.ops["+"]
    with pytest.raises(ValueError, match="on both sides"):
        am.algebra_inverse_solve(am.ExprNode("a", "b", plus), "a", "a", cfg.solve_ops)
    with pytest.raises(ValueError, match="not present"):
        am.algebra_inverse_solve("b", "c", "a", cfg.solve_ops)
    assert str(am.algebra_inverse_solve(am.ExprNode("a", "b", plus), "c", "a",
                                        cfg.solve_ops)) == "c-b"


def test_simplify_and_integrate_targets_are_correct():
    _clear_sympy_caches()
    random.seed(21)
    cfg = am.math_dataset_init(8, digits=5, functions={"log": "L"})
    for case in am.algebra_simplify(8, 0, 2, 25):
        assert min(case["inputs"] + case["targets"]) >= 2
        source, target = cfg.int_decoder(case["inputs"]), cfg.int_decoder(case["targets"])
        assert sympy.simplify(_sym(source) - _sym(target)) == 0
    for case in am.calculus_integrate(8, 0, 2, 25):
        assert min(case["inputs"] + case["targets"]) >= 2
        var, expr = cfg.int_decoder(case["inputs"]).split(":")
        integral = _sym(cfg.int_decoder(case["targets"]), {"log": "L"})
        assert sympy.simplify(sympy.diff(integral, sympy.Symbol(var)) - _sym(expr)) == 0
    assert am.format_sympy_expr(sympy.log(sympy.Symbol("a")) + 1, {"log": "L"}) == "L(a)+1"
    with pytest.raises(ValueError, match="max_depth must be at least min_depth"):
        next(am.algebra_simplify(8, 3, 2, 1))
    with pytest.raises(ValueError, match="at most 26"):
        next(am.calculus_integrate(27, 0, 2, 1))


def _small(cls, train_size=12, dev_size=3, num_shards=2):
    return type("Small" + cls.__name__, (cls,), {
        "name": registry.Registries.problems.default_key(cls),
        "train_size": train_size, "dev_size": dev_size, "num_shards": num_shards})


def _records(path):
    return [{k: list(v.int64_list.value) for k, v in
             tf.train.Example.FromString(r).features.feature.items()}
            for r in generator_utils.read_records(path)]


@pytest.mark.parametrize("cls", [am.AlgorithmicAlgebraInverse, am.AlgorithmicAlgebraSimplify,
                                 am.AlgorithmicCalculusIntegrate])
def test_math_problems_write_shards_deterministically(tmp_path, cls):
    small = _small(cls)
    name = small.name
    _clear_sympy_caches()
    random.seed(1)
    small().generate_data(str(tmp_path / "a"), None)
    _clear_sympy_caches()
    random.seed(99)  # Tasks are seeded by name and task id, not by the global seed.
    for task_id in (2, 0, 1):
        small().generate_data(str(tmp_path / "b"), None, task_id=task_id)
    files = sorted(_visible(tmp_path / "a"))
    assert files == ["%s-dev-00000-of-00001" % name, "%s-train-00000-of-00002" % name,
                     "%s-train-00001-of-00002" % name]
    for f in files:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    p = small()
    encoder = p.get_feature_encoders()["inputs"]
    counts = {}
    for f in files:
        cases = _records(str(tmp_path / "a" / f))
        counts[f.split("-")[1]] = counts.get(f.split("-")[1], 0) + len(cases)
        for case in cases:
            for ids in (case["inputs"], case["targets"]):
                assert ids[-1] == 1 and min(ids[:-1]) >= 2 and max(ids) < encoder.vocab_size
                assert encoder.decode(ids)
    assert counts == {"train": 12, "dev": 3}
    hp = p.get_hparams()
    assert hp.vocab_size == {"inputs": encoder.vocab_size, "targets": encoder.vocab_size}
    assert hp.modality["targets"] == ModalityType.SYMBOL
    assert p.multiprocess_generate and p.num_generate_tasks == 3


def test_registered_math_problems_defaults():
    inverse = registry.problem("algorithmic_algebra_inverse")
    assert (inverse.train_size, inverse.dev_size, inverse.num_shards) == (100000, 10000, 10)
    assert inverse.get_hparams().vocab_size["inputs"] == 9 + 26 + 2
    simplify = registry.problem("algorithmic_algebra_simplify")
    assert simplify.get_hparams().vocab_size["inputs"] == 9 + 8 + 5 + 2
    integrate = registry.problem("algorithmic_calculus_integrate")
    assert integrate.get_hparams().vocab_size["inputs"] == 9 + 8 + 5 + 1 + 2
    assert (integrate.train_min_depth, integrate.train_max_depth,
            integrate.dev_min_depth, integrate.dev_max_depth) == (0, 2, 3, 3)
