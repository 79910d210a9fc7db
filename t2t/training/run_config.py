"""Estimator RunConfigs for training: checkpoints, sessions, devices, clusters and TPUs.

    config = create_run_config("transformer", model_dir="/tmp/run", save_checkpoints_steps=500,
                               keep_checkpoint_max=5, random_seed=1)
    config.save_checkpoints_steps      # 500
    config.t2t_device_info             # {"num_async_replicas": 1}
    config.train_distribute            # None: one device

    create_run_config("transformer", model_dir="/tmp/run", num_gpus=2).train_distribute
    # a tf.distribute.MirroredStrategy over /gpu:0 and /gpu:1 (or two CPU devices, see below)

    create_run_config("transformer", model_dir="/tmp/run", use_tpu_estimator=True).tpu_config
    # TPUConfig(iterations_per_loop=1000, num_shards=8, ...) for a TPUEstimator

Several workers are described by the `TF_CONFIG` environment variable, as for any Estimator
(`{"cluster": {"chief": [...], "worker": [...], "ps": [...]}, "task": {"type": "worker",
"index": 0}}`); the RunConfig reads it and `tf.estimator.train_and_evaluate` runs each role.
Training is asynchronous, so the learning rate is divided by sqrt(number of training tasks)
(T2T's `num_async_replicas`).

`num_gpus > 1` replicates the model with `tf.distribute.MirroredStrategy`: every replica
reads its own batch of `hparams.batch_size`, so one step sees `num_gpus` batches (T2T's
`shard_multiplier`). On a machine without enough GPUs, CPU devices are used if the process
has that many (`tf.config.set_logical_device_configuration` before TensorFlow starts): how
the tests exercise the path on a CPU-only machine.
"""
import dataclasses
import inspect
import json
import os
from typing import Any, Mapping, Optional

import tensorflow as tf
from absl import logging

from t2t.core import errors

# tf.compat.v1.OptimizerOptions.OFF: no XLA JIT for the whole graph.
XLA_JIT_OFF = -1

# Roles of a TF_CONFIG cluster that run training steps.
_TRAINING_TASK_TYPES = ("chief", "master", "worker")


def tf_config():
    """The parsed `TF_CONFIG` environment variable ({} when unset).

        os.environ["TF_CONFIG"] = '{"cluster": {"chief": ["h:1"]}, "task": {"type": "chief"}}'
        tf_config()["task"]["type"]      # "chief"
    """
    text = os.environ.get("TF_CONFIG", "").strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as error:
        raise errors.UserError("TF_CONFIG is not valid JSON (%s); set it to "
                               "'{\"cluster\": {...}, \"task\": {\"type\": ..., \"index\": 0}}'"
                               % error) from None
    if not isinstance(value, dict):
        raise errors.UserError("TF_CONFIG must hold a JSON object with 'cluster' and 'task'")
    return value


def is_distributed():
    """Whether TF_CONFIG describes a cluster of more than one task."""
    cluster = tf_config().get("cluster") or {}
    return sum(len(tasks) for tasks in cluster.values()) > 1


def num_training_tasks():
    """Chief, master and worker tasks in the TF_CONFIG cluster (1 without a cluster)."""
    cluster = tf_config().get("cluster") or {}
    count = sum(len(cluster.get(kind) or []) for kind in _TRAINING_TASK_TYPES)
    return max(count, 1)


def is_chief(config=None):
    """Whether this process is the chief (always, without a TF_CONFIG cluster)."""
    if config is not None:
        return bool(config.is_chief)
    task = tf_config().get("task") or {}
    task_type = task.get("type")
    if not task_type:
        return True
    if task_type in ("chief", "master"):
        return True
    cluster = tf_config().get("cluster") or {}
    # Without a chief in the cluster, worker 0 is the chief (Estimator's rule).
    return (task_type == "worker" and int(task.get("index", 0)) == 0 and
            not cluster.get("chief") and not cluster.get("master"))


def create_session_config(log_device_placement=False, enable_graph_rewriter=False,
                          gpu_mem_fraction=0.95, use_tpu=False, xla_jit_level=XLA_JIT_OFF,
                          inter_op_parallelism_threads=0, intra_op_parallelism_threads=0,
                          num_cpu_devices=None, isolate_session_state=None):
    """The session ConfigProto T2T trains with.

    Args:
      log_device_placement: log where each op runs.
      enable_graph_rewriter: turn on grappler's layout optimizer.
      gpu_mem_fraction: fraction of each GPU's memory to take.
      use_tpu: TPU sessions get default graph options.
      xla_jit_level: `tf.compat.v1.OptimizerOptions` global JIT level (-1: off).
      inter_op_parallelism_threads, intra_op_parallelism_threads: 0 lets TF choose.
      num_cpu_devices: CPU devices the session creates (replicas on CPU need one each).
      isolate_session_state: default True on one machine (T2T's setting); False in a
        TF_CONFIG cluster, where tasks must share the variables on the parameter servers.

        create_session_config(inter_op_parallelism_threads=2).inter_op_parallelism_threads  # 2
    """
    config_pb = tf.compat.v1
    if use_tpu:
        graph_options = config_pb.GraphOptions()
    elif enable_graph_rewriter:
        from tensorflow.core.protobuf import rewriter_config_pb2
        rewrite_options = rewriter_config_pb2.RewriterConfig(
            layout_optimizer=rewriter_config_pb2.RewriterConfig.ON)
        graph_options = config_pb.GraphOptions(rewrite_options=rewrite_options)
    else:
        graph_options = config_pb.GraphOptions(optimizer_options=config_pb.OptimizerOptions(
            opt_level=config_pb.OptimizerOptions.L1, do_function_inlining=False,
            global_jit_level=xla_jit_level))
    if isolate_session_state is None:
        isolate_session_state = not is_distributed()
    config = config_pb.ConfigProto(
        allow_soft_placement=True,
        graph_options=graph_options,
        gpu_options=config_pb.GPUOptions(per_process_gpu_memory_fraction=gpu_mem_fraction),
        log_device_placement=log_device_placement,
        inter_op_parallelism_threads=inter_op_parallelism_threads,
        intra_op_parallelism_threads=intra_op_parallelism_threads,
        isolate_session_state=isolate_session_state)
    if num_cpu_devices and num_cpu_devices > 1:
        # Graph sessions see one CPU device unless told otherwise; without this the
        # replicas placed on /cpu:1.. wait forever for a device that never runs.
        config.device_count["CPU"] = num_cpu_devices
    return config


def replica_devices(num_gpus, gpu_order=""):
    """The devices of `num_gpus` replicas: GPUs (in `gpu_order`), else CPU devices.

        replica_devices(1)                     # [] (one device: no strategy)
        replica_devices(2, gpu_order="1 0")    # ["/gpu:1", "/gpu:0"] on a 2-GPU machine

    Raises a UserError when the machine has neither enough GPUs nor enough CPU devices.
    """
    if num_gpus <= 1:
        return []
    if gpu_order:
        order = [int(index) for index in gpu_order.replace(",", " ").split()]
        if len(order) != num_gpus:
            raise errors.UserError("--gpu_order %r lists %d GPUs but --worker_gpu=%d; give one "
                                   "index per GPU" % (gpu_order, len(order), num_gpus))
    else:
        order = list(range(num_gpus))
    num_physical_gpus = len(tf.config.list_physical_devices("GPU"))
    if num_physical_gpus >= num_gpus:
        return ["/gpu:%d" % index for index in order]
    num_cpus = len(tf.config.list_logical_devices("CPU"))
    if num_cpus >= num_gpus:
        logging.info("%d GPUs requested, %d found: replicating on %d CPU devices",
                     num_gpus, num_physical_gpus, num_gpus)
        return ["/cpu:%d" % index for index in range(num_gpus)]
    raise errors.UserError("--worker_gpu=%d but this machine has %d GPU(s); lower --worker_gpu "
                           "to at most %d" % (num_gpus, num_physical_gpus,
                                              max(num_physical_gpus, 1)))


@dataclasses.dataclass(frozen=True)
class RunConfigSpec:
    """What a RunConfig is made from: T2T's `create_run_config` arguments, in T2T's order,
    with T2T's defaults, checked when the spec is made.

        spec = RunConfigSpec(model_dir="/tmp/run", save_checkpoints_steps=500, num_gpus=2)
        config = run_config_from_spec(spec)   # a tf.estimator.RunConfig (MirroredStrategy)
        RunConfigSpec(num_gpus=-1)
        # UserError: --worker_gpu=-1: give 0 (a CPU run) or more

    `num_gpus=0` (`--worker_gpu=0`) is a CPU run, as in T2T: the same as 1 on a machine
    without GPUs (one device, no strategy).

    `model_name`, `no_data_parallelism`, `optionally_use_dist_strat`,
    `daisy_chain_variables` and `schedule` are accepted for T2T's signature: replication
    always uses MirroredStrategy here. `master` is ignored: TF 2 Estimators take the cluster
    from TF_CONFIG. `save_checkpoints_secs`, when set, saves checkpoints that often too:
    every `save_checkpoints_steps` steps or `save_checkpoints_secs` seconds, whichever
    comes first (T2T: the seconds replaced the steps); evaluations follow the step-based
    ones. On TPUs, whose training loop saves at its boundaries, the steps alone count.
    """
    model_name: Optional[str] = None
    master: str = ""
    model_dir: Optional[str] = None
    iterations_per_loop: int = 1000
    num_shards: int = 8
    log_device_placement: bool = False
    save_checkpoints_steps: Optional[int] = 1000
    save_checkpoints_secs: Optional[int] = None
    keep_checkpoint_max: Optional[int] = 20
    keep_checkpoint_every_n_hours: float = 10000
    num_gpus: int = 1
    gpu_order: str = ""
    num_async_replicas: int = 1
    enable_graph_rewriter: bool = False
    gpu_mem_fraction: float = 0.95
    no_data_parallelism: bool = False
    optionally_use_dist_strat: bool = False
    daisy_chain_variables: bool = True
    schedule: str = "continuous_train_and_eval"
    random_seed: Optional[int] = None
    tpu_infeed_sleep_secs: Optional[int] = None
    use_tpu: bool = False
    use_tpu_estimator: bool = False
    xla_jit_level: int = XLA_JIT_OFF
    inter_op_parallelism_threads: int = 0
    log_step_count_steps: int = 100
    intra_op_parallelism_threads: int = 0
    tpu_config_extra_kwargs: Optional[Mapping[str, Any]] = None
    save_summary_steps: int = 100

    def __post_init__(self):
        if self.num_gpus < 0:
            raise errors.UserError("--worker_gpu=%d: give 0 (a CPU run) or more"
                                   % self.num_gpus)
        if not self.save_checkpoints_secs and not self.save_checkpoints_steps:
            raise errors.UserError("give --local_eval_frequency (checkpoint steps) > 0 or "
                                   "--save_checkpoints_secs > 0")
        if self.keep_checkpoint_max is not None and self.keep_checkpoint_max < 0:
            raise errors.UserError("--keep_checkpoint_max=%d: give 0 (keep all) or more" %
                                   self.keep_checkpoint_max)
        if self.iterations_per_loop < 1:
            raise errors.UserError("--iterations_per_loop=%d: give 1 or more" %
                                   self.iterations_per_loop)


def create_run_config(*args, **kwargs):
    """A RunConfig (a TPU RunConfig for TPUEstimator) with T2T's extra attributes.

    Takes T2T's arguments (those of `RunConfigSpec`, positionally or by name):

        create_run_config(model_name="transformer", model_dir="/tmp/run",
                          save_checkpoints_steps=500)
    """
    return run_config_from_spec(RunConfigSpec(*args, **kwargs))


create_run_config.__signature__ = inspect.signature(RunConfigSpec)


def run_config_from_spec(spec: RunConfigSpec):
    """The RunConfig a `RunConfigSpec` describes.

    Checkpoints are written every `save_checkpoints_steps` steps (the RunConfig's) and,
    when `save_checkpoints_secs` is set too, every that many seconds by the experiment's
    `TimedCheckpointHook` (`t2t_save_checkpoints_secs`; a RunConfig takes only one of
    them). The config also carries `use_tpu`, `t2t_device_info = {"num_async_replicas":
    n}` (the learning rate is divided by sqrt(n)) and `data_parallelism = None` (one model
    copy per replica).
    """
    if spec.master:
        logging.warning("--master=%s is ignored; describe the cluster in TF_CONFIG", spec.master)
    use_tpu, use_tpu_estimator = spec.use_tpu, spec.use_tpu_estimator
    save_checkpoints_steps = spec.save_checkpoints_steps or None
    save_checkpoints_secs = None if save_checkpoints_steps else spec.save_checkpoints_secs
    timed_checkpoint_secs = (spec.save_checkpoints_secs or None
                             if save_checkpoints_steps and not (use_tpu or use_tpu_estimator)
                             else None)
    devices = [] if (use_tpu or use_tpu_estimator) else replica_devices(spec.num_gpus,
                                                                        spec.gpu_order)
    cpu_replicas = sum(1 for device in devices if device.startswith("/cpu"))
    session_config = create_session_config(
        log_device_placement=spec.log_device_placement,
        enable_graph_rewriter=spec.enable_graph_rewriter, gpu_mem_fraction=spec.gpu_mem_fraction,
        use_tpu=use_tpu, xla_jit_level=spec.xla_jit_level,
        inter_op_parallelism_threads=spec.inter_op_parallelism_threads,
        intra_op_parallelism_threads=spec.intra_op_parallelism_threads,
        num_cpu_devices=cpu_replicas or None)
    run_config_args = {
        "model_dir": spec.model_dir,
        "session_config": session_config,
        "save_summary_steps": spec.save_summary_steps,
        "save_checkpoints_steps": save_checkpoints_steps,
        "save_checkpoints_secs": save_checkpoints_secs,
        "keep_checkpoint_max": spec.keep_checkpoint_max,
        "keep_checkpoint_every_n_hours": spec.keep_checkpoint_every_n_hours,
        "tf_random_seed": spec.random_seed,
        "log_step_count_steps": spec.log_step_count_steps,
    }
    if devices:
        logging.info("Replicating the model with MirroredStrategy on %s", ", ".join(devices))
        run_config_args["train_distribute"] = tf.distribute.MirroredStrategy(devices)

    if use_tpu or use_tpu_estimator:
        tpu = tf.compat.v1.estimator.tpu
        tpu_config_kwargs = {
            "iterations_per_loop": spec.iterations_per_loop,
            "num_shards": spec.num_shards,
            "per_host_input_for_training": True,
            "initial_infeed_sleep_secs": spec.tpu_infeed_sleep_secs,
        }
        tpu_config_kwargs.update(spec.tpu_config_extra_kwargs or {})
        run_config_args["tpu_config"] = tpu.TPUConfig(**tpu_config_kwargs)
        config = tpu.RunConfig(**run_config_args)
    else:
        config = tf.estimator.RunConfig(**run_config_args)

    # T2T's attributes, read by T2TModel.estimator_model_fn and data_reader.input_fn.
    config.use_tpu = use_tpu
    config.t2t_save_checkpoints_secs = timed_checkpoint_secs
    if not use_tpu:
        replicas = max(spec.num_async_replicas, num_training_tasks() if is_distributed() else 1)
        config.t2t_device_info = {"num_async_replicas": replicas}
        config.data_parallelism = None
    return config
