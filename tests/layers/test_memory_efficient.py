"""memory_efficient: T2T's per-head attention and split feed-forward equal the plain
computation over layer_norm(x) with the same variables, gradients included."""
import numpy as np
import tensorflow as tf

from t2t.layers import memory_efficient

_v1 = tf.compat.v1


def _layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-6)


def test_attention_and_ffn_match_a_numpy_reference():
    rng = np.random.RandomState(0)
    x = rng.normal(size=[2, 5, 8]).astype(np.float32)
    causal = np.where(np.tri(5) > 0, 0.0, -1e9).astype(np.float32)[None, None]
    with tf.Graph().as_default():
        inp = tf.constant(x)
        att = memory_efficient.multihead_self_attention_memory_efficient(
            inp, tf.constant(causal), num_heads=2)
        ffn = memory_efficient.conv_hidden_relu_memory_efficient(inp, filter_size=16)
        variables = {v.op.name: v for v in _v1.global_variables()}
        grads = tf.gradients(tf.reduce_sum(att) + tf.reduce_sum(ffn), [inp])
        with _v1.Session() as sess:
            sess.run(_v1.global_variables_initializer())
            att_v, ffn_v, grad_v, w = sess.run([att, ffn, grads, variables])
    assert sorted(w) == ["ffn2/f1", "ffn2/f2", "ffn2/layer_norm_bias", "ffn2/layer_norm_scale",
                         "multihead_attention/layer_norm_bias",
                         "multihead_attention/layer_norm_scale", "multihead_attention/wo",
                         "multihead_attention/wqkv"]
    n = _layer_norm(x)
    expected = 0
    for h in range(2):
        q, k, v = np.split(n @ w["multihead_attention/wqkv"][h, 0], 3, axis=-1)
        logits = q @ k.transpose(0, 2, 1) / np.sqrt(4) + causal[0]
        weights = np.exp(logits - logits.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        expected = expected + (weights @ v) @ w["multihead_attention/wo"][h, 0]
    np.testing.assert_allclose(att_v, expected, rtol=1e-4, atol=1e-5)
    hidden = np.maximum(n @ w["ffn2/f1"][0], 0.0)
    np.testing.assert_allclose(ffn_v, hidden @ w["ffn2/f2"][0], rtol=1e-4, atol=1e-5)
    assert grad_v[0].shape == x.shape and np.all(np.isfinite(grad_v[0]))
