"""A trained model kept loaded, decoding and scoring text: what `t2t.load` returns.

    model = t2t.load("~/t2t_train/m30k")              # a training folder (latest checkpoint)
    model.decode(["A man rides a horse."])             # ["Ein Mann reitet auf einem Pferd."]
    model.decode(sentences, beam_size=1)               # greedy
    model.decode(["A dog."], beam_size=4, nbest=2)     # [[Hypothesis("Ein Hund.", -0.3), ...]]
    model.score(["A dog."], ["Ein Hund."])             # [-0.21]: mean log-prob per target id

A list is decoded in batches of inputs of similar length (longest first), and the results
come back in the input order. The model and its weights load once; each call then costs
the model's compute.
"""
import collections
import dataclasses
from typing import List, Sequence, Union

from absl import logging

from t2t.core import errors
from t2t.decoding import input_checks
from t2t.encoders import text_encoder
import t2t.inference.tf_engines as tf_engines

Hypothesis = collections.namedtuple("Hypothesis", ["text", "score"])
Hypothesis.__doc__ = """One decoded output: its text and score (its log-probability, with
the length penalty of beam search)."""

DEFAULT_BATCH_SIZE = 32


def _as_list(inputs, what):
    if isinstance(inputs, (str, bytes)):
        return [inputs], True
    try:
        return list(inputs), False
    except TypeError:
        raise errors.UserError("%s must be a string or a list of strings, not %s" % (
            what, type(inputs).__name__)) from None


@dataclasses.dataclass(frozen=True)
class InputLimit:
    """Inputs longer than `ids` (EOS included) are cut to it when `cut`, else decoded in
    full with one warning (as t2t-decoder does); `source` says what sets the limit."""
    ids: int
    source: str
    cut: bool = False


class TrainedModel:
    """A model with its encoders and a decoding engine (TensorFlow or CTranslate2).

    Made by `t2t.load`; `engine` is "tensorflow" (a checkpoint in an open session),
    "saved_model" or "ctranslate2". Use it as a context manager or call `close()` to free
    the engine.
    """

    def __init__(self, engine, encoders, source, input_limit=None, settings=None):
        self.engine = engine
        self.source = source
        self.inputs_encoder = encoders["inputs"]
        self.targets_encoder = encoders["targets"]
        self.input_limit = input_limit
        self.default_settings = settings or tf_engines.DecodeSettings()

    # ------------------------------------------------------------------ properties
    @property
    def engine_name(self):
        return self.engine.name

    @property
    def path(self):
        return self.source.model_path or self.source.checkpoint_path

    def __repr__(self):
        return "<t2t TrainedModel %s (%s, %s engine)>" % (
            self.source.assets.problem, self.path, self.engine_name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.engine.close()

    # ------------------------------------------------------------------ encoding
    def encode_inputs(self, texts, what="inputs"):
        """Ids (EOS appended) of each text; inputs longer than the input limit are cut to it
        (max_input_size) or decoded in full, with one warning either way."""
        id_lists = []
        for index, text in enumerate(texts):
            try:
                id_lists.append(self.inputs_encoder.encode(text))
            except (ValueError, KeyError) as error:
                raise errors.UserError("%s %d cannot be encoded: %s" % (
                    what, index, str(error).strip())) from None
        limit = self.input_limit
        if limit is not None:
            long = input_checks.count_long_inputs(id_lists, limit.ids)
            if limit.cut:
                id_lists, _ = input_checks.cut_long_inputs(id_lists, limit.ids)
            if long:
                logging.warning("%s", input_checks.long_inputs_warning(
                    long, len(id_lists), limit.ids, limit.source, what, cut=limit.cut,
                    how_to_cut="t2t.load(..., max_input_size=%d)"))
        return [ids + [text_encoder.EOS_ID] for ids in id_lists]

    def _settings(self, beam_size, alpha, nbest, extra_length, stopping_bound=None):
        base = self.default_settings
        stopping_bound = base.stopping_bound if stopping_bound is None else stopping_bound
        input_checks.check_search_settings(base.beam_size if beam_size is None else beam_size,
                                           base.alpha if alpha is None else alpha,
                                           stopping_bound)
        return tf_engines.DecodeSettings(
            stopping_bound=stopping_bound,
            beam_size=base.beam_size if beam_size is None else int(beam_size),
            alpha=base.alpha if alpha is None else float(alpha),
            nbest=1 if nbest is None else int(nbest),
            extra_length=base.extra_length if extra_length is None else int(extra_length))

    # ------------------------------------------------------------------ decoding
    def decode(self, inputs: Union[str, Sequence[str]], beam_size=None, alpha=None,
               nbest=None, batch_size=DEFAULT_BATCH_SIZE, extra_length=None, progress=None,
               stopping_bound=None) -> Union[str, List[str], List[List[Hypothesis]]]:
        """Decode `inputs` (a list of strings, or one string).

        Args:
          beam_size: 1 is greedy; default the model's (4, or what a SavedModel was
            exported with).
          alpha: the length penalty exponent (default 0.6).
          nbest: return this many `Hypothesis(text, score)` per input (best first) instead
            of the best text.
          batch_size: inputs decoded together (sorted by length: similar lengths share a
            batch).
          extra_length: ids decoded beyond the input's length (default 100).
          progress: a `t2t.core.progress.Progress` updated after each batch (inputs and
            output ids), for long lists.
          stopping_bound: when a beam search ends: "max_length" (T2T's exact search, the
            default) or "current_length" (the peers' sooner stop: once a sentence's best
            finished hypothesis beats every alive one at its current length; about 1.5x
            faster at beam 4, a few outputs differ). TensorFlow engines only.

        Returns the decoded strings in input order (one string for one string in), or with
        `nbest` a list of hypotheses per input. Empty inputs decode to "" (with a warning).
        """
        texts, single = _as_list(inputs, "inputs")
        texts = [input_checks.text_of(text, "input %d" % index)
                 for index, text in enumerate(texts)]
        settings = self._settings(beam_size, alpha, nbest, extra_length, stopping_bound)
        if batch_size < 1:
            raise errors.UserError("batch_size=%r: give 1 or more inputs a batch" % batch_size)
        empty = [i for i, text in enumerate(texts) if not text.strip()]
        if empty:
            logging.warning("%d of %d inputs are empty; their decodes are empty", len(empty),
                            len(texts))
        todo = [i for i, text in enumerate(texts) if text.strip()]
        id_lists = dict(zip(todo, self.encode_inputs([texts[i] for i in todo])))
        results = {i: [Hypothesis("", 0.0)] for i in empty}
        order = sorted(todo, key=lambda i: -len(id_lists[i]))  # stable: ties keep their order
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            decoded = self.engine.decode([id_lists[i] for i in chunk], settings)
            for index, hypotheses in zip(chunk, decoded):
                results[index] = [Hypothesis(self.targets_encoder.decode(ids), score)
                                  for ids, score in hypotheses]
            if progress is not None:
                progress.update(len(chunk), tokens=sum(len(hypotheses[0][0]) + 1
                                                       for hypotheses in decoded))
        ordered = [results[i] for i in range(len(texts))]
        if nbest is None:
            ordered = [hypotheses[0].text for hypotheses in ordered]
        return ordered[0] if single else ordered

    def score(self, inputs, targets, batch_size=DEFAULT_BATCH_SIZE) -> List[float]:
        """The mean log-probability per target id (EOS included) of each (input, target).

            model.score(["A dog."], ["Ein Hund."])      # [-0.21]
        """
        inputs, _ = _as_list(inputs, "inputs")
        targets, _ = _as_list(targets, "targets")
        if len(inputs) != len(targets):
            raise errors.UserError("score needs as many targets as inputs (%d inputs, %d "
                                   "targets)" % (len(inputs), len(targets)))
        sources = self.encode_inputs([input_checks.text_of(t, "input %d" % i)
                                      for i, t in enumerate(inputs)])
        target_ids = []
        for index, text in enumerate(targets):
            try:
                target_ids.append(self.targets_encoder.encode(
                    input_checks.text_of(text, "target %d" % index)) + [text_encoder.EOS_ID])
            except (ValueError, KeyError) as error:
                raise errors.UserError("target %d cannot be encoded: %s" % (
                    index, str(error).strip())) from None
        scores = [0.0] * len(sources)
        order = sorted(range(len(sources)), key=lambda i: -len(sources[i]))
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            results = self.engine.score([sources[i] for i in chunk],
                                        [target_ids[i] for i in chunk])
            for index, (log_prob, tokens) in zip(chunk, results):
                scores[index] = log_prob / max(tokens, 1)
        return scores
