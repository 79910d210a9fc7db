"""optimize(), the registered optimizers, Adafactor and gradient accumulation."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_hparams
from t2t.optim import adafactor
from t2t.optim import multistep_optimizer
from t2t.optim import optimize

# A small linear regression: y = X w_true, w starts at 0.5s.
_RNG = np.random.RandomState(0)
_X = _RNG.randn(16, 3).astype(np.float32)
_W_TRUE = np.array([[1.0], [-2.0], [3.0]], np.float32)
_Y = _X @ _W_TRUE

# Learning rates that make each optimizer converge on the regression in a few dozen steps.
_LEARNING_RATES = {"adadelta": 50.0, "adagrad": 0.5, "ftrl": 0.5, "proximal_adagrad": 0.5,
                   "momentum": 0.02, "rms_prop": 0.05, "adafactor": 0.1}


def _hparams(**overrides):
    hp = common_hparams.basic_params1()
    hp.weight_decay = 0.0
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def _regression_loss():
    w = tf.compat.v1.get_variable("w", initializer=tf.fill([3, 1], 0.5))
    return tf.reduce_mean(tf.square(tf.matmul(tf.constant(_X), w) - tf.constant(_Y)))


def _train(hp, steps, lr=0.1):
    """Run `steps` train steps of the regression; returns (first loss, last loss)."""
    with tf.Graph().as_default():
        loss = _regression_loss()
        train_op = optimize.optimize(loss, tf.constant(lr), hp)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(steps):
                sess.run(train_op)
            return first, sess.run(loss)


@pytest.mark.parametrize("name", registry.list_optimizers())
def test_every_registered_optimizer_reduces_the_loss(name):
    first, last = _train(_hparams(optimizer=name), steps=40, lr=_LEARNING_RATES.get(name, 0.1))
    assert np.isfinite(last)
    assert last < 0.5 * first, (name, first, last)


@pytest.mark.parametrize("legacy,cls", [("Adam", tf.compat.v1.train.AdamOptimizer),
                                        ("SGD", tf.compat.v1.train.GradientDescentOptimizer),
                                        ("Momentum", tf.compat.v1.train.MomentumOptimizer),
                                        ("RMSProp", tf.compat.v1.train.RMSPropOptimizer),
                                        ("Adafactor", adafactor.AdafactorOptimizer)])
def test_legacy_names_resolve(legacy, cls):
    with tf.Graph().as_default():
        opt = optimize.ConditionalOptimizer(legacy, 0.1, _hparams())
        assert isinstance(opt.optimizer, cls)


def test_unknown_optimizer_names_the_closest():
    with pytest.raises(registry.UnknownNameError, match="^adamm never registered with registry optimizers.*closest.*adam"):
        registry.optimizer("adamm")


def test_adafactor_slots_are_factored_for_matrices():
    with tf.Graph().as_default():
        matrix = tf.compat.v1.get_variable("matrix", initializer=tf.ones([3, 4]))
        bias = tf.compat.v1.get_variable("bias", initializer=tf.ones([4]))
        loss = tf.reduce_sum(tf.square(matrix)) + tf.reduce_sum(bias)
        opt = adafactor.adafactor_optimizer_from_hparams(_hparams(), 0.1)
        opt.minimize(loss)
        assert opt.get_slot(matrix, "vr").shape.as_list() == [3]
        assert opt.get_slot(matrix, "vc").shape.as_list() == [4]
        assert opt.get_slot(matrix, "v") is None
        assert opt.get_slot(bias, "v").shape.as_list() == [4]
        assert opt.get_slot(matrix, "m") is None  # beta1 = 0 keeps no first moment.

        unfactored = adafactor.AdafactorOptimizer(factored=False, beta1=0.9, learning_rate=0.1)
        unfactored.minimize(loss)
        assert unfactored.get_slot(matrix, "v").shape.as_list() == [3, 4]
        assert unfactored.get_slot(matrix, "m").shape.as_list() == [3, 4]


def _numpy_adafactor_step(x, g, lr, decay, clip=1.0, eps1=1e-30, eps2=1e-3):
    """One Adafactor step from zero moments, factored, beta1 = 0, relative step size."""
    g2 = g ** 2 + eps1
    vr = (1 - decay) * g2.mean(-1)
    vc = (1 - decay) * g2.mean(-2)
    v_hat = np.outer(vr / vr.mean(), vc)
    u = g / np.sqrt(v_hat)
    u /= max(1.0, np.sqrt((u ** 2).mean()) / clip)
    scale = lr * max(np.sqrt((x ** 2).mean()), eps2)
    return x - scale * u, vr, vc


def test_adafactor_step_matches_the_formulas():
    x0 = _RNG.randn(3, 4).astype(np.float32)
    g = _RNG.randn(3, 4).astype(np.float32)
    with tf.Graph().as_default():
        global_step = tf.compat.v1.train.get_or_create_global_step()
        x = tf.compat.v1.get_variable("x", initializer=tf.constant(x0))
        hp = _hparams(optimizer_adafactor_decay_type="pow")
        opt = adafactor.adafactor_optimizer_from_hparams(hp, 0.05)
        step = opt.apply_gradients([(tf.constant(g), x)], global_step=global_step)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            global_step.load(3, sess)  # decay = 1 - (3 + 1)**-0.8
            sess.run(step)
            got_x, got_vr, got_vc = sess.run([x, opt.get_slot(x, "vr"), opt.get_slot(x, "vc")])
    decay = 1 - 4.0 ** -0.8
    want_x, want_vr, want_vc = _numpy_adafactor_step(x0.astype(np.float64), g, 0.05, decay)
    np.testing.assert_allclose(got_vr, want_vr, rtol=1e-5)
    np.testing.assert_allclose(got_vc, want_vc, rtol=1e-5)
    np.testing.assert_allclose(got_x, want_x, rtol=1e-5, atol=1e-6)


def test_adafactor_decay_rates():
    with tf.Graph().as_default():
        global_step = tf.compat.v1.train.get_or_create_global_step()
        adam_decay = adafactor.adafactor_decay_rate_adam(0.9)
        pow_decay = adafactor.adafactor_decay_rate_pow(0.5)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            assert sess.run(adam_decay) == pytest.approx(0.0)
            assert sess.run(pow_decay) == pytest.approx(0.0)
            global_step.load(3, sess)  # t = 4
            assert sess.run(adam_decay) == pytest.approx(0.9 * (1 - 0.9 ** 3) / (1 - 0.9 ** 4))
            assert sess.run(pow_decay) == pytest.approx(1 - 4 ** -0.5)


def test_multistep_adam_equals_adam_on_mean_gradients():
    grads = _RNG.randn(8, 3, 2).astype(np.float32)
    with tf.Graph().as_default():
        global_step = tf.compat.v1.train.get_or_create_global_step()
        w = tf.compat.v1.get_variable("w", initializer=tf.ones([3, 2]))
        g = tf.compat.v1.placeholder(tf.float32, [3, 2])
        opt = multistep_optimizer.MultistepAdamOptimizer(0.1, beta1=0.8, beta2=0.9, n=4)
        step = opt.apply_gradients([(g, w)], global_step=global_step)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            history = []
            for k in range(8):
                sess.run(step, {g: grads[k]})
                history.append(sess.run(w))
            steps_done = sess.run(global_step)
            accumulator = sess.run(opt.get_slot(w, "grad_acc"))
            beta_powers = sess.run(opt._get_beta_accumulators())  # T2T's AdamOptimizer method
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", initializer=tf.ones([3, 2]))
        g = tf.compat.v1.placeholder(tf.float32, [3, 2])
        step = tf.compat.v1.train.AdamOptimizer(0.1, beta1=0.8, beta2=0.9).apply_gradients(
            [(g, w)])
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(step, {g: grads[:4].mean(0)})
            adam_1 = sess.run(w)
            sess.run(step, {g: grads[4:].mean(0)})
            adam_2 = sess.run(w)
    for k in range(3):  # Accumulating only.
        np.testing.assert_array_equal(history[k], np.ones([3, 2]))
    np.testing.assert_allclose(history[3], adam_1, rtol=1e-6)
    np.testing.assert_allclose(history[4], adam_1, rtol=1e-6)
    np.testing.assert_allclose(history[7], adam_2, rtol=1e-6)
    assert steps_done == 8  # The global step counts every call.
    np.testing.assert_allclose(beta_powers, [0.8 ** 3, 0.9 ** 3], rtol=1e-6)  # 2 updates
    np.testing.assert_array_equal(accumulator, np.zeros([3, 2]))


def test_accumulate_steps_wrap_any_optimizer():
    grads = _RNG.randn(4, 2).astype(np.float32)
    hp = _hparams(optimizer="momentum", optimizer_multistep_accumulate_steps=2)
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", initializer=tf.zeros([2]))
        g = tf.compat.v1.placeholder(tf.float32, [2])
        opt = optimize.ConditionalOptimizer(hp.optimizer, 0.5, hp)
        assert isinstance(opt.optimizer, multistep_optimizer.MultistepOptimizer)
        assert opt.optimizer.n == 2
        step = opt.apply_gradients([(g, w)])
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            values = []
            for k in range(4):
                sess.run(step, {g: grads[k]})
                values.append(sess.run(w))
    # Momentum 0.9 on the means m1 = mean(g0, g1), m2 = mean(g2, g3):
    # w1 = -0.5 m1;  w2 = w1 - 0.5 (0.9 m1 + m2).
    m1, m2 = grads[:2].mean(0), grads[2:].mean(0)
    np.testing.assert_array_equal(values[0], np.zeros(2))
    np.testing.assert_allclose(values[1], -0.5 * m1, rtol=1e-6)
    np.testing.assert_allclose(values[3], -0.5 * m1 - 0.5 * (0.9 * m1 + m2), rtol=1e-6)


def test_multistep_adam_through_optimize():
    hp = _hparams(optimizer="multistep_adam", optimizer_multistep_accumulate_steps=2)
    with tf.Graph().as_default():
        opt = optimize.ConditionalOptimizer(hp.optimizer, 0.1, hp)
        assert isinstance(opt.optimizer, multistep_optimizer.MultistepAdamOptimizer)
        assert opt.optimizer.n == 2
    first, last = _train(hp, steps=60, lr=0.1)
    assert last < 0.5 * first


def _linear_loss_graph(hp, lr=1.0, coefficients=(6.0, 8.0)):
    """loss = c . w with w = 0: gradient c. Returns (w, loss, train_op)."""
    w = tf.compat.v1.get_variable("w", initializer=tf.zeros([2]))
    loss = tf.reduce_sum(tf.constant(coefficients) * w)
    return w, loss, optimize.optimize(loss, tf.constant(lr), hp)


def test_gradient_clipping_caps_the_global_norm():
    hp = _hparams(optimizer="sgd", clip_grad_norm=1.0)
    with tf.Graph().as_default():
        w, _, train_op = _linear_loss_graph(hp)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(train_op)
            np.testing.assert_allclose(sess.run(w), [-0.6, -0.8], rtol=1e-6)
    hp = _hparams(optimizer="sgd", clip_grad_norm=0.0)
    with tf.Graph().as_default():
        w, _, train_op = _linear_loss_graph(hp)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(train_op)
            np.testing.assert_allclose(sess.run(w), [-6.0, -8.0], rtol=1e-6)


def test_summaries_include_learning_rate_and_gradient_norm():
    hp = _hparams(optimizer="sgd", clip_grad_norm=1.0)
    with tf.Graph().as_default():
        _, _, train_op = _linear_loss_graph(hp, lr=0.25)
        merged = tf.compat.v1.summary.merge_all()
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            summary = tf.compat.v1.Summary.FromString(sess.run(merged))
            sess.run(train_op)
    values = {v.tag: v.simple_value for v in summary.value}
    assert values["learning_rate"] == pytest.approx(0.25)
    assert values["global_norm/gradient_norm"] == pytest.approx(10.0)  # Before clipping.


def test_train_op_evaluates_to_loss_plus_weight_decay_and_steps_global_step():
    hp = _hparams(optimizer="sgd", weight_decay=0.1, clip_grad_norm=0.0)
    with tf.Graph().as_default():
        kernel = tf.compat.v1.get_variable("dense/kernel", initializer=tf.constant([[1.0, 2.0]]))
        bias = tf.compat.v1.get_variable("dense/bias", initializer=tf.constant([3.0]))
        loss = tf.reduce_sum(kernel) + tf.reduce_sum(bias)
        train_op = optimize.optimize(loss, 0.5, hp)
        global_step = tf.compat.v1.train.get_global_step()
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            # 6 + 0.1 * (1 + 4) / 2; the bias is not decayed.
            assert sess.run(train_op) == pytest.approx(6.25)
            assert sess.run(global_step) == 1
            # d/dkernel = 1 + 0.1 * kernel; d/dbias = 1.
            np.testing.assert_allclose(sess.run(kernel), [[1 - 0.5 * 1.1, 2 - 0.5 * 1.2]])
            np.testing.assert_allclose(sess.run(bias), [2.5])


def test_weight_decay_value():
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", initializer=tf.constant([[1.0, 2.0]]))
        b = tf.compat.v1.get_variable("layer/bias", initializer=tf.constant([3.0]))
        decay = optimize.weight_decay(0.1, [w, b])
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            assert sess.run(decay) == pytest.approx(0.25)
    assert optimize.weight_decay(0.0, []) == 0.0


def test_gradient_and_weight_noise_move_variables_without_gradient_signal():
    hp = _hparams(optimizer="sgd", grad_noise_scale=1.0, weight_noise=1.0)
    with tf.Graph().as_default():
        with tf.compat.v1.variable_scope("model/body"):
            w = tf.compat.v1.get_variable("w", initializer=tf.zeros([50]))
        train_op = optimize.optimize(tf.reduce_sum(0.0 * w), 1.0, hp)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(train_op)
            moved = sess.run(w)
    assert np.all(np.isfinite(moved))
    assert np.abs(moved).max() > 0.1  # Gradient noise of scale 1 times lr 1.
    assert np.abs(moved).max() <= 2.0 + 1e-3  # Truncated normal: within 2 std (+ tiny).


def test_zero_grads_fills_missing_gradients():
    hp = _hparams(optimizer="sgd", optimizer_zero_grads=True)
    with tf.Graph().as_default():
        used = tf.compat.v1.get_variable("used", initializer=tf.ones([2]))
        unused = tf.compat.v1.get_variable("unused", initializer=tf.ones([3]))
        opt = optimize.ConditionalOptimizer("sgd", 0.1, hp)
        grads = dict((v.name, g) for g, v in opt.compute_gradients(tf.reduce_sum(used)))
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(grads["unused:0"]), np.zeros(3))


def test_no_gradient_at_all_is_a_clear_error():
    with tf.Graph().as_default():
        tf.compat.v1.get_variable("w", initializer=tf.zeros([2]))
        with pytest.raises(ValueError, match="does not depend on any trainable variable"):
            optimize.optimize(tf.constant(1.0), 0.1, _hparams())


def test_adam_w_decays_weights_without_gradient():
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", initializer=tf.constant([2.0, -4.0]))
        opt = optimize.adam_w(0.5, _hparams())
        step = opt.apply_gradients([(tf.zeros([2]), w)])
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(step)
            # Decay 0.01 * lr = 0.005; Adam's step on a zero gradient is 0.
            np.testing.assert_allclose(sess.run(w), [2.0 * 0.995, -4.0 * 0.995], rtol=1e-6)


def test_float16_activations_use_loss_scaling():
    hp = _hparams(optimizer="adam", activation_dtype="float16")
    with tf.Graph().as_default():
        opt = optimize.ConditionalOptimizer("adam", 0.1, hp)
        assert isinstance(opt.optimizer,
                          tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer)
    first, last = _train(hp, steps=40, lr=0.1)
    assert last < 0.5 * first


@pytest.mark.parametrize("name", optimize.INITIALIZERS)
def test_variable_initializers(name):
    hp = _hparams(initializer=name, initializer_gain=1.5)
    with tf.Graph().as_default():
        init = optimize.get_variable_initializer(hp)
        w = tf.compat.v1.get_variable("w", shape=[64, 64], initializer=init)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            value = sess.run(w)
    if name == "orthogonal":
        np.testing.assert_allclose(value.T @ value, 2.25 * np.eye(64), atol=1e-4)
    elif name == "uniform":
        assert np.abs(value).max() <= 0.15
        assert np.abs(value).max() > 0.12
    else:
        # fan_avg variance scaling with scale 1.5 (Glorot: scale 1): var = scale / 64.
        scale = 1.0 if name == "xavier" else 1.5
        assert value.var() == pytest.approx(scale / 64, rel=0.15)


def test_unknown_initializer_and_empty_initializer():
    assert optimize.get_variable_initializer(_hparams(initializer="")) is None
    with pytest.raises(ValueError, match="'glorot'.*orthogonal"):
        optimize.get_variable_initializer(_hparams(initializer="glorot"))


def test_log_variable_sizes_and_summaries():
    with tf.Graph().as_default():
        a = tf.compat.v1.get_variable("a", shape=[3, 4])
        b = tf.compat.v1.get_variable("b", shape=[4])
        assert optimize.log_variable_sizes([a, b], verbose=True) == 16
        assert optimize.log_variable_sizes() == 16
        assert optimize.log_variable_sizes([]) == 0
        optimize.summarize_variables([a, b])
        tags = [op.name for op in tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)]
        assert any("training_variables/a_0" in t for t in tags)
        assert any("training_variables/b_0" in t for t in tags)


@pytest.mark.estimator
def test_inside_an_estimator_model_fn(tmp_path):
    """Adafactor with accumulation over 2 steps, trained by tf.estimator, checkpointed."""
    def model_fn(features, labels, mode):
        hp = _hparams(optimizer="adafactor", optimizer_multistep_accumulate_steps=2)
        w = tf.compat.v1.get_variable("body/w", initializer=tf.fill([3, 1], 0.5))
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        train_op = optimize.optimize(loss, tf.constant(0.1), hp)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(8).repeat()

    estimator = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(input_fn, steps=6)
    assert estimator.get_variable_value("global_step") == 6
    assert not np.allclose(estimator.get_variable_value("body/w"), 0.5)
    names = estimator.get_variable_names()
    # Accumulator and Adafactor's factored moments (vr [3], vc [1]) are checkpointed.
    slot_shapes = sorted(estimator.get_variable_value(n).shape for n in names
                         if n.startswith("body/w/"))
    assert slot_shapes == [(1,), (3,), (3, 1)]
