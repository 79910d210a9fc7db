"""RangedHParams as Optuna suggestions; T2T's Transformer ranges."""
import optuna
import pytest

from t2t.core import errors, registry
from t2t.core.hparam import HParams
from t2t.layers.common_hparams import RangedHParams
from t2t.tuning import search_space


def small_ranges():
    rhp = RangedHParams()
    rhp.set_float("learning_rate", 0.01, 1.0, scale=rhp.LOG_SCALE)
    rhp.set_float("dropout", 0.0, 0.5)
    rhp.set_float("keep_prob", 0.01, 1.0, scale=rhp.REVERSE_LOG_SCALE)
    rhp.set_int("num_hidden_layers", 1, 4)
    rhp.set_discrete("hidden_size", [32, 64, 128], scale=rhp.LOG_SCALE)
    rhp.set_categorical("optimizer", ["adam", "sgd"])
    return rhp


def test_parameters_are_sorted_with_their_kinds():
    assert [(name, kind) for name, kind, _ in search_space.parameters(small_ranges())] == [
        ("dropout", "float"), ("hidden_size", "discrete"), ("keep_prob", "float"),
        ("learning_rate", "float"), ("num_hidden_layers", "int"),
        ("optimizer", "categorical")]


def test_suggestions_stay_in_range_and_use_log_scales():
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    seen = []
    for _ in range(30):
        trial = study.ask()
        values = search_space.suggest(trial, small_ranges())
        seen.append(values)
        study.tell(trial, 0.0)
        assert 0.01 <= values["learning_rate"] <= 1.0
        assert 0.0 <= values["dropout"] <= 0.5
        assert 0.01 <= values["keep_prob"] <= 1.0
        assert values["num_hidden_layers"] in (1, 2, 3, 4)
        assert values["hidden_size"] in (32, 64, 128)
        assert values["optimizer"] in ("adam", "sgd")
    distributions = study.trials[0].distributions
    assert distributions["learning_rate"].log and not distributions["dropout"].log
    # Reverse log: dense near the maximum (1.01 - x, x log-uniform: median near 0.91).
    kept = sorted(v["keep_prob"] for v in seen)
    assert kept[len(kept) // 2] > 0.7


def test_fixed_trial_and_the_hparams_string():
    trial = optuna.trial.FixedTrial({
        "learning_rate": 0.25, "dropout": 0.1, "keep_prob__reverse_log": 0.01,
        "num_hidden_layers": 2, "hidden_size": 64, "optimizer": "sgd"})
    values = search_space.suggest(trial, small_ranges())
    assert values["keep_prob"] == pytest.approx(1.0)
    assert search_space.hparams_string(values) == (
        "dropout=0.1,hidden_size=64,keep_prob=%r,learning_rate=0.25,num_hidden_layers=2,"
        "optimizer=sgd" % values["keep_prob"])
    # The string is what --hparams parses.
    hp = HParams(dropout=0.0, hidden_size=8, learning_rate=1.0, num_hidden_layers=1,
                 optimizer="adam", keep_prob=0.5)
    hp.parse(search_space.hparams_string(values))
    assert (hp.hidden_size, hp.optimizer, hp.learning_rate) == (64, "sgd", 0.25)


def test_log_scale_needs_a_positive_minimum():
    rhp = RangedHParams()
    rhp.set_float("weight_decay", 0.0, 1.0, scale=rhp.LOG_SCALE)
    with pytest.raises(errors.UserError, match="log scale needs a minimum above 0"):
        search_space.suggest(optuna.trial.FixedTrial({"weight_decay": 0.5}), rhp)


def test_transformer_ranges_are_registered_as_t2t_defines_them():
    for name in ("transformer_base_range", "transformer_tiny_tpu_range",
                 "transformer_tpu_range", "basic1"):
        assert name in registry.list_ranged_hparams()
    rhp = search_space.ranged_hparams_by_name("transformer_base_range")
    specs = {s["parameterName"]: s for s in rhp.to_parameter_specs()}
    assert specs["learning_rate"] == {"parameterName": "learning_rate", "type": "DOUBLE",
                                      "minValue": 0.3, "maxValue": 3.0,
                                      "scaleType": "UNIT_LOG_SCALE"}
    assert specs["learning_rate_warmup_steps"]["discreteValues"] == [1000, 2000, 4000, 8000,
                                                                     16000]
    assert sorted(specs) == ["initializer_gain", "learning_rate", "learning_rate_warmup_steps",
                             "optimizer_adam_beta1", "optimizer_adam_beta2", "weight_decay"]
    tpu = search_space.ranged_hparams_by_name("transformer_tpu_range")
    assert tpu.float_params["weight_decay"][1:3] == (0.0, 2.0)


def test_fix_select_params_fixes_names_to_their_values():
    rhp = search_space.ranged_hparams_by_name(
        "transformer_tiny_tpu_range", fixed=HParams(learning_rate=0.5))
    assert rhp._discrete_params["learning_rate"] == ("learning_rate", [0.5], None)
    assert "learning_rate" not in rhp.float_params
    values = search_space.suggest(optuna.trial.FixedTrial({"weight_decay": 1.0}), rhp)
    assert values == {"learning_rate": 0.5, "weight_decay": 1.0}


def test_remove_and_read_only_views():
    rhp = RangedHParams()
    rhp.set_float("dropout", 0.0, 0.5)
    rhp.set_discrete("hidden_size", [8, 32])
    assert dict(rhp.float_params) == {"dropout": ("dropout", 0.0, 0.5, None)}
    with pytest.raises(TypeError):
        rhp.float_params["x"] = ("x", 0.0, 1.0, None)
    rhp.remove("dropout")
    rhp.remove("never_set")
    assert [name for name, _, _ in search_space.parameters(rhp)] == ["hidden_size"]
