"""AttentionVisualizer on a trained Transformer: T2T's shapes, and attention that was learned."""
import numpy as np
import pytest
import tensorflow as tf

import decoding_testing
from t2t.core import t2t_import_alias
from t2t.core.errors import UserError
from t2t.visualization import visualization


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return decoding_testing.trained_model(tmp_path_factory)


def visualizer(trained, **kw):
    return visualization.AttentionVisualizer(
        decoding_testing.HPARAMS_SET, decoding_testing.MODEL, trained["data_dir"],
        decoding_testing.PROBLEM, hparams_overrides=decoding_testing.HPARAMS, **kw)


def test_translates_and_the_encoder_decoder_attention_follows_the_letters(trained):
    viz = visualizer(trained, checkpoint_dir=trained["model_dir"])
    own_letter_is_argmax, letters_seen = 0, 0
    for word in ("abcd", "dcba", "cab"):
        output, inp_text, out_text, (enc, dec, encdec) = viz.get_vis_data_from_string(None,
                                                                                    word)
        assert output == word.upper() + "<EOS>"
        assert inp_text == [c.encode() for c in word] + [b"<EOS>"]
        assert len(enc) == len(dec) == len(encdec) == 2  # num_hidden_layers
        n_in, n_out = len(inp_text), len(out_text)
        assert enc[0].shape == (1, 4, n_in, n_in) and dec[1].shape == (1, 4, n_out, n_out)
        assert encdec[0].shape == (1, 4, n_out, n_in)
        np.testing.assert_allclose(encdec[1].sum(-1), 1.0, rtol=1e-5)
        # Decoder self-attention is causal: nothing on later positions.
        assert np.all(np.triu(dec[0][0], k=1) < 1e-6)
        # Uppercasing letter by letter: averaged over layers and heads, an output letter
        # attends to its own input letter with twice the weight of uniform attention (an
        # untrained model's), and most letters attend most to their own. Not every one:
        # the copy also goes through the positions, so a letter may look at <EOS> instead
        # (seen on an AMD CPU with TF 2.15: 'b' of "abcd").
        mean = np.mean([att[0] for att in encdec], axis=(0, 1))
        letters = len(word)  # (the <EOS> row may look anywhere)
        own = np.diagonal(mean)[:letters]
        assert own.mean() >= 2.0 / n_in, (word, mean.round(2))
        own_letter_is_argmax += int(np.sum(mean.argmax(-1)[:letters] == np.arange(letters)))
        letters_seen += letters
    assert own_letter_is_argmax >= 0.75 * letters_seen, (own_letter_is_argmax, letters_seen)


def test_build_model_has_t2ts_shapes_and_serves_tensor2tensors_path(trained):
    for beam_size in (1, 4):
        with tf.Graph().as_default():
            inputs, targets, samples, (enc, dec, encdec) = visualization.build_model(
                decoding_testing.HPARAMS_SET, decoding_testing.MODEL, trained["data_dir"],
                decoding_testing.PROBLEM, beam_size=beam_size,
                hparams_overrides=decoding_testing.HPARAMS)
            assert inputs.shape.as_list() == targets.shape.as_list() == [1, None, 1, 1]
            assert samples.shape.as_list() == [None, None]
            assert len(enc) == len(dec) == len(encdec) == 2
    t2t_import_alias.install()
    try:
        from tensor2tensor.visualization import visualization as t2t_name
        assert t2t_name.AttentionVisualizer is visualization.AttentionVisualizer
    finally:
        t2t_import_alias.uninstall()


def test_a_session_of_the_callers_and_the_errors_without_one(trained, tmp_path):
    viz = visualizer(trained, beam_size=2)
    with tf.compat.v1.Session(graph=viz.graph) as sess:  # T2T's way: the caller's session
        sess.run(tf.compat.v1.global_variables_initializer())
        _, inp_text, out_text, (_, _, encdec) = viz.get_vis_data_from_string(sess, "ab")
    assert inp_text == [b"a", b"b", b"<EOS>"]
    assert encdec[0].shape == (1, 4, len(out_text), 3)
    with pytest.raises(UserError, match="has no session: pass a tf.compat.v1.Session"):
        viz.get_vis_data_from_string(None, "ab")
    empty = visualizer(trained, checkpoint_dir=str(tmp_path))
    with pytest.raises(UserError, match="holds no checkpoint; give the folder t2t-trainer"):
        empty.get_vis_data_from_string(None, "ab")
