"""Decoding and scoring with CTranslate2, on a model `t2t-exporter --export_format=ctranslate2`
wrote (`t2t.serving.ctranslate2_export`).

    engine = CTranslate2Engine("/train/export/ctranslate2", threads=2)
    engine.decode([[12, 7, 1]], DecodeSettings(beam_size=4, alpha=0.6))
    # [[([33, 8], -0.52)]]

How t2t's decode settings map onto CTranslate2's:
- beam_size: the same (1 is greedy: the most likely id at each step, as t2t's greedy).
- alpha: T2T divides a finished hypothesis's log-probability by ((5 + n) / 6) ** alpha, n
  its length including EOS (GNMT's penalty); CTranslate2's own `length_penalty` divides by
  n ** alpha, n without EOS. So that alpha means what it means in t2t, beam search runs
  in CTranslate2 with no penalty (`length_penalty=0`), returns its beam_size finished
  hypotheses with their log-probabilities, and they are ranked here by T2T's penalty. What
  still differs: T2T applies the penalty at every step, when it compares finished
  hypotheses with the best alive one (which also decides when its search stops);
  CTranslate2 stops when beam_size hypotheses have finished. On the Multi30k model (beam
  4, alpha 0.6, 1,000 test sentences) the two agree on 991 sentences, BLEU 26.19 against
  TensorFlow's 26.18 (CTranslate2's own penalty: 945 sentences, BLEU 26.39).
- extra_length: `max_decoding_length` = the batch's longest input + extra_length, as T2T's
  decode length (its input length + extra_length) but per batch, and at most the export's
  position table (1,024).
- nbest: the best `nbest` of the beam_size hypotheses.
Scores: log-probabilities divided by T2T's length penalty (beam search), or the plain
log-probability (greedy); `score` sums the per-token log-probabilities CTranslate2 gives,
EOS included.
"""
from absl import logging

from t2t.core import errors
from t2t.encoders import text_encoder
from t2t.serving import ctranslate2_export


def _tokens(ids):
    return [str(int(i)) for i in ids]


def _ids(tokens):
    ids = []
    for token in tokens:
        token_id = int(token)
        if token_id in (text_encoder.EOS_ID, text_encoder.PAD_ID):
            break
        ids.append(token_id)
    return ids


def gnmt_length_penalty(length, alpha):
    """T2T's (GNMT's) length penalty ((5 + length) / 6) ** alpha; `length` counts EOS."""
    return ((5.0 + length) / 6.0) ** float(alpha)


class CTranslate2Engine:
    """A CTranslate2 model folder decoded on the CPU with `threads` threads (0: CTranslate2's
    default). `compute_type` is CTranslate2's ("default": the weights' own type)."""

    name = "ctranslate2"

    def __init__(self, path, threads=0, compute_type="default", max_positions=None):
        self.path = path
        self.max_positions = max_positions or ctranslate2_export.MAX_POSITIONS
        self.translator = ctranslate2_export.load_translator(
            path, device="cpu", compute_type=compute_type, inter_threads=1,
            intra_threads=threads)

    def decode(self, id_lists, settings):
        if settings.stopping_bound != "max_length":
            raise errors.UserError(
                "stopping_bound=%r is for the TensorFlow engines: CTranslate2 ends a beam "
                "search when beam_size hypotheses have finished" % settings.stopping_bound)
        too_long = sum(1 for ids in id_lists if len(ids) > self.max_positions)
        if too_long:
            logging.warning("%d of %d inputs are longer than the CTranslate2 export's %d "
                            "positions; CTranslate2 cuts them there", too_long, len(id_lists),
                            self.max_positions)
        longest = min(max(len(ids) for ids in id_lists), self.max_positions)
        max_length = min(longest + settings.extra_length, self.max_positions - 1)
        beam = settings.beam_size > 1
        results = self.translator.translate_batch(
            [_tokens(ids) for ids in id_lists], beam_size=settings.beam_size,
            length_penalty=0.0, num_hypotheses=settings.beam_size if beam else 1,
            max_input_length=self.max_positions, max_decoding_length=max_length,
            return_scores=True)
        decodes = []
        for result in results:
            hypotheses = [(_ids(tokens), float(score))
                          for tokens, score in zip(result.hypotheses, result.scores)]
            if beam:
                hypotheses = sorted(
                    ((ids, score / gnmt_length_penalty(len(ids) + 1, settings.alpha))
                     for ids, score in hypotheses), key=lambda hypothesis: -hypothesis[1])
            decodes.append(hypotheses[:settings.nbest])
        return decodes

    def score(self, source_id_lists, target_id_lists):
        for ids in target_id_lists:
            if not ids or ids[-1] != text_encoder.EOS_ID:
                raise errors.UserError("CTranslate2Engine.score: targets end with EOS (id 1)")
        results = self.translator.score_batch(
            [_tokens(ids) for ids in source_id_lists],
            [_tokens(ids[:-1]) for ids in target_id_lists],  # CTranslate2 adds the EOS
            max_input_length=self.max_positions)
        return [(float(sum(result.log_probs)), len(result.log_probs)) for result in results]

    def close(self):
        self.translator = None
