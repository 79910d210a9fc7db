"""The vectorized subword selection against the depth-first walk it replaced, on both
suffix layouts (code point arrays, and plain Python for long or NUL-holding keys)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from t2t.encoders import subword_build, text_encoder

TOKENS = st.dictionaries(
    st.lists(st.sampled_from("ab_\\é中\x00c"), min_size=1, max_size=9).map("".join),
    st.integers(0, 40), min_size=1, max_size=15)


def _picks(plan, cumulative, min_count):
    kept, singles = plan.select_subtokens(cumulative, min_count)
    walk_kept, walk_singles = plan.select_subtokens_walk(cumulative, min_count)
    assert sorted(kept) == sorted(walk_kept)
    assert singles == walk_singles
    return kept


@settings(max_examples=60, deadline=None)
@given(TOKENS, st.integers(1, 6), st.sampled_from([None, 2, 4]))
def test_selection_and_segmentation_equal_the_walk(token_counts, min_count, max_length):
    plan = subword_build.BuildPlan(token_counts, text_encoder.RESERVED_TOKENS, max_length)
    kept = _picks(plan, plan.first_iteration_cumulative(), min_count)
    vocab = {s for _, s in kept} | set(plan.alphabet)
    ends = plan._longest_subtoken_prefix(vocab)
    for key, end in zip(plan.suffixes, ends.tolist()):
        assert end == max(len(s) for s in vocab if key.startswith(s))
    _picks(plan, plan.segment_start_cumulative(vocab), min_count)


def test_long_keys_take_the_python_path_with_the_same_result():
    counts = {"x" * 70: 3, "xy" * 40: 2, "ab\x00c": 5, "abc": 4}
    plan = subword_build.BuildPlan(counts, text_encoder.RESERVED_TOKENS, None)
    assert subword_build._code_points(plan.suffixes) is None
    short = subword_build.BuildPlan({"abc": 4, "abd": 2}, text_encoder.RESERVED_TOKENS, None)
    assert subword_build._code_points(short.suffixes) is not None
    for built in (plan, short):
        lcp = subword_build._common_prefix_lengths(built.suffixes)
        expected = [0] + [len(__import__("os").path.commonprefix([a, b])) for a, b in
                          zip(built.suffixes, built.suffixes[1:])]
        np.testing.assert_array_equal(lcp, expected)
        for min_count in (1, 2, 3):
            _picks(built, built.first_iteration_cumulative(), min_count)
