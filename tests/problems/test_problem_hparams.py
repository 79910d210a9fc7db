"""`t2t.problems.problem_hparams`, used as T2T's model tests use it (lstm_test,
transformer_test): problem hparams for a model body, without a dataset; and its two
hparams-only parsing problems (vocabularies and records from elsewhere)."""
import numpy as np
import pytest
import tensorflow as tf

from t2t.core import errors, registry
from t2t.core.modes import ModeKeys
from t2t.data import generator_utils
from t2t.encoders import text_encoder
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


# ----------------------------------------------------------------------------
# T2T's hparams-only Penn Treebank parsing problems
# ----------------------------------------------------------------------------
SENTENCES = ["the cat sat", "a dog ran"]
PARSES = ["S NP DT NN /NP VP VBD /VP /S", "S NP DT NN /NP VP VBD /VP /S"]


def store_vocab(path, texts):
    vocab = text_encoder.SubwordTextEncoder.build_from_generator(
        texts, 20, reserved_tokens=text_encoder.RESERVED_TOKENS)
    vocab.store_to_file(str(path))
    return vocab


def model_hparams_with(data_dir):
    hp = lstm.lstm_seq2seq()
    hp.add_hparam("data_dir", str(data_dir))
    return hp


def test_ptb8k_reads_one_shared_vocab_with_t2ts_hparams(tmp_path):
    vocab = store_vocab(tmp_path / "vocab.endefr.8192", SENTENCES + PARSES)
    problem = registry.problem("parsing_english_ptb8k")
    assert isinstance(problem, problem_hparams.ParsingEnglishPtb8k)
    hp = problem.get_hparams(model_hparams_with(tmp_path))
    assert hp.modality == {"inputs": "symbol", "targets": "symbol"}
    assert hp.vocab_size == {"inputs": vocab.vocab_size, "targets": vocab.vocab_size}
    assert (hp.batch_size_multiplier, hp.loss_multiplier) == (256, 2.0)
    assert (hp.input_space_id, hp.target_space_id) == (3, 15)
    encoders = problem.get_feature_encoders()
    assert encoders["inputs"] is encoders["targets"]
    assert encoders["targets"].decode(encoders["targets"].encode(PARSES[0])) == PARSES[0]


def test_ptb16k_reads_its_source_and_target_vocabs_and_its_records(tmp_path):
    source = store_vocab(tmp_path / "wsj_source.vocab.512", SENTENCES)
    target = store_vocab(tmp_path / "wsj_target.vocab.16384", PARSES)
    problem = registry.problem("parsing_english_ptb16k")
    hp = problem.get_hparams(model_hparams_with(tmp_path))
    assert hp.vocab_size == {"inputs": source.vocab_size, "targets": target.vocab_size}
    assert (hp.batch_size_multiplier, hp.loss_multiplier) == (1, 1.0)  # T2T's defaults
    assert (hp.input_space_id, hp.target_space_id) == (3, 15)
    # No generator (as in T2T); records made elsewhere, under the problem's name, are read.
    examples = [{"inputs": source.encode(s) + [1], "targets": target.encode(p) + [1]}
                for s, p in zip(SENTENCES, PARSES)]
    generator_utils.generate_files(
        iter(examples), generator_utils.dev_data_filenames(problem.name, str(tmp_path), 1))
    dataset = problem.dataset(ModeKeys.EVAL, data_dir=str(tmp_path), shuffle_files=False)
    decoded = sorted((source.decode(ex["inputs"].numpy()[:-1].tolist()),
                      target.decode(ex["targets"].numpy()[:-1].tolist())) for ex in dataset)
    assert decoded == sorted(zip(SENTENCES, PARSES))


def test_parsing_problems_name_a_missing_vocab_and_the_fix(tmp_path):
    with pytest.raises(errors.UserError, match="wsj_source.vocab.512 of problem "
                                               "parsing_english_ptb16k is missing"):
        registry.problem("parsing_english_ptb16k").get_hparams(model_hparams_with(tmp_path))
    with pytest.raises(errors.UserError, match="pass --data_dir"):
        problem_hparams.ParsingEnglishPtb8k().get_feature_encoders(None)
