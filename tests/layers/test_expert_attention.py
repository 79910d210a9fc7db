"""expert_attention: coordinates, the strided (de)convolutions and an expert's masks."""
import numpy as np
import tensorflow as tf

from t2t.layers import expert_attention

_v1 = tf.compat.v1


def test_coordinates_elems_convolutions_and_an_expert():
    rng = np.random.RandomState(0)
    x = rng.normal(size=[2, 3, 4]).astype(np.float32)
    seq = rng.normal(size=[4, 4]).astype(np.float32)
    with tf.Graph().as_default():
        rows = expert_attention.coordinate_tensor([2, 3], axis=0)
        cols = expert_attention.coordinate_tensor([2, 3], axis=-1)
        up = expert_attention.deconv_elems_1d(tf.constant(x), 2, 5)
        down = expert_attention.conv_elems_1d(up, 2, 4)
        # One expert over 4 positions of examples [0, 0, 1, 1]: causal, examples apart.
        inp = _v1.placeholder(tf.float32, [4, 4])
        with _v1.variable_scope("expert"):
            out = expert_attention.self_attention_expert(
                inp, tf.constant([[0], [0], [1], [1]]), attention_kq_size=4,
                attention_v_size=4)
        with _v1.variable_scope("empty"):
            empty = expert_attention.self_attention_expert(tf.zeros([0, 4]),
                                                           tf.zeros([0, 1], tf.int32))
        names = sorted(v.op.name for v in _v1.global_variables())
        with _v1.Session() as sess:
            sess.run(_v1.global_variables_initializer())
            r, c, u, d, e = sess.run([rows, cols, up, down, empty])
            outs = [sess.run(out, {inp: seq})]
            for i in (1, 3):
                changed = seq.copy()
                changed[i] += 2.0
                outs.append(sess.run(out, {inp: changed}))
    np.testing.assert_array_equal(r, [[0, 0, 0], [1, 1, 1]])
    np.testing.assert_array_equal(c, [[0, 1, 2], [0, 1, 2]])
    assert u.shape == (2, 6, 5) and d.shape == (2, 3, 4)
    assert "deconv_elems_1d/conv2d_transpose/kernel" in names
    assert "conv_elems_1d/conv2d/bias" in names
    assert "expert/multihead_attention/q/kernel" in names
    # Changing position 1 (example 0's last) changes only itself; position 3 likewise.
    np.testing.assert_allclose(outs[1][[0, 2, 3]], outs[0][[0, 2, 3]], atol=1e-6)
    assert not np.allclose(outs[1][1], outs[0][1])
    np.testing.assert_allclose(outs[2][:3], outs[0][:3], atol=1e-6)
    assert e.shape == (0, 4)
