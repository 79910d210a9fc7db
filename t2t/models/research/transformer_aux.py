"""A Transformer with auxiliary losses on shifted targets (https://arxiv.org/abs/1803.00144).

T2T 1.15.7's `tensor2tensor.models.research.transformer_aux`. Besides the usual next-token
loss, the decoder output at each position also predicts the target `shift` positions
earlier (shift > 0: "reconst_<shift>", reconstructing the past) or `-shift` positions later
(shift < 0: "predict_<-shift>"), each through its own softmax; the mean cross-entropies add
up to `losses["auxiliary"]`, which the trainer adds to the training loss.

    hp = registry.hparams("transformer_aux_tiny")     # shift_values "1,2"
    model = TransformerAux(hp, ModeKeys.TRAIN, problem_hparams)
    logits, losses = model({"inputs": ids_in, "targets": ids_out})
    losses["auxiliary"]    # xent(reconstruct t-1) + xent(reconstruct t-2)

Decoding is the Transformer's (cached fast greedy and beam search); the auxiliary softmaxes
are not used there. Variables: the Transformer's under `transformer_aux/`, plus
`transformer_aux/body/reconst_<k>/<modality>/softmax/*` (or `predict_<k>/...`) per shift.
"""
import tensorflow as tf
from absl import logging

from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.layers import losses as losses_lib
from t2t.layers import shape_utils
from t2t.models import transformer
from t2t.models import transformer_hparams

_v1 = tf.compat.v1


def shift_and_pad(tensor, shift, axis=0):
    """Shift `tensor` by `shift` positions along `axis`, filling with zeros; same shape.

        shift_and_pad([1, 2, 3, 4], 2)   # [0, 0, 1, 2]
        shift_and_pad([1, 2, 3, 4], -2)  # [3, 4, 0, 0]

    The length along `axis` may be dynamic; a shift of at least the length gives zeros.
    """
    tensor = tf.convert_to_tensor(tensor)
    rank = tensor.shape.rank
    if not -rank <= axis < rank:
        raise ValueError("shift_and_pad: axis %d out of range for a rank-%d tensor"
                         % (axis, rank))
    axis %= rank
    if shift == 0:
        return tensor
    length = shape_utils.shape_list(tensor)[axis]
    paddings = [[0, 0]] * rank
    paddings[axis] = [shift, 0] if shift > 0 else [0, -shift]
    padded = tf.pad(tensor, paddings)
    begin = [0] * rank
    size = [-1] * rank
    size[axis] = length
    if shift < 0:
        begin[axis] = -shift
    return tf.slice(padded, begin, size)


def parse_shift_values(shift_values):
    """"-4,2,6" -> [-4, 2, 6]; "" -> []. A zero or a non-integer is a one-line error."""
    shifts = []
    for item in (shift_values or "").split(","):
        item = item.strip()
        if not item:
            continue
        try:
            shift = int(item)
        except ValueError:
            raise ValueError("hparams.shift_values %r: %r is not an integer; give "
                             "comma-separated non-zero ints, e.g. '1,2,-1'"
                             % (shift_values, item)) from None
        if shift == 0:
            raise ValueError("hparams.shift_values %r: 0 is the training loss itself; give "
                             "non-zero shifts, e.g. '1,2,-1'" % shift_values)
        shifts.append(shift)
    return shifts


@registry.register_model
class TransformerAux(transformer.Transformer):
    """Attention net with auxiliary shifted-target losses. See the module docstring."""

    def _extract_shift_values(self):
        """The hparams' shift_values as ints ("-4,2,6": reconstruct 4 back, predict 2 and
        6 ahead)."""
        shifts = parse_shift_values(self._hparams.get("shift_values", ""))
        logging.info("Computing auxiliary losses for the following shifts: %s", shifts)
        return shifts

    def auxiliary_loss(self, body_output, features, shift):
        """(numerator, denominator) of the cross-entropy of predicting the targets shifted
        by `shift` from body_output [B, L, 1, d], through the softmax of scope
        "reconst_<shift>" (shift > 0) or "predict_<-shift>" (shift < 0)."""
        if not isinstance(shift, int) or shift == 0:
            raise ValueError("auxiliary_loss: shift must be a non-zero int, got %r" % (shift,))
        name = "reconst_%d" % shift if shift > 0 else "predict_%d" % -shift
        if not features or "targets_raw" not in features:
            raise ValueError("TransformerAux.auxiliary_loss needs features['targets_raw'] "
                             "(the target ids, which T2TModel.bottom keeps)")
        targets = shape_utils.flatten4d3d(features["targets_raw"])
        with _v1.variable_scope(name):
            logits = self.top(body_output, features)
            labels = shift_and_pad(targets, shift, axis=1)
            return losses_lib.padded_cross_entropy(logits, labels,
                                                   self._hparams.label_smoothing)

    def body(self, features):
        """The Transformer's body; outside PREDICT also losses["auxiliary"], the sum over
        shifts of each shift's mean cross-entropy."""
        output, losses = self._normalize_body_output(super().body(features))
        if self._hparams.mode == ModeKeys.PREDICT:
            return output, losses
        aux = 0.0
        for shift in self._extract_shift_values():
            loss_num, loss_den = self.auxiliary_loss(output, features, shift)
            # A batch whose shifted labels are all padding adds 0 (T2T's 0/0 was NaN).
            aux += loss_num / tf.maximum(loss_den, 1.0)
        losses["auxiliary"] = aux
        return output, losses


@registry.register_hparams
def transformer_aux_base():
    """transformer_base, unshared softmax, shifts "1,2,3,4" (reconstruct 1-4 back)."""
    hparams = transformer_hparams.transformer_base()
    hparams.shared_embedding_and_softmax_weights = False
    hparams.add_hparam("shift_values", "1,2,3,4")
    return hparams


@registry.register_hparams
def transformer_aux_tiny():
    """transformer_tiny, unshared softmax, shifts "1,2"."""
    hparams = transformer_hparams.transformer_tiny()
    hparams.shared_embedding_and_softmax_weights = False
    hparams.add_hparam("shift_values", "1,2")
    return hparams
