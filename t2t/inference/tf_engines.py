"""Decoding engines on TensorFlow: a checkpoint kept loaded in a session, and a SavedModel.

Both take batches of input ids (EOS appended) and give, per input, its hypotheses as
(ids without EOS, score), best first; the TrainedModel above them encodes and decodes text.

    engine = CheckpointEngine("transformer", hparams, "/train/model.ckpt-500")
    engine.decode([[12, 7, 1], [40, 1]], DecodeSettings(beam_size=4, alpha=0.6))
    # [[([33, 8], -1.2)], [([51], -0.4)]]
    engine.score([[12, 7, 1]], [[33, 8, 1]])    # [(-1.9, 3)]: log-probability, tokens

The checkpoint engine builds the same PREDICT graph as t2t-decoder
(`decoding.predictor.model_predictions`), once per decode setting (beam size, alpha, ...),
restores the weights into its session once, and runs every later call on it: a call costs
the model's compute, not a graph build and a restore.
"""
import dataclasses

import numpy as np
import tensorflow as tf

from t2t.core import errors
from t2t.core.modes import ModeKeys
from t2t.core import registry
from t2t.decoding import decoding
from t2t.decoding import input_checks
from t2t.decoding import predictor
from t2t.encoders import text_encoder
from t2t.model import model_hparams
from t2t.serving import export

_v1 = tf.compat.v1


@dataclasses.dataclass(frozen=True)
class DecodeSettings:
    """How to decode: beam_size 1 is greedy; `nbest` hypotheses per input (≤ beam_size);
    `alpha` T2T's length penalty exponent; `extra_length` ids beyond the input length;
    `stopping_bound` when a beam search ends ("max_length", T2T's, or "current_length")."""
    beam_size: int = 4
    alpha: float = 0.6
    nbest: int = 1
    extra_length: int = 100
    stopping_bound: str = "max_length"

    def __post_init__(self):
        input_checks.check_search_settings(self.beam_size, self.alpha, self.stopping_bound)
        if not 1 <= self.nbest <= self.beam_size:
            raise errors.UserError("nbest=%r: give 1 to beam_size (%d) hypotheses" % (
                self.nbest, self.beam_size))
        if self.extra_length < 1:
            raise errors.UserError("extra_length=%r: give a positive number of ids" %
                                   self.extra_length)

    def decode_hparams(self):
        """T2T's decode hparams for these settings."""
        return decoding.decode_hparams(
            "beam_size=%d,alpha=%r,extra_length=%d,return_beams=%s,stopping_bound=%s" % (
                self.beam_size, float(self.alpha), self.extra_length, self.nbest > 1,
                self.stopping_bound))


def pad_batch(id_lists):
    """int32 [batch, longest] with 0 (PAD) after each list."""
    batch = np.zeros([len(id_lists), max(len(ids) for ids in id_lists)], dtype=np.int32)
    for row, ids in enumerate(id_lists):
        batch[row, :len(ids)] = ids
    return batch


def until_eos(ids):
    """The ids before the first EOS or PAD: [5, 6, 1, 0] -> [5, 6]."""
    ids = [int(i) for i in np.asarray(ids).reshape(-1)]
    for position, token in enumerate(ids):
        if token in (text_encoder.EOS_ID, text_encoder.PAD_ID):
            return ids[:position]
    return ids


def hypotheses_of(outputs, scores, nbest):
    """Per example, [(ids, score)] best first from PREDICT outputs ([B, L] or [B, beams, L])."""
    outputs = np.asarray(outputs)
    results = []
    for row in range(outputs.shape[0]):
        if outputs.ndim == 3:
            beams = [until_eos(outputs[row, b]) for b in range(min(nbest, outputs.shape[1]))]
            row_scores = (np.asarray(scores)[row].reshape(-1) if scores is not None
                          else [0.0] * len(beams))
        else:
            beams = [until_eos(outputs[row])]
            row_scores = (np.asarray(scores).reshape(outputs.shape[0], -1)[row]
                          if scores is not None else [0.0])
        results.append([(ids, float(score)) for ids, score in zip(beams, row_scores)])
    return results


class _SessionGraph:
    """A graph with its session, restored from a checkpoint once."""

    def __init__(self, build, checkpoint_path, session_config):
        self.graph = tf.Graph()
        with self.graph.as_default():
            _v1.train.get_or_create_global_step()
            self.feeds, self.fetches = build()
            saver = _v1.train.Saver(sharded=True, allow_empty=True)
            local_init = [_v1.local_variables_initializer(), _v1.tables_initializer()]
            self.graph.finalize()
            self.session = _v1.Session(graph=self.graph, config=session_config)
            saver.restore(self.session, checkpoint_path)  # in graph mode, as the Saver was made
            self.session.run(local_init)

    def run(self, feed_dict):
        return self.session.run(self.fetches, {self.feeds[k]: v for k, v in feed_dict.items()})

    def close(self):
        self.session.close()


class CheckpointEngine:
    """A checkpoint decoded and scored in sessions that stay open (one graph per setting)."""

    name = "tensorflow"

    def __init__(self, model_name, hparams, checkpoint_path, threads=0):
        self.model_name = model_name
        self.hparams = hparams
        self.checkpoint_path = checkpoint_path
        self.session_config = predictor.default_session_config()
        if threads:
            self.session_config.intra_op_parallelism_threads = threads
            self.session_config.inter_op_parallelism_threads = 1
        p_hparams = model_hparams.attached_problem_hparams(hparams, "CheckpointEngine")
        self._space_ids = (p_hparams.input_space_id, p_hparams.target_space_id)
        self._graphs = {}

    def _space_features(self):
        return {"input_space_id": tf.constant(self._space_ids[0]),
                "target_space_id": tf.constant(self._space_ids[1])}

    def _decode_graph(self, settings):
        key = ("decode", settings)
        if key not in self._graphs:
            def build():
                inputs = _v1.placeholder(tf.int32, [None, None], name="inputs")
                features = dict(self._space_features(), inputs=tf.expand_dims(inputs, 2))
                predictions = predictor.model_predictions(
                    self.model_name, self.hparams, features, settings.decode_hparams())
                fetches = {"outputs": predictions["outputs"]}
                if "scores" in predictions:
                    fetches["scores"] = predictions["scores"]
                return {"inputs": inputs}, fetches
            self._graphs[key] = _SessionGraph(build, self.checkpoint_path, self.session_config)
        return self._graphs[key]

    def _score_graph(self):
        key = ("score",)
        if key not in self._graphs:
            def build():
                inputs = _v1.placeholder(tf.int32, [None, None], name="inputs")
                targets = _v1.placeholder(tf.int32, [None, None], name="targets")
                features = dict(self._space_features(),
                                inputs=tf.reshape(inputs, [tf.shape(inputs)[0], -1, 1, 1]),
                                targets=tf.reshape(targets, [tf.shape(targets)[0], -1, 1, 1]))
                model = registry.model(self.model_name)(
                    model_hparams.copy_hparams(self.hparams), ModeKeys.EVAL)
                logits, _ = model(features)
                logits = tf.reshape(logits, tf.concat([tf.shape(targets), [-1]], 0))
                log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32))
                token_log_probs = tf.gather(log_probs, targets, batch_dims=2)
                mask = tf.cast(tf.not_equal(targets, text_encoder.PAD_ID), tf.float32)
                return ({"inputs": inputs, "targets": targets},
                        {"log_prob": tf.reduce_sum(token_log_probs * mask, axis=1),
                         "tokens": tf.reduce_sum(mask, axis=1)})
            self._graphs[key] = _SessionGraph(build, self.checkpoint_path, self.session_config)
        return self._graphs[key]

    def decode(self, id_lists, settings):
        result = self._decode_graph(settings).run({"inputs": pad_batch(id_lists)})
        return hypotheses_of(result["outputs"], result.get("scores"), settings.nbest)

    def score(self, source_id_lists, target_id_lists):
        result = self._score_graph().run({"inputs": pad_batch(source_id_lists),
                                          "targets": pad_batch(target_id_lists)})
        return [(float(lp), int(n)) for lp, n in zip(result["log_prob"], result["tokens"])]

    def close(self):
        for graph in self._graphs.values():
            graph.close()
        self._graphs.clear()


class SavedModelEngine:
    """A t2t-exporter SavedModel: its "serialized_example" signature on tf.Examples of ids.

    Beam size, alpha and return_beams were fixed at export (`settings`); other settings
    are a one-line error. It decodes but does not score (the export has no such signature).
    """

    name = "saved_model"

    def __init__(self, path, export_settings):
        self.path = path
        self.settings = DecodeSettings(**{
            name: export_settings[name] for name in ("beam_size", "alpha", "nbest",
                                                     "extra_length", "stopping_bound")
            if name in export_settings})
        self._loaded = tf.saved_model.load(path)
        self._signature = self._loaded.signatures["serialized_example"]

    def decode(self, id_lists, settings):
        fixed = self.settings
        if (settings.beam_size, float(settings.alpha), settings.extra_length,
                settings.stopping_bound) != (fixed.beam_size, float(fixed.alpha),
                                             fixed.extra_length, fixed.stopping_bound) or \
                settings.nbest > fixed.nbest:
            raise errors.UserError(
                "%s was exported with beam_size=%d, alpha=%s, extra_length=%d, "
                "stopping_bound=%s and %d hypotheses per input; decode with those, or export "
                "again with --decode_hparams (or load the training folder, which decodes "
                "with any)" % (self.path, fixed.beam_size, fixed.alpha, fixed.extra_length,
                               fixed.stopping_bound, fixed.nbest))
        examples = [export.make_example(ids) for ids in id_lists]
        out = self._signature(serialized_example=tf.constant(examples))
        scores = out["scores"].numpy() if "scores" in out else None
        return hypotheses_of(out["outputs"].numpy(), scores, settings.nbest)

    def score(self, source_id_lists, target_id_lists):
        del source_id_lists, target_id_lists
        raise errors.UserError("%s is a SavedModel, which decodes only; score with the "
                               "training folder or a CTranslate2 export" % self.path)

    def close(self):
        self._loaded = self._signature = None
