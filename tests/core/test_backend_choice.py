"""The backend choice shared by t2t-trainer, t2t-decoder and SeqIO training."""
import pytest

from t2t.core import backend_choice
from t2t.core import errors


@pytest.mark.parametrize("name,message", [
    ("nativ", "--backend=nativ is not a backend; did you mean native? "
              "(auto, estimator, native)"),
    ("Estimator", "--backend=Estimator is not a backend; did you mean estimator? "
                  "(auto, estimator, native)"),
    ("keras", "--backend=keras is not a backend; use one of auto, estimator, native"),
])
def test_an_unknown_backend_is_named_with_the_closest_one(name, message):
    with pytest.raises(errors.UserError) as raised:
        backend_choice.resolve_backend(name)
    assert str(raised.value) == message


def test_auto_picks_the_estimator_only_where_tensorflow_has_it():
    expected = "estimator" if backend_choice.estimator_available() else "native"
    assert backend_choice.resolve_backend("auto") == expected
    assert backend_choice.resolve_backend("native") == "native"


def test_the_estimator_on_a_tensorflow_without_it_names_the_fix():
    if backend_choice.estimator_available():
        assert backend_choice.resolve_backend("estimator") == "estimator"
        return
    with pytest.raises(errors.UserError, match="use --backend=native"):
        backend_choice.resolve_backend("estimator")
