"""transformer_multi30k: the registered set and its search range (training: see
tests/problems/test_translate_multi30k.py, which trains it, shrunk, on a Multi30k slice)."""
import tensorflow as tf

from t2t.core import registry
from t2t.optim import learning_rate


def test_transformer_multi30k_is_small_regularized_and_warms_up_fast():
    hparams = registry.hparams("transformer_multi30k")
    assert (hparams.num_hidden_layers, hparams.hidden_size, hparams.filter_size,
            hparams.num_heads) == (3, 256, 1024, 4)
    assert hparams.layer_prepostprocess_dropout == 0.2 and hparams.label_smoothing == 0.1
    assert hparams.shared_embedding_and_softmax_weights
    # Parameters for the 8,079-id Multi30k vocabulary: one shared embedding/softmax matrix,
    # 3 encoder layers (self-attention, FFN), 3 decoder layers (+ encoder-decoder attention).
    d, f, vocab = hparams.hidden_size, hparams.filter_size, 8079
    attention, ffn, norm = 4 * d * d, 2 * d * f + f + d, 2 * d
    params = (vocab * d + 3 * (attention + ffn + 2 * norm) + 3 * (2 * attention + ffn + 3 * norm)
              + 2 * norm)
    assert 7.0e6 < params < 8.0e6
    # The schedule peaks at the end of the 600-step warmup, then decays as 1/sqrt(step).
    def rate(step):
        value = 1.0
        for name in hparams.learning_rate_schedule.split("*"):
            value *= float(learning_rate.learning_rate_factor(name, tf.constant(float(step)),
                                                              hparams))
        return value

    peak = rate(600)
    assert abs(peak - 1.5 / 600 ** 0.5 / 16) < 1e-6
    assert abs(rate(300) - peak / 2) < 1e-6 and abs(rate(2400) - peak / 2) < 1e-6


def test_transformer_multi30k_range_names_existing_hparams():
    hparams = registry.hparams("transformer_multi30k")
    ranged = registry.ranged_hparams("transformer_multi30k_range")
    assert ranged is not None
    for name in ("learning_rate_constant", "learning_rate_warmup_steps",
                 "layer_prepostprocess_dropout", "label_smoothing"):
        assert name in hparams.values()
