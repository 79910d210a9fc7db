"""TransformerAux: shift_and_pad, shift_values parsing, the hparams sets, T2T's variable
names of the auxiliary softmaxes, the auxiliary loss's value, and learning + decoding."""
import importlib

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import builtins, registry, t2t_import_alias
from t2t.model import model_hparams
from t2t.models.research import transformer_aux

from t2t_model_testing import (EOS, PREDICT, TRAIN, batch_features, copy_examples,
    placeholders, session)

_v1 = tf.compat.v1
SETS = ["transformer_aux_base", "transformer_aux_tiny"]
STEPS = 300  # 120 left the short row [3, 2] half-learned for 1 seed in 6 (CI failed under load)


def tiny(name="transformer_aux_tiny", layers=1, **values):
    hp = registry.hparams(name)
    hp.hidden_size, hp.filter_size, hp.num_heads, hp.num_hidden_layers = 32, 64, 4, layers
    hp.layer_prepostprocess_dropout = hp.attention_dropout = hp.relu_dropout = 0.0
    for key, value in values.items():
        setattr(hp, key, value)
    return hp


def test_shift_and_pad_and_shift_values():
    with tf.Graph().as_default():
        row = tf.constant([1, 2, 3, 4])
        grid = _v1.placeholder(tf.int32, [2, None])
        results = [transformer_aux.shift_and_pad(row, 2), transformer_aux.shift_and_pad(row, -2),
                   transformer_aux.shift_and_pad(row, 5),
                   transformer_aux.shift_and_pad(grid, 1, axis=1),
                   transformer_aux.shift_and_pad(grid, -1, axis=-1)]
        with session() as sess:
            values = sess.run(results, {grid: [[1, 2, 3], [4, 5, 6]]})
    np.testing.assert_array_equal(values[0], [0, 0, 1, 2])
    np.testing.assert_array_equal(values[1], [3, 4, 0, 0])
    np.testing.assert_array_equal(values[2], [0, 0, 0, 0])
    np.testing.assert_array_equal(values[3], [[0, 1, 2], [0, 4, 5]])
    np.testing.assert_array_equal(values[4], [[2, 3, 0], [5, 6, 0]])
    assert transformer_aux.parse_shift_values("-4, 2,6") == [-4, 2, 6]
    assert transformer_aux.parse_shift_values("") == []
    with pytest.raises(ValueError, match="'x' is not an integer"):
        transformer_aux.parse_shift_values("1,x")
    with pytest.raises(ValueError, match="0 is the training loss itself"):
        transformer_aux.parse_shift_values("1,0")


def test_hparams_sets_have_t2t_values_and_modules_register():
    base, small = registry.hparams("transformer_aux_base"), registry.hparams("transformer_aux_tiny")
    assert (base.shift_values, base.hidden_size, base.num_hidden_layers) == ("1,2,3,4", 512, 6)
    assert (small.shift_values, small.hidden_size, small.num_hidden_layers) == ("1,2", 128, 2)
    assert not base.shared_embedding_and_softmax_weights
    assert not small.shared_embedding_and_softmax_weights
    assert "transformer_aux" in registry.list_models()
    assert "t2t.models.research.transformer_aux" in builtins.BUILTIN_MODULES["models"]
    t2t_import_alias.uninstall()
    assert t2t_import_alias.install()
    try:
        from tensor2tensor.models.research import transformer_aux as new_path
        import tensor2tensor.models.transformer_aux as old_path
    finally:
        t2t_import_alias.uninstall()
    assert new_path is old_path is importlib.import_module("t2t.models.research.transformer_aux")


@pytest.mark.parametrize("name", SETS)
def test_every_hparams_set_builds_and_gives_finite_losses(name):
    feats = batch_features(copy_examples(np.random.RandomState(0), 3, 4))
    with tf.Graph().as_default():
        logits, losses = transformer_aux.TransformerAux(
            tiny(name), TRAIN, model_hparams.test_problem_hparams(5, 5))(
                {k: tf.constant(v) for k, v in feats.items()})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            values = sess.run({"logits": logits, "losses": losses})
    assert values["logits"].shape == feats["targets"].shape + (5,)
    for key in ("training", "auxiliary"):
        assert np.isfinite(values["losses"][key]) and values["losses"][key] > 0, values


class RecordingAux(transformer_aux.TransformerAux):
    """TransformerAux that keeps (scope, logits) of each top it builds."""

    def top(self, body_output, features):
        logits = super().top(body_output, features)
        self.recorded.append((_v1.get_variable_scope().name, logits))
        return logits


def test_auxiliary_variables_names_and_loss_value():
    """shift_values "2,-1": softmaxes reconst_2 and predict_1 beside the Transformer's; the
    auxiliary loss is the sum of each softmax's mean xent against the shifted targets."""
    feats = batch_features(copy_examples(np.random.RandomState(1), 2, 4))
    hp = tiny(shift_values="2,-1", label_smoothing=0.0, symbol_modality_num_shards=1)
    with tf.Graph().as_default():
        model = RecordingAux(hp, TRAIN, model_hparams.test_problem_hparams(5, 5),
                             name="transformer_aux")
        model.recorded = []
        _, losses = model({k: tf.constant(v) for k, v in feats.items()})
        names = {v.op.name: v.shape.as_list() for v in _v1.global_variables()}
        logits = {scope.split("/")[-1]: value for scope, value in model.recorded}
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            aux, logits = sess.run([losses["auxiliary"], logits])
    scope = "transformer_aux/body/"
    softmax = "symbol_modality_5_32/softmax/weights_0"
    assert sorted(n for n in names if "/reconst_" in n or "/predict_" in n) == sorted(
        [scope + "reconst_2/" + softmax, scope + "predict_1/" + softmax])
    assert names[scope + "reconst_2/" + softmax] == [5, 32]
    assert "transformer_aux/symbol_modality_5_32/softmax/weights_0" in names
    assert "transformer_aux/symbol_modality_5_32/target_emb/weights_0" in names
    assert scope + "decoder/layer_0/encdec_attention/multihead_attention/q/kernel" in names
    assert set(logits) == {"reconst_2", "predict_1", "transformer_aux"}
    targets = feats["targets"][:, :, 0, 0]
    expected = 0.0
    for name, labels in (("reconst_2", np.pad(targets, [[0, 0], [2, 0]])[:, :-2]),
                         ("predict_1", np.pad(targets, [[0, 0], [0, 1]])[:, 1:])):
        log_probs = logits[name][:, :, 0, 0] - np.log(
            np.exp(logits[name][:, :, 0, 0]).sum(-1, keepdims=True))
        xent = -np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]
        weights = (labels != 0).astype(np.float32)
        expected += (xent * weights).sum() / weights.sum()
    np.testing.assert_allclose(aux, expected, rtol=1e-4)


def test_learns_to_copy_and_decodes_it():
    rng = np.random.RandomState(2)
    batches = [batch_features(copy_examples(rng, 24, 4, symbols=(2, 3, 4)), 5, 5)
               for _ in range(4)]
    test = [([2, 3, 4, EOS], None), ([4, 2, 3, EOS], None), ([3, 2, EOS], None)]
    inputs = batch_features([(row, row) for row, _ in test])["inputs"]
    hp = tiny(symbol_modality_num_shards=1)
    p_hp = model_hparams.test_problem_hparams(5, 5)
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(1)
        feeds = placeholders(("inputs", "targets"), batches)
        _, losses = transformer_aux.TransformerAux(hp, TRAIN, p_hp)(feeds)
        total = losses["training"] + losses["auxiliary"]
        train_op = _v1.train.AdamOptimizer(0.02).minimize(total)
        predict = transformer_aux.TransformerAux(hp, PREDICT, p_hp)
        decoded = predict.infer({"inputs": tf.constant(inputs)}, decode_length=2)
        history = []
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            for step in range(STEPS):
                batch = batches[step % len(batches)]
                values, _ = sess.run([losses, train_op], {feeds[k]: v for k, v in batch.items()})
                history.append((values["training"], values["auxiliary"]))
            decoded = sess.run(decoded)
    training, auxiliary = np.array(history).T
    assert np.mean(training[-5:]) < 0.3 * np.mean(training[:5]), training
    assert np.mean(auxiliary[-5:]) < 0.6 * np.mean(auxiliary[:5]), auxiliary
    for row, (ids, _) in zip(decoded["outputs"], test):
        assert list(row[:len(ids)]) == ids, decoded["outputs"]
