"""multi_problem_v2: schedules, interpolation, seeded draws, tagging, evaluation, rows."""
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t.core.hparam import HParams
from t2t.problems import multi_problem_v2 as mpv2
from t2t.problems import problem as problem_lib
from t2t.problems import text2text

WORDS = ["abc", "bca", "cab", "aab", "bba", "ccb", "acb", "bac"]
SPLITS = [{"split": "train", "shards": 1}, {"split": "eval", "shards": 1}]


class InMemory(problem_lib.Problem):
    """A problem whose examples are {"targets": [value] * length}, n of them."""

    def __init__(self, value, n=5, length=1):
        super().__init__()
        self.value, self.n, self.length = value, n, length

    def dataset(self, mode, **kwargs):
        return tf.data.Dataset.from_tensor_slices(
            {"targets": tf.fill([self.n, self.length], tf.constant(self.value, tf.int64))})


def drawn(dataset, n):
    return [int(x["problem_id"][0]) for x in dataset.take(n).as_numpy_iterator()]


# ----------------------------------------------------------------------------- schedules
@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["step", "linear"]),
       st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=4, unique=True),
       st.integers(1, 4), st.data())
def test_schedules_round_trip_through_strings(interpolation, steps, size, data):
    steps = sorted(steps)
    pmfs = [[data.draw(st.floats(0, 1, width=32)) for _ in range(size)] for _ in steps]
    schedule = (interpolation, mpv2.tuplize(steps), mpv2.tuplize(pmfs))
    assert mpv2.decode_schedule(mpv2.encode_schedule(schedule)) == schedule


def test_schedule_strings_and_pmf_helpers():
    assert mpv2.encode_schedule(("step", (0, 100), ((1.0, 0.0), (0.0, 1.0)))) == \
        "step @0 1.0 0.0 @100 0.0 1.0"
    assert mpv2.decode_schedule("linear @0 1 0 @5 0.5 0.5") == \
        ("linear", (0, 5), ((1.0, 0.0), (0.5, 0.5)))
    assert mpv2.tuplize([[1, 2], (3,), "ab"]) == ((1, 2), (3,), "ab")
    assert mpv2.constant_schedule([0.3, 0.7]) == ("step", (0,), ((0.3, 0.7),))
    assert mpv2.example_rates_to_pmf([1, 3]) == [0.25, 0.75]

    class Sized:
        def __init__(self, n):
            self.num_training_examples = n
    assert mpv2.epoch_rates_to_pmf([Sized(10), Sized(30)]) == [0.25, 0.75]
    assert mpv2.epoch_rates_to_pmf([Sized(10), Sized(30)], [3.0, 1.0]) == [0.5, 0.5]


# ----------------------------------------------------------------------------- interpolation
XP = np.array([0, 10, 30])
FP = np.array([[1.0, 0.0, 0.0], [0.2, 0.8, 0.0], [0.0, 0.5, 0.5]])
X = np.array([-5, 0, 3, 9, 10, 11, 29, 30, 31, 1000])


def test_linear_interpolation_is_np_interp_per_column():
    expected = np.stack([np.interp(X, XP, FP[:, j]) for j in range(3)], axis=-1)
    np.testing.assert_allclose(mpv2.linear_interpolation(tf.constant(X), XP, FP), expected,
                               rtol=1e-6)
    edges = mpv2.linear_interpolation(X, XP, FP, left=-1.0, right=2.0).numpy()
    np.testing.assert_allclose(edges[:, 0], np.interp(X, XP, FP[:, 0], left=-1.0, right=2.0))
    assert mpv2.linear_interpolation(7, XP, FP).shape == (3,)
    np.testing.assert_allclose(mpv2.linear_interpolation(X, [5], [[0.3, 0.7]]),
                               np.tile([[0.3, 0.7]], [len(X), 1]))
    with pytest.raises(ValueError, match="increasing"):
        mpv2.linear_interpolation(X, [0, 0], FP[:2])


def test_step_interpolation_holds_each_pmf_until_the_next_step():
    index = np.maximum(np.searchsorted(XP, X, side="right") - 1, 0)
    np.testing.assert_allclose(mpv2.step_interpolation(X, XP, FP), FP[index])
    assert mpv2.step_interpolation(X, XP, FP)[4].numpy().tolist() == pytest.approx([0.2, 0.8, 0])
    assert mpv2.step_interpolation(9, XP, FP).numpy().tolist() == [1.0, 0.0, 0.0]


def test_schedule_distribution_at_a_step():
    schedule = mpv2.decode_schedule("linear @0 1.0 0.0 @100 0.0 1.0")
    np.testing.assert_allclose(mpv2.get_schedule_distribution(schedule, 25), [0.75, 0.25])
    constant = mpv2.constant_schedule([0.3, 0.7])
    np.testing.assert_allclose(mpv2.get_schedule_distribution(constant), [0.3, 0.7])
    with pytest.raises(ValueError, match="needs global_step"):
        mpv2.get_schedule_distribution(schedule)
    with pytest.raises(ValueError, match="invalid interpolation 'cubic'"):
        mpv2.get_schedule_distribution(("cubic",) + schedule[1:], 3)


# ----------------------------------------------------------------------------- draws
def test_categorical_case_picks_the_interval_of_rand_and_follows_the_pmf():
    fns = [lambda i=i: tf.constant(i) for i in range(3)]
    pmf = tf.constant([0.2, 0.0, 0.8])
    assert [int(mpv2.categorical_case(pmf, fns, rand=r)) for r in (0.0, 0.19, 0.2, 0.99)] == \
        [0, 0, 2, 2]
    tf.random.set_seed(4)
    draws = tf.data.Dataset.range(300).map(lambda _: mpv2.categorical_case(pmf, fns))
    counts = np.bincount(list(draws.as_numpy_iterator()), minlength=3)
    assert counts[1] == 0 and abs(counts[0] / 300 - 0.2) < 0.07


def test_multi_dataset_proportions_and_seeds():
    datasets = [tf.data.Dataset.from_tensors(i).repeat(3) for i in range(3)]
    tf.random.set_seed(5)
    draws = list(mpv2.get_multi_dataset(datasets, [0.5, 0.3, 0.2]).take(300)
                 .as_numpy_iterator())
    np.testing.assert_allclose(np.bincount(draws) / 300, [0.5, 0.3, 0.2], atol=0.09)
    uniform = list(mpv2.get_multi_dataset(datasets).take(300).as_numpy_iterator())
    np.testing.assert_allclose(np.bincount(uniform) / 300, [1 / 3] * 3, atol=0.09)
    tf.random.set_seed(5)
    again = list(mpv2.get_multi_dataset(datasets, [0.5, 0.3, 0.2]).take(300)
                 .as_numpy_iterator())
    assert again == draws


def test_a_step_schedule_switches_at_its_count_of_examples_drawn():
    problem = mpv2.MultiProblemV2([InMemory(7), InMemory(8)],
                                  mpv2.decode_schedule("step @0 1.0 0.0 @30 0.0 1.0"))
    dataset = problem.dataset("train")
    examples = list(dataset.take(40).as_numpy_iterator())
    assert [int(x["problem_id"][0]) for x in examples] == [0] * 30 + [1] * 10
    assert [int(x["targets"][0]) for x in examples] == [7] * 30 + [8] * 10
    assert examples[0]["problem_id"].dtype == np.int32


def test_a_given_global_step_variable_is_read_at_each_draw():
    step = tf.Variable(0, dtype=tf.int64)
    problem = mpv2.MultiProblemV2([InMemory(7), InMemory(8)],
                                  mpv2.decode_schedule("step @0 1.0 0.0 @100 0.0 1.0"))
    iterator = iter(problem.dataset("train", global_step=step))
    assert [int(next(iterator)["problem_id"][0]) for _ in range(5)] == [0] * 5
    step.assign(100)
    after = [int(next(iterator)["problem_id"][0]) for _ in range(10)]
    # Draws already made ahead (tf.data's prefetch) keep the old step: a few (two on
    # TensorFlow 2.21, four on 2.15), then only the new one.
    switch = after.index(1)
    assert switch <= 4 and after[switch:] == [1] * (10 - switch)


def test_graph_mode_uses_the_global_step():
    with tf.Graph().as_default():
        problem = mpv2.MultiProblemV2([InMemory(7), InMemory(8)],
                                      mpv2.decode_schedule("step @0 1.0 0.0 @10 0.0 1.0"))
        iterator = tf.compat.v1.data.make_initializable_iterator(problem.dataset("train"))
        step = tf.compat.v1.train.get_global_step()
        next_id = iterator.get_next()["problem_id"]
        with tf.compat.v1.Session() as session:
            session.run([tf.compat.v1.global_variables_initializer(), iterator.initializer])
            assert [session.run(next_id)[0] for _ in range(3)] == [0, 0, 0]
            session.run(step.assign(10))
            after = [session.run(next_id)[0] for _ in range(6)]
            assert after[2:] == [1] * 4  # up to two drawn ahead at the old step



def test_graph_mode_datasets_have_tf1s_methods():
    # T2T-era code: multi_dataset.make_initializable_iterator(), dataset.output_shapes.
    with tf.Graph().as_default():
        datasets = [tf.data.Dataset.from_tensors({"x": [1]}),
                    tf.data.Dataset.from_tensors({"x": [2]})]
        mixed = mpv2.get_multi_dataset(datasets, [0.0, 1.0])
        assert mixed.output_shapes == {"x": tf.TensorShape([1])}
        iterator = mixed.batch(3).make_initializable_iterator()
        problem = mpv2.MultiProblemV2([InMemory(7, n=2), InMemory(8, n=3)],
                                      mpv2.constant_schedule([0.5, 0.5]))
        evaluation = problem.dataset("eval").make_one_shot_iterator().get_next()
        with tf.compat.v1.Session() as session:
            session.run(iterator.initializer)
            assert session.run(iterator.get_next())["x"].tolist() == [[2], [2], [2]]
            assert [session.run(evaluation)["problem_id"][0] for _ in range(4)] == [0, 1] * 2


def test_evaluation_alternates_endlessly_or_reads_the_first_problem():
    problems = [InMemory(7, n=2), InMemory(8, n=3)]
    problem = mpv2.MultiProblemV2(problems, mpv2.constant_schedule([0.5, 0.5]))
    assert drawn(problem.dataset("eval"), 12) == [0, 1] * 6  # repeated: more than 5

    class FirstOnly(mpv2.MultiProblemV2):
        only_eval_first_problem = True
    first = FirstOnly(problems, mpv2.constant_schedule([0.5, 0.5])).dataset("eval")
    assert drawn(first, 10) == [0, 0]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("mpv2"))
    problem = mpv2.MultiProblemV2([CharLmV2(), CharCopyV2()], mpv2.constant_schedule([1, 0]))
    problem.generate_data(folder, folder)
    return folder


def test_filepattern_and_generate_data_go_to_each_problem(data_dir):
    problem = mpv2.MultiProblemV2([CharLmV2(), CharCopyV2()], mpv2.constant_schedule([1, 0]))
    patterns = problem.filepattern(data_dir, "train")
    assert len(patterns) == 2 and all(tf.io.gfile.glob(p) for p in patterns)


# ----------------------------------------------------------------------------- text rows
def char_problem(base, name, sample):
    """An unregistered character-level problem (the registry would set `name`) whose
    train and eval splits each hold sample(0) ... sample(11)."""
    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        return (sample(i) for i in range(12))
    return type(name, (base,), {
        "name": name, "vocab_type": text2text.VocabType.CHARACTER, "dataset_splits": SPLITS,
        "is_generate_per_split": False, "generate_samples": generate_samples})


CharLmV2 = char_problem(text2text.Text2SelfProblem, "char_lm_v2", lambda i: {
    "targets": " ".join(WORDS[(i + k) % 8] for k in range(3))})
CharCopyV2 = char_problem(text2text.Text2TextProblem, "char_copy_v2", lambda i: {
    "inputs": WORDS[i % 8], "targets": WORDS[i % 8] * 3})


class LmRows(mpv2.MultiText2TextProblem):
    has_inputs = False
    vocab_type = text2text.VocabType.CHARACTER


def hparams(**values):
    defaults = dict(split_to_length=0, max_length=6, batch_size=4)
    return HParams(**dict(defaults, **values))


def test_text_rows_have_a_constant_length():
    rows = LmRows([], mpv2.constant_schedule([1.0]))
    example = {"inputs": tf.constant([5, 6, 1], tf.int64),
               "targets": tf.constant([7, 1], tf.int64)}
    assert rows.normalize_example(example, hparams())["targets"].numpy().tolist() == \
        [5, 6, 7, 1, 0, 0]
    long = {"targets": tf.range(1, 10, dtype=tf.int64)}
    assert rows.normalize_example(long, hparams())["targets"].numpy().tolist() == \
        [1, 2, 3, 4, 5, 6]
    pairs = mpv2.MultiText2TextProblem([], mpv2.constant_schedule([1.0]))
    pair = pairs.normalize_example({"inputs": tf.constant([5, 1], tf.int64),
                                    "targets": tf.constant([7, 8, 9, 1], tf.int64)},
                                   hparams(max_length=3))
    assert pair["inputs"].numpy().tolist() == [5, 1, 0]
    assert pair["targets"].numpy().tolist() == [7, 8, 9]


def test_packed_text_rows_get_segmentation_and_position():
    class Packed(mpv2.MultiText2TextProblem):
        packed_length = 4
    packed = Packed([], mpv2.constant_schedule([1.0]))
    row = packed.normalize_example({"inputs": tf.constant([5, 1], tf.int64),
                                    "targets": tf.constant([7, 8, 1], tf.int64)}, hparams())
    assert row["targets"].numpy().tolist() == [7, 8, 1, 0]
    assert row["targets_segmentation"].numpy().tolist() == [1, 1, 1, 0]
    assert row["targets_position"].numpy().tolist() == [0, 1, 2, 0]
    assert row["inputs_position"].numpy().tolist() == [0, 1, 0, 0]

    class PackedLm(Packed):
        has_inputs = False
    with pytest.raises(ValueError, match="packed examples cannot be concatenated"):
        PackedLm([], mpv2.constant_schedule([1.0])).normalize_example(
            {"inputs": tf.constant([5, 1], tf.int64), "targets": tf.constant([7], tf.int64)},
            hparams())


def test_text_problems_mix_into_tagged_constant_length_rows(data_dir):
    problem = LmRows([CharLmV2(), CharCopyV2()], mpv2.constant_schedule([0.5, 0.5]))
    tf.random.set_seed(2)
    rows = list(problem.dataset("train", hparams=hparams(max_length=8), data_dir=data_dir)
                .take(16).as_numpy_iterator())
    assert {r["targets"].shape for r in rows} == {(8,)}
    assert {int(r["problem_id"][0]) for r in rows} == {0, 1}
    assert all("inputs" not in r for r in rows)
    copy = next(r for r in rows if r["problem_id"][0] == 1)
    # The copy's inputs (3 characters, EOS dropped) come before its targets.
    assert copy["targets"][:3].tolist() == copy["targets"][3:6].tolist()


def test_shared_vocabulary_is_copied_to_each_problem(tmp_path):
    class Subwords(text2text.Text2TextProblem):
        vocab_type = text2text.VocabType.TOKEN

    class Shared(mpv2.MultiText2TextProblem):
        vocab_type = text2text.VocabType.TOKEN

    class Generated(Subwords):
        generated = []

        def generate_data(self, data_dir, tmp_dir, task_id=-1):
            self.generated.append(task_id)

    shared = Shared([Generated()], mpv2.constant_schedule([1.0]))
    with pytest.raises(ValueError, match="shared vocabulary .* does not exist"):
        shared.generate_data_with_shared_vocab(str(tmp_path), str(tmp_path))
    (tmp_path / shared.vocab_filename).write_text("a\nb\n")
    shared.generate_data_with_shared_vocab(str(tmp_path), str(tmp_path), task_id=3)
    assert (tmp_path / Generated().vocab_filename).read_text() == "a\nb\n"
    assert Generated.generated == [3]
