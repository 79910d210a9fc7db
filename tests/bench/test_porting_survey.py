"""bench/porting_survey.py: the port, the names scan, the recipes, and a survey of a user dir
this test writes itself (the real survey runs on checked-out public repos)."""
import json
import os
import sys
import tarfile

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "bench")
sys.path.insert(0, BENCH)

porting_survey = pytest.importorskip("porting_survey")


def test_sed_rewrites_the_four_packages_of_the_table_only():
    source = ("from tensor2tensor.data_generators import text_problems\n"
              "import tensor2tensor.models.transformer as tr\n"
              "from tensor2tensor.layers import common_layers\n"
              "from tensor2tensor.utils.registry import register_problem\n"
              "from tensor2tensor import problems\n"
              "from tensor2tensor.bin import t2t_trainer\n")
    assert porting_survey.sed_port_text(source) == (
        "from t2t.problems import text_problems\n"
        "import t2t.models.transformer as tr\n"
        "from t2t.layers import common_layers\n"
        "from t2t.utils.registry import register_problem\n"
        "from tensor2tensor import problems\n"
        "from tensor2tensor.bin import t2t_trainer\n")


def test_names_scan_finds_modules_attributes_and_from_imports():
    source = (
        "import tensor2tensor.models.transformer as tr\n"
        "import tensor2tensor.layers.common_attention\n"
        "from tensor2tensor.data_generators import problem, text_problems, librispeech\n"
        "from tensor2tensor.models.transformer import Transformer\n"
        "from tensor2tensor.utils import registry\n"
        "import os\n"
        "@registry.register_problem\n"
        "class P(text_problems.Text2TextProblem):\n"
        "    splits = problem.DatasetSplit.TRAIN\n"
        "def f(x):\n"
        "    os.path.join('a')\n"
        "    tensor2tensor.layers.common_attention.add_timing_signal_1d(x)\n"
        "    return tr.transformer_base(), Transformer\n")
    assert porting_survey.t2t_names_in_source(source) == [
        "tensor2tensor.data_generators.librispeech",  # a module: T2T's packages hold modules
        "tensor2tensor.data_generators.problem",
        "tensor2tensor.data_generators.problem:DatasetSplit",
        "tensor2tensor.data_generators.text_problems",
        "tensor2tensor.data_generators.text_problems:Text2TextProblem",
        "tensor2tensor.layers.common_attention",
        "tensor2tensor.layers.common_attention:add_timing_signal_1d",
        "tensor2tensor.models.transformer",
        "tensor2tensor.models.transformer:Transformer",
        "tensor2tensor.models.transformer:transformer_base",
        "tensor2tensor.utils.registry",
        "tensor2tensor.utils.registry:register_problem",
    ]
    assert porting_survey.t2t_module_for("tensor2tensor.utils.expert_utils") == \
        "t2t.utils.expert_utils"
    assert porting_survey.t2t_module_for("tensor2tensor.problems") is None


def test_one_line_errors_and_their_causes():
    stderr = ("Traceback (most recent call last):\n  File \"a.py\", line 1\n"
              "ModuleNotFoundError: No module named 'pandas'\nexiting\n")
    assert porting_survey.one_line_error(stderr) == "ModuleNotFoundError: No module named 'pandas'"
    assert porting_survey.one_line_error("t2t-trainer: error: missing --model\n") == \
        "t2t-trainer: error: missing --model"
    assert porting_survey.one_line_error("just this\n\n") == "just this"
    cause = porting_survey.error_cause
    assert cause("ModuleNotFoundError: No module named 'pandas' (a.py:2)") == "dependency pandas"
    assert cause("ModuleNotFoundError: No module named 'tensor2tensor'") == "t2t"
    assert cause("ImportError: cannot import name 'translate_envi' from 't2t.problems' (x)") == "t2t"
    assert cause("AttributeError: module 'tensorflow' has no attribute 'flags'") == \
        "TensorFlow 1 API"
    assert cause("KeyError: 'SCAN'") == "user code"


def test_recipes_write_lines_archives_and_vocabularies(tmp_path):
    assert porting_survey.tiny_pairs(4, seed=1) == porting_survey.tiny_pairs(4, seed=1)
    src, tgt = porting_survey.tiny_pairs(1)[0]
    assert tgt == " ".join(reversed(src.upper().split()))
    tmp, data = tmp_path / "tmp", tmp_path / "data"
    recipe = {"lines": 5, "data": [
        {"path": "sub/pairs.txt", "line": "{i}|{src}|{tgt}"},
        {"path": "c.tgz", "members": {"c.en": "{src}", "c.xx": "{tgt}"}},
        {"path": "vocab.tokens", "in": "data_dir", "vocab": True}]}
    written = porting_survey.write_recipe_data(recipe, str(tmp), str(data))
    assert written == [str(tmp / "sub/pairs.txt"), str(tmp / "c.tgz"), str(data / "vocab.tokens")]
    lines = (tmp / "sub/pairs.txt").read_text().splitlines()
    pairs = porting_survey.tiny_pairs(5)
    assert lines == ["%d|%s|%s" % (i, s, t) for i, (s, t) in enumerate(pairs)]
    with tarfile.open(tmp / "c.tgz") as archive:
        assert sorted(archive.getnames()) == ["c.en", "c.xx"]
        assert archive.extractfile("c.xx").read().decode().splitlines() == [t for _, t in pairs]
    assert sorted(os.listdir(tmp)) == ["c.tgz", "sub"]
    vocab = (data / "vocab.tokens").read_text().split()
    assert vocab[:2] == ["<pad>", "<EOS>"]
    assert set(" ".join(s + " " + t for s, t in pairs).split()) <= set(vocab)


def test_recipes_copy_the_repos_own_data_and_list_their_tokens(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "SCAN").mkdir(parents=True)
    (checkout / "SCAN" / "train.txt").write_text("".join(
        "IN: walk OUT: I_WALK %d\n" % i for i in range(9)))
    recipe = {"lines": 3, "data": [
        {"path": "SCAN/train.txt", "copy": "SCAN/train.txt"},
        {"path": "v.tokens", "in": "data_dir", "vocab": True, "tokens": "walk WALK"}]}
    tmp, data = tmp_path / "tmp", tmp_path / "data"
    porting_survey.write_recipe_data(recipe, str(tmp), str(data), checkout=str(checkout))
    assert (tmp / "SCAN/train.txt").read_text().splitlines() == [
        "IN: walk OUT: I_WALK 0", "IN: walk OUT: I_WALK 1", "IN: walk OUT: I_WALK 2"]
    assert (data / "v.tokens").read_text().split() == ["<pad>", "<EOS>", "walk", "WALK"]


GOOD_PROBLEM = '''
from tensor2tensor.data_generators import text_problems
from tensor2tensor.layers import common_layers
from tensor2tensor.utils import registry


@registry.register_problem
class SurveyFixtureProblem(text_problems.Text2TextProblem):
    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        yield {"inputs": common_layers.no_such_layer_fn(), "targets": "x"}
'''


def write_repo(survey_dir, repo, files):
    root = survey_dir / repo.replace("/", "+") / "my_usr"
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)


def test_survey_of_a_fixture_user_dir(tmp_path, capsys):
    survey = tmp_path / "survey"
    write_repo(survey, "me/good", {"__init__.py": "from . import good\n", "good.py": GOOD_PROBLEM})
    write_repo(survey, "me/bad", {"__init__.py": "from tensor2tensor.utils import no_such_module\n",
                                  "broken.py": "def f(:\n"})
    repos = tmp_path / "repos.json"
    repos.write_text(json.dumps([
        {"repo": "me/good", "commit": "0" * 40, "usr_dir": "my_usr", "task": "fixture"},
        {"repo": "me/bad", "commit": "1" * 40, "usr_dir": "my_usr", "task": "fixture"}]))
    out = tmp_path / "results.json"
    out.write_text(json.dumps({"runs": {"earlier": {"totals": {}}}}))
    assert porting_survey.main(["--survey_dir=%s" % survey, "--repos=%s" % repos,
                                "--out=%s" % out, "--port=sed", "--key=now"]) == 0
    results = json.loads(out.read_text())
    assert sorted(results["runs"]) == ["earlier", "now"]
    good, bad = results["runs"]["now"]["repos"]
    assert good["import"] == {"ok": True, "registered": {
        "hparams": [], "models": [], "problems": ["survey_fixture_problem"]}}
    assert good["names_missing"] == ["tensor2tensor.layers.common_layers:no_such_layer_fn"]
    assert "tensor2tensor.utils.registry:register_problem" in good["names_used"]
    assert bad["import"]["ok"] is False
    assert bad["import"]["error"].startswith(
        "ImportError: cannot import name 'no_such_module' from 't2t.utils'"), bad["import"]
    assert bad["import"]["cause"] == "t2t"
    assert bad["unparsed_files"] == ["broken.py: SyntaxError: invalid syntax (line 1)"]
    totals = results["runs"]["now"]["totals"]
    assert (totals["repos"], totals["import_ok"], totals["runnable"], totals["end_to_end"]) == \
        (2, 1, 0, 0)
    assert totals["missing_ranked"][0]["name"] == \
        "tensor2tensor.layers.common_layers:no_such_layer_fn"
    assert totals["names_present"] == totals["names_used"] - len(totals["missing_ranked"])
    assert totals["missing_modules_ranked"] == [
        {"module": "tensor2tensor.layers.common_layers", "repos": 1, "whole_module": False,
         "names": ["no_such_layer_fn"]},
        {"module": "tensor2tensor.utils.no_such_module", "repos": 1, "whole_module": True,
         "names": []}]
    printed = capsys.readouterr().out
    assert "summary (sed): 1/2 import" in printed
    # The user's checkout is left as it was: the port works on a copy.
    assert "tensor2tensor.utils" in (survey / "me+good/my_usr/good.py").read_text()
