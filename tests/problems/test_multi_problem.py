"""MultiProblem: rows, task ids, mixing schedules, evaluation order, the loss, a trainer run."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.layers import common_layers
from t2t.layers import losses
from t2t.layers import modalities
from t2t.model import t2t_model
from t2t.problems import multi_problem
from t2t.problems import text2text

TRAINER = os.path.join(os.path.dirname(sys.executable), "t2t-trainer")
DATAGEN = os.path.join(os.path.dirname(sys.executable), "t2t-datagen")
DECODER = os.path.join(os.path.dirname(sys.executable), "t2t-decoder")

# Three character-level tasks: a language model, a reversal (inputs -> targets) and a
# two-class task. Defined in a module of their own so the trainer run imports the same code.
TASKS_SOURCE = '''
from t2t.problems import multi_problem, text2text
from t2t.utils import registry

WORDS = ["abc", "bca", "cab", "aab", "bba", "ccb", "acb", "bac"]
SPLITS = [{"split": "train", "shards": 1}, {"split": "eval", "shards": 1}]


class CharLm(text2text.Text2SelfProblem):
    vocab_type = text2text.VocabType.CHARACTER
    is_generate_per_split = False
    dataset_splits = SPLITS

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for i in range(40):
            yield {"targets": " ".join(WORDS[(i + k) % 8] for k in range(3))}


class CharReverse(text2text.Text2TextProblem):
    vocab_type = text2text.VocabType.CHARACTER
    is_generate_per_split = False
    dataset_splits = SPLITS

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for i in range(30):
            yield {"inputs": WORDS[i % 8], "targets": WORDS[i % 8][::-1]}


class CharClass(text2text.Text2ClassProblem):
    vocab_type = text2text.VocabType.CHARACTER
    is_generate_per_split = False
    dataset_splits = SPLITS
    num_classes = 2

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for i in range(20):
            yield {"inputs": WORDS[i % 8], "label": int(WORDS[i % 8][0] == "a")}


@registry.register_problem
class CharLmAndReverse(multi_problem.MultiProblem):
    def __init__(self, was_reversed=False, was_copy=False):
        super().__init__(was_reversed, was_copy)
        self.task_list.append(registry.problem("char_lm"))
        self.task_list.append(registry.problem("char_reverse"))

    @property
    def vocab_type(self):
        return text2text.VocabType.CHARACTER


registry.register_problem(CharLm)
registry.register_problem(CharReverse)
registry.register_problem(CharClass)
'''


@pytest.fixture(scope="module")
def usr_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mp") / "mp_usr"
    folder.mkdir()
    (folder / "__init__.py").write_text("from . import tasks  # noqa\n")
    (folder / "tasks.py").write_text(TASKS_SOURCE)
    return str(folder)


@pytest.fixture(scope="module")
def tasks(usr_dir):
    from t2t.core import usr_dir as usr_dir_lib
    return usr_dir_lib.import_usr_dir(usr_dir)


@pytest.fixture(scope="module")
def data_dir(tasks, tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("mp_data"))
    for name in ("char_lm", "char_reverse", "char_class"):
        registry.problem(name).generate_data(folder, folder)
    return folder


def model_hparams(**values):
    hp = registry.hparams("transformer_tiny")
    for name, value in values.items():
        setattr(hp, name, value)
    return hp


def rows(dataset, n=None):
    dataset = dataset if n is None else dataset.take(n)
    return [{k: v.tolist() for k, v in example.items()} for example in dataset.as_numpy_iterator()]


# ----------------------------------------------------------------------------- weights
def test_weights_pick_a_tasks_targets_inputs_and_rows():
    labels = tf.constant([[5, 6, 9, 7, 1, 0], [5, 8, 7, 1, 0, 0]])
    np.testing.assert_array_equal(losses.weights_multi_problem(labels, 9),
                                  [[0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(losses.weights_multi_problem_all(labels, 9),
                                  [[1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(losses.weights_multi_problem_input(labels, 9),
                                  [[1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(losses.weights_multi_problem_all(labels, 8),
                                  [[0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0]])
    four_d = tf.reshape(labels, [2, 6, 1, 1])
    assert losses.weights_multi_problem_all(four_d, 9).shape == (2, 6, 1, 1)
    assert common_layers.weights_multi_problem is losses.weights_multi_problem
    with pytest.raises(ValueError, match="task id must be >= 0"):
        losses.weights_multi_problem(labels)


# ----------------------------------------------------------------------------- rows
def test_examples_become_rows_with_the_task_id(tasks):
    lm, reverse, classes = (registry.problem(n) for n in ("char_lm", "char_reverse",
                                                          "char_class"))
    for task, task_id in ((lm, 258), (reverse, 259), (classes, 260)):
        task.set_task_id(task_id)
    args = (text2text.VocabType.CHARACTER, 261, -1, -1, -1)
    row = multi_problem.normalize_example_nlp(
        reverse, {"inputs": tf.constant([5, 6, 1], tf.int64),
                  "targets": tf.constant([6, 5, 1], tf.int64)}, False, *args)
    assert row["targets"].numpy().tolist() == [5, 6, 259, 6, 5, 1]
    assert row["task_id"].numpy().tolist() == [259] and "inputs" not in row
    infer = multi_problem.normalize_example_nlp(
        reverse, {"inputs": tf.constant([5, 6, 1], tf.int64),
                  "targets": tf.constant([6, 5, 1], tf.int64)}, True, *args)
    assert infer["inputs"].numpy().tolist() == [5, 6, 259]
    lm_row = multi_problem.normalize_example_nlp(
        lm, {"targets": tf.constant([7, 8, 1], tf.int64)}, False, text2text.VocabType.CHARACTER, 261, -1, -1, 6)
    assert lm_row["targets"].numpy().tolist() == [258, 7, 8, 1, 0, 0]  # fixed length 6
    label = multi_problem.normalize_example_nlp(
        classes, {"inputs": tf.constant([5, 1], tf.int64), "targets": tf.constant([1], tf.int64)},
        False, *args)
    assert label["targets"].numpy().tolist() == [5, 260, 51]  # the character "1"
    subword_label = multi_problem.normalize_example_nlp(
        classes, {"inputs": tf.constant([5, 1], tf.int64), "targets": tf.constant([1], tf.int64)},
        False, "subwords", 261, -1, -1, -1)
    assert subword_label["targets"].numpy().tolist() == [5, 260, 262]
    cut = multi_problem.normalize_example_nlp(
        reverse, {"inputs": tf.constant([5, 6, 7, 1], tf.int64),
                  "targets": tf.constant([7, 6, 5, 1], tf.int64)}, False, text2text.VocabType.CHARACTER, 261, 2,
        2, -1)
    assert cut["targets"].numpy().tolist() == [5, 6, 259, 7, 6]


def test_hparams_take_the_primary_tasks_with_room_for_task_ids(tasks):
    problem = registry.problem("char_lm_and_reverse")
    hp = problem.get_hparams(model_hparams())
    assert hp.vocab_size["targets"] == 256 + 2 + 2
    assert "inputs" not in hp.modality and hp.modality["targets"] == "symbol"
    assert [t.task_id for t in problem.task_list] == [258, 259]
    # The primary task's own hparams are not changed.
    assert problem.task_list[0].get_hparams().vocab_size["targets"] == 258
    bigger = type(problem)()
    assert bigger.get_hparams(model_hparams(multiproblem_vocab_size=300)).vocab_size[
        "targets"] == 300
    with pytest.raises(ValueError, match="has 0 task"):
        multi_problem.MultiProblem().get_hparams(model_hparams())


def test_the_encoder_reads_task_ids_and_labels(tasks):
    from t2t.encoders import text_encoder
    encoder = multi_problem.MultiProblemEncoder(text_encoder.ByteTextEncoder(), num_tasks=2)
    assert encoder.vocab_size == 258 and encoder.encode("bc") == [100, 101]
    assert encoder.decode([100, 258, 101]) == "bc"
    assert encoder.decode([100, 259, 261]) == "b1"
    assert encoder.decode_list([100, 259, 260]) == [b"b", b"0"]
    problem = registry.problem("char_lm_and_reverse")
    hp = problem.get_hparams(model_hparams())
    assert isinstance(hp.vocabulary["targets"], multi_problem.MultiProblemEncoder)


# ----------------------------------------------------------------------------- mixing
def task_counts(problem, data_dir, n, **values):
    dataset = problem.dataset(ModeKeys.TRAIN, data_dir=data_dir, hparams=model_hparams(**values))
    ids = [row["task_id"][0] for row in rows(dataset, n)]
    return ids


@pytest.mark.parametrize("values,expected_share", [
    ({"multiproblem_schedule_threshold": 0.5}, 0.5),
    ({"multiproblem_schedule_threshold": 0.2}, 0.2),
    ({"multiproblem_per_task_threshold": "3,1"}, 0.25),
])
def test_training_draws_follow_the_schedule(data_dir, values, expected_share):
    tf.random.set_seed(1)
    ids = task_counts(registry.problem("char_lm_and_reverse"), data_dir, 400, **values)
    share = ids.count(259) / len(ids)
    assert set(ids) == {258, 259}
    assert abs(share - expected_share) < 0.08, share


def test_pretrain_schedule_trains_the_primary_task_first(data_dir):
    ids = task_counts(registry.problem("char_lm_and_reverse"), data_dir, 40,
                      multiproblem_mixing_schedule="pretrain",
                      multiproblem_schedule_max_examples=15)
    assert ids == [258] * 15 + [259] * 25


def test_exponential_schedule_starts_with_the_primary_task(data_dir):
    tf.random.set_seed(2)
    ids = task_counts(registry.problem("char_lm_and_reverse"), data_dir, 200,
                      multiproblem_mixing_schedule="exponential",
                      multiproblem_schedule_max_examples=1000,
                      multiproblem_schedule_threshold=1.0)
    assert ids[:100].count(259) < 5  # the secondary share is < 1e-3 over the first 100
    with pytest.raises(ValueError, match="unknown multiproblem_mixing_schedule 'magic'"):
        task_counts(registry.problem("char_lm_and_reverse"), data_dir, 1,
                    multiproblem_mixing_schedule="magic")


def test_the_same_seed_draws_the_same_tasks(data_dir):
    draws = []
    for _ in range(2):
        tf.random.set_seed(7)
        draws.append(task_counts(registry.problem("char_lm_and_reverse"), data_dir, 50))
    assert draws[0] == draws[1]


def test_evaluation_reads_every_tasks_examples_once_in_turn(data_dir):
    problem = registry.problem("char_lm_and_reverse")
    eval_rows = rows(problem.dataset(ModeKeys.EVAL, data_dir=data_dir, hparams=model_hparams()))
    ids = [row["task_id"][0] for row in eval_rows]
    lm_rows = rows(problem.task_list[0].dataset(ModeKeys.EVAL, data_dir=data_dir))
    reverse_rows = rows(problem.task_list[1].dataset(ModeKeys.EVAL, data_dir=data_dir))
    assert ids.count(258) == len(lm_rows) and ids.count(259) == len(reverse_rows)
    assert ids[:4] == [258, 259, 258, 259]
    only = rows(problem.dataset(ModeKeys.EVAL, data_dir=data_dir,
                                hparams=model_hparams(multiproblem_target_eval_only=True)))
    assert {row["task_id"][0] for row in only} == {259} and len(only) == len(reverse_rows)


# ----------------------------------------------------------------------------- loss
def test_the_language_model_loss_is_the_plain_loss_summed_over_tasks(data_dir):
    problem = registry.problem("char_lm_and_reverse")
    hp = model_hparams(label_smoothing=0.0)
    p_hp = problem.get_hparams(hp)
    batch = rows(problem.dataset(ModeKeys.EVAL, data_dir=data_dir, hparams=hp), 6)
    length = max(len(r["targets"]) for r in batch)
    targets = np.zeros([6, length, 1, 1], np.int64)
    for i, r in enumerate(batch):
        targets[i, :len(r["targets"]), 0, 0] = r["targets"]
    logits = tf.random.stateless_normal([6, length, 1, 1, 260], seed=[1, 2])
    targets = tf.constant(targets)
    loss = modalities.get_loss("symbol")
    plain = loss(logits, targets, hp, 260, weights_fn=losses.weights_nonzero)
    num, den, summaries = multi_problem.aggregate_task_losses(
        hp, p_hp, logits, "targets", targets, problem=problem)
    np.testing.assert_allclose([num, den], plain, rtol=1e-6)
    assert [name for name, _ in summaries] == ["char_lm_loss", "char_reverse_loss"]
    hp.multiproblem_reweight_label_loss = True
    hp.multiproblem_label_weight = 1.0
    num, den, summaries = multi_problem.aggregate_task_losses(
        hp, p_hp, logits, "targets", targets, problem=problem)
    values = dict(summaries)
    # Label weight 1: the reversal counts only its targets; each task's loss is a mean.
    np.testing.assert_allclose(num, values["char_lm_loss"] + values["char_reverse_target_loss"],
                               rtol=1e-6)
    assert float(den) == 2.0
    with pytest.raises(ValueError, match="needs problem="):
        multi_problem.aggregate_task_losses(hp, p_hp, logits, "targets", targets)


# ----------------------------------------------------------------------------- end to end
def test_the_trainer_trains_evaluates_and_decodes_a_multi_problem(usr_dir, tmp_path):
    data, out = str(tmp_path / "data"), str(tmp_path / "train")
    common = ["--t2t_usr_dir=" + usr_dir, "--problem=char_lm_and_reverse"]
    subprocess.run([DATAGEN, "--data_dir=" + data, "--tmp_dir=" + data] + common, check=True,
                   capture_output=True, timeout=300)
    result = subprocess.run(
        [TRAINER, "--data_dir=" + data, "--output_dir=" + out, "--model=transformer",
         "--hparams_set=transformer_tiny", "--train_steps=4", "--eval_steps=2",
         "--hparams=hidden_size=16,filter_size=32,num_hidden_layers=1,num_heads=2,"
         "batch_size=256"] + common, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert tf.train.latest_checkpoint(out).endswith("model.ckpt-4")
    assert "char_reverse" in result.stderr + result.stdout  # metrics per task
    # Decoding one task: each prompt ends with that task's id (259: the reversal).
    (tmp_path / "prompts.txt").write_text("abc\nbca\n")
    result = subprocess.run(
        [DECODER, "--data_dir=" + data, "--output_dir=" + out,
         "--decode_from_file=" + str(tmp_path / "prompts.txt"),
         "--decode_to_file=" + str(tmp_path / "decodes.txt"),
         "--decode_hparams=multiproblem_task_id=259,extra_length=4"] + common,
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    # Four training steps decide no particular text (one run decoded "\x1c\x1c\x1c\x1c",
    # which str.splitlines splits): count the records the decoder wrote, not their lines.
    assert "decoded 2 lines of " in result.stdout, result.stdout
    decodes = (tmp_path / "decodes.txt").read_text(encoding="utf-8")
    assert decodes.endswith("\n") and decodes.count("\n") >= 2, repr(decodes)
