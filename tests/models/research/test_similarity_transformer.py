"""SimilarityTransformer: the loss of the all-pairs cosine matrix, T2T's variable names, the
Transformer sets it runs with, and learning to embed code near its own docstring."""
import importlib

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import builtins, registry, t2t_import_alias
from t2t.model import model_hparams
from t2t.models.research import similarity_transformer

from t2t_model_testing import PREDICT, TRAIN, pad_ids, session

_v1 = tf.compat.v1
VOCAB = 16


def tiny(name="transformer_tiny", layers=1, **values):
    hp = registry.hparams(name)
    hp.hidden_size, hp.filter_size, hp.num_heads, hp.num_hidden_layers = 32, 64, 4, layers
    hp.layer_prepostprocess_dropout = hp.attention_dropout = hp.relu_dropout = 0.0
    for key, value in values.items():
        setattr(hp, key, value)
    return hp


def test_loss_rewards_matching_pairs():
    """Positives (the diagonal) are labelled (1, 0) on (similarity, 1 - similarity)."""
    aligned = np.eye(3, 4, dtype=np.float32)
    with tf.Graph().as_default():
        matched = similarity_transformer.similarity_loss(tf.constant(aligned),
                                                         tf.constant(aligned))
        crossed = similarity_transformer.similarity_loss(tf.constant(aligned),
                                                         tf.constant(aligned[[1, 2, 0]]))
        with session() as sess:
            matched, crossed = sess.run([matched, crossed])

    def xent(label, logit):
        return -label * np.log(1 / (1 + np.exp(-logit))) - (1 - label) * np.log(
            1 - 1 / (1 + np.exp(-logit)))
    # Matched: the 3 positives have similarity 1, the 6 negatives 0.
    expected = (3 * (xent(1, 1) + xent(0, 0)) + 6 * (xent(0, 0) + xent(1, 1))) / 18
    np.testing.assert_allclose(matched, expected, rtol=1e-5)
    assert crossed > matched
    assert "similarity_transformer" in registry.list_models()


def test_registered_builtin_under_t2ts_module_paths():
    assert "t2t.models.research.similarity_transformer" in builtins.BUILTIN_MODULES["models"]
    t2t_import_alias.uninstall()
    assert t2t_import_alias.install()
    try:
        from tensor2tensor.models.research import similarity_transformer as new_path
        import tensor2tensor.models.similarity_transformer as old_path
    finally:
        t2t_import_alias.uninstall()
    assert new_path is old_path is importlib.import_module(
        "t2t.models.research.similarity_transformer")


def _pairs(rng, num):
    """Docstring i is tokens {2i+2, 2i+3} in some order; its code {2i+3, 2i+2} + EOS."""
    docs, codes = [], []
    for i in range(num):
        a, b = 2 + 2 * (i % 6), 3 + 2 * (i % 6)
        order = [a, b] if rng.rand() < 0.5 else [b, a]
        docs.append(order + [1])
        codes.append(order[::-1] + [order[0], 1])
    return pad_ids(docs), pad_ids(codes)


@pytest.mark.parametrize("name", ["transformer_tiny", "transformer_base", "transformer_small"])
def test_sets_build_and_give_a_finite_loss(name):
    docs, codes = _pairs(np.random.RandomState(0), 4)
    with tf.Graph().as_default():
        model = similarity_transformer.SimilarityTransformer(
            tiny(name), TRAIN, model_hparams.test_problem_hparams(VOCAB, VOCAB))
        embeddings, losses = model({"inputs": tf.constant(docs), "targets": tf.constant(codes)})
        with session() as sess:
            sess.run(_v1.global_variables_initializer())
            embeddings, loss = sess.run([embeddings, losses["training"]])
    assert embeddings.shape == (4, 32)
    np.testing.assert_allclose(np.linalg.norm(embeddings, axis=1), 1.0, rtol=1e-5)
    assert np.isfinite(loss) and loss > 0


def test_variables_have_t2t_names_and_shapes():
    docs, codes = _pairs(np.random.RandomState(1), 2)
    with tf.Graph().as_default():
        similarity_transformer.SimilarityTransformer(
            tiny(), TRAIN, model_hparams.test_problem_hparams(VOCAB, VOCAB))(
                {"inputs": tf.constant(docs), "targets": tf.constant(codes)})
        names = {v.op.name: v.shape.as_list() for v in _v1.global_variables()}
    expected = {"similarity_transformer/symbol_modality_16_32/shared/weights_%d" % i: [1, 32]
                for i in range(16)}
    for tower in ("string_embedding", "code_embedding"):
        prefix = "similarity_transformer/body/%s/" % tower
        layer = prefix + "encoder/layer_0/"
        expected[prefix + "target_space_embedding/kernel"] = [32, 32]
        for t in ("q", "k", "v", "output_transform"):
            expected[layer + "self_attention/multihead_attention/%s/kernel" % t] = [32, 32]
        expected.update({layer + "ffn/conv1/kernel": [32, 64], layer + "ffn/conv1/bias": [64],
                         layer + "ffn/conv2/kernel": [64, 32], layer + "ffn/conv2/bias": [32]})
        for norm in (layer + "self_attention/", layer + "ffn/", prefix + "encoder/"):
            for v in ("scale", "bias"):
                expected[norm + "layer_prepostprocess/layer_norm/layer_norm_" + v] = [32]
    assert names == expected


def test_predict_needs_embed_code():
    docs, _ = _pairs(np.random.RandomState(2), 2)
    with tf.Graph().as_default():
        model = similarity_transformer.SimilarityTransformer(
            tiny(), PREDICT, model_hparams.test_problem_hparams(VOCAB, VOCAB))
        with pytest.raises(ValueError, match="needs features\\['embed_code'\\]"):
            model.infer({"inputs": tf.constant(docs)})


def test_learns_to_embed_code_near_its_own_docstring():
    rng = np.random.RandomState(3)
    batches = [_pairs(rng, 6) for _ in range(4)]
    test_docs, test_codes = _pairs(np.random.RandomState(4), 6)
    hp = tiny()
    p_hp = model_hparams.test_problem_hparams(VOCAB, VOCAB)
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(1)
        docs_in = _v1.placeholder(tf.int32, [None, None, 1, 1])
        codes_in = _v1.placeholder(tf.int32, [None, None, 1, 1])
        _, losses = similarity_transformer.SimilarityTransformer(hp, TRAIN, p_hp)(
            {"inputs": docs_in, "targets": codes_in})
        train_op = _v1.train.AdamOptimizer(0.01).minimize(losses["training"])
        predict = similarity_transformer.SimilarityTransformer(hp, PREDICT, p_hp)
        # One batch mixing both kinds: rows 0-5 docstrings, rows 6-11 code.
        mixed = np.concatenate([pad_ids(test_docs[:, :, 0, 0], 4),
                                pad_ids(test_codes[:, :, 0, 0], 4)])
        flags = np.array([[0]] * 6 + [[1]] * 6, dtype=np.int32)
        embedded = predict.infer({"inputs": tf.constant(mixed), "embed_code": tf.constant(flags)})
        alone = predict.infer({"inputs": tf.constant(test_codes),
                               "embed_code": tf.ones([6, 1], tf.int32)})
        values = []
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            for step in range(40):
                docs, codes = batches[step % len(batches)]
                value, _ = sess.run([losses["training"], train_op],
                                    {docs_in: docs, codes_in: codes})
                values.append(value)
            embedded, alone = sess.run([embedded, alone])
    assert np.mean(values[-5:]) < np.mean(values[:5]) - 0.03, values
    doc_vectors, code_vectors = embedded[:6], embedded[6:]
    np.testing.assert_allclose(np.linalg.norm(embedded, axis=1), 1.0, rtol=1e-5)
    # Each row is embedded on its own: the code rows agree with a batch of code alone.
    np.testing.assert_allclose(code_vectors, alone, atol=1e-5)
    similarity = code_vectors @ doc_vectors.T
    for i in range(6):
        own = similarity[i, i]
        others = [similarity[i, j] for j in range(6)
                  if test_docs[j, 0, 0, 0] // 2 != test_docs[i, 0, 0, 0] // 2]
        assert own > max(others), similarity
