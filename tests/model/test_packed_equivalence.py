"""Packed rows give every example the loss it gets alone: nothing crosses segments.

Examples are packed into rows with `*_segmentation` (1, 2, ... per example, 0 = padding)
and `*_position` (0, 1, ... within each example), as T2T's pack_examples writes them.
The Transformer (EVAL mode: no dropout) must give each example the same per-token
losses packed and unpacked.
"""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.model import model_hparams
from t2t.models import transformer

from t2t_model_testing import EVAL, pad_ids, session

_v1 = tf.compat.v1
VOCAB = 6


def make_examples(seed, num):
    rng = np.random.RandomState(seed)
    examples = []
    for _ in range(num):
        inputs = list(rng.randint(2, VOCAB, size=rng.randint(1, 5))) + [1]
        targets = list(rng.randint(2, VOCAB, size=rng.randint(1, 5))) + [1]
        examples.append((inputs, targets))
    return examples


def pack(examples, rows, length, keys=("inputs", "targets")):
    """Pack examples, in order, `len(examples) // rows` per row, into rows of `length`."""
    per_row = len(examples) // rows
    packed = {}
    for key in keys:
        index = 0 if key == "inputs" else 1
        ids = np.zeros([rows, length], np.int32)
        segmentation = np.zeros([rows, length], np.int32)
        position = np.zeros([rows, length], np.int32)
        for row in range(rows):
            offset = 0
            for segment, example in enumerate(examples[row * per_row:(row + 1) * per_row]):
                seq = example[index]
                assert offset + len(seq) <= length
                ids[row, offset:offset + len(seq)] = seq
                segmentation[row, offset:offset + len(seq)] = segment + 1
                position[row, offset:offset + len(seq)] = np.arange(len(seq))
                offset += len(seq)
        packed[key] = ids[:, :, None, None]
        packed[key + "_segmentation"] = segmentation
        packed[key + "_position"] = position
    return packed


def token_nll(logits, targets):
    """-log p(target) per position: logits [B, L, 1, 1, V], targets [B, L, 1, 1]."""
    logits = logits[:, :, 0, 0, :].astype(np.float64)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    return -np.take_along_axis(log_probs, targets[:, :, 0, :], axis=-1)[..., 0]


def per_example_losses_unpacked(nll, examples):
    return [nll[i, :len(e[1])].mean() for i, e in enumerate(examples)]


def per_example_losses_packed(nll, packed):
    seg = packed["targets_segmentation"]
    return [nll[row][seg[row] == s].mean()
            for row in range(seg.shape[0]) for s in range(1, seg[row].max() + 1)]


def model_losses(has_inputs, feature_sets, layers=2):
    """Build one Transformer and run it on each feature dict; returns the logits."""
    with tf.Graph().as_default():
        _v1.set_random_seed(3)
        hp = registry.hparams("transformer_test")
        hp.hidden_size, hp.filter_size, hp.num_heads, hp.num_hidden_layers = 16, 32, 2, layers
        p_hp = model_hparams.test_problem_hparams(VOCAB if has_inputs else None, VOCAB)
        model = transformer.Transformer(hp, EVAL, p_hp)
        outputs = [model({k: tf.constant(v) for k, v in feats.items()})[0]
                   for feats in feature_sets]
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            return sess.run(outputs)


@pytest.mark.parametrize("has_inputs", [True, False])
def test_packed_and_unpacked_losses_match(has_inputs):
    examples = make_examples(seed=11, num=6)
    keys = ("inputs", "targets") if has_inputs else ("targets",)
    packed = pack(examples, rows=2, length=16, keys=keys)
    unpacked = {"targets": pad_ids([e[1] for e in examples])}
    if has_inputs:
        unpacked["inputs"] = pad_ids([e[0] for e in examples])
    packed_logits, unpacked_logits = model_losses(has_inputs, [packed, unpacked])

    packed_losses = per_example_losses_packed(
        token_nll(packed_logits, packed["targets"]), packed)
    unpacked_losses = per_example_losses_unpacked(
        token_nll(unpacked_logits, unpacked["targets"]), examples)
    assert len(packed_losses) == len(examples)
    np.testing.assert_allclose(packed_losses, unpacked_losses, atol=1e-5, rtol=0)


def test_without_segment_masks_examples_would_interfere():
    """The check above can fail: dropping the segment features lets examples mix."""
    examples = make_examples(seed=11, num=6)
    packed = pack(examples, rows=2, length=16)
    mixed = {k: v for k, v in packed.items() if k in ("inputs", "targets")}
    packed_logits, mixed_logits = model_losses(True, [packed, mixed], layers=1)
    packed_losses = per_example_losses_packed(
        token_nll(packed_logits, packed["targets"]), packed)
    mixed_losses = per_example_losses_packed(token_nll(mixed_logits, packed["targets"]),
                                             packed)
    assert np.max(np.abs(np.array(packed_losses) - np.array(mixed_losses))) > 1e-3
