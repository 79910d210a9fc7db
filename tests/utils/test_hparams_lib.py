"""`t2t.utils.hparams_lib`: T2T's hparams functions by their T2T path."""
import json

from t2t.core import registry
from t2t.training import trainer_lib
from t2t.utils import hparams_lib

PROBLEM = "algorithmic_reverse_binary40_test"


def test_create_hparams_with_overrides_json_and_problem(tmp_path):
    saved = tmp_path / "hparams.json"
    saved.write_text(json.dumps({"num_heads": 2, "hidden_size": 32, "not_in_set": 1}))
    hp = hparams_lib.create_hparams("transformer_tiny", "hidden_size=16", data_dir="/d",
                                    problem_name=PROBLEM, hparams_path=str(saved))
    assert (hp.num_heads, hp.hidden_size, hp.data_dir) == (2, 16, "/d")
    assert "not_in_set" not in hp
    assert hp.problem.name == PROBLEM and hp.problem_hparams.vocab_size["targets"] == 4
    assert hparams_lib.create_hparams is trainer_lib.create_hparams


def test_create_hparams_from_json_alone_and_copy_hparams(tmp_path):
    saved = tmp_path / "hparams.json"
    saved.write_text(json.dumps({"dropout": 0.25, "name": {"targets": "x"}}))
    hp = hparams_lib.create_hparams_from_json(str(saved))
    assert hp.values() == {"dropout": 0.25}  # per-feature function dicts are never read
    base = registry.hparams("transformer_tiny")
    hparams_lib.add_problem_hparams(base, PROBLEM)
    copy = hparams_lib.copy_hparams(base)
    copy.hidden_size = 7
    assert base.hidden_size != 7 and copy.problem is base.problem
