"""masked_lm: sentence pairs on disk, round-robin truncation, seeded masks drawn per epoch."""
import os
import random

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.core import errors, registry
from t2t.core.modes import ModeKeys
from t2t.problems import masked_lm, problem

TRAIN, EVAL = ModeKeys.TRAIN, ModeKeys.EVAL
WORDS = ("the a cat dog sat ran on under mat table big small red blue quickly slowly "
         "bird fish tree house").split()


def write_corpus(folder, train_lines=120, dev_lines=30, seed=0):
    """Numbered sentences (unique), a blank line after every 10th."""
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    for name, count in (("train.txt", train_lines), ("dev.txt", dev_lines)):
        with open(os.path.join(folder, name), "w") as f:
            for i in range(count):
                words = [rng.choice(WORDS) for _ in range(rng.randint(3, 9))]
                f.write("s%d %s .\n" % (i, " ".join(words)))
                if i % 10 == 9:
                    f.write("\n")


class SmallMaskedLm(masked_lm.MaskedLmTmpdir):
    """masked_lm_tmpdir with short examples, to see truncation."""
    @property
    def max_seq_length(self):
        return 16


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    tmp_dir = str(tmp_path_factory.mktemp("text"))
    data_dir = str(tmp_path_factory.mktemp("data"))
    write_corpus(tmp_dir)
    prob = registry.problem("masked_lm_tmpdir")
    random.seed(7)
    prob.generate_data(data_dir, tmp_dir)
    return prob, tmp_dir, data_dir


def read_examples(prob, data_dir, split):
    paths = (prob.training_filepaths(data_dir, 10, shuffled=True) if split == TRAIN
             else prob.dev_filepaths(data_dir, 1, shuffled=True))
    examples = []
    for path in paths:
        for record in tf.data.TFRecordDataset(path):
            feature = tf.train.Example.FromString(record.numpy()).features.feature
            examples.append({k: list(v.int64_list.value) for k, v in feature.items()})
    return examples


# ----------------------------------------------------------------------------- packing
@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=3), st.integers(-2, 60))
def test_round_robin_lengths_share_the_budget_fairly(lengths, budget):
    kept = masked_lm.round_robin_lengths(lengths, budget)
    assert sum(kept) == min(sum(lengths), max(budget, 0))
    assert all(0 <= k <= n for k, n in zip(kept, lengths))
    cut = [k for k, n in zip(kept, lengths) if k < n]
    # Segments still cut differ by at most one token, earlier ones first; a segment kept
    # whole is at most one longer than what the cut ones keep.
    assert cut == sorted(cut, reverse=True)
    assert not cut or max(cut) - min(cut) <= 1
    assert not cut or all(k <= max(cut) + 1 for k, n in zip(kept, lengths) if k == n)


def test_pack_segments_layout_and_truncation():
    assert masked_lm.pack_segments([[7, 9], [12]], 128) == (
        [2, 7, 9, 3, 12, 3], [0, 0, 0, 0, 1, 1])
    assert masked_lm.pack_segments([[7, 9, 8, 6], [12, 13, 14]], 7) == (
        [2, 7, 9, 3, 12, 13, 3], [0, 0, 0, 0, 1, 1, 1])
    assert masked_lm.pack_segments([[7, 9, 8]], 4) == ([2, 7, 9, 3], [0, 0, 0, 0])
    assert masked_lm.round_robin_lengths([10, 2], 6) == [4, 2]
    assert masked_lm.round_robin_lengths([10, 10], 5) == [3, 2]


# ----------------------------------------------------------------------------- datagen
def test_vocabulary_reserves_cls_sep_mask(generated):
    prob, _, data_dir = generated
    vocab = prob.feature_encoders(data_dir)["inputs"]
    assert vocab.all_subtoken_strings[:5] == ("<pad>_", "<EOS>_", "[CLS]_", "[SEP]_",
                                              "[MASK]_")
    assert min(vocab.encode("[CLS] the [MASK] sat [SEP]")) >= masked_lm.FIRST_REGULAR_ID


def test_examples_are_cls_a_sep_b_sep_with_type_ids(generated):
    prob, tmp_dir, data_dir = generated
    vocab = prob.feature_encoders(data_dir)["inputs"]
    examples = read_examples(prob, data_dir, TRAIN)
    # 120 lines in 12 documents of 10: 9 pairs each, none across a blank line.
    assert len(examples) == 12 * 9
    firsts = set()
    for ex in examples:
        ids, types = ex["inputs"], ex["input_type_ids"]
        assert ids[0] == masked_lm.CLS_ID and ids[-1] == masked_lm.SEP_ID
        seps = [i for i, t in enumerate(ids) if t == masked_lm.SEP_ID]
        assert len(seps) == 2
        assert types == [0] * (seps[0] + 1) + [1] * (len(ids) - seps[0] - 1)
        first = vocab.decode(ids[1:seps[0]])
        second = vocab.decode(ids[seps[0] + 1:-1])
        first_number, second_number = int(first.split()[0][1:]), int(second.split()[0][1:])
        if ex["next_sentence_label"] == [0]:
            assert second_number == first_number + 1
            assert first_number % 10 != 9  # never across a document break
        else:
            assert second_number not in (first_number, first_number + 1)
        firsts.add(first_number)
    assert len(firsts) == len(examples)
    share = np.mean([ex["next_sentence_label"][0] for ex in examples])
    assert 0.3 < share < 0.7


def test_generation_is_deterministic_for_a_seed(generated, tmp_path):
    prob, tmp_dir, data_dir = generated
    random.seed(7)
    prob.generate_data(str(tmp_path), tmp_dir)
    for name in sorted(os.listdir(data_dir)):
        with open(os.path.join(data_dir, name), "rb") as a, \
                open(os.path.join(str(tmp_path), name), "rb") as b:
            assert a.read() == b.read(), name


def test_long_pairs_are_cut_round_robin(tmp_path):
    write_corpus(str(tmp_path / "text"), train_lines=40, dev_lines=10)
    prob = SmallMaskedLm()
    random.seed(1)
    prob.generate_data(str(tmp_path / "data"), str(tmp_path / "text"))
    examples = read_examples(prob, str(tmp_path / "data"), TRAIN)
    assert max(len(ex["inputs"]) for ex in examples) == 16
    for ex in examples:
        ids = ex["inputs"]
        sep = ids.index(masked_lm.SEP_ID)
        first, second = sep - 1, len(ids) - sep - 2
        if len(ids) == 16:
            assert abs(first - second) <= 1 or min(first, second) < 6


def test_missing_files_and_single_lines_are_user_errors(tmp_path):
    prob = registry.problem("masked_lm_tmpdir")
    with pytest.raises(errors.UserError, match="train.txt is missing"):
        list(prob.generate_samples(None, str(tmp_path), problem.DatasetSplit.TRAIN))
    (tmp_path / "train.txt").write_text("one\n\ntwo\n")
    with pytest.raises(errors.UserError, match="no two consecutive lines"):
        list(prob.generate_samples(None, str(tmp_path), problem.DatasetSplit.TRAIN))


# ----------------------------------------------------------------------------- masking
def test_mask_ids_rates_and_what_is_never_masked():
    rng = np.random.RandomState(0)
    vocab_size = 50
    picked = mask = rand = kept = 0
    for i in range(300):
        ids = np.concatenate([[2], rng.randint(5, vocab_size, 20), [3],
                              rng.randint(5, vocab_size, 20), [3]]).astype(np.int64)
        inputs, targets = masked_lm.mask_ids(tf.constant(ids), tf.constant([3, i], tf.int64),
                                             vocab_size)
        inputs, targets = inputs.numpy(), targets.numpy()
        chosen = targets != 0
        assert chosen.sum() == 6  # 15% of 40
        assert not chosen[[0, 21, 42]].any()      # [CLS], [SEP]s
        np.testing.assert_array_equal(targets[chosen], ids[chosen])
        np.testing.assert_array_equal(inputs[~chosen], ids[~chosen])
        assert inputs.min() >= 2 and inputs.max() < vocab_size
        picked += chosen.sum()
        mask += (inputs[chosen] == masked_lm.MASK_ID).sum()
        same = inputs[chosen] == ids[chosen]
        kept += same.sum()
        rand += (~same & (inputs[chosen] != masked_lm.MASK_ID)).sum()
    assert picked == 6 * 300
    assert 0.75 < mask / picked < 0.85
    # A random token equal to the original counts as kept: 10% + 10% / 45.
    assert 0.07 < rand / picked < 0.13
    assert 0.07 < kept / picked < 0.14


def test_mask_ids_is_a_function_of_the_seed():
    ids = tf.constant([2, 9, 8, 7, 6, 5, 9, 8, 3], tf.int64)
    a = masked_lm.mask_ids(ids, tf.constant([1, 2], tf.int64), 20)
    b = masked_lm.mask_ids(ids, tf.constant([1, 2], tf.int64), 20)
    assert [x.numpy().tolist() for x in a] == [x.numpy().tolist() for x in b]
    short = masked_lm.mask_ids(tf.constant([2, 9, 3], tf.int64), tf.constant([1, 2], tf.int64),
                               20)
    assert short[1].numpy().tolist() == [0, 9, 0]  # at least one token


def _as_lists(dataset, count):
    return [{k: v.numpy().tolist() for k, v in ex.items()} for ex in dataset.take(count)]


def test_dataset_masks_are_fixed_in_eval_and_new_each_training_epoch(generated):
    prob, _, data_dir = generated
    first = _as_lists(prob.dataset(EVAL, data_dir), 100)
    again = _as_lists(prob.dataset(EVAL, data_dir), 100)
    assert first == again
    for ex in first:
        assert any(ex["targets"])
        assert len(ex["targets"]) == len(ex["inputs"]) == len(ex["input_type_ids"])
    num = len(read_examples(prob, data_dir, TRAIN))
    epochs = _as_lists(prob.dataset(TRAIN, data_dir, shuffle_files=False,
                                    new_masks_each_epoch=True), 2 * num)
    first_epoch, second_epoch = epochs[:num], epochs[num:]
    # The same examples in the same order (files not shuffled), mostly other masks.
    assert [e["input_type_ids"] for e in first_epoch] == \
        [e["input_type_ids"] for e in second_epoch]
    changed = sum(a["targets"] != b["targets"] for a, b in zip(first_epoch, second_epoch))
    assert changed > 0.8 * num
    rerun = _as_lists(prob.dataset(TRAIN, data_dir, shuffle_files=False,
                                   new_masks_each_epoch=True), 2 * num)
    assert rerun == epochs


def test_input_fn_batches_masked_features_for_the_model(generated):
    prob, _, data_dir = generated
    hparams = registry.hparams("transformer_encoder_mlm_tiny")
    hparams.batch_size = 256
    hparams.data_dir = data_dir
    dataset = prob.input_fn(TRAIN, hparams, data_dir=data_dir)
    features, labels = next(iter(dataset))
    assert features["inputs"].shape.rank == 4 and features["targets"].shape.rank == 4
    assert features["input_type_ids"].shape == features["inputs"].shape[:2]
    targets = features["targets"].numpy()
    assert (targets != 0).sum() > 0
    np.testing.assert_array_equal(labels.numpy(), targets)
