"""A Transformer with local self-attention trains, and decodes on the slow (uncached)
path as T2T's did: its greedy ids are the argmax of its own teacher-forced logits."""
import numpy as np
import tensorflow as tf

from t2t.core import registry
from t2t.model import model_hparams
from t2t.models import transformer
from t2t.models import transformer_fast_decode

from t2t_model_testing import PREDICT, TRAIN, batch_features, copy_examples, session

_v1 = tf.compat.v1


def until_eos(ids):
    ids = [int(i) for i in ids]
    return ids[:ids.index(1) + 1] if 1 in ids else ids


def test_local_attention_transformer_trains_and_decodes_slowly():
    hp = registry.hparams("transformer_tiny")
    hp.hidden_size, hp.filter_size, hp.num_heads, hp.num_hidden_layers = 16, 32, 2, 1
    hp.layer_prepostprocess_dropout = hp.attention_dropout = hp.relu_dropout = 0.0
    hp.self_attention_type = "local_mask_right"
    p_hp = model_hparams.test_problem_hparams(4, 4)
    rng = np.random.RandomState(0)
    batches = [batch_features(copy_examples(rng, 16, 5)) for _ in range(4)]
    test_inputs = batch_features(copy_examples(np.random.RandomState(3), 4, 5))["inputs"]
    predict_model = transformer.Transformer(hp, PREDICT, p_hp)
    assert "has no cache" in transformer_fast_decode.fast_decode_unsupported_reason(
        predict_model)
    graph = tf.Graph()
    with graph.as_default():
        _v1.set_random_seed(1)
        feeds = {name: _v1.placeholder(tf.int32, [None, None, 1, 1], name=name)
                 for name in ("inputs", "targets")}
        # Dropout is off, so the training graph's logits are the teacher-forced ones.
        forced_logits, losses = transformer.Transformer(hp, TRAIN, p_hp)(feeds)
        train_op = _v1.train.AdamOptimizer(0.02).minimize(losses["training"])
        greedy = predict_model.infer({"inputs": feeds["inputs"]}, decode_length=2)
        with session(graph) as sess:
            sess.run(_v1.global_variables_initializer())
            loss_values = [sess.run([losses["training"], train_op],
                                    {feeds[k]: v for k, v in batches[step % 4].items()})[0]
                           for step in range(30)]
            outputs = sess.run(greedy, {feeds["inputs"]: test_inputs})["outputs"]
            forced = sess.run(forced_logits, {feeds["inputs"]: test_inputs,
                                              feeds["targets"]: outputs[:, :, None, None]})
    assert np.mean(loss_values[-3:]) < 0.7 * np.mean(loss_values[:3])
    # The slow loop re-runs the model on the ids so far; each id is its argmax there.
    assert outputs.shape[0] == 4 and outputs.shape[1] <= test_inputs.shape[1] + 2
    argmax = np.argmax(forced[:, :, 0, 0], axis=-1)
    for row, best in zip(outputs, argmax):
        kept = until_eos(row)
        assert kept == [int(i) for i in best[:len(kept)]]
