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


def pytest_collection_modifyitems(config, items):
    """Tests marked `estimator` (the Estimator backend's own: EstimatorSpecs, RunConfig,
    parameter-server clusters) skip where TensorFlow has no tf.estimator (2.16+)."""
    del config
    from t2t.training import backends
    if backends.estimator_available():
        return
    skip = pytest.mark.skip(reason="needs tf.estimator (TensorFlow 2.15, Python 3.9-3.11)")
    for item in items:
        if item.get_closest_marker("estimator") is not None:
            item.add_marker(skip)
