"""Beam search against exhaustive search over a tiny table "language model"; sampling."""
import itertools

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from t2t.layers import common_layers
from t2t.search import beam_search
from t2t.search import sampling

EOS = 1
NEG = -1e9  # A logit that makes a token impossible.


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _random_tables(seed, batch, length, vocab):
    """Logits [batch, step, previous token, vocab]: a position-dependent bigram model."""
    return np.random.RandomState(seed).randn(batch, length, vocab, vocab).astype(np.float32)


def _table_fn(tables, beam_size):
    """symbols_to_logits_fn(ids [batch * beam, i + 1]) looking logits up in `tables`."""
    tables_t = tf.constant(tables)

    def fn(ids):
        rows = tf.shape(ids)[0]
        batch_index = tf.range(rows) // beam_size
        step = tf.fill([rows], tf.shape(ids)[1] - 1)
        return tf.gather_nd(tables_t, tf.stack([batch_index, step, ids[:, -1]], axis=1))
    return fn


def _brute_force(table, length, alpha):
    """Every EOS-terminated sequence of <= length tokens, best T2T score first.

    Returns a list of (tokens, score) with score = log p / ((5 + n) / 6) ** alpha.
    """
    vocab = table.shape[-1]
    log_probs = _log_softmax(table.astype(np.float64))
    results = []
    for n in range(1, length + 1):
        for prefix in itertools.product([t for t in range(vocab) if t != EOS], repeat=n - 1):
            tokens = list(prefix) + [EOS]
            previous, total = 0, 0.0
            for step, token in enumerate(tokens):
                total += log_probs[step, previous, token]
                previous = token
            results.append((tokens, total / ((5.0 + n) / 6.0) ** alpha))
    return sorted(results, key=lambda r: -r[1])


def _run(build):
    with tf.Graph().as_default():
        outputs = build()
        with tf.compat.v1.Session() as sess:
            return sess.run(outputs)


def _beam(tables, beam_size, length, alpha, **kwargs):
    batch, _, vocab, _ = tables.shape
    return _run(lambda: beam_search.beam_search(
        _table_fn(tables, beam_size), tf.zeros([batch], tf.int32), beam_size, length, vocab,
        alpha, eos_id=EOS, **kwargs)[:2])


def _strip(sequence):
    """[0, t1, ..., EOS, 0, 0] -> [t1, ..., EOS]."""
    tokens = list(sequence[1:])
    return tokens[:tokens.index(EOS) + 1] if EOS in tokens else tokens


@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_wide_beam_returns_exhaustive_ranking(seed, alpha):
    # vocab 4, length 3: 27 alive prefixes at most and 36 candidates per step, so beam 27
    # explores everything and the finished beams are the exact T2T-score ranking.
    tables = _random_tables(seed, batch=2, length=3, vocab=4)
    ids, scores = _beam(tables, beam_size=27, length=3, alpha=alpha, stop_early=False)
    assert ids.shape == (2, 27, 4)
    for b in range(2):
        expected = _brute_force(tables[b], 3, alpha)
        assert len(expected) == 13
        for k, (tokens, score) in enumerate(expected):
            assert _strip(ids[b, k]) == tokens
            assert ids[b, k, 0] == 0
            assert scores[b, k] == pytest.approx(score, rel=1e-4, abs=1e-5)
        # Slots no sequence filled keep the "-infinity" score.
        np.testing.assert_allclose(scores[b, 13:], -beam_search.INF)


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_stop_early_keeps_the_best_beam(seed):
    tables = _random_tables(seed, batch=2, length=3, vocab=4)
    early_ids, early_scores = _beam(tables, 27, 3, alpha=0.6, stop_early=True)
    full_ids, full_scores = _beam(tables, 27, 3, alpha=0.6, stop_early=False)
    for b in range(2):
        best_tokens, best_score = _brute_force(tables[b], 3, 0.6)[0]
        assert _strip(early_ids[b, 0]) == _strip(full_ids[b, 0]) == best_tokens
        assert early_scores[b, 0] == pytest.approx(full_scores[b, 0], rel=1e-6)
        assert early_scores[b, 0] == pytest.approx(best_score, rel=1e-4)


def test_narrow_beam_beats_greedy():
    # Greedy takes 2 (0.5), 0 (0.5), EOS (0.8): p 0.2. Beam 2 also keeps token 0 (0.4),
    # whose EOS continuation (0.9) gives 0.36, the best sequence.
    probs = np.full([1, 3, 3, 3], 1e-9, np.float32)
    probs[0, 0, 0] = [0.4, 0.1, 0.5]           # step 0 after GO
    probs[0, 1, 0] = [0.05, 0.9, 0.05]         # step 1 after 0
    probs[0, 1, 2] = [0.5, 0.1, 0.4]           # step 1 after 2
    probs[0, 2, :] = [0.1, 0.8, 0.1]           # step 2: mostly EOS
    tables = np.log(probs)
    ids, scores = _beam(tables, beam_size=2, length=3, alpha=0.0)
    assert _strip(ids[0, 0]) == [0, EOS]
    assert np.exp(scores[0, 0]) == pytest.approx(0.36, rel=1e-5)
    greedy_ids, _, _ = _run(lambda: sampling.greedy_decode(
        _table_fn(tables, 1), tf.zeros([1], tf.int32), 3))
    assert _strip(greedy_ids[0]) != [0, EOS]


def test_alpha_changes_the_ranking_as_the_formula_says():
    probs = np.full([1, 2, 3, 3], 1e-9, np.float32)
    probs[0, 0, 0] = [0.05, 0.45, 0.5]   # [EOS] has p 0.45; [2, ...] starts with 0.5.
    probs[0, 1, 2] = [0.01, 0.85, 0.14]  # [2, EOS] has p 0.425.
    tables = np.log(probs)
    ids, scores = _beam(tables, beam_size=2, length=2, alpha=0.0, stop_early=False)
    assert [_strip(s) for s in ids[0]] == [[EOS], [2, EOS]]
    np.testing.assert_allclose(scores[0], np.log([0.45, 0.425]), rtol=1e-5)
    ids, scores = _beam(tables, beam_size=2, length=2, alpha=3.5, stop_early=False)
    assert [_strip(s) for s in ids[0]] == [[2, EOS], [EOS]]
    np.testing.assert_allclose(
        scores[0], [np.log(0.425) / (7 / 6) ** 3.5, np.log(0.45) / (6 / 6) ** 3.5], rtol=1e-5)


def _greedy_friendly_tables(seed, batch, length, vocab, eos_step):
    """EOS impossible except at `eos_step`, where it is the clear favourite.

    Beam 1 keeps an EOS runner-up as a finished hypothesis (greedy would drop it), so beam 1
    equals greedy exactly when EOS is never a runner-up.
    """
    tables = _random_tables(seed, batch, length, vocab)
    tables[:, :, :, EOS] = NEG
    if eos_step is not None:
        tables[:, eos_step, :, EOS] = 20.0
    return tables


@pytest.mark.parametrize("eos_step", [None, 2])
def test_beam_one_equals_greedy(eos_step):
    tables = _greedy_friendly_tables(5, batch=3, length=4, vocab=5, eos_step=eos_step)
    beam_ids, beam_scores = _beam(tables, beam_size=1, length=4, alpha=0.0)
    greedy_ids, greedy_scores, _ = _run(lambda: sampling.greedy_decode(
        _table_fn(tables, 1), tf.zeros([3], tf.int32), 4))
    np.testing.assert_array_equal(beam_ids[:, 0, :], greedy_ids)
    np.testing.assert_allclose(beam_scores[:, 0], greedy_scores, rtol=1e-5)
    # And greedy is the argmax path.
    log_probs = _log_softmax(tables.astype(np.float64))
    for b in range(3):
        previous, total, path = 0, 0.0, []
        for step in range(4):
            token = int(np.argmax(tables[b, step, previous]))
            total += log_probs[b, step, previous, token]
            path.append(token)
            previous = token
            if token == EOS:
                break
        assert _strip(greedy_ids[b]) == path
        assert greedy_scores[b] == pytest.approx(total, rel=1e-5)


def _history_state_fn(tables, beam_size):
    """A states fn whose logits come from the state, asserting the state matches the ids."""
    tables_t = tf.constant(tables)

    def fn(ids, i, states):
        history = states["history"]  # [batch * beam, i, 1]: the ids seen so far
        check = tf.debugging.assert_equal(history[:, :, 0], ids[:, :-1],
                                          message="state not reordered with its beam")
        with tf.control_dependencies([check]):
            history = tf.concat([history, ids[:, -1:, None]], axis=1)
        rows = tf.shape(ids)[0]
        batch_index = tf.range(rows) // beam_size
        previous = history[:, -1, 0]  # From the state, not from ids.
        logits = tf.gather_nd(tables_t, tf.stack([batch_index, tf.fill([rows], i), previous], 1))
        token_sum = states["nested"]["token_sum"] + tf.cast(ids[:, -1, None], tf.float32)
        return logits, {"history": history, "nested": {"token_sum": token_sum}}
    return fn


def _beam_with_states(tables, beam_size, length, alpha, **kwargs):
    batch, _, vocab, _ = tables.shape

    def build():
        states = {"history": tf.zeros([batch, 0, 1], tf.int32),
                  "nested": {"token_sum": tf.zeros([batch, 1])}}
        return beam_search.beam_search(
            _history_state_fn(tables, beam_size), tf.zeros([batch], tf.int32), beam_size,
            length, vocab, alpha, states=states, eos_id=EOS, **kwargs)
    return _run(build)


def test_states_are_reordered_with_the_beams():
    tables = _random_tables(6, batch=2, length=3, vocab=4)
    ids, scores, _ = _beam_with_states(tables, 27, 3, alpha=0.6, stop_early=False)
    plain_ids, plain_scores = _beam(tables, 27, 3, alpha=0.6, stop_early=False)
    np.testing.assert_array_equal(ids, plain_ids)
    np.testing.assert_allclose(scores, plain_scores, rtol=1e-6)

    # Without EOS every beam stays alive: the returned states belong to the returned beams.
    tables[:, :, :, EOS] = NEG
    ids, _, states = _beam_with_states(tables, 3, 3, alpha=0.0)
    assert ids.shape == (2, 3, 4)
    np.testing.assert_array_equal(states["history"][..., 0], ids[:, :, :3])
    np.testing.assert_allclose(states["nested"]["token_sum"][..., 0], ids[:, :, :3].sum(-1))
    # Three different beams per batch item, best first.
    assert len({tuple(s) for s in ids[0]}) == 3
    assert all(np.all(np.diff(row) <= 0) for row in _beam(tables, 3, 3, 0.0)[1])


def test_no_eos_returns_alive_beams_with_length_normalised_scores():
    tables = _random_tables(7, batch=1, length=3, vocab=4)
    tables[:, :, :, EOS] = NEG
    ids, scores = _beam(tables, beam_size=2, length=3, alpha=1.0)
    log_probs = _log_softmax(tables[0].astype(np.float64))
    for k in range(2):
        tokens = ids[0, k, 1:]
        total = sum(log_probs[s, p, t] for s, (p, t) in enumerate(zip([0] + list(tokens), tokens)))
        assert scores[0, k] == pytest.approx(total / (8.0 / 6.0), rel=1e-5)


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_fixed_length_mode_matches_dynamic(alpha):
    tables = _random_tables(8, batch=2, length=3, vocab=4)

    def fixed_fn(ids, i):
        # ids is the whole [batch * beam, 4] buffer; the last real id is at position i.
        rows = tf.shape(ids)[0]
        batch_index = tf.range(rows) // 27
        return tf.gather_nd(tf.constant(tables),
                            tf.stack([batch_index, tf.fill([rows], i), ids[:, i]], 1))

    fixed_ids, fixed_scores, _ = _run(lambda: beam_search.beam_search(
        fixed_fn, tf.zeros([2], tf.int32), 27, 3, 4, alpha, use_tpu=True, stop_early=False))
    ids, scores = _beam(tables, 27, 3, alpha, stop_early=False)
    np.testing.assert_array_equal(fixed_ids, ids)
    np.testing.assert_allclose(fixed_scores, scores, rtol=1e-6)


def test_static_shapes_and_helpers():
    with tf.Graph().as_default():
        def fn(ids):
            return tf.random.uniform([tf.shape(ids)[0], 4])
        ids, scores, states = beam_search.beam_search(fn, tf.constant([0, 0]), 3, 5, 4, 0.0)
        assert ids.shape.as_list()[1:] == [3, None]
        assert scores.shape.as_list()[1:] == [3]
        assert states == {}
        sequences = tf.constant([[[2, 3], [4, 5], [6, 7], [19, 20]],
                                 [[8, 9], [10, 11], [12, 13], [80, 17]]])
        raw = tf.constant([[-0.1, -2.5, 0.0, -1.5], [-100.0, -5.0, -0.00789, -1.34]])
        flags = tf.constant([[True, False, False, True], [False, False, False, True]])
        topk = beam_search.compute_topk_scores_and_seq(sequences, raw, raw, flags, 3, 2)
        batch_indices = beam_search.compute_batch_indices(2, 3)
        state = tf.zeros([2, 5, 7, 3])
        merged = beam_search._merge_beam_dim(state)
        with tf.compat.v1.Session() as sess:
            topk_seq, topk_scores, topk_flags = sess.run(list(topk[:3]))
            assert sess.run(batch_indices).tolist() == [[0, 0, 0], [1, 1, 1]]
            assert sess.run(tf.shape(merged)).tolist() == [10, 7, 3]
            assert sess.run(tf.shape(beam_search._unmerge_beam_dim(merged, 2, 5))).tolist() == [
                2, 5, 7, 3]
            assert sess.run(tf.shape(
                beam_search._expand_to_beam_size(tf.zeros([2, 7]), 4))).tolist() == [2, 4, 7]
    assert topk_seq.tolist() == [[[6, 7], [2, 3], [19, 20]], [[12, 13], [80, 17], [10, 11]]]
    np.testing.assert_allclose(topk_scores, [[0.0, -0.1, -1.5], [-0.00789, -1.34, -5.0]])
    assert topk_flags.tolist() == [[False, True, True], [False, True, False]]
    assert beam_search.get_state_shape_invariants(tf.zeros([2, 4, 8, 16])).as_list() == [
        2, None, None, 16]


# ----------------------------------------------------------------------------
# Sampling.
# ----------------------------------------------------------------------------
def _sample(tables, rows, length, seed, temperature=1.0, top_k=-1):
    return _run(lambda: sampling.sample_decode(
        _table_fn(tables, rows), tf.zeros([rows], tf.int32), length, temperature=temperature,
        top_k=top_k, seed=seed)[0])


def test_top_k_sampling_never_leaves_the_k_best():
    # One "batch item" repeated over 300 rows (beam_size = 300 makes the fn use table 0).
    tables = _random_tables(9, batch=1, length=3, vocab=8)
    tables[:, :, :, EOS] = NEG
    ids = _sample(tables, 300, 3, seed=11, temperature=3.0, top_k=2)
    unrestricted = _sample(tables, 300, 3, seed=11, temperature=3.0)
    seen_outside = False
    for sequences, must_hold in ((ids, True), (unrestricted, False)):
        for row in sequences:
            for step in range(3):
                top2 = set(np.argsort(-tables[0, step, row[step]])[:2].tolist())
                inside = row[step + 1] in top2
                if must_hold:
                    assert inside, (row, step)
                elif not inside:
                    seen_outside = True
    assert seen_outside  # The check above can fail: without top_k other tokens appear.


def test_sampling_is_deterministic_with_a_seed():
    tables = _random_tables(10, batch=1, length=4, vocab=6)
    first = _sample(tables, 64, 4, seed=123)
    second = _sample(tables, 64, 4, seed=123)
    other = _sample(tables, 64, 4, seed=124)
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, other)


def test_sample_decode_scores_states_and_padding_after_eos():
    tables = _greedy_friendly_tables(11, batch=1, length=5, vocab=5, eos_step=1)
    tables[0, 0, 0, EOS] = 30.0  # EOS right away (p > 1 - 1e-12) for every row.

    def fn(ids, i, states):
        logits = tf.gather(tf.constant(tables)[0, i], ids[:, -1])
        history = tf.concat([states["history"], ids[:, -1:]], axis=1)  # [batch, i + 1]
        return logits, {"history": history}

    ids, scores, states = _run(lambda: sampling.sample_decode(
        fn, tf.zeros([4], tf.int32), 5, temperature=1.0, seed=3,
        states={"history": tf.zeros([4, 0], tf.int32)}))
    assert ids.shape == (4, 2)  # Stopped once every row had emitted EOS.
    np.testing.assert_array_equal(ids[:, 1], [EOS] * 4)
    np.testing.assert_array_equal(states["history"], ids[:, :1])
    log_probs = _log_softmax(tables[0].astype(np.float64))
    np.testing.assert_allclose(scores, [log_probs[0, 0, EOS]] * 4, atol=1e-6)

    # Rows that finish early are padded with 0 while the others go on.
    tables = _greedy_friendly_tables(12, batch=1, length=4, vocab=5, eos_step=None)
    tables[0, 0, 0, :] = NEG
    tables[0, 0, 0, [2, 3]] = 0.0                 # Step 0: 2 or 3.
    tables[0, 1, 2, EOS] = 50.0                   # After 2: EOS.
    ids = _sample(tables, 64, 4, seed=5)
    for row in ids:
        if row[1] == 2:
            assert row[2:].tolist() == [EOS, 0, 0]
        else:
            assert row[1] == 3 and EOS not in row[2:].tolist()
    assert ids.shape == (64, 5)


def test_sample_with_temperature():
    # One sampler for search and models: t2t.layers.common_layers (T2T's home of it).
    sample = common_layers.sample_with_temperature
    with tf.Graph().as_default():
        logits = tf.constant([[0.0, 5.0, 1.0], [3.0, 0.0, 2.0]])
        greedy = sample(logits, 0.0)
        top1 = sample(logits, 10.0, sampling_keep_top_k=1, seed=4)
        wide = tf.tile(tf.zeros([1, 50]), [64, 1])
        seeded = [sample(wide, 1.0, seed=7), sample(wide, 1.0, seed=7), sample(wide, 1.0, seed=8)]
        with tf.compat.v1.Session() as sess:
            assert sess.run(greedy).tolist() == [1, 0]
            assert sess.run(top1).tolist() == [1, 0]
            first, again, other = sess.run(seeded)
        with tf.compat.v1.Session() as sess:
            assert sess.run(seeded[0]).tolist() == first.tolist()  # stateless: every run
        assert first.tolist() == again.tolist() and first.tolist() != other.tolist()
        with pytest.raises(ValueError, match="sampling_keep_top_k"):
            sample(logits, 1.0, sampling_keep_top_k=0)
        with pytest.raises(ValueError, match="temperature"):
            sample(logits, -1.0)


def test_decode_length_may_be_a_tensor():
    tables = _random_tables(13, batch=2, length=3, vocab=4)
    ids, scores = _beam(tables, 3, 3, 0.6)
    tensor_ids, tensor_scores, _ = _run(lambda: beam_search.beam_search(
        _table_fn(tables, 3), tf.zeros([2], tf.int32), 3, tf.constant(3), 4, 0.6))
    np.testing.assert_array_equal(tensor_ids, ids)
    np.testing.assert_allclose(tensor_scores, scores, rtol=1e-6)


@pytest.mark.parametrize("beam_size", [1, 2])
def test_eos_inside_a_forced_prefix_does_not_end_the_sequence(beam_size):
    """A PrefixLM prompt ends with its inputs' EOS: decoding goes on after it."""
    steps = [3, EOS, 2, EOS, 4]  # the best token of each step (the first two: a prompt)
    table = np.eye(5, dtype=np.float32)[steps] * 10.0

    def fn(ids, i, states):
        return tf.tile(tf.gather(tf.constant(table), i)[None], [tf.shape(ids)[0], 1]), states

    def decode(prefix_length):
        initial = tf.zeros([2], tf.int32)
        states = {"unused": tf.zeros([2, 1])}
        if beam_size == 1:
            return sampling.greedy_decode(fn, initial, 5, eos_id=EOS, states=states,
                                          prefix_length=prefix_length)[0]
        return beam_search.beam_search(fn, initial, beam_size, 5, 5, 0.6, states=states,
                                       eos_id=EOS, prefix_length=prefix_length)[0][:, 0]

    ids = _run(lambda: {"prompt": decode(2), "plain": decode(0)})
    for row in range(2):  # [GO, ids..., 0s after the EOS that ends the sequence]
        assert np.trim_zeros(ids["prompt"][row], "b").tolist() == [0, 3, EOS, 2, EOS]
        assert np.trim_zeros(ids["plain"][row], "b").tolist() == [0, 3, EOS]


def test_fixed_shape_beam_search_with_states_compiles_with_xla():
    # The fixed-shape loop (TPU, jit_compile) slices the last ids with a static size;
    # alive_seq[:, :, i:i + 1] had a size XLA cannot know when i is a loop tensor.
    tables = _random_tables(9, batch=2, length=4, vocab=5)
    beam_size = 3

    def step_fn(last_ids, i, states):
        # last_ids [batch * beam, 1]: the id at position i of each beam.
        rows = tf.shape(last_ids)[0]
        batch_index = tf.range(rows) // beam_size
        logits = tf.gather_nd(tf.constant(tables),
                              tf.stack([batch_index, tf.fill([rows], i), last_ids[:, 0]], 1))
        return logits, {"steps": states["steps"] + 1}

    @tf.function(jit_compile=True)
    def decode():
        ids, scores, states = beam_search.beam_search(
            step_fn, tf.zeros([2], tf.int32), beam_size, 4, 5, 0.6,
            states={"steps": tf.zeros([2, 1], tf.int32)}, eos_id=EOS, use_tpu=True,
            fixed_states=True)
        return ids, scores, states["steps"]

    ids, scores, steps = decode()
    plain_ids, plain_scores = _beam(tables, beam_size, 4, 0.6)
    length = plain_ids.shape[-1]
    np.testing.assert_array_equal(ids.numpy()[..., :length], plain_ids)
    assert not ids.numpy()[..., length:].any()
    np.testing.assert_allclose(scores.numpy(), plain_scores, rtol=1e-6)
    assert steps.numpy().min() >= 1


def _counting_fn(tables, beam_size, rows_seen):
    """A (ids, i, states, constants) fn over `tables` that adds its row count to `rows_seen`.

    The batch item of a row comes from the constants (its row of the input batch), so the
    logits stay right when items leave the loop.
    """
    tables_t = tf.constant(tables)

    def fn(ids, i, states, constants):
        rows = tf.shape(ids)[0]
        item = constants["item"][:, 0]
        logits = tf.gather_nd(tables_t, tf.stack([item, tf.fill([rows], i), ids[:, -1]], 1))
        with tf.control_dependencies([rows_seen.assign_add(rows)]):
            logits = tf.identity(logits)
        history = tf.concat([states["history"], ids[:, -1:, None]], axis=1)
        return logits, {"history": history}
    return fn


def _finishing_at_different_steps(seed, batch, length, vocab):
    """Tables where item b's likeliest path ends (EOS) after b + 1 tokens."""
    tables = _random_tables(seed, batch, length, vocab)
    for b in range(batch):
        tables[b, :, :, EOS] = -3.0
        tables[b, min(b, length - 1), :, EOS] = 6.0
    return tables


def _search_counting_rows(tables, beam_size, length, alpha, greedy=False, **kwargs):
    batch, _, vocab, _ = tables.shape

    def build():
        rows_seen = tf.Variable(0, dtype=tf.int32)
        fn = _counting_fn(tables, beam_size, rows_seen)
        states = {"history": tf.zeros([batch, 0, 1], tf.int32)}
        constants = {"item": tf.range(batch)[:, None]}
        if greedy:
            ids, scores, _ = sampling.sample_decode(
                fn, tf.zeros([batch], tf.int32), length, temperature=0.0, eos_id=EOS,
                states=states, constants=constants, **kwargs)
        else:
            ids, scores, _ = beam_search.beam_search(
                fn, tf.zeros([batch], tf.int32), beam_size, length, vocab, alpha,
                states=states, constants=constants, eos_id=EOS, **kwargs)
        with tf.control_dependencies([ids, scores]):
            rows = rows_seen.read_value()
        return ids, scores, rows

    with tf.Graph().as_default():
        outputs = build()
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            return sess.run(outputs)


@pytest.mark.parametrize("stop_early,alpha", [(True, 0.6), (False, 0.6), (True, 0.0)])
def test_dropping_finished_items_gives_the_same_search(stop_early, alpha):
    tables = _finishing_at_different_steps(11, batch=5, length=6, vocab=5)
    kept_ids, kept_scores, kept_rows = _search_counting_rows(
        tables, 3, 6, alpha, stop_early=stop_early)
    ids, scores, rows = _search_counting_rows(tables, 3, 6, alpha, stop_early=stop_early,
                                              drop_finished=True)
    # The items left at different steps: fewer rows went through the model.
    assert rows < kept_rows, (rows, kept_rows)
    assert ids.shape[:2] == kept_ids.shape[:2] == (5, 3)
    # The items come back in their input order (item b ends after b + 1 tokens).
    assert [len(_strip(row)) for row in ids[:, 0]] == [1, 2, 3, 4, 5]
    # T2T's result: every beam without stop_early (the n-best); with it, the best one.
    beams = 3 if not stop_early else 1
    for b in range(5):
        for k in range(beams):
            assert _strip(ids[b, k]) == _strip(kept_ids[b, k]), (b, k)
    np.testing.assert_allclose(scores[:, :beams], kept_scores[:, :beams], rtol=1e-6)


def test_dropping_finished_items_keeps_unfinished_ones_to_the_end():
    """An item that never emits EOS returns its alive beams, as without dropping."""
    tables = _finishing_at_different_steps(12, batch=3, length=5, vocab=5)
    tables[2, :, :, EOS] = NEG
    kept_ids, kept_scores, _ = _search_counting_rows(tables, 2, 5, 0.6)
    ids, scores, _ = _search_counting_rows(tables, 2, 5, 0.6, drop_finished=True)
    np.testing.assert_array_equal(ids[:, 0], kept_ids[:, 0])
    assert ids.shape == kept_ids.shape == (3, 2, 6)  # the loop ran all 5 steps
    np.testing.assert_array_equal(ids[2], kept_ids[2])
    np.testing.assert_allclose(scores[2], kept_scores[2], rtol=1e-6)


def test_greedy_dropping_ended_rows_gives_the_same_ids():
    tables = _finishing_at_different_steps(13, batch=4, length=6, vocab=5)
    tables[3, :, :, EOS] = NEG  # this row runs to the end
    kept_ids, kept_scores, kept_rows = _search_counting_rows(tables, 1, 6, 0.0, greedy=True)
    ids, scores, rows = _search_counting_rows(tables, 1, 6, 0.0, greedy=True,
                                              drop_finished=True)
    assert rows == 1 + 2 + 3 + 6 < kept_rows == 4 * 6
    np.testing.assert_array_equal(ids, kept_ids)  # the same shape and 0s after EOS
    np.testing.assert_allclose(scores, kept_scores, rtol=1e-6)
    assert [len(_strip(row)) for row in ids[:3]] == [1, 2, 3]


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 3), width=st.integers(beam_search.TOP_K_BLOCK * 8, 1500),
       k=st.integers(1, 12), levels=st.sampled_from([3, 50, 0]), seed=st.integers(0, 2**16))
def test_top_k_by_blocks_is_top_k(rows, width, k, levels, seed):
    rng = np.random.RandomState(seed)
    # levels: a few distinct values (many ties), or 0: continuous values with some -inf.
    values = (rng.randint(0, levels, (rows, 2, width)).astype(np.float32) if levels
              else rng.randn(rows, 2, width).astype(np.float32))
    if not levels:
        values[rng.rand(rows, 2, width) < 0.2] = -np.inf
    expected_values, expected_ids = tf.nn.top_k(values, k=k)
    got_values, got_ids = beam_search.top_k_by_blocks(tf.constant(values), k)
    np.testing.assert_array_equal(got_values.numpy(), expected_values.numpy())
    np.testing.assert_array_equal(got_ids.numpy(), expected_ids.numpy())


def test_top_k_by_blocks_breaks_ties_across_blocks_by_index():
    block = beam_search.TOP_K_BLOCK
    values = np.zeros([1, 8 * block], np.float32)
    values[0, 3] = 5.0  # a tie with a later block whose maximum is higher: index 3 first
    values[0, block + 6:block + 8] = [9.0, 5.0]
    got_values, got_ids = beam_search.top_k_by_blocks(tf.constant(values), 2)
    assert got_values.numpy().tolist() == [[9.0, 5.0]]
    assert got_ids.numpy().tolist() == [[block + 6, 3]]


@pytest.mark.parametrize("ties", [False, True])
def test_best_extensions_are_t2ts_choice_bit_for_bit(ties):
    """The two-stage choice gives T2T's flat top-k over log-softmax + alive log prob."""
    rng = np.random.RandomState(3)
    items, beam, vocab = 5, 4, 1203
    logits = (rng.randint(0, 4, (items, beam, vocab)) if ties
              else 3 * rng.randn(items, beam, vocab)).astype(np.float32)
    alive = -np.abs(rng.randn(items, beam)).astype(np.float32)
    alive[:, 2] = alive[:, 1] if ties else alive[:, 2]
    penalty = beam_search.length_penalty(7, 0.6)
    log_probs = common_layers.log_prob_from_logits(tf.constant(logits)) + alive[:, :, None]
    flat = tf.reshape(log_probs, [items, beam * vocab])
    scores, flat_ids = tf.nn.top_k(flat / penalty, k=2 * beam)
    expected = [scores, tf.gather(flat, flat_ids, batch_dims=1), flat_ids // vocab,
                flat_ids % vocab]
    got = beam_search._best_extensions(tf.constant(logits), tf.constant(alive), penalty,
                                       beam, vocab)
    for name, want, have in zip(["scores", "log probs", "beams", "ids"], expected, got):
        np.testing.assert_array_equal(have.numpy(), want.numpy(), err_msg=name)


def _longer_wins_under_the_penalty(length):
    """One item where ending at once (EOS first, log p -0.47) beats the alive beam ("a",
    log p -0.97) at the current length, but "a a a a a EOS" (log p -0.97 too) scores
    -0.97 / ((5 + 6) / 6) ** 2 = -0.29 at alpha 2, above the EOS's -0.47."""
    a = 2
    tables = np.full([1, length, 4, 4], NEG, np.float32)
    tables[0, :, :, EOS] = 10.0  # once the a's are done (and after anything else), EOS
    tables[0, 0, 0, EOS], tables[0, 0, 0, a] = 0.0, -0.5
    tables[0, 1:5, a, a], tables[0, 1:5, a, EOS] = 10.0, 0.0
    return tables


@pytest.mark.parametrize("drop_finished", [False, True])
def test_the_current_length_bound_stops_sooner_and_can_miss_t2ts_best(drop_finished):
    tables = np.concatenate([_longer_wins_under_the_penalty(8),
                             _finishing_at_different_steps(14, batch=2, length=8, vocab=4)])
    results = {bound: _search_counting_rows(tables, 2, 8, 2.0, drop_finished=drop_finished,
                                            stopping_bound=bound)
               for bound in beam_search.STOPPING_BOUNDS}
    (exact_ids, exact_scores, exact_rows) = results["max_length"]
    (sooner_ids, sooner_scores, sooner_rows) = results["current_length"]
    assert sooner_rows < exact_rows, (sooner_rows, exact_rows)
    assert _strip(exact_ids[0, 0]) == [2, 2, 2, 2, 2, EOS]
    np.testing.assert_allclose(exact_scores[0, 0], -0.9742 / (11 / 6) ** 2, rtol=1e-3)
    # T2T's bound kept the alive "a" (-0.97 / (13 / 6) ** 2 = -0.21 could beat -0.47); at
    # its current length (-0.97) it could not, and the search ended with the EOS.
    assert _strip(sooner_ids[0, 0]) == [EOS]
    np.testing.assert_allclose(sooner_scores[0, 0], np.log(1 / (1 + np.exp(-0.5))),
                               rtol=1e-4)
    # The other items' likeliest paths end early: both bounds find them.
    for b in (1, 2):
        assert _strip(sooner_ids[b, 0]) == _strip(exact_ids[b, 0])


def test_the_bounds_agree_without_a_length_penalty_and_unknown_ones_are_refused():
    tables = _finishing_at_different_steps(15, batch=3, length=6, vocab=5)
    exact = _search_counting_rows(tables, 3, 6, 0.0, stopping_bound="max_length")
    sooner = _search_counting_rows(tables, 3, 6, 0.0, stopping_bound="current_length")
    for got, want in zip(sooner, exact):
        np.testing.assert_array_equal(got, want)
    fixed_ids, fixed_scores, _ = _run(lambda: beam_search.beam_search(
        lambda ids, i: tf.gather_nd(tf.constant(tables), tf.stack(
            [tf.range(tf.shape(ids)[0]) // 3, tf.fill([tf.shape(ids)[0]], i), ids[:, i]], 1)),
        tf.zeros([3], tf.int32), 3, 6, 5, 2.0, use_tpu=True, stopping_bound="current_length"))
    ids, scores = _beam(tables, 3, 6, 2.0, stopping_bound="current_length")
    np.testing.assert_array_equal(fixed_ids[:, 0, :ids.shape[2]], ids[:, 0])
    np.testing.assert_allclose(fixed_scores[:, 0], scores[:, 0], rtol=1e-6)
    with pytest.raises(ValueError, match="stopping_bound='max_len': use one of max_length, "
                       "current_length"):
        _beam(tables, 3, 6, 0.6, stopping_bound="max_len")
