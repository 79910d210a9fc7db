"""masks: position masks against numpy, and lengths of zero-padded embeddings."""
import numpy as np
import tensorflow as tf

from t2t.layers import common_layers
from t2t.layers import masks


def test_position_masks_match_their_definitions():
    target, source = 3, 4
    t = np.arange(target)[:, None]
    s = np.arange(source)[None, :]
    np.testing.assert_array_equal(masks.mask_pos_gt(source, target).numpy(), [t > s])
    np.testing.assert_array_equal(masks.mask_pos_lt(source, target).numpy(), [t < s])
    np.testing.assert_array_equal(masks.mask_leq(target, source).numpy(), [s <= t])


def test_length_and_mask_from_embedding_count_non_zero_vectors():
    emb = np.zeros([2, 4, 1, 3], np.float32)
    emb[0, :3] = 1.0
    emb[1, 1] = -2.0  # a zero vector before a real one still counts as padding
    np.testing.assert_array_equal(masks.length_from_embedding(tf.constant(emb)).numpy(), [3, 1])
    mask = masks.mask_from_embedding(tf.constant(emb)).numpy()
    assert mask.shape == (2, 4, 1, 1)
    np.testing.assert_array_equal(mask[..., 0, 0], [[1, 1, 1, 0], [0, 1, 0, 0]])
    assert common_layers.length_from_embedding is masks.length_from_embedding
