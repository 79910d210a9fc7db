"""Loop-invariant values of a decoding step, built once outside the `tf.while_loop`.

A decoding loop (`t2t.search`) builds its step in the while-loop body, so everything the
step computes runs at every step, also what never changes: with
`symbol_modality_num_shards` > 1, the concatenation of the shards of the embedding /
softmax matrix (16 shards, an 8,079 x 256 copy, twice a step for the Multi30k model).
(Variable reads are not worth hoisting: a captured tensor is a loop variable with its own
Switch, Merge and NextIteration each step; for the Multi30k step that was ~150 ops added
to save 82 reads.)
Inside `hoisting_into(graph)`, `loop_invariant(key, build)` builds `build()` in `graph`
(the graph around the loop) the first time `key` is asked for and returns that tensor,
which the loop body then captures as a loop input. The values are the same tensors the
body would have computed, so the decodes do not change:

    outer = tf.compat.v1.get_default_graph()
    def body(i, x):
        w = loop_invariant("w", lambda: tf.concat([a, b], 0))   # built once, in `outer`
        return i + 1, x + tf.reduce_sum(w)
    with hoisting_into(outer):
        tf.compat.v1.while_loop(lambda i, x: i < 10, body, [0, 0.0])

Outside `hoisting_into` (training, slow decoding) `loop_invariant` just calls `build()`.
With TensorFlow's first-generation control flow (no function graph for the body) the
ops stay inside the loop, as before.
"""
import contextlib
import threading

import tensorflow as tf

_state = threading.local()


@contextlib.contextmanager
def hoisting_into(graph):
    """Within the block, `loop_invariant` builds its values in `graph`, once per key."""
    previous = getattr(_state, "target", None)
    _state.target = (graph, {})
    try:
        yield
    finally:
        _state.target = previous


def loop_invariant(key, build):
    """`build()`, built in the graph given to the enclosing `hoisting_into` (once per key).

    `key` names the value (e.g. a variable's name); asking again returns the first
    tensor. Without an enclosing `hoisting_into`, or when the current graph is that graph
    itself, `build()` is called as usual.
    """
    target = getattr(_state, "target", None)
    if target is None:
        return build()
    graph, built = target
    if key in built:
        return built[key]
    if tf.compat.v1.get_default_graph() is graph:
        return build()
    # No control dependency of the loop body may follow the value out of it.
    with graph.as_default(), tf.control_dependencies(None):
        value = build()
    built[key] = value
    return value

