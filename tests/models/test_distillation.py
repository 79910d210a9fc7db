"""Distillation: T2T's hparams set, the phase checks, T2T's variable names, and the two
phases on text models: a Transformer-encoder teacher learns a toy classification, then a
smaller student learns it from the teacher's frozen checkpoint."""
import os

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import builtins, registry
from t2t.layers.modality_type import ModalityType
from t2t.model import model_hparams, variable_store
from t2t.models import distillation
from t2t.models import transformer_hparams

from t2t_model_testing import PREDICT, TRAIN, pad_ids, session

_v1 = tf.compat.v1
VOCAB = 6


@registry.register_hparams
def distillation_test_teacher():
    """transformer_tiny at d=32: 2 layers, filter 64."""
    hp = transformer_hparams.transformer_tiny()
    hp.hidden_size, hp.filter_size, hp.num_heads, hp.num_hidden_layers = 32, 64, 4, 2
    hp.layer_prepostprocess_dropout = hp.attention_dropout = hp.relu_dropout = 0.0
    return hp


@registry.register_hparams
def distillation_test_student():
    """One layer, filter 32."""
    hp = distillation_test_teacher()
    hp.filter_size, hp.num_hidden_layers = 32, 1
    return hp


def text_hparams(phase, **values):
    hp = registry.hparams("distill_resnet_32_to_15_cifar20x5")
    hp.teacher_model = hp.student_model = "transformer_encoder"
    hp.teacher_hparams, hp.student_hparams = "distillation_test_teacher", "distillation_test_student"
    hp.hidden_size, hp.num_classes, hp.distill_phase = 32, 2, phase
    for key, value in values.items():
        setattr(hp, key, value)
    return hp


def problem_hparams():
    return model_hparams.test_problem_hparams(VOCAB, 2, target_modality=ModalityType.CLASS_LABEL)


def toy_batch(rng, num=32):
    """Rows of 4 ids in 2..5; the label is 1 when a 3 is among them."""
    ids = rng.randint(2, 6, size=[num, 4])
    labels = (ids == 3).any(axis=1).astype(np.int32)
    return {"inputs": pad_ids(ids.tolist()), "targets": labels.reshape([num, 1, 1, 1])}


def test_t2t_set_values_and_registration():
    hp = registry.hparams("distill_resnet_32_to_15_cifar20x5")
    assert (hp.teacher_model, hp.teacher_hparams, hp.student_model, hp.student_hparams) == (
        "resnet", "resnet_cifar_32", "resnet", "resnet_cifar_15")
    assert (hp.task_balance, hp.distill_temperature, hp.num_classes) == (0.28, 2.0, 20)
    assert (hp.teacher_learning_rate, hp.student_learning_rate) == (1.0, 0.8)
    assert (hp.learning_rate_decay_scheme, hp.learning_rate_boundaries,
            hp.learning_rate_multiples) == ("piecewise", [40000, 60000, 80000],
                                            [0.1, 0.01, 0.001])
    assert (hp.optimizer, hp.optimizer_momentum_momentum, hp.batch_size, hp.weight_decay,
            hp.initializer, hp.initializer_gain) == (
        "Momentum", 0.9, 128, 1e-4, "normal_unit_scaling", 2.0)
    assert hp.distill_phase is None and hp.teacher_dir == ""
    assert "distillation" in registry.list_models()
    assert "t2t.models.distillation" in builtins.BUILTIN_MODULES["models"]


def test_phase_and_models_are_checked():
    with pytest.raises(ValueError, match="distill_phase is None; set it to 'train'"):
        distillation.Distillation(registry.hparams("distill_resnet_32_to_15_cifar20x5"),
                                  TRAIN, problem_hparams())
    hp = registry.hparams("distill_resnet_32_to_15_cifar20x5")
    hp.distill_phase = "train"
    with pytest.raises(Exception, match="resnet"):  # t2t has no image models
        distillation.Distillation(hp, TRAIN, problem_hparams())
    with pytest.raises(ValueError, match="set hparams.student_model and hparams.student_hparams"):
        distillation.Distillation(text_hparams("train", student_model=""), TRAIN,
                                  problem_hparams())
    with pytest.raises(ValueError, match="has hidden_size 32 but the inputs are embedded with "
                       "the distillation's hidden_size 64; set --hparams=hidden_size=32"):
        distillation.Distillation(text_hparams("train", hidden_size=64), TRAIN,
                                  problem_hparams())
    with tf.Graph().as_default():
        model = distillation.Distillation(text_hparams("distill"), TRAIN, problem_hparams())
        feats = toy_batch(np.random.RandomState(0), 2)
        with pytest.raises(ValueError, match="needs hparams.teacher_dir"):
            model({k: tf.constant(v) for k, v in feats.items()})


def test_phase_learning_rates():
    def rate(phase):
        return distillation.Distillation(text_hparams(phase), TRAIN,
                                         problem_hparams()).hparams.learning_rate
    assert (rate("train"), rate("distill")) == (1.0, 0.8)


def _build(hp, feats):
    model = distillation.Distillation(hp, TRAIN, problem_hparams())
    logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
    return model, logits, losses


def _teacher_names(prefix, layers, filter_size):
    names = {prefix + "dense/kernel": [32, 2], prefix + "dense/bias": [2],
             prefix + "target_space_embedding/kernel": [32, 32]}
    for layer in range(layers):
        p = prefix + "encoder/layer_%d/" % layer
        for t in ("q", "k", "v", "output_transform"):
            names[p + "self_attention/multihead_attention/%s/kernel" % t] = [32, 32]
        names.update({p + "ffn/conv1/kernel": [32, filter_size], p + "ffn/conv1/bias": [filter_size],
                      p + "ffn/conv2/kernel": [filter_size, 32], p + "ffn/conv2/bias": [32]})
        for norm in ("self_attention/", "ffn/"):
            for v in ("scale", "bias"):
                names[p + norm + "layer_prepostprocess/layer_norm/layer_norm_" + v] = [32]
    for v in ("scale", "bias"):
        names[prefix + "encoder/layer_prepostprocess/layer_norm/layer_norm_" + v] = [32]
    return names


def test_every_set_builds_with_t2t_names_and_a_finite_loss():
    feats = toy_batch(np.random.RandomState(1), 3)
    with tf.Graph().as_default():
        _, logits, losses = _build(text_hparams("train"), feats)
        names = {v.op.name: v.shape.as_list() for v in _v1.global_variables()}
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            logits, loss = sess.run([logits, losses["training"]])
    expected = _teacher_names("distillation/body/teacher/", 2, 64)
    expected["distillation/symbol_modality_6_32/input_emb/weights_0"] = [6, 32]
    assert names == expected
    assert logits.shape == (3, 1, 1, 1, 2)
    assert np.isfinite(loss) and loss > 0


def _train(sess, train_op, loss, feeds, batches, steps):
    values = []
    for step in range(steps):
        batch = batches[step % len(batches)]
        value, _ = sess.run([loss, train_op], {feeds[k]: v for k, v in batch.items()})
        values.append(value)
    return values


def _placeholders():
    return {"inputs": _v1.placeholder(tf.int32, [None, 4, 1, 1]),
            "targets": _v1.placeholder(tf.int32, [None, 1, 1, 1])}


def test_teacher_then_student_learn_and_the_teacher_stays_frozen(tmp_path):
    rng = np.random.RandomState(2)
    batches = [toy_batch(rng) for _ in range(4)]
    test = toy_batch(np.random.RandomState(3), 64)
    teacher_dir = str(tmp_path / "teacher")
    # Phase 1: the teacher learns the task.
    with tf.Graph().as_default():
        _v1.set_random_seed(1)
        feeds = _placeholders()
        model = distillation.Distillation(text_hparams("train"), TRAIN, problem_hparams())
        logits, losses = model(feeds)
        train_op = _v1.train.AdamOptimizer(0.01).minimize(losses["training"])
        predict = distillation.Distillation(text_hparams("train"), PREDICT, problem_hparams())
        classes = predict.infer({"inputs": tf.constant(test["inputs"])})["outputs"]
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            teacher_losses = _train(sess, train_op, losses["training"], feeds, batches, 60)
            teacher_classes = sess.run(classes)
            _v1.train.Saver(_v1.global_variables()).save(
                sess, os.path.join(teacher_dir, "model.ckpt"), global_step=60)
    assert np.mean(teacher_losses[-5:]) < 0.3 * np.mean(teacher_losses[:5]), teacher_losses
    labels = test["targets"].reshape(-1)
    assert np.mean(np.reshape(teacher_classes, -1) == labels) > 0.9
    reader = tf.train.load_checkpoint(teacher_dir)
    # Phase 2: the student learns from the frozen teacher.
    with tf.Graph().as_default():
        _v1.set_random_seed(2)
        feeds = _placeholders()
        hp = text_hparams("distill", teacher_dir=teacher_dir, task_balance=0.5,
                          distill_temperature=2.0)
        model = distillation.Distillation(hp, TRAIN, problem_hparams())
        logits, losses = model(feeds)
        trainable = [v.op.name for v in _v1.trainable_variables()]
        frozen = [v for v in _v1.global_variables() if v.op.name not in trainable]
        train_op = _v1.train.AdamOptimizer(0.01).minimize(losses["training"])
        predict = distillation.Distillation(hp, PREDICT, problem_hparams())
        classes = predict.infer({"inputs": tf.constant(test["inputs"])})["outputs"]
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            student_losses = _train(sess, train_op, losses["training"], feeds, batches, 60)
            frozen_values = sess.run({v.op.name: v for v in frozen})
            student_classes = sess.run(classes)
    assert trainable and all(n.startswith("distillation/body/student/") for n in trainable)
    assert sorted(n for n in trainable if "dense" in n) == [
        "distillation/body/student/dense/bias", "distillation/body/student/dense/kernel"]
    # The teacher and the input embedding: the teacher's checkpoint values, unchanged.
    assert "distillation/body/teacher/dense/kernel" in frozen_values
    assert any("input_emb" in name for name in frozen_values)
    for name, value in frozen_values.items():
        np.testing.assert_array_equal(value, reader.get_tensor(name), err_msg=name)
    assert np.mean(student_losses[-5:]) < 0.5 * np.mean(student_losses[:5]), student_losses
    assert np.mean(np.reshape(student_classes, -1) == labels) > 0.9
    # The same distill phase in a tf.function over t2t's variable store (the native
    # backend): the teacher's variables come from the checkpoint, not trainable.
    store = variable_store.VariableStore()
    model = distillation.Distillation(hp, TRAIN, problem_hparams())

    @tf.function(autograph=False)
    def forward(inputs, targets):
        with store.scope():
            return model({"inputs": inputs, "targets": targets})[1]["training"]

    loss = forward(tf.constant(test["inputs"]), tf.constant(test["targets"]))
    assert np.isfinite(loss.numpy())
    native_trainable = sorted(v.name.split(":")[0] for v in store.trainable_variables())
    assert native_trainable == sorted(trainable)
    for name in frozen_values:
        np.testing.assert_array_equal(store.variables[name].numpy(), reader.get_tensor(name),
                                      err_msg=name)
