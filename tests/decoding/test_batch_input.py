"""Decode batches held in the graph: the dataset gives back every batch exactly (values,
shapes, dtypes, order), chunks stay under their size, and no Python function is in the
graph (from_generator's made every model run ~2x slower)."""
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.decoding import batch_input


def _read_all(input_fn):
    graph = tf.Graph()
    with graph.as_default():
        dataset = input_fn()
        element = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        op_types = {op.type for op in graph.get_operations()}
        out = []
        with tf.compat.v1.Session(graph=graph) as session:
            while True:
                try:
                    out.append(session.run(element))
                except tf.errors.OutOfRangeError:
                    return out, op_types


id_batches = st.lists(
    st.tuples(st.integers(1, 5), st.integers(0, 7), st.integers(0, 9)).map(
        lambda spec: {"inputs": np.random.RandomState(spec[2]).randint(
            0, 900, size=spec[:2]).astype(np.int32),
                      "index": np.arange(spec[0], dtype=np.int64) + spec[2],
                      "decode_length": np.array(spec[1] + 3, np.int32)}),
    min_size=1, max_size=6)


@settings(max_examples=15, deadline=None)
@given(id_batches)
def test_every_batch_comes_back_exactly_in_order(batches):
    out, _ = _read_all(batch_input.make_input_fn_from_batches(batches))
    assert len(out) == len(batches)
    for got, want in zip(out, batches):
        assert sorted(got) == sorted(want)
        for name in want:
            assert got[name].dtype == want[name].dtype
            np.testing.assert_array_equal(got[name], want[name])


def test_the_graph_runs_no_python():
    batches = [{"inputs": np.array([[5, 6, 1]], np.int32)},
               {"inputs": np.array([[7, 1], [8, 1]], np.int32)}]
    out, op_types = _read_all(batch_input.make_input_fn_from_batches(batches))
    assert [o["inputs"].shape for o in out] == [(1, 3), (2, 2)]
    assert not op_types & {"PyFunc", "EagerPyFunc", "PyFuncStateless"}
    assert not any("Generator" in t for t in op_types)


def test_chunks_keep_order_and_stay_under_the_limit():
    batches = [{"inputs": np.zeros([2, n], np.int32)} for n in (3, 1, 4, 1, 5, 9)]
    chunks = list(batch_input.chunks_of_batches(batches, max_values=10))
    # 6 + 2 values | 8 + 2 | 10 | 18 (over the limit alone: a chunk of its own)
    assert [len(c) for c in chunks] == [2, 2, 1, 1]
    assert [b for c in chunks for b in c] == batches


def test_a_batch_bigger_than_the_limit_is_a_chunk_of_its_own():
    batches = [{"inputs": np.zeros([4, 10], np.int32)}, {"inputs": np.zeros([1, 1], np.int32)}]
    assert [len(c) for c in batch_input.chunks_of_batches(batches, max_values=8)] == [1, 1]


def test_mixed_ranks_are_named():
    with pytest.raises(ValueError, match="'inputs' changes rank"):
        batch_input.make_input_fn_from_batches([{"inputs": np.zeros([1, 2], np.int32)},
                                                {"inputs": np.zeros([2], np.int32)}])
