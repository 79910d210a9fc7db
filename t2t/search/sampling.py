"""Greedy and sampled decoding in a `tf.while_loop`, the counterparts of `beam_search`.

    def symbols_to_logits_fn(ids):            # ids [batch, i + 1], starting with the GO id
        return logits                          # [batch, vocab_size]

    ids, scores, _ = greedy_decode(symbols_to_logits_fn, tf.zeros([2], tf.int32), 20)
    # ids [2, n + 1]: the initial id, then the argmax token of each step; a row that emitted
    # EOS (1) is padded with 0 afterwards; n <= 20 (stops when every row has ended).
    # scores [2]: the log probability of each row's generated tokens (EOS included).

    ids, scores, _ = sample_decode(symbols_to_logits_fn, tf.zeros([2], tf.int32), 20,
                                   temperature=0.8, top_k=10, seed=1234)
    # the same, sampling each token from softmax(logits / 0.8) restricted to the 10 best.

With `states` (nested dicts of [batch, ...] tensors, e.g. per-layer caches) the function is
called as `symbols_to_logits_fn(ids, i, states) -> (logits, states)`, as in `beam_search`.
With a `seed` the samples are drawn with stateless ops seeded by (seed, step), so the same
seed gives the same ids in every run and every graph.

Greedy decoding (temperature 0) with `drop_finished` removes a row from the loop state
once it has emitted EOS (see `live_rows`; ids and scores as without it, up to rounding).
"""
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import shape_utils
from t2t.search import beam_search
from t2t.search import live_rows

EOS_ID = beam_search.EOS_ID


def _state_shape_invariant(tensor):
    """Only the batch dimension is fixed: states may grow along any other one."""
    shape = tensor.shape.as_list()
    return tf.TensorShape(shape[:1] + [None] * (len(shape) - 1))


def sample_decode(symbols_to_logits_fn, initial_ids, decode_length, temperature=1.0, top_k=-1,
                  eos_id=EOS_ID, states=None, seed=None, prefix_length=0,
                  drop_finished=False, constants=None):
    """Decode by sampling one token per step until every row emitted EOS or decode_length.

    Args:
      symbols_to_logits_fn: `(ids [batch, i + 1]) -> logits [batch, vocab]`, or
        `(ids, i, states) -> (logits, states)` when `states` is given.
      initial_ids: [batch] ids to start from.
      decode_length: maximum number of generated tokens.
      temperature: 0.0 for greedy (argmax), else the softmax temperature.
      top_k: -1, or sample among the k highest logits only.
      eos_id: the id that ends a row; later positions are filled with 0.
      states: optional nested dict of [batch, ...] tensors threaded through the function.
      seed: optional int for reproducible sampling.
      prefix_length: the first steps (a forced prompt) whose EOS does not end a row.
      drop_finished: with temperature 0, remove a row from the loop once it has ended
        (the returned states are then those of the rows not ended). Ignored when
        sampling: the samples of a row depend on the rows drawn with it.
      constants: optional nested [batch, ...] tensors that never change (e.g. the encoder
        output); then the call is `symbols_to_logits_fn(ids, i, states, constants)`.

    Returns:
      (ids [batch, n + 1] int32 including the initial id, scores [batch] float32 — the sum
      of log softmax(logits) of the generated tokens up to and including EOS — , states).
    """
    initial_ids = tf.cast(initial_ids, tf.int32)
    batch_size = shape_utils.shape_list(initial_ids)[0]
    states = states or {}
    if drop_finished and temperature == 0.0:
        return _greedy_dropping_finished(symbols_to_logits_fn, initial_ids, decode_length,
                                         eos_id, states, prefix_length, constants)
    if constants is not None:
        step_fn = symbols_to_logits_fn

        def symbols_to_logits_fn(ids, i, step_states):
            return step_fn(ids, i, step_states, constants)

    def step(i, ids, finished, scores, states):
        if states:
            logits, states = symbols_to_logits_fn(ids, i, states)
        else:
            logits = symbols_to_logits_fn(ids)
        logits = tf.cast(logits, tf.float32)
        logits = tf.reshape(logits, [batch_size, shape_utils.shape_list(logits)[-1]])
        step_seed = None if seed is None else tf.stack([tf.constant(seed, tf.int32), i])
        next_ids = tf.cast(common_layers.sample_with_temperature(logits, temperature, top_k,
                                                                 step_seed),
                           tf.int32)
        chosen_log_probs = tf.gather(common_layers.log_prob_from_logits(logits), next_ids,
                                     batch_dims=1)
        scores += tf.where(finished, tf.zeros_like(chosen_log_probs), chosen_log_probs)
        next_ids = tf.where(finished, tf.zeros_like(next_ids), next_ids)
        finished = tf.logical_or(finished, tf.logical_and(tf.equal(next_ids, eos_id),
                                                          i >= prefix_length))
        ids = tf.concat([ids, tf.expand_dims(next_ids, 1)], axis=1)
        return i + 1, ids, finished, scores, states

    def not_done(i, unused_ids, finished, unused_scores, unused_states):
        return tf.logical_and(tf.less(i, decode_length),
                              tf.logical_not(tf.reduce_all(finished)))

    ids = tf.expand_dims(initial_ids, 1)
    finished = tf.zeros([batch_size], tf.bool)
    scores = tf.zeros([batch_size], tf.float32)
    _, ids, _, scores, states = tf.compat.v1.while_loop(
        not_done, step, [tf.constant(0), ids, finished, scores, states],
        shape_invariants=[
            tf.TensorShape([]), tf.TensorShape([None, None]), finished.shape, scores.shape,
            tf.nest.map_structure(_state_shape_invariant, states)],
        parallel_iterations=1,
        back_prop=False)
    return ids, scores, states


def _greedy_dropping_finished(symbols_to_logits_fn, initial_ids, decode_length, eos_id,
                              states, prefix_length, constants):
    """`sample_decode` at temperature 0 whose loop holds only the rows not ended yet."""
    batch_size = shape_utils.shape_list(initial_ids)[0]
    constants = constants if constants is not None else {}

    def step(i, ids, scores, states, constants, batch_index, out_ids, out_scores):
        if constants:
            logits, states = symbols_to_logits_fn(ids, i, states, constants)
        elif states:
            logits, states = symbols_to_logits_fn(ids, i, states)
        else:
            logits = symbols_to_logits_fn(ids)
        logits = tf.cast(logits, tf.float32)
        logits = tf.reshape(logits, [shape_utils.shape_list(ids)[0],
                                     shape_utils.shape_list(logits)[-1]])
        next_ids = tf.cast(common_layers.sample_with_temperature(logits, 0.0, -1), tf.int32)
        scores += tf.gather(common_layers.log_prob_from_logits(logits), next_ids,
                            batch_dims=1)
        ids = tf.concat([ids, tf.expand_dims(next_ids, 1)], axis=1)
        done = tf.logical_and(tf.equal(next_ids, eos_id), i >= prefix_length)
        out_ids = live_rows.write_rows(out_ids, batch_index, done,
                                       live_rows.pad_to(ids, decode_length + 1))
        out_scores = live_rows.write_rows(out_scores, batch_index, done, scores)
        live = tf.logical_not(done)
        ids, scores, states, constants, batch_index = tf.cond(
            tf.reduce_any(done),
            lambda: live_rows.keep_rows((ids, scores, states, constants, batch_index), live),
            lambda: (ids, scores, states, constants, batch_index))
        return i + 1, ids, scores, states, constants, batch_index, out_ids, out_scores

    def not_done(i, ids, *unused):
        return tf.logical_and(tf.less(i, decode_length),
                              tf.greater(tf.shape(ids)[0], 0))

    loop_vars = [tf.constant(0), tf.expand_dims(initial_ids, 1),
                 tf.zeros([batch_size], tf.float32), states, constants, tf.range(batch_size),
                 tf.zeros([batch_size, decode_length + 1], tf.int32),
                 tf.zeros([batch_size], tf.float32)]
    steps, ids, scores, states, _, batch_index, out_ids, out_scores = (
        tf.compat.v1.while_loop(
            not_done, step, loop_vars,
            shape_invariants=[
                tf.TensorShape([]), tf.TensorShape([None, None]), tf.TensorShape([None]),
                tf.nest.map_structure(
                    lambda t: tf.TensorShape([None] * t.shape.ndims), states),
                tf.nest.map_structure(live_rows.batch_invariant, constants),
                tf.TensorShape([None]), loop_vars[6].shape, loop_vars[7].shape],
            parallel_iterations=1, back_prop=False))
    # The rows that never emitted EOS (decode_length ran out).
    everyone = tf.ones_like(scores, tf.bool)
    out_ids = live_rows.write_rows(out_ids, batch_index, everyone,
                                   live_rows.pad_to(ids, decode_length + 1))
    out_scores = live_rows.write_rows(out_scores, batch_index, everyone, scores)
    out_ids = out_ids[:, :steps + 1]
    out_ids.set_shape((None, None))
    return out_ids, out_scores, states


def greedy_decode(symbols_to_logits_fn, initial_ids, decode_length, eos_id=EOS_ID,
                  states=None, prefix_length=0):
    """`sample_decode` with temperature 0: the argmax token at every step."""
    return sample_decode(symbols_to_logits_fn, initial_ids, decode_length, temperature=0.0,
                         eos_id=eos_id, states=states, prefix_length=prefix_length)
