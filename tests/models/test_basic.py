"""BasicFcRelu: fixed-size inputs (images or flat vectors) to class labels."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.layers.modality_type import ModalityType
from t2t.model import model_hparams
from t2t.models import basic

from t2t_model_testing import PREDICT, TRAIN, mean_first, mean_last, session, train_losses

_v1 = tf.compat.v1


def image_problem_hparams(num_classes):
    p_hp = model_hparams.test_problem_hparams(256, num_classes,
                                              input_modality=ModalityType.IMAGE,
                                              target_modality=ModalityType.CLASS_LABEL)
    return p_hp


def images_and_labels(seed, num):
    """4x4 one-channel images; the label says which half (left 0, right 1) is brighter."""
    rng = np.random.RandomState(seed)
    images = rng.randint(0, 4, size=[num, 4, 4, 1]).astype(np.int32)
    labels = (images[:, :, 2:].sum(axis=(1, 2, 3)) >
              images[:, :, :2].sum(axis=(1, 2, 3))).astype(np.int32)
    return {"inputs": images, "targets": labels.reshape([num, 1, 1, 1])}


def small(hidden=32):
    hp = registry.hparams("basic_fc_small")
    hp.hidden_size = hidden
    return hp


def test_basic_fc_small_has_t2t_values():
    hp = registry.hparams("basic_fc_small")
    assert (hp.learning_rate, hp.batch_size, hp.hidden_size, hp.num_hidden_layers) == (
        0.1, 128, 256, 2)
    assert (hp.initializer, hp.initializer_gain, hp.weight_decay, hp.dropout) == (
        "uniform_unit_scaling", 1.0, 0.0, 0.0)
    assert registry.model("basic_fc_relu") is basic.BasicFcRelu


def test_image_inputs_give_class_logits():
    feats = images_and_labels(0, 5)
    with tf.Graph().as_default():
        model = basic.BasicFcRelu(small(), TRAIN, image_problem_hparams(2))
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        assert logits.shape.as_list() == [5, 1, 1, 1, 2]
        kernels = sorted(v.name for v in _v1.global_variables() if "kernel" in v.name)
        assert kernels[0] == "basic_fc_relu/body/layer_0/kernel:0"
        layer_0 = [v for v in _v1.global_variables() if v.name == kernels[0]][0]
        assert layer_0.shape.as_list() == [16, 32]  # 4 x 4 x 1 pixels flattened
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            assert np.isfinite(sess.run(losses["training"]))


def test_flat_real_inputs():
    with tf.Graph().as_default():
        p_hp = model_hparams.test_problem_hparams(6, 3, input_modality=ModalityType.IDENTITY,
                                                  target_modality=ModalityType.CLASS_LABEL)
        model = basic.BasicFcRelu(small(), TRAIN, p_hp)
        logits, _ = model({"inputs": tf.ones([2, 6]), "targets": tf.zeros([2, 1, 1, 1],
                                                                          tf.int32)})
        assert logits.shape.as_list() == [2, 1, 1, 1, 3]


def test_loss_falls_on_brighter_half():
    batches = [images_and_labels(seed, 32) for seed in range(4)]
    losses = train_losses("basic_fc_relu", small(), image_problem_hparams(2), batches,
                          steps=40, learning_rate=0.01)
    assert mean_last(losses) < 0.6 * mean_first(losses)


def test_infer_gives_one_label_per_example():
    feats = images_and_labels(1, 3)
    with tf.Graph().as_default():
        model = basic.BasicFcRelu(small(), PREDICT, image_problem_hparams(2))
        out = model.infer({"inputs": tf.constant(feats["inputs"])}, beam_size=4)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            outputs = sess.run(out["outputs"])
    assert outputs.shape == (3, 1) and set(outputs.ravel()) <= {0, 1}


def test_variable_length_inputs_are_rejected():
    with tf.Graph().as_default():
        p_hp = model_hparams.test_problem_hparams(5, 2, target_modality=ModalityType.CLASS_LABEL)
        model = basic.BasicFcRelu(small(), TRAIN, p_hp)
        inputs = _v1.placeholder(tf.int32, [None, None, 1, 1])
        with pytest.raises(ValueError, match="basic_fc_relu needs inputs of a fixed size"):
            model({"inputs": inputs, "targets": tf.zeros([2, 1, 1, 1], tf.int32)})
