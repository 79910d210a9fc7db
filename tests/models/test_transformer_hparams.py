"""The Transformer's hparams sets (T2T's values) and TransformerScorer."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import registry
from t2t.model import model_hparams
from t2t.models import transformer, transformer_fast_decode, transformer_hparams

from t2t_model_testing import EVAL, PREDICT, TRAIN, batch_features, copy_examples, session

_v1 = tf.compat.v1
SETS = sorted(name for name in dir(transformer_hparams)
              if name.startswith("transformer_") and not name.endswith("_range"))


def shrink(hp, hidden=16, layers=1):
    hp.hidden_size, hp.filter_size, hp.num_heads = hidden, 2 * hidden, 2
    hp.num_hidden_layers = layers
    return hp


def test_every_set_is_registered_and_exported_under_t2ts_module_path():
    assert len(SETS) >= 70
    for name in SETS:
        assert registry.hparams(name) is not None, name
        assert getattr(transformer, name) is getattr(transformer_hparams, name)
    for name in ("transformer_base_range", "transformer_tpu_range", "transformer_tiny_tpu_range"):
        assert name in registry.list_ranged_hparams()
    assert transformer.fast_decode_tpu is transformer_fast_decode.fast_decode_tpu
    assert transformer.update_hparams_for_tpu is transformer_hparams.update_hparams_for_tpu


def test_sets_set_no_hparam_that_transformer_base_lacks():
    # A misspelt name would be added silently and ignored; T2T's one dead name is allowed.
    known = set(registry.hparams("transformer_base").values()) | {
        "shared_source_target_embedding",
        # transformer_supervised_attention's own (read by Transformer.body).
        "expected_attention_loss_type", "expected_attention_loss_multiplier"}
    for name in SETS:
        extra = set(registry.hparams(name).values()) - known
        assert not extra, "%s sets %s" % (name, sorted(extra))


@pytest.mark.parametrize("name,values", [
    ("transformer_l4", {"num_hidden_layers": 4, "hidden_size": 512}),
    ("transformer_h16", {"num_heads": 16}),
    ("transformer_k256", {"attention_key_channels": 256}),
    ("transformer_ls0", {"label_smoothing": 0.0}),
    ("transformer_big_enfr", {"hidden_size": 1024, "filter_size": 8192, "num_heads": 16,
                              "shared_embedding_and_softmax_weights": False}),
    ("transformer_big_enfr_tpu", {"num_heads": 8, "optimizer": "Adafactor", "max_length": 64,
                                  "batch_size": 2048}),
    ("transformer_relative", {"pos": None, "self_attention_type": "dot_product_relative",
                              "max_relative_position": 20, "hidden_size": 512}),
    ("transformer_relative_tiny", {"hidden_size": 128, "num_hidden_layers": 2, "num_heads": 4,
                                   "max_relative_position": 20}),
    ("transformer_relative_big", {"hidden_size": 1024, "pos": None}),
    ("transformer_prepend", {"prepend_mode": "prepend_inputs_masked_attention",
                             "max_length": 0, "layer_postprocess_sequence": "da"}),
    ("transformer_prepend_v1", {"layer_postprocess_sequence": "dan"}),
    ("transformer_base_multistep8", {"optimizer": "multistep_adam",
                                     "optimizer_multistep_accumulate_steps": 8}),
    ("transformer_cubbitt", {"batch_size": 2900, "max_length": 150, "optimizer": "Adafactor",
                             "learning_rate_warmup_steps": 8000}),
    ("transformer_parsing_base", {"hidden_size": 1024, "attention_dropout": 0.2,
                                  "learning_rate": 0.05, "max_length": 512}),
    ("transformer_clean", {"label_smoothing": 0.0, "relu_dropout": 0.0, "max_length": 0}),
    ("transformer_tall", {"hidden_size": 768, "num_hidden_layers": 12, "max_length": 1024,
                          "multiproblem_mixing_schedule": "pretrain", "clip_grad_norm": 1.0}),
    ("transformer_tall_finetune_tied", {"learning_rate_constant": 5e-5,
                                        "optimizer": "true_adam",
                                        "multiproblem_max_input_length": 750}),
    ("transformer_tall_train_uniencdec", {"unidirectional_encoder": True,
                                          "learning_rate_decay_steps": 150000,
                                          "learning_rate_warmup_steps": 8000}),
    ("transformer_tall_pretrain_lm", {"optimizer": "adam_w", "weight_decay": 0.01 * 2e-4,
                                      "optimizer_adam_beta2": 0.999}),
    ("transformer_tall_pretrain_lm_tpu", {"optimizer": "adam_w", "batch_size": 8,
                                          "max_length": 1024}),
    ("transformer_lm_tpu_0", {"num_heads": 4, "batch_size": 4096, "hidden_size": 1024,
                              "layer_prepostprocess_dropout": 0.1}),
    ("transformer_lm_tpu_1", {"hidden_size": 2048, "filter_size": 8192}),
    ("transformer_wikitext103_l4k_v0", {"max_length": 4096, "num_hidden_layers": 8,
                                        "num_heads": 4}),
    ("transformer_mlperf_tpu", {"mlperf_mode": True, "hidden_size": 1024, "batch_size": 2048}),
    ("transformer_tpu_with_conv", {"ffn_layer": "conv_relu_conv", "num_heads": 4}),
    ("transformer_tpu_1b", {"hidden_size": 2048, "weight_dtype": "bfloat16",
                            "batch_size": 1024}),
    ("transformer_timeseries_tpu", {"batch_size": 256, "optimizer": "Adafactor"}),
    ("transformer_parameter_attention_a", {"ffn_layer": "parameter_attention",
                                           "filter_size": 1536}),
    ("transformer_parameter_attention_b", {"parameter_attention_key_channels": 1024,
                                           "num_heads": 16, "filter_size": 512}),
    ("transformer_supervised_attention", {"expected_attention_loss_type": "kl_divergence",
                                          "expected_attention_loss_multiplier": 1.0}),
])
def test_sets_have_t2ts_values(name, values):
    hp = registry.hparams(name)
    assert {key: hp.get(key) for key in values} == values


@pytest.mark.parametrize("name", ["transformer_relative_tiny", "transformer_prepend",
                                  "transformer_tpu_with_conv", "transformer_clean",
                                  "transformer_parameter_attention_a"])
def test_sets_with_their_own_graph_train(name):
    feats = batch_features(copy_examples(np.random.RandomState(0), 3, 4))
    with tf.Graph().as_default():
        hp = shrink(registry.hparams(name))
        model = transformer.Transformer(hp, TRAIN, model_hparams.test_problem_hparams(4, 4))
        logits, losses = model({k: tf.constant(v) for k, v in feats.items()})
        assert logits.shape.as_list() == [3, feats["targets"].shape[1], 1, 1, 4]
        if name == "transformer_parameter_attention_a":
            shapes = {v.name: v.shape.as_list() for v in _v1.global_variables()}
            key = ("transformer/body/encoder/layer_0/ffn/parameter_attention/k:0")
            assert shapes[key] == [2, 32, 8], shapes  # heads, memory rows (filter), depth
        if name == "transformer_relative_tiny":
            names = [v.name for v in _v1.global_variables()]
            assert any("self_attention/multihead_attention/dot_product_attention_relative/"
                       "relative_positions_keys/embeddings" in n for n in names), names
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            assert np.isfinite(sess.run(losses["training"]))


def test_relative_fast_decoding_equals_slow_decoding():
    feats = batch_features(copy_examples(np.random.RandomState(1), 2, 5))
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(3)
        hp = shrink(registry.hparams("transformer_relative_tiny"), layers=2)
        hp.max_relative_position = 3
        model = transformer.Transformer(hp, PREDICT, model_hparams.test_problem_hparams(4, 4))
        inputs = {"inputs": tf.constant(feats["inputs"])}
        fast = model._fast_decode(dict(inputs), decode_length=4)["outputs"]
        slow = model.slow_greedy_infer(dict(inputs), decode_length=4)["outputs"]
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            fast, slow = sess.run([fast, slow])
    np.testing.assert_array_equal(fast, slow[:, :fast.shape[1]])


def test_scorer_scores_are_the_targets_log_probabilities_and_ignore_padding():
    rng = np.random.RandomState(2)
    examples = copy_examples(rng, 3, 4, min_len=2)
    feats = batch_features(examples, targets_length=7)  # padded past every target
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(1)
        hp = shrink(registry.hparams("transformer_tiny"))
        p_hp = model_hparams.test_problem_hparams(4, 4)
        # A Transformer predicting every position creates the variables the scorer reuses.
        reference_hp = shrink(registry.hparams("transformer_tiny"))
        reference_hp.force_full_predict = True
        reference = transformer.Transformer(reference_hp, PREDICT, p_hp)
        logits, _ = reference({k: tf.constant(v) for k, v in feats.items()})
        scorer = registry.model("transformer_scorer")(hp, PREDICT, p_hp)
        scored = scorer.infer({k: tf.constant(v) for k, v in feats.items()})
        unpadded = scorer.infer({"inputs": tf.constant(feats["inputs"][:1]),
                                 "targets": tf.constant(feats["targets"][:1, :len(examples[0][1])])})
        names = {v.name for v in _v1.global_variables()}
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            logits, scored, unpadded = sess.run([logits, scored, unpadded])
    assert all(name.startswith("transformer/") for name in names)
    log_probs = logits[:, :, 0, 0] - np.log(np.exp(logits[:, :, 0, 0]).sum(-1, keepdims=True))
    targets = feats["targets"][:, :, 0, 0]
    expected = [sum(log_probs[b, t, targets[b, t]] for t in range(targets.shape[1])
                    if targets[b, t]) for b in range(3)]
    np.testing.assert_allclose(scored["scores"], expected, rtol=1e-5)
    np.testing.assert_array_equal(scored["outputs"], targets)
    np.testing.assert_allclose(unpadded["scores"][0], scored["scores"][0], rtol=1e-5)


def test_scorer_needs_targets():
    with tf.Graph().as_default():
        hp = shrink(registry.hparams("transformer_tiny"))
        scorer = transformer.TransformerScorer(hp, PREDICT,
                                               model_hparams.test_problem_hparams(4, 4))
        with pytest.raises(ValueError, match="pass features\\['targets'\\]"):
            scorer.infer({"inputs": tf.zeros([1, 3, 1, 1], tf.int32)})


def test_supervised_attention_pulls_the_encoder_decoder_attention_to_the_expected():
    feats = batch_features(copy_examples(np.random.RandomState(5), 2, 4, min_len=4))
    length_in, length_out = feats["inputs"].shape[1], feats["targets"].shape[1]
    with tf.Graph().as_default():
        hp = shrink(registry.hparams("transformer_supervised_attention"), layers=2)
        model = transformer.Transformer(hp, TRAIN, model_hparams.test_problem_hparams(4, 4))
        model.set_mode(EVAL)  # no dropout: the same attention each run
        expected = _v1.placeholder(tf.float32, [2, length_out, length_in])
        features = {k: tf.constant(v) for k, v in feats.items()}
        features["expected_attentions"] = expected
        _, losses = model(features)
        logits = [t for key, t in model.attention_weights.items()
                  if "encdec_attention" in key and key.endswith("/logits")]
        assert len(logits) == 2  # one per decoder layer
        mean_logits = tf.reduce_mean(tf.stack(logits), [0, 2])
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            own = sess.run(mean_logits, {expected: np.zeros([2, length_out, length_in])})
            at_own = sess.run(losses["attention_loss"], {expected: own})
            elsewhere = sess.run(losses["attention_loss"],
                                 {expected: np.random.RandomState(0).normal(
                                     0, 5, own.shape).astype(np.float32)})
    assert abs(at_own) < 1e-5 and elsewhere > 0.1
