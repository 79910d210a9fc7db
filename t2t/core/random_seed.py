"""One call that makes a run repeatable: Python's, numpy's and TensorFlow's seeds.

    set_random_seed(429459)
    random.random()        # the same value on every run with that seed
"""
import random


def set_random_seed(seed):
    """Seed Python's `random`, numpy's global state and TensorFlow's global seed.

    `None` leaves everything unseeded (T2T's behaviour when --random_seed is unset).

        set_random_seed(429459)
        random.random()   # the same value on every run
    """
    if seed is None:
        return
    import numpy as np
    import tensorflow as tf  # imported lazily: `--help` and errors should not wait for TF

    random.seed(seed)
    np.random.seed(seed % (2 ** 32))
    tf.random.set_seed(seed)
