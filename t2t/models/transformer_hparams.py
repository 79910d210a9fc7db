"""The Transformer's registered hparams sets, with T2T 1.15.7's names and values.

    hp = transformer_relative_tiny()    # 2 layers, d=128, relative self-attention (window 20)
    hp.self_attention_type, hp.pos      # ('dot_product_relative', None)

`t2t.models.transformer` re-exports every set under T2T's module path
(`transformer.transformer_base()`), so ported user code that starts its own sets from
these keeps working; the sets live here so the model module stays one concept.
Image, speech and memory-model sets (librispeech, cifar, imagenet, the vq/gating sets)
are left out, as their models are (docs/t2t_differences.md).
"""
from t2t.core import registry
from t2t.layers import common_hparams


# ---------------------------------------------------------------------------- base
@registry.register_hparams
def transformer_base_v1():
    """The original paper's base model: post-norm, 6 layers, d=512, noam schedule."""
    hparams = common_hparams.basic_params1()
    hparams.norm_type = "layer"
    hparams.hidden_size = 512
    hparams.batch_size = 4096
    hparams.max_length = 256
    hparams.clip_grad_norm = 0.0  # No gradient clipping.
    hparams.optimizer_adam_epsilon = 1e-9
    hparams.learning_rate_schedule = "legacy"
    hparams.learning_rate_decay_scheme = "noam"
    hparams.learning_rate = 0.1
    hparams.learning_rate_warmup_steps = 4000
    hparams.initializer_gain = 1.0
    hparams.num_hidden_layers = 6
    hparams.initializer = "uniform_unit_scaling"
    hparams.weight_decay = 0.0
    hparams.optimizer_adam_beta1 = 0.9
    hparams.optimizer_adam_beta2 = 0.98
    hparams.num_sampled_classes = 0
    hparams.label_smoothing = 0.1
    hparams.shared_embedding_and_softmax_weights = True
    hparams.symbol_modality_num_shards = 16

    hparams.add_hparam("filter_size", 2048)
    # Layer counts; 0 falls back on num_hidden_layers.
    hparams.add_hparam("num_encoder_layers", 0)
    hparams.add_hparam("num_decoder_layers", 0)
    # Attention.
    hparams.add_hparam("num_heads", 8)
    hparams.add_hparam("attention_key_channels", 0)
    hparams.add_hparam("attention_value_channels", 0)
    hparams.add_hparam("ffn_layer", "dense_relu_dense")
    hparams.add_hparam("parameter_attention_key_channels", 0)
    hparams.add_hparam("parameter_attention_value_channels", 0)
    # Every hparam ending in "dropout" is set to 0.0 outside training.
    hparams.add_hparam("attention_dropout", 0.0)
    hparams.add_hparam("attention_dropout_broadcast_dims", "")
    hparams.add_hparam("relu_dropout", 0.0)
    hparams.add_hparam("relu_dropout_broadcast_dims", "")
    hparams.add_hparam("pos", "timing")  # timing, emb, none
    hparams.add_hparam("position_features", "")
    hparams.add_hparam("nbr_decoder_problems", 1)
    hparams.add_hparam("proximity_bias", False)
    hparams.add_hparam("causal_decoder_self_attention", True)
    hparams.add_hparam("use_pad_remover", True)
    hparams.add_hparam("self_attention_type", "dot_product")
    hparams.add_hparam("conv_first_kernel", 3)
    hparams.add_hparam("attention_variables_3d", False)
    hparams.add_hparam("use_target_space_embedding", True)
    # Only used when ffn_layer == "local_moe_tpu".
    hparams.add_hparam("moe_overhead_train", 1.0)
    hparams.add_hparam("moe_overhead_eval", 2.0)
    hparams.moe_num_experts = 16
    hparams.moe_loss_coef = 1e-3
    # If set, used instead of the problem name in metric names.
    hparams.add_hparam("overload_eval_metric_name", "")
    # Masked (causal) attention in the encoder.
    hparams.add_hparam("unidirectional_encoder", False)
    # Hard attention: keep the k largest weights (0 = off).
    hparams.add_hparam("hard_attention_k", 0)
    hparams.add_hparam("gumbel_noise_weight", 0.0)
    return hparams


@registry.register_hparams
def transformer_base_v2():
    """Pre-norm ("n" before, "da" after each layer), dropout everywhere, warmup 8000."""
    hparams = transformer_base_v1()
    hparams.layer_preprocess_sequence = "n"
    hparams.layer_postprocess_sequence = "da"
    hparams.layer_prepostprocess_dropout = 0.1
    hparams.attention_dropout = 0.1
    hparams.relu_dropout = 0.1
    hparams.learning_rate_warmup_steps = 8000
    hparams.learning_rate = 0.2
    return hparams


@registry.register_hparams
def transformer_base_v3():
    """v2 with Adam beta2 0.997 and the factored learning-rate schedule (constant 2.0)."""
    hparams = transformer_base_v2()
    hparams.optimizer_adam_beta2 = 0.997
    # Equivalent to v2's noam schedule, in the new notation.
    hparams.learning_rate_schedule = "constant*linear_warmup*rsqrt_decay*rsqrt_hidden_size"
    hparams.learning_rate_constant = 2.0
    return hparams


@registry.register_hparams
def transformer_base():
    """The current base Transformer (= transformer_base_v3)."""
    return transformer_base_v3()


@registry.register_hparams
def transformer_big():
    """d=1024, filter 4096, 16 heads; batch 2048 to fit a 12 GB GPU; dropout 0.3."""
    hparams = transformer_base()
    hparams.hidden_size = 1024
    hparams.filter_size = 4096
    hparams.batch_size = 2048
    hparams.num_heads = 16
    hparams.layer_prepostprocess_dropout = 0.3
    return hparams


@registry.register_hparams
def transformer_small():
    """2 layers, d=256, filter 1024, 4 heads."""
    hparams = transformer_base()
    hparams.num_hidden_layers = 2
    hparams.hidden_size = 256
    hparams.filter_size = 1024
    hparams.num_heads = 4
    return hparams


@registry.register_hparams
def transformer_tiny():
    """2 layers, d=128, filter 512, 4 heads."""
    hparams = transformer_base()
    hparams.num_hidden_layers = 2
    hparams.hidden_size = 128
    hparams.filter_size = 512
    hparams.num_heads = 4
    return hparams


@registry.register_hparams
def transformer_test():
    """For unit tests: 2 layers, d=16, filter 8, 2 heads."""
    hparams = transformer_base()
    hparams.num_hidden_layers = 2
    hparams.hidden_size = 16
    hparams.filter_size = 8
    hparams.num_heads = 2
    return hparams


@registry.register_hparams
def transformer_base_single_gpu():
    """Base model for one GPU: batch 1024, constant 0.1, warmup 16000."""
    hparams = transformer_base()
    hparams.batch_size = 1024
    hparams.learning_rate_schedule = "constant*linear_warmup*rsqrt_decay"
    hparams.learning_rate_constant = 0.1
    hparams.learning_rate_warmup_steps = 16000
    return hparams


@registry.register_hparams
def transformer_big_single_gpu():
    """Big model for one GPU: dropout 0.1, warmup 16000."""
    hparams = transformer_big()
    hparams.layer_prepostprocess_dropout = 0.1
    hparams.learning_rate_warmup_steps = 16000
    return hparams


def update_hparams_for_tpu(hparams):
    """TPU settings: Adafactor with rsqrt decay, one embedding shard, fixed length 64."""
    # Adafactor needs less memory than Adam.
    hparams.optimizer = "Adafactor"
    hparams.learning_rate_schedule = "rsqrt_decay"
    hparams.learning_rate_warmup_steps = 10000
    # Avoid an expensive concat on TPU.
    hparams.symbol_modality_num_shards = 1
    # TPUs need fixed shapes: longer sequences are dropped, shorter ones padded.
    hparams.max_length = 64
    # TPUs have less memory than GPUs.
    if hparams.batch_size > 2048:
        hparams.batch_size = 2048
    # Broadcast dropout noise to save memory.
    hparams.attention_dropout_broadcast_dims = "0,1"  # batch, heads
    hparams.relu_dropout_broadcast_dims = "1"  # length
    hparams.layer_prepostprocess_dropout_broadcast_dims = "1"  # length
    return hparams


@registry.register_hparams
def transformer_tpu():
    """transformer_base with `update_hparams_for_tpu`."""
    return update_hparams_for_tpu(transformer_base())


@registry.register_hparams
def transformer_big_tpu():
    """transformer_big with `update_hparams_for_tpu`."""
    return update_hparams_for_tpu(transformer_big())


@registry.register_hparams
def transformer_tiny_tpu():
    """transformer_tiny with `update_hparams_for_tpu`."""
    return update_hparams_for_tpu(transformer_tiny())


# ---------------------------------------------------------------------------- search ranges
# For t2t-trainer --hparams_range=NAME (T2T's ranges; the search runs on Optuna).
@registry.register_ranged_hparams
def transformer_base_range(rhp):
    """Learning rate, warmup, initializer gain, Adam betas and weight decay around base."""
    rhp.set_float("learning_rate", 0.3, 3.0, scale=rhp.LOG_SCALE)
    rhp.set_discrete("learning_rate_warmup_steps", [1000, 2000, 4000, 8000, 16000])
    rhp.set_float("initializer_gain", 0.5, 2.0)
    rhp.set_float("optimizer_adam_beta1", 0.85, 0.95)
    rhp.set_float("optimizer_adam_beta2", 0.97, 0.99)
    rhp.set_float("weight_decay", 0.0, 1e-4)


@registry.register_ranged_hparams
def transformer_tiny_tpu_range(rhp):
    """Learning rate and weight decay (T2T's range for transformer_tiny_tpu)."""
    rhp.set_float("learning_rate", 0.3, 3.0, scale=rhp.LOG_SCALE)
    rhp.set_float("weight_decay", 0.0, 2.0)


@registry.register_ranged_hparams
def transformer_tpu_range(rhp):
    """transformer_base_range with weight decay up to 2.0 (T2T's range for the TPU sets)."""
    transformer_base_range(rhp)
    rhp.set_float("weight_decay", 0.0, 2.0)


# ---------------------------------------------------------------------------- sizes
def _with(hparams, **values):
    for name, value in values.items():
        setattr(hparams, name, value)
    return hparams


@registry.register_hparams
def transformer_l2():
    """transformer_base with 2 layers."""
    return _with(transformer_base(), num_hidden_layers=2)


@registry.register_hparams
def transformer_l4():
    """transformer_base with 4 layers."""
    return _with(transformer_base(), num_hidden_layers=4)


@registry.register_hparams
def transformer_l8():
    """transformer_base with 8 layers."""
    return _with(transformer_base(), num_hidden_layers=8)


@registry.register_hparams
def transformer_l10():
    """transformer_base with 10 layers."""
    return _with(transformer_base(), num_hidden_layers=10)


@registry.register_hparams
def transformer_h1():
    """transformer_base with 1 attention head."""
    return _with(transformer_base(), num_heads=1)


@registry.register_hparams
def transformer_h4():
    """transformer_base with 4 attention heads."""
    return _with(transformer_base(), num_heads=4)


@registry.register_hparams
def transformer_h16():
    """transformer_base with 16 attention heads."""
    return _with(transformer_base(), num_heads=16)


@registry.register_hparams
def transformer_h32():
    """transformer_base with 32 attention heads."""
    return _with(transformer_base(), num_heads=32)


@registry.register_hparams
def transformer_k128():
    """transformer_base with 128 attention key channels."""
    return _with(transformer_base(), attention_key_channels=128)


@registry.register_hparams
def transformer_k256():
    """transformer_base with 256 attention key channels."""
    return _with(transformer_base(), attention_key_channels=256)


@registry.register_hparams
def transformer_ff1024():
    """transformer_base with filter size 1024."""
    return _with(transformer_base(), filter_size=1024)


@registry.register_hparams
def transformer_ff4096():
    """transformer_base with filter size 4096."""
    return _with(transformer_base(), filter_size=4096)


@registry.register_hparams
def transformer_dr0():
    """transformer_base without pre/post-process dropout."""
    return _with(transformer_base(), layer_prepostprocess_dropout=0.0)


@registry.register_hparams
def transformer_dr2():
    """transformer_base with pre/post-process dropout 0.2."""
    return _with(transformer_base(), layer_prepostprocess_dropout=0.2)


@registry.register_hparams
def transformer_ls0():
    """transformer_base without label smoothing."""
    return _with(transformer_base(), label_smoothing=0.0)


@registry.register_hparams
def transformer_ls2():
    """transformer_base with label smoothing 0.2."""
    return _with(transformer_base(), label_smoothing=0.2)


@registry.register_hparams
def transformer_hs256():
    """transformer_base with hidden size 256."""
    return _with(transformer_base(), hidden_size=256)


@registry.register_hparams
def transformer_hs1024():
    """transformer_base with hidden size 1024."""
    return _with(transformer_base(), hidden_size=1024)


@registry.register_hparams
def transformer_big_dr1():
    """Big sizes (d=1024, filter 4096, 16 heads) on transformer_base, dropout 0.1."""
    return _with(transformer_base(), hidden_size=1024, filter_size=4096, num_heads=16,
                 layer_prepostprocess_dropout=0.1)


@registry.register_hparams
def transformer_big_enfr():
    """transformer_big_dr1 with filter 8192 and separate softmax weights (WMT En-Fr)."""
    return _with(transformer_big_dr1(), shared_embedding_and_softmax_weights=False,
                 filter_size=8192, layer_prepostprocess_dropout=0.1)


@registry.register_hparams
def transformer_big_enfr_tpu():
    """transformer_big_enfr with 8 heads, for TPUs."""
    hparams = _with(transformer_big_enfr(), num_heads=8)
    return update_hparams_for_tpu(hparams)


@registry.register_hparams
def transformer_big_dr2():
    """transformer_big_dr1 with dropout 0.2."""
    return _with(transformer_big_dr1(), layer_prepostprocess_dropout=0.2)


@registry.register_hparams
def transformer_timeseries():
    """transformer_small with batch 256 and warmup 2000."""
    return _with(transformer_small(), batch_size=256, learning_rate_warmup_steps=2000)


@registry.register_hparams
def transformer_timeseries_tpu():
    """transformer_timeseries for TPUs, keeping its batch of 256."""
    hparams = update_hparams_for_tpu(transformer_timeseries())
    hparams.batch_size = 256
    return hparams


# ---------------------------------------------------------------------------- recipes
@registry.register_hparams
def transformer_base_multistep8():
    """transformer_base simulating 8 GPUs: Adam accumulating gradients over 8 steps."""
    return _with(transformer_base(), optimizer="multistep_adam",
                 optimizer_multistep_accumulate_steps=8)


@registry.register_hparams
def transformer_cubbitt():
    """The CUBBITT (Czech-English) recipe: big model, Adafactor, batch 2900, length 150."""
    return _with(transformer_big_single_gpu(), learning_rate_schedule="rsqrt_decay",
                 batch_size=2900, learning_rate_warmup_steps=8000, max_length=150,
                 layer_prepostprocess_dropout=0, optimizer="Adafactor")


@registry.register_hparams
def transformer_parsing_base():
    """Constituency parsing on WSJ alone: d=1024, dropout 0.2, separate softmax."""
    return _with(transformer_base(), attention_dropout=0.2, layer_prepostprocess_dropout=0.2,
                 max_length=512, learning_rate_warmup_steps=16000, hidden_size=1024,
                 learning_rate=0.05, shared_embedding_and_softmax_weights=False)


@registry.register_hparams
def transformer_parsing_big():
    """Parsing on WSJ, semi-supervised: transformer_big, length 512."""
    return _with(transformer_big(), max_length=512, shared_source_target_embedding=False,
                 learning_rate_warmup_steps=4000, layer_prepostprocess_dropout=0.1,
                 batch_size=2048, learning_rate=0.05)


@registry.register_hparams
def transformer_parsing_ice():
    """Parsing and tagging Icelandic text."""
    return _with(transformer_base_single_gpu(), batch_size=4096,
                 shared_embedding_and_softmax_weights=False)


@registry.register_hparams
def transformer_prepend_v2():
    """Decoder-only over "inputs 0 targets" rows, inputs masked like targets (v2 base)."""
    return _with(transformer_base_v2(), prepend_mode="prepend_inputs_masked_attention",
                 max_length=0)


@registry.register_hparams
def transformer_prepend_v1():
    """transformer_prepend_v2 on the v1 base."""
    return _with(transformer_base_v1(), prepend_mode="prepend_inputs_masked_attention",
                 max_length=0)


@registry.register_hparams
def transformer_prepend():
    """= transformer_prepend_v2."""
    return transformer_prepend_v2()


@registry.register_hparams
def transformer_relative():
    """Relative position representations (Shaw et al. 2018) instead of timing signals."""
    return _with(transformer_base(), pos=None, self_attention_type="dot_product_relative",
                 max_relative_position=20)


@registry.register_hparams
def transformer_relative_tiny():
    """transformer_relative at transformer_tiny's sizes."""
    return _with(transformer_relative(), num_hidden_layers=2, hidden_size=128,
                 filter_size=512, num_heads=4)


@registry.register_hparams
def transformer_relative_big():
    """transformer_big with relative self-attention."""
    return _with(transformer_big(), pos=None, self_attention_type="dot_product_relative",
                 max_relative_position=20)


@registry.register_hparams
def transformer_clean():
    """transformer_base_v2 without dropout, label smoothing or a length limit."""
    return _with(transformer_base_v2(), label_smoothing=0.0, layer_prepostprocess_dropout=0.0,
                 attention_dropout=0.0, relu_dropout=0.0, max_length=0)


@registry.register_hparams
def transformer_clean_big():
    """transformer_clean with d=1024, filter 4096."""
    return _with(transformer_clean(), hidden_size=1024, filter_size=4096)


@registry.register_hparams
def transformer_clean_big_tpu():
    """transformer_clean_big for TPUs."""
    return update_hparams_for_tpu(transformer_clean_big())


@registry.register_hparams
def transformer_parameter_attention_a():
    """transformer_base with parameter attention (1,536 memory rows) as feed-forward."""
    return _with(transformer_base(), ffn_layer="parameter_attention", filter_size=1536)


@registry.register_hparams
def transformer_parameter_attention_b():
    """Parameter attention over 512 rows with 1,024-channel keys and values, 16 heads."""
    return _with(transformer_base(), ffn_layer="parameter_attention", filter_size=512,
                 parameter_attention_key_channels=1024,
                 parameter_attention_value_channels=1024, num_heads=16)


@registry.register_hparams
def transformer_supervised_attention():
    """transformer_base whose encoder-decoder attention learns from a feature
    "expected_attentions" [B, target length, input length] (attention logits)."""
    hparams = transformer_base()
    # "kl_divergence" or "mse".
    hparams.add_hparam("expected_attention_loss_type", "kl_divergence")
    hparams.add_hparam("expected_attention_loss_multiplier", 1.0)
    return hparams


# ---------------------------------------------------------------------------- language models
@registry.register_hparams
def transformer_tall():
    """Pretraining/fine-tuning LM (GPT-sized): 12 layers, d=768, 12 heads, length 1024."""
    return _with(transformer_base(), batch_size=2048, hidden_size=768, filter_size=3072,
                 num_hidden_layers=12, num_heads=12, label_smoothing=0.0, max_length=1024,
                 eval_drop_long_sequences=True, multiproblem_mixing_schedule="pretrain",
                 multiproblem_vocab_size=65536, clip_grad_norm=1.0)


def _tall_tied(learning_rate_constant, warmup_steps, decay_steps):
    return _with(transformer_tall(), multiproblem_max_input_length=750,
                 multiproblem_max_target_length=100, multiproblem_schedule_max_examples=0,
                 learning_rate_schedule="linear_warmup*constant*cosdecay",
                 learning_rate_constant=learning_rate_constant,
                 learning_rate_warmup_steps=warmup_steps, learning_rate_decay_steps=decay_steps,
                 multiproblem_target_eval_only=True, multiproblem_reweight_label_loss=True,
                 multiproblem_label_weight=1.0, optimizer="true_adam")


@registry.register_hparams
def transformer_tall_finetune_tied():
    """Fine-tune CNN/DailyMail summarization as a language model."""
    return _tall_tied(5e-5, 100, 80000)


@registry.register_hparams
def transformer_tall_train_tied():
    """Train CNN/DailyMail summarization as a language model."""
    return _tall_tied(2e-4, 8000, 150000)


def _tall_uniencdec(learning_rate_constant, decay_steps, warmup_steps=None):
    hparams = _with(transformer_tall(), max_input_seq_length=750, max_target_seq_length=100,
                    optimizer="true_adam", learning_rate_schedule="linear_warmup*constant*cosdecay",
                    learning_rate_decay_steps=decay_steps,
                    learning_rate_constant=learning_rate_constant, unidirectional_encoder=True)
    if warmup_steps is not None:
        hparams.learning_rate_warmup_steps = warmup_steps
    return hparams


@registry.register_hparams
def transformer_tall_finetune_uniencdec():
    """Fine-tune CNN/DailyMail with a unidirectional encoder and decoder."""
    return _tall_uniencdec(5e-5, 80000, warmup_steps=100)


@registry.register_hparams
def transformer_tall_train_uniencdec():
    """Train CNN/DailyMail with a unidirectional encoder and decoder."""
    return _tall_uniencdec(2e-4, 150000)


@registry.register_hparams
def transformer_tall_finetune_textclass():
    """Fine-tune transformer_tall on text classification problems."""
    return _with(transformer_tall(), learning_rate_constant=6.25e-5,
                 learning_rate_schedule="linear_warmup*constant*linear_decay",
                 multiproblem_schedule_max_examples=0, multiproblem_target_eval_only=True,
                 learning_rate_warmup_steps=50, learning_rate_decay_steps=25000,
                 multiproblem_reweight_label_loss=True, multiproblem_label_weight=0.95)


@registry.register_hparams
def transformer_tall_pretrain_lm():
    """LM pretraining (64k vocabulary) with AdamW and a cosine decay."""
    hparams = _with(transformer_tall(), learning_rate_constant=2e-4,
                    learning_rate_schedule="linear_warmup*constant*cosdecay", optimizer="adam_w",
                    optimizer_adam_beta1=0.9, optimizer_adam_beta2=0.999,
                    optimizer_adam_epsilon=1e-8, multiproblem_schedule_max_examples=5e8,
                    learning_rate_decay_steps=5000000)
    hparams.weight_decay = 0.01 * hparams.learning_rate_constant
    return hparams


@registry.register_hparams
def transformer_tall_pretrain_lm_tpu_adafactor():
    """transformer_tall_pretrain_lm on TPU (Adafactor), batches of 8 examples."""
    hparams = update_hparams_for_tpu(transformer_tall_pretrain_lm())
    return _with(hparams, max_length=1024, batch_size=8, multiproblem_vocab_size=2**16)


@registry.register_hparams
def transformer_tall_pretrain_lm_tpu_adafactor_large():
    """The large TPU pretraining LM: d=1024, filter 32768, per-task thresholds."""
    return _with(transformer_tall_pretrain_lm_tpu_adafactor(), hidden_size=1024, num_heads=16,
                 filter_size=32768, batch_size=4, multiproblem_mixing_schedule="constant",
                 multiproblem_per_task_threshold="320,80,160,1,80,160,2,20,10,5")


@registry.register_hparams
def transformer_tall_pretrain_lm_tpu():
    """transformer_tall_pretrain_lm_tpu_adafactor with AdamW again."""
    hparams = _with(transformer_tall_pretrain_lm_tpu_adafactor(), learning_rate_constant=2e-4,
                    learning_rate_schedule="linear_warmup * constant * cosdecay",
                    optimizer="adam_w")
    hparams.weight_decay = 0.01 * hparams.learning_rate_constant
    return hparams


@registry.register_hparams
def transformer_tall_big():
    """transformer_tall with 18 layers (LM + MNLI)."""
    return _with(transformer_tall(), num_hidden_layers=18)


@registry.register_hparams
def transformer_lm_tpu_0():
    """languagemodel_lm1b8k on TPU, 92M parameters."""
    hparams = update_hparams_for_tpu(transformer_clean_big())
    return _with(hparams, num_heads=4, batch_size=4096, shared_embedding_and_softmax_weights=False,
                 layer_prepostprocess_dropout=0.1)


@registry.register_hparams
def transformer_lm_tpu_1():
    """languagemodel_lm1b8k on TPU, 335M parameters."""
    return _with(transformer_lm_tpu_0(), hidden_size=2048, filter_size=8192)


@registry.register_hparams
def transformer_wikitext103_l4k_v0():
    """languagemodel_wikitext103_l4k: 8 layers of transformer_big, length 4096, Adafactor."""
    return _with(transformer_big(), optimizer="Adafactor", learning_rate_schedule="rsqrt_decay",
                 learning_rate_warmup_steps=10000, num_heads=4, max_length=4096,
                 batch_size=4096, shared_embedding_and_softmax_weights=False,
                 num_hidden_layers=8, attention_dropout=0.1, layer_prepostprocess_dropout=0.2,
                 relu_dropout=0.1, label_smoothing=0.0, attention_dropout_broadcast_dims="0,1",
                 relu_dropout_broadcast_dims="1",
                 layer_prepostprocess_dropout_broadcast_dims="1", symbol_modality_num_shards=1)


# ---------------------------------------------------------------------------- TPU and precision
@registry.register_hparams
def transformer_mlperf_tpu():
    """MLPerf's Transformer on a 2x2 TPU: big sizes on base_v3, batch 2048, mlperf_mode."""
    return _with(transformer_base_v3(), mlperf_mode=True, symbol_modality_num_shards=1,
                 max_length=256, batch_size=2048, hidden_size=1024, filter_size=4096,
                 num_heads=16, attention_dropout_broadcast_dims="0,1",
                 relu_dropout_broadcast_dims="1",
                 layer_prepostprocess_dropout_broadcast_dims="1")


@registry.register_hparams
def transformer_tpu_bf16_activation():
    """transformer_tpu with bfloat16 activations."""
    return _with(transformer_tpu(), activation_dtype="bfloat16")


@registry.register_hparams
def transformer_fairseq_fp16_activation_big():
    """transformer_big with float16 activations and batch 3584 (Ott et al. 2018)."""
    return _with(transformer_big(), activation_dtype="float16", batch_size=3584)


@registry.register_hparams
def transformer_packed_tpu():
    """= transformer_tpu (T2T's deprecated name)."""
    return transformer_tpu()


@registry.register_hparams
def transformer_small_tpu():
    """transformer_small for TPUs."""
    return update_hparams_for_tpu(transformer_small())


@registry.register_hparams
def transformer_tpu_with_conv():
    """transformer_tpu with 4 heads and a convolutional feed-forward layer."""
    return _with(transformer_tpu(), num_heads=4, ffn_layer="conv_relu_conv")


@registry.register_hparams
def transformer_tpu_1b():
    """~1.1B parameters for translation on TPU: d=2048, 8 layers, bfloat16."""
    return _with(transformer_tpu(), hidden_size=2048, filter_size=8192, num_hidden_layers=8,
                 batch_size=1024, activation_dtype="bfloat16", weight_dtype="bfloat16",
                 shared_embedding_and_softmax_weights=False)
