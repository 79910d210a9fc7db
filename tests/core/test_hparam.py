"""HParams: T2T-compatible API, typed parsing, JSON round trip."""
import pytest
from hypothesis import given, strategies as st

from t2t.core import hparam
from t2t.core.hparam import HParams
from t2t.layers import common_hparams


def test_parse_types_and_lists():
    hp = HParams(a=1, b=0.5, c="x", d=[1, 2], e=True, f=[0.5])
    hp.parse("a=3,b=2,c=name,d=[4,5,6],e=false,f=[1,2.5]")
    assert (hp.a, hp.b, hp.c, hp.d, hp.e, hp.f) == (3, 2.0, "name", [4, 5, 6], False, [1.0, 2.5])
    assert isinstance(hp.b, float)


def test_parse_index_assignment():
    hp = HParams(d=[1, 2, 3])
    hp.parse("d[1]=7")
    assert hp.d == [1, 7, 3]


@pytest.mark.parametrize("text,match", [
    # T2T's words first (code matches on them), then what to do.
    ("zz=1", "^Unknown hyperparameter type for zz; no hparam has a similar name"),
    ("a=1.5", "^Could not parse hparam 'a' of type 'int' with value '1.5'.*expected an int"),
    ("e=maybe", "^Could not parse hparam 'e' of type 'bool'.*expected true or false"),
    ("a=[1,2]", "^Must not pass a list for single-valued parameter: a"),
    ("d=3", "^Must pass a list for multi-valued parameter: d.*d=\\[3\\]"),
    ("a=1,a=2", "^Multiple assignments to variable 'a'.*give each name once"),
    ("a", "^Malformed hyperparameter value: a"),
    ("d[3]=1", "index 3 is out of range for its 1 elements"),
    ("a[0]=1", "holds a single value"),
])
def test_parse_errors_name_the_problem(text, match):
    hp = HParams(a=1, d=[1], e=True)
    with pytest.raises(ValueError, match=match):
        hp.parse(text)


def test_unknown_name_suggests_closest():
    hp = HParams(learning_rate=0.1)
    with pytest.raises(ValueError, match="closest names: learning_rate"):
        hp.parse("learning_rat=0.2")


def test_unknown_name_reads_as_unknown_for_a_person():
    # T2T's words stay in the message (code matches on them); the programs print
    # user_message, which does not read as a wrong type.
    hp = HParams(learning_rate=0.1, learning_rate_warmup_steps=100, hidden_size=8)
    with pytest.raises(hparam.UnknownHParamNameError) as caught:
        hp.parse("learning_rat=0.2")
    assert str(caught.value).startswith("Unknown hyperparameter type for learning_rat")
    assert caught.value.user_message() == (
        "unknown hyperparameter learning_rat; did you mean learning_rate, "
        "learning_rate_warmup_steps?")
    with pytest.raises(hparam.UnknownHParamNameError) as caught:
        hp.parse("zqxw=1")
    assert caught.value.user_message("decode hyperparameter") == (
        "unknown decode hyperparameter zqxw; no name is close (3 names, e.g. hidden_size, "
        "learning_rate, learning_rate_warmup_steps)")


def test_set_hparam_type_checked_int_to_float_ok():
    hp = HParams(lr=0.1, n=2)
    hp.set_hparam("lr", 1)
    assert hp.lr == 1.0 and isinstance(hp.lr, float)
    with pytest.raises(ValueError):
        hp.set_hparam("n", 2.5)


def test_none_valued_hparam_takes_parsed_type():
    hp = HParams(minimum=None)
    hp.parse("minimum=0.001")
    assert hp.minimum == 0.001


def test_add_del_get_contains_values():
    hp = HParams(a=1)
    hp.add_hparam("b", "x")
    with pytest.raises(ValueError, match="^Hyperparameter name is reserved: a .*set_hparam"):
        hp.add_hparam("a", 2)
    assert "b" in hp and hp.get("b") == "x" and hp.get("zz", 5) == 5
    hp.del_hparam("b")
    assert "b" not in hp
    assert hp.values() == {"a": 1}


def test_attribute_assignment_adds_or_changes():
    hp = HParams(a=1)
    hp.a = 2
    hp.new_one = "v"
    assert hp.values() == {"a": 2, "new_one": "v"}


def test_override_from_dict_and_json_round_trip():
    hp = common_hparams.basic_params1()
    hp.override_from_dict({"hidden_size": 128, "optimizer": "adafactor"})
    clone = common_hparams.basic_params1()
    clone.parse_json(hp.to_json())
    assert clone.values() == hp.values()
    assert clone.hidden_size == 128


T2T_ADDITIONS = ("token_batching",)


def test_basic_params1_has_t2t_defaults():
    hp = common_hparams.basic_params1()
    # T2T's 124 hparams plus t2t's own (docs/t2t_differences.md).
    assert len(hp.values()) == 124 + len(T2T_ADDITIONS)
    assert hp.token_batching == "buckets"
    expected = dict(batch_size=4096, dropout=0.2, clip_grad_norm=2.0, initializer="orthogonal",
                    initializer_gain=1.5, label_smoothing=0.1, optimizer_adam_epsilon=1e-6,
                    optimizer_adam_beta1=0.85, optimizer_adam_beta2=0.997,
                    learning_rate_schedule="legacy", learning_rate_warmup_steps=100,
                    learning_rate=0.1, layer_postprocess_sequence="dan",
                    min_length_bucket=8, length_bucket_step=1.1, norm_epsilon=1e-6,
                    learning_rate_minimum=None, moe_hidden_sizes="2048")
    for name, value in expected.items():
        assert getattr(hp, name) == value, name


@given(st.integers(-10**9, 10**9), st.floats(allow_nan=False, allow_infinity=False, width=32),
       st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1,
               max_size=12))
def test_parse_round_trip_property(i, f, s):
    hp = HParams(i=0, f=0.0, s="x")
    hp.parse("i=%d,f=%r,s=%s" % (i, f, s))
    assert hp.i == i and hp.f == pytest.approx(f) and hp.s == s


def test_ranged_hparams_specs():
    rhp = common_hparams.RangedHParams()
    common_hparams.basic_range1(rhp)
    specs = {s["parameterName"]: s for s in rhp.to_parameter_specs()}
    assert specs["learning_rate"]["type"] == "DOUBLE"
    assert specs["learning_rate"]["scaleType"] == "UNIT_LOG_SCALE"
    assert specs["optimizer"]["type"] == "CATEGORICAL"
    with pytest.raises(ValueError, match="another type"):
        rhp.set_int("learning_rate", 1, 2)
