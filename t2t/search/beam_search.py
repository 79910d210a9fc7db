"""Beam search, as T2T 1.15.7's `utils/beam_search.py`.

    def symbols_to_logits_fn(ids):            # ids [batch * beam, i + 1], starting with GO
        return logits                          # [batch * beam, vocab_size]

    ids, scores, _ = beam_search(symbols_to_logits_fn, initial_ids=tf.zeros([2], tf.int32),
                                 beam_size=4, decode_length=20, vocab_size=100, alpha=0.6)
    # ids [2, 4, L + 1]: per batch item the 4 best sequences, best first, each starting with
    # the initial id and (if it finished) ending with EOS then 0s; scores [2, 4].

A sequence of n generated tokens (EOS included) with total log probability p scores
`p / ((5 + n) / 6) ** alpha` (the GNMT length penalty; alpha = 0 ranks by p).

Two sets are kept apart: `alive` beams (no EOS yet) and `finished` beams (ended with EOS).
Each step extends every alive beam by every token, takes the 2 * beam_size best
candidates (enough for beam_size non-EOS ones, since each beam has one EOS extension),
keeps the best beam_size non-EOS ones alive and merges the EOS ones into finished. The loop
ends after `decode_length` steps or, when no alive beam can still beat the finished ones
(with the most favourable length penalty, that of `decode_length`): with `stop_early` as
soon as the best finished beam is out of reach, otherwise only when every one is.

`stopping_bound` chooses that bound:
- "max_length" (T2T's, the default): an alive beam is out of reach when its log
  probability under the largest length penalty, that of `decode_length`, is below the
  finished beam's score. Extending a beam only lowers its log probability, so no beam the
  search could still find would change the result: the search is exact.
- "current_length" (the peers' heuristic: OpenNMT-py / eole stop a sentence once its best
  hypothesis has finished, Hugging Face's `early_stopping=False` bounds alive beams at
  their current length): the alive beam is scored under the penalty of its current
  length. The search stops sooner (on the Multi30k model, beam 4, half the
  beam-rows x steps), and can miss a longer hypothesis whose length penalty would have
  lifted it above the finished one.

With `states` (nested dicts of tensors with a leading batch dimension, e.g. per-layer
caches) the function is called as `symbols_to_logits_fn(ids, i, states) -> (logits,
states)` on states expanded to [batch * beam, ...], and the states are reordered with the
beams they belong to.

With `drop_finished` (the Transformer's cached decoding uses it) a batch item leaves the
loop state as soon as its own bound is met (its best alive beam, with the largest length
penalty, cannot beat its best finished one, or with `stop_early=False` its worst): its
finished beams cannot change any more, so they are written to the result at its row of
the batch and its rows are removed from every loop tensor, the states included. The
search is T2T's in exact arithmetic; the remaining items' scores can move by rounding,
since the per-step MatMuls then see fewer rows.
"""
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers.shape_utils import shape_list
from t2t.search import live_rows

EOS_ID = 1
INF = 1.0 * 1e7  # Large finite "infinity": keeps sums finite, -INF beams sort last.


# T2T's beam_search module had its own; one home now (t2t.layers), the name kept here.
log_prob_from_logits = common_layers.log_prob_from_logits


def length_penalty(length, alpha):
    """((5 + length) / 6) ** alpha; e.g. length 3, alpha 1 -> 8 / 6."""
    return tf.pow((5.0 + tf.cast(length, tf.float32)) / 6.0, alpha)


# The stopping bounds `beam_search` knows (see the module docstring).
STOPPING_BOUNDS = ("max_length", "current_length")


def check_stopping_bound(stopping_bound):
    if stopping_bound not in STOPPING_BOUNDS:
        raise ValueError("stopping_bound=%r: use one of %s" % (stopping_bound,
                                                               ", ".join(STOPPING_BOUNDS)))
    return stopping_bound


def bound_penalty(stopping_bound, decode_length, length, alpha):
    """The length penalty an alive beam of `length` ids is bounded with: that of
    `decode_length` for "max_length", of `length` for "current_length"."""
    if stopping_bound == "current_length":
        return length_penalty(length, alpha)
    return length_penalty(decode_length, alpha)


# Ids per block in `top_k_by_blocks`; below 8 blocks a plain top-k is as fast.
TOP_K_BLOCK = 64


def top_k_by_blocks(values, k):
    """`tf.nn.top_k(values, k)` over the last axis, the same values and indices (ties too,
    to the lower index), in about half the time for k much smaller than the axis.

    The axis is cut into blocks of TOP_K_BLOCK (the last padded with -inf); each block's
    maximum is taken in one vectorised pass, and only the k blocks with the highest
    maxima are searched: every one of the k best values is the maximum of its block or
    below it, so its block's maximum is among the k highest (ties go to the lower block,
    which holds the lower indices). The chosen blocks are searched in index order.

        top_k_by_blocks(tf.range(1000.0)[None], 2)  # ([[999., 998.]], [[999, 998]])
    """
    width = values.shape[-1]
    if width is None or width < 8 * TOP_K_BLOCK or k > width // TOP_K_BLOCK:
        return tf.nn.top_k(values, k=k)
    outer = shape_list(values)[:-1]
    blocks_count = -(-width // TOP_K_BLOCK)
    padding = [[0, 0]] * (len(outer)) + [[0, blocks_count * TOP_K_BLOCK - width]]
    blocks = tf.reshape(tf.pad(values, padding, constant_values=float("-inf")),
                        outer + [blocks_count, TOP_K_BLOCK])
    _, best_blocks = tf.nn.top_k(tf.reduce_max(blocks, axis=-1), k=k)
    best_blocks = tf.sort(best_blocks, axis=-1)
    candidates = tf.reshape(tf.gather(blocks, best_blocks, batch_dims=len(outer)),
                            outer + [k * TOP_K_BLOCK])
    top_values, positions = tf.nn.top_k(candidates, k=k)
    block = tf.gather(best_blocks, positions // TOP_K_BLOCK, batch_dims=len(outer))
    return top_values, block * TOP_K_BLOCK + positions % TOP_K_BLOCK


def _best_extensions(logits, alive_log_probs, penalty, beam_size, vocab_size):
    """The 2 * beam best one-token extensions of each item's alive beams.

    logits [n, beam, vocab], alive_log_probs [n, beam] -> scores (log prob / penalty),
    log probs, source beam and id, each [n, 2 * beam], best first. The same choice as
    T2T's top-k over the whole [n, beam * vocab] of log-softmax + alive log prob, made in
    two stages: an extension's log prob is its logit shifted by its beam's constant, so
    the best of a beam by logit are its best by log prob, and the 2 * beam best overall are
    among each beam's 2 * beam best. Only those candidates are shifted and scored: the
    [n, beam, vocab] tensor is read by the log-sum-exp and the per-beam top-k alone. The
    scores are the same floats as T2T's, computed by the same operations.
    """
    k = min(2 * beam_size, vocab_size)
    log_norm = tf.reduce_logsumexp(logits, axis=2, keepdims=True)
    beam_logits, beam_ids = top_k_by_blocks(logits, k)
    candidate_log_probs = tf.reshape(
        (beam_logits - log_norm) + tf.expand_dims(alive_log_probs, axis=2),
        [-1, beam_size * k])
    topk_scores, topk_candidates = tf.nn.top_k(candidate_log_probs / penalty, k=2 * beam_size)
    topk_log_probs = tf.gather(candidate_log_probs, topk_candidates, batch_dims=1)
    topk_ids = tf.gather(tf.reshape(beam_ids, [-1, beam_size * k]), topk_candidates,
                         batch_dims=1)
    return topk_scores, topk_log_probs, topk_candidates // k, topk_ids


def _merge_beam_dim(tensor):
    """[batch, beam, ...] -> [batch * beam, ...]; non-tensors pass through."""
    if not isinstance(tensor, tf.Tensor):
        return tensor
    shape = shape_list(tensor)
    shape[0] *= shape[1]
    shape.pop(1)
    return tf.reshape(tensor, shape)


def _unmerge_beam_dim(tensor, batch_size, beam_size):
    """[batch * beam, ...] -> [batch, beam, ...]; non-tensors pass through."""
    if not isinstance(tensor, tf.Tensor):
        return tensor
    shape = shape_list(tensor)
    return tf.reshape(tensor, [batch_size, beam_size] + shape[1:])


def _expand_to_beam_size(tensor, beam_size):
    """[batch, ...] -> [batch, beam, ...] by repeating each item; non-tensors pass through."""
    if not isinstance(tensor, tf.Tensor):
        return tensor
    tensor = tf.expand_dims(tensor, axis=1)
    multiples = [1] * tensor.shape.ndims
    multiples[1] = beam_size
    return tf.tile(tensor, multiples)


def get_state_shape_invariants(tensor):
    """The tensor's shape with every dimension but the first and last set to None.

    Lets caches grow along their middle dimensions inside the decoding while_loop, e.g.
    [2, 4, 8, 0, 16] -> [2, None, None, None, 16].
    """
    shape = tensor.shape.as_list()
    for i in range(1, len(shape) - 1):
        shape[i] = None
    return tf.TensorShape(shape)


def compute_batch_indices(batch_size, beam_size):
    """[batch, beam] int32 of each entry's batch index: (2, 3) -> [[0, 0, 0], [1, 1, 1]]."""
    batch_pos = tf.range(batch_size * beam_size) // beam_size
    return tf.reshape(batch_pos, [batch_size, beam_size])


def compute_topk_scores_and_seq(sequences, scores, scores_to_gather, flags, beam_size,
                                batch_size, prefix="default", states_to_gather=None,
                                use_tpu=False, use_top_k_with_unique=True):
    """The `beam_size` entries with the highest `scores` per batch item, best first.

    Args:
      sequences: [batch, n, length] ids. scores: [batch, n], used for ranking.
      scores_to_gather: [batch, n], the values returned for the chosen entries.
      flags: [batch, n] bools (finished or not). states_to_gather: nested [batch, n, ...].
      beam_size, batch_size: ints (or scalar tensors for batch_size).
      prefix: name prefix of the gather ops. use_tpu, use_top_k_with_unique: accepted for
        T2T compatibility; selection is `tf.nn.top_k` (ties go to the lower index).

    Returns:
      (topk_seq [batch, beam, length], topk_gathered_scores [batch, beam],
       topk_flags [batch, beam], topk_gathered_states).

    Example: scores [[-0.1, -2.5, 0., -1.5]] with beam 3 picks entries 2, 0, 3.
    """
    del use_tpu, use_top_k_with_unique
    _, topk_indexes = tf.nn.top_k(scores, k=beam_size)
    batch_pos = compute_batch_indices(batch_size, beam_size)
    top_coordinates = tf.stack([batch_pos, topk_indexes], axis=2)

    def gather(tensor, name):
        return tf.gather_nd(tensor, top_coordinates, name=prefix + name)

    topk_seq = gather(sequences, "_topk_seq")
    topk_flags = gather(flags, "_topk_flags")
    topk_gathered_scores = gather(scores_to_gather, "_topk_scores")
    topk_gathered_states = states_to_gather
    if states_to_gather:
        topk_gathered_states = tf.nest.map_structure(
            lambda state: gather(state, "_topk_states"), states_to_gather)
    return topk_seq, topk_gathered_scores, topk_flags, topk_gathered_states


def beam_search(symbols_to_logits_fn, initial_ids, beam_size, decode_length, vocab_size, alpha,
                states=None, eos_id=EOS_ID, stop_early=True, use_tpu=False,
                use_top_k_with_unique=True, fixed_states=False, prefix_length=0,
                drop_finished=False, constants=None, stopping_bound="max_length"):
    """Beam search with a length penalty.

    Args:
      symbols_to_logits_fn: `(ids) -> logits`, or `(ids, i, states) -> (logits, states)` when
        `states` is given; ids are [batch * beam, i + 1] (int32), logits [batch * beam,
        vocab_size]. With `use_tpu` the ids are a fixed [batch * beam, decode_length + 1]
        buffer (0 beyond position i) and the call is `(ids, i)`; with `use_tpu` and states
        only the last ids [batch * beam, 1] are passed.
      initial_ids: [batch] ids every sequence starts with (e.g. 0 = GO/PAD).
      beam_size: number of beams.
      decode_length: maximum number of generated tokens.
      vocab_size: size of the logits' last dimension.
      alpha: length-penalty exponent (0 = rank by log probability).
      states: optional nested dict of [batch, ...] tensors passed through the function.
      eos_id: id that ends a sequence.
      stop_early: stop once the best finished beam cannot be beaten (else, once none of
        the finished beams can be).
      use_tpu: fixed-shape mode: sequence buffers of length decode_length + 1 from the
        start (XLA-friendly); results are identical, padded with 0.
      use_top_k_with_unique: accepted for T2T compatibility (a TPU top-k variant).
      fixed_states: the states keep their shapes from step to step (a preallocated cache);
        the loop then declares their exact shapes (by default only batch and last
        dimension are fixed, so a cache may grow).
      prefix_length: the first steps (a forced prompt) whose EOS does not end a beam.
      drop_finished: remove a batch item from the loop once its bound is met (not with
        `use_tpu`). The returned states are then those of the items still searching at
        the end; with `stop_early` only each item's best beam is as without it (the
        others are the finished beams of the step it left), and without `stop_early` the
        sequences may have fewer trailing 0s (the loop ends when every item's own bound
        is met; T2T's waits for the batch's worst finished beam).
      constants: optional nested [batch, ...] tensors the same for all beams of an item
        (e.g. the encoder output); then the call is `symbols_to_logits_fn(ids, i, states,
        constants)` with constants [batch * beam, ...]. Only gathered when items leave.
      stopping_bound: "max_length" (T2T's exact bound) or "current_length" (the peers'
        sooner stop); see the module docstring.

    Returns:
      (finished_seq [batch, beam, L + 1] int32 with the initial id first,
       finished_scores [batch, beam] float32, states). Batch items where no beam reached
      EOS return their alive beams, scored with the same length penalty. Finished slots
      never filled hold 0s with score -1e7.
    """
    del use_top_k_with_unique
    check_stopping_bound(stopping_bound)
    if beam_size < 1:
        raise ValueError("beam_size must be >= 1, got %r" % (beam_size,))
    if decode_length is None:
        raise ValueError("decode_length must be set for beam search")
    fixed_length = bool(use_tpu)
    initial_ids = tf.cast(initial_ids, tf.int32)
    batch_size = shape_list(initial_ids)[0]
    buffer_length = decode_length + 1 if fixed_length else None
    if drop_finished and not fixed_length:
        return _beam_search_dropping_finished(
            symbols_to_logits_fn, initial_ids, beam_size, decode_length, vocab_size, alpha,
            states, eos_id, stop_early, prefix_length, constants, stopping_bound)
    if constants is not None:
        # Copied once per beam, outside the loop: never carried nor reordered.
        flat_constants = tf.nest.map_structure(
            lambda t: tf.repeat(t, beam_size, axis=0), constants)
        step_fn = symbols_to_logits_fn

        def symbols_to_logits_fn(ids, i, step_states):
            return step_fn(ids, i, step_states, flat_constants)

    # Only beam 0 starts live; the others are -INF so step 1 does not pick the same
    # extension beam_size times.
    initial_log_probs = tf.constant([[0.0] + [-INF] * (beam_size - 1)])
    alive_log_probs = tf.tile(initial_log_probs, [batch_size, 1])
    alive_seq = tf.expand_dims(_expand_to_beam_size(initial_ids, beam_size), axis=2)
    if fixed_length:
        alive_seq = tf.pad(alive_seq, [[0, 0], [0, 0], [0, decode_length]])
    if states:
        states = tf.nest.map_structure(lambda s: _expand_to_beam_size(s, beam_size), states)
    else:
        states = {}
    finished_seq = tf.zeros_like(alive_seq)
    finished_scores = tf.ones([batch_size, beam_size]) * -INF
    finished_flags = tf.zeros([batch_size, beam_size], tf.bool)

    def write_position(sequences, position, ids):
        """Put `ids` [batch, k] at `position` of the zero-padded [batch, k, L + 1] buffer."""
        mask = tf.one_hot(position, buffer_length, dtype=tf.int32)
        return sequences * (1 - mask) + tf.expand_dims(ids, 2) * mask

    def grow_topk(i, alive_seq, alive_log_probs, states):
        """The 2 * beam best one-token extensions of the alive beams."""
        if fixed_length and states:
            # tf.slice has a static size (XLA cannot size a slice whose bounds are tensors).
            flat_ids = tf.reshape(tf.slice(alive_seq, [0, 0, i], [-1, -1, 1]),
                                  [batch_size * beam_size, 1])
        else:
            flat_ids = tf.reshape(alive_seq, [batch_size * beam_size, -1])
        if states:
            flat_states = tf.nest.map_structure(_merge_beam_dim, states)
            flat_logits, flat_states = symbols_to_logits_fn(flat_ids, i, flat_states)
            states = tf.nest.map_structure(
                lambda t: _unmerge_beam_dim(t, batch_size, beam_size), flat_states)
        elif fixed_length:
            flat_logits = symbols_to_logits_fn(flat_ids, i)
        else:
            flat_logits = symbols_to_logits_fn(flat_ids)
        logits = tf.reshape(tf.cast(flat_logits, tf.float32), [batch_size, beam_size, vocab_size])
        topk_scores, topk_log_probs, topk_beam_index, topk_ids = _best_extensions(
            logits, alive_log_probs, length_penalty(i + 1, alpha), beam_size, vocab_size)
        # Coordinates [batch, 2 * beam, 2] of the beam each candidate extends.
        batch_pos = compute_batch_indices(batch_size, beam_size * 2)
        topk_coordinates = tf.stack([batch_pos, topk_beam_index], axis=2)
        topk_seq = tf.gather_nd(alive_seq, topk_coordinates)
        # States are not gathered here: grow_alive picks beam_size of these 2 * beam
        # candidates, and inner_loop gathers the states once, by the composed index. The
        # states (e.g. a Transformer's key/value cache) are the biggest tensors in the loop.
        if fixed_length:
            topk_seq = write_position(topk_seq, i + 1, topk_ids)
        else:
            topk_seq = tf.concat([topk_seq, tf.expand_dims(topk_ids, axis=2)], axis=2)
        # Extensions of placeholder beams (log prob ~ -INF) never count as finished.
        topk_finished = tf.logical_and(tf.equal(topk_ids, eos_id), topk_log_probs > -INF / 2)
        topk_finished = tf.logical_and(topk_finished, i >= prefix_length)
        return topk_seq, topk_log_probs, topk_scores, topk_finished, states, topk_beam_index

    def grow_alive(curr_seq, curr_scores, curr_log_probs, curr_finished, states):
        """The best `beam_size` candidates that did not just emit EOS."""
        # The log probs are masked too: when fewer than beam_size candidates are alive, an
        # EOS-ended one fills the slot as a dead placeholder instead of growing further.
        finished_mask = tf.cast(curr_finished, tf.float32) * -INF
        return compute_topk_scores_and_seq(curr_seq, curr_scores + finished_mask,
                                           curr_log_probs + finished_mask, curr_finished,
                                           beam_size, batch_size, "grow_alive", states)

    def grow_finished(finished_seq, finished_scores, finished_flags, curr_seq, curr_scores,
                      curr_finished):
        """The best `beam_size` of the finished beams and the candidates ending in EOS."""
        if not fixed_length:  # Keep finished as long as the candidates.
            finished_seq = tf.concat(
                [finished_seq, tf.zeros([batch_size, beam_size, 1], tf.int32)], axis=2)
        curr_scores += (1.0 - tf.cast(curr_finished, tf.float32)) * -INF
        return compute_topk_scores_and_seq(
            tf.concat([finished_seq, curr_seq], axis=1),
            tf.concat([finished_scores, curr_scores], axis=1),
            tf.concat([finished_scores, curr_scores], axis=1),
            tf.concat([finished_flags, curr_finished], axis=1),
            beam_size, batch_size, "grow_finished")

    def inner_loop(i, alive_seq, alive_log_probs, finished_seq, finished_scores,
                   finished_flags, states):
        topk_seq, topk_log_probs, topk_scores, topk_finished, states, topk_beam_index = (
            grow_topk(i, alive_seq, alive_log_probs, states))
        alive_seq, alive_log_probs, _, alive_source = grow_alive(
            topk_seq, topk_scores, topk_log_probs, topk_finished,
            {"beam_index": topk_beam_index})
        if states:
            # The beam (of the previous step) each new alive beam extends: [batch, beam].
            states = tf.nest.map_structure(
                lambda state: tf.gather(state, alive_source["beam_index"], batch_dims=1),
                states)
        finished_seq, finished_scores, finished_flags, _ = grow_finished(
            finished_seq, finished_scores, finished_flags, topk_seq, topk_scores,
            topk_finished)
        return (i + 1, alive_seq, alive_log_probs, finished_seq, finished_scores,
                finished_flags, states)

    def is_not_finished(i, unused_alive_seq, alive_log_probs, unused_finished_seq,
                        finished_scores, unused_finished_flags, unused_states):
        # Extending a beam only lowers its log probability, so the best any alive beam can
        # reach is its current log probability under the largest length penalty (with
        # "current_length", it is scored at its length: i ids after i steps).
        best_alive_scores = alive_log_probs[:, 0] / bound_penalty(stopping_bound,
                                                                  decode_length, i, alpha)
        if stop_early:
            # Only the best finished beam must be out of reach (per batch item).
            finished_bar = tf.reduce_max(finished_scores, axis=1)
        else:
            # Every finished beam must be out of reach; an empty slot (-INF) keeps going.
            finished_bar = tf.reduce_min(finished_scores)
        bound_is_met = tf.reduce_all(tf.greater(finished_bar, best_alive_scores))
        return tf.logical_and(tf.less(i, decode_length), tf.logical_not(bound_is_met))

    seq_invariant = alive_seq.shape if fixed_length else tf.TensorShape([None, None, None])
    (steps, alive_seq, alive_log_probs, finished_seq, finished_scores, finished_flags,
     states) = tf.compat.v1.while_loop(
        is_not_finished, inner_loop,
        [tf.constant(0), alive_seq, alive_log_probs, finished_seq, finished_scores,
         finished_flags, states],
        shape_invariants=[
            tf.TensorShape([]), seq_invariant, alive_log_probs.shape, seq_invariant,
            finished_scores.shape, finished_flags.shape,
            # A preallocated cache keeps its exact shapes (fully static loop state).
            tf.nest.map_structure(
                (lambda s: s.shape) if fixed_states else get_state_shape_invariants, states)],
        parallel_iterations=1,
        back_prop=False)

    static_length = buffer_length if isinstance(buffer_length, int) else None
    alive_seq.set_shape((None, beam_size, static_length))
    finished_seq.set_shape((None, beam_size, static_length))
    # A batch item where no beam ever reached EOS returns its alive beams instead.
    has_finished = tf.reduce_any(finished_flags, axis=1)
    finished_seq = tf.where(has_finished[:, None, None], finished_seq, alive_seq)
    alive_scores = alive_log_probs / length_penalty(steps, alpha)
    finished_scores = tf.where(has_finished[:, None], finished_scores, alive_scores)
    return finished_seq, finished_scores, states


def _beam_search_dropping_finished(symbols_to_logits_fn, initial_ids, beam_size,
                                   decode_length, vocab_size, alpha, states, eos_id,
                                   stop_early, prefix_length, constants, stopping_bound):
    """`beam_search(..., drop_finished=True)`: the loop holds only the items still searching.

    Every loop tensor's first dimension is the number n of live items; `batch_index` [n]
    is each one's row in the input batch. At the end of a step the items whose bound is met
    are written to `out_seq` / `out_scores` (the full batch, sequences zero-padded to
    decode_length + 1) and removed: from the small tensors by a gather, from the states
    inside the beam reorder they get anyway (one gather by (item, beam)), from the
    constants only in the steps where some item left (`tf.cond`).
    """
    batch_size = shape_list(initial_ids)[0]
    buffer_length = decode_length + 1
    states = tf.nest.map_structure(lambda s: _expand_to_beam_size(s, beam_size), states or {})
    constants = tf.nest.map_structure(lambda s: _expand_to_beam_size(s, beam_size),
                                      constants if constants is not None else {})
    alive_log_probs = tf.tile(tf.constant([[0.0] + [-INF] * (beam_size - 1)]), [batch_size, 1])
    alive_seq = tf.expand_dims(_expand_to_beam_size(initial_ids, beam_size), axis=2)

    def call(flat_ids, i, states, constants):
        """Logits [n, beam, vocab] and the new states [n, beam, ...] of the live items."""
        rows = shape_list(flat_ids)[0] // beam_size
        if not states:
            logits = symbols_to_logits_fn(flat_ids)
        else:
            flat_states = tf.nest.map_structure(_merge_beam_dim, states)
            if constants:
                flat_constants = tf.nest.map_structure(_merge_beam_dim, constants)
                logits, flat_states = symbols_to_logits_fn(flat_ids, i, flat_states,
                                                           flat_constants)
            else:
                logits, flat_states = symbols_to_logits_fn(flat_ids, i, flat_states)
            states = tf.nest.map_structure(
                lambda t: _unmerge_beam_dim(t, rows, beam_size), flat_states)
        logits = tf.reshape(tf.cast(logits, tf.float32), [rows, beam_size, vocab_size])
        return logits, states

    def step(i, alive_seq, alive_log_probs, finished_seq, finished_scores, finished_flags,
             states, constants, batch_index, out_seq, out_scores):
        rows = shape_list(alive_log_probs)[0]
        logits, states = call(tf.reshape(alive_seq, [rows * beam_size, -1]), i, states,
                              constants)
        # As beam_search's grow_topk: the 2 * beam best extensions.
        topk_scores, topk_log_probs, topk_beam_index, topk_ids = _best_extensions(
            logits, alive_log_probs, length_penalty(i + 1, alpha), beam_size, vocab_size)
        topk_seq = tf.gather(alive_seq, topk_beam_index, batch_dims=1)
        topk_seq = tf.concat([topk_seq, tf.expand_dims(topk_ids, axis=2)], axis=2)
        topk_finished = tf.logical_and(tf.equal(topk_ids, eos_id), topk_log_probs > -INF / 2)
        topk_finished = tf.logical_and(topk_finished, i >= prefix_length)
        # grow_alive
        finished_mask = tf.cast(topk_finished, tf.float32) * -INF
        alive_seq, alive_log_probs, _, alive_source = compute_topk_scores_and_seq(
            topk_seq, topk_scores + finished_mask, topk_log_probs + finished_mask,
            topk_finished, beam_size, rows, "grow_alive", {"beam_index": topk_beam_index})
        # grow_finished
        finished_seq = tf.concat([finished_seq, tf.zeros([rows, beam_size, 1], tf.int32)],
                                 axis=2)
        candidate_scores = topk_scores + (1.0 - tf.cast(topk_finished, tf.float32)) * -INF
        all_scores = tf.concat([finished_scores, candidate_scores], axis=1)
        finished_seq, finished_scores, finished_flags, _ = compute_topk_scores_and_seq(
            tf.concat([finished_seq, topk_seq], axis=1), all_scores, all_scores,
            tf.concat([finished_flags, topk_finished], axis=1), beam_size, rows,
            "grow_finished")
        # Each item's own bound (beam_search's is_not_finished, per item); the alive beams
        # hold i + 1 ids now.
        best_alive_scores = alive_log_probs[:, 0] / bound_penalty(stopping_bound,
                                                                  decode_length, i + 1, alpha)
        bar = (tf.reduce_max(finished_scores, axis=1) if stop_early
               else tf.reduce_min(finished_scores, axis=1))
        done = tf.greater(bar, best_alive_scores)
        out_seq = live_rows.write_rows(out_seq, batch_index, done,
                                       live_rows.pad_to(finished_seq, buffer_length))
        out_scores = live_rows.write_rows(out_scores, batch_index, done, finished_scores)
        live = tf.logical_not(done)
        keep = live_rows.row_indices(live)
        if states:
            # The beam reorder and the removal in one gather: (live item, source beam).
            source = tf.gather(alive_source["beam_index"], keep)
            item = tf.tile(tf.expand_dims(keep, 1), [1, beam_size])
            coordinates = tf.stack([item, source], axis=2)
            states = tf.nest.map_structure(lambda s: tf.gather_nd(s, coordinates), states)
        (alive_seq, alive_log_probs, finished_seq, finished_scores, finished_flags,
         batch_index) = live_rows.keep_rows(
            (alive_seq, alive_log_probs, finished_seq, finished_scores, finished_flags,
             batch_index), live)
        if constants:
            constants = tf.cond(tf.reduce_any(done),
                                lambda: live_rows.keep_rows(constants, live),
                                lambda: constants)
        return (i + 1, alive_seq, alive_log_probs, finished_seq, finished_scores,
                finished_flags, states, constants, batch_index, out_seq, out_scores)

    def searching(i, unused_alive_seq, alive_log_probs, *unused):
        return tf.logical_and(tf.less(i, decode_length),
                              tf.greater(tf.shape(alive_log_probs)[0], 0))

    loop_vars = [tf.constant(0), alive_seq, alive_log_probs, tf.zeros_like(alive_seq),
                 tf.ones([batch_size, beam_size]) * -INF,
                 tf.zeros([batch_size, beam_size], tf.bool), states, constants,
                 tf.range(batch_size), tf.zeros([batch_size, beam_size, buffer_length],
                                                tf.int32),
                 tf.ones([batch_size, beam_size]) * -INF]
    sequence = tf.TensorShape([None, beam_size, None])
    scores = tf.TensorShape([None, beam_size])
    invariants = [
        tf.TensorShape([]), sequence, scores, sequence, scores, scores,
        tf.nest.map_structure(
            lambda s: tf.TensorShape([None] + get_state_shape_invariants(s).as_list()[1:]),
            states),
        tf.nest.map_structure(live_rows.batch_invariant, constants),
        tf.TensorShape([None]), loop_vars[9].shape, loop_vars[10].shape]
    (steps, alive_seq, alive_log_probs, finished_seq, finished_scores, finished_flags,
     states, _, batch_index, out_seq, out_scores) = tf.compat.v1.while_loop(
        searching, step, loop_vars, shape_invariants=invariants, parallel_iterations=1,
        back_prop=False)
    # The items still searching when decode_length ran out; as beam_search, one where no
    # beam reached EOS returns its alive beams.
    has_finished = tf.reduce_any(finished_flags, axis=1)
    finished_seq = tf.where(has_finished[:, None, None], finished_seq, alive_seq)
    finished_scores = tf.where(has_finished[:, None], finished_scores,
                               alive_log_probs / length_penalty(steps, alpha))
    everyone = tf.ones_like(has_finished)
    out_seq = live_rows.write_rows(out_seq, batch_index, everyone,
                                   live_rows.pad_to(finished_seq, buffer_length))
    out_scores = live_rows.write_rows(out_scores, batch_index, everyone, finished_scores)
    out_seq = out_seq[:, :, :steps + 1]
    out_seq.set_shape((None, beam_size, None))
    return out_seq, out_scores, states
