"""TextCNN: T2T's hparams set and variable names, short inputs, learning a separable toy set."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.layers.modality_type import ModalityType
from t2t.model import model_hparams
from t2t.models import text_cnn

from t2t_model_testing import PREDICT, TRAIN, pad_ids, placeholders, session


def tiny_hparams(**overrides):
    hp = registry.hparams("text_cnn_base")
    hp.hidden_size, hp.num_filters, hp.filter_sizes = 16, 8, [2, 3]
    hp.symbol_modality_num_shards = 1
    hp.label_smoothing = 0.0
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def class_problem(num_classes=2):
    return model_hparams.test_problem_hparams(4, num_classes,
                                              target_modality=ModalityType.CLASS_LABEL)


def toy_batch(rng, num):
    """Inputs of only 2s are class 0, of only 3s class 1 (lengths 1..6, then EOS)."""
    labels = rng.randint(0, 2, size=num)
    inputs = [[2 + int(label)] * rng.randint(1, 7) + [1] for label in labels]
    return {"inputs": pad_ids(inputs),
            "targets": labels.reshape([num, 1, 1, 1]).astype(np.int32)}


def test_hparams_set_has_t2ts_values():
    hp = registry.hparams("text_cnn_base")
    assert (hp.filter_sizes, hp.num_filters, hp.output_dropout) == ([2, 3, 4, 5], 128, 0.4)
    assert (hp.learning_rate_decay_scheme, hp.learning_rate, hp.batch_size) == (
        "noam", 0.1, 4096)
    assert hp.shared_embedding_and_softmax_weights and hp.symbol_modality_num_shards == 16


def test_base_set_builds_tiny_with_finite_loss_and_t2ts_variable_names():
    hp = registry.hparams("text_cnn_base")
    hp.hidden_size, hp.num_filters = 8, 4   # T2T's four filter sizes, dropout on
    with tf.Graph().as_default():
        model = registry.model("text_cnn")(hp, TRAIN, class_problem(3))
        feats = toy_batch(np.random.RandomState(0), 4)
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        names = {v.name: v.shape.as_list() for v in tf.compat.v1.trainable_variables()}
        with session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            loss = sess.run(losses["training"])
    assert np.isfinite(loss) and loss > 0
    assert logits.shape.as_list()[-1] == 3
    for size in (2, 3, 4, 5):
        assert names["text_cnn/body/conv-maxpool-%d/W:0" % size] == [size, 8, 1, 4]
        assert names["text_cnn/body/conv-maxpool-%d/b:0" % size] == [4]


def test_features_are_max_pooled_relu_convolutions():
    x = np.random.RandomState(1).randn(2, 5, 1, 3).astype(np.float32)
    with tf.Graph().as_default():
        out = text_cnn.text_cnn_features(tf.constant(x), [2], 4)
        kernel = [v for v in tf.compat.v1.global_variables() if v.name.endswith("/W:0")][0]
        with session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            got, w = sess.run([out, kernel])
    windows = np.stack([x[:, i:i + 2, 0, :] for i in range(4)], 1)  # [2, 4, 2, 3]
    expected = np.maximum(np.einsum("bpkd,kdn->bpn", windows, w[:, :, 0, :]) + 0.1, 0)
    np.testing.assert_allclose(got[:, 0, 0, :], expected.max(1), rtol=1e-5, atol=1e-5)


def test_inputs_shorter_than_a_filter_are_zero_padded():
    with tf.Graph().as_default():
        out = text_cnn.text_cnn_features(tf.ones([2, 1, 1, 3]), [2, 3], 4)
        with session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            got = sess.run(out)
    assert got.shape == (2, 1, 1, 8) and np.isfinite(got).all()


def test_bad_filter_sizes_name_the_fix():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="filter_sizes"):
        text_cnn.text_cnn_features(tf.ones([1, 4, 1, 3]), [0, 2], 4)


def test_learns_a_separable_toy_set_and_predicts_its_classes():
    rng = np.random.RandomState(2)
    batches = [toy_batch(rng, 16) for _ in range(4)]
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(1)
        feeds = placeholders(["inputs"], batches)
        feeds["targets"] = tf.compat.v1.placeholder(tf.int32, [None, 1, 1, 1])
        with tf.compat.v1.variable_scope("m"):
            _, losses = registry.model("text_cnn")(tiny_hparams(), TRAIN, class_problem())(feeds)
        with tf.compat.v1.variable_scope("m", reuse=True):
            logits, _ = registry.model("text_cnn")(tiny_hparams(), PREDICT,
                                                   class_problem())(feeds)
        train_op = tf.compat.v1.train.AdamOptimizer(0.02).minimize(losses["training"])
        values = []
        with session(graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for step in range(60):
                batch = batches[step % 4]
                value, _ = sess.run([losses["training"], train_op],
                                    {feeds[k]: v for k, v in batch.items()})
                values.append(value)
            test = toy_batch(np.random.RandomState(9), 12)
            predicted = sess.run(logits, {feeds[k]: v for k, v in test.items()})
    assert np.mean(values[-3:]) < 0.3 * np.mean(values[:3]), values
    np.testing.assert_array_equal(predicted.reshape([12, 2]).argmax(-1),
                                  test["targets"].reshape([12]))
