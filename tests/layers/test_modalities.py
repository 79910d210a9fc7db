"""Modalities: the dispatch table, symbol embeddings and sharing, tops' shapes, loss values."""
import math

import numpy as np
import pytest
import tensorflow as tf

from t2t.core.errors import UserError
from t2t.layers import common_hparams
from t2t.layers import common_layers
from t2t.layers import modalities
from t2t.layers.modalities import ModalityType
from graph_testing import run_graph

v1 = tf.compat.v1


def make_hparams(**overrides):
    hp = common_hparams.basic_params1()
    hp.hidden_size = 8
    hp.add_hparam("mode", "train")
    for name, value in overrides.items():
        setattr(hp, name, value)
    return hp


def trainable_names():
    return sorted(var.op.name for var in v1.trainable_variables())


# --------------------------------------------------------------------------- dispatch
def test_every_modality_type_has_all_functions():
    hp = make_hparams()
    for modality_type in ModalityType.get_choices():
        for getter in (modalities.get_bottom, modalities.get_targets_bottom, modalities.get_top,
                       modalities.get_loss, modalities.get_weights_fn, modalities.get_name):
            assert callable(getter(modality_type)), (getter.__name__, modality_type)
        assert isinstance(modalities.get_name(modality_type)(hp, 10), str)


def test_dispatch_values_and_names():
    hp = make_hparams()
    assert modalities.get_top(ModalityType.SYMBOL) is modalities.symbol_top
    assert modalities.get_loss(ModalityType.CLASS_LABEL) is modalities.generic_loss
    assert modalities.get_top(ModalityType.SIGMOID_CLASS_LABEL) is modalities.class_label_top
    assert modalities.get_weights_fn(ModalityType.SYMBOL) is common_layers.weights_nonzero
    assert modalities.get_weights_fn(ModalityType.REAL) is common_layers.weights_all
    assert modalities.get_name(ModalityType.SYMBOL)(hp, 300) == "symbol_modality_300_8"
    assert modalities.get_name(ModalityType.CLASS_LABEL)(hp, 2) == "class_label_modality_2_8"
    assert modalities.get_name(ModalityType.IMAGE)(hp, 256) == "image_modality"
    assert getattr(modalities.get_top(ModalityType.SYMBOL), "pointwise", False)
    assert not getattr(modalities.get_top(ModalityType.CLASS_LABEL), "pointwise", False)
    # Unknown types give the fallback value, so per-feature overrides still work.
    sentinel = object()
    assert modalities.get_bottom("my_own_modality") is None
    assert modalities.get_loss("my_own_modality", sentinel) is sentinel


@pytest.mark.parametrize("modality_type", [ModalityType.VIDEO, ModalityType.AUDIO,
                                           ModalityType.SPEECH_RECOGNITION])
def test_unsupported_modalities_raise_one_line_error_at_use(modality_type):
    bottom = modalities.get_bottom(modality_type)
    with pytest.raises(UserError, match="modality '%s' is not supported in t2t yet"
                       % modality_type) as error:
        bottom(tf.zeros([1, 2, 2, 3]), make_hparams(), 256)
    assert "\n" not in str(error.value)


# --------------------------------------------------------------------------- symbols
def test_symbol_bottom_zeroes_padding_and_scales_by_sqrt_depth():
    ids = np.array([[3, 0, 1], [2, 2, 0]], np.int32).reshape(2, 3, 1, 1)
    hp = make_hparams()

    def build():
        with v1.variable_scope("symbol_modality_5_8"):
            emb = modalities.get_bottom(ModalityType.SYMBOL)(tf.constant(ids), hp, 5)
        with v1.variable_scope("symbol_modality_5_8/input_emb", reuse=True):
            return emb, v1.get_variable("weights_0")

    emb, table = run_graph(build)
    assert emb.shape == (2, 3, 1, 8)
    flat_ids = ids.reshape(2, 3)
    expected = table[flat_ids] * math.sqrt(8) * (flat_ids != 0)[..., None]
    np.testing.assert_allclose(emb[:, :, 0], expected, rtol=1e-6)
    np.testing.assert_array_equal(emb[0, 1], 0.0)
    assert abs(table.std() - 8 ** -0.5) < 0.15  # initialised N(0, d^-0.5)


def test_shared_embedding_and_softmax_use_one_variable():
    hp = make_hparams(shared_embedding_and_softmax_weights=True)
    ids = np.array([[[[4]], [[2]]]], np.int32)
    body_np = np.random.RandomState(0).randn(1, 2, 1, 8).astype(np.float32)

    def build():
        with v1.variable_scope("symbol_modality_6_8"):
            inputs = modalities.symbol_bottom(tf.constant(ids), hp, 6)
        with v1.variable_scope("symbol_modality_6_8"):
            targets = modalities.symbol_targets_bottom(tf.constant(ids), hp, 6)
        with v1.variable_scope("symbol_modality_6_8"):
            logits = modalities.symbol_top(tf.constant(body_np), None, hp, 6)
        assert trainable_names() == ["symbol_modality_6_8/shared/weights_0"]
        return inputs, targets, logits, v1.trainable_variables()[0]

    inputs, targets, logits, table = run_graph(build)
    np.testing.assert_allclose(inputs, targets)
    assert logits.shape == (1, 2, 1, 1, 6)
    np.testing.assert_allclose(logits.reshape(2, 6), body_np.reshape(2, 8) @ table.T,
                               rtol=1e-5, atol=1e-6)


def test_unshared_symbol_modality_has_three_tables_and_shards():
    hp = make_hparams(symbol_modality_num_shards=3)

    def build():
        ids = tf.constant([[[[1]], [[9]]]])
        with v1.variable_scope("m"):
            modalities.symbol_bottom(ids, hp, 10)
            modalities.symbol_targets_bottom(ids, hp, 10)
            logits = modalities.symbol_top(tf.zeros([1, 2, 1, 8]), None, hp, 10)
        shapes = {var.op.name: var.shape.as_list() for var in v1.trainable_variables()}
        assert sorted({name.split("/")[1] for name in shapes}) == [
            "input_emb", "softmax", "target_emb"]
        assert [shapes["m/softmax/weights_%d" % i] for i in range(3)] == [[4, 8], [3, 8],
                                                                          [3, 8]]
        return logits

    assert run_graph(build).shape == (1, 2, 1, 1, 10)


def test_shared_targets_bottom_without_inputs_creates_the_table():
    hp = make_hparams(shared_embedding=True)
    with tf.Graph().as_default():
        emb = modalities.symbol_targets_bottom(tf.constant([[[[1]]]]), hp, 4)
        assert emb.shape.as_list() == [1, 1, 1, 8]
        assert trainable_names() == ["shared/weights_0"]


def test_symbol_loss_is_label_smoothed_cross_entropy():
    hp = make_hparams(label_smoothing=0.1)
    logits = tf.constant(np.random.RandomState(1).randn(2, 3, 1, 1, 5).astype(np.float32))
    targets = tf.constant([[[[1]], [[4]], [[0]]], [[[2]], [[0]], [[0]]]])
    num, den = modalities.get_loss(ModalityType.SYMBOL)(
        logits, targets, hp, 5, modalities.get_weights_fn(ModalityType.SYMBOL))
    ref_num, ref_den = common_layers.padded_cross_entropy(logits, targets, 0.1)
    assert float(den) == 3.0 == float(ref_den)
    np.testing.assert_allclose(float(num), float(ref_num), rtol=1e-6)
    _, den_all = modalities.get_loss(ModalityType.SYMBOL_WEIGHTS_ALL)(
        logits, targets, hp, 5, modalities.get_weights_fn(ModalityType.SYMBOL_WEIGHTS_ALL))
    assert float(den_all) == 6.0


def test_ctc_loss_with_one_alignment_equals_cross_entropy():
    # With as many frames as labels and no merging, the only path is the labels themselves.
    logits_np = np.random.RandomState(2).randn(2, 3, 1, 1, 5).astype(np.float32)
    targets_np = np.array([[1, 2, 3], [2, 2, 0]], np.int32)
    num, den = modalities.ctc_symbol_loss(
        tf.constant(logits_np), tf.constant(targets_np.reshape(2, 3, 1, 1)), make_hparams(), 5,
        common_layers.weights_nonzero)
    log_probs = logits_np.reshape(2, 3, 5)
    log_probs = log_probs - np.log(np.exp(log_probs).sum(-1, keepdims=True))
    expected = -sum(log_probs[b, t, targets_np[b, t]]
                    for b in range(2) for t in range(3) if targets_np[b, t])
    assert float(den) == 5.0
    np.testing.assert_allclose(float(num), expected, rtol=1e-4)


def test_symbol_one_hot_and_identity_symbol():
    hp = make_hparams()
    one_hot = modalities.get_bottom(ModalityType.SYMBOL_ONE_HOT)(tf.constant([[2, 0]]), hp, 3)
    np.testing.assert_array_equal(one_hot, [[[0, 0, 1], [1, 0, 0]]])
    num, den = modalities.symbol_one_hot_loss(tf.math.log(one_hot * 0.98 + 0.01),
                                              tf.constant([[2, 0]]), hp, 3, None)
    assert float(den) == 1.0 and float(num) < 0.1
    ids = tf.constant([[[[3]]]])
    np.testing.assert_array_equal(modalities.get_bottom(ModalityType.IDENTITY_SYMBOL)(
        ids, hp, 5), [[[[3.0]]]])


# --------------------------------------------------------------------------- class labels
def test_class_label_bottom_targets_bottom_and_top_shapes():
    hp = make_hparams()

    def build():
        labels = tf.constant([[[[1]]], [[[3]]]])
        bottom = modalities.get_bottom(ModalityType.CLASS_LABEL)(labels, hp, 4)
        targets_bottom = modalities.get_targets_bottom(ModalityType.CLASS_LABEL)(labels, hp, 4)
        logits = modalities.get_top(ModalityType.CLASS_LABEL)(tf.ones([2, 7, 1, 8]), labels,
                                                              hp, 4)
        num, den = modalities.get_loss(ModalityType.CLASS_LABEL)(
            logits, labels, hp, 4, modalities.get_weights_fn(ModalityType.CLASS_LABEL))
        return bottom, targets_bottom, logits, num, den

    bottom, targets_bottom, logits, num, den = run_graph(build)
    assert bottom.shape == (2, 1, 1, 8)
    np.testing.assert_array_equal(targets_bottom, np.zeros([2, 1, 1, 8]))
    assert logits.shape == (2, 1, 1, 1, 4)
    assert den == 2.0 and num > 0


@pytest.mark.parametrize("modality_type,shape", [
    (ModalityType.SOFTMAX_AVERAGE_POOLING_CLASS_LABEL, (2, 1, 1, 3)),
    (ModalityType.SOFTMAX_LAST_TIMESTEP_CLASS_LABEL, (2, 1, 1, 3)),
    (ModalityType.SOFTMAX_MAX_POOLING_CLASS_LABEL, (2, 1, 1, 3)),
    (ModalityType.SIGMOID_MAX_POOLING_CLASS_LABEL, (2, 1, 1, 3)),
    (ModalityType.MULTI_LABEL, (2, 1, 1, 1, 3)),
])
def test_pooled_class_label_tops(modality_type, shape):
    logits = run_graph(lambda: modalities.get_top(modality_type)(
        tf.ones([2, 5, 1, 8]), None, make_hparams(), 3))
    assert logits.shape == shape


def test_one_hot_and_sigmoid_class_label_losses_are_means_per_example():
    logits_np = np.array([[2.0, 0.0, -1.0], [0.5, 0.5, 3.0]], np.float32).reshape(2, 1, 1, 3)
    one_hot = np.eye(3, dtype=np.float32)[[0, 1]].reshape(2, 1, 1, 3)
    hp = make_hparams()
    num, den = modalities.one_hot_class_label_loss(
        tf.constant(logits_np), tf.constant(one_hot), hp, 3, common_layers.weights_all)
    flat = logits_np.reshape(2, 3)
    log_probs = flat - np.log(np.exp(flat).sum(-1, keepdims=True))
    assert float(den) == 2.0
    np.testing.assert_allclose(float(num), -(log_probs[0, 0] + log_probs[1, 1]), rtol=1e-5)
    num, den = modalities.sigmoid_class_label_loss(
        tf.constant(logits_np), tf.constant(one_hot), hp, 3, common_layers.weights_all)
    x, z = logits_np.ravel(), one_hot.ravel()
    expected = np.sum(np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))))
    assert float(den) == 6.0
    np.testing.assert_allclose(float(num), expected, rtol=1e-5)


def test_multi_label_loss_averages_over_each_examples_labels():
    logits = tf.constant(np.log(np.array([0.5, 0.25, 0.25], np.float32)).reshape(1, 1, 1, 1, 3))
    targets = tf.constant(np.array([[1, 2, 0]], np.int32).reshape(1, 3, 1, 1))
    num, den = modalities.multi_label_loss(logits, targets, make_hparams(label_smoothing=0.0),
                                           3, common_layers.weights_nonzero)
    assert float(den) == 1.0
    np.testing.assert_allclose(float(num), -math.log(0.25), rtol=1e-5)  # mean of two labels


# --------------------------------------------------------------------------- real, identity
def test_real_modalities_and_l2_losses():
    hp = make_hparams()

    def build():
        bottom = modalities.get_bottom(ModalityType.REAL_L2_LOSS)(tf.ones([2, 3, 1, 5]), hp, 2)
        targets_bottom = modalities.get_targets_bottom(ModalityType.REAL_L2_LOSS)(
            tf.ones([2, 3, 1, 5]), hp, 2)
        top = modalities.get_top(ModalityType.REAL_L2_LOSS)(tf.ones([2, 3, 1, 8]), None, hp, 2)
        names.extend(trainable_names())
        return bottom, targets_bottom, top

    names = []
    bottom, targets_bottom, top = run_graph(build)
    assert bottom.shape == targets_bottom.shape == (2, 3, 1, 8)
    assert top.shape == (2, 3, 1, 2)
    assert names == ["real/bottom/bias", "real/bottom/kernel", "real/top/bias",
                     "real/top/kernel", "targets_bottom/real/bottom/bias",
                     "targets_bottom/real/bottom/kernel"]
    predictions = tf.constant([[1.0, 2.0], [3.0, 5.0]])
    targets = tf.constant([[1.5, 2.0], [1.0, 5.0]])
    num, den = modalities.real_l2_loss(predictions, targets, hp, 2, common_layers.weights_all)
    assert float(den) == 4.0
    np.testing.assert_allclose(float(num), 0.25 + 4.0)
    # A trailing singleton axis on predictions is squeezed away.
    num, _ = modalities.real_l2_loss(tf.expand_dims(predictions, -1), targets, hp, 2,
                                     common_layers.weights_all)
    np.testing.assert_allclose(float(num), 4.25)
    num, den = modalities.real_log_poisson_loss(tf.zeros([2]), tf.constant([1.0, 2.0]), hp, 1,
                                                common_layers.weights_all)
    np.testing.assert_allclose(float(num), 2.0)  # exp(0) - t * 0 per element
    num, den = modalities.generic_l2_loss(tf.constant([1.0, 3.0]), tf.constant([0, 1]), hp, 1,
                                          None)
    assert float(den) == 1.0
    np.testing.assert_allclose(float(num), 2.5)


def test_identity_modality_passes_through():
    hp = make_hparams()
    x = tf.constant([[1, 2]])
    np.testing.assert_array_equal(modalities.get_bottom(ModalityType.IDENTITY)(x, hp, 0),
                                  [[1.0, 2.0]])
    body = tf.ones([1, 2])
    assert modalities.get_top(ModalityType.IDENTITY)(body, None, hp, 0) is body


# --------------------------------------------------------------------------- images
def test_image_modality_shapes():
    hp = make_hparams()

    def build():
        pixels = tf.constant(np.random.RandomState(3).randint(0, 256, [2, 4, 4, 3]), tf.int32)
        bottom = modalities.get_bottom(ModalityType.IMAGE)(pixels, hp, 256)
        targets_bottom = modalities.get_targets_bottom(ModalityType.IMAGE)(pixels, hp, 256)
        logits = modalities.get_top(ModalityType.IMAGE)(tf.ones([2, 4, 4, 8]), pixels, hp, 256)
        num, den = modalities.get_loss(ModalityType.IMAGE)(
            logits, pixels, hp, 256, modalities.get_weights_fn(ModalityType.IMAGE))
        return bottom, targets_bottom, logits, den

    bottom, targets_bottom, logits, den = run_graph(build)
    assert bottom.dtype == np.float32 and bottom.shape == (2, 4, 4, 3)
    assert targets_bottom.shape == (2, 4, 4, 8)
    assert logits.shape == (2, 4, 4, 3, 256)
    assert den == 2 * 4 * 4 * 3


def test_image_channel_modalities_shapes():
    hp = make_hparams(img_len=4, num_channels=3)

    def build():
        pixels = tf.constant(np.random.RandomState(4).randint(0, 256, [2, 4, 4, 3]), tf.int32)
        compressed = modalities.get_bottom(ModalityType.IMAGE_CHANNEL_COMPRESS)(pixels, hp, 256)
        compress_logits = modalities.get_top(ModalityType.IMAGE_CHANNEL_COMPRESS)(
            tf.ones([2, 4, 4, 8]), None, hp, 256)
        embedded = modalities.get_targets_bottom(ModalityType.IMAGE_CHANNEL_EMBEDDINGS_BOTTOM)(
            pixels, hp, 256)
        embedding_logits = modalities.get_top(ModalityType.IMAGE_CHANNEL_EMBEDDINGS_BOTTOM)(
            tf.ones([2, 4, 12, 8]), None, hp, 256)
        return compressed, compress_logits, embedded, embedding_logits

    compressed, compress_logits, embedded, embedding_logits = run_graph(build)
    assert compressed.shape == (2, 4, 4, 8)
    assert compress_logits.shape == (2, 4, 4, 3, 256)
    assert embedded.shape == (2, 4, 12, 8)
    assert embedding_logits.shape == (2, 4, 4, 3, 256)


# --------------------------------------------------------------------------- end to end
def test_symbol_modality_with_attention_trains_on_a_copy_task():
    """bottom -> attention -> top -> loss -> Adam: gradients reach every variable."""
    from t2t.layers import common_attention
    hp = make_hparams(shared_embedding_and_softmax_weights=True, label_smoothing=0.0)
    ids = np.random.RandomState(5).randint(1, 6, [8, 4]).astype(np.int32)
    ids[:, -1] = 0  # one padding position per row

    with tf.Graph().as_default():
        v1.set_random_seed(0)
        targets = tf.constant(ids.reshape(8, 4, 1, 1))
        with v1.variable_scope("symbol_modality_6_8"):
            emb = modalities.symbol_bottom(targets, hp, 6)
        x = common_layers.flatten4d3d(emb)
        bias = common_attention.attention_bias_ignore_padding(
            common_attention.embedding_to_padding(x))
        y = x + common_attention.multihead_attention(x, None, bias, 8, 8, 8, 2, 0.0)
        with v1.variable_scope("symbol_modality_6_8"):
            logits = modalities.symbol_top(tf.expand_dims(y, 2), targets, hp, 6)
        num, den = modalities.generic_loss(logits, targets, hp, 6,
                                           common_layers.weights_nonzero)
        loss = num / den
        grads = tf.gradients(loss, v1.trainable_variables())
        assert all(g is not None for g in grads)
        train_op = v1.train.AdamOptimizer(0.05).minimize(loss)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(40):
                sess.run(train_op)
            last = sess.run(loss)
    assert last < 0.5 * first
