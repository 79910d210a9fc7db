"""Hyperparameters for a small-corpus Transformer trained on CPU: `transformer_multi30k`.

    t2t-trainer --problem=translate_ende_multi30k --model=transformer \\
      --hparams_set=transformer_multi30k --data_dir=~/t2t_data --output_dir=~/t2t_train/m30k

Sized for Multi30k (29,000 pairs, 0.44M / 0.46M subword tokens en / de with the 8k
shared vocabulary, at most 55 a sentence) on 2 CPU cores, where a run is bounded by minutes rather than steps:

- 3 encoder and 3 decoder layers, d=256, filter 1024, 4 heads, the embedding shared by
  both sides and the softmax (shared vocabulary): 7.5M parameters. Depth and width are
  what a 29k-pair corpus supports without memorising it (the published small-data
  Transformers for Multi30k are 3-6 layers of 256-512); smaller is faster per step, and on
  2 cores each step is paid in wall-clock time.
- Dropout 0.2 after every sub-layer and 0.1 in attention and ReLU, label smoothing 0.1:
  a run of tens of minutes sees the 0.9M tokens of the corpus several times, and the
  model would overfit the small training set without them.
- Batches of 4,096 tokens (length buckets); `max_length` 128 drops no training pair.
- Learning rate `constant * linear_warmup * rsqrt_decay * rsqrt_hidden_size` with warmup 600
  steps and constant 1.5: the peak, 1.5 / sqrt(600) / 16 = 0.0038, is reached after ~4
  minutes instead of the hours a 4,000/8,000-step WMT warmup takes on CPU, and it decays
  as 1/sqrt(step) after that. Adam beta2 0.98 (the paper's; 0.997 trusts a second moment
  estimated over more steps than a CPU run takes).

`transformer_multi30k_range` is the space `--hparams_range` searches around it (learning
rate constant, warmup, dropouts, label smoothing):

    t2t-trainer --problem=translate_ende_multi30k --model=transformer \\
      --hparams_set=transformer_multi30k --hparams_range=transformer_multi30k_range \\
      --data_dir=~/t2t_data --output_dir=~/t2t_search_m30k --train_steps=3000 \\
      --local_eval_frequency=500 --autotune_max_trials=12 \\
      --autotune_objective=metrics-translate_ende_multi30k/neg_log_perplexity --autotune_maximize
"""
from t2t.core import registry
from t2t.models import transformer_hparams


@registry.register_hparams
def transformer_multi30k():
    """3+3 layers, d=256, filter 1024, 4 heads, dropout 0.2, warmup 600: Multi30k on CPU."""
    hparams = transformer_hparams.transformer_base()
    hparams.num_hidden_layers = 3
    hparams.hidden_size = 256
    hparams.filter_size = 1024
    hparams.num_heads = 4
    hparams.batch_size = 4096
    hparams.max_length = 128
    hparams.layer_prepostprocess_dropout = 0.2
    hparams.attention_dropout = 0.1
    hparams.relu_dropout = 0.1
    hparams.label_smoothing = 0.1
    hparams.shared_embedding_and_softmax_weights = True
    hparams.learning_rate_schedule = "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size"
    hparams.learning_rate_constant = 1.5
    hparams.learning_rate_warmup_steps = 600
    hparams.optimizer_adam_beta2 = 0.98
    return hparams


@registry.register_ranged_hparams
def transformer_multi30k_range(rhp):
    """What --hparams_range searches around transformer_multi30k."""
    rhp.set_float("learning_rate_constant", 0.5, 4.0, scale=rhp.LOG_SCALE)
    rhp.set_discrete("learning_rate_warmup_steps", [300, 600, 1000, 2000])
    rhp.set_float("layer_prepostprocess_dropout", 0.1, 0.3)
    rhp.set_float("attention_dropout", 0.0, 0.2)
    rhp.set_float("relu_dropout", 0.0, 0.2)
    rhp.set_discrete("label_smoothing", [0.0, 0.1, 0.2])
