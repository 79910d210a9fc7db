"""ByteNet: T2T's hparams set and variable names, causality, learning to copy and decoding it."""
import numpy as np
import tensorflow as tf

from t2t.core import registry
from t2t.model import model_hparams

from t2t_model_testing import (PREDICT, TRAIN, batch_features, copy_examples, placeholders,
    session)

_v1 = tf.compat.v1


def tiny_hparams(**overrides):
    hp = registry.hparams("bytenet_base")
    hp.hidden_size, hp.num_hidden_layers, hp.num_block_repeat = 16, 2, 1
    hp.dropout = hp.symbol_dropout = hp.label_smoothing = 0.0
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def test_hparams_set_has_t2ts_values():
    hp = registry.hparams("bytenet_base")
    assert (hp.hidden_size, hp.num_hidden_layers, hp.num_block_repeat) == (768, 4, 4)
    assert (hp.kernel_height, hp.kernel_width, hp.dropout) == (3, 1, 0.2)
    assert (hp.learning_rate_decay_scheme, hp.learning_rate, hp.sampling_method) == (
        "exp", 0.05, "argmax")


def test_base_set_builds_tiny_with_finite_loss_and_t2ts_variable_names():
    hp = registry.hparams("bytenet_base")
    hp.hidden_size, hp.num_block_repeat = 8, 2     # T2T's 4 dilated layers and dropouts
    feats = batch_features(copy_examples(np.random.RandomState(0), 3, 5))
    with tf.Graph().as_default():
        model = registry.model("byte_net")(hp, TRAIN, model_hparams.test_problem_hparams(4, 4))
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        names = {v.name: v.shape.as_list() for v in _v1.trainable_variables()}
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            loss, logits = sess.run([losses["training"], logits])
    assert np.isfinite(loss) and loss > 0
    assert logits.shape == (3, feats["targets"].shape[1], 1, 1, 4)  # the targets' positions
    prefix = "byte_net/body/bytenet/"
    for part in ("encoder", "decoder"):
        for r in (0, 1):
            block = prefix + "%s/repeat_%d/" % (part, r)
            assert names[block + "lnorm/layer_norm_scale:0"] == [8]
            for i in range(4):
                assert names[block + "residual_conv/conv_block_%d_single/kernel:0" % i] == [
                    3, 1, 8, 8]
                assert block + "residual_conv/conv_block_norm_%d/layer_norm_bias:0" % i in names
    assert names[prefix + "conv_block/conv_block_0_single/kernel:0"] == [3, 1, 16, 8]
    assert not any("/repeat_2/" in n for n in names)


def logits_of(feeds, seed=2):
    with tf.Graph().as_default():
        _v1.set_random_seed(seed)
        model = registry.model("byte_net")(tiny_hparams(), TRAIN,
                                           model_hparams.test_problem_hparams(4, 4))
        ph = placeholders()
        logits, _ = model(ph)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            return [sess.run(logits, {ph[k]: f[k] for k in f}) for f in feeds]


def test_decoder_is_causal():
    feats = batch_features(copy_examples(np.random.RandomState(1), 2, 5, min_len=5))
    changed = {k: v.copy() for k, v in feats.items()}
    changed["targets"][:, 3] = 5 - changed["targets"][:, 3]  # swap 2 <-> 3
    before, after = logits_of([feats, changed])
    np.testing.assert_allclose(before[:, :4], after[:, :4], rtol=1e-5, atol=1e-5)
    assert not np.allclose(before[:, 4:], after[:, 4:])


def test_learns_to_copy_and_decodes_the_copy():
    rng = np.random.RandomState(3)
    batches = [batch_features(copy_examples(rng, 16, 4)) for _ in range(4)]
    p_hp = model_hparams.test_problem_hparams(4, 4)
    test = copy_examples(np.random.RandomState(7), 6, 4)
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(1)
        feeds = placeholders(["inputs", "targets"], batches)
        with _v1.variable_scope("m"):
            _, losses = registry.model("byte_net")(tiny_hparams(), TRAIN, p_hp)(feeds)
        with _v1.variable_scope("m", reuse=True):
            decoded = registry.model("byte_net")(tiny_hparams(), PREDICT, p_hp).infer(
                {"inputs": tf.constant(batch_features(test)["inputs"])}, decode_length=1)
        train_op = _v1.train.AdamOptimizer(0.02).minimize(losses["training"])
        values = []
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            for step in range(100):
                batch = batches[step % 4]
                value, _ = sess.run([losses["training"], train_op],
                                    {feeds[k]: v for k, v in batch.items()})
                values.append(value)
            outputs = sess.run(decoded)["outputs"]
    assert np.mean(values[-3:]) < 0.2 * np.mean(values[:3]), values
    for row, (_, targets) in zip(outputs.reshape([6, -1]), test):
        assert list(row[:len(targets)]) == targets, (row, targets)
