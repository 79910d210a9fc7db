"""T2T 1.15.7's `hparam` module, called exactly as T2T's own code and tests call it.

Ported code does `from t2t.utils import hparam` (was `from tensor2tensor.utils import hparam`)
and keeps matching on T2T's error words.
"""
import pytest

from t2t.utils import hparam


def test_empty_and_unknown():
    hparams = hparam.HParams()
    assert hparams.values() == {}
    hparams.parse("")
    assert hparams.values() == {}
    with pytest.raises(ValueError, match="Unknown hyperparameter"):
        hparams.parse("xyz=123")


def test_contains():
    hparams = hparam.HParams(foo=1)
    assert "foo" in hparams
    assert "bar" not in hparams


def test_some_values_str_and_parsing():
    hparams = hparam.HParams(aaa=1, b=2.0, c_c="relu6", d="/a/b=c/d")
    assert hparams.values() == {"aaa": 1, "b": 2.0, "c_c": "relu6", "d": "/a/b=c/d"}
    expected_str = "[('aaa', 1), ('b', 2.0), ('c_c', 'relu6'), ('d', '/a/b=c/d')]"
    assert str(hparams) == expected_str
    hparams.parse("aaa=12")
    assert hparams.aaa == 12
    hparams.parse("c_c=relu4, b=-2.0e10")
    assert (hparams.c_c, hparams.b) == ("relu4", -2.0e10)
    hparams.parse("c_c=,b=0,")
    assert (hparams.c_c, hparams.b) == ("", 0.0)
    hparams.parse('c_c=2.3",b=+2,')
    assert (hparams.b, hparams.c_c) == (2.0, '2.3"')
    hparams.parse("d=/a/b/c/d,aaa=11,")
    assert (hparams.aaa, hparams.d) == (11, "/a/b/c/d")
    hparams.parse("b=1.5,d=/a=b/c/d,aaa=10,")
    assert (hparams.aaa, hparams.b, hparams.d) == (10, 1.5, "/a=b/c/d")
    for bad, words in [("x=123", "Unknown hyperparameter"), ("aaa=poipoi", "Could not parse"),
                       ("aaa=1.0", "Could not parse"), ("b=12x", "Could not parse"),
                       ("b=relu", "Could not parse"), ("aaa=[123]", "Must not pass a list")]:
        with pytest.raises(ValueError, match=words):
            hparams.parse(bad)
    assert (hparams.aaa, hparams.b, hparams.c_c) == (10, 1.5, '2.3"')  # failed parses changed nothing


def test_period_in_variable_name():
    hparams = hparam.HParams()
    hparams.add_hparam(name="a.b", value=0.0)
    hparams.parse("a.b=1.0")
    assert getattr(hparams, "a.b") == 1.0
    hparams.add_hparam(name="c.d", value=0.0)
    with pytest.raises(ValueError, match="Could not parse"):
        hparams.parse("c.d=abc")
    hparams.add_hparam(name="e.f", value="")
    hparams.parse("e.f=abc")
    assert getattr(hparams, "e.f") == "abc"


def test_set_from_map_and_override_from_dict():
    hparams = hparam.HParams(a=1, b=2.0, c="tanh")
    hparams.override_from_dict({"a": -2, "c": "identity"})
    assert hparams.values() == {"a": -2, "c": "identity", "b": 2.0}
    hparams = hparam.HParams(x=1, b=2.0, d=[0.5])
    hparams.set_from_map({"d": [0.1, 0.2, 0.3]})
    assert hparams.values() == {"d": [0.1, 0.2, 0.3], "x": 1, "b": 2.0}
    with pytest.raises(KeyError, match="Unknown hyperparameter zz"):
        hparams.override_from_dict({"zz": 1})


def test_function_values_are_left_out_of_json():
    def f(x):
        return x
    hparams = hparam.HParams(function=f)
    assert hparams.function is f
    assert hparams.to_json() == "{}"


@pytest.mark.parametrize("value", ["true", "false", "True", "False", "1", "0"])
@pytest.mark.parametrize("initial", [False, True])
def test_bool_parsing(value, initial):
    hparams = hparam.HParams(use_gpu=initial)
    hparams.parse("use_gpu=" + value)
    assert hparams.use_gpu == (value in ["True", "true", "1"])


def test_bool_parsing_fail():
    hparams = hparam.HParams(use_gpu=True)
    with pytest.raises(ValueError, match=r"Could not parse.*use_gpu"):
        hparams.parse("use_gpu=yep")


def test_lists():
    hparams = hparam.HParams(aaa=[1], b=[2.0, 3.0], c_c=["relu6"])
    hparams.parse("aaa=[12,34,56]")
    assert hparams.aaa == [12, 34, 56]
    hparams.parse("c_c=[relu4,relu12],b=[1.0]")
    assert (hparams.c_c, hparams.b) == (["relu4", "relu12"], [1.0])
    hparams.parse("c_c=[],aaa=[-34]")
    assert (hparams.aaa, hparams.c_c) == ([-34], [])
    hparams.parse("c_c=[_12,3'4\"],aaa=[+3]")
    assert (hparams.aaa, hparams.c_c) == ([3], ["_12", "3'4\""])
    for bad, words in [("x=[123]", "Unknown hyperparameter"), ("aaa=[poipoi]", "Could not parse"),
                       ("aaa=[1.0]", "Could not parse"), ("b=[12x]", "Could not parse"),
                       ("b=[relu]", "Could not parse"), ("aaa=123", "Must pass a list")]:
        with pytest.raises(ValueError, match=words):
            hparams.parse(bad)


@pytest.mark.parametrize("values,type_map,ignore,expected", [
    ("arr[1]=10", {"arr": int}, False, {"arr": {1: 10}}),
    ("arr[1]=10,b=5", {"arr": int}, True, {"arr": {1: 10}}),
    ("arr[0]=10,arr[5]=20", {"arr": int}, False, {"arr": {0: 10, 5: 20}}),
    ("arr[0]=10,arr[1]=20,L[5]=100,L[10]=200", {"arr": int, "L": int}, False,
     {"arr": {0: 10, 1: 20}, "L": {5: 100, 10: 200}}),
    ("x=10,foo[0]=bar,arr[1]=20,zzz=78,y=30", {"x": int, "y": int, "arr": int}, True,
     {"x": 10, "arr": {1: 20}, "y": 30}),
    ("a[0]=5,b[1]=true,c[2]=abc,d[3]=3.14", {"a": int, "b": bool, "c": str, "d": float}, False,
     {"a": {0: 5}, "b": {1: True}, "c": {2: "abc"}, "d": {3: 3.14}}),
    ("x=5,L=[1,2],arr[1]=3", {"x": int, "L": int, "arr": int}, False,
     {"x": 5, "L": [1, 2], "arr": {1: 3}}),
    ("arr[1]=5", {}, True, {}),
    ("arr[1]=1", {"arr[1]": int}, True, {}),
])
def test_parse_values_with_index_assignment(values, type_map, ignore, expected):
    assert hparam.parse_values(values, type_map, ignore_unknown=ignore) == expected


@pytest.mark.parametrize("values,type_map,words", [
    ("arr[1]=[1,2,3]", {"arr": int}, r"Assignment of a list to a list index\."),
    ("arr[1]=5", {}, "Unknown hyperparameter type for arr"),
    ("arr[1]=1", {"arr[1]": int}, "Unknown hyperparameter type for arr"),
    ("x=1,x=1", {"x": int}, "Multiple assignments to variable 'x'"),
    ("arr=[100,200],arr[0]=10", {"arr": int}, "Multiple assignments to variable 'arr'"),
    ("arr[0]=10,arr[0]=20", {"arr": int}, r"Multiple assignments to variable 'arr\[0\]'"),
    ("arr[0]=10,arr=[100]", {"arr": int}, "Multiple assignments to variable 'arr'"),
])
def test_parse_values_errors(values, type_map, words):
    with pytest.raises(ValueError, match=words):
        hparam.parse_values(values, type_map)


def test_indexed_assignment_through_parse_sets_one_element():
    # T2T's parse raised "Must pass a list" here; t2t applies it to the list.
    hparams = hparam.HParams(arr=[1, 2, 3], x=0)
    hparams.parse("arr[1]=7,x=4")
    assert (hparams.arr, hparams.x) == ([1, 7, 3], 4)


def test_json():
    hparams = hparam.HParams(aaa=1, b=2.0, c_c="relu6", d=True)
    hparams.parse_json('{"aaa": 12, "b": 3.0, "c_c": "relu4", "d": false}')
    assert hparams.values() == {"aaa": 12, "b": 3.0, "c_c": "relu4", "d": False}
    hparams2 = hparam.HParams(aaa=10, b=20.0, c_c="hello", d=False)
    hparams2.parse_json(hparams.to_json())
    assert hparams2.values() == hparams.values()
    hparams3 = hparam.HParams(aaa=123)
    assert hparams3.to_json() == '{"aaa": 123}'
    assert hparams3.to_json(indent=2) == '{\n  "aaa": 123\n}'
    assert hparams3.to_json(separators=(";", "=")) == '{"aaa"=123}'
    hparams4 = hparam.HParams(aaa=123, b="hello", c_c=False)
    assert hparams4.to_json(sort_keys=True) == '{"aaa": 123, "b": "hello", "c_c": false}'


def test_set_hparam_and_mismatches():
    hparams = hparam.HParams(aaa=1, b=2.0, c_c="relu6", d=True)
    hparams.set_hparam("aaa", 12)
    hparams.set_hparam("b", 3.0)
    hparams.set_hparam("c_c", "relu4")
    hparams.set_hparam("d", False)
    assert hparams.values() == {"aaa": 12, "b": 3.0, "c_c": "relu4", "d": False}
    hparams = hparam.HParams(a=1, b=[2.0, 3.0])
    with pytest.raises(ValueError, match="Must not pass a list"):
        hparams.set_hparam("a", [1.0])
    with pytest.raises(ValueError, match="Must pass a list"):
        hparams.set_hparam("b", 1.0)


def test_set_hparam_type_mismatch():
    hparams = hparam.HParams(int_=1, str_="str", bool_=True, float_=1.1, list_int=[1, 2],
                             none=None)
    for name, value in [("str_", 2.2), ("int_", False), ("bool_", 1), ("int_", 2.2),
                        ("list_int", [2, 3.3]), ("int_", "2")]:
        with pytest.raises(ValueError, match="Could not cast hparam"):
            hparams.set_hparam(name, value)
    hparams.set_hparam("float_", 1)  # int to float is fine
    assert hparams.float_ == 1.0 and isinstance(hparams.float_, float)
    hparams.set_hparam("none", "1")
    assert hparams.none == "1"


def test_get():
    hparams = hparam.HParams(aaa=1, b=2.0, c_c="relu6", d=True, e=[5.0, 6.0])
    assert hparams.get("aaa") == 1 and hparams.get("e", None) == [5.0, 6.0]
    assert hparams.get("aaa", 2) == 1
    assert hparams.get("b", 3.0) == 2.0 and hparams.get("b", 3) == 2.0
    assert hparams.get("c_c", "default") == "relu6" and hparams.get("d", True) is True
    assert hparams.get("e", [1.0, 2.0, 3.0]) == [5.0, 6.0]
    assert hparams.get("e", [1, 2, 3]) == [5.0, 6.0]
    for name, default in [("aaa", 2.0), ("b", False), ("c_c", [1, 2, 3]), ("d", "relu"),
                          ("e", 123.0), ("e", ["a", "b", "c"])]:
        with pytest.raises(ValueError, match="is incompatible with default"):
            hparams.get(name, default)
    assert hparams.get("unknown") is None
    assert hparams.get("unknown", 123) == 123
    assert hparams.get("unknown", [1, 2, 3]) == [1, 2, 3]


def test_del():
    hparams = hparam.HParams(aaa=1, b=2.0)
    with pytest.raises(ValueError):
        hparams.set_hparam("aaa", "will fail")
    with pytest.raises(ValueError, match="Hyperparameter name is reserved"):
        hparams.add_hparam("aaa", "will fail")
    hparams.del_hparam("aaa")
    hparams.add_hparam("aaa", "will work")
    assert hparams.get("aaa") == "will work"
    hparams.set_hparam("aaa", "still works")
    assert hparams.get("aaa") == "still works"
    hparams.del_hparam("not_there")  # nothing happens


def test_empty_list_and_model_structure_and_kind_names():
    with pytest.raises(ValueError, match="Multi-valued hyperparameters cannot be empty: x"):
        hparam.HParams(x=[])
    structure = object()
    hparams = hparam.HParams(model_structure=structure, a=1)
    assert hparams.get_model_structure() is structure
    hparams.set_model_structure(None)
    assert hparams.get_model_structure() is None
    kinds = [hparam.HParams._get_kind_name(t, is_list) for t, is_list in
             [(bool, False), (int, True), (str, False), (float, True)]]
    assert kinds == ["bool_value", "int64_list", "bytes_value", "float_list"]
    with pytest.raises(ValueError, match="Unsupported parameter type"):
        hparam.HParams._get_kind_name(dict, False)


def test_none_valued_hparam_parses_to_the_value_read():
    # T2T raised a TypeError (NoneType("0.001")); t2t reads the value's type.
    hparams = hparam.HParams(learning_rate_minimum=None)
    hparams.parse("learning_rate_minimum=0.001")
    assert hparams.learning_rate_minimum == 0.001
