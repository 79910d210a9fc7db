"""Where the native backend trains: its `tf.distribute` strategy and this task's role.

    placement = placement_for(run_spec)        # a run_config.RunConfigSpec
    placement.strategy          # default strategy, MirroredStrategy (--worker_gpu > 1) or
                                # MultiWorkerMirroredStrategy (chief and workers in TF_CONFIG)
    placement.is_chief          # saves checkpoints, writes summaries; evaluates too when
                                # it trains alone (not in a TF_CONFIG cluster)
    placement.is_evaluator      # an "evaluator" task: evaluates each new checkpoint

Training is synchronous: every replica (device or worker) computes gradients on its own
batch, they are summed and applied once per step. In a cluster, as with tf.estimator's
`train_and_evaluate`, evaluating is the evaluator task's alone (the chief cannot know of
one: tf.estimator's TF_CONFIG leaves the evaluator out of the cluster; an evaluation on the
chief would also stall every worker of a synchronous step meanwhile). TPUs
and parameter servers are the Estimator backend's (`backends.check_native_supported` says
so in one line).
"""
import dataclasses
import signal

import tensorflow as tf
from absl import logging

from t2t.training import backends
from t2t.training import run_config as run_config_lib


# The signals that stop training (stop_signals), the more final first.
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@dataclasses.dataclass
class Placement:
    """A strategy and this task's role in the run.

        Placement(tf.distribute.get_strategy()).num_replicas    # 1
    """
    strategy: tf.distribute.Strategy
    is_chief: bool = True
    is_evaluator: bool = False
    in_cluster: bool = False
    num_async_replicas: int = 1

    @property
    def num_replicas(self):
        return self.strategy.num_replicas_in_sync

    def agree(self, flag):
        """Whether any training task says `flag` (all of them get the same answer, so
        workers stop together); the flag itself without workers."""
        if not isinstance(self.strategy, tf.distribute.MultiWorkerMirroredStrategy):
            return bool(flag)
        values = self.strategy.experimental_distribute_values_from_function(
            lambda context: tf.constant(1.0 if flag else 0.0))
        return float(self.strategy.reduce(tf.distribute.ReduceOp.SUM, values,
                                          axis=None)) > 0

    def agree_signal(self, signum):
        """The stop signal any training task got (SIGTERM before SIGINT), or None; every
        task gets the same answer. `signum`: this task's (None: none).

        A sum over the strategy's replicas (a collective op across the tasks of a
        MultiWorkerMirroredStrategy: every training task calls it at the same step); with
        one task it is that task's own signal.
        """
        counts = [1.0 if signum == each else 0.0 for each in _STOP_SIGNALS]
        values = self.strategy.experimental_distribute_values_from_function(
            lambda context: tf.constant(counts))
        totals = self.strategy.reduce(tf.distribute.ReduceOp.SUM, values, axis=None).numpy()
        return next((int(each) for each, total in zip(_STOP_SIGNALS, totals) if total > 0),
                    None)


def ensure_cpu_devices(count):
    """Split the CPU into `count` logical devices when there are fewer GPUs (how one
    machine without GPUs runs --worker_gpu > 1); too late once TensorFlow has started."""
    if count <= 1 or len(tf.config.list_physical_devices("GPU")) >= count:
        return
    cpu = tf.config.list_physical_devices("CPU")[0]
    configured = tf.config.get_logical_device_configuration(cpu) or []
    if len(configured) >= count:
        return
    try:
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * count)
    except RuntimeError:
        logging.info("TensorFlow already started: keeping its %d CPU device(s)",
                     max(len(configured), 1))


def placement_for(run_spec):
    """The Placement of a RunConfigSpec's devices and TF_CONFIG's cluster (UserError for
    TPUs and parameter servers)."""
    config = run_config_lib.tf_config()
    cluster = config.get("cluster") or {}
    backends.check_native_supported(use_tpu=run_spec.use_tpu,
                                    use_tpu_estimator=run_spec.use_tpu_estimator,
                                    cluster=cluster)
    if run_config_lib.is_distributed():
        task = config.get("task") or {}
        task_type, task_index = task.get("type"), int(task.get("index") or 0)
        if task_type == "evaluator":
            return Placement(tf.distribute.get_strategy(), is_chief=False, is_evaluator=True,
                             in_cluster=True)
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        has_chief = bool(cluster.get("chief") or cluster.get("master"))
        is_chief = task_type in ("chief", "master") or (
            not has_chief and task_type == "worker" and task_index == 0)
        logging.info("MultiWorkerMirroredStrategy: %d replicas, this task %s %d%s",
                     strategy.num_replicas_in_sync, task_type, task_index,
                     " (chief)" if is_chief else "")
        return Placement(strategy, is_chief=is_chief, in_cluster=True,
                         num_async_replicas=run_spec.num_async_replicas)
    ensure_cpu_devices(run_spec.num_gpus)
    devices = run_config_lib.replica_devices(run_spec.num_gpus, run_spec.gpu_order)
    if devices:
        logging.info("Replicating the model with MirroredStrategy on %s", ", ".join(devices))
        strategy = tf.distribute.MirroredStrategy(devices)
    else:
        strategy = tf.distribute.get_strategy()
    return Placement(strategy, num_async_replicas=run_spec.num_async_replicas)
