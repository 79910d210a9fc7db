"""Symbolic math datasets: solve for a variable, simplify, integrate.

Expressions are random trees over single-letter variables and + - * /:

    random.seed(3); str(random_expr(2, ["a", "b"], [ops["+"], ops["*"]]))  # e.g. "a*(b+a)"

* algebra inverse (rule-based, no sympy): "b:a+b=a*a" -> "a*a-a"
* algebra simplify (sympy.simplify):     "a*(b+b)"   -> "2*a*b"
* calculus integrate (sympy.integrate):  "a:a*b"     -> "a**2*b/2"

Texts are encoded one character per id. T2T's ids started at 0, so ":" (id 1)
was read as EOS; here every id is shifted past PAD=0 and EOS=1:

    cfg = math_dataset_init(2)   # tokens _ : ( ) = + - * / a b -> ids 2..12
    cfg.int_encoder("a:b")              # [11, 3, 12]
    cfg.int_decoder([11, 3, 12, 1])     # "a:b" (reserved ids are skipped)

Registered problems: algorithmic_algebra_inverse, algorithmic_algebra_simplify,
algorithmic_calculus_integrate (train: depth 0-2; dev: depth 3).
"""
import collections
import functools
import random

from absl import logging
import tensorflow as tf

from t2t.core.progress import Progress
from t2t.core import registry
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import algorithmic
from t2t.problems import problem
from t2t.problems import spaces


def _sympy():
    """sympy, imported on first use: it adds ~1.5 s to every program's start-up otherwise."""
    import sympy
    return sympy


class ExprOp:
    """An operation such as "+": its symbol, precedence and associativity."""

    def __init__(self, symbol, precedence, associative=False):
        self.symbol = symbol
        self.precedence = precedence
        self.associative = associative

    def __str__(self):
        return self.symbol

    def __repr__(self):
        return "ExprOp(%r)" % self.symbol

    def __eq__(self, other):
        return isinstance(other, ExprOp) and self.symbol == other.symbol

    def __hash__(self):
        return hash(self.symbol)


class ExprNode:
    """A node of an expression tree: an operator over two children (nodes or strings).

        str(ExprNode("a", ExprNode("b", "c", ops["+"]), ops["*"]))  # "a*(b+c)"
    """

    def __init__(self, left, right, op):
        self.left = left
        self.right = right
        self.op = op
        left_depth = left.depth if isinstance(left, ExprNode) else 0
        right_depth = right.depth if isinstance(right, ExprNode) else 0
        self.depth = max(left_depth, right_depth) + 1

    def __str__(self):
        left_parens = (isinstance(self.left, ExprNode) and
                       self.left.op.precedence < self.op.precedence)
        right_parens = (isinstance(self.right, ExprNode) and
                        self.right.op.precedence <= self.op.precedence and
                        not (self.op.associative and self.right.op == self.op))
        left = "(%s)" % self.left if left_parens else str(self.left)
        right = "(%s)" % self.right if right_parens else str(self.right)
        return left + str(self.op) + right

    def is_in(self, expr):
        """True if `expr` is this node or a subtree (leaves compare as strings)."""
        if expr == self:
            return True
        return is_in_expr(self.left, expr) or is_in_expr(self.right, expr)


def is_in_expr(expr, find):
    """True if `find` is `expr` or a subtree of it."""
    return expr == find or (isinstance(expr, ExprNode) and expr.is_in(find))


def random_expr_with_required_var(depth, required_var, optional_list, ops):
    """A random tree of `depth` in which `required_var` (if given) is exactly one leaf.

    Other leaves are drawn from `optional_list`; one leaf is `depth` levels down.
    """
    if not depth:
        if required_var:
            return required_var
        return str(optional_list[random.randrange(len(optional_list))])
    max_depth_side = random.randrange(2)
    other_side_depth = random.randrange(depth)
    required_var_side = random.randrange(2)
    left = random_expr_with_required_var(
        depth - 1 if max_depth_side else other_side_depth,
        required_var if required_var_side else None, optional_list, ops)
    right = random_expr_with_required_var(
        depth - 1 if not max_depth_side else other_side_depth,
        required_var if not required_var_side else None, optional_list, ops)
    op = ops[random.randrange(len(ops))]
    return ExprNode(left, right, op)


def random_expr(depth, vlist, ops):
    """A random tree of `depth` with leaves from `vlist` and operators from `ops`."""
    if not depth:
        return str(vlist[random.randrange(len(vlist))])
    max_depth_side = random.randrange(2)
    other_side_depth = random.randrange(depth)
    left = random_expr(depth - 1 if max_depth_side else other_side_depth, vlist, ops)
    right = random_expr(depth - 1 if not max_depth_side else other_side_depth, vlist, ops)
    op = ops[random.randrange(len(ops))]
    return ExprNode(left, right, op)


def algebra_inverse_solve(left, right, var, solve_ops):
    """The expression equal to `var` in left = right, by undoing one operation at a time.

    `var` must appear exactly once. `solve_ops` maps "<op>l" / "<op>r" (cancel the
    left / right operand of <op>) to fn(left, right, to_tree) -> (new_from, new_to):

        a+b = c, solving for a: "+l" gives (a, c-b)   -> "c-b"
    """
    is_in_left = is_in_expr(left, var)
    is_in_right = is_in_expr(right, var)
    if is_in_left == is_in_right:
        where = "on both sides" if is_in_left else "not present"
        raise ValueError("solve variable %r is %s in %s=%s; it must appear exactly once" %
                         (var, where, left, right))
    from_tree = left if is_in_left else right
    to_tree = right if is_in_left else left
    while from_tree != var:
        in_left = is_in_expr(from_tree.left, var)
        rule = str(from_tree.op) + ("l" if in_left else "r")
        from_tree, to_tree = solve_ops[rule](from_tree.left, from_tree.right, to_tree)
    return to_tree


def format_sympy_expr(sympy_expr, functions=None):
    """str(expr) without spaces, with function names replaced by their single chars.

        format_sympy_expr(sympy.sympify("log(a) + b"), {"log": "L"})  # "b+L(a)"
    """
    result = str(sympy_expr).replace(" ", "")
    for fn_name, char in (functions or {}).items():
        result = result.replace(fn_name, char)
    return result


def _symbols(text):
    # Explicit symbols, so that letters sympy knows as names (E, I, S, N, O, Q)
    # stay variables.
    return {c: _sympy().Symbol(c) for c in set(text) if c.isalpha()}


@functools.lru_cache(maxsize=65536)
def _sympy_simplify(expr_str):
    return _sympy().simplify(_sympy().sympify(expr_str, locals=_symbols(expr_str)))


@functools.lru_cache(maxsize=65536)
def _sympy_integrate(expr_str, var):
    symbols = _symbols(expr_str + var)
    return _sympy().integrate(_sympy().sympify(expr_str, locals=symbols), symbols[var])


def _is_finite(sympy_expr):
    return not sympy_expr.has(_sympy().zoo, _sympy().oo, -_sympy().oo, _sympy().nan)


def generate_algebra_inverse_sample(vlist, ops, solve_ops, min_depth, max_depth):
    """("x:left=right", solution): solve a random equation for one of its variables."""
    side = random.randrange(2)
    left_depth = random.randrange(min_depth if side else 0, max_depth + 1)
    right_depth = random.randrange(min_depth if not side else 0, max_depth + 1)
    var_index = random.randrange(len(vlist))
    var = vlist[var_index]
    consts = vlist[:var_index] + vlist[var_index + 1:]
    left = random_expr_with_required_var(left_depth, var if side else None, consts, ops)
    right = random_expr_with_required_var(right_depth, var if not side else None, consts, ops)
    target = str(algebra_inverse_solve(left, right, var, solve_ops))
    return "%s:%s=%s" % (var, left, right), target


def generate_algebra_simplify_sample(vlist, ops, min_depth, max_depth):
    """(expression, sympy.simplify of it) for a random expression."""
    depth = random.randrange(min_depth, max_depth + 1)
    sample = str(random_expr(depth, vlist, ops))
    return sample, format_sympy_expr(_sympy_simplify(sample))


def generate_calculus_integrate_sample(vlist, ops, min_depth, max_depth, functions):
    """("x:expression", its indefinite integral in x) for a random expression."""
    var_index = random.randrange(len(vlist))
    var = vlist[var_index]
    consts = vlist[:var_index] + vlist[var_index + 1:]
    depth = random.randrange(min_depth, max_depth + 1)
    expr_str = str(random_expr_with_required_var(depth, var, consts, ops))
    target = format_sympy_expr(_sympy_integrate(expr_str, var), functions=functions)
    return var + ":" + expr_str, target


# The objects needed to generate and encode the math datasets:
# vlist (variable chars), dlist (digit chars), flist (function chars), functions
# ({name: char}), ops ({symbol: ExprOp}), solve_ops (see algebra_inverse_solve),
# int_encoder (str -> ids) and int_decoder (ids -> str).
AlgebraConfig = collections.namedtuple("AlgebraConfig", [
    "vlist", "dlist", "flist", "functions", "ops", "solve_ops", "int_encoder", "int_decoder"])


def math_tokens(alphabet_size=26, digits=None, functions=None):
    """The character vocabulary, in T2T's order: "_", ":", "(", ")", "=", ops, vars, ...

    Raises ValueError for an alphabet_size outside [2, 52], digits outside [1, 10]
    or duplicated tokens.
    """
    if not 2 <= alphabet_size <= 52:
        raise ValueError("alphabet_size must be in [2, 52]; got %s" % alphabet_size)
    if digits is not None and not 1 <= digits <= 10:
        raise ValueError("digits must be in [1, 10]; got %s" % digits)
    alphabet = ([chr(ord("a") + c) for c in range(26)] +
                [chr(ord("A") + c) for c in range(26)])
    vlist = alphabet[:alphabet_size]
    dlist = [str(d) for d in range(digits)] if digits is not None else []
    flist = sorted((functions or {}).values())
    tokens = ["_", ":", "(", ")", "=", "+", "-", "*", "/"] + vlist + dlist + flist
    if len(tokens) != len(set(tokens)):
        raise ValueError("duplicate math tokens %s; function chars must differ from the "
                         "variables" % tokens)
    return tokens, vlist, dlist, flist


class MathCharEncoder(text_encoder.TextEncoder):
    """One id per character of the math vocabulary, shifted past PAD and EOS.

        enc = MathCharEncoder(math_tokens(2)[0])
        enc.encode("a:b")        # [11, 3, 12]
        enc.decode([11, 3, 12])  # "a:b"
        enc.vocab_size           # 13
    """

    def __init__(self, tokens):
        super().__init__(num_reserved_ids=text_encoder.NUM_RESERVED_TOKENS)
        self._tokens = list(tokens)
        self._ids = {t: i + text_encoder.NUM_RESERVED_TOKENS for i, t in enumerate(tokens)}

    def encode(self, s):
        try:
            return [self._ids[c] for c in s]
        except KeyError as error:
            raise ValueError("character %s of %r is not in the math vocabulary" %
                             (error, s)) from None

    def decode(self, ids, strip_extraneous=False):
        del strip_extraneous
        return "".join(self.decode_list(ids))

    def decode_list(self, ids):
        offset = text_encoder.NUM_RESERVED_TOKENS
        return [self._tokens[int(i) - offset] for i in ids
                if offset <= int(i) < offset + len(self._tokens)]

    @property
    def vocab_size(self):
        return len(self._tokens) + text_encoder.NUM_RESERVED_TOKENS


def math_dataset_init(alphabet_size=26, digits=None, functions=None):
    """The AlgebraConfig for a vocabulary of `alphabet_size` variables (a-z, then A-Z).

    Args:
      alphabet_size: number of variables, 2..52.
      digits: encode the digits "0".."digits-1" as tokens (None: no digits).
      functions: {name: char}, e.g. {"log": "L"}; chars must not be variables.
    """
    tokens, vlist, dlist, flist = math_tokens(alphabet_size, digits, functions)
    ops = {"+": ExprOp("+", 0, True), "-": ExprOp("-", 0, False),
           "*": ExprOp("*", 1, True), "/": ExprOp("/", 1, False)}
    solve_ops = {
        "+l": lambda l, r, to: (l, ExprNode(to, r, ops["-"])),
        "+r": lambda l, r, to: (r, ExprNode(to, l, ops["-"])),
        "-l": lambda l, r, to: (l, ExprNode(to, r, ops["+"])),
        "-r": lambda l, r, to: (r, ExprNode(l, to, ops["-"])),
        "*l": lambda l, r, to: (l, ExprNode(to, r, ops["/"])),
        "*r": lambda l, r, to: (r, ExprNode(to, l, ops["/"])),
        "/l": lambda l, r, to: (l, ExprNode(to, r, ops["*"])),
        "/r": lambda l, r, to: (r, ExprNode(l, to, ops["/"])),
    }
    encoder = MathCharEncoder(tokens)
    return AlgebraConfig(vlist=vlist, dlist=dlist, flist=flist, functions=functions or {},
                         ops=ops, solve_ops=solve_ops, int_encoder=encoder.encode,
                         int_decoder=encoder.decode)


def _check_depths(min_depth, max_depth):
    if max_depth < min_depth:
        raise ValueError("max_depth must be at least min_depth; got max_depth=%s, "
                         "min_depth=%s" % (max_depth, min_depth))


def _encoded_samples(sample_fn, alg_cfg, nbr_cases):
    """`nbr_cases` encoded samples; samples sympy cannot express in the vocabulary
    (digits past the range, Piecewise, infinities, errors) are drawn again."""
    done = 0
    while done < nbr_cases:
        try:
            sample, target = sample_fn()
            encoded = {"inputs": alg_cfg.int_encoder(sample),
                       "targets": alg_cfg.int_encoder(target)}
        except Exception:  # pylint: disable=broad-except
            # sympy raises many exception types on degenerate expressions (as T2T,
            # which used a bare except); such a sample is simply drawn again.
            continue
        done += 1
        yield encoded


def algebra_inverse(alphabet_size=26, min_depth=0, max_depth=2, nbr_cases=10000):
    """Yield {"inputs": ids of "x:left=right", "targets": ids of the solution for x}."""
    _check_depths(min_depth, max_depth)
    cfg = math_dataset_init(alphabet_size)
    ops = list(cfg.ops.values())
    return _encoded_samples(lambda: generate_algebra_inverse_sample(
        cfg.vlist, ops, cfg.solve_ops, min_depth, max_depth), cfg, nbr_cases)


def algebra_simplify(alphabet_size=26, min_depth=0, max_depth=2, nbr_cases=10000):
    """Yield {"inputs": ids of an expression, "targets": ids of its simplified form}."""
    _check_depths(min_depth, max_depth)
    cfg = math_dataset_init(alphabet_size, digits=5)
    ops = list(cfg.ops.values())

    def sample_fn():
        sample, target = generate_algebra_simplify_sample(cfg.vlist, ops, min_depth, max_depth)
        if not _is_finite(_sympy_simplify(sample)):
            raise ValueError("non-finite result")
        return sample, target

    return _encoded_samples(sample_fn, cfg, nbr_cases)


def calculus_integrate(alphabet_size=26, min_depth=0, max_depth=2, nbr_cases=10000):
    """Yield {"inputs": ids of "x:expression", "targets": ids of its integral in x}.

    Capital letters are function names, so alphabet_size is at most 26.
    """
    _check_depths(min_depth, max_depth)
    if alphabet_size > 26:
        raise ValueError("alphabet_size must be at most 26 for integration (capitals name "
                         "functions); got %s" % alphabet_size)
    functions = {"log": "L"}
    cfg = math_dataset_init(alphabet_size, digits=5, functions=functions)
    ops = list(cfg.ops.values())

    def sample_fn():
        sample, target = generate_calculus_integrate_sample(
            cfg.vlist, ops, min_depth, max_depth, cfg.functions)
        var, expr_str = sample.split(":", 1)
        if not _is_finite(_sympy_integrate(expr_str, var)):
            raise ValueError("non-finite result")
        return sample, target

    return _encoded_samples(sample_fn, cfg, nbr_cases)


class AlgorithmicMathProblem(problem.Problem):
    """Base of the math problems: character vocabulary, 10 train shards, 1 dev shard.

    Generation is split into `num_generate_tasks` tasks (one per shard), each
    seeded by the problem name and task id, because sympy is slow.
    """
    alphabet_size = 26
    digits = None
    functions = None

    def math_generator(self, alphabet_size, min_depth, max_depth, nbr_cases):
        """Yield encoded {"inputs", "targets"} samples (without EOS)."""
        raise NotImplementedError()

    train_min_depth, train_max_depth = 0, 2
    dev_min_depth, dev_max_depth = 3, 3

    @property
    def train_size(self):
        return 100000

    @property
    def dev_size(self):
        return 10000

    @property
    def num_shards(self):
        return 10

    @property
    def multiprocess_generate(self):
        return True

    @property
    def num_generate_tasks(self):
        return self.num_shards + 1

    def prepare_to_generate(self, data_dir, tmp_dir):
        del tmp_dir
        tf.io.gfile.makedirs(data_dir)

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        """Write every shard, or only task `task_id`'s (train shards, then dev)."""
        del tmp_dir
        tf.io.gfile.makedirs(data_dir)
        task_ids = range(self.num_generate_tasks) if task_id < 0 else [task_id]
        for task in task_ids:
            self._generate_task(data_dir, task)

    def _generate_task(self, data_dir, task_id):
        if not 0 <= task_id < self.num_generate_tasks:
            raise ValueError("problem %s has tasks 0..%d; got task_id %d" %
                             (self.name, self.num_generate_tasks - 1, task_id))
        if task_id < self.num_shards:
            path = self.training_filepaths(data_dir, self.num_shards, shuffled=True)[task_id]
            depths = (self.train_min_depth, self.train_max_depth)
            size = algorithmic.split_evenly(self.train_size, self.num_shards, task_id)
        else:
            path = self.dev_filepaths(data_dir, 1, shuffled=True)[0]
            depths = (self.dev_min_depth, self.dev_max_depth)
            size = self.dev_size
        if tf.io.gfile.exists(path):
            return  # Written by an earlier run.
        progress = Progress("datagen %s task %d" % (self.name, task_id), total=size)
        cases = []
        with algorithmic.seeded_global_random(algorithmic.task_seed(self.dataset_filename(),
                                                                    task_id)):
            for case in self.math_generator(self.alphabet_size, depths[0], depths[1], size):
                cases.append({k: v + [text_encoder.EOS_ID] for k, v in case.items()})
                progress.update(1)
        progress.done()
        generator_utils.generate_files(iter(cases), [path])
        logging.info("wrote %d examples to %s", len(cases), path)

    def feature_encoders(self, data_dir):
        del data_dir
        encoder = MathCharEncoder(math_tokens(self.alphabet_size, self.digits,
                                              self.functions)[0])
        return {"inputs": encoder, "targets": encoder}

    def hparams(self, defaults, unused_model_hparams):
        p = defaults
        vocab_size = self._encoders["targets"].vocab_size
        p.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
        p.vocab_size = {"inputs": vocab_size, "targets": vocab_size}
        p.input_space_id = spaces.SpaceID.GENERIC
        p.target_space_id = spaces.SpaceID.GENERIC


@registry.register_problem
class AlgorithmicAlgebraInverse(AlgorithmicMathProblem):
    """Solve an equation for a variable: "b:a+b=a*a" -> "a*a-a" (26 variables)."""
    alphabet_size = 26

    def math_generator(self, alphabet_size, min_depth, max_depth, nbr_cases):
        return algebra_inverse(alphabet_size, min_depth, max_depth, nbr_cases)


class _SympyProblem(AlgorithmicMathProblem):
    """Smaller defaults than algebra inverse: sympy takes ~3 ms an example at depth
    0-2 and ~15 ms at depth 3, so 50k/2k examples take about 3 CPU minutes."""

    @property
    def train_size(self):
        return 50000

    @property
    def dev_size(self):
        return 2000


@registry.register_problem
class AlgorithmicAlgebraSimplify(_SympyProblem):
    """Simplify an expression with sympy: "a*(b+b)" -> "2*a*b" (8 variables, digits 0-4)."""
    alphabet_size = 8
    digits = 5

    def math_generator(self, alphabet_size, min_depth, max_depth, nbr_cases):
        return algebra_simplify(alphabet_size, min_depth, max_depth, nbr_cases)


@registry.register_problem
class AlgorithmicCalculusIntegrate(_SympyProblem):
    """Integrate an expression with sympy: "a:a*b" -> "a**2*b/2" (8 variables, log as L)."""
    alphabet_size = 8
    digits = 5
    functions = {"log": "L"}

    def math_generator(self, alphabet_size, min_depth, max_depth, nbr_cases):
        return calculus_integrate(alphabet_size, min_depth, max_depth, nbr_cases)
