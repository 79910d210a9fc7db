"""T2T's module paths keep working: ported code changes only `tensor2tensor` to `t2t`.

Each path below is a module T2T 1.15.7 has. Where the code moved to a concept package, the
old path must be the same module (or, for `metrics` and `text_problems`, expose the names of
the modules it joins), so T2T's public names and the private ones its code reaches for
resolve to the very same objects.
"""
import importlib

import pytest

# T2T path -> the home of its code (the same module object).
ALIASES = {
    "t2t.utils.registry": "t2t.core.registry",
    "t2t.utils.hparam": "t2t.core.hparam",
    "t2t.utils.usr_dir": "t2t.core.usr_dir",
    "t2t.utils.test_utils": "t2t.core.test_utils",
    "t2t.utils.contrib": "t2t.core.contrib",
    "t2t.utils.data_reader": "t2t.data.data_reader",
    "t2t.utils.beam_search": "t2t.search.beam_search",
    "t2t.utils.optimize": "t2t.optim.optimize",
    "t2t.utils.adafactor": "t2t.optim.adafactor",
    "t2t.utils.multistep_optimizer": "t2t.optim.multistep_optimizer",
    "t2t.utils.learning_rate": "t2t.optim.learning_rate",
    "t2t.utils.bleu_hook": "t2t.evaluation.bleu_hook",
    "t2t.utils.rouge": "t2t.evaluation.rouge",
    "t2t.utils.t2t_model": "t2t.model.t2t_model",
    "t2t.utils.decoding": "t2t.decoding.decoding",
    "t2t.utils.trainer_lib": "t2t.training.trainer_lib",
    "t2t.utils.avg_checkpoints": "t2t.training.avg_checkpoints",
    "t2t.utils.flags": "t2t.bin.flags",
    "t2t.utils.mlperf_log": "t2t.core.mlperf_log",
    "t2t.utils.restore_hook": "t2t.training.restore_hook",
    "t2t.utils.expert_utils": "t2t.layers.expert_utils",
    "t2t.problems.generator_utils": "t2t.data.generator_utils",
    "t2t.problems.text_encoder": "t2t.encoders.text_encoder",
    "t2t.problems.tokenizer": "t2t.encoders.tokenizer",
}

# Names T2T users and T2T's own code and tests use, per path (a sample of each module's API,
# private names included).
T2T_NAMES = {
    "t2t.utils.registry": ["register_model", "register_hparams", "register_problem",
                           "register_optimizer", "register_ranged_hparams", "model", "problem",
                           "hparams", "list_models", "list_hparams", "list_problems",
                           "parse_problem_name", "help_string", "Registries"],
    "t2t.utils.hparam": ["HParams", "parse_values", "PARAM_RE", "_parse_fail", "_reuse_fail",
                         "_process_scalar_value", "_process_list_value",
                         "_cast_to_type_if_compatible"],
    "t2t.utils.t2t_model": ["T2TModel", "log_debug", "log_info", "log_warn",
                            "set_custom_getter_compose"],
    "t2t.utils.trainer_lib": ["create_hparams", "create_run_config", "create_experiment",
                              "create_estimator", "add_problem_hparams", "set_random_seed"],
    "t2t.utils.hparams_lib": ["create_hparams", "create_hparams_from_json", "copy_hparams",
                              "add_problem_hparams"],
    "t2t.utils.mlperf_log": ["transformer_print", "get_mode", "RUN_START", "OPT_LR",
                             "MODEL_HP_NUM_HIDDEN_LAYERS", "TRANSFORMER_TAG_SET"],
    "t2t.utils.restore_hook": ["RestoreHook"],
    "t2t.bin.t2t_trainer": ["create_run_config"],
    "t2t.bin.t2t_decoder": ["create_hparams", "create_decode_hparams"],
    "t2t.utils.misc_utils": ["camelcase_to_snakecase", "snakecase_to_camelcase",
                             "pprint_hparams"],
    "t2t.utils.decoding": ["decode_hparams", "decode_from_file", "decode_from_dataset",
                           "decode_interactively"],
    "t2t.utils.metrics": ["Metrics", "METRICS_FNS", "create_evaluation_metrics",
                          "create_eager_metrics", "padded_accuracy", "padded_neg_log_perplexity"],
    "t2t.utils.bleu_hook": ["compute_bleu", "bleu_score", "bleu_wrapper", "bleu_tokenize"],
    "t2t.utils.beam_search": ["beam_search", "compute_batch_indices"],
    "t2t.utils.optimize": ["optimize", "ConditionalOptimizer", "get_variable_initializer"],
    "t2t.utils.learning_rate": ["learning_rate_schedule", "learning_rate_factor"],
    "t2t.utils.data_reader": ["input_fn", "batching_scheme", "_bucket_boundaries",
                              "standardize_shapes", "pad_for_tpu"],
    "t2t.utils.usr_dir": ["import_usr_dir"],
    "t2t.utils.test_utils": ["run_in_graph_and_eager_modes", "run_in_graph_mode_only",
                             "test_main"],
    "t2t.problems.problem": ["Problem", "DatasetSplit", "SpaceID", "preprocess_example_common"],
    "t2t.problems.text_problems": ["Text2TextProblem", "Text2SelfProblem", "Text2ClassProblem",
                                   "VocabType", "Text2textTmpdir", "text2text_txt_iterator",
                                   "txt_line_iterator"],
    "t2t.problems.text_encoder": ["SubwordTextEncoder", "TokenTextEncoder", "ByteTextEncoder",
                                  "TextEncoder", "PAD_ID", "EOS_ID", "_escape_token",
                                  "_unescape_token", "native_to_unicode"],
    "t2t.problems.tokenizer": ["encode", "decode"],
    "t2t.problems.generator_utils": ["to_example", "generate_files", "sharded_name",
                                     "shuffle_dataset", "maybe_download",
                                     "get_or_generate_vocab_inner", "pack_examples",
                                     "pack_dataset", "SequenceDatasetPacker", "INDEX_DTYPE"],
    "t2t.problems.all_problems": ["ALL_MODULES", "import_modules", "problem", "available"],
    "t2t.problems.problem_hparams": ["TestProblem", "test_problem_hparams"],
    "t2t.problems.algorithmic": ["AlgorithmicProblem"],
    "t2t.problems.translate": ["TranslateProblem"],
    "t2t.problems.translate_ende": ["TranslateEndeWmt8k"],
    "t2t.layers.common_layers": ["shape_list", "flatten4d3d", "layer_preprocess",
                                 "layer_postprocess", "padded_cross_entropy", "dense",
                                 "conv_hidden_relu", "subseparable_conv_block", "sru",
                                 "FactoredTensor", "fn_with_custom_grad", "dml_loss",
                                 "weights_multi_problem", "length_from_embedding",
                                 "sample_temperature_per_example", "nalu", "layer_norm"],
    "t2t.utils.expert_utils": ["PadRemover", "Parallelism", "local_moe", "SparseDispatcher",
                               "noisy_top_k_gating", "cv_squared", "ffn_expert_fn",
                               "flatten_all_but_last", "map_ids", "_my_top_k"],
    "t2t.layers.common_attention": ["multihead_attention", "add_timing_signal_1d",
                                    "attention_bias_lower_triangle"],
    "t2t.layers.common_hparams": ["basic_params1"],
    "t2t.layers.modalities": ["ModalityType", "get_bottom", "get_top", "get_loss"],
    "t2t.models.transformer": ["Transformer", "transformer_base", "transformer_tiny",
                               "transformer_encoder", "transformer_decoder"],
    "t2t.models.lstm": ["LSTMSeq2seq", "lstm_seq2seq"],
}


@pytest.mark.parametrize("path,home", sorted(ALIASES.items()))
def test_moved_module_path_is_the_same_module(path, home):
    assert importlib.import_module(path) is importlib.import_module(home)


@pytest.mark.parametrize("path", sorted(T2T_NAMES))
def test_t2t_path_exposes_t2t_names(path):
    module = importlib.import_module(path)
    missing = [name for name in T2T_NAMES[path] if not hasattr(module, name)]
    assert not missing, "%s lacks %s" % (path, missing)


def test_from_import_binds_the_home_module():
    from t2t.utils import registry as via_t2t_path
    from t2t.core import registry as home
    assert via_t2t_path is home
    assert via_t2t_path.Registries is home.Registries  # one registry, whatever the path


def test_joined_modules_expose_both_halves():
    from t2t.evaluation import metric_ops, metrics as metric_fns
    from t2t.problems import text2text, text_problems, text_problems_tmpdir
    from t2t.utils import metrics
    assert metrics.METRICS_FNS is metric_fns.METRICS_FNS
    assert metrics.create_evaluation_metrics is metric_ops.create_evaluation_metrics
    assert text_problems.Text2TextProblem is text2text.Text2TextProblem
    assert text_problems.Text2textTmpdir is text_problems_tmpdir.Text2textTmpdir
    with pytest.raises(AttributeError):
        metrics.no_such_name  # noqa: B018


def test_modules_t2t_never_had_have_no_t2t_path():
    # errors, progress, cli, packing, ... are t2t's own: no shim keeps a second path alive.
    for name in ("errors", "progress", "cli", "datagen", "packing", "slow_decoding",
                 "model_specs", "experiment", "run_config", "sampling", "metric_ops"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("t2t.utils." + name)


def test_misc_utils_behave_as_t2ts():
    from t2t.utils import hparam, misc_utils
    assert misc_utils.camelcase_to_snakecase("LSTMSeq2seq") == "lstm_seq2seq"
    assert misc_utils.snakecase_to_camelcase("my_LSTM_model") == "MyLSTMModel"
    assert misc_utils.pprint_hparams(hparam.HParams(a=1, b="x")) == "\n{'a': 1,\n 'b': 'x'}"
