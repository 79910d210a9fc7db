"""Learning-rate schedules: values at several global steps against T2T's formulas."""
import math

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from t2t.layers import common_hparams
from t2t.optim import learning_rate


def _hparams(**overrides):
    hp = common_hparams.basic_params1()
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def _values(build_fn, steps):
    """Evaluate the tensor from `build_fn()` with the global step set to each of `steps`."""
    with tf.Graph().as_default():
        global_step = tf.compat.v1.train.get_or_create_global_step()
        value = build_fn()
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            out = []
            for step in steps:
                global_step.load(step, sess)
                out.append(float(sess.run(value)))
    return np.array(out)


def test_legacy_noam_equals_paper_schedule():
    hp = _hparams(learning_rate=0.1, learning_rate_warmup_steps=4000, hidden_size=512,
                  learning_rate_decay_scheme="noam", optimizer="adam")
    steps = [0, 1, 999, 3999, 4000, 15999]
    got = _values(lambda: learning_rate.learning_rate_schedule(hp), steps)
    # 0.1 * 5000 * 0.002 * 512**-0.5 * min((s+1) * 4000**-1.5, (s+1)**-0.5), worked out.
    expected = [1.746928107e-07, 3.493856215e-07, 1.746928107e-04, 6.987712430e-04,
                6.986839129e-04, 3.493856215e-04]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    # The peak is at the end of warmup.
    assert got.argmax() == 3


def test_transformer_base_schedule_constant_2():
    hp = _hparams(learning_rate_schedule="constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size",
                  learning_rate_constant=2.0, learning_rate_warmup_steps=8000, hidden_size=512)
    got = _values(lambda: learning_rate.learning_rate_schedule(hp), [0, 4000, 8000, 32000])
    # 2 * min(1, s/8000) * max(s, 8000)**-0.5 * 512**-0.5.
    np.testing.assert_allclose(got, [0.0, 4.941058844e-04, 9.882117688e-04, 4.941058844e-04],
                               rtol=1e-5, atol=1e-12)


def test_legacy_cosine_with_exp_warmup_and_sgd():
    hp = _hparams(learning_rate=0.1, learning_rate_warmup_steps=100, optimizer="sgd",
                  learning_rate_decay_scheme="cosine", learning_rate_cosine_cycle_steps=1000)
    steps = [0, 50, 100, 1000, 1500, 2000, 2500]
    got = _values(lambda: learning_rate.learning_rate_schedule(hp), steps)
    # Warmup: 0.01 ** ((100 - s) / 100); then 0.5 * (1 + cos(pi * p / 1000)) where p goes
    # 0 -> 1000 -> 0 over each 2000 steps.
    expected = [0.1 * 0.01, 0.1 * 0.1, 0.1 * 0.5 * (1 + math.cos(math.pi * 0.1)), 0.0,
                0.1 * 0.5, 0.1, 0.1 * 0.5]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("scheme,expected_fn", [
    ("none", lambda s: 1.0),
    ("exp", lambda s: 0.5 ** ((s - 100) / 1000)),
    ("sqrt", lambda s: 500.0 / math.sqrt(max(s - 100, 1))),
    ("cyclelinear10x", lambda s: (1 - abs((s % 200 - 100) / 100) + 0.1) * 3.0),
])
def test_legacy_decay_schemes_after_warmup(scheme, expected_fn):
    hp = _hparams(learning_rate=1.0, learning_rate_warmup_steps=100, optimizer="momentum",
                  learning_rate_decay_scheme=scheme, learning_rate_decay_rate=0.5,
                  learning_rate_decay_steps=1000)
    steps = [100, 150, 350, 1100, 2100]
    got = _values(lambda: learning_rate.learning_rate_schedule(hp), steps)
    np.testing.assert_allclose(got, [expected_fn(s) for s in steps], rtol=1e-4)


def test_legacy_adam_correction_also_for_legacy_name():
    steps = [500]
    for name in ("adam", "Adam", "multistep_adam"):
        hp = _hparams(learning_rate=0.5, optimizer=name, learning_rate_warmup_steps=100)
        got = _values(lambda: learning_rate.legacy_learning_rate_schedule(hp), steps)
        np.testing.assert_allclose(got, [0.5 * 0.002], rtol=1e-6)
    hp = _hparams(learning_rate=0.5, optimizer="adafactor", learning_rate_warmup_steps=100)
    got = _values(lambda: learning_rate.legacy_learning_rate_schedule(hp), steps)
    np.testing.assert_allclose(got, [0.5], rtol=1e-6)


def test_exp_decay_staircase_and_warmup_floor():
    hp = _hparams(learning_rate_schedule="exp_decay", learning_rate_warmup_steps=100,
                  learning_rate_decay_steps=1000, learning_rate_decay_rate=0.5,
                  learning_rate_decay_staircase=True)
    got = _values(lambda: learning_rate.learning_rate_schedule(hp), [0, 100, 1099, 1100, 2600])
    np.testing.assert_allclose(got, [1.0, 1.0, 1.0, 0.5, 0.25], rtol=1e-6)


def test_cosine_factors():
    hp = _hparams(learning_rate_warmup_steps=100, learning_rate_decay_steps=1000)
    hp.add_hparam("train_steps", 1100)
    steps = [0, 100, 600, 1100]

    def factor(name):
        return _values(lambda: learning_rate.learning_rate_factor(
            name, learning_rate._global_step(hp), hp), steps)

    # cosdecay: 1 during warmup, then 0.5 * (1 + cos(pi * s / 1000)).
    np.testing.assert_allclose(
        factor("cosdecay"), [1.0, 1.0, 0.5 * (1 + math.cos(math.pi * 0.6)),
                             0.5 * (1 + math.cos(math.pi * 1.1))], rtol=1e-5)
    # single cycle: 1 at the end of warmup, 0 at train_steps.
    np.testing.assert_allclose(factor("single_cycle_cos_decay"), [1.0, 1.0, 0.5, 0.0],
                               atol=1e-6)
    # multi cycle: a half period every decay_steps after warmup.
    np.testing.assert_allclose(factor("multi_cycle_cos_decay"), [1.0, 1.0, 0.5, 0.0],
                               atol=1e-6)


def test_linear_decay_and_rsqrt_normalized():
    hp = _hparams(learning_rate_warmup_steps=100, learning_rate_decay_steps=400,
                  learning_rate_schedule="linear_decay*rsqrt_normalized_decay")
    hp.add_hparam("train_steps", 1000)
    got = _values(lambda: learning_rate.learning_rate_schedule(hp), [0, 100, 400, 800, 1000])
    # linear_decay: min(1, max(0, (1000 - s) / 400)); rsqrt_normalized: sqrt(100/max(s, 100)).
    expected = [1.0, 1.0, 1.0 * math.sqrt(100 / 400), 0.5 * math.sqrt(100 / 800), 0.0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)


def test_learning_rate_minimum_is_a_floor():
    hp = _hparams(learning_rate_schedule="constant*rsqrt_decay", learning_rate_constant=1.0,
                  learning_rate_warmup_steps=1)
    hp.learning_rate_minimum = 0.01
    got = _values(lambda: learning_rate.learning_rate_schedule(hp), [1, 100, 1000000])
    np.testing.assert_allclose(got, [1.0, 0.1, 0.01], rtol=1e-5)


def test_multistep_accumulation_divides_the_step():
    hp = _hparams(learning_rate_schedule="rsqrt_decay", learning_rate_warmup_steps=10,
                  optimizer_multistep_accumulate_steps=4)
    got = _values(lambda: learning_rate.learning_rate_schedule(hp), [400])
    np.testing.assert_allclose(got, [100 ** -0.5], rtol=1e-6)


def test_warmup_linear_and_exp():
    got = _values(lambda: learning_rate._learning_rate_warmup(200, "linear"), [0, 100, 200])
    np.testing.assert_allclose(got, [0.35, 0.675, 1.0], rtol=1e-6)
    got = _values(lambda: learning_rate._learning_rate_warmup(200), [0, 100, 200])
    np.testing.assert_allclose(got, [0.01, 0.1, 1.0], rtol=1e-5)
    got = _values(lambda: learning_rate._learning_rate_warmup(0), [7])
    np.testing.assert_allclose(got, [1.0])


def test_piecewise_scheme():
    hp = _hparams(learning_rate=1.0, optimizer="sgd", learning_rate_warmup_steps=0,
                  learning_rate_decay_scheme="piecewise")
    hp.add_hparam("learning_rate_boundaries", [100, 200])
    hp.add_hparam("learning_rate_multiples", [0.5, 0.1])
    got = _values(lambda: learning_rate.learning_rate_schedule(hp), [50, 150, 250])
    np.testing.assert_allclose(got, [1.0, 0.5, 0.1], rtol=1e-6)


def test_errors_name_the_problem():
    with tf.Graph().as_default():
        hp = _hparams(learning_rate_schedule="constant*linear_wramup")
        with pytest.raises(ValueError, match="linear_wramup.*linear_warmup"):
            learning_rate.learning_rate_schedule(hp)
        hp = _hparams(learning_rate_schedule="linear_decay")
        with pytest.raises(ValueError, match="train_steps.*add_hparam"):
            learning_rate.learning_rate_schedule(hp)
        hp = _hparams(learning_rate_decay_scheme="noma")
        with pytest.raises(ValueError, match="'noma'"):
            learning_rate.learning_rate_schedule(hp)
        hp = _hparams(learning_rate_decay_scheme="piecewise")
        with pytest.raises(ValueError, match="learning_rate_boundaries"):
            learning_rate.learning_rate_schedule(hp)


_FACTOR_VALUES = {  # At step 400 with warmup 100, hidden 64, constant 3.0.
    "constant": 3.0, "linear_warmup": 1.0, "rsqrt_decay": 400 ** -0.5,
    "rsqrt_normalized_decay": 0.5, "rsqrt_hidden_size": 64 ** -0.5}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(sorted(_FACTOR_VALUES)),
                          st.sampled_from(["", " ", "  "]), st.sampled_from(["", " "])),
                max_size=4),
       st.booleans())
def test_schedule_string_is_the_product_of_its_factors(factors, trailing_star):
    schedule = "*".join(left + name + right for name, left, right in factors)
    if trailing_star:
        schedule += "*"  # Empty names are skipped.
    hp = _hparams(learning_rate_schedule=schedule, learning_rate_constant=3.0,
                  learning_rate_warmup_steps=100, hidden_size=64)
    got = _values(lambda: learning_rate.learning_rate_schedule(hp), [400])
    expected = float(np.prod([_FACTOR_VALUES[name] for name, _, _ in factors]))
    np.testing.assert_allclose(got, [expected], rtol=1e-5)
