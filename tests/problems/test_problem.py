"""The Problem base class: file names, hparams, rev/copy, reading, input functions."""
import types

import numpy as np
import pytest
import tensorflow as tf

from t2t.core import errors
from t2t.core import hparam
from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem as problem_lib

TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL
PREDICT = ModeKeys.PREDICT

# Ten train examples of growing length and three dev ones; ids >= 2, EOS appended.
TRAIN_CASES = [{"inputs": list(range(2, 3 + i)) + [1], "targets": [9] * (i + 1) + [1]}
               for i in range(10)]
DEV_CASES = [{"inputs": [5, 6, 7, 1], "targets": [8, 1]},
             {"inputs": [4, 1], "targets": [3, 3, 3, 1]},
             {"inputs": [2, 3, 1], "targets": [7, 6, 1]}]


class ToyCopy(problem_lib.Problem):
    """A tiny fixture Problem: 2 train shards, 1 dev shard, symbol vocab of 12."""
    name = "toy_copy"

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        generator_utils.generate_dataset_and_shuffle(
            iter(TRAIN_CASES), self.training_filepaths(data_dir, 2, shuffled=True),
            iter(DEV_CASES), self.dev_filepaths(data_dir, 1, shuffled=True), shuffle=False)

    def hparams(self, defaults, model_hparams):
        defaults.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
        defaults.vocab_size = {"inputs": 12, "targets": 10}
        defaults.input_space_id = problem_lib.SpaceID.EN_TOK
        defaults.target_space_id = problem_lib.SpaceID.DE_TOK

    @property
    def batch_size_means_tokens(self):
        return True


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("toy"))
    ToyCopy().generate_data(path, None)
    return path


def _examples(dataset):
    return [{k: v.tolist() for k, v in ex.items()} for ex in dataset.as_numpy_iterator()]


def test_constants():
    assert (problem_lib.DatasetSplit.TRAIN, problem_lib.DatasetSplit.EVAL,
            problem_lib.DatasetSplit.TEST) == ("train", "eval", "test")
    assert (problem_lib.SpaceID.GENERIC, problem_lib.SpaceID.EN_TOK, problem_lib.SpaceID.DIGIT_0,
            problem_lib.SpaceID.REAL, problem_lib.SpaceID.PICKLED_PYTHON) == (0, 3, 10, 24, 30)
    assert problem_lib.TaskID.EN_Q_CONT == 7


def test_file_paths_and_patterns():
    p = ToyCopy()
    assert p.training_filepaths("/d", 2, shuffled=True) == [
        "/d/toy_copy-train-00000-of-00002", "/d/toy_copy-train-00001-of-00002"]
    # T2T appends the suffix to the base name: "<name>-unshuffled-dev-...".
    assert p.dev_filepaths("/d", 1, shuffled=False) == [
        "/d/toy_copy-unshuffled-dev-00000-of-00001"]
    assert p.test_filepaths("/d", 1, shuffled=True) == ["/d/toy_copy-test-00000-of-00001"]
    assert p.data_filepaths("eval", "/d", 1, True) == p.dev_filepaths("/d", 1, True)
    assert p.filepattern("/d", TRAIN) == "/d/toy_copy-train*"
    assert p.filepattern("/d", PREDICT) == "/d/toy_copy-dev*"
    assert p.filepattern("/d", EVAL, shard=3) == "/d/toy_copy-dev-00003*"
    assert p.filepattern("/d", "test") == "/d/toy_copy-test*"
    with pytest.raises(ValueError, match="unknown dataset split 'valid'"):
        p.data_filepaths("valid", "/d", 1, True)


def test_default_hparams_and_caching():
    p = problem_lib.Problem()
    hp = p.get_hparams()
    assert (hp.loss_multiplier, hp.batch_size_multiplier, hp.stop_at_eos) == (1.0, 1, False)
    assert (hp.modality, hp.vocab_size) == ({}, {})
    assert (hp.input_space_id, hp.target_space_id) == (0, 0)
    assert isinstance(hp.vocabulary["inputs"], text_encoder.TextEncoder)
    assert p.get_hparams() is hp, "cached"
    assert p.has_inputs
    model_hp = registry.hparams("basic_1")
    assert p.max_length(model_hp) == 4096
    model_hp.max_length = 256
    assert p.max_length(model_hp) == 256
    assert ToyCopy().tpu_batch_size_per_shard(model_hp) == 16
    assert p.tpu_batch_size_per_shard(model_hp) == 4096
    assert p.eval_metrics() == ["accuracy", "accuracy_top5", "accuracy_per_sequence",
                                "neg_log_perplexity"]
    assert p.skip_random_fraction_when_training and not p.batch_size_means_tokens
    assert (p.eval_hooks(None, None, None), p.decode_hooks, p.export_assets) == ([], [], None)
    assert problem_lib.problem_hparams_to_features(ToyCopy().get_hparams()) == {
        "input_space_id": 3, "target_space_id": 8}


def test_hparams_must_return_none():
    class Bad(problem_lib.Problem):
        def hparams(self, defaults, model_hparams):
            return defaults
    with pytest.raises(ValueError, match="return None"):
        Bad().get_hparams()


def test_rev_and_copy_hparams():
    rev = ToyCopy(was_reversed=True).get_hparams()
    assert rev.vocab_size == {"inputs": 10, "targets": 12}
    assert (rev.input_space_id, rev.target_space_id) == (8, 3)
    assert rev.was_reversed and not rev.was_copy
    copy = ToyCopy(was_copy=True).get_hparams()
    assert copy.vocab_size == {"inputs": 12, "targets": 12}
    assert copy.target_space_id == 3 and copy.was_copy
    both = ToyCopy(was_reversed=True, was_copy=True).get_hparams()
    assert both.vocab_size == {"inputs": 10, "targets": 10}


def test_reverse_swaps_whatever_the_dict_order():
    class TargetsFirst(ToyCopy):
        def hparams(self, defaults, model_hparams):
            super().hparams(defaults, model_hparams)
            defaults.vocab_size = {"targets": 10, "inputs": 12,
                                   "targets_segmentation": None}
    hp = TargetsFirst(was_reversed=True).get_hparams()
    assert hp.vocab_size == {"inputs": 10, "targets": 12, "targets_segmentation": None}


def test_maybe_reverse_and_copy_features():
    features = {"inputs": 1, "targets": 2, "inputs_segmentation": 3, "targets_position": 4,
                "other": 5}
    ToyCopy(was_reversed=True).maybe_reverse_features(features)
    assert features == {"targets": 1, "inputs": 2, "targets_segmentation": 3,
                        "inputs_position": 4, "other": 5}
    features = {"inputs": 1, "targets": 2, "inputs_segmentation": 3}
    ToyCopy(was_copy=True).maybe_copy_features(features)
    assert features == {"inputs": 1, "targets": 1, "inputs_segmentation": 3,
                        "targets_segmentation": 3}
    unchanged = {"inputs": 1, "targets": 2}
    ToyCopy().maybe_reverse_and_copy(unchanged)
    assert unchanged == {"inputs": 1, "targets": 2}


def test_feature_info():
    p = ToyCopy()
    with pytest.raises(ValueError, match="call get_hparams"):
        p.feature_info
    p.get_hparams()
    info = p.feature_info
    assert (info["inputs"].modality, info["inputs"].vocab_size, info["inputs"].space_id) == (
        ModalityType.SYMBOL, 12, 3)
    assert (info["targets"].vocab_size, info["targets"].space_id) == (10, 8)
    assert isinstance(info["targets"].encoder, text_encoder.TextEncoder)


def _hp(**values):
    hp = problem_lib.default_model_hparams()
    for name, value in values.items():
        setattr(hp, name, value)
    return hp


def _common(example, mode, **values):
    example = {k: tf.constant(v, dtype=tf.int64) for k, v in example.items()}
    out = problem_lib.preprocess_example_common(example, mode, _hp(**values))
    if isinstance(out, tf.data.Dataset):
        return _examples(out)
    return {k: v.numpy().tolist() for k, v in out.items()}


def test_preprocess_example_common_truncates_and_prepends():
    ex = {"inputs": [5, 6, 7, 1], "targets": [8, 9, 1]}
    assert _common(ex, TRAIN, max_input_seq_length=2, max_target_seq_length=2) == {
        "inputs": [5, 6], "targets": [8, 9]}
    for mode_name in ("prepend_inputs_masked_attention", "prepend_inputs_full_attention"):
        assert _common(ex, TRAIN, prepend_mode=mode_name) == {
            "inputs": [5, 6, 7, 1], "targets": [5, 6, 7, 1, 0, 8, 9, 1]}
        assert _common(ex, PREDICT, prepend_mode=mode_name, max_input_seq_length=2) == {
            "inputs": [5, 6], "targets": [8, 9, 1], "partial_targets": [5, 6, 0]}
    # Truncation of the targets comes after prepending, as T2T.
    assert _common(ex, EVAL, prepend_mode="prepend_inputs_full_attention",
                   max_target_seq_length=5)["targets"] == [5, 6, 7, 1, 0]
    assert _common({"targets": [3, 4]}, TRAIN, max_input_seq_length=1) == {"targets": [3, 4]}


def test_split_to_length_gives_padded_chunks():
    chunks = _common({"targets": [2, 3, 4, 5, 6, 1], "batch_prediction_key": [0]}, TRAIN,
                     split_to_length=4)
    assert chunks == [{"targets": [[[2]], [[3]], [[4]], [[5]]]},
                      {"targets": [[[6]], [[1]], [[0]], [[0]]]}]


def test_decode_example():
    example = generator_utils.to_example({"inputs": [4, 5, 1], "targets": [7, 1]})
    decoded = ToyCopy().decode_example(tf.constant(example.SerializeToString()))
    assert {k: v.numpy().tolist() for k, v in decoded.items()} == {
        "inputs": [4, 5, 1], "targets": [7, 1], "batch_prediction_key": [0]}

    class WithDecoders(ToyCopy):
        def example_reading_spec(self):
            fields = {"inputs": tf.io.VarLenFeature(tf.int64),
                      "label": tf.io.FixedLenFeature([1], tf.int64, default_value=3)}
            return fields, {"inputs": lambda f: f["inputs"] * 2, "targets": lambda f: f["label"]}
    decoded = WithDecoders().decode_example(tf.constant(example.SerializeToString()))
    assert {k: v.numpy().tolist() for k, v in decoded.items()} == {
        "inputs": [8, 10, 2], "targets": [3]}


def test_dataset_reads_every_split(data_dir):
    assert _examples(ToyCopy().dataset(EVAL, data_dir=data_dir)) == [
        dict(case, batch_prediction_key=[0]) for case in DEV_CASES]
    assert _examples(ToyCopy().dataset(PREDICT, data_dir=data_dir))[0]["inputs"] == [5, 6, 7, 1]
    train = _examples(ToyCopy().dataset(TRAIN, data_dir=data_dir))
    assert sorted(ex["inputs"] for ex in train) == sorted(c["inputs"] for c in TRAIN_CASES)
    # Without file shuffling, shards are read in order: shard 0 holds cases 0, 2, 4, ...
    in_order = _examples(ToyCopy().dataset(TRAIN, data_dir=data_dir, shuffle_files=False))
    assert [ex["inputs"] for ex in in_order] == [
        c["inputs"] for c in TRAIN_CASES[0::2] + TRAIN_CASES[1::2]]
    assert len(_examples(ToyCopy().dataset(TRAIN, data_dir=data_dir, shard=1))) == 5
    assert len(_examples(ToyCopy().dataset(EVAL, data_dir=data_dir, max_records=2))) == 2
    part = _examples(ToyCopy().dataset(TRAIN, data_dir=data_dir, partition_id=1,
                                       num_partitions=2, shuffle_files=False))
    assert [ex["inputs"] for ex in part] == [c["inputs"] for c in TRAIN_CASES[1::2]]
    rev = _examples(ToyCopy(was_reversed=True).dataset(EVAL, data_dir=data_dir))
    assert rev[0]["inputs"] == [8, 1] and rev[0]["targets"] == [5, 6, 7, 1]
    dev_as_train = _examples(ToyCopy().dataset(TRAIN, data_dir=data_dir, dataset_split=EVAL))
    assert len(dev_as_train) == 3


def test_dataset_in_a_tf1_graph_has_tf1s_methods(data_dir):
    # T2T-era code: problem.dataset(...).make_one_shot_iterator(), .output_shapes.
    assert not hasattr(ToyCopy().dataset(EVAL, data_dir=data_dir), "make_one_shot_iterator")
    with tf.Graph().as_default():
        dataset = ToyCopy().dataset(EVAL, data_dir=data_dir)
        assert dataset.output_shapes["inputs"].as_list() == [None]
        batch = dataset.padded_batch(3, dataset.output_shapes).make_one_shot_iterator()
        with tf.compat.v1.Session() as sess:
            inputs = sess.run(batch.get_next()["inputs"])
    assert inputs.tolist() == [[5, 6, 7, 1], [4, 1, 0, 0], [2, 3, 1, 0]]


def test_dataset_errors(tmp_path, data_dir):
    with pytest.raises(errors.UserError) as raised:
        ToyCopy().dataset(TRAIN, data_dir=str(tmp_path))
    message = str(raised.value)
    assert "toy_copy-train*" in message and "t2t-datagen --problem=toy_copy" in message
    assert "\n" not in message
    with pytest.raises(errors.UserError, match="needs a data_dir"):
        ToyCopy().dataset(TRAIN)
    with pytest.raises(ValueError, match="fewer than the 3 partitions"):
        ToyCopy().dataset(TRAIN, data_dir=data_dir, num_partitions=3)


def test_dataset_preprocessing(data_dir):
    hp = registry.hparams("basic_1")
    hp.max_input_seq_length = 2
    dev = _examples(ToyCopy().dataset(EVAL, data_dir=data_dir, hparams=hp))
    assert [ex["inputs"] for ex in dev] == [[5, 6], [4, 1], [2, 3]]
    assert hp.data_dir == data_dir
    raw = _examples(ToyCopy().dataset(EVAL, data_dir=data_dir, hparams=hp, preprocess=False))
    assert raw[0]["inputs"] == [5, 6, 7, 1]

    class LanguageModel(ToyCopy):
        def example_reading_spec(self):
            return {"targets": tf.io.VarLenFeature(tf.int64)}, None
    lm_hp = registry.hparams("basic_1")
    lm_hp.split_to_length = 2
    for shuffle_files in (False, True):
        chunks = _examples(LanguageModel().dataset(EVAL, data_dir=data_dir, hparams=lm_hp,
                                                   shuffle_files=shuffle_files))
        # Dev targets [8 1], [3 3 3 1], [7 6 1] -> 1 + 2 + 2 chunks of 2.
        assert sorted(np.array(c["targets"]).reshape(-1).tolist() for c in chunks) == sorted(
            [[8, 1], [3, 3], [3, 1], [7, 6], [1, 0]])


def test_dataset_packs_on_the_fly(data_dir):
    hp = registry.hparams("basic_1")
    hp.pack_dataset = True
    hp.max_length = 8
    packed = _examples(ToyCopy().dataset(EVAL, data_dir=data_dir, hparams=hp))
    assert packed and all(len(ex["targets"]) == 8 for ex in packed)
    assert {"inputs_segmentation", "targets_position"} <= set(packed[0])
    targets = [t for ex in packed for t in ex["targets"] if t]
    assert sorted(targets) == sorted(t for c in DEV_CASES for t in c["targets"])


def test_input_fn_batches_with_model_shapes(data_dir):
    hp = registry.hparams("basic_1")
    hp.batch_size = 16
    dataset = ToyCopy().input_fn(EVAL, hp, data_dir=data_dir)
    features, labels = next(iter(dataset))
    assert features["inputs"].dtype == tf.int32
    assert features["inputs"].shape.rank == 4 and features["inputs"].shape[2:] == [1, 1]
    assert labels.shape.rank == 4
    # make_estimator_input_fn forwards to input_fn with params and config.
    estimator_fn = ToyCopy().make_estimator_input_fn(EVAL, hp, data_dir=data_dir)
    features, _ = next(iter(estimator_fn({}, None)))
    assert features["targets"].shape[2:] == [1, 1]


def test_dataset_partition():
    p = ToyCopy()
    assert p._dataset_partition(TRAIN, None, {}) == (0, 1)
    tpu = types.SimpleNamespace(per_host_input_for_training=True, num_shards=16)
    config = types.SimpleNamespace(tpu_config=tpu)
    assert p._dataset_partition(TRAIN, config, {}) == (0, 2)
    assert p._dataset_partition(TRAIN, config, {}) == (1, 2)
    with pytest.raises(ValueError, match="3 times for 2 partitions"):
        p._dataset_partition(TRAIN, config, {})
    assert p._dataset_partition(EVAL, config, {}) == (0, 1)
    context = types.SimpleNamespace(num_hosts=4)
    assert p._dataset_partition(TRAIN, config, {"context": context}) == (0, 4)


def test_serving_input_fn_parses_serialized_examples():
    hp = registry.hparams("basic_1")
    serialized = [generator_utils.to_example({"inputs": [4, 5, 1], "targets": [7, 1]})
                  .SerializeToString(),
                  generator_utils.to_example({"inputs": [6, 1], "targets": [2, 1]})
                  .SerializeToString()]
    with tf.Graph().as_default():
        receiver = ToyCopy().serving_input_fn(hp)
        assert "targets" not in receiver.features
        with tf.compat.v1.Session() as session:
            inputs = session.run(receiver.features["inputs"],
                                 {receiver.receiver_tensors["input"]: serialized})
    assert inputs.shape == (2, 3, 1, 1) and inputs.dtype == np.int32
    assert inputs[:, :, 0, 0].tolist() == [[4, 5, 1], [6, 1, 0]]


def test_eval_metric_fns(monkeypatch):
    fake_fns = {name: (lambda *a, name=name: name) for name in (
        "accuracy", "accuracy_top5", "accuracy_per_sequence", "neg_log_perplexity")}
    monkeypatch.setattr(problem_lib.metrics, "METRICS_FNS", fake_fns)
    fns = ToyCopy().eval_metric_fns(None)
    assert sorted(fns) == sorted(fake_fns)

    class NeedsBleu(ToyCopy):
        def eval_metrics(self):
            return ["accuracy", "approx_bleu_score"]
    with pytest.raises(ValueError, match="unknown metrics \\['approx_bleu_score'\\]"):
        NeedsBleu().eval_metric_fns(None)


def test_default_model_hparams_is_a_no_op():
    hp = problem_lib.default_model_hparams()
    assert isinstance(hp, hparam.HParams)
    assert (hp.max_input_seq_length, hp.max_target_seq_length, hp.prepend_mode,
            hp.split_to_length, hp.data_dir) == (0, 0, "none", 0, None)


def test_input_fn_reads_records_in_windows_when_that_changes_nothing(data_dir, monkeypatch):
    p = ToyCopy()
    hp = registry.hparams("basic_1")
    hp.batch_size = 16
    assert p.reads_record_windows(TRAIN, hp) and p.reads_record_windows(EVAL, hp)
    assert not p.reads_record_windows(PREDICT, hp)
    for name, value in (("max_target_seq_length", 3),
                        ("prepend_mode", "prepend_inputs_full_attention"),
                        ("split_to_length", 4)):
        changed = registry.hparams("basic_1")
        changed.set_hparam(name, value) if hasattr(changed, name) else \
            changed.add_hparam(name, value)
        assert not p.reads_record_windows(TRAIN, changed), name
        assert p.reads_record_windows(TRAIN, changed, preprocess=False), name

    class OwnPreprocessing(ToyCopy):
        def preprocess_example(self, example, mode, hparams):
            example["targets"] = example["targets"][:1]
            return example

    assert not OwnPreprocessing().reads_record_windows(TRAIN, hp)
    assert not ToyCopy(was_reversed=True).reads_record_windows(PREDICT, hp)

    def signature(dataset):
        return sorted((f["inputs"].numpy().tobytes(), f["targets"].numpy().tobytes())
                      for f, _ in dataset)

    # The batches are those of the per-example dataset, also for a reversed problem and
    # for packed rows.
    packed_hp = registry.hparams("basic_1")
    packed_hp.batch_size, packed_hp.max_length = 16, 8
    packed_hp.pack_dataset = True
    assert p.reads_record_windows(TRAIN, packed_hp)
    for problem, hparams in ((ToyCopy(), hp), (ToyCopy(was_reversed=True), hp),
                             (ToyCopy(), packed_hp)):
        windowed = problem.input_fn(EVAL, hparams, data_dir=data_dir)
        monkeypatch.setattr(type(problem), "reads_record_windows", lambda *a, **k: False)
        per_example = problem.input_fn(EVAL, hparams, data_dir=data_dir)
        monkeypatch.undo()
        assert signature(windowed) == signature(per_example)
        if hparams is packed_hp:
            features, _ = next(iter(problem.input_fn(EVAL, hparams, data_dir=data_dir)))
            assert "targets_segmentation" in features
    # A reversed problem's inputs are its targets.
    reversed_inputs = sorted(np.trim_zeros(row.ravel(), "b").tolist()
                             for f, _ in ToyCopy(was_reversed=True).input_fn(
                                 EVAL, hp, data_dir=data_dir) for row in f["inputs"].numpy())
    assert reversed_inputs == sorted(c["targets"] for c in DEV_CASES)
    # Training reads every file through the windows too (shuffled, repeated).
    features, _ = next(iter(p.input_fn(TRAIN, hp, data_dir=data_dir)))
    assert features["targets"].shape[2:] == [1, 1]


class ManyShardCopy(ToyCopy):
    """ToyCopy with 600 training examples in 8 shards: enough for file interleaving to
    show its order."""
    name = "many_shard_copy"

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        cases = [{"inputs": [2 + i % 9, 2 + i // 9 % 9, 1], "targets": [2 + i % 7, 1]}
                 for i in range(600)]
        generator_utils.generate_dataset_and_shuffle(
            iter(cases), self.training_filepaths(data_dir, 8, shuffled=True),
            iter(DEV_CASES), self.dev_filepaths(data_dir, 1, shuffled=True), shuffle=False)


def test_a_seeded_training_input_is_the_same_every_time(tmp_path):
    """With the seeds set (as --random_seed sets them), the shuffled training input gives
    the same examples in the same order every time: files are interleaved in a fixed
    order (T2T read them "sloppily", in whatever order its threads finished)."""
    import random

    data_dir = str(tmp_path)
    ManyShardCopy().generate_data(data_dir, None)
    hparams = registry.hparams("basic_1")
    hparams.batch_size = 64

    def seeded_reads():
        random.seed(1)
        tf.random.set_seed(1)
        examples = [ex["inputs"].numpy().tobytes() + ex["targets"].numpy().tobytes()
                    for ex in ManyShardCopy().dataset(TRAIN, data_dir=data_dir).take(600)]
        random.seed(1)
        tf.random.set_seed(1)
        batches = [features["targets"].numpy().tobytes() for features, _ in
                   ManyShardCopy().input_fn(TRAIN, hparams, data_dir=data_dir).take(20)]
        return examples, batches

    first = seeded_reads()
    assert seeded_reads() == first     # T2T's sloppy interleave failed this
    assert len(set(first[0])) > 60     # the files' examples, shuffled, not one file's
