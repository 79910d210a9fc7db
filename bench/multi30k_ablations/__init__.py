"""t2t's side of bench_multi30k.py's ablations, as a `--t2t_usr_dir`: hparams sets that
differ from `transformer_multi30k` in one thing each.

- `transformer_multi30k_glorot_embeddings`: the shared embedding / softmax matrix starts
  from Glorot uniform over [vocabulary, d] (std 0.0155 at 8,080 x 256), as the peers'
  does, instead of the symbol modality's normal(0, d^-0.5) (std 0.0625). Everything else,
  the sqrt(d) scaling of the embeddings included, stays.

    t2t-trainer --t2t_usr_dir=bench/multi30k_ablations \\
        --hparams_set=transformer_multi30k_glorot_embeddings ...
"""
import functools
import math

import tensorflow as tf

from t2t.core import registry
from t2t.layers import modalities
from t2t.models import transformer_multi30k

_v1 = tf.compat.v1


def with_glorot_variables(function):
    """`function`, a bottom (x, hparams, vocab_size) or top (body, targets, hparams,
    vocab_size), with the [vocab_size, hidden_size] matrix it creates drawn from Glorot
    uniform over the whole matrix: U(+-sqrt(6 / (vocab_size + hidden_size))) for each of
    its shards (`symbol_modality_num_shards`: Glorot per shard would see 1/16 of the rows).
    The variables keep their names (the current scope is re-entered)."""
    @functools.wraps(function)  # keeps `pointwise` of a top
    def wrapped(*args):
        hparams, vocab_size = args[-2], args[-1]
        limit = math.sqrt(6.0 / (vocab_size + hparams.hidden_size))

        def uniform_getter(getter, name, *getter_args, **kwargs):
            kwargs["initializer"] = _v1.random_uniform_initializer(-limit, limit)
            return getter(name, *getter_args, **kwargs)

        with _v1.variable_scope(_v1.get_variable_scope(), custom_getter=uniform_getter):
            return function(*args)
    return wrapped


@registry.register_hparams
def transformer_multi30k_glorot_embeddings():
    """transformer_multi30k with the peers' embedding initialization (Glorot uniform)."""
    hparams = transformer_multi30k.transformer_multi30k()
    hparams.bottom = {"inputs": with_glorot_variables(modalities.symbol_bottom),
                      "targets": with_glorot_variables(modalities.symbol_targets_bottom)}
    hparams.top = {"targets": with_glorot_variables(modalities.symbol_top)}
    return hparams
