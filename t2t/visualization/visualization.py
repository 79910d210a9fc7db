"""Translate a sentence and fetch the attention weights of every layer and head.

T2T's `tensor2tensor.visualization.visualization`: the model is built twice in one graph,
as T2T built it, once as in training (inputs and the translation fed as targets, which
fills `model.attention_weights`) and once for inference (the translation itself), with
shared variables and T2T's variable names, so a training folder's checkpoint restores.

    viz = AttentionVisualizer("transformer_multi30k", "transformer", "~/t2t_data/m30k",
                              "translate_ende_multi30k", checkpoint_dir="~/t2t_train/m30k")
    output, inp_text, out_text, (enc, dec, encdec) = viz.get_vis_data_from_string(
        None, "A dog runs.")   # enc[layer].shape == (1, heads, len(inp_text), len(inp_text))

As in T2T, a session of the caller's may be passed (its graph holding the model and its
variables initialized or restored); with `checkpoint_dir` (an extension) and `sess=None`
the visualizer restores the checkpoint in a session of its own. Under TensorFlow 2's eager
execution the model goes in a graph of its own (`viz.graph`); with eager execution
disabled (T2T's TF 1.x notebooks), in the default graph, as T2T did.
"""
import os

import numpy as np
import tensorflow as tf

from t2t.core import registry
from t2t.core.errors import UserError
from t2t.core.modes import ModeKeys
from t2t.training import trainer_lib

EOS_ID = 1


class AttentionVisualizer:
    """Builds the model once; translates and fetches attention for each sentence asked."""

    def __init__(self, hparams_set, model_name, data_dir, problem_name, beam_size=1,
                 hparams_overrides="", checkpoint_dir=None):
        self.graph = tf.Graph() if tf.executing_eagerly() else tf.compat.v1.get_default_graph()
        with self.graph.as_default():
            inputs, targets, samples, att_mats = build_model(
                hparams_set, model_name, data_dir, problem_name, beam_size=beam_size,
                hparams_overrides=hparams_overrides)
            self._saver = (tf.compat.v1.train.Saver(tf.compat.v1.global_variables())
                           if checkpoint_dir else None)
        self.inputs, self.targets, self.samples, self.att_mats = inputs, targets, samples, att_mats
        self.encoders = registry.problem(problem_name).feature_encoders(
            os.path.expanduser(data_dir))
        self.checkpoint_dir = checkpoint_dir
        self._session = None

    def encode(self, input_str):
        """Input str to features dict, ready for inference."""
        inputs = self.encoders["inputs"].encode(input_str) + [EOS_ID]
        return np.reshape(inputs, [1, -1, 1, 1])

    def decode(self, integers):
        """List of ints to str."""
        return self.encoders["targets"].decode(_id_list(integers))

    def encode_list(self, integers):
        """List of ints to list of str (the input tokens)."""
        return self.encoders["inputs"].decode_list(_id_list(integers))

    def decode_list(self, integers):
        """List of ints to list of str (the output tokens)."""
        return self.encoders["targets"].decode_list(_id_list(integers))

    @property
    def session(self):
        """A session of the visualizer's own, with `checkpoint_dir`'s latest checkpoint."""
        if self._session is None:
            if self._saver is None:
                raise UserError("AttentionVisualizer has no session: pass a tf.compat.v1."
                                 "Session holding the model's variables, or build it with "
                                 "checkpoint_dir=<a training folder>")
            folder = os.path.expanduser(self.checkpoint_dir)
            checkpoint = (tf.train.latest_checkpoint(folder) if os.path.isdir(folder)
                          else folder)
            if not checkpoint:
                raise UserError("checkpoint_dir %s holds no checkpoint; give the folder "
                                 "t2t-trainer wrote (its --output_dir)" % self.checkpoint_dir)
            self._session = tf.compat.v1.Session(graph=self.graph)
            with self.graph.as_default():  # a v1 Saver restores only in its graph
                self._saver.restore(self._session, checkpoint)
        return self._session

    def get_vis_data_from_string(self, sess, input_string):
        """(output string, input tokens, output tokens, (enc_atts, dec_atts, encdec_atts)).

        Each attention list holds one array per layer: encoder self-attention
        [1, heads, inp_len, inp_len], decoder self-attention [1, heads, out_len, out_len],
        encoder-decoder attention [1, heads, out_len, inp_len]. `sess=None` uses
        `self.session`.
        """
        sess = sess if sess is not None else self.session
        encoded_inputs = self.encode(input_string)
        out = sess.run(self.samples, {self.inputs: encoded_inputs})
        # The translation goes through the training graph, which filled the weights.
        att_mats = sess.run(self.att_mats, {
            self.inputs: encoded_inputs,
            self.targets: np.reshape(out, [1, -1, 1, 1]),
        })
        return (self.decode(out), self.encode_list(encoded_inputs), self.decode_list(out),
                att_mats)


def _id_list(integers):
    return [int(i) for i in np.asarray(integers).reshape(-1)]


def build_model(hparams_set, model_name, data_dir, problem_name, beam_size=1,
                hparams_overrides=""):
    """(inputs, targets, samples, att_mats) built in the default graph.

    `inputs` and `targets` are int32 placeholders of shape [1, None, 1, 1]; `samples` the
    inference graph's ids [None, None] (greedy, or beam search with `beam_size` > 1);
    `att_mats` as `get_att_mats`.
    """
    hparams = trainer_lib.create_hparams(hparams_set, hparams_overrides,
                                         data_dir=os.path.expanduser(data_dir),
                                         problem_name=problem_name)
    model = registry.model(model_name)(hparams, ModeKeys.EVAL)
    inputs = tf.compat.v1.placeholder(tf.int32, shape=(1, None, 1, 1), name="inputs")
    targets = tf.compat.v1.placeholder(tf.int32, shape=(1, None, 1, 1), name="targets")
    model({"inputs": inputs, "targets": targets})
    # Read the weights now: the inference graph below fills the same dict with tensors
    # from inside its while loop, which cannot be fetched.
    att_mats = get_att_mats(model)
    with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), reuse=True):
        samples = model.infer({"inputs": inputs}, beam_size=beam_size)["outputs"]
    return inputs, targets, samples, att_mats


def get_att_mats(translate_model):
    """(enc_atts, dec_atts, encdec_atts): one tensor per layer, from the model's
    `attention_weights` (filled while the training graph was built), each
    [batch, heads, query length, key length]."""
    hparams = translate_model.hparams
    prefix = "transformer/body/"
    self_attention = "/multihead_attention/dot_product_attention"
    if hparams.get("self_attention_type") == "dot_product_relative":
        self_attention = "/multihead_attention/dot_product_attention_relative"
    encdec = "/multihead_attention/dot_product_attention"
    weights = translate_model.attention_weights
    num_encoder = hparams.get("num_encoder_layers") or hparams.num_hidden_layers
    num_decoder = hparams.get("num_decoder_layers") or hparams.num_hidden_layers

    def fetch(name):
        if name not in weights:
            raise UserError("the model has no attention weights named %s; the attention "
                             "view reads a Transformer's (model transformer)" % name)
        return weights[name]

    enc_atts = [fetch("%sencoder/layer_%d/self_attention%s" % (prefix, i, self_attention))
                for i in range(num_encoder)]
    dec_atts = [fetch("%sdecoder/layer_%d/self_attention%s" % (prefix, i, self_attention))
                for i in range(num_decoder)]
    encdec_atts = [fetch("%sdecoder/layer_%d/encdec_attention%s" % (prefix, i, encdec))
                   for i in range(num_decoder)]
    return enc_atts, dec_atts, encdec_atts
