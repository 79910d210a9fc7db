"""expert_utils: PadRemover round trips, Parallelism's T2T semantics, gating, dispatching
and local_moe's shapes, loss and variable names."""
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from t2t.layers import expert_utils
from graph_testing import run_graph

v1 = tf.compat.v1


# --------------------------------------------------------------------------- PadRemover
@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=12), st.integers(1, 3))
def test_pad_remover_keeps_non_padding_rows_in_order_and_restores_exactly(is_pad, depth):
    mask = np.array(is_pad, np.float32)
    x = np.arange(len(is_pad) * depth, dtype=np.float32).reshape(len(is_pad), depth) + 1
    remover = expert_utils.PadRemover(tf.constant(mask))
    removed = remover.remove(tf.constant(x))
    np.testing.assert_array_equal(removed.numpy(), x[mask == 0])
    expected = np.where(mask[:, None] > 0, 0.0, x)
    np.testing.assert_array_equal(remover.restore(removed).numpy(), expected)


def test_pad_remover_in_a_graph_takes_a_batch_mask_and_keeps_static_depth():
    def build():
        remover = expert_utils.PadRemover(tf.constant([[0., 1.], [0., 0.]]))
        x = tf.reshape(tf.range(8.), [4, 2])
        removed = remover.remove(x)
        assert removed.shape.as_list() == [None, 2]
        return removed, remover.restore(removed)

    removed, restored = run_graph(build)
    np.testing.assert_array_equal(removed, [[0, 1], [4, 5], [6, 7]])
    np.testing.assert_array_equal(restored, [[0, 1], [0, 0], [4, 5], [6, 7]])


# --------------------------------------------------------------------------- Parallelism
def test_parallelism_calls_once_per_device_with_lists_or_shared_values():
    dp = expert_utils.Parallelism(["", ""])
    assert dp.n == 2 and dp.devices == ["", ""] and dp.ps_devices == [""]
    out = dp(tf.add, [1, 2], 10)
    assert isinstance(out, list) and [t.numpy() for t in out] == [11, 12]
    assert dp(lambda a, b: (a + b, a * b), [2, 3], [4, 5]) == ([6, 8], [8, 15])
    assert dp([lambda a: a + 1, lambda a: a - 1], 5) == [6, 4]
    assert dp(lambda a=0: a * 2, a=[1, 7]) == [2, 14]
    with pytest.raises(ValueError, match="one per device"):
        dp(tf.add, [1, 2, 3], 1)


def dense_shard(x):
    w = v1.get_variable("w", [3, 2])
    return tf.matmul(x, w)


@pytest.mark.parametrize("reuse,names", [
    (True, ["w"]), (None, ["parallel_0/w", "parallel_1/w"])])
def test_parallelism_shares_variables_only_with_reuse(reuse, names):
    def build():
        dp = expert_utils.Parallelism(["", ""], reuse=reuse)
        outs = dp(dense_shard, [tf.ones([1, 3]), tf.ones([1, 3])])
        assert sorted(v.op.name for v in v1.global_variables()) == names
        return outs

    first, second = run_graph(build)
    assert (first == second).all() if reuse else not (first == second).all()


def test_parallelism_daisy_chain_and_caching_read_the_same_values():
    def build():
        outs = []
        for kwargs in ({"daisy_chain_variables": True}, {"caching_devices": ["", ""]}):
            with v1.variable_scope("daisy" if kwargs.get("daisy_chain_variables") else "cache"):
                dp = expert_utils.Parallelism(["/cpu:0", "/cpu:0"], **kwargs)
                outs.append(dp(dense_shard, tf.ones([1, 3])))
        assert len(v1.global_variables()) == 2
        return outs

    (d0, d1), (c0, c1) = run_graph(build)
    np.testing.assert_array_equal(d0, d1)
    np.testing.assert_array_equal(c0, c1)


def test_utils_path_is_the_same_module():
    from t2t.utils import expert_utils as t2t_path
    assert t2t_path is expert_utils
    assert t2t_path.PadRemover is expert_utils.PadRemover


# --------------------------------------------------------------------------- gating
def test_cv_squared_values():
    assert expert_utils.cv_squared(tf.constant([1., 1., 1.])).numpy() == pytest.approx(0.0)
    assert expert_utils.cv_squared(tf.constant([0., 2.])).numpy() == pytest.approx(1.0)
    x = np.array([1., 2., 6.], np.float32)
    assert expert_utils.cv_squared(tf.constant(x)).numpy() == pytest.approx(
        x.var() / x.mean() ** 2, rel=1e-5)
    assert expert_utils.cv_squared(tf.zeros([0])).numpy() == 0.0


def test_noisy_top_k_gating_keeps_k_experts_per_row_summing_to_one():
    rng = np.random.RandomState(0)
    x = rng.randn(6, 5).astype(np.float32)

    def build():
        with v1.variable_scope("g", initializer=v1.random_normal_initializer(seed=3)):
            gates, load = expert_utils.noisy_top_k_gating(tf.constant(x), 4, True, k=2)
        names = sorted(v.op.name for v in v1.global_variables())
        assert names == ["g/noisy_top_k_gating/w_gate", "g/noisy_top_k_gating/w_noise"]
        return gates, load

    gates, load = run_graph(build)
    assert gates.shape == (6, 4) and load.shape == (4,)
    assert ((gates > 0).sum(axis=1) == 2).all()
    np.testing.assert_allclose(gates.sum(axis=1), 1.0, rtol=1e-5)
    assert np.isfinite(load).all() and (load >= 0).all() and load.sum() <= 6 * 4


def test_sparse_dispatcher_combines_the_gated_sum_of_expert_outputs():
    gates = np.array([[0.7, 0.0, 0.3], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]], np.float32)
    x = np.arange(6, dtype=np.float32).reshape(3, 2) + 1
    scales = [1.0, 10.0, 100.0]
    dispatcher = expert_utils.SparseDispatcher(3, tf.constant(gates))
    parts = dispatcher.dispatch(tf.constant(x))
    assert [p.shape[0] for p in parts] == [2, 2, 1]
    assert [t.numpy().tolist() for t in dispatcher.expert_to_batch_indices()] == [
        [0, 2], [1, 2], [0]]
    np.testing.assert_allclose(dispatcher.expert_to_gates()[0].numpy(), [0.7, 0.5])
    out = dispatcher.combine([p * s for p, s in zip(parts, scales)])
    expected = sum(gates[:, i:i + 1] * x * s for i, s in enumerate(scales))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    unweighted = dispatcher.combine([p * s for p, s in zip(parts, scales)],
                                    multiply_by_gates=False)
    np.testing.assert_allclose(unweighted.numpy(),
                               sum((gates[:, i:i + 1] > 0) * x * s
                                   for i, s in enumerate(scales)), rtol=1e-6)
    assert dispatcher.part_sizes.numpy().tolist() == [2, 2, 1]


def test_map_ids_applies_the_function_per_id_and_flatten_all_but_last():
    x = tf.constant([[1.], [2.], [3.], [4.], [5.]])
    ids = tf.constant([[0], [0], [1], [1], [1]])
    out = expert_utils.map_ids(x, ids, lambda t: t - tf.reduce_sum(t, axis=1, keepdims=True))
    np.testing.assert_array_equal(out.numpy(), [[-2.], [-1.], [-9.], [-8.], [-7.]])
    assert expert_utils.flatten_all_but_last(tf.zeros([2, 3, 4])).shape == (6, 4)


# --------------------------------------------------------------------------- local_moe
def test_local_moe_output_shape_loss_and_t2t_variable_names():
    x = np.random.RandomState(1).randn(2, 5, 8).astype(np.float32)

    def build():
        with v1.variable_scope("moe", initializer=v1.random_normal_initializer(seed=2)):
            expert_fn = expert_utils.ffn_expert_fn(8, [16], 6)
            y, loss = expert_utils.local_moe(tf.constant(x), True, expert_fn, 3, k=2)
        assert y.shape.as_list() == [2, 5, 6]
        names = sorted(v.op.name for v in v1.global_variables())
        assert names == (["moe/local_moe/noisy_top_k_gating/w_gate",
                          "moe/local_moe/noisy_top_k_gating/w_noise"] +
                         ["moe/local_moe/parallel_%d/w_%d" % (e, i)
                          for e in range(3) for i in range(2)])
        grads = tf.gradients(loss + tf.reduce_sum(y), v1.trainable_variables())
        return y, loss, grads

    y, loss, grads = run_graph(build)
    assert y.shape == (2, 5, 6) and np.isfinite(y).all()
    assert np.isfinite(loss) and 0.0 <= loss
    assert all(g is not None and np.isfinite(g).all() for g in grads)


def test_local_moe_with_one_expert_is_that_expert():
    x = np.random.RandomState(2).randn(4, 3).astype(np.float32)

    def build():
        y, loss = expert_utils.local_moe(tf.constant(x), False,
                                         expert_utils.ffn_expert_fn(3, [], 2), 1, k=1)
        with v1.variable_scope("local_moe/parallel_0", reuse=True):
            w = v1.get_variable("w_0")
        return y, loss, w

    y, loss, w = run_graph(build)
    np.testing.assert_allclose(y, x @ w, rtol=1e-5)  # one expert: gate 1 everywhere
    assert loss == pytest.approx(0.0, abs=1e-6)


def test_local_moe_refuses_vq_gating():
    class HParams:
        gating_type = "vq"
    with tf.Graph().as_default(), pytest.raises(ValueError, match="use 'topk'"):
        expert_utils.local_moe(tf.zeros([2, 3]), True, expert_utils.ffn_expert_fn(3, [], 3), 2,
                               hparams=HParams())
