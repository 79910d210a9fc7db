"""Shared pytest set-up: tests/ is on sys.path so every test folder can import the helpers
here (`t2t_model_testing`), and test modules are imported by path (pytest's importlib
mode), so two folders may hold test files of the same name."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _tensorflow_default_seed():
    """Each test starts with TensorFlow's global seed unset, as a fresh process does.

    Op-level seeds (`tf.data.Dataset.random(seed=...)`, seqio's map seeds) combine with the
    global seed, so a test that sets it would change the values a later test expects.
    """
    yield
    if "tensorflow" in sys.modules:
        sys.modules["tensorflow"].random.set_seed(None)
