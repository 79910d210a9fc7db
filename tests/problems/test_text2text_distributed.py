"""DistributedText2TextProblem: each task reads its slice of the input shards, writes one shard."""
import os

import pytest

import corpus_testing

from t2t.core import errors
from t2t.encoders import text_encoder
from t2t.problems import spaces, text_problems
from t2t.problems.text2text_distributed import DistributedText2TextProblem

TRAIN, EVAL = spaces.DatasetSplit.TRAIN, spaces.DatasetSplit.EVAL


def _write_inputs(tmp_dir, prefix, count):
    """`count` files `<prefix>-<i>.tsv` of two "source<TAB>target" lines each."""
    for i in range(count):
        corpus_testing.write_file(os.path.join(tmp_dir, "%s-%d.tsv" % (prefix, i)),
                                  "%s %d a\t%s %d A\n%s %d b\t%s %d B\n" % ((prefix, i) * 4))


class Sharded(DistributedText2TextProblem):
    """As user code writes one: inputs are tab-separated files in tmp_dir."""
    name = "sharded_test"
    is_generate_per_split = True
    approx_vocab_size = 2**7
    tmp_dir = None  # set by the tests: input_files has no tmp_dir argument

    @property
    def dataset_splits(self):
        return [{"split": TRAIN, "shards": 3}, {"split": EVAL, "shards": 1}]

    def input_files(self, dataset_split=TRAIN):
        prefix = "train" if dataset_split == TRAIN else "dev"
        return sorted(os.path.join(self.tmp_dir, name) for name in os.listdir(self.tmp_dir)
                      if name.startswith(prefix + "-"))

    def generate_samples(self, data_dir, tmp_dir, dataset_split, input_files):
        for path in input_files:
            yield from text_problems.text2text_txt_tab_iterator(path)


def _shard_texts(problem, path, encoder):
    return sorted(encoder.decode(ex["inputs"][:-1])
                  for ex in corpus_testing.read_examples([path]))


def test_divide_equally_gives_the_first_tasks_the_remainder():
    files = list("abcdefg")
    slices = [DistributedText2TextProblem._divide_equally(files, 3, t) for t in range(3)]
    assert slices == [["a", "b", "c"], ["d", "e"], ["f", "g"]]
    assert [DistributedText2TextProblem._divide_equally(files[:2], 2, t) for t in (0, 1)] == \
        [["a"], ["b"]]
    assert text_problems.DistributedText2TextProblem is DistributedText2TextProblem


def test_each_task_writes_its_shard_from_its_input_files(tmp_path):
    tmp_dir, data_dir = str(tmp_path / "tmp"), str(tmp_path / "data")
    _write_inputs(tmp_dir, "train", 7)
    _write_inputs(tmp_dir, "dev", 2)
    p = Sharded()
    p.tmp_dir = tmp_dir
    assert p.num_output_shards == p.num_generate_tasks == 4
    assert [p._task_id_to_output_split(t) for t in range(4)] == [
        (TRAIN, 3, 0), (TRAIN, 3, 1), (TRAIN, 3, 2), (EVAL, 1, 0)]
    assert [os.path.basename(f) for f in p._task_id_to_input_files(1)] == \
        ["train-3.tsv", "train-4.tsv"]

    with pytest.raises(errors.UserError, match="vocab.sharded_test.128.subwords .* missing"):
        p.generate_data(data_dir, tmp_dir, task_id=1)
    p.prepare_to_generate(data_dir, tmp_dir)  # the vocabulary, from the training inputs only
    vocab_texts = list(p.generate_text_for_vocab(data_dir, tmp_dir))
    assert len(vocab_texts) == 2 * 2 * 7 and "dev 0 a" not in vocab_texts
    p.generate_data(data_dir, tmp_dir, task_id=1)
    shard1 = p._task_id_to_output_file(data_dir, 1).replace("-unshuffled", "")
    assert os.path.basename(shard1) == "sharded_test-train-00001-of-00003"
    assert sorted(n for n in os.listdir(data_dir) if not n.startswith(".")) == [
        "sharded_test-train-00001-of-00003", "vocab.sharded_test.128.subwords"]
    encoder = text_encoder.SubwordTextEncoder(os.path.join(data_dir, p.vocab_filename))
    assert _shard_texts(p, shard1, encoder) == ["train 3 a", "train 3 b", "train 4 a",
                                                "train 4 b"]

    p.generate_data(data_dir, tmp_dir)  # task_id -1: every task in turn
    dev = _shard_texts(p, p.dev_filepaths(data_dir, 1, True)[0], encoder)
    assert dev == ["dev 0 a", "dev 0 b", "dev 1 a", "dev 1 b"]
    first = corpus_testing.read_examples(p.training_filepaths(data_dir, 3, True)[:1])
    assert sorted(encoder.decode(ex["targets"][:-1]) for ex in first)[:2] == \
        ["train 0 A", "train 0 B"] and len(first) == 6


def test_without_per_split_inputs_the_training_files_feed_every_shard(tmp_path):
    tmp_dir, data_dir = str(tmp_path / "tmp"), str(tmp_path / "data")
    _write_inputs(tmp_dir, "train", 5)

    class Unsplit(Sharded):
        name = "sharded_unsplit_test"
        is_generate_per_split = False

    p = Unsplit()
    p.tmp_dir = tmp_dir
    assert [[os.path.basename(f) for f in p._task_id_to_input_files(t)] for t in range(4)] == \
        [["train-0.tsv", "train-1.tsv"], ["train-2.tsv"], ["train-3.tsv"], ["train-4.tsv"]]
    # The vocabulary reads only the files of the training tasks (0-2), not task 3's.
    assert len(list(p.generate_text_for_vocab(data_dir, tmp_dir))) == 2 * 2 * 4
    p.generate_data(data_dir, tmp_dir)
    encoder = p.get_or_create_vocab(data_dir, None, force_get=True)
    assert _shard_texts(p, p.dev_filepaths(data_dir, 1, True)[0], encoder) == \
        ["train 4 a", "train 4 b"]


def test_too_few_input_files_and_a_bad_task_id_are_errors(tmp_path):
    tmp_dir = str(tmp_path / "tmp")
    _write_inputs(tmp_dir, "train", 2)
    _write_inputs(tmp_dir, "dev", 1)
    p = Sharded()
    p.tmp_dir = tmp_dir
    with pytest.raises(ValueError, match="3 input files for 4 output shards"):
        p.split_to_input_filenames
    with pytest.raises(ValueError, match=r"task_id 4 is outside \[0, 4\)"):
        p._task_id_to_output_split(4)

