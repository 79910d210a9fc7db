"""Test helpers for the model tests: synthetic copy/reverse data and a tiny training loop.

    rng = np.random.RandomState(0)
    examples = copy_examples(rng, num=8, max_len=5)       # [([2, 3, 1], [2, 3, 1]), ...]
    feats = batch_features(examples)                      # int32 [8, L, 1, 1] arrays
    losses = train_losses("transformer", hp, p_hp, [feats], steps=40)
"""
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2
from tensorflow.core.protobuf import rewriter_config_pb2

from t2t.core import registry
from t2t.core.modes import ModeKeys

EOS = 1
TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL
PREDICT = ModeKeys.PREDICT


def session_config():
    """Session options for tests: no Grappler rewrites (they cost seconds per tiny graph)."""
    rewrites = rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True)
    return config_pb2.ConfigProto(graph_options=config_pb2.GraphOptions(
        rewrite_options=rewrites))


def session(graph=None):
    return tf.compat.v1.Session(graph=graph, config=session_config())


def copy_examples(rng, num, max_len, min_len=1, symbols=(2, 3), reverse=False):
    """(inputs, targets) id lists: random symbols + EOS; targets copy (or reverse) inputs."""
    examples = []
    for _ in range(num):
        length = rng.randint(min_len, max_len + 1)
        ids = [int(rng.choice(symbols)) for _ in range(length)]
        targets = ids[::-1] if reverse else list(ids)
        examples.append((ids + [EOS], targets + [EOS]))
    return examples


def pad_ids(sequences, length=None):
    """Right-pad id lists with 0 to int32 [B, length, 1, 1]."""
    length = length or max(len(s) for s in sequences)
    out = np.zeros([len(sequences), length, 1, 1], dtype=np.int32)
    for i, seq in enumerate(sequences):
        out[i, :len(seq), 0, 0] = seq
    return out


def batch_features(examples, inputs_length=None, targets_length=None):
    return {"inputs": pad_ids([e[0] for e in examples], inputs_length),
            "targets": pad_ids([e[1] for e in examples], targets_length)}


def placeholders(names=("inputs", "targets"), batches=None):
    """int32 placeholders [None, None, 1, 1], or shaped like `batches` (the batch axis
    and every axis whose size varies between batches left None)."""
    result = {}
    for name in names:
        shape = [None, None, 1, 1]
        if batches:
            shapes = [batch[name].shape for batch in batches]
            shape = [None] + [dims[0] if len(set(dims)) == 1 else None
                              for dims in zip(*(s[1:] for s in shapes))]
        result[name] = tf.compat.v1.placeholder(tf.int32, shape, name=name)
    return result


def train_losses(model_name, hparams, problem_hparams, batches, steps, learning_rate=0.02,
                 seed=1, model_cls=None):
    """Train with Adam on the cycled batches; returns the loss before each step."""
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(seed)
        feeds = placeholders(sorted(batches[0]), batches)
        model_cls = model_cls or registry.model(model_name)
        model = model_cls(hparams, TRAIN, problem_hparams)
        _, losses = model(feeds)
        loss = losses["training"]
        train_op = tf.compat.v1.train.AdamOptimizer(learning_rate).minimize(loss)
        values = []
        with session(graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for step in range(steps):
                batch = batches[step % len(batches)]
                value, _ = sess.run([loss, train_op],
                                    {feeds[k]: v for k, v in batch.items()})
                values.append(float(value))
    return values


def mean_first(values, n=3):
    return float(np.mean(values[:n]))


def mean_last(values, n=3):
    return float(np.mean(values[-n:]))
