"""T2TModel machinery: bottom/body/top/loss, hparams per mode, decoding loops and specs.

Most tests use a tiny autoregressive model (`ShiftedDense`) so graphs build fast; the
decoding tests override its top with scripted logits to get exactly known outputs.
"""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.core.hparam import HParams
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers.modality_type import ModalityType
from t2t.model import model_hparams
from t2t.model import t2t_model

from t2t_model_testing import (EVAL, PREDICT, TRAIN, batch_features, copy_examples, pad_ids,
    session, session_config)

_v1 = tf.compat.v1
VOCAB = 5


class ShiftedDense(t2t_model.T2TModel):
    """Predicts each target from the previous target and the mean of the inputs."""

    seen_features = None

    def body(self, features):
        ShiftedDense.seen_features = sorted(features)
        h = common_layers.shift_right(features["targets"])
        if self.has_input:
            h += tf.reduce_mean(features["inputs"], axis=[1, 2], keepdims=True)
        return common_layers.dense(h, self.hparams.hidden_size, activation=tf.nn.relu,
                                   name="hidden")


def small_hparams(**overrides):
    hp = common_hparams.basic_params1()
    hp.hidden_size = 8
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def example_batch(seed=0, num=4, max_len=4):
    return batch_features(copy_examples(np.random.RandomState(seed), num, max_len))


def run(fetches, feed=None):
    with session() as sess:
        sess.run(_v1.global_variables_initializer())
        return sess.run(fetches, feed)


def scripted_top(rows, repeat=1):
    """A top whose logits put 5.0 on rows[b][i] at position i (clamped to the last).

    `repeat` copies each row for beam search, whose batch holds beam_size copies of each.
    """
    table = tf.constant(np.repeat(np.array(rows), repeat, axis=0), dtype=tf.int32)

    def top(body_output, targets, model_hparams_, vocab_size):
        del targets, model_hparams_
        shape = common_layers.shape_list(body_output)
        positions = tf.minimum(tf.range(shape[1]), len(rows[0]) - 1)
        ids = tf.gather(table, positions, axis=1)  # [B, L]
        logits = tf.one_hot(ids, vocab_size) * 5.0
        # Keep the body in the graph (and the logits batch-sized).
        logits += 0.0 * tf.reduce_sum(body_output, axis=[1, 2, 3])[:, None, None]
        return logits[:, :, tf.newaxis, tf.newaxis, :]
    return top


# ------------------------------------------------------------------ model_fn
def test_logits_shape_loss_and_variable_scopes():
    with tf.Graph().as_default():
        p_hp = model_hparams.test_problem_hparams(VOCAB, VOCAB)
        model = ShiftedDense(small_hparams(), TRAIN, p_hp)
        feats = example_batch()
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        assert logits.shape.as_list() == [4, feats["targets"].shape[1], 1, 1, VOCAB]
        assert losses["training"].shape.as_list() == []
        names = sorted(v.name for v in _v1.global_variables())
        assert all(name.startswith("shifted_dense/") for name in names)
        assert "shifted_dense/symbol_modality_5_8/input_emb/weights_0:0" in names
        assert "shifted_dense/symbol_modality_5_8/target_emb/weights_0:0" in names
        assert "shifted_dense/symbol_modality_5_8/softmax/weights_0:0" in names
        assert "shifted_dense/body/hidden/kernel:0" in names
        # Raw copies of transformed features, space ids filled in from the problem.
        assert {"inputs_raw", "targets_raw", "input_space_id",
                "target_space_id"} <= set(ShiftedDense.seen_features)
        assert np.isfinite(run(losses["training"]))


def test_loss_matches_manual_cross_entropy_and_multiplier():
    with tf.Graph().as_default():
        p_hp = model_hparams.test_problem_hparams(VOCAB, VOCAB)
        p_hp.loss_multiplier = 2.0
        model = ShiftedDense(small_hparams(label_smoothing=0.0), TRAIN, p_hp)
        feats = example_batch()
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        logits_v, loss_v = run([logits, losses["training"]])
    targets = feats["targets"][:, :, 0, 0]
    log_probs = logits_v[:, :, 0, 0, :] - np.log(np.exp(logits_v[:, :, 0, 0, :]).sum(-1,
                                                                                     keepdims=True))
    nll = -np.take_along_axis(log_probs, targets[..., None], -1)[..., 0]
    weights = (targets != 0).astype(np.float32)
    assert loss_v == pytest.approx(2.0 * (nll * weights).sum() / weights.sum(), rel=1e-5)


def test_weights_fn_and_loss_overrides_per_feature():
    feats = example_batch()
    with tf.Graph().as_default():
        p_hp = model_hparams.test_problem_hparams(VOCAB, VOCAB)
        hp = small_hparams(label_smoothing=0.0)
        hp.weights_fn = {"targets": common_layers.weights_all}
        model = ShiftedDense(hp, TRAIN, p_hp)
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        logits_v, loss_v = run([logits, losses["training"]])
    lp = logits_v[:, :, 0, 0, :]
    lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    nll = -np.take_along_axis(lp, feats["targets"][:, :, 0, :], -1)[..., 0]
    assert loss_v == pytest.approx(nll.mean(), rel=1e-5)  # padding counted too

    with tf.Graph().as_default():
        hp = small_hparams()
        hp.loss = {"targets": lambda *args, **kwargs: (tf.constant(6.0), tf.constant(3.0))}
        model = ShiftedDense(hp, TRAIN, model_hparams.test_problem_hparams(VOCAB, VOCAB))
        _, losses = model({k: tf.constant(v) for k, v in feats.items()})
        assert run(losses["training"]) == pytest.approx(2.0)


def test_body_training_loss_skips_top_and_extra_losses_are_kept():
    class OwnLoss(t2t_model.T2TModel):
        def body(self, features):
            return features["targets"], {"training": tf.constant(3.5)}

    class ExtraLoss(ShiftedDense):
        def body(self, features):
            return super().body(features), tf.constant([1.0, 3.0])

    with tf.Graph().as_default():
        feats = {k: tf.constant(v) for k, v in example_batch().items()}
        p_hp = model_hparams.test_problem_hparams(VOCAB, VOCAB)
        logits, losses = OwnLoss(small_hparams(), TRAIN, p_hp)(feats)
        assert logits.shape.as_list()[-1] == 8  # the body output: no softmax top
        assert run(losses["training"]) == pytest.approx(3.5)
        _, losses = ExtraLoss(small_hparams(), TRAIN, p_hp)(feats)
        assert run(losses["extra"]) == pytest.approx(2.0)


def test_dropouts_and_label_smoothing_zero_outside_train():
    hp = small_hparams(dropout=0.3, label_smoothing=0.2, symbol_dropout=0.1,
                       layer_prepostprocess_dropout=0.4)
    p_hp = model_hparams.test_problem_hparams(VOCAB, VOCAB)
    for mode in (EVAL, PREDICT):
        model = ShiftedDense(hp, mode, p_hp)
        for name in ("dropout", "label_smoothing", "symbol_dropout",
                     "layer_prepostprocess_dropout"):
            assert model.hparams.get(name) == 0.0, (mode, name)
        assert model.hparams.mode == mode
        assert model.is_predicting == (mode == PREDICT)
    train_model = ShiftedDense(hp, TRAIN, p_hp)
    assert train_model.hparams.dropout == 0.3 and train_model.hparams.label_smoothing == 0.2
    assert train_model.is_training
    assert hp.dropout == 0.3 and "mode" not in hp  # the caller's hparams are untouched


def test_properties_and_shared_embedding_unset_for_different_vocabs():
    hp = small_hparams(shared_embedding_and_softmax_weights=True)
    model = ShiftedDense(hp, TRAIN, model_hparams.test_problem_hparams(VOCAB, VOCAB + 1))
    assert not model.hparams.shared_embedding_and_softmax_weights
    assert model.has_input and not model.target_modality_is_real
    same = ShiftedDense(hp, TRAIN, model_hparams.test_problem_hparams(VOCAB, VOCAB))
    assert same.hparams.shared_embedding_and_softmax_weights
    no_inputs = ShiftedDense(hp, TRAIN, model_hparams.test_problem_hparams(None, VOCAB))
    assert not no_inputs.has_input
    real = ShiftedDense(hp, TRAIN, model_hparams.test_problem_hparams(
        VOCAB, 3, target_modality=ModalityType.REAL_L2_LOSS))
    assert real.target_modality_is_real
    with pytest.raises(TypeError, match="unexpected keyword arguments: colour"):
        ShiftedDense(hp, TRAIN, colour="red")


def test_problem_hparams_from_hparams_attribute_and_add_problem_hparams():
    hp = small_hparams()
    model_hparams.add_problem_hparams(hp, "algorithmic_identity_binary40")
    assert hp.problem.name == "algorithmic_identity_binary40"
    assert hp.problem_hparams.vocab_size == {"inputs": 4, "targets": 4}
    assert "problem" not in hp.values()  # an attribute, never written to hparams.json
    model = ShiftedDense(hp, TRAIN)
    assert model.problem_hparams is hp.problem_hparams
    # Public names for what other packages read; T2T's private names stay for ported code.
    assert model.padded_vocab_size("targets") == model._padded_vocab_size("targets")
    assert model.modality_name("targets") == model._modality_name("targets")
    assert model.modality_name("targets").startswith("symbol_modality_")
    copied = model_hparams.copy_hparams(hp)
    copied.weights_fn["targets"] = len
    assert "targets" not in hp.weights_fn and copied.problem is hp.problem
    with pytest.raises(ValueError, match="expected a problem name or a Problem"):
        model_hparams.add_problem_hparams(hp, 42)
    with pytest.raises(KeyError, match="never registered"):
        model_hparams.add_problem_hparams(hp, "no_such_problem_xyz")


def test_variable_initializer_from_hparams():
    with tf.Graph().as_default():
        hp = small_hparams(initializer="uniform", initializer_gain=0.5)
        model = ShiftedDense(hp, TRAIN, model_hparams.test_problem_hparams(VOCAB, VOCAB))
        model({k: tf.constant(v) for k, v in example_batch().items()})
        kernel = [v for v in _v1.global_variables() if "body/hidden/kernel" in v.name][0]
        value = run(kernel)
        assert np.abs(value).max() <= 0.05 + 1e-7 and np.abs(value).max() > 0.01
    with tf.Graph().as_default():
        model = ShiftedDense(small_hparams(initializer="bogus"), TRAIN,
                             model_hparams.test_problem_hparams(VOCAB, VOCAB))
        with pytest.raises(ValueError, match="unknown initializer 'bogus'"):
            model({k: tf.constant(v) for k, v in example_batch().items()})


class TwoShards:
    """A T2T Parallelism over two shards on the same device."""
    n = 2
    ps_devices = ["", ""]

    def __call__(self, fn, *args):
        outputs = [fn(*[a[i] if isinstance(a, list) else a for a in args]) for i in range(2)]
        if isinstance(outputs[0], tuple):
            return tuple(list(values) for values in zip(*outputs))
        return outputs


def test_data_parallelism_shards_batch_and_averages_losses():
    feats = example_batch(num=4)
    with tf.Graph().as_default():
        p_hp = model_hparams.test_problem_hparams(VOCAB, VOCAB)
        tensors = {k: tf.constant(v) for k, v in feats.items()}
        one_logits, one_losses = ShiftedDense(small_hparams(), EVAL, p_hp)(tensors)
        two_logits, two_losses = ShiftedDense(small_hparams(), EVAL, p_hp,
                                              data_parallelism=TwoShards())(tensors)
        a, b, la, lb = run([one_logits, two_logits, one_losses["training"],
                            two_losses["training"]])
    np.testing.assert_allclose(a, b, atol=1e-6)
    assert la == pytest.approx(lb, rel=1e-6)


def test_features_of_unknown_batch_shard_under_tf_function():
    # The native backend traces the model in a tf.function over batches of unknown size,
    # where a dynamic dim == 1 is a tensor, not a bool: a [batch] feature (TyDi QA's
    # positions) is split as it is, only a scalar or a static [1] is tiled per shard.
    p_hp = model_hparams.test_problem_hparams(VOCAB, VOCAB)
    for parallelism, shards in ((None, 1), (TwoShards(), 2)):
        model = ShiftedDense(small_hparams(), TRAIN, p_hp, data_parallelism=parallelism)
        shard = tf.function(lambda f: model._shard_features(f), autograph=False)
        sharded = shard({"positions": tf.range(4), "scalar": tf.constant(7),
                         "one": tf.constant([5])})
        traced = shard.get_concrete_function({
            "positions": tf.TensorSpec([None], tf.int32),
            "scalar": tf.TensorSpec([], tf.int32), "one": tf.TensorSpec([1], tf.int32)})
        assert traced.structured_outputs["positions"][0].shape.as_list() == [None]
        assert np.concatenate(sharded["positions"]).tolist() == [0, 1, 2, 3]
        assert len(sharded["positions"]) == shards
        assert [s.numpy().tolist() for s in sharded["scalar"]] == [[7]] * shards
        assert [s.numpy().tolist() for s in sharded["one"]] == [[5]] * shards


def test_average_sharded_losses_and_single_datashard():
    with tf.Graph().as_default():
        losses = t2t_model.average_sharded_losses(
            [{"training": (6.0, 3.0), "extra": 1.0}, {"training": (2.0, 1.0), "extra": 3.0}])
        assert run(losses) == {"training": pytest.approx(2.0), "extra": pytest.approx(2.0)}
    dp = t2t_model.SingleDatashard()
    assert dp(lambda a, b: (a + b, a * b), [2], [3]) == ([5], [6])
    assert dp(lambda a: a * 2, [4]) == [8]


def test_summaries_outside_loops_only():
    with tf.Graph().as_default() as graph:
        p_hp = model_hparams.test_problem_hparams(VOCAB, VOCAB)
        model = ShiftedDense(small_hparams(), TRAIN, p_hp)
        model({k: tf.constant(v) for k, v in example_batch().items()})
        names = [s.op.name for s in _v1.get_collection(_v1.GraphKeys.SUMMARIES)]
        assert "shifted_dense/input_stats/inputs_batch" in names
        assert "shifted_dense/input_stats/targets_nonpadding_fraction" in names
        before = len(names)
        ShiftedDense(small_hparams(), PREDICT, p_hp).infer(
            {"inputs": tf.constant(example_batch()["inputs"])}, decode_length=2)
        summaries = _v1.get_collection(_v1.GraphKeys.SUMMARIES)
        assert len(summaries) == before  # nothing from inside the while loop
        assert all(s.graph is graph for s in summaries)


# ------------------------------------------------------------------ decoding
def scripted_model(rows, stop_at_eos=False, inputs=True, repeat=1, **hp_overrides):
    p_hp = model_hparams.test_problem_hparams(VOCAB if inputs else None, VOCAB)
    p_hp.stop_at_eos = stop_at_eos
    hp = small_hparams(**hp_overrides)
    hp.top = {"targets": scripted_top(rows, repeat)}
    return ShiftedDense(hp, PREDICT, p_hp)


def test_greedy_follows_logits_and_runs_to_max_length():
    rows = [[2, 3, 1, 4, 4, 4, 4, 4], [3, 3, 3, 1, 2, 2, 2, 2]]
    with tf.Graph().as_default():
        inputs = tf.constant(pad_ids([[2, 1], [3, 3, 1]]))  # length 3
        out = scripted_model(rows).infer({"inputs": inputs}, decode_length=2)
        assert out["outputs"].dtype == tf.int32
        values = run(out)
    # Input length 3 + 2 positions; 0 after a row's EOS (1), as the fast decoders.
    assert values["outputs"].tolist() == [[2, 3, 1, 0, 0], [3, 3, 3, 1, 0]]
    assert values["scores"].shape == (2,)
    # Scores sum the log-probabilities up to and including the first EOS.
    per_step = np.log(np.exp(5.0) / (np.exp(5.0) + VOCAB - 1))
    np.testing.assert_allclose(values["scores"], [3 * per_step, 4 * per_step], rtol=1e-4)


def test_t2ts_slow_greedy_infer_returns_rank_4_outputs_as_t2ts():
    # T2T's `_slow_greedy_infer` gave outputs [B, L, 1, 1]; `slow_greedy_infer` and `infer`
    # give t2t's [B, L] (the same ids), the prompt removed for models without inputs.
    rows = [[2, 3, 1, 4, 4, 4, 4, 4], [3, 3, 3, 1, 2, 2, 2, 2]]
    with tf.Graph().as_default():
        inputs = tf.constant(pad_ids([[2, 1], [3, 3, 1]]))  # length 3
        model = scripted_model(rows)
        t2t_style = model._slow_greedy_infer({"inputs": inputs}, decode_length=2)
        assert t2t_style["outputs"].shape.rank == 4
        flat = model.slow_greedy_infer({"inputs": inputs}, decode_length=2)
        prompted = scripted_model(rows, inputs=False)._slow_greedy_infer(
            {"inputs": tf.constant([[2, 3], [3, 3]])}, decode_length=3)
        t2t_v, flat_v, prompted_v = run([t2t_style, flat, prompted])
    assert t2t_v["outputs"].shape == (2, 5, 1, 1) and t2t_v["outputs"].dtype == np.int32
    assert t2t_v["outputs"][:, :, 0, 0].tolist() == flat_v["outputs"].tolist() == \
        [[2, 3, 1, 0, 0], [3, 3, 3, 1, 0]]
    np.testing.assert_allclose(t2t_v["scores"], flat_v["scores"])
    # After the prompt [2, 3] / [3, 3]: row 0 decodes EOS first, row 1 its EOS second.
    assert prompted_v["outputs"][:, :, 0, 0].tolist() == [[1, 0, 0], [3, 1, 0]]
    with tf.Graph().as_default():
        p_hp = model_hparams.test_problem_hparams(VOCAB, 3,
                                                  target_modality=ModalityType.REAL_L2_LOSS)
        model = ShiftedDense(small_hparams(), PREDICT, p_hp)
        real = run(model._slow_greedy_infer({"inputs": tf.constant(pad_ids([[2, 3, 1]]))},
                                            2)["outputs"])
    assert real.shape == (1, 5, 1, 3)  # real values: unchanged


def test_greedy_stop_at_eos_waits_for_every_row():
    rows = [[2, 1, 4, 4, 4, 4, 4, 4], [3, 3, 3, 1, 2, 2, 2, 2]]
    with tf.Graph().as_default():
        inputs = tf.constant(pad_ids([[2, 1], [3, 3, 1]]))
        out = scripted_model(rows, stop_at_eos=True).infer({"inputs": inputs},
                                                           decode_length=4)
        values = run(out["outputs"])
    # T2T stopped early only for batch size 1; here once both rows produced EOS.
    assert values.tolist() == [[2, 1, 0, 0], rows[1][:4]]


def test_random_sampling_with_top_1_equals_argmax():
    rows = [[2, 3, 4, 1, 1], [4, 4, 2, 1, 1]]
    with tf.Graph().as_default():
        inputs = tf.constant(pad_ids([[2, 1], [3, 1]]))
        model = scripted_model(rows, sampling_method="random", sampling_temp=5.0,
                               sampling_keep_top_k=1)
        values = run(model.infer({"inputs": inputs}, decode_length=2)["outputs"])
    assert values.tolist() == [r[:4] for r in rows]
    with tf.Graph().as_default():
        model = scripted_model(rows, sampling_method="sideways")
        with pytest.raises(ValueError, match="unknown hparams.sampling_method 'sideways'"):
            model.infer({"inputs": tf.constant(pad_ids([[2, 1]]))}, decode_length=1)


def test_beam_search_finds_scripted_sequence_and_beam_one_equals_greedy():
    rows = [[2, 3, 4, 1, 0, 0, 0], [4, 1, 0, 0, 0, 0, 0]]
    with tf.Graph().as_default():
        inputs = tf.constant(pad_ids([[2, 1], [3, 1]]))
        model = scripted_model(rows)
        greedy = model.infer({"inputs": inputs}, decode_length=3)
        beam1 = model._beam_decode({"inputs": inputs}, 3, beam_size=1, top_beams=1, alpha=0.0)
        beam3 = scripted_model(rows, repeat=3).infer({"inputs": inputs}, decode_length=3,
                                                     beam_size=3, top_beams=2, alpha=0.0)
        greedy_v, beam1_v, beam3_v = run([greedy, beam1, beam3])

    def until_eos(ids):
        ids = list(ids)
        return ids[:ids.index(1) + 1] if 1 in ids else ids

    for b in range(2):
        assert until_eos(beam1_v["outputs"][b]) == until_eos(greedy_v["outputs"][b])
        assert until_eos(beam3_v["outputs"][b, 0]) == until_eos(rows[b])
    np.testing.assert_allclose(beam1_v["scores"], greedy_v["scores"], atol=1e-4)
    assert beam3_v["outputs"].shape[:2] == (2, 2) and beam3_v["scores"].shape == (2, 2)
    assert beam3_v["scores"][0, 0] > beam3_v["scores"][0, 1]


def test_decoder_only_continues_prompt():
    rows = [[2, 2, 3, 4, 3, 2, 4], [3, 4, 2, 2, 4, 3, 3]]
    with tf.Graph().as_default():
        model = scripted_model(rows, inputs=False)
        prompt = tf.constant([[2, 2], [3, 4]], dtype=tf.int32)
        values = run(model.infer({"inputs": prompt}, decode_length=3))
        with pytest.raises(ValueError, match="needs a prompt"):
            model.infer({}, decode_length=3)
    assert values["outputs"].tolist() == [r[2:5] for r in rows]


def test_classification_infers_one_label_without_beam():
    with tf.Graph().as_default():
        p_hp = model_hparams.test_problem_hparams(VOCAB, 3,
                                                  target_modality=ModalityType.CLASS_LABEL)
        model = ShiftedDense(small_hparams(), PREDICT, p_hp)
        out = model.infer({"inputs": tf.constant(example_batch()["inputs"])},
                          decode_length=5, beam_size=4)
        values = run(out)
    assert values["outputs"].shape == (4, 1)
    assert set(values["outputs"].ravel()) <= {0, 1, 2}


def test_real_valued_targets_decode_greedily_as_floats():
    with tf.Graph().as_default():
        p_hp = model_hparams.test_problem_hparams(VOCAB, 3,
                                                  target_modality=ModalityType.REAL_L2_LOSS)
        model = ShiftedDense(small_hparams(), PREDICT, p_hp)
        out = model.infer({"inputs": tf.constant(pad_ids([[2, 3, 1], [4, 1]]))},
                          decode_length=2, beam_size=3)
        values = run(out["outputs"])
    assert values.shape == (2, 5, 1, 3) and values.dtype == np.float32


def test_infer_needs_problem_hparams():
    model = ShiftedDense(small_hparams(), PREDICT)
    with pytest.raises(ValueError, match="infer needs problem_hparams"):
        model.infer({"inputs": tf.zeros([1, 2, 1, 1], tf.int32)})


# ------------------------------------------------------------------ estimator specs
def small_transformer_hparams():
    hp = registry.hparams("transformer_test")
    hp.num_hidden_layers, hp.symbol_modality_num_shards = 1, 1
    return hp


def _spec(mode, hp=None, decode_hparams=None, use_tpu=False, features=None, use_xla=False):
    hp = hp or small_transformer_hparams()
    if not hasattr(hp, "problem"):
        model_hparams.add_problem_hparams(hp, "algorithmic_identity_binary40")
    feats = features or example_batch()
    tensors = {k: tf.constant(v) for k, v in feats.items()}
    if mode == PREDICT:
        tensors.pop("targets")
    model_fn = t2t_model.T2TModel.make_estimator_model_fn(
        "transformer", hp, decode_hparams=decode_hparams, use_tpu=use_tpu, use_xla=use_xla)
    return model_fn(tensors, tensors.get("targets"), mode)


@pytest.mark.estimator
def test_estimator_spec_train():
    with tf.Graph().as_default():
        spec = _spec(TRAIN)
        assert isinstance(spec, tf.estimator.EstimatorSpec)
        assert spec.mode == TRAIN and spec.train_op is not None
        names = [s.op.name for s in _v1.get_collection(_v1.GraphKeys.SUMMARIES)]
        assert "losses/training" in names
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            first = sess.run(spec.loss)
            for _ in range(3):
                sess.run(spec.train_op)
            assert np.isfinite(first)
            assert sess.run(_v1.train.get_global_step()) == 3


def _xla_compiled(op):
    try:
        return op.get_attr("_XlaCompile")
    except ValueError:
        return False


@pytest.mark.estimator
def test_xla_compile_marks_forward_and_gradient_ops_and_gives_the_same_loss():
    """use_xla (T2T's --xla_compile): the model and its gradients are compiled by XLA."""
    losses = {}
    for use_xla in (False, True):
        with tf.Graph().as_default() as graph:
            _v1.set_random_seed(1)
            hp = small_transformer_hparams()
            hp.layer_prepostprocess_dropout = hp.attention_dropout = hp.relu_dropout = 0.0
            spec = _spec(TRAIN, hp=hp, use_xla=use_xla)
            compiled = [op for op in graph.get_operations() if _xla_compiled(op)]
            pad_remover_ops = [op for op in graph.get_operations() if "pad_reduce" in op.name]
            with session() as sess:
                sess.run(_v1.global_variables_initializer())
                losses[use_xla] = sess.run(spec.loss)
                for _ in range(3):
                    sess.run(spec.train_op)
                assert sess.run(_v1.train.get_global_step()) == 3
        if use_xla:
            types = {op.type for op in compiled}
            assert {"MatMul", "BatchMatMulV2", "Softmax"} <= types, types
            assert any(op.name.startswith("gradients/") for op in compiled)
            # Static-shape paths inside the scope: no pad remover's data-dependent gather.
            assert not pad_remover_ops
        else:
            assert not compiled and pad_remover_ops
    np.testing.assert_allclose(losses[True], losses[False], rtol=1e-4)


def test_xla_jit_scope_is_seen_by_layers():
    with tf.Graph().as_default():
        assert not common_layers.is_xla_compiled()
        with common_layers.xla_jit_scope():
            assert common_layers.is_xla_compiled()
        assert not common_layers.is_xla_compiled()


@pytest.mark.estimator
def test_estimator_specs_tpu():
    with tf.Graph().as_default():
        spec = _spec(TRAIN, use_tpu=True)
        assert isinstance(spec, _v1.estimator.tpu.TPUEstimatorSpec)
        assert spec.train_op is not None
        assert not _v1.get_collection(_v1.GraphKeys.SUMMARIES)  # removed for TPU
    with tf.Graph().as_default():
        spec = _spec(EVAL, use_tpu=True)
        assert isinstance(spec, _v1.estimator.tpu.TPUEstimatorSpec)
        metric_fn, tensors = spec.eval_metrics
        metric_ops = metric_fn(*tensors)  # what the TPU host runs
        assert "metrics-algorithmic_identity_binary40/targets/accuracy" in metric_ops


@pytest.mark.estimator
def test_estimator_spec_eval():
    with tf.Graph().as_default():
        spec = _spec(EVAL)
        assert spec.mode == EVAL
        assert spec.predictions["predictions"].shape.as_list()[-1] == 4
        assert "metrics-algorithmic_identity_binary40/targets/accuracy" in spec.eval_metric_ops
        assert all(name.startswith("metrics-algorithmic_identity_binary40/targets/")
                   for name in spec.eval_metric_ops)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            sess.run(_v1.local_variables_initializer())
            assert np.isfinite(sess.run(spec.loss))
    with tf.Graph().as_default():
        hp = small_transformer_hparams()
        model_fn = t2t_model.T2TModel.make_estimator_model_fn("transformer", hp)
        feats = {k: tf.constant(v) for k, v in example_batch().items()}
        hp.problem_hparams = model_hparams.test_problem_hparams(4, 4)
        with pytest.raises(ValueError, match="EVAL needs a problem attached"):
            model_fn(feats, feats["targets"], EVAL)


@pytest.mark.estimator
def test_estimator_spec_predict_greedy_and_beams():
    with tf.Graph().as_default():
        decode_hp = t2t_model.default_decode_hparams()
        decode_hp.beam_size = 1
        decode_hp.extra_length = 2
        spec = _spec(PREDICT, decode_hparams=decode_hp)
        assert spec.mode == PREDICT
        export = spec.export_outputs["serving_default"]
        assert isinstance(export, tf.estimator.export.PredictOutput)
        assert sorted(export.outputs) == ["outputs", "scores"]
        assert {"outputs", "scores", "inputs", "input_space_id"} <= set(spec.predictions)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            values = sess.run(spec.predictions)
        assert values["outputs"].shape[0] == 4
        assert values["outputs"].shape[1] <= example_batch()["inputs"].shape[1] + 2
        assert values["input_space_id"].shape == (4,)
    with tf.Graph().as_default():
        decode_hp = t2t_model.default_decode_hparams()
        decode_hp.beam_size, decode_hp.return_beams, decode_hp.extra_length = 2, True, 2
        spec = _spec(PREDICT, decode_hparams=decode_hp)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            values = sess.run(spec.predictions)
        assert values["outputs"].shape[:2] == (4, 2) and values["scores"].shape == (4, 2)


def test_predict_outputs_without_tf_estimator():
    """`T2TModel.predict_outputs`, which the Estimator-free predictor and the exporter run
    (TF 2.15 and 2.21): the same predictions and exports as the PREDICT spec."""
    hp = small_transformer_hparams()
    model_hparams.add_problem_hparams(hp, "algorithmic_identity_binary40")
    for beam_size, return_beams in ((1, False), (2, True)):
        with tf.Graph().as_default():
            decode_hp = t2t_model.default_decode_hparams()
            decode_hp.beam_size, decode_hp.return_beams = beam_size, return_beams
            decode_hp.extra_length = 2
            features = {k: tf.constant(v) for k, v in example_batch().items()
                        if k != "targets"}
            model = registry.model("transformer")(model_hparams.copy_hparams(hp), PREDICT,
                                                  decode_hparams=decode_hp)
            predictions, exports = model.predict_outputs(features)
            assert sorted(exports) == ["serving_default"]
            assert sorted(exports["serving_default"]) == ["outputs", "scores"]
            assert {"outputs", "scores", "inputs", "input_space_id"} <= set(predictions)
            with session() as sess:
                sess.run(_v1.global_variables_initializer())
                values = sess.run(predictions)
        if return_beams:
            assert values["outputs"].shape[:2] == (4, 2) and values["scores"].shape == (4, 2)
        else:
            assert values["outputs"].shape[0] == 4 and values["input_space_id"].shape == (4,)
            assert values["outputs"].shape[1] <= example_batch()["inputs"].shape[1] + 2


def test_default_decode_hparams_are_t2ts():
    hp = t2t_model.default_decode_hparams()
    assert (hp.beam_size, hp.alpha, hp.extra_length, hp.return_beams) == (4, 0.6, 100, False)
    assert isinstance(hp, HParams)


@pytest.mark.estimator
def test_estimator_train_evaluate_predict_and_warm_start(tmp_path):
    """The model_fn drives a real tf.estimator.Estimator through every mode."""
    feats = example_batch(num=8)
    hp = small_transformer_hparams()
    model_hparams.add_problem_hparams(hp, "algorithmic_identity_binary40")
    model_dir = str(tmp_path / "model")
    decode_hp = t2t_model.default_decode_hparams()
    decode_hp.beam_size, decode_hp.extra_length = 2, 2

    def input_fn():
        tensors = {k: tf.constant(v) for k, v in feats.items()}
        return tf.data.Dataset.from_tensors((tensors, tensors["targets"])).repeat()

    def predict_input_fn():
        return tf.data.Dataset.from_tensors({"inputs": tf.constant(feats["inputs"])})

    estimator = tf.estimator.Estimator(
        t2t_model.T2TModel.make_estimator_model_fn("transformer", hp,
                                                   decode_hparams=decode_hp),
        model_dir=model_dir,
        config=tf.estimator.RunConfig(session_config=session_config()))
    estimator.train(input_fn, steps=2)
    results = estimator.evaluate(input_fn, steps=1)
    assert results["global_step"] == 2 and np.isfinite(results["loss"])
    accuracy = results["metrics-algorithmic_identity_binary40/targets/accuracy"]
    assert 0.0 <= accuracy <= 1.0
    prediction = next(estimator.predict(predict_input_fn))
    assert prediction["outputs"].ndim == 1 and prediction["outputs"].dtype == np.int32
    assert np.isfinite(prediction["scores"])

    # Warm start: a fresh graph takes every variable found in the checkpoint.
    checkpoint = tf.train.latest_checkpoint(model_dir)
    with tf.Graph().as_default():
        model = registry.model("transformer")(model_hparams.copy_hparams(hp), TRAIN)
        model({k: tf.constant(v) for k, v in feats.items()})
        model.initialize_from_ckpt(model_dir)
        variable = [v for v in _v1.trainable_variables() if "encoder" in v.name][0]
        value = run(variable)
    np.testing.assert_array_equal(value, tf.train.load_variable(checkpoint,
                                                                variable.op.name))


def test_tpu_host_call_writes_the_scalar_summaries(tmp_path):
    from tensorflow.python.ops import summary_ops_v2  # writer initialisation in graph mode

    with tf.Graph().as_default():
        _v1.train.get_or_create_global_step()
        _v1.summary.scalar("loss", tf.constant(2.5))
        _v1.summary.histogram("ignored", tf.constant([1.0]))  # only scalars travel
        host_call_fn, tensors = t2t_model.create_host_call(str(tmp_path))
        assert sorted(tensors) == ["ScalarSummaryloss", "global_step"]
        summary_ops = host_call_fn(**tensors)
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            sess.run(summary_ops_v2.summary_writer_initializer_op())
            sess.run(summary_ops)
    events = [str(p) for p in tmp_path.iterdir()]
    values = [(event.step, value.tag, float(tf.make_ndarray(value.tensor)))
              for event in _v1.train.summary_iterator(events[0])
              for value in event.summary.value]
    assert values == [(0, "loss", 2.5)]
    with tf.Graph().as_default():
        assert t2t_model.create_host_call(str(tmp_path)) is None  # no summaries, no call
