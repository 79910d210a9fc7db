"""`set_random_seed` (also T2T's `trainer_lib.set_random_seed`): Python, numpy and TF."""
import random

import numpy as np
import tensorflow as tf

from t2t.core.random_seed import set_random_seed
from t2t.training import trainer_lib


def _draws():
    return random.random(), float(np.random.rand()), float(tf.random.uniform([]))


def test_the_same_seed_gives_the_same_draws_in_eager_and_graph_mode():
    assert trainer_lib.set_random_seed is set_random_seed
    set_random_seed(7)
    first = _draws()
    set_random_seed(7)
    assert _draws() == first
    set_random_seed(8)
    assert _draws() != first
    with tf.Graph().as_default() as graph:
        trainer_lib.set_random_seed(11)  # T2T called it with a graph being built
        assert graph.seed == 11
