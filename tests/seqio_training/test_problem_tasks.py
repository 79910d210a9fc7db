"""The T2T bridge: a registered T2T Problem's generated data as a SeqIO Task that mixes."""
import pytest
import tensorflow as tf

from t2t import seqio
from t2t.core import errors
from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.seqio.t2t_vocabulary import T2TVocabulary

PROBLEM = "algorithmic_reverse_binary40_test"  # 1000 train / 100 dev examples of 0/1 digits


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("t2t_data")
    registry.problem(PROBLEM).generate_data(str(folder), str(folder))
    return str(folder)


def as_lists(ds, keys=("inputs", "targets")):
    return [tuple(tuple(ex[k].tolist()) for k in keys) for ex in ds.as_numpy_iterator()]


def test_problem_task_reads_the_problems_records(data_dir):
    task = seqio.add_t2t_problem_task(PROBLEM, data_dir)
    assert seqio.get_mixture_or_task(PROBLEM) is task
    assert sorted(task.splits) == ["train", "validation"]
    ours = as_lists(task.get_dataset(None, split="validation", shuffle=False))
    problem = registry.problem(PROBLEM)
    theirs = as_lists(problem.dataset(ModeKeys.EVAL, data_dir=data_dir,
                                      shuffle_files=False))
    assert ours == theirs and len(ours) == 100
    vocab = task.output_features["targets"].vocabulary
    assert isinstance(vocab, T2TVocabulary)
    assert vocab.vocab_size == 4  # "0", "1" after PAD and EOS, from the problem's hparams
    assert vocab == T2TVocabulary(problem.get_feature_encoders(data_dir)["targets"],
                                  vocab_size=4)
    inputs, targets = ours[0]
    # The problem reverses a binary string; its ids end in EOS and decode to the digits.
    assert targets[-1] == 1 and vocab.decode(targets).split() == vocab.decode(inputs).split()[::-1]
    assert task.get_dataset(None, split="train").element_spec["inputs"].dtype == tf.int32


def test_rev_problem_and_retokenized_vocabulary(data_dir):
    rev = seqio.add_t2t_problem_task(PROBLEM + "_rev", data_dir, name="rev")
    plain = seqio.add_t2t_problem_task(PROBLEM, data_dir, register=False)
    a = as_lists(rev.get_dataset(None, split="validation", shuffle=False))
    b = as_lists(plain.get_dataset(None, split="validation", shuffle=False))
    assert a == [(t, i) for i, t in b]
    byte_vocab = seqio.ByteVocabulary()
    text_task = seqio.add_t2t_problem_task(PROBLEM, data_dir, name="as_bytes",
                                           vocabulary=byte_vocab)
    ex = next(text_task.get_dataset(None, split="validation", shuffle=False).as_numpy_iterator())
    digits = plain.output_features["inputs"].vocabulary.decode(b[0][0])
    assert ex["inputs_pretokenized"].decode() == digits
    assert ex["inputs"].tolist() == byte_vocab.encode(digits) + [1]


def test_problem_and_seqio_task_mix_in_one_mixture(data_dir):
    problem_task = seqio.add_t2t_problem_task(PROBLEM, data_dir, name="binary",
                                              vocabulary=seqio.ByteVocabulary())

    def pairs(split, shuffle_files, seed=None):
        return tf.data.Dataset.from_tensor_slices({"inputs": ["abc", "de"] * 20,
                                                   "targets": ["cba", "ed"] * 20})

    seqio.TaskRegistry.add(
        "letters", seqio.FunctionDataSource(pairs, splits=["train", "validation"]),
        output_features=problem_task.output_features,
        preprocessors=[seqio.preprocessors.tokenize, seqio.preprocessors.append_eos])
    seqio.MixtureRegistry.add("both", [("binary", 1), ("letters", 1)])
    ds = seqio.get_dataset("both", {"inputs": 24, "targets": 24},
                           seqio.EncDecFeatureConverter(pack=True), batch_size=4, seed=3)
    batches = list(ds.take(4).as_numpy_iterator())
    assert batches[0]["encoder_input_tokens"].shape == (4, 24)
    texts = {seqio.ByteVocabulary().decode(row) for batch in batches
             for row in batch["encoder_input_tokens"]}
    assert any("a" in t or "d" in t for t in texts) and any("0" in t or "1" in t for t in texts)
    # The problem's own ids cannot mix with byte ids: one line names task and feature.
    seqio.add_t2t_problem_task(PROBLEM, data_dir, name="binary_ids")
    with pytest.raises(ValueError, match="Mixture 'bad': feature 'inputs' of task 'letters' has "
                                         "vocabulary ByteVocabulary"):
        seqio.Mixture("bad", [("binary_ids", 1), ("letters", 1)])


def test_missing_data_says_run_datagen(tmp_path):
    with pytest.raises(errors.UserError, match="run t2t-datagen --problem=%s" % PROBLEM):
        seqio.add_t2t_problem_task(PROBLEM, str(tmp_path))
    with pytest.raises(registry.UnknownNameError):
        seqio.add_t2t_problem_task("algorithmic_revers_binary40_test", str(tmp_path))
