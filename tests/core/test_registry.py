"""Registry: decorator forms, default names, duplicates, closest-name errors, _rev/_copy."""
import pytest

from t2t.core import registry
from t2t.core.hparam import HParams


@pytest.fixture
def fresh_registries(monkeypatch):
    """Swap in empty registries so tests don't pollute the global ones."""
    for attr, kwargs in [
        ("models", dict(on_set=registry._on_model_set)),
        ("hparams", dict(validator=registry._hparams_validator,
                         value_transformer=registry._call_hparams_fn)),
        ("problems", dict(validator=registry._problem_name_validator,
                          on_set=registry._on_problem_set)),
    ]:
        fresh = registry.Registry(attr, **kwargs)
        fresh._ensure_loaded = lambda: None
        monkeypatch.setattr(registry.Registries, attr, fresh)
    yield


@pytest.mark.parametrize("name,expected", [
    ("LSTMSeq2seq", "lstm_seq2seq"), ("SliceNet", "slice_net"), ("Transformer", "transformer"),
    ("AlgorithmicReverseBinary40", "algorithmic_reverse_binary40"),
    ("TranslateEndeWmt32k", "translate_ende_wmt32k"),
])
def test_camelcase_to_snakecase(name, expected):
    assert registry.camelcase_to_snakecase(name) == expected


def test_register_model_default_and_explicit_names(fresh_registries):
    @registry.register_model
    class LSTMSeq2seq:
        pass

    @registry.register_model("my_net")
    class Other:
        pass

    @registry.register_model()
    class ThirdOne:
        pass

    assert registry.model("lstm_seq2seq") is LSTMSeq2seq
    assert LSTMSeq2seq.REGISTERED_NAME == "lstm_seq2seq"
    assert registry.model("my_net") is Other
    assert registry.list_models() == ["lstm_seq2seq", "my_net", "third_one"]


def test_duplicate_name_is_an_error(fresh_registries):
    @registry.register_hparams
    def my_hp():
        return HParams(a=1)

    with pytest.raises(KeyError, match="already registered"):
        registry.register_hparams("my_hp")(lambda: HParams())


def test_hparams_lookup_calls_function_each_time(fresh_registries):
    @registry.register_hparams
    def small():
        return HParams(hidden_size=8)

    first = registry.hparams("small")
    first.hidden_size = 99
    assert registry.hparams("small").hidden_size == 8


def test_hparams_function_returning_none_is_an_error(fresh_registries):
    @registry.register_hparams
    def broken():
        return None

    with pytest.raises(TypeError, match="returned None"):
        registry.hparams("broken")


def test_unknown_name_lists_closest(fresh_registries):
    @registry.register_model
    class Transformer:
        pass

    @registry.register_model
    class TransformerEncoder:
        pass

    with pytest.raises(registry.UnknownNameError) as info:
        registry.model("transfomer")
    message = str(info.value)
    assert "transfomer never registered with registry models" in message
    assert "transformer" in message
    assert "\n" not in message
    assert isinstance(info.value, KeyError)


def test_problem_rev_and_copy_suffixes(fresh_registries):
    @registry.register_problem
    class MyProblem:
        def __init__(self, was_reversed=False, was_copy=False):
            self.was_reversed, self.was_copy = was_reversed, was_copy

    assert MyProblem.name == "my_problem"
    p = registry.problem("my_problem_rev")
    assert (p.was_reversed, p.was_copy) == (True, False)
    p = registry.problem("my_problem_copy_rev")
    assert (p.was_reversed, p.was_copy) == (True, True)
    with pytest.raises(registry.UnknownNameError, match="my_problm"):
        registry.problem("my_problm_rev")


def test_parse_problem_name():
    assert registry.parse_problem_name("a_b") == ("a_b", False, False)
    assert registry.parse_problem_name("a_rev") == ("a", True, False)
    assert registry.parse_problem_name("a_copy") == ("a", False, True)
    assert registry.parse_problem_name("a_copy_rev") == ("a", True, True)
    with pytest.raises(ValueError):
        registry.parse_problem_name("a_rev_rev")
    assert registry.get_problem_name("a", was_reversed=True, was_copy=True) == "a_copy_rev"


def test_problem_name_may_not_end_with_suffix(fresh_registries):
    with pytest.raises(ValueError, match="_rev"):
        @registry.register_problem("bad_rev")
        class Bad:
            pass


def test_builtin_lookup_is_lazy():
    # basic_1 is registered by t2t.layers.common_hparams, imported on demand.
    hp = registry.hparams("basic_1")
    assert hp.batch_size == 4096
    assert "basic_1" in registry.list_hparams()
    assert "basic1" in registry.list_ranged_hparams()


def test_help_string_lists_sections():
    text = registry.help_string()
    for title in ("Problems:", "Models:", "HParams:", "RangedHParams:"):
        assert title in text
    assert "basic_1" in text
