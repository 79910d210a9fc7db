"""memory_efficient: T2T's per-head attention and split feed-forward equal the plain
computation over layer_norm(x) with the same variables, gradients included."""
import numpy as np
import tensorflow as tf

from t2t.layers import conv_layers, memory_efficient

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
        ffn = conv_layers.conv_hidden_relu_memory_efficient(inp, filter_size=16)
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


def test_t2ts_names_forget_and_test_vars():
    # T2T's tests call both through common_attention / common_layers, passing their own
    # variables and forget=True/False: the same values either way.
    from t2t.layers import common_attention, common_layers
    rng = np.random.RandomState(1)
    x = rng.normal(size=[2, 4, 8]).astype(np.float32)
    with tf.Graph().as_default():
        inp = tf.constant(x)
        f1 = _v1.get_variable("f1", [1, 8, 6])
        f2 = _v1.get_variable("f2", [1, 6, 8])
        scale, bias = common_layers.layer_norm_vars(8)
        ffn = [common_layers.conv_hidden_relu_memory_efficient(
            inp, 6, forget=forget, test_vars=(f1, f2, scale, bias)) for forget in (False, True)]
        wqkv = _v1.get_variable("wqkv", [2, 1, 8, 12])
        wo = _v1.get_variable("wo", [2, 1, 4, 8])
        att = [common_attention.multihead_self_attention_memory_efficient(
            inp, None, 2, forget=forget, test_vars=(wqkv, wo, scale, bias))
            for forget in (False, True)]
        names = sorted(v.op.name for v in _v1.global_variables())
        with _v1.Session() as sess:
            sess.run(_v1.global_variables_initializer())
            ffn_v, att_v, w = sess.run([ffn, att, {"f1": f1, "f2": f2}])
    assert names == ["f1", "f2", "layer_norm_bias", "layer_norm_scale", "wo", "wqkv"]
    np.testing.assert_array_equal(ffn_v[0], ffn_v[1])
    np.testing.assert_array_equal(att_v[0], att_v[1])
    hidden = np.maximum(_layer_norm(x) @ w["f1"][0], 0.0)
    np.testing.assert_allclose(ffn_v[0], hidden @ w["f2"][0], rtol=1e-4, atol=1e-5)
