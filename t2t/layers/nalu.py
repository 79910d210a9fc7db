"""T2T 1.15.7's neural arithmetic units `nac` and `nalu` (Trask et al. 2018,
arXiv:1808.00508; re-exported by `common_layers`).

    nac(x, 8)    # x [..., d] @ (tanh(w) * sigmoid(m)): weights pushed towards -1, 0, 1
    nalu(x, 8)   # g * nac(x) + (1 - g) * exp(nac(log|x|)): adds and multiplies
"""
import tensorflow as tf

from t2t.layers.shape_utils import shape_list

_v1 = tf.compat.v1


def nac(x, depth, name=None, reuse=None):
    """Neural accumulator x [..., d] -> [..., depth]; variables w, m [d, depth]."""
    with _v1.variable_scope(name, default_name="nac", values=[x], reuse=reuse):
        x_shape = shape_list(x)
        w = _v1.get_variable("w", [x_shape[-1], depth])
        m = _v1.get_variable("m", [x_shape[-1], depth])
        w = tf.tanh(w) * tf.nn.sigmoid(m)
        res_flat = tf.matmul(tf.reshape(x, [-1, x_shape[-1]]), w)
        return tf.reshape(res_flat, x_shape[:-1] + [depth])


def nalu(x, depth, epsilon=1e-30, name=None, reuse=None):
    """Neural arithmetic logic unit x [..., d] -> [..., depth]: a gate (variable w) between
    nac "nac_lin" of x and exp of nac "nac_log" of log(|x| + epsilon)."""
    with _v1.variable_scope(name, default_name="nalu", values=[x], reuse=reuse):
        x_shape = shape_list(x)
        gw = _v1.get_variable("w", [x_shape[-1], depth])
        g = tf.nn.sigmoid(tf.matmul(tf.reshape(x, [-1, x_shape[-1]]), gw))
        g = tf.reshape(g, x_shape[:-1] + [depth])
        a = nac(x, depth, name="nac_lin")
        m = nac(tf.math.log(tf.abs(x) + epsilon), depth, name="nac_log")
        return g * a + (1 - g) * tf.exp(m)
