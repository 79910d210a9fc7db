"""TensorBoard summaries written by T2TModel: input statistics, losses, the TPU host call.

    summarize_features({"inputs": ids})     # scalars input_stats/inputs_batch, _length, ...
    summarize_losses({"training": loss})    # scalar losses/training
    host_call = create_host_call("/tmp/model")   # (fn, tensors) for a TPUEstimatorSpec

Nothing is written inside while loops, function graphs or reusing variable scopes
(`common_layers.should_generate_summaries`), so slow decoding and data shards add none.
"""
import collections

import tensorflow as tf
from absl import logging

from t2t.layers import common_layers

_SCALAR_PREFIX = "ScalarSummary"


def summarize_features(features, num_shards=1):
    """Per-feature batch size, length and non-padding counts, under "input_stats".

    For ids [batch=2, length=3, 1, 1] = [[5, 6, 0], [7, 0, 0]] (one shard): inputs_batch 2,
    inputs_length 3, inputs_nonpadding_tokens 3, inputs_nonpadding_fraction 0.5.
    """
    if not common_layers.should_generate_summaries():
        return
    with tf.name_scope("input_stats"):
        for name, value in sorted(features.items()):
            if (isinstance(value, tf.Tensor) and value.shape.ndims is not None and
                    value.shape.ndims > 1 and value.dtype != tf.string):
                tf.compat.v1.summary.scalar("%s_batch" % name, tf.shape(value)[0] // num_shards)
                tf.compat.v1.summary.scalar("%s_length" % name, tf.shape(value)[1])
                nonpadding = tf.cast(tf.not_equal(value, 0), tf.float32)
                tf.compat.v1.summary.scalar("%s_nonpadding_tokens" % name,
                                            tf.reduce_sum(nonpadding))
                tf.compat.v1.summary.scalar("%s_nonpadding_fraction" % name,
                                            tf.reduce_mean(nonpadding))


def summarize_losses(losses_dict):
    """One scalar per loss, under "losses": {"training": 2.3} -> losses/training."""
    if not common_layers.should_generate_summaries():
        return
    with tf.name_scope("losses"):
        for name, value in sorted(losses_dict.items()):
            tf.compat.v1.summary.scalar(name, value)


def remove_summaries():
    """Drop every summary from the graph (TPU model_fns may not contain summary ops)."""
    graph = tf.compat.v1.get_default_graph()
    key = tf.compat.v1.GraphKeys.SUMMARIES
    log_names = [s.op.name for s in graph.get_collection(key)]
    del graph.get_collection_ref(key)[:]
    if log_names:
        logging.info("Removed %d summaries for TPU", len(log_names))


def create_host_call(model_dir):
    """The scalar summaries of the graph as a TPU host call writing to `model_dir`.

    Returns `(host_call_fn, tensors)` — each scalar reshaped to [1] and keyed
    "ScalarSummary<name>", plus "global_step" — or None when the graph has no scalar
    summary (a host call that dequeues nothing would hang the TPU outfeed).
    """
    graph = tf.compat.v1.get_default_graph()
    summaries = graph.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
    global_step = tf.compat.v1.train.get_or_create_global_step()
    tensors = collections.OrderedDict()
    for summary in summaries:
        if summary.op.type != "ScalarSummary":
            logging.warning("Host call ignores the unsupported summary type %s",
                            summary.op.type)
            continue
        value = summary.op.inputs[1]
        if value.dtype == tf.int64:
            value = tf.cast(value, tf.int32)
        tensors[_SCALAR_PREFIX + summary.op.name] = tf.reshape(value, [1])
    if not tensors:
        return None
    tensors["global_step"] = tf.reshape(tf.cast(global_step, tf.int32), [1])

    def host_call_fn(**kwargs):
        step = tf.cast(kwargs.pop("global_step")[0], tf.int64)
        writer = tf.compat.v2.summary.create_file_writer(model_dir)
        with writer.as_default(), tf.compat.v2.summary.record_if(True):
            for name, value in sorted(kwargs.items()):
                tf.compat.v2.summary.scalar(name[len(_SCALAR_PREFIX):],
                                            tf.reduce_mean(tf.cast(value, tf.float32)),
                                            step=step)
            return tf.compat.v1.summary.all_v2_summary_ops()

    return host_call_fn, tensors
