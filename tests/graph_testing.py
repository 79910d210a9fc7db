"""Running layer code in a TF1-style graph for tests: build, initialise variables, fetch."""
import tensorflow as tf

v1 = tf.compat.v1


def run_graph(build, seed=1):
    """Build in a fresh graph (graph seed `seed`), initialise variables, run the fetches."""
    with tf.Graph().as_default():
        v1.set_random_seed(seed)
        fetches = build()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            return sess.run(fetches)
