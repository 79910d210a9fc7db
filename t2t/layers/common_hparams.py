"""Hyperparameters shared by every model: `basic_params1` (registered as "basic_1").

Model hparams sets start from `basic_params1()` and change what they need:

    hp = basic_params1()
    hp.hidden_size = 128
    hp.batch_size        # 4096 (tokens per batch for text problems)

Every value here is T2T 1.15.7's default, so a ported hparams set behaves the same.
"""
import types

from t2t.core import hparam
from t2t.core import registry


@registry.register_hparams("basic_1")
def basic_params1():
    """A set of basic hyperparameters."""
    return hparam.HParams(
        # Batch and shape.
        batch_size=4096,
        batch_shuffle_size=512,
        use_fixed_batch_size=False,
        num_hidden_layers=4,
        kernel_height=3,
        kernel_width=1,
        hidden_size=64,
        compress_steps=0,
        # Regularisation.
        dropout=0.2,
        clip_grad_norm=2.0,
        grad_noise_scale=0.0,
        summarize_grads=False,
        mlperf_mode=False,
        summarize_vars=False,
        # Initialisation.
        initializer="orthogonal",
        initializer_gain=1.5,
        label_smoothing=0.1,
        # Optimizer.
        optimizer="adam",
        optimizer_adam_epsilon=1e-6,
        optimizer_adam_beta1=0.85,
        optimizer_adam_beta2=0.997,
        optimizer_momentum_momentum=0.9,
        optimizer_momentum_nesterov=False,
        optimizer_adafactor_beta1=0.0,
        optimizer_adafactor_beta2=0.999,
        optimizer_adafactor_factored=True,
        optimizer_adafactor_decay_type="pow",
        optimizer_adafactor_memory_exponent=0.8,
        optimizer_adafactor_clipping_threshold=1.0,
        optimizer_adafactor_multiply_by_parameter_scale=True,
        optimizer_multistep_accumulate_steps=0,
        mixed_precision_optimizer_loss_scaler="exponential",
        mixed_precision_optimizer_init_loss_scale=2**15,
        optimizer_zero_grads=False,
        weight_decay=1e-6,
        weight_noise=0.0,
        # Learning rate.
        learning_rate_schedule="legacy",
        learning_rate_constant=1.0,
        learning_rate_decay_scheme="none",
        learning_rate_decay_steps=5000,
        learning_rate_decay_staircase=False,
        learning_rate_minimum=None,
        learning_rate_decay_rate=1.0,
        learning_rate_warmup_steps=100,
        learning_rate_cosine_cycle_steps=250000,
        learning_rate=0.1,
        # Sampling and embeddings.
        sampling_method="argmax",
        sampling_temp=1.0,
        sampling_keep_top_k=-1,
        factored_logits=False,
        multiply_embedding_mode="sqrt_depth",
        # Mixture of experts.
        moe_hidden_sizes="2048",
        moe_num_experts=64,
        moe_k=2,
        moe_loss_coef=1e-2,
        # Layer pre/post-processing: "n" norm, "d" dropout, "a" residual add.
        layer_preprocess_sequence="none",
        layer_postprocess_sequence="dan",
        layer_prepostprocess_dropout=0.1,
        layer_prepostprocess_dropout_broadcast_dims="",
        symbol_dropout=0.0,
        norm_type="layer",
        norm_epsilon=1e-6,
        vocab_divisor=1,
        # Data.
        min_length=0,
        max_length=0,
        pack_dataset=False,
        use_custom_ops=True,
        split_targets_chunk_length=0,
        split_targets_max_chunks=100,
        split_targets_strided_training=False,
        min_length_bucket=8,
        length_bucket_step=1.1,
        eval_drop_long_sequences=False,
        eval_run_autoregressive=False,
        # t2t: how token-counted batches are cut. "buckets": T2T's length buckets
        # (batching_scheme), the very batches group_by_window made; "sorted": length-sorted
        # windows cut into batch_size-token batches (fairseq style, less padding).
        token_batching="buckets",
        # Embedding sharing.
        shared_embedding_and_softmax_weights=False,
        shared_embedding=False,
        symbol_modality_num_shards=1,
        # Per-feature overrides of modality functions: {feature_name: fn}.
        bottom={},
        loss={},
        name={},
        top={},
        weights_fn={},
        # Sequences.
        max_input_seq_length=0,
        max_target_seq_length=0,
        split_to_length=0,
        video_num_input_frames=1,
        video_num_target_frames=1,
        prepend_mode="none",
        # Scheduled sampling.
        scheduled_sampling_prob=0.0,
        scheduled_sampling_method="parallel",
        scheduled_sampling_warmup_steps=50000,
        scheduled_sampling_gold_mixin_prob=0.5,
        scheduled_sampling_num_passes=1,
        scheduled_sampling_warmup_schedule="exp",
        # Devices.
        daisy_chain_variables=True,
        force_full_predict=False,
        no_data_parallelism=False,
        activation_dtype="float32",
        weight_dtype="float32",
        pretrained_model_dir="",
        # Multi-problem.
        multiproblem_schedule_threshold=0.5,
        multiproblem_per_task_threshold="",
        multiproblem_schedule_max_examples=1e7,
        multiproblem_mixing_schedule="constant",
        multiproblem_reweight_label_loss=False,
        multiproblem_label_weight=0.5,
        # Relative attention.
        max_relative_position=0,
        heads_share_relative_embedding=False,
        add_relative_to_values=False,
        # TPU.
        tpu_enable_host_call=False,
        pad_batch=False,
        multiproblem_target_eval_only=False,
        multiproblem_vocab_size=-1,
        multiproblem_max_input_length=-1,
        multiproblem_max_target_length=-1,
        multiproblem_fixed_train_length=-1,
        # Misc.
        warm_start_from_second="",
        area_value_mode="none",
        area_key_mode="none",
        num_area_layers=0,
        max_area_width=1,
        max_area_height=1,
        memory_height=1,
        gpu_automatic_mixed_precision=False,
    )


class RangedHParams:
    """Search ranges for hyperparameter tuning, by name.

        rhp = RangedHParams()
        rhp.set_float("learning_rate", 0.01, 1.0, scale=RangedHParams.LOG_SCALE)
        rhp.to_parameter_specs()[0]["parameterName"]   # "learning_rate"
    """
    LINEAR_SCALE = 1
    LOG_SCALE = 2
    REVERSE_LOG_SCALE = 3
    SCALES_STR = {LINEAR_SCALE: "UNIT_LINEAR_SCALE", LOG_SCALE: "UNIT_LOG_SCALE",
                  REVERSE_LOG_SCALE: "UNIT_REVERSE_LOG_SCALE"}

    def __init__(self):
        self._categorical_params = {}
        self._discrete_params = {}
        self._float_params = {}
        self._int_params = {}

    # Read-only views for searchers (t2t.tuning): name -> the tuple its set_* call stored.
    @property
    def categorical_params(self):
        """{name: (name, categories)}"""
        return types.MappingProxyType(self._categorical_params)

    @property
    def discrete_params(self):
        """{name: (name, feasible_points, scale)}"""
        return types.MappingProxyType(self._discrete_params)

    @property
    def float_params(self):
        """{name: (name, min, max, scale)}"""
        return types.MappingProxyType(self._float_params)

    @property
    def int_params(self):
        """{name: (name, min, max, scale)}"""
        return types.MappingProxyType(self._int_params)

    def remove(self, name):
        """Take `name` out of the search (whatever its type); a missing name is no error."""
        for ctr in (self._categorical_params, self._discrete_params, self._float_params,
                    self._int_params):
            ctr.pop(name, None)

    def _check_reset_and_type_change(self, name, orig_ctr):
        for ctr in (self._categorical_params, self._discrete_params, self._float_params,
                    self._int_params):
            if ctr is not orig_ctr and name in ctr:
                raise ValueError("ranged hparam %r already set with another type" % name)
        orig_ctr.pop(name, None)

    def set_categorical(self, name, categories, length=None):
        self._check_reset_and_type_change(name, self._categorical_params)
        self._categorical_params[name] = (name, list(categories))

    def set_discrete(self, name, feasible_points, scale=None, length=None):
        self._check_reset_and_type_change(name, self._discrete_params)
        self._discrete_params[name] = (name, list(feasible_points), scale)

    def set_float(self, name, min_val, max_val, scale=None, length=None):
        if min_val > max_val:
            raise ValueError("ranged hparam %r: min %r is above max %r" % (name, min_val, max_val))
        self._check_reset_and_type_change(name, self._float_params)
        self._float_params[name] = (name, float(min_val), float(max_val), scale)

    def set_int(self, name, min_val, max_val, scale=None, length=None):
        if min_val > max_val:
            raise ValueError("ranged hparam %r: min %r is above max %r" % (name, min_val, max_val))
        self._check_reset_and_type_change(name, self._int_params)
        self._int_params[name] = (name, int(min_val), int(max_val), scale)

    def fix_select_params(self, hp):
        """Fix every name of the HParams `hp` to its value there (a one-point discrete range),
        as T2T did."""
        for name, value in hp.values().items():
            self.remove(name)
            self.set_discrete(name, [value])

    def to_parameter_specs(self, name_prefix=""):
        """Cloud-ML-Engine style specs, one dict per hyperparameter."""
        specs = []
        for name, categories in self._categorical_params.values():
            specs.append({"parameterName": name_prefix + name, "type": "CATEGORICAL",
                          "categoricalValues": categories})
        for name, points, scale in self._discrete_params.values():
            spec = {"parameterName": name_prefix + name, "type": "DISCRETE",
                    "discreteValues": points}
            if scale:
                spec["scaleType"] = self.SCALES_STR[scale]
            specs.append(spec)
        for kind, params in (("DOUBLE", self._float_params), ("INTEGER", self._int_params)):
            for name, lo, hi, scale in params.values():
                spec = {"parameterName": name_prefix + name, "type": kind,
                        "minValue": lo, "maxValue": hi}
                if scale:
                    spec["scaleType"] = self.SCALES_STR[scale]
                specs.append(spec)
        return specs


@registry.register_ranged_hparams("basic1")
def basic_range1(ranged_hparams):
    """A basic range of hyperparameters."""
    rhp = ranged_hparams
    rhp.set_discrete("batch_size", [1024, 2048, 4096])
    rhp.set_discrete("num_hidden_layers", [1, 2, 3, 4, 5, 6])
    rhp.set_discrete("hidden_size", [32, 64, 128, 256, 512], scale=rhp.LOG_SCALE)
    rhp.set_discrete("kernel_height", [1, 3, 5, 7])
    rhp.set_discrete("kernel_width", [1, 3, 5, 7])
    rhp.set_discrete("compress_steps", [0, 1, 2])
    rhp.set_float("dropout", 0.0, 0.5)
    rhp.set_float("weight_decay", 1e-4, 10.0, scale=rhp.LOG_SCALE)
    rhp.set_float("label_smoothing", 0.0, 0.2)
    rhp.set_float("clip_grad_norm", 0.01, 50.0, scale=rhp.LOG_SCALE)
    rhp.set_float("learning_rate", 0.005, 2.0, scale=rhp.LOG_SCALE)
    rhp.set_categorical("initializer", ["uniform", "orthogonal", "uniform_unit_scaling"])
    rhp.set_float("initializer_gain", 0.5, 3.5)
    rhp.set_categorical("learning_rate_decay_scheme", ["none", "sqrt", "noam", "exp"])
    rhp.set_float("optimizer_adam_epsilon", 1e-7, 1e-2, scale=rhp.LOG_SCALE)
    rhp.set_float("optimizer_adam_beta1", 0.8, 0.9)
    rhp.set_float("optimizer_adam_beta2", 0.995, 0.999)
    rhp.set_categorical("optimizer", ["adam", "adagrad", "momentum", "rms_prop", "sgd",
                                      "yellow_fin"])
