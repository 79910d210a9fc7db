"""SliceNet: T2T's hparams sets and variable names, its timing signal and rank loss, training."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.layers import common_layers
from t2t.layers.modality_type import ModalityType
from t2t.model import model_hparams
from t2t.models import slicenet

from t2t_model_testing import (TRAIN, batch_features, copy_examples, mean_first, mean_last,
    session, train_losses)


def tiny_hparams(**overrides):
    hp = registry.hparams("slicenet_1tiny")
    hp.hidden_size, hp.num_heads, hp.num_hidden_layers = 32, 2, 2
    hp.kernel_scheme, hp.dilation_scheme = "3.3.3.3", "1.1.1.1"
    hp.dropout = hp.attention_dropout = hp.symbol_dropout = 0.0
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def test_hparams_sets_have_t2ts_values():
    base = registry.hparams("slicenet_1")
    assert (base.hidden_size, base.num_hidden_layers, base.separability) == (768, 4, -2)
    assert (base.kernel_scheme, base.dilation_scheme, base.attention_type) == (
        "3.7.15.31", "1.1.1.1", "transformer")
    assert base.learning_rate_decay_scheme == "exp" and base.weight_decay == 3.0
    noam = registry.hparams("slicenet_1noam")
    assert (noam.learning_rate_decay_scheme, noam.optimizer_adam_beta2) == ("noam", 0.98)
    tiny = registry.hparams("slicenet_1tiny")
    assert (tiny.hidden_size, tiny.num_hidden_layers, tiny.separability) == (128, 2, 0)
    assert "slicenet1" in registry.list_ranged_hparams()


def test_timing_signal_is_t2ts_sinusoids_padded_to_depth():
    x = common_layers.add_timing_signal(tf.zeros([2, 5, 1, 40]))
    signal = x.numpy()[0, :, 0, :]
    positions = np.arange(5.0)[:, None]
    inv = np.exp(np.arange(16) * -np.log(1e4) / 15)
    np.testing.assert_allclose(signal[:, :16], np.sin(positions * inv), atol=1e-5)
    np.testing.assert_allclose(signal[:, 16:32], np.cos(positions * inv), atol=1e-5)
    assert not signal[:, 32:].any()
    np.testing.assert_allclose(x.numpy()[1], x.numpy()[0])


def test_rank_loss_is_zero_for_separated_pairs_and_positive_for_swapped_ones():
    eye = tf.eye(3)
    assert float(slicenet.rank_loss(eye, eye)) == pytest.approx(0.0)
    swapped = tf.constant([[0.0, 1, 0], [1, 0, 0], [0, 0, 1]])
    # Rows 0 and 1 score the other's pair 1 and their own 0: margin + 1 (1.2) in each
    # direction; pairs scored 0 against an own score of 0 cost the margin (0.2): in all
    # 2 * (1.2 + 1.2 + 0.2 + 0.2) = 5.6 over the 9 entries of each of the two means.
    assert float(slicenet.rank_loss(eye, swapped)) == pytest.approx(5.6 / 9)


def test_variables_have_t2ts_names():
    feats = batch_features(copy_examples(np.random.RandomState(0), 2, 4))
    with tf.Graph().as_default():  # separabilities -3 and -2: channels split in 3 and 2
        model = registry.model("slice_net")(tiny_hparams(separability=-2, hidden_size=48),
                                            TRAIN, model_hparams.test_problem_hparams(4, 4))
        logits, _ = model({k: tf.constant(v) for k, v in feats.items()})
        names = {v.name for v in tf.compat.v1.trainable_variables()}
    assert logits.shape.as_list()[2:] == [1, 1, 4]
    for name in (
            "slice_net/body/slicenet/target_space_embedding/kernel:0",
            "slice_net/body/slicenet/encoder/layer_0/residual1/part_0/conv_block_0_single/",
            "slice_net/body/slicenet/encoder/layer_2/residual2/conv_block_norm_1/",
            "slice_net/body/slicenet/targets_merge/part_3/conv_block_0_single/kernel:0",
            "slice_net/body/slicenet/targets_merge/conv2d/kernel:0",
            "slice_net/body/slicenet/decoder/layer_1/targets_time/part_1/conv_block_1_single/",
            "slice_net/body/slicenet/decoder/layer_0/self_attention/",
            "slice_net/body/slicenet/decoder/layer_0/encdec_attention/"):
        assert any(n.startswith(name) for n in names), (name, sorted(names)[:20])
    # 1.5 * num_hidden_layers encoder blocks, num_hidden_layers decoder blocks.
    assert not any("/encoder/layer_3/" in n for n in names)
    assert not any("/decoder/layer_2/" in n for n in names)


def logits_of(feeds, seed):
    """The logits of one model (random weights, seed `seed`) for each feed dict."""
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(seed)
        model = registry.model("slice_net")(tiny_hparams(num_hidden_layers=1), TRAIN,
                                            model_hparams.test_problem_hparams(4, 4))
        ph = {k: tf.compat.v1.placeholder(tf.int32, [None, None, 1, 1]) for k in feeds[0]}
        logits, _ = model(ph)
        with session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            return [sess.run(logits, {ph[k]: f[k] for k in f}) for f in feeds]


def test_decoder_is_causal():
    feats = batch_features(copy_examples(np.random.RandomState(1), 2, 5, min_len=5))
    changed = {k: v.copy() for k, v in feats.items()}
    changed["targets"][:, 4] = 5 - changed["targets"][:, 4]  # swap 2 <-> 3 at the end
    before, after = logits_of([feats, changed], seed=2)
    np.testing.assert_allclose(before[:, :5], after[:, :5], rtol=1e-5, atol=1e-5)
    assert not np.allclose(before[:, 5:], after[:, 5:])  # the next position sees the change


def test_padding_the_inputs_changes_nothing():
    # T2T attended to padded input positions (a zero bias); t2t masks them.
    examples = copy_examples(np.random.RandomState(5), 2, 4, min_len=2)
    feats = batch_features(examples)
    padded = batch_features(examples, inputs_length=feats["inputs"].shape[1] + 3)
    short, long = logits_of([feats, padded], seed=3)
    np.testing.assert_allclose(short, long, rtol=1e-4, atol=1e-5)


def test_class_label_targets_run_the_encoder_only():
    p_hp = model_hparams.test_problem_hparams(4, 3, target_modality=ModalityType.CLASS_LABEL)
    inputs = batch_features(copy_examples(np.random.RandomState(2), 2, 4))["inputs"]
    with tf.Graph().as_default():
        model = registry.model("slice_net")(tiny_hparams(num_hidden_layers=1), TRAIN, p_hp)
        logits, _ = model({"inputs": tf.constant(inputs),
                           "targets": tf.constant([[[[1]]], [[[2]]]], tf.int32)})
        names = {v.name for v in tf.compat.v1.trainable_variables()}
    assert logits.shape.as_list()[-1] == 3
    assert not any("/decoder/" in n for n in names)


def test_learns_to_copy():
    rng = np.random.RandomState(3)
    batches = [batch_features(copy_examples(rng, 8, 4)) for _ in range(4)]
    losses = train_losses("slice_net", tiny_hparams(num_hidden_layers=1),
                          model_hparams.test_problem_hparams(4, 4), batches, steps=25,
                          learning_rate=0.01)
    assert mean_last(losses) < 0.5 * mean_first(losses), losses
