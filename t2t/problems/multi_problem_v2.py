"""Mixing several problems by a sampling schedule (T2T's `multi_problem_v2`).

A schedule is a tuple (interpolation, steps, pmfs): at step steps[i] examples are drawn
from problem j with probability pmfs[i][j]. "step" interpolation jumps to pmfs[i] at
steps[i]; "linear" interpolation moves linearly between neighbouring points. Before the
first step the first pmf holds, after the last step the last one. As strings:

    "step @0 0.7 0.3"                 # 70% problem 0, 30% problem 1, always
    "step @0 1.0 0.0 @100 0.0 1.0"    # problem 0 for steps 0-99, then problem 1
    "linear @0 1.0 0.0 @100 0.0 1.0"  # from problem 0 to problem 1 over 100 steps

    problem = MultiProblemV2([lm, translate], decode_schedule("step @0 0.5 0.5"))
    dataset = problem.dataset("train", data_dir=data_dir)   # each example has problem_id

The step of the schedule is, in this order: the `global_step` given to `dataset` (a
variable is read at each draw); in graph mode (the Estimator) the graph's global step
(created if missing, as T2T did); otherwise (eager, the native backend) the number of
examples drawn before this one (so with batches of B examples, schedule steps are B
times the training steps). A step variable is read when tf.data draws, which may be one
or two examples ahead of the model. Draws are seeded: the same `tf.random.set_seed` gives
the same sequence of problems. The interpolation runs as TensorFlow ops inside tf.data.
"""
import functools
import os

import numpy as np
import tensorflow as tf

from t2t.data.tf1_datasets import tf1_dataset
from t2t.problems import multi_problem
from t2t.problems import problem
from t2t.problems import spaces
from t2t.problems import text2text

_DRAW_SEED = 3  # the op seed of the draws; the global seed makes them reproducible


class MultiProblemV2(problem.Problem):
    """Examples of several problems, drawn in training by a schedule (module docstring)."""

    def __init__(self, problems, schedule, **kwargs):
        """problems: a list of Problems; schedule: a schedule tuple (`decode_schedule`);
        kwargs: Problem's (was_reversed, was_copy)."""
        super().__init__(**kwargs)
        self.problems = problems
        self.schedule = schedule

    def filepattern(self, *args, **kwargs):
        """One file pattern per problem."""
        return [p.filepattern(*args, **kwargs) for p in self.problems]

    def generate_data(self, *args, **kwargs):
        """Generates each problem's data."""
        for p in self.problems:
            p.generate_data(*args, **kwargs)

    @property
    def only_eval_first_problem(self):
        """Evaluate on the first problem's examples only."""
        return False

    def normalize_example(self, example, hparams):
        """Makes the problems' examples alike before they are mixed (here: unchanged)."""
        del hparams
        return example

    def dataset(self, mode, hparams=None, global_step=None, **kwargs):
        """The problems' examples, each tagged with "problem_id" ([i], int32).

        TRAIN: an endless draw by the schedule at the step (module docstring). Otherwise
        the first problem's examples (`only_eval_first_problem`) or, as in T2T, one example
        of each problem in turn from the problems' repeated datasets: endless, so
        evaluation must limit its steps. kwargs go to each problem's `dataset`.
        """
        datasets = [
            p.dataset(mode, **kwargs).map(
                lambda x, i=i: self.normalize_example(dict(x, problem_id=tf.constant([i])),
                                                      hparams))
            for i, p in enumerate(self.problems)]
        if mode == spaces.DatasetSplit.TRAIN:
            if global_step is None and not tf.executing_eagerly():
                global_step = tf.compat.v1.train.get_or_create_global_step()
            if global_step is None:  # eager: the count of examples drawn
                pmf = functools.partial(get_schedule_distribution, self.schedule)
            else:
                pmf = lambda _: get_schedule_distribution(self.schedule, global_step)
            return get_multi_dataset(datasets, pmf)
        if self.only_eval_first_problem:
            return datasets[0]
        datasets = tuple(d.repeat() for d in datasets)
        return tf1_dataset(tf.data.Dataset.zip(datasets).flat_map(
            multi_problem.flatten_zip_dataset))


class MultiText2TextProblem(MultiProblemV2, text2text.Text2TextProblem):
    """Text-to-text problems mixed by a schedule; every feature is cut or padded to
    `max_length(hparams)`, so that the problems' examples batch together."""

    def normalize_example(self, example, hparams):
        """Features to the constant length max_length(hparams). Without `has_inputs`, an
        example's inputs (EOS dropped) are put before its targets.

            # max_length 4, has_inputs False: {"inputs": [5, 1], "targets": [6, 7, 1]}
            # -> {"targets": [5, 6, 7, 1]}
        With `packed_length`, also the "_segmentation" and "_position" features (computed
        from the non-zero ids when an example has none).
        """
        length = self.max_length(hparams)

        def constant_length(tensor):
            tensor = tensor[:length]
            tensor = tf.pad(tensor, [(0, length - tf.shape(tensor)[0])])
            return tf.reshape(tensor, [length])

        if self.has_inputs:
            example["inputs"] = constant_length(example["inputs"])
            example["targets"] = constant_length(example["targets"])
        elif "inputs" in example:
            if self.packed_length:
                raise ValueError("%s: packed examples cannot be concatenated on the fly; "
                                 "set has_inputs or unset packed_length" % self.name)
            inputs = example.pop("inputs")[:-1]  # the EOS
            example["targets"] = constant_length(tf.concat([inputs, example["targets"]], 0))
        else:
            example["targets"] = constant_length(example["targets"])
        if self.packed_length:
            for name in ("inputs", "targets") if self.has_inputs else ("targets",):
                if name + "_segmentation" in example:
                    for part in ("_segmentation", "_position"):
                        example[name + part] = constant_length(example[name + part])
                else:
                    segmentation = tf.cast(tf.not_equal(example[name], 0), tf.int64)
                    example[name + "_segmentation"] = segmentation
                    example[name + "_position"] = segmentation * tf.range(length,
                                                                          dtype=tf.int64)
        return example

    def generate_data_with_shared_vocab(self, data_dir, tmp_dir, task_id=-1):
        """Generates each problem's data with this problem's vocabulary file (copied to
        each problem's vocabulary file name first)."""
        shared = os.path.join(data_dir, self.vocab_filename)
        if not tf.io.gfile.exists(shared):
            raise ValueError("the shared vocabulary %s does not exist; build it first (e.g. "
                             "with t2t-datagen on one problem)" % shared)
        for p in self.problems:
            local = os.path.join(data_dir, p.vocab_filename)
            if not tf.io.gfile.exists(local):
                tf.io.gfile.copy(shared, local)
            p.generate_data(data_dir, tmp_dir, task_id)

    @property
    def packed_length(self):
        """A positive length if some of the problems are packed."""
        return None


def get_multi_dataset(datasets, pmf=None):
    """An endless dataset drawing each example from datasets[i] with probability pmf[i].

    pmf: None (uniform), a [len(datasets)] list or tensor, or a function of the draw's
    index n (int64, 0 for the first example) returning that pmf. Each dataset is repeated.
    The draws are seeded (the global seed). Built with tf.data's choose_from_datasets.

        get_multi_dataset([ds_a, ds_b], [0.9, 0.1])   # ~9 of 10 examples from ds_a
    """
    if pmf is None:
        pmf = [1.0 / len(datasets)] * len(datasets)
    pmf_at = pmf if callable(pmf) else (lambda _: pmf)
    branches = [lambda i=i: tf.constant(i, tf.int64) for i in range(len(datasets))]

    def draw(n):
        return categorical_case(pmf_at(n), branches,
                                rand=tf.random.uniform([], seed=_DRAW_SEED))

    choices = tf.data.Dataset.range(2 ** 62).map(draw)
    return multi_problem._choose([d.repeat() for d in datasets], choices)


def get_schedule_distribution(schedule, global_step=None):
    """The pmf (float32 [M]) of a schedule at global_step (graph mode: the global step if
    None, created if missing; eager needs a step).

        get_schedule_distribution(("linear", (0, 10), ((1.0, 0.0), (0.0, 1.0))), 5)
        # [0.5, 0.5]
    """
    interpolation, steps, pmfs = schedule
    if len(pmfs) == 1:
        return tf.constant(pmfs[0], tf.float32)
    if global_step is None:
        if tf.executing_eagerly():
            raise ValueError("get_schedule_distribution needs global_step when executing "
                             "eagerly (there is no graph global step)")
        global_step = tf.compat.v1.train.get_or_create_global_step()
    if interpolation == "step":
        interpolation_fn = step_interpolation
    elif interpolation == "linear":
        interpolation_fn = linear_interpolation
    else:
        raise ValueError("invalid interpolation %r in the schedule; use 'step' or 'linear'"
                         % (interpolation,))
    return tf.reshape(interpolation_fn(global_step, np.array(steps), np.array(pmfs)),
                      [len(pmfs[0])])


def categorical_case(pmf, fns, rand=None):
    """The output of fns[i] with probability pmf[i]: fns[i] runs when rand (uniform in
    [0, 1), drawn if None) falls in [sum(pmf[:i]), sum(pmf[:i + 1]))."""
    rand = tf.random.uniform([]) if rand is None else rand
    cmf = tf.pad(tf.cumsum(tf.cast(pmf, tf.float32)), [(1, 0)])
    cmf = [cmf[i] for i in range(len(fns) + 1)]
    preds = [(rand >= low) & (rand < high) for low, high in zip(cmf[:-1], cmf[1:])]
    return tf.case(list(zip(preds, fns)), exclusive=True)


def _as_points(x, xp, fp):
    """x as float64 [K], xp as float64 [D], fp as float64 [D, M], the output shape."""
    x = tf.cast(x, tf.float64)
    xp = np.asarray(xp, np.float64)
    fp = np.asarray(fp, np.float64)
    if np.any(np.diff(xp) <= 0):
        raise ValueError("xp must be increasing, got %s" % (xp.tolist(),))
    out_shape = tf.concat([tf.shape(x), tf.constant(fp.shape[1:], tf.int32)], 0)
    return tf.reshape(x, [-1]), xp, fp.reshape([fp.shape[0], -1]), out_shape


def _interval(x, xp):
    """The index i of the interval xp[i] <= x < xp[i + 1] (-1 before xp[0])."""
    return tf.searchsorted(tf.constant(xp)[None], x[None], side="right")[0] - 1


def linear_interpolation(x, xp, fp, **kwargs):
    """np.interp on each column of fp, as TensorFlow ops: x [*N], xp [D] increasing,
    fp [D, *M] -> float32 [*N, *M]; kwargs `left`/`right` as np.interp's.

        linear_interpolation(5, [0, 10], [[1.0, 0.0], [0.0, 1.0]])   # [0.5, 0.5]
    """
    unknown = set(kwargs) - {"left", "right"}
    if unknown:
        raise ValueError("linear_interpolation takes left= and right=, not %s"
                         % sorted(unknown))
    x, xp, fp, out_shape = _as_points(x, xp, fp)
    if len(xp) == 1:
        y = tf.tile(tf.constant(fp), [tf.size(x), 1])
    else:
        low = tf.clip_by_value(_interval(x, xp), 0, len(xp) - 2)
        x0, x1 = tf.gather(xp, low), tf.gather(xp, low + 1)
        t = tf.clip_by_value((x - x0) / (x1 - x0), 0.0, 1.0)[:, None]
        y = tf.gather(fp, low) * (1.0 - t) + tf.gather(fp, low + 1) * t
    for name, outside in (("left", x < xp[0]), ("right", x > xp[-1])):
        if kwargs.get(name) is not None:
            y = tf.where(outside[:, None], tf.cast(kwargs[name], tf.float64), y)
    return tf.cast(tf.reshape(y, out_shape), tf.float32)


def step_interpolation(x, xp, fp, **kwargs):
    """The step interpolant, as TensorFlow ops: fp[i] for xp[i] <= x < xp[i + 1], fp[0]
    before xp[0], fp[-1] from xp[-1] on. x [*N], xp [D] increasing, fp [D, *M] ->
    float32 [*N, *M]; kwargs are unused.

        step_interpolation(10, [0, 10], [[1.0, 0.0], [0.0, 1.0]])   # [0.0, 1.0]
    """
    del kwargs
    x, xp, fp, out_shape = _as_points(x, xp, fp)
    index = tf.maximum(_interval(x, xp), 0)
    return tf.cast(tf.reshape(tf.gather(fp, index), out_shape), tf.float32)


def constant_schedule(pmf):
    """The schedule of one sampling distribution for all of training."""
    return ("step", (0,), (tuplize(pmf),))


def example_rates_to_pmf(example_rates):
    """Relative example rates -> a pmf: [1, 3] -> [0.25, 0.75]."""
    total = sum(example_rates)
    return [r / total for r in example_rates]


def epoch_rates_to_pmf(problems, epoch_rates=None):
    """A pmf drawing examples so that problem i goes through epoch_rates[i] epochs (all
    the same by default) in the same time; uses each problem's num_training_examples."""
    if epoch_rates is None:
        epoch_rates = [1.0] * len(problems)
    return example_rates_to_pmf([rate * p.num_training_examples
                                 for p, rate in zip(problems, epoch_rates)])


def encode_schedule(schedule):
    """A schedule tuple as a string: ("step", (0, 100), ((1.0, 0.0), (0.0, 1.0))) ->
    "step @0 1.0 0.0 @100 0.0 1.0"."""
    interpolation, steps, pmfs = schedule
    points = ("@%s %s" % (s, " ".join(map(str, p))) for s, p in zip(steps, pmfs))
    return interpolation + " " + " ".join(points)


def decode_schedule(string):
    """A schedule string (`encode_schedule`) as a tuple (interpolation, steps, pmfs)."""
    words = string.split()
    steps = [int(word[1:]) for word in words[1:] if word.startswith("@")]
    values = [float(word) for word in words[1:] if not word.startswith("@")]
    pmfs = np.reshape(values, [len(steps), -1])
    return words[0], tuplize(steps), tuplize(pmfs)


def tuplize(nested):
    """Nested iterables (not strings) as nested tuples: [[1, 2], (3,)] -> ((1, 2), (3,))."""
    if isinstance(nested, str):
        return nested
    try:
        return tuple(tuplize(item) for item in nested)
    except TypeError:
        return nested
