"""The batching strategies of `t2t.data.batching`: which one `input_fn` picks, and what
each makes of the same examples."""
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t.data import batching, windows
from t2t.data.input_settings import InputSettings
from t2t.layers import common_hparams


def hparams(**overrides):
    hp = common_hparams.basic_params1()
    hp.batch_size = 24
    hp.max_length = 12
    hp.min_length_bucket = 2
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def examples(lengths, dtype=np.int64):
    def gen():
        for length in lengths:
            yield {"targets": np.arange(1, length + 1, dtype=dtype)}
    return tf.data.Dataset.from_generator(
        gen, output_signature={"targets": tf.TensorSpec([None], tf.as_dtype(dtype))})


def context(hp, training=True, **fields):
    settings = dict(hparams=hp, settings=InputSettings.from_hparams(hp), is_training=training,
                    min_length=hp.min_length, max_length=hp.max_length, drop_long=training)
    settings.update(fields)
    return batching.BatchingContext(**settings)


def shapes(batches):
    """(rows, width) of each batch; width as `input_fn` trims it (the longest example)
    when the examples were measured in windows."""
    result = []
    for batch in batches.dataset.as_numpy_iterator():
        rows, width = batch["targets"].shape[:2]
        lengths = batch.get(windows.LENGTH_PREFIX + "targets")
        if lengths is not None and batches.trim:
            width = int(lengths.max())
        result.append((rows, width))
    return result


@pytest.mark.parametrize("use_tpu,tokens,packed,fixed,mode,expected", [
    (True, True, False, False, "sorted", batching.TpuFixedShapes),
    (True, False, False, False, "sorted", batching.TpuFixedShapes),
    (False, False, False, False, "sorted", batching.ExampleCount),
    (False, True, True, False, "sorted", batching.PackedRows),
    (False, True, True, True, "sorted", batching.PackedRows),
    (False, True, False, True, "sorted", batching.FixedBatchSize),
    (False, True, False, False, "sorted", batching.SortedTokenBatches),
    (False, True, False, False, "buckets", batching.LengthBuckets),
    (False, True, False, False, None, batching.LengthBuckets),
])
def test_select_strategy_follows_the_table(use_tpu, tokens, packed, fixed, mode, expected):
    hp = hparams(use_fixed_batch_size=fixed)
    if mode:
        hp.token_batching = mode
    strategy = batching.select_strategy(use_tpu, tokens, packed, hp)
    assert type(strategy) is expected
    if use_tpu:
        assert strategy.counts_tokens == tokens


def test_length_buckets_keep_rows_times_length_within_the_token_budget():
    hp = hparams()
    lengths = [2, 3, 3, 11, 11, 5, 4, 2, 12, 13, 3]  # 13 is too long when training
    batches = batching.LengthBuckets().batch(examples(lengths), context(hp))
    got = shapes(batches)
    assert sum(rows for rows, _ in got) == len(lengths) - 1
    assert all(rows * width <= max(hp.batch_size, width) for rows, width in got)
    assert batches.batch_multiple == 1 and batches.trim


def test_fixed_batch_size_is_one_bucket_and_pads_eval_batches():
    hp = hparams(use_fixed_batch_size=True, batch_size=4)
    batches = batching.FixedBatchSize().batch(examples([2, 5, 3, 9, 4]),
                                              context(hp, training=False, num_shards=2))
    assert [rows for rows, _ in shapes(batches)] == [5]  # 4 x 2 shards, 5 examples
    assert batches.batch_multiple == 8  # eval: pad to shards x batch size


def test_example_count_batches_static_examples_per_shard():
    dataset = tf.data.Dataset.from_tensor_slices({"targets": np.ones([10, 3], np.int64)})
    batches = batching.ExampleCount().batch(dataset, context(hparams(batch_size=2),
                                                             num_shards=2))
    assert shapes(batches) == [(4, 3), (4, 3), (2, 3)]


def test_tpu_fixed_shapes_pad_to_max_length_and_drop_the_remainder():
    hp = hparams(max_length=8)
    batches = batching.TpuFixedShapes(counts_tokens=True).batch(
        examples([2, 3, 9, 4, 5, 6, 1]), context(hp, tpu_batch_size=2))
    assert shapes(batches) == [(2, 8), (2, 8), (2, 8)]  # 9 dropped, the 7th left over
    assert batches.static_batch_size == 2 and not batches.trim
    padded = batching.TpuFixedShapes(counts_tokens=True).batch(
        examples([2, 3, 4]), context(hparams(max_length=8, pad_batch=True), tpu_batch_size=2))
    assert shapes(padded) == [(2, 8), (1, 8)] and padded.batch_multiple == 2


def test_packed_rows_are_batched_by_rows_of_the_packed_length():
    row = {"targets": np.ones([6, 8], np.int64),
           "targets_segmentation": np.ones([6, 8], np.int64),
           "targets_position": np.zeros([6, 8], np.int64)}
    dataset = tf.data.Dataset.from_tensor_slices(row)
    batches = batching.PackedRows().batch(dataset, context(hparams(batch_size=16)))
    assert shapes(batches) == [(2, 8), (2, 8), (2, 8)]  # 16 tokens // 8 per row


def test_context_and_batches_are_frozen():
    ctx = context(hparams())
    with pytest.raises(AttributeError):
        ctx.num_shards = 4
    assert ctx.longest == ctx.max_length
    assert context(hparams(), training=False).longest == batching.NO_MAX_LENGTH


# ------------------------------------------------------------------ sorted token batches
@settings(max_examples=200, deadline=None)
@given(lengths=st.lists(st.integers(0, 40), max_size=60), budget=st.integers(1, 64),
       max_rows=st.integers(1, 12), bounds=st.tuples(st.integers(0, 5), st.integers(5, 40)),
       multiplier=st.integers(1, 3))
def test_token_batch_plan_keeps_each_valid_example_once_within_budget(
        lengths, budget, max_rows, bounds, multiplier):
    lengths = np.array(lengths, dtype=np.int64)
    low, high = bounds
    order, splits = windows.token_batch_plan(lengths, low, high, budget, max_rows, multiplier)
    valid = [i for i, n in enumerate(lengths) if low <= n <= high]
    assert sorted(order.tolist()) == valid
    assert list(lengths[order]) == sorted(lengths[order])
    assert splits[0] == 0 and splits[-1] == len(order)
    for start, end in zip(splits[:-1], splits[1:]):
        rows = end - start
        assert 1 <= rows <= max_rows
        longest = int(lengths[order[end - 1]]) * multiplier
        assert rows == 1 or rows * longest <= budget
        # greedy: one more row would not have fit
        if end < len(order) and rows < max_rows:
            assert (rows + 1) * int(lengths[order[end]]) * multiplier > budget


def test_sorted_token_batches_cover_every_example_with_little_padding():
    rng = np.random.RandomState(0)
    lengths = np.clip(rng.lognormal(np.log(6), 0.6, 300).astype(int), 1, 40).tolist()
    hp = hparams(batch_size=64, max_length=30, min_length_bucket=2)
    strategy = batching.SortedTokenBatches(window_size=128)
    batches = strategy.batch(examples(lengths), context(hp))
    got = shapes(batches)
    kept = [n for n in lengths if n <= 30]
    assert sum(rows for rows, _ in got) == len(kept)
    assert all(rows * width <= 64 or rows == 1 for rows, width in got)
    assert all(rows <= 64 // 2 for rows, _ in got)
    efficiency = sum(kept) / sum(rows * width for rows, width in got)
    assert efficiency > 0.9
    eval_batches = strategy.batch(examples(lengths), context(hp, training=False, num_shards=2))
    assert eval_batches.batch_multiple == 2
