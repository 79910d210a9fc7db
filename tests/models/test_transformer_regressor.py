"""TransformerRegressor: T2T's top variable names, padding left out, learning a toy regression."""
import numpy as np
import tensorflow as tf

from t2t.core import registry
from t2t.layers.modality_type import ModalityType
from t2t.model import model_hparams

from t2t_model_testing import PREDICT, TRAIN, pad_ids, session

_v1 = tf.compat.v1


def tiny_hparams():
    hp = registry.hparams("transformer_tiny")
    hp.hidden_size, hp.filter_size, hp.num_heads, hp.num_hidden_layers = 16, 32, 2, 1
    for name in ("layer_prepostprocess_dropout", "attention_dropout", "relu_dropout"):
        setattr(hp, name, 0.0)
    return hp


def regression_problem():
    return model_hparams.test_problem_hparams(4, 1, target_modality=ModalityType.REAL_L2_LOSS)


def toy_batch(rng, num):
    """Random 2/3 inputs (lengths 1..6); the target is the fraction of 3s, times 2, minus 1."""
    inputs, values = [], []
    for _ in range(num):
        ids = list(rng.choice([2, 3], size=rng.randint(1, 7)))
        inputs.append(ids)
        values.append(2.0 * np.mean(np.equal(ids, 3)) - 1.0)
    return {"inputs": pad_ids(inputs),
            "targets": np.array(values, np.float32).reshape([num, 1, 1, 1])}


def feeds_of(batch, ph):
    return {ph[k]: v for k, v in batch.items()}


def placeholders():
    return {"inputs": _v1.placeholder(tf.int32, [None, None, 1, 1]),
            "targets": _v1.placeholder(tf.float32, [None, 1, 1, 1])}


def test_tiny_set_builds_with_finite_loss_and_t2ts_variable_names():
    hp = registry.hparams("transformer_tiny")  # T2T's tiny set, its dropouts on
    hp.hidden_size, hp.filter_size = 16, 32
    with tf.Graph().as_default():
        model = registry.model("transformer_regressor")(hp, TRAIN, regression_problem())
        batch = toy_batch(np.random.RandomState(0), 3)
        predictions, losses = model({k: tf.constant(v) for k, v in batch.items()})
        names = {v.name: v.shape.as_list() for v in _v1.trainable_variables()}
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            loss = sess.run(losses["training"])
    assert predictions.shape.as_list() == [3, 1, 1, 1]
    assert np.isfinite(loss) and loss > 0
    assert names["transformer_regressor/reg_top_ffn/model_top/kernel:0"] == [16, 1]
    assert names["transformer_regressor/reg_top_ffn/model_top/bias:0"] == [1]
    assert any(n.startswith("transformer_regressor/body/encoder/layer_1/self_attention/")
               for n in names)


def test_padding_the_inputs_changes_no_prediction():
    batch = toy_batch(np.random.RandomState(1), 4)
    longer = dict(batch, inputs=np.pad(batch["inputs"], [[0, 0], [0, 3], [0, 0], [0, 0]]))
    with tf.Graph().as_default():
        _v1.set_random_seed(2)
        ph = placeholders()
        predictions, _ = registry.model("transformer_regressor")(
            tiny_hparams(), PREDICT, regression_problem())(ph)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            short, long = (sess.run(predictions, feeds_of(b, ph)) for b in (batch, longer))
    np.testing.assert_allclose(short, long, rtol=1e-4, atol=1e-5)


def test_learns_a_toy_regression_and_predicts_it():
    rng = np.random.RandomState(3)
    batches = [toy_batch(rng, 16) for _ in range(4)]
    test = toy_batch(np.random.RandomState(9), 8)
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(1)
        ph = placeholders()
        with _v1.variable_scope("m"):
            _, losses = registry.model("transformer_regressor")(
                tiny_hparams(), TRAIN, regression_problem())(ph)
        with _v1.variable_scope("m", reuse=True):
            predictions, _ = registry.model("transformer_regressor")(
                tiny_hparams(), PREDICT, regression_problem())(ph)
        train_op = _v1.train.AdamOptimizer(0.01).minimize(losses["training"])
        values = []
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            for step in range(100):
                value, _ = sess.run([losses["training"], train_op],
                                    feeds_of(batches[step % 4], ph))
                values.append(value)
            predicted = sess.run(predictions, feeds_of(test, ph))
    assert np.mean(values[-3:]) < 0.2 * np.mean(values[:3]), values
    np.testing.assert_allclose(predicted.reshape([8]), test["targets"].reshape([8]), atol=0.3)
