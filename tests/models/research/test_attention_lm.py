"""AttentionLM: hparams sets, T2T's variable names, the decoder's biases (prepend_mode),
learning and slow greedy/beam decoding, and training on the native and Estimator backends."""
import os

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import backend_choice
from t2t.core import registry
from t2t.datagen import datagen
from t2t.model import model_hparams
from t2t.models.research import attention_lm
from t2t.problems import problem as problem_lib
from t2t.problems import text_problems
from t2t.training import run_config, trainer_lib
from t2t.training.native import experiment as native_experiment

from t2t_model_testing import (EOS, PREDICT, TRAIN, batch_features, copy_examples, pad_ids,
    placeholders, session)

_v1 = tf.compat.v1
SETS = ["attention_lm_base", "attention_lm_small", "attention_lm_translation",
        "attention_lm_translation_l12", "attention_lm_translation_full_attention"]


def tiny(name="attention_lm_base", layers=2, **values):
    """A registered set at test size: d=32, filter 64, 4 heads, no dropout."""
    hp = registry.hparams(name)
    hp.hidden_size, hp.filter_size, hp.num_heads, hp.num_hidden_layers = 32, 64, 4, layers
    hp.layer_prepostprocess_dropout = 0.0
    for key, value in values.items():
        setattr(hp, key, value)
    return hp


def prepend(examples):
    """T2T's prepend_mode rows: targets "inputs 0 targets" (what preprocessing makes)."""
    return [(inputs, inputs + [0] + targets) for inputs, targets in examples]


# ------------------------------------------------------------------ hparams
def test_hparams_sets_have_t2t_values():
    base = registry.hparams("attention_lm_base")
    assert (base.hidden_size, base.filter_size, base.num_heads, base.num_hidden_layers) == (
        1024, 4096, 8, 6)
    assert (base.batch_size, base.max_length, base.learning_rate_decay_scheme,
            base.learning_rate, base.learning_rate_warmup_steps) == (8192, 256, "noam", 0.1, 2000)
    assert (base.initializer, base.initializer_gain, base.clip_grad_norm) == (
        "uniform_unit_scaling", 1.0, 0.0)
    assert (base.optimizer_adam_beta2, base.optimizer_adam_epsilon) == (0.98, 1e-9)
    assert (base.pos, base.prepend_mode, base.label_smoothing) == ("timing", "none", 0.0)
    assert (base.layer_preprocess_sequence, base.layer_postprocess_sequence) == ("none", "dan")
    assert base.shared_embedding_and_softmax_weights is False
    small = registry.hparams("attention_lm_small")
    assert (small.num_hidden_layers, small.hidden_size, small.filter_size,
            small.layer_prepostprocess_dropout) == (4, 512, 2048, 0.5)
    translation = registry.hparams("attention_lm_translation")
    assert (translation.layer_preprocess_sequence, translation.layer_postprocess_sequence,
            translation.prepend_mode, translation.learning_rate, translation.max_length) == (
        "n", "da", "prepend_inputs_masked_attention", 0.4, 512)
    assert translation.shared_embedding_and_softmax_weights is True
    l12 = registry.hparams("attention_lm_translation_l12")
    assert (l12.num_hidden_layers, l12.batch_size) == (12, 4096)
    full = registry.hparams("attention_lm_translation_full_attention")
    assert full.prepend_mode == "prepend_inputs_full_attention"
    assert set(SETS) <= set(registry.list_hparams())
    assert "attention_lm" in registry.list_models()


@pytest.mark.parametrize("name", SETS)
def test_every_hparams_set_builds_and_gives_a_finite_loss(name):
    hp = tiny(name, layers=1)
    rng = np.random.RandomState(0)
    if hp.prepend_mode == "none":  # a language model
        p_hp = model_hparams.test_problem_hparams(None, 5)
        feats = {"targets": batch_features(copy_examples(rng, 3, 4))["targets"]}
    else:
        p_hp = model_hparams.test_problem_hparams(5, 5)
        feats = batch_features(prepend(copy_examples(rng, 3, 4)))
    with tf.Graph().as_default():
        logits, losses = attention_lm.AttentionLM(hp, TRAIN, p_hp)(
            {k: tf.constant(v) for k, v in feats.items()})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            values = sess.run({"logits": logits, "loss": losses["training"]})
    assert values["logits"].shape == feats["targets"].shape + (5,)
    assert np.isfinite(values["loss"]) and values["loss"] > 0


# ------------------------------------------------------------------ T2T's variable names
def _layer_names(layer, norm_scopes):
    prefix = "attention_lm/body/decoder/layer_%d/" % layer
    names = [prefix + "self_attention/multihead_attention/%s/kernel" % t
             for t in ("q", "k", "v", "output_transform")]
    names += [prefix + "ffn/conv_hidden_relu/conv%d_single/%s" % (c, v)
              for c in (1, 2) for v in ("kernel", "bias")]
    names += [prefix + "%s/%s/layer_norm/layer_norm_%s" % (block, scope, v)
              for block in ("self_attention", "ffn") for scope in norm_scopes
              for v in ("scale", "bias")]
    return names


def _variable_names(hp, p_hp):
    feats = batch_features(copy_examples(np.random.RandomState(1), 2, 3))
    if "inputs" not in p_hp.modality:
        feats.pop("inputs")
    with tf.Graph().as_default():
        attention_lm.AttentionLM(hp, TRAIN, p_hp)({k: tf.constant(v) for k, v in feats.items()})
        return {v.op.name: v.shape.as_list() for v in _v1.global_variables()}


def test_variables_have_t2t_names_and_shapes():
    # attention_lm_base: postprocess "dan" (T2T's layer_postprocess scope), no final norm.
    names = _variable_names(tiny(), model_hparams.test_problem_hparams(None, 6))
    expected = _layer_names(0, ["layer_postprocess"]) + _layer_names(1, ["layer_postprocess"])
    expected += ["attention_lm/symbol_modality_6_32/target_emb/weights_0",
                 "attention_lm/symbol_modality_6_32/softmax/weights_0"]
    assert sorted(names) == sorted(expected)
    assert names["attention_lm/body/decoder/layer_1/ffn/conv_hidden_relu/conv1_single/"
                 "kernel"] == [1, 1, 32, 64]
    # attention_lm_translation: preprocess "n" in each block and after the stack; one
    # embedding shared by inputs, targets and the softmax.
    names = _variable_names(tiny("attention_lm_translation", layers=1),
                            model_hparams.test_problem_hparams(6, 6))
    expected = _layer_names(0, ["layer_prepostprocess"]) + [
        "attention_lm/body/decoder/layer_prepostprocess/layer_norm/layer_norm_scale",
        "attention_lm/body/decoder/layer_prepostprocess/layer_norm/layer_norm_bias",
        "attention_lm/symbol_modality_6_32/shared/weights_0"]
    assert sorted(names) == sorted(expected)


# ------------------------------------------------------------------ decoder preparation
def test_prepare_decoder_shifts_adds_timing_and_builds_each_bias():
    # Two rows "inputs 0 targets": [5 6 | 0 | 7 8] and [5 | 0 | 7 8 9].
    ids = np.array([[5, 6, 0, 7, 8], [5, 0, 7, 8, 9]])
    emb = np.random.RandomState(2).normal(size=[10, 4]).astype(np.float32)
    emb[0] = 0.0  # symbol bottoms embed PAD (0) as zeros
    with tf.Graph().as_default():
        targets = tf.constant(emb[ids])
        masked = attention_lm.attention_lm_prepare_decoder(targets, tiny(pos="none"))
        timed = attention_lm.attention_lm_prepare_decoder(targets, tiny())
        full = attention_lm.attention_lm_prepare_decoder(
            targets, tiny(prepend_mode="prepend_inputs_full_attention"))
        with session() as sess:
            (shifted, causal), (timed_input, _), (_, full_bias) = sess.run([masked, timed, full])
    np.testing.assert_allclose(shifted[:, 0], 0.0)
    np.testing.assert_allclose(shifted[:, 1:], emb[ids][:, :-1])
    assert causal.shape == (1, 1, 5, 5)
    np.testing.assert_array_equal(causal[0, 0] == 0, np.tri(5, dtype=bool))
    # The timing signal: sin(0) = 0 and cos(0) = 1 at position 0.
    np.testing.assert_allclose(timed_input[:, 0], [[0, 0, 1, 1]] * 2, atol=1e-6)
    # Full attention over the prefix up to the separator, causal after it.
    assert full_bias.shape == (2, 1, 5, 5)
    allowed = full_bias[:, 0] == 0
    np.testing.assert_array_equal(allowed[0], [[1, 1, 1, 0, 0], [1, 1, 1, 0, 0],
                                               [1, 1, 1, 0, 0], [1, 1, 1, 1, 0],
                                               [1, 1, 1, 1, 1]])
    np.testing.assert_array_equal(allowed[1], [[1, 1, 0, 0, 0], [1, 1, 0, 0, 0],
                                               [1, 1, 1, 0, 0], [1, 1, 1, 1, 0],
                                               [1, 1, 1, 1, 1]])
    with pytest.raises(ValueError, match="unsupported hparams.pos 'emb' for attention_lm"):
        attention_lm.attention_lm_prepare_decoder(tf.zeros([1, 2, 4]), tiny(pos="emb"))


# ------------------------------------------------------------------ learning and decoding
def _train_then_infer(hp, p_hp, batches, steps, infer_features, lr=0.02):
    """Train with Adam in a graph, then run infer fetches (built on a PREDICT model
    sharing the weights) on the given features. Returns (losses, {name: results})."""
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(1)
        feeds = placeholders(sorted(batches[0]), batches)
        _, losses = attention_lm.AttentionLM(hp, TRAIN, p_hp)(feeds)
        train_op = _v1.train.AdamOptimizer(lr).minimize(losses["training"])
        predict = attention_lm.AttentionLM(hp, PREDICT, p_hp)
        constants = {k: tf.constant(v) for k, v in infer_features.items()}
        fetches = {"greedy": predict.infer(constants, decode_length=4),
                   "beam": predict.infer(constants, decode_length=4, beam_size=2, top_beams=2)}
        values = []
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            for step in range(steps):
                batch = batches[step % len(batches)]
                value, _ = sess.run([losses["training"], train_op],
                                    {feeds[k]: v for k, v in batch.items()})
                values.append(value)
            return values, sess.run(fetches)


def counting(rng, num):
    """Rows s, s+1, s+2, s+3, EOS (s in 2..5): each id after the first is learnable."""
    return [list(range(start, start + 4)) + [EOS] for start in rng.randint(2, 6, size=num)]


def test_language_model_learns_counting_and_continues_prompts():
    rng = np.random.RandomState(3)
    batches = [{"targets": pad_ids(counting(rng, 32))} for _ in range(4)]
    prompts = np.array([[2], [3], [4]], dtype=np.int32)
    losses, decoded = _train_then_infer(
        tiny(), model_hparams.test_problem_hparams(None, 10), batches, 120,
        {"inputs": prompts})
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5]), losses
    greedy, beam = decoded["greedy"], decoded["beam"]
    # The prompt is continued (and left out): 4 new ids per row, counting up to EOS.
    expected = np.concatenate([prompts + [[1, 2, 3]], [[EOS]] * 3], axis=1)
    assert greedy["scores"].shape == (3,)
    np.testing.assert_array_equal(greedy["outputs"], expected)
    assert beam["outputs"].shape[:2] == (3, 2) and beam["scores"].shape == (3, 2)
    assert np.all(beam["scores"][:, 0] >= beam["scores"][:, 1])
    np.testing.assert_array_equal(beam["outputs"][:, 0], expected)


def _until_eos(ids):
    ids = [int(i) for i in ids]
    return ids[:ids.index(EOS) + 1] if EOS in ids else ids


def test_translation_set_copies_through_prepended_inputs():
    """attention_lm_translation on copying: trained on "inputs 0 targets", decoding
    continues partial_targets "inputs 0" (what PREDICT preprocessing gives)."""
    rng = np.random.RandomState(4)
    batches = [batch_features(prepend(copy_examples(rng, 32, 3))) for _ in range(4)]
    test = copy_examples(np.random.RandomState(5), 6, 3)
    inputs = pad_ids([row[0] for row in test])
    partial = pad_ids([row[0] + [0] for row in test])
    # Rows of one length each, so "inputs 0" has no padding inside.
    same = [i for i, row in enumerate(test) if len(row[0]) == len(test[0][0])]
    inputs, partial = inputs[same], partial[same, :len(test[0][0]) + 1]
    hp = tiny("attention_lm_translation", label_smoothing=0.0)
    losses, decoded = _train_then_infer(
        hp, model_hparams.test_problem_hparams(4, 4), batches, 150,
        {"inputs": inputs, "partial_targets": partial[:, :, 0, 0]}, lr=0.01)
    assert np.mean(losses[-5:]) < 0.7 * np.mean(losses[:5]), losses
    greedy = decoded["greedy"]["outputs"]
    assert greedy.shape[0] == len(same) and greedy.shape[1] <= 4
    copied = [_until_eos(out) == _until_eos(row) for out, row in zip(greedy, inputs[:, :, 0, 0])]
    assert sum(copied) >= len(same) - 1, (inputs[:, :, 0, 0], greedy)
    assert decoded["beam"]["outputs"].shape[:2] == (len(same), 2)


# ------------------------------------------------------------------ backends
PROBLEM = "attention_lm_test_alphabet"
SEQ2SEQ_PROBLEM = "algorithmic_reverse_binary40_test"  # its batches under prepend_mode


@registry.register_problem(PROBLEM)
class AlphabetLm(text_problems.Text2SelfProblem):
    """Runs of the alphabet ("cdefg"), character vocabulary: a tiny language model."""

    vocab_type = text_problems.VocabType.CHARACTER
    is_generate_per_split = False
    dataset_splits = [{"split": problem_lib.DatasetSplit.TRAIN, "shards": 1},
                      {"split": problem_lib.DatasetSplit.EVAL, "shards": 1}]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        letters = "abcdefghij"
        for i in range(200):
            start = i % 6
            yield {"targets": letters[start:start + 2 + i % 4]}


OVERRIDES = ("hidden_size=32,filter_size=64,num_heads=4,num_hidden_layers=1,batch_size=256,"
             "learning_rate_schedule=constant,learning_rate_constant=0.02,"
             "layer_prepostprocess_dropout=0.0")
STEPS = 30


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("data"))
    datagen.generate_problems([PROBLEM, SEQ2SEQ_PROBLEM], path,
                              str(tmp_path_factory.mktemp("tmp")), random_seed=1,
                              num_concurrent_processes=1)
    return path


def _train(backend, model_dir, data_dir, hparams_set="attention_lm_base", problem=PROBLEM):
    hparams = trainer_lib.create_hparams(hparams_set, OVERRIDES, data_dir=data_dir,
                                         problem_name=problem)
    run_spec = run_config.RunConfigSpec(model_dir=model_dir, save_checkpoints_steps=STEPS,
                                        random_seed=1, save_summary_steps=1,
                                        log_step_count_steps=STEPS)
    spec = trainer_lib.ExperimentSpec("attention_lm", problem, data_dir, train_steps=STEPS,
                                      eval_steps=1, schedule="train")
    if backend == "native":
        native_experiment.native_experiment(run_spec, hparams, spec).train()
    else:
        trainer_lib.experiment_from_spec(run_config.run_config_from_spec(run_spec), hparams,
                                         spec).train()
    losses = {}
    for path in tf.io.gfile.glob(os.path.join(model_dir, "events.out.tfevents.*")):
        for event in _v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == "loss":
                    losses[event.step] = (value.simple_value if value.HasField("simple_value")
                                          else float(tf.make_ndarray(value.tensor)))
    return [losses[step] for step in sorted(losses)], dict(tf.train.list_variables(model_dir))


BACKENDS = ["native"] + (["estimator"] if backend_choice.estimator_available() else [])


@pytest.fixture(scope="module")
def runs(data_dir, tmp_path_factory):
    return {backend: _train(backend, str(tmp_path_factory.mktemp(backend)), data_dir)
            for backend in BACKENDS}


@pytest.mark.parametrize("backend", BACKENDS)
def test_backends_train_with_falling_loss_and_t2t_names(runs, backend):
    losses, variables = runs[backend]
    assert len(losses) >= STEPS - 1, losses
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) - 0.5, losses
    assert variables["attention_lm/body/decoder/layer_0/ffn/conv_hidden_relu/conv1_single/"
                     "kernel"] == [1, 1, 32, 64]
    assert "attention_lm/symbol_modality_258_32/target_emb/weights_0" in variables
    # Both backends write the same checkpoint: names, shapes, optimizer slots.
    assert variables == runs[BACKENDS[0]][1]


def test_problem_input_pipeline_prepends_inputs_for_the_translation_set(data_dir):
    """What the in-graph translation test trains on: a problem's batches under
    attention_lm_translation hold "inputs 0 targets" as targets."""
    hparams = trainer_lib.create_hparams("attention_lm_translation", OVERRIDES,
                                         data_dir=data_dir, problem_name=SEQ2SEQ_PROBLEM)
    features = next(iter(hparams.problem.input_fn(TRAIN, hparams, prevent_repeat=True)))
    features = features[0] if isinstance(features, tuple) else features
    inputs = features["inputs"].numpy()[..., 0, 0]
    targets = features["targets"].numpy()[..., 0, 0]
    for row_inputs, row_targets in zip(inputs, targets):
        row_inputs = list(row_inputs[:list(row_inputs).index(EOS) + 1])
        reverse = row_inputs[:-1][::-1] + [EOS]  # the problem's targets: the bits reversed
        np.testing.assert_array_equal(row_targets[:2 * len(row_inputs) + 1],
                                      row_inputs + [0] + reverse)
