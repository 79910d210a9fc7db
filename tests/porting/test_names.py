"""t2t-port's name check: the T2T names ported code uses that t2t lacks, with the closest."""
from t2t.porting import names


def test_missing_attributes_modules_and_imported_names_with_the_closest():
    text = ("from t2t.layers import common_layers\n"
            "from t2t.utils import registry, trainer_lib as tl\n"
            "import t2t.utils.registry\n"
            "import t2t.models.transformerr\n"
            "from t2t.problems.problem import DatasetSplit, Problemm\n"
            "y = common_layers.dense_relu_dens(x), common_layers.shape_list(x)\n"
            "@registry.register_modell\n"
            "def f():\n"
            "    return tl.create_hparams, t2t.utils.registry.register_hparamz\n"
            "common_layers.patched = 1  # an assignment is not a read\n")
    assert names.missing_names(text) == [
        (4, "t2t.models.transformerr is not in t2t; closest: transformer"),
        (5, "t2t.problems.problem.Problemm is not in t2t; closest: Problem"),
        (6, "common_layers.dense_relu_dens is not in t2t; closest: dense_relu_dense"),
        (7, "registry.register_modell is not in t2t; closest: register_model"),
        (9, "t2t.utils.registry.register_hparamz is not in t2t; closest: register_hparams"),
    ]


def test_names_t2t_has_and_other_packages_are_not_reported():
    text = ("import os\nimport tensorflow as tf\nfrom t2t.models import transformer\n"
            "from t2t import models\nfrom t2t.problems import problem as problem_lib\n"
            "os.path.nope, tf.nope_either\n"
            "transformer.transformer_tiny(), models.transformer.transformer_base\n"
            "problem_lib.DatasetSplit.TRAIN, problem_lib.Problem.anything_on_a_class\n")
    assert names.missing_names(text) == []


def test_no_close_name_says_where_it_looked():
    assert names.missing_names("from t2t.problems import wmt_zzz\n") == [
        (1, "t2t.problems.wmt_zzz is not in t2t; no close name in t2t.problems")]
