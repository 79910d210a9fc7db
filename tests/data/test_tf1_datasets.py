"""tf1_dataset: TF 1's dataset methods while building a TF 1 graph; TF 2 datasets eagerly."""
import numpy as np
import tensorflow as tf

from t2t.data.tf1_datasets import tf1_dataset

v1 = tf.compat.v1


def test_graph_mode_datasets_answer_tf1s_methods_and_keep_them_through_transformations():
    with tf.Graph().as_default():
        dataset = tf1_dataset(tf.data.Dataset.range(5).map(lambda x: {"x": [x, x + 1]}))
        assert dataset.output_shapes == {"x": tf.TensorShape([2])}
        assert dataset.output_types == {"x": tf.int64}
        batched = dataset.padded_batch(2, dataset.output_shapes)
        assert isinstance(batched, v1.data.Dataset) and isinstance(batched, tf.data.Dataset)
        one_shot = batched.make_one_shot_iterator().get_next()
        iterator = dataset.skip(3).make_initializable_iterator()
        element = iterator.get_next()
        assert tf1_dataset(dataset) is dataset
        with v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(one_shot)["x"], [[0, 1], [1, 2]])
            sess.run(iterator.initializer)
            assert sess.run(element)["x"].tolist() == [3, 4]
            assert sess.run(element)["x"].tolist() == [4, 5]


def test_eager_and_tf_function_datasets_are_unchanged():
    dataset = tf.data.Dataset.range(3)
    assert tf1_dataset(dataset) is dataset
    assert not hasattr(dataset, "make_one_shot_iterator")

    @tf.function
    def traced():
        inside = tf.data.Dataset.range(3)
        assert tf1_dataset(inside) is inside
        return inside.reduce(tf.constant(0, tf.int64), lambda a, b: a + b)

    assert int(traced()) == 3
