"""`tensor2tensor.*` imports served by t2t: the same module objects, T2T's top-level
`problems`, and missing names that fail naming the closest t2t names."""
import importlib
import sys

import pytest

from t2t.core import module_alias, registry, t2t_import_alias


@pytest.fixture
def alias():
    t2t_import_alias.uninstall()
    assert t2t_import_alias.install()
    yield
    t2t_import_alias.uninstall()


def test_modules_are_t2ts_own_objects(alias):
    from tensor2tensor.data_generators import problem, text_problems
    from tensor2tensor.layers import common_layers
    from tensor2tensor.utils import registry as t2t_registry
    from tensor2tensor.utils import trainer_lib
    import tensor2tensor.models.transformer as transformer
    from t2t.layers import common_layers as real_layers
    from t2t.problems import problem as real_problem
    from t2t.training import trainer_lib as real_trainer_lib
    assert t2t_registry is registry
    assert problem is real_problem and common_layers is real_layers
    assert trainer_lib is real_trainer_lib
    assert transformer is importlib.import_module("t2t.models.transformer")
    assert issubclass(text_problems.Text2TextProblem, real_problem.Problem)
    # The real modules keep their own names and specs (relative imports, pickling).
    assert importlib.import_module("tensor2tensor.data_generators.problem") is real_problem
    assert real_problem.__spec__.name == real_problem.__name__ == "t2t.problems.problem"


def test_top_level_package_offers_t2ts_problems(alias):
    import tensor2tensor
    problem = tensor2tensor.problems.problem("algorithmic_reverse_binary40_test")
    assert problem.name == "algorithmic_reverse_binary40_test"
    assert "algorithmic_reverse_binary40_test" in tensor2tensor.problems.available()
    assert tensor2tensor.utils is importlib.import_module("t2t.utils")
    assert not hasattr(tensor2tensor, "nope")


def test_a_missing_name_names_the_closest(alias):
    with pytest.raises(ImportError) as info:
        from tensor2tensor.layers.common_layers import dense_relu_densee  # noqa: F401
    assert str(info.value).startswith(
        "cannot import name 'dense_relu_densee': t2t has no common_layers.dense_relu_densee "
        "(module t2t.layers.common_layers); closest: common_layers.dense_relu_dense")
    import tensor2tensor.layers.common_layers as common_layers
    with pytest.raises(AttributeError, match="closest: common_layers.dense_relu_dense"):
        common_layers.dense_relu_densee  # pylint: disable=pointless-statement
    assert not hasattr(common_layers, "dense_relu_densee")
    assert getattr(common_layers, "dense_relu_densee", 7) == 7


def test_a_missing_module_names_the_closest(alias):
    with pytest.raises(ModuleNotFoundError) as info:
        import tensor2tensor.utils.trainer_libb  # noqa: F401
    assert str(info.value).startswith("tensor2tensor.utils.trainer_libb: t2t has no "
                                      "utils.trainer_libb; closest: utils.trainer_lib")
    with pytest.raises(ImportError, match="t2t has no utils.trainer_libb .*closest: "
                       "utils.trainer_lib"):
        from tensor2tensor.utils import trainer_libb  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="t2t has no no_such_package"):
        import tensor2tensor.no_such_package  # noqa: F401


def test_research_models_are_found_under_either_path(alias):
    from tensor2tensor.models.research import universal_transformer
    assert universal_transformer is importlib.import_module(
        "t2t.models.research.universal_transformer")
    # The path of T2T releases before research/ (user code still has it).
    import tensor2tensor.models.universal_transformer as old_path
    from tensor2tensor.models import universal_transformer as old_from
    assert old_path is universal_transformer and old_from is universal_transformer
    assert t2t_import_alias.resolve("tensor2tensor.models.research.x") == [
        "t2t.models.research.x", "t2t.models.x"]
    assert t2t_import_alias.resolve("tensor2tensor.models.x") == [
        "t2t.models.x", "t2t.models.research.x"]
    assert t2t_import_alias.resolve("tensor2tensor.bin.t2t_trainer") == ["t2t.bin.t2t_trainer"]
    assert t2t_import_alias.resolve("tensorflow") is None


def test_said_once_and_never_over_a_real_tensor2tensor(tmp_path, monkeypatch):
    # Recorded at the module's logger call: absl's verbosity depends on earlier tests.
    said = []
    monkeypatch.setattr(t2t_import_alias.logging, "info", lambda msg, *a: said.append(msg % a))
    t2t_import_alias.uninstall()
    assert t2t_import_alias.install() and t2t_import_alias.install()
    assert not said  # nothing until code imports tensor2tensor
    import tensor2tensor.utils.registry  # noqa: F401
    import tensor2tensor.layers.common_layers  # noqa: F401
    assert sum("tensor2tensor imports are served by t2t" in m for m in said) == 1
    t2t_import_alias.uninstall()
    real = tmp_path / "tensor2tensor"
    real.mkdir()
    (real / "__init__.py").write_text("REAL = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert not t2t_import_alias.install()
        import tensor2tensor
        assert tensor2tensor.REAL
    finally:
        t2t_import_alias.uninstall()


def test_alias_finder_without_owner_keeps_pythons_errors():
    finder = module_alias.AliasFinder(
        lambda name: ["t2t.core" + name[len("t2t_alias_test"):]]
        if name.split(".")[0] == "t2t_alias_test" else None)
    finder.install()
    try:
        assert importlib.import_module("t2t_alias_test.registry") is registry
        with pytest.raises(ModuleNotFoundError, match="No module named 't2t.core.nope'"):
            importlib.import_module("t2t_alias_test.nope")
    finally:
        finder.uninstall()
        for name in [n for n in sys.modules if n.split(".")[0] == "t2t_alias_test"]:
            del sys.modules[name]


def test_a_left_out_module_imports_and_fails_when_a_name_of_it_is_used(alias, caplog):
    # As paperspace's usr dir: it imports librispeech and never uses it.
    import logging
    # At the absl logger: a test before this one in the same process (a training run, as
    # test_universal_transformer's) can leave absl's level above INFO, and the root
    # logger's level does not undo that.
    with caplog.at_level(logging.INFO, logger="absl"):
        from tensor2tensor.data_generators import librispeech
        import tensor2tensor.data_generators.librispeech as dotted
        from tensor2tensor.data_generators import speech_recognition  # noqa: F401
    assert dotted is librispeech
    said = [r.getMessage() for r in caplog.records if "stand-in" in r.getMessage()]
    assert len(said) == 2 and said[0].startswith(
        "tensor2tensor.data_generators.librispeech imports as an empty stand-in: T2T's speech")
    assert not hasattr(librispeech, "Librispeech")
    with pytest.raises(t2t_import_alias.LeftOutError) as info:
        librispeech.Librispeech  # pylint: disable=pointless-statement
    assert str(info.value) == (
        "tensor2tensor.data_generators.librispeech.Librispeech: T2T's speech and audio "
        "problems are left out of t2t (text only: no audio features or modalities); see "
        "docs/t2t_differences.md")
    with pytest.raises(ImportError, match="cannot import name 'Librispeech': tensor2tensor"
                       r"\.data_generators\.librispeech\.Librispeech: T2T's speech"):
        from tensor2tensor.data_generators.librispeech import Librispeech  # noqa: F401
    # It registers nothing, and t2t's own names stay as they were.
    with pytest.raises(registry.UnknownNameError):
        registry.problem("librispeech_clean_small")
