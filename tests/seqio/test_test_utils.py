"""seqio.test_utils helpers that users' SeqIO tests call."""
import pytest
import tensorflow as tf

from t2t import seqio
from t2t.seqio import test_utils


def test_assert_dataset_compares_values_lengths_and_dtypes():
    ds = test_utils.create_default_dataset([{"inputs": [1, 2], "targets": [3]}])
    test_utils.assert_dataset(ds, {"inputs": [1, 2], "targets": [3]},
                              {"inputs": tf.int32, "targets": tf.int32})
    with pytest.raises(AssertionError):
        test_utils.assert_dataset(ds, {"inputs": [1, 2], "targets": [4]})
    with pytest.raises(AssertionError, match="dataset has 1 examples, expected 2"):
        test_utils.assert_dataset(ds, [{"inputs": [1, 2], "targets": [3]}] * 2)
    with pytest.raises(AssertionError, match="dtypes"):
        test_utils.assert_dataset(ds, {"inputs": [1, 2], "targets": [3]}, {"inputs": tf.int64})
    text = tf.data.Dataset.from_tensors({"text": "héllo", "score": 0.5})
    test_utils.assert_dataset(text, {"text": "héllo", "score": 0.5})
    assert list(test_utils.dataset_as_text(text))[0]["text"] == "héllo"


def test_datasets_eq_neq_and_registry_clearing():
    a = tf.data.Dataset.from_tensor_slices({"x": [1, 2]})
    test_utils.assert_datasets_eq(a, tf.data.Dataset.from_tensor_slices({"x": [1, 2]}))
    test_utils.assert_datasets_neq(a, tf.data.Dataset.from_tensor_slices({"x": [2, 1]}))
    with pytest.raises(AssertionError, match="datasets are equal"):
        test_utils.assert_datasets_neq(a, a)
    source = seqio.FunctionDataSource(lambda split, shuffle_files: a, splits=["train"])
    seqio.TaskRegistry.add("tmp_task", source, {})
    seqio.MixtureRegistry.add("tmp_mix", [("tmp_task", 1)])
    test_utils.clear_mixtures()
    test_utils.clear_tasks()
    assert not list(seqio.TaskRegistry.names()) and not list(seqio.MixtureRegistry.names())


def test_mock_vocabulary_in_a_graph():
    vocab = test_utils.MockVocabulary({"a b": [5, 6], "c": [7]}, vocab_size=10)
    assert vocab.encode("c") == [7] and vocab.eos_id == 1 and vocab.vocab_size == 10
    ds = tf.data.Dataset.from_tensor_slices(["a b", "c", "z"]).map(vocab.encode_tf)
    assert [x.tolist() for x in ds.as_numpy_iterator()] == [[5, 6], [7], [-1]]
