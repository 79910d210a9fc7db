"""Algorithmic problems: files on disk, values read back, hparams, determinism."""
import os
import random

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.data import generator_utils
from t2t.layers.modality_type import ModalityType
from t2t.problems import algorithmic
from t2t.problems import problem as problem_lib

TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL


def _visible(directory):
    """The files of `directory` without hidden ones (the shard records of shard_check)."""
    return [name for name in os.listdir(directory) if not name.startswith(".")]


def _small(base, name, train_size=60, dev_size=12, **extra):
    """A subclass of `base` with small sizes that writes files under `name`."""
    attrs = {"name": name, "train_size": train_size, "dev_size": dev_size}
    attrs.update(extra)
    return type("Small" + base.__name__, (base,), attrs)


def _records(path):
    """[{"inputs": [...], "targets": [...]}] of one TFRecord file."""
    cases = []
    for record in generator_utils.read_records(path):
        example = tf.train.Example.FromString(record)
        cases.append({k: list(v.int64_list.value) for k, v in example.features.feature.items()})
    return cases


def _all_records(data_dir, prefix):
    paths = sorted(os.path.join(data_dir, f) for f in os.listdir(data_dir) if f.startswith(prefix))
    return [case for path in paths for case in _records(path)]


def _unshift(ids):
    assert ids[-1] == 1, "EOS is appended"
    assert all(i >= 2 for i in ids[:-1]), "symbols are shifted past PAD and EOS"
    return [i - 2 for i in ids[:-1]]


def test_reverse_binary40_writes_ten_train_shards_and_one_dev_shard(tmp_path):
    random.seed(3)
    small = _small(algorithmic.AlgorithmicReverseBinary40, "algorithmic_reverse_binary40")
    small().generate_data(str(tmp_path), None)
    names = sorted(_visible(tmp_path))
    assert names == (["algorithmic_reverse_binary40-dev-00000-of-00001"] +
                     ["algorithmic_reverse_binary40-train-%05d-of-00010" % i for i in range(10)])
    train = _all_records(str(tmp_path), "algorithmic_reverse_binary40-train")
    dev = _all_records(str(tmp_path), "algorithmic_reverse_binary40-dev")
    assert (len(train), len(dev)) == (60, 12)
    # Round-robin: every shard holds 6 of the 60 examples.
    assert len(_records(str(tmp_path / names[1]))) == 6
    assert max(len(c["inputs"]) for c in train) <= 41
    assert all(set(_unshift(c["inputs"])) <= {0, 1} for c in train + dev)


def test_reverse_dataset_reads_back_reversed_targets(tmp_path):
    random.seed(4)
    small = _small(algorithmic.AlgorithmicReverseBinary40, "algorithmic_reverse_binary40")
    small().generate_data(str(tmp_path), None)
    for mode, count in ((TRAIN, 60), (EVAL, 12)):
        examples = list(small().dataset(mode, data_dir=str(tmp_path)).as_numpy_iterator())
        assert len(examples) == count
        for ex in examples:
            inputs, targets = ex["inputs"].tolist(), ex["targets"].tolist()
            assert ex["inputs"].dtype == np.int64
            assert targets == inputs[:-1][::-1] + [1]


def test_reverse_problem_rev_swaps_inputs_and_targets(tmp_path):
    random.seed(5)
    small = _small(algorithmic.AlgorithmicShiftDecimal40, "algorithmic_shift_decimal40")
    small().generate_data(str(tmp_path), None)
    forward = list(small().dataset(EVAL, data_dir=str(tmp_path)).as_numpy_iterator())
    reverse = list(small(was_reversed=True).dataset(EVAL, data_dir=str(tmp_path))
                   .as_numpy_iterator())
    for fwd, rev in zip(forward, reverse):
        assert rev["inputs"].tolist() == fwd["targets"].tolist()
        assert rev["targets"].tolist() == fwd["inputs"].tolist()
        # shift: every target symbol is its input symbol + 10.
        assert _unshift(fwd["targets"].tolist()) == [
            i + 10 for i in _unshift(fwd["inputs"].tolist())]
    hp = small(was_reversed=True).get_hparams()
    assert (hp.input_space_id, hp.target_space_id) == (problem_lib.SpaceID.DIGIT_1,
                                                     problem_lib.SpaceID.DIGIT_0)
    assert hp.was_reversed is True


@pytest.mark.parametrize("name,base,op", [
    ("algorithmic_addition_binary40", 2, lambda a, b: a + b),
    ("algorithmic_addition_decimal40", 10, lambda a, b: a + b),
    ("algorithmic_multiplication_binary40", 2, lambda a, b: a * b),
    ("algorithmic_multiplication_decimal40", 10, lambda a, b: a * b),
])
def test_addition_and_multiplication_values(tmp_path, name, base, op):
    random.seed(6)
    cls = type(registry.problem(name))
    _small(cls, name, train_size=40, dev_size=5)().generate_data(str(tmp_path), None)
    train = _all_records(str(tmp_path), name + "-train")
    dev = _all_records(str(tmp_path), name + "-dev")
    assert (len(train), len(dev)) == (40, 5)
    cases = train + dev
    for index, case in enumerate(cases):
        inputs, targets = _unshift(case["inputs"]), _unshift(case["targets"])
        assert inputs.count(base) == 1, "one separator symbol"
        sep = inputs.index(base)
        n1, n2 = inputs[:sep], inputs[sep + 1:]
        assert all(d < base for d in n1 + n2 + targets)
        value = op(algorithmic.lower_endian_to_number(n1, base),
                   algorithmic.lower_endian_to_number(n2, base))
        assert algorithmic.lower_endian_to_number(targets, base) == value
        assert targets == algorithmic.number_to_lower_endian(value, base)
        assert len(n1) + 1 + len(n2) <= (40 if index < len(train) else 400)
        assert n1[-1] != 0 or len(n1) == 1, "no leading zero (last little-endian digit)"
    # The separator (base) has an id inside the vocabulary.
    hp = registry.problem(name).get_hparams()
    assert max(max(c["inputs"]) for c in cases) < hp.vocab_size["inputs"]


def test_lower_endian_helpers():
    assert algorithmic.number_to_lower_endian(0, 10) == [0]
    assert algorithmic.number_to_lower_endian(21, 10) == [1, 2]
    assert algorithmic.number_to_lower_endian(6, 2) == [0, 1, 1]
    assert algorithmic.lower_endian_to_number([0, 1, 1], 2) == 6
    random.seed(0)
    for length in range(1, 8):
        digits = algorithmic.random_number_lower_endian(length, 10)
        assert len(algorithmic.number_to_lower_endian(
            algorithmic.lower_endian_to_number(digits, 10), 10)) == length


def test_get_hparams_values():
    hp = registry.problem("algorithmic_reverse_binary40").get_hparams()
    assert hp.modality == {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
    assert hp.vocab_size == {"inputs": 4, "targets": 4}
    assert (hp.input_space_id, hp.target_space_id) == (10, 11)
    assert (hp.loss_multiplier, hp.batch_size_multiplier, hp.stop_at_eos) == (1.0, 1, False)
    assert (hp.was_reversed, hp.was_copy) == (False, False)
    assert hp.vocabulary["inputs"].encode("0 1") == [2, 3]
    assert registry.problem("algorithmic_addition_decimal40").get_hparams().vocab_size == {
        "inputs": 13, "targets": 13}
    assert registry.problem("algorithmic_reverse_nlplike8k").get_hparams().vocab_size[
        "targets"] == 8002
    sort_problem = registry.problem("algorithmic_sort_problem")
    assert sort_problem.num_symbols == 20
    assert sort_problem.eval_metrics()[-1] == "edit_distance"
    vocab95 = registry.problem("algorithmic_identity_vocab95_train20_eval30")
    assert (vocab95.num_symbols, vocab95.train_length, vocab95.dev_length,
            vocab95.train_size) == (95, 20, 30, 1000000)
    test_problem = registry.problem("algorithmic_reverse_binary40_test")
    assert (test_problem.train_size, test_problem.dev_size, test_problem.num_shards) == (
        1000, 100, 1)


def test_same_seed_gives_byte_identical_files(tmp_path):
    small = _small(algorithmic.AlgorithmicSortProblem, "algorithmic_sort_problem")
    contents = []
    for run in ("a", "b", "c"):
        random.seed(11 if run != "c" else 12)
        out = tmp_path / run
        small().generate_data(str(out), None)
        contents.append({f: (out / f).read_bytes() for f in sorted(os.listdir(out))})
    assert contents[0] == contents[1]
    assert contents[0] != contents[2]
    for case in _all_records(str(tmp_path / "a"), "algorithmic_sort_problem"):
        assert _unshift(case["targets"]) == sorted(_unshift(case["inputs"]))


def test_nlplike_tasks_are_deterministic_in_any_order(tmp_path):
    small = _small(algorithmic.AlgorithmicReverseNlplike8k, "algorithmic_reverse_nlplike8k",
                   train_size=23, dev_size=4)
    p = small()
    assert p.multiprocess_generate and p.num_generate_tasks == 11
    random.seed(1)
    p.generate_data(str(tmp_path / "all"), None)  # task_id=-1: every task in turn
    random.seed(2)  # The global seed does not matter to task-split problems.
    for task_id in reversed(range(p.num_generate_tasks)):
        small().generate_data(str(tmp_path / "tasks"), None, task_id=task_id)
    files = sorted(_visible(tmp_path / "all"))
    assert files == sorted(_visible(tmp_path / "tasks"))
    assert len(files) == 11
    for f in files:
        assert (tmp_path / "all" / f).read_bytes() == (tmp_path / "tasks" / f).read_bytes()
    train = _all_records(str(tmp_path / "all"), "algorithmic_reverse_nlplike8k-train")
    assert len(train) == 23
    for case in train:
        inputs = _unshift(case["inputs"])
        assert _unshift(case["targets"]) == inputs[::-1]
        assert all(0 <= s < 8000 for s in inputs)
    with pytest.raises(ValueError, match="task_id 11"):
        p.generate_data(str(tmp_path / "x"), None, task_id=11)


def test_task_generation_keeps_global_random_state():
    state = random.getstate()
    with algorithmic.seeded_global_random(5):
        first = random.random()
    with algorithmic.seeded_global_random(5):
        assert random.random() == first
    assert random.getstate() == state


def test_zipf_sample_stays_in_range_and_favours_small_symbols():
    distr = algorithmic.zipf_distribution(50, 1.3)
    assert len(distr) == 51 and distr[0] == 0.0 and distr[-1] == pytest.approx(1.0)
    random.seed(0)
    sample = algorithmic.zipf_random_sample(distr, 20000)
    assert min(sample) >= 0 and max(sample) <= 49
    counts = np.bincount(sample, minlength=50)
    assert counts[0] > counts[1] > counts[5] > counts[40]
    expected_share = distr[1] - distr[0]
    assert abs(counts[0] / 20000 - expected_share) < 0.02


def test_tiny_algo_setup_for_test():
    tiny = registry.problem("tiny_algo")
    type(tiny).setup_for_test()
    data_dir = type(tiny).data_dir
    assert sorted(_visible(data_dir)) == ["tiny_algo-dev-00000-of-00001",
                                           "tiny_algo-train-00000-of-00001"]
    for name in _visible(data_dir):
        cases = _records(os.path.join(data_dir, name))
        assert len(cases) == 100
        for case in cases:
            assert _unshift(case["inputs"]) == _unshift(case["targets"])


def test_identity_and_unique_sort_generators():
    random.seed(9)
    identity = registry.problem("algorithmic_identity_decimal40")
    for case in identity.generator(10, 5, 20):
        assert case["inputs"] == case["targets"] and 1 <= len(case["inputs"]) <= 5
    unique_sort = type("UniqueSort", (algorithmic.AlgorithmicSortProblem,),
                       {"unique": True})()
    for case in unique_sort.generator(20, 20, 30):
        assert len(set(case["inputs"])) == len(case["inputs"])
        assert case["targets"] == sorted(case["inputs"])
    with pytest.raises(ValueError, match="at least 3"):
        next(registry.problem("algorithmic_addition_binary40").generator(2, 2, 1))


def test_rerun_that_regenerates_only_dev_gives_the_same_bytes(tmp_path):
    import random as random_module
    import numpy as np
    problem = _small(algorithmic.AlgorithmicReverseBinary40, "reverse_rerun", 200, 30)()

    def generate(data_dir):
        random_module.seed(5)
        np.random.seed(5)
        problem.generate_data(str(data_dir), str(tmp_path / "tmp"))
        return problem.dev_filepaths(str(data_dir), 1, shuffled=True)[0]

    dev_path = generate(tmp_path / "a")
    first = open(dev_path, "rb").read()
    os.remove(dev_path)
    assert open(generate(tmp_path / "a"), "rb").read() == first
