"""Scoring given pairs with a trained model (`t2t-decoder --score_file`).

    score_file("pairs.txt", "transformer", hparams, "/train/model.ckpt-1000")
    # one loss per "input<TAB>target" line: [0.125, 2.5, ...]
"""
import os

import tensorflow as tf

from t2t.core import errors
from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.core.progress import Progress
from t2t.decoding import input_checks
from t2t.encoders import text_encoder
from t2t.model import model_hparams


def read_score_pairs(filename, has_inputs):
    """[(inputs or None, targets)] from "input<TAB>target" (or "target") lines; UserError
    for a line that is not UTF-8 or has the wrong number of tabs."""
    lines = [line.rstrip("\r") for line in input_checks.read_text_lines(filename)]
    pairs = []
    for number, line in enumerate(lines, 1):
        fields = line.split("\t")
        if len(fields) > 2:
            raise errors.UserError("%s line %d has %d tabs; write 'input<TAB>target' (one tab)"
                                   % (filename, number, len(fields) - 1))
        if has_inputs and len(fields) != 2:
            raise errors.UserError("%s line %d has no tab; this problem has inputs, so write "
                                   "'input<TAB>target'" % (filename, number))
        pairs.append((fields[0].strip() if len(fields) == 2 else None, fields[-1].strip()))
    return pairs


def score_file(filename, model_name, hparams, checkpoint_path, encoders=None):
    """The loss of every "input<TAB>target" line of `filename` under a trained model.

    Each side is encoded with the problem's encoders plus EOS and scored on its own
    (batch 1): the EVAL-mode training loss, i.e. the mean per-token cross-entropy times
    the problem's loss_multiplier. Models without inputs score "target" lines.

        score_file("pairs.txt", "transformer", hparams, "/train/model.ckpt-1000")
        # [0.031, 1.92, ...] one float per line
    """
    if encoders is None:
        problem = model_hparams.attached_problem(hparams, "score_file")
        encoders = problem.feature_encoders(hparams.get("data_dir"))
    has_inputs = "inputs" in hparams.problem_hparams.modality
    pairs = read_score_pairs(filename, has_inputs)
    model_cls = registry.model(model_name)
    results = []
    graph = tf.Graph()
    with graph.as_default():
        targets_ph = tf.compat.v1.placeholder(tf.int32, [None], name="targets")
        features = {"targets": tf.reshape(targets_ph, [1, -1, 1, 1])}
        if has_inputs:
            inputs_ph = tf.compat.v1.placeholder(tf.int32, [None], name="inputs")
            features["inputs"] = tf.reshape(inputs_ph, [1, -1, 1, 1])
        model = model_cls(hparams, ModeKeys.EVAL)
        _, losses = model(features)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=graph) as sess:
            saver.restore(sess, checkpoint_path)
            progress = Progress("score %s" % os.path.basename(filename), unit="lines",
                                total=len(pairs))
            for inputs, targets in pairs:
                feed = {targets_ph: encoders["targets"].encode(targets) +
                        [text_encoder.EOS_ID]}
                if has_inputs:
                    feed[inputs_ph] = encoders["inputs"].encode(inputs) + [text_encoder.EOS_ID]
                results.append(float(sess.run(losses["training"], feed)))
                progress.update(1)
            progress.done()
    return results
