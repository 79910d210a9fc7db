"""`t2t.data.windows`: T2T's bucket batches formed a window at a time are group_by_window's
batches, whatever the window size."""
import numpy as np
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t.data import windows


def dataset_of(lengths):
    # Each example's tokens are its index + 1 (so batches can be told apart), repeated.
    def gen():
        for index, length in enumerate(lengths):
            yield {"targets": np.full([length], index + 1, np.int64)}
    return tf.data.Dataset.from_generator(
        gen, output_signature={"targets": tf.TensorSpec([None], tf.int64)})


def batch_ids(batch):
    lengths = batch[windows.LENGTH_PREFIX + "targets"]
    return tuple(int(row[0]) for row, n in zip(batch["targets"], lengths) if n)


def reference_batches(lengths, boundaries, batch_sizes, min_length, max_length):
    ds = dataset_of(lengths).filter(
        lambda ex: tf.logical_and(tf.size(ex["targets"]) >= min_length,
                                  tf.size(ex["targets"]) <= max_length))
    ds = ds.bucket_by_sequence_length(lambda ex: tf.size(ex["targets"]), boundaries,
                                      batch_sizes)
    return [tuple(int(row[0]) for row in batch["targets"]) for batch in ds.as_numpy_iterator()]


def test_docstring_example():
    lengths = [2, 5, 3, 6, 2, 1]
    got = [batch_ids(b) for b in windows.bucket_batches(
        dataset_of(lengths), [4], [3, 2], window_size=8, min_length=0,
        max_length=100).as_numpy_iterator()]
    assert got == [(1, 3, 5), (2, 4), (6,)]


@settings(max_examples=25, deadline=None)
@given(lengths=st.lists(st.integers(1, 30), min_size=1, max_size=80),
       window_size=st.integers(1, 40), edges=st.sets(st.integers(2, 28), max_size=4),
       batch_size=st.integers(1, 6), bounds=st.tuples(st.integers(0, 3), st.integers(10, 30)))
def test_bucket_batches_equal_group_by_window(lengths, window_size, edges, batch_size, bounds):
    boundaries = sorted(edges)
    batch_sizes = [batch_size + i % 3 for i in range(len(boundaries) + 1)]
    got = [batch_ids(b) for b in windows.bucket_batches(
        dataset_of(lengths), boundaries, batch_sizes, window_size, *bounds).as_numpy_iterator()]
    expected = reference_batches(lengths, boundaries, batch_sizes, *bounds)
    assert sorted(got) == sorted(expected)
