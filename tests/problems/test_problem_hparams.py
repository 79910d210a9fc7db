"""`t2t.problems.problem_hparams`, used as T2T's model tests use it (lstm_test,
transformer_test): problem hparams for a model body, without a dataset."""
import numpy as np
import tensorflow as tf

from t2t.core.modes import ModeKeys
from t2t.models import lstm, transformer
from t2t.problems import problem_hparams


def test_test_problem_hparams_has_symbol_features_and_vocab_sizes():
    p_hparams = problem_hparams.test_problem_hparams(9, 11, lstm.lstm_seq2seq())
    assert p_hparams.modality == {"inputs": "symbol", "targets": "symbol"}
    assert p_hparams.vocab_size == {"inputs": 9, "targets": 11}
    assert p_hparams.loss_multiplier == 1.0 and not p_hparams.was_reversed
    assert isinstance(problem_hparams.TestProblem(3, 4), problem_hparams.problem.Problem)


def test_models_build_on_them_as_in_t2t_tests():
    vocab_size = 9
    x = np.random.RandomState(0).randint(1, high=vocab_size, size=(3, 5, 1, 1))
    y = np.random.RandomState(1).randint(1, high=vocab_size, size=(3, 6, 1, 1))
    graph = tf.Graph()
    with graph.as_default():
        hparams = lstm.lstm_seq2seq()
        p_hparams = problem_hparams.test_problem_hparams(vocab_size, vocab_size, hparams)
        features = {"inputs": tf.constant(x, dtype=tf.int32),
                    "targets": tf.constant(y, dtype=tf.int32)}
        model = lstm.LSTMSeq2seq(hparams, ModeKeys.TRAIN, p_hparams)
        logits, _ = model(features)
        # transformer_test's get_model: a decoder-only model by deleting "inputs".
        t_hparams = transformer.transformer_tiny()
        t_hparams.hidden_size, t_hparams.filter_size, t_hparams.num_heads = 8, 32, 1
        t_p_hparams = problem_hparams.test_problem_hparams(10, 10, t_hparams)
        del t_p_hparams.modality["inputs"]
        t_hparams.problem_hparams = t_p_hparams
        t_model = transformer.Transformer(t_hparams, ModeKeys.TRAIN, t_p_hparams)
        t_logits, _ = t_model({"targets": tf.constant(y, dtype=tf.int32)})
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            values, t_values = session.run([logits, t_logits])
    assert values.shape == (3, 6, 1, 1, vocab_size)
    assert t_values.shape == (3, 6, 1, 1, 10)
