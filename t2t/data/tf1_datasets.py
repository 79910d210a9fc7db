"""Datasets that also answer TF 1's methods when eager execution is off, as T2T's did.

T2T 1.15 ran in TF 1 graph mode, where every `tf.data.Dataset` had `output_shapes`,
`output_types`, `output_classes`, `make_one_shot_iterator()` and
`make_initializable_iterator()`; T2T-era code and T2T's own tests call them on
`problem.dataset(...)`. TensorFlow 2's datasets have none of these. Where a TF 1 graph is being
built (eager execution disabled, TF 1's default, or inside `tf.Graph().as_default()`),
`tf1_dataset` gives the same dataset as TensorFlow's `tf.compat.v1.data.Dataset` (the class
of TF 1's datasets, a subclass of TF 2's): the same elements and every TF 2 method, plus
TF 1's, and its transformations keep them. Eagerly (the TF 2 default, tf.function included)
the dataset is returned unchanged.

    tf.compat.v1.disable_eager_execution()
    dataset = tf1_dataset(tf.data.Dataset.range(3))
    dataset.output_shapes                                # TensorShape([])
    dataset.batch(2).make_one_shot_iterator().get_next()
"""
import tensorflow as tf


def tf1_dataset(dataset):
    """`dataset` as a `tf.compat.v1.data.Dataset` when building a TF 1 graph."""
    if tf.compat.v1.executing_eagerly_outside_functions() or isinstance(
            dataset, tf.compat.v1.data.Dataset):
        return dataset
    from tensorflow.python.data.ops import dataset_ops  # the adapter TF 1 datasets are
    return dataset_ops.DatasetV1Adapter(dataset)
