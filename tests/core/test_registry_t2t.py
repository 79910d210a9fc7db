"""The registry called as T2T 1.15.7's own code and tests call it, with T2T's error words
(code that matches on "never registered", "already registered", "must take ... arguments"
or "is None" keeps working) followed by t2t's detail."""
import pytest

from t2t.utils import registry


def test_unknown_names_say_never_registered_and_the_closest():
    with pytest.raises(KeyError, match="never registered") as caught:
        registry.model("transformr")
    assert str(caught.value).startswith("transformr never registered with registry models")
    assert "closest registered names: transformer" in str(caught.value)
    with pytest.raises(KeyError, match="never registered"):
        registry.optimizer("not_registered_optimizer")
    with pytest.raises(KeyError, match="never registered"):
        registry.hparams("not_registered")
    with pytest.raises(KeyError, match="never registered"):
        registry.ranged_hparams("not_registered")


def test_duplicate_registration_says_already_registered():
    @registry.register_optimizer
    def t2t_test_dup_optimizer(learning_rate, hparams):
        return learning_rate, hparams

    with pytest.raises(KeyError, match="^key t2t_test_dup_optimizer already registered in "
                                       "registry optimizers .*choose another name"):
        @registry.register_optimizer("t2t_test_dup_optimizer")
        def another(learning_rate, hparams):
            return learning_rate, hparams


@pytest.mark.parametrize("name,fn", [
    ("OneArgs", lambda x: 4),
    ("ThreeArgs", lambda x, y, z: 4),
    ("NArgs", lambda *args: 4),
    ("Kwargs", lambda **kargs: 4),
    ("TwoAndKwargs", lambda a, b, **kargs: 4),
])
def test_optimizers_must_take_two_arguments(name, fn):
    with pytest.raises(ValueError, match="must take .* arguments") as caught:
        registry.Registries.optimizers.register(name)(fn)
    assert str(caught.value).startswith("Registered optimizer functions must take exactly two "
                                         "arguments: learning_rate (float) and hparams")
    assert name not in registry.Registries.optimizers


def test_ranged_hparams_must_take_a_single_argument():
    with pytest.raises(ValueError, match="must take a single argument") as caught:
        registry.register_ranged_hparams("t2t_test_two_args_range")(lambda a, b: None)
    assert "'t2t_test_two_args_range' takes 2" in str(caught.value)


def test_hparams_function_returning_none_is_none():
    @registry.register_hparams
    def t2t_test_returns_none():
        return None

    with pytest.raises(TypeError, match="HParams t2t_test_returns_none is None. Make sure the "
                                        "registered function returns the HParams object"):
        registry.hparams("t2t_test_returns_none")


def test_values_must_be_callable():
    with pytest.raises(ValueError, match="^value must be callable"):
        registry.Registries.models.register("t2t_test_not_callable")(42)


def test_problem_name_rules_keep_t2t_words():
    with pytest.raises(ValueError, match="Invalid problem name ende_rev_rev: multiple '_rev' "
                                         "instances"):
        registry.parse_problem_name("ende_rev_rev")
    with pytest.raises(ValueError, match="`base_name` cannot end in '_rev' or '_copy'"):
        registry.get_problem_name("ende_rev")
    with pytest.raises(KeyError, match="Invalid problem name: cannot end in _rev or _copy"):
        registry.Registries.problems.register("t2t_test_problem_rev")(type("P", (), {}))
    assert registry.parse_problem_name("ende_copy_rev") == registry.ProblemSpec("ende", True, True)


@pytest.mark.parametrize("legacy, name", [("SGD", "sgd"), ("RMSProp", "rms_prop"),
                                          ("Adagrad", "adagrad"), ("AdamW", "adam_w")])
def test_optimizer_legacy_camelcase_names(legacy, name):
    # T2T 1.15.7's registry.optimizer took UpperCamelCase names as their snake_case key.
    assert registry.optimizer(legacy) is registry.optimizer(name)


def test_optimizer_unknown_camelcase_name_is_still_unknown():
    with pytest.raises(KeyError, match="NotAnOptimizer"):
        registry.optimizer("NotAnOptimizer")
