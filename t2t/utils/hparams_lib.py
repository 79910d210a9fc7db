"""T2T's `tensor2tensor.utils.hparams_lib` path: hparams from a registered set, a saved
hparams.json and overrides. The code lives in `t2t.training.trainer_lib` (and
`t2t.model.model_hparams`), where t2t's trainer uses it.

    from t2t.utils import hparams_lib
    hp = hparams_lib.create_hparams("transformer_tiny", "num_hidden_layers=1",
                                    problem_name="algorithmic_reverse_binary40_test")
    hparams_lib.copy_hparams(hp).problem is hp.problem      # True
"""
from t2t.model.model_hparams import add_problem_hparams, copy_hparams  # noqa: F401
from t2t.training.trainer_lib import create_hparams, create_hparams_from_json  # noqa: F401
