"""Shared pytest set-up: tests/ is on sys.path so every test folder can import the helpers
here (`t2t_model_testing`), and test modules are imported by path (pytest's importlib
mode), so two folders may hold test files of the same name."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import random  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _default_random_state():
    """Each test starts from the same random state, whatever ran before it in the process.

    Python's and numpy's global generators are seeded with 0 (T2T's datagen and input
    pipeline shuffle with them when no seed is given), and TensorFlow's global seed is
    unset as in a fresh process (op-level seeds such as seqio's map seeds combine with it).
    A test then gives the same result alone and in the full suite.
    """
    random.seed(0)
    np.random.seed(0)
    if "tensorflow" in sys.modules:
        sys.modules["tensorflow"].random.set_seed(None)
    yield


# The longest test files (a minute or more each in CI): run first, so that with
# `pytest -n 2 --dist loadfile` no worker starts one of them while the other has finished.
LONGEST_FILES = ("tydiqa/test_end_to_end.py", "training/test_native_cluster.py",
                 "hub/test_hub_export.py", "tuning/test_autotune.py",
                 "training/test_distributed.py")


def _longest_first(item):
    path = str(item.fspath).replace(os.sep, "/")
    for rank, name in enumerate(LONGEST_FILES):
        if path.endswith("/tests/" + name):
            return rank
    return len(LONGEST_FILES)


# Long end-to-end tests of workflows whose TensorFlow-facing parts have faster tests on
# both stacks (the pipeline, the model, each backend, the CLIs): CI runs them on the
# newest stack only, to stay within its time budget (they are ~7 minutes of the 3.11 run).
# T2T_TEST_ALL_STACKS=1 runs them on the Estimator stack too.
NEWEST_STACK_ONLY = (
    "inference/test_readme.py",           # the README's tour (check_package runs one on 3.11)
    "serving/test_ctranslate2_export.py",  # CTranslate2 reads the checkpoint, not TensorFlow
    "bin/test_ctranslate2_cli.py",
    "tydiqa/test_end_to_end.py",
    "tuning/test_autotune.py::test_a_killed_study_resumes_and_finds_a_better_configuration",
    "test_docs_snippets.py",
    "seqio/test_docs_seqio.py",
    # Whole programs in subprocesses; the pieces they drive have tests on both stacks.
    "bench/test_porting_survey.py::test_survey_of_a_fixture_user_dir",
    "bin/test_port_cli.py::test_a_ported_trainer_wrapper_trains",
    "problems/test_multi_problem.py::test_the_trainer_trains_evaluates_and_decodes_a_multi_problem",
    "bin/test_tensor2tensor_usr_dir_cli.py::test_a_t2t_usr_dir_importing_tensor2tensor_runs_unchanged",
    "bin/test_trainer_cli.py::test_sigkill_then_rerun_resumes_and_sigterm_saves_the_current_step",
    "data/test_length_filter.py::test_oversize_records_never_reach_a_buffer",  # a memory probe
    # Beam pipelines run again and again (resume, worker counts, seeds): the caching logic is
    # Python; reading the cache back with TensorFlow has its tests on both stacks.
    "seqio/test_cache_tasks.py::test_skip_resume_and_overwrite",
    "seqio/test_cache_tasks.py::test_one_and_two_workers_write_the_same_files",
    "seqio/test_cache_tasks.py::test_another_base_seed_gives_other_crops",
    # Decoding-loop equivalences and graph details of the research models; each model trains
    # (both backends) and decodes on both stacks in the other tests of its file.
    "models/test_evolved_transformer.py::test_cached_decoding_equals_the_slow_loops",
    "models/test_evolved_transformer.py::test_decoder_is_causal",
    "models/test_evolved_transformer.py::test_only_the_top_decoder_layers_train_when_asked",
    "models/research/test_universal_transformer.py::test_slow_greedy_and_beam_decoding",
    "models/research/test_universal_transformer.py::"
    "test_every_recurrence_type_keeps_shapes_and_t2t_variable_names",
    "models/test_transformer_hparams.py::test_relative_fast_decoding_equals_slow_decoding",
    # t2t-serve is Python over t2t.load (whose engines have tests on both stacks).
    "server/test_server.py",
    "server/test_server_ctranslate2.py",
    "bin/test_serve_cli.py::test_sigterm_drains_and_a_second_signal_exits_at_once",
    # Flag checks are Python before TensorFlow runs; their module fixture runs ten programs.
    "bin/test_new_user_errors.py::test_one_line_error",
    "bin/test_new_user_errors.py::test_flag_checks_come_before_any_tensorflow_output",
    "bin/test_new_user_errors.py::test_an_unknown_hparam_names_hparams_not_add_hparam",
)


def _newest_stack_only(item):
    path = str(item.fspath).replace(os.sep, "/")
    for name in NEWEST_STACK_ONLY:
        file_name, _, test = name.partition("::")
        # A parametrized test matches by its function name (`originalname`).
        names = (item.name, getattr(item, "originalname", None))
        if path.endswith("/tests/" + file_name) and (not test or test in names):
            return True
    return False


def pytest_collection_modifyitems(config, items):
    """The longest files first (a stable sort: each file's tests keep their order); tests
    marked `estimator` (the Estimator backend's own: EstimatorSpecs, RunConfig,
    parameter-server clusters) skip where TensorFlow has no tf.estimator (2.16+), and those
    of NEWEST_STACK_ONLY skip where it has (TensorFlow 2.15)."""
    del config
    items.sort(key=_longest_first)
    from t2t.core import backend_choice
    if backend_choice.estimator_available():
        if os.environ.get("T2T_TEST_ALL_STACKS") != "1":
            skip = pytest.mark.skip(reason="runs on the newest stack only (CI time); "
                                           "T2T_TEST_ALL_STACKS=1 runs it here")
            for item in items:
                if _newest_stack_only(item):
                    item.add_marker(skip)
        return
    skip = pytest.mark.skip(reason="needs tf.estimator (TensorFlow 2.15, Python 3.9-3.11)")
    for item in items:
        if item.get_closest_marker("estimator") is not None:
            item.add_marker(skip)
