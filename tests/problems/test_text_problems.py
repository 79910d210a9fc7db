"""Text problems: vocab files, shards, round trips, packing, user-files problems, iterators."""
import os

from hypothesis import given, settings, strategies as st
import pytest

from t2t.core import errors
from t2t.core import registry
from t2t.core.modes import ModeKeys
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem as problem_lib
from t2t.problems import text_problems

TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL

SENTENCES = ["the cat sat on the mat", "a dog ran in the park", "the sun is hot today",
             "we read books at night", "birds sing in the morning", "rain falls on the roof"]


class TinyEcho(text_problems.Text2TextProblem):
    """Subword vocab from in-test samples; 3 train shards, 1 dev shard."""
    name = "tiny_echo"

    @property
    def approx_vocab_size(self):
        return 2**7

    @property
    def dataset_splits(self):
        return [{"split": problem_lib.DatasetSplit.TRAIN, "shards": 3},
                {"split": problem_lib.DatasetSplit.EVAL, "shards": 1}]

    @property
    def is_generate_per_split(self):
        return True

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        sentences = SENTENCES if dataset_split == TRAIN else SENTENCES[:2]
        for sentence in sentences:
            yield {"inputs": sentence, "targets": sentence.upper()}


def _visible(directory):
    """The files of `directory` without hidden ones (the shard records of shard_check)."""
    return [name for name in os.listdir(directory) if not name.startswith(".")]


def _examples(dataset):
    return [{k: v.tolist() for k, v in ex.items()} for ex in dataset.as_numpy_iterator()]


def _decode(encoder, ids):
    assert ids[-1] == text_encoder.EOS_ID
    return encoder.decode(ids[:-1])


def test_subword_problem_generates_vocab_shards_and_round_trips(tmp_path):
    data_dir = str(tmp_path)
    TinyEcho().generate_data(data_dir, None)
    names = sorted(_visible(data_dir))
    assert names == ["tiny_echo-dev-00000-of-00001", "tiny_echo-train-00000-of-00003",
                     "tiny_echo-train-00001-of-00003", "tiny_echo-train-00002-of-00003",
                     "vocab.tiny_echo.128.subwords"]
    assert TinyEcho().vocab_filename == "vocab.tiny_echo.128.subwords"
    p = TinyEcho()
    train = _examples(p.dataset(TRAIN, data_dir=data_dir))
    encoder = p.get_feature_encoders(data_dir)["inputs"]
    assert isinstance(encoder, text_encoder.SubwordTextEncoder)
    pairs = sorted((_decode(encoder, ex["inputs"]), _decode(encoder, ex["targets"]))
                   for ex in train)
    assert pairs == sorted((s, s.upper()) for s in SENTENCES)
    dev = _examples(p.dataset(EVAL, data_dir=data_dir))
    assert sorted(_decode(encoder, ex["inputs"]) for ex in dev) == sorted(SENTENCES[:2])
    hp = p.get_hparams()
    assert hp.modality == {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
    assert hp.vocab_size["inputs"] == encoder.vocab_size == hp.vocab_size["targets"]
    assert hp.stop_at_eos and hp.loss_multiplier == 1.0
    assert p.eval_metrics()[-3:] == ["approx_bleu_score", "rouge_2_fscore", "rouge_L_fscore"]
    assert p.batch_size_means_tokens and p.has_inputs
    # A second run finds the files and the vocab and leaves them alone.
    before = {n: (tmp_path / n).read_bytes() for n in names}
    TinyEcho().generate_data(data_dir, None)
    assert {n: (tmp_path / n).read_bytes() for n in names} == before


def test_missing_vocab_is_a_one_line_error(tmp_path):
    with pytest.raises(errors.UserError) as raised:
        TinyEcho().get_feature_encoders(str(tmp_path))
    assert "vocab.tiny_echo.128.subwords" in str(raised.value)
    assert "t2t-datagen --problem=tiny_echo" in str(raised.value)
    with pytest.raises(errors.UserError, match="needs data_dir"):
        TinyEcho().get_feature_encoders(None)


def test_unsplit_samples_spread_over_every_split(tmp_path):
    class Unsplit(TinyEcho):
        name = "tiny_unsplit"
        is_generate_per_split = False
        vocab_type = text_problems.VocabType.CHARACTER
    Unsplit().generate_data(str(tmp_path), None)
    train = _examples(Unsplit().dataset(TRAIN, data_dir=str(tmp_path)))
    dev = _examples(Unsplit().dataset(EVAL, data_dir=str(tmp_path)))
    # Round-robin over 3 train + 1 dev shards: samples 0-5 go to shards 0, 1, 2, dev, 0, 1.
    assert (len(train), len(dev)) == (5, 1)
    encoder = text_encoder.ByteTextEncoder()
    assert sorted(_decode(encoder, ex["inputs"]) for ex in train + dev) == sorted(SENTENCES)
    assert not os.path.exists(tmp_path / "vocab.tiny_unsplit.128.subwords")
    hp = Unsplit().get_hparams()
    assert hp.loss_multiplier == 2.0 and hp.vocab_size["targets"] == 258


def test_packed_length_adds_segmentation_and_position(tmp_path):
    class Packed(TinyEcho):
        name = "tiny_packed"
        packed_length = 64
        vocab_type = text_problems.VocabType.CHARACTER
        dataset_splits = [{"split": TRAIN, "shards": 1}, {"split": EVAL, "shards": 1}]
    p = Packed()
    fields, _ = p.example_reading_spec()
    assert set(fields) == {"inputs", "targets", "inputs_segmentation", "inputs_position",
                           "targets_segmentation", "targets_position"}
    hp = p.get_hparams()
    assert hp.modality["targets_position"] == ModalityType.IDENTITY
    assert hp.vocab_size["inputs_segmentation"] is None
    assert p.max_length(registry.hparams("basic_1")) == 64
    p.generate_data(str(tmp_path), None)
    packed = _examples(Packed().dataset(TRAIN, data_dir=str(tmp_path)))
    for ex in packed:
        assert len(ex["inputs"]) <= 64 and len(ex["targets"]) <= 64
        assert len(ex["targets_segmentation"]) == len(ex["targets"])
        assert len(ex["inputs_position"]) == len(ex["inputs"])
        assert ex["targets_position"][0] == 0 and ex["targets_segmentation"][0] == 1
    # Every sentence of the training split is in exactly one packed segment.
    encoder = text_encoder.ByteTextEncoder()
    found = []
    for ex in packed:
        for segment in set(ex["inputs_segmentation"]) - {0}:
            ids = [i for i, s in zip(ex["inputs"], ex["inputs_segmentation"]) if s == segment]
            found.append(_decode(encoder, ids))
    assert sorted(found) == sorted(SENTENCES)
    assert len(packed) < len(SENTENCES)


def test_text2self_problem_has_no_inputs(tmp_path):
    class Lm(text_problems.Text2SelfProblem):
        name = "tiny_lm"
        vocab_type = text_problems.VocabType.CHARACTER
        is_generate_per_split = False
        dataset_splits = [{"split": TRAIN, "shards": 1}, {"split": EVAL, "shards": 1}]

        def generate_samples(self, data_dir, tmp_dir, dataset_split):
            return text_problems.text2self_txt_iterator(os.path.join(tmp_dir, "lm.txt"))
    (tmp_path / "lm.txt").write_text("\n".join(SENTENCES) + "\n")
    p = Lm()
    assert not p.has_inputs and set(p.example_reading_spec()[0]) == {"targets"}
    p.generate_data(str(tmp_path / "data"), str(tmp_path))
    examples = _examples(Lm().dataset(TRAIN, data_dir=str(tmp_path / "data")))
    assert set(examples[0]) == {"targets", "batch_prediction_key"}
    assert set(Lm().get_hparams().modality) == {"targets"}


class Sentiment(text_problems.Text2ClassProblem):
    name = "tiny_sentiment"
    vocab_type = text_problems.VocabType.CHARACTER
    is_generate_per_split = False
    dataset_splits = [{"split": TRAIN, "shards": 1}, {"split": EVAL, "shards": 1}]
    num_classes = 2

    def class_labels(self, data_dir):
        return ["neg", "pos"]

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for i, sentence in enumerate(SENTENCES):
            yield {"inputs": sentence, "label": i % 2}


def test_text2class_problem_reads_fixed_length_targets(tmp_path):
    Sentiment().generate_data(str(tmp_path), None)
    examples = _examples(Sentiment().dataset(EVAL, data_dir=str(tmp_path)))
    assert examples and all(ex["targets"] in ([0], [1]) for ex in examples)
    fields, _ = Sentiment().example_reading_spec()
    assert fields["targets"].shape == [1]
    hp = Sentiment().get_hparams()
    assert hp.modality == {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
    assert hp.vocab_size["targets"] == 2
    assert hp.vocabulary["targets"].decode([1]) == "pos"
    assert text_problems.Text2ClassProblem.class_labels(Sentiment(), None) == ["ID_0", "ID_1"]


def test_text_concat_and_real_problems(tmp_path):
    class Pairs(Sentiment):
        name = "tiny_pairs"

        def generate_samples(self, data_dir, tmp_dir, dataset_split):
            for i in range(4):
                yield {"inputs": [SENTENCES[i], SENTENCES[i + 1]], "label": i % 2}
    base = text_problems.TextConcat2ClassProblem
    pairs = type("ConcatPairs", (Pairs, base), {
        "generate_text_for_vocab": base.generate_text_for_vocab,
        "generate_encoded_samples": base.generate_encoded_samples})
    limited = type("LimitedPairs", (pairs,), {"max_samples_for_vocab": 1})
    assert list(limited().generate_text_for_vocab(None, None)) == SENTENCES[:2]
    samples = list(pairs().generate_encoded_samples(str(tmp_path), None, TRAIN))
    dollar = text_encoder.ByteTextEncoder().encode("$")[0]
    assert samples[0]["inputs"].count(dollar) == 1 and samples[0]["inputs"][-1] == 1
    assert samples[1]["targets"] == [1]

    class Scores(text_problems.Text2RealProblem):
        name = "tiny_scores"
        vocab_type = text_problems.VocabType.CHARACTER
        is_generate_per_split = False
        dataset_splits = [{"split": TRAIN, "shards": 1}, {"split": EVAL, "shards": 1}]
        ntasks = 2

        def generate_samples(self, data_dir, tmp_dir, dataset_split):
            for i, sentence in enumerate(SENTENCES):
                yield {"inputs": sentence, "targets": [i * 0.5, -1.0]}
    Scores().generate_data(str(tmp_path / "real"), None)
    examples = _examples(Scores().dataset(TRAIN, data_dir=str(tmp_path / "real")))
    assert len(examples) == 3
    assert all(len(ex["targets"]) == 1 and ex["targets"][0][0][1] == -1.0 for ex in examples)
    hp = Scores().get_hparams()
    assert hp.modality["targets"] == ModalityType.REAL_L2_LOSS and hp.vocab_size["targets"] == 2
    assert hp.target_space_id == problem_lib.SpaceID.REAL and hp.regression_targets
    assert Scores().eval_metrics() == ["rmse"]


def test_question_and_context_problem(tmp_path):
    class Qa(text_problems.QuestionAndContext2TextProblem):
        name = "tiny_qa"
        approx_vocab_size = 2**7
        is_generate_per_split = False
        dataset_splits = [{"split": TRAIN, "shards": 1}, {"split": EVAL, "shards": 1}]

        def generate_samples(self, data_dir, tmp_dir, dataset_split):
            for sentence in SENTENCES:
                yield {"inputs": "who?", "context": sentence, "targets": sentence.split()[1]}
    Qa().generate_data(str(tmp_path), None)
    p = Qa()
    examples = _examples(p.dataset(TRAIN, data_dir=str(tmp_path)))
    encoder = p.get_feature_encoders()["context"]
    assert encoder.decode([Qa.QUESTION_SEPARATOR_ID]) == "<EOQ>"
    contexts = sorted(_decode(encoder, ex["context"]) for ex in examples)
    assert set(contexts) <= set(SENTENCES) and len(contexts) == 3
    assert p.get_hparams().modality["context"] == ModalityType.SYMBOL


def test_max_samples_for_vocab_limits_vocab_text():
    class Limited(TinyEcho):
        max_samples_for_vocab = 2
    texts = list(Limited().generate_text_for_vocab(None, None))
    assert texts == [SENTENCES[0], SENTENCES[0].upper(), SENTENCES[1], SENTENCES[1].upper()]


def test_text2text_tmpdir_reads_the_users_files(tmp_path):
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    tmp_dir.mkdir()
    p = registry.problem("text2text_tmpdir")
    with pytest.raises(errors.UserError) as raised:
        p.generate_data(str(data_dir), str(tmp_dir))
    assert "inputs.train.txt is missing" in str(raised.value)
    assert "one input sentence per line" in str(raised.value)
    for split, sentences in (("train", SENTENCES), ("eval", SENTENCES[:2])):
        (tmp_dir / ("inputs.%s.txt" % split)).write_text("\n".join(sentences) + "\n")
        (tmp_dir / ("targets.%s.txt" % split)).write_text(
            "\n".join(s[::-1] for s in sentences) + "\n")
    registry.problem("text2text_tmpdir").generate_data(str(data_dir), str(tmp_dir))
    files = _visible(data_dir)
    assert "vocab.text2text_tmpdir.32768.subwords" in files
    assert len([f for f in files if "-train-" in f]) == 100
    p = registry.problem("text2text_tmpdir")
    dev = _examples(p.dataset(EVAL, data_dir=str(data_dir)))
    encoder = p.get_feature_encoders()["targets"]
    assert sorted(_decode(encoder, ex["targets"]) for ex in dev) == sorted(
        s[::-1] for s in SENTENCES[:2])


def test_text2text_tmpdir_tsv(tmp_path):
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    tmp_dir.mkdir()
    with pytest.raises(errors.UserError) as raised:
        registry.problem("text2text_tmpdir_tsv").generate_data(str(data_dir), str(tmp_dir))
    message = str(raised.value)
    assert "train.tsv is missing" in message and "input<TAB>target" in message
    (tmp_dir / "train.tsv").write_text("".join("%s\t%s\n" % (s, s.title()) for s in SENTENCES)
                                       + "no tab on this line\n")
    (tmp_dir / "eval.tsv").write_text("%s\t%s\n" % (SENTENCES[0], SENTENCES[0].title()))
    registry.problem("text2text_tmpdir_tsv").generate_data(str(data_dir), str(tmp_dir))
    p = registry.problem("text2text_tmpdir_tsv_rev")
    dev = _examples(p.dataset(EVAL, data_dir=str(data_dir)))
    encoder = p.get_feature_encoders()["inputs"]
    assert [(_decode(encoder, ex["inputs"]), _decode(encoder, ex["targets"]))
            for ex in dev] == [(SENTENCES[0].title(), SENTENCES[0])]
    train = _examples(registry.problem("text2text_tmpdir_tsv").dataset(
        TRAIN, data_dir=str(data_dir)))
    assert len(train) == len(SENTENCES)


def test_text2text_tmpdir_tokens(tmp_path):
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    tmp_dir.mkdir()
    (tmp_dir / "inputs.train.txt").write_text("a b c\nc b\n")
    (tmp_dir / "targets.train.txt").write_text("x y\ny z q\n")
    (tmp_dir / "inputs.eval.txt").write_text("a c\n")
    (tmp_dir / "targets.eval.txt").write_text("z x\n")
    p = registry.problem("text2text_tmpdir_tokens")
    assert p.vocab_filename == "vocab.text2text_tmpdir_tokens.tokens"
    with pytest.raises(errors.UserError, match="vocab.txt is missing"):
        p.generate_data(str(data_dir), str(tmp_dir))
    (tmp_dir / "vocab.txt").write_text("a\nb\nc\nx\ny\nz\n")
    registry.problem("text2text_tmpdir_tokens").generate_data(str(data_dir), str(tmp_dir))
    p = registry.problem("text2text_tmpdir_tokens")
    train = _examples(p.dataset(TRAIN, data_dir=str(data_dir)))
    encoder = p.get_feature_encoders()["targets"]
    assert sorted(_decode(encoder, ex["targets"]) for ex in train) == ["x y", "y z <UNK>"]


def test_chopped_text_problem(tmp_path):
    class Chopped(text_problems.ChoppedTextProblem):
        name = "tiny_chopped"
        vocab_type = text_problems.VocabType.CHARACTER
        dataset_splits = [{"split": TRAIN, "shards": 2}, {"split": EVAL, "shards": 1}]
        sequence_length = 8

        def train_text_filepaths(self, tmp_dir):
            return [os.path.join(tmp_dir, "a.txt"), os.path.join(tmp_dir, "b.txt")]

        def dev_text_filepaths(self, tmp_dir):
            return [os.path.join(tmp_dir, "c.txt")]
    for name, text in (("a.txt", "abcdefghij"), ("b.txt", "0123456789abcdef"), ("c.txt", "xyz")):
        (tmp_path / name).write_text(text)
    p = Chopped()
    assert p.multiprocess_generate and p.num_generate_tasks == 3
    assert p.text_filepaths_for_task(str(tmp_path), 1) == [str(tmp_path / "b.txt")]
    p.generate_data(str(tmp_path / "data"), str(tmp_path))
    train = _examples(Chopped().dataset(TRAIN, data_dir=str(tmp_path / "data")))
    assert all(len(ex["targets"]) == 8 for ex in train)
    decoded = sorted(text_encoder.ByteTextEncoder().decode([i for i in ex["targets"] if i])
                     for ex in train)
    assert decoded == ["01234567", "89abcdef", "abcdefgh", "ij"]


@given(st.lists(st.tuples(st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
                                  min_size=1).map(str.strip).filter(bool),
                          st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
                                  min_size=1).map(str.strip).filter(bool)),
                max_size=8))
@settings(max_examples=30, deadline=None)
def test_tab_iterator_round_trips(tmp_path_factory, pairs):
    path = tmp_path_factory.mktemp("tsv") / "data.tsv"
    with open(path, "w", encoding="utf-8") as f:
        for inputs, targets in pairs:
            f.write("%s\t%s\n" % (inputs, targets))
    read = [(s["inputs"], s["targets"]) for s in text_problems.text2text_txt_tab_iterator(
        str(path))]
    assert read == [(i.strip(), t.strip()) for i, t in pairs]


@given(st.lists(st.integers(0, 2), min_size=1, max_size=10))
@settings(max_examples=20, deadline=None)
def test_class_and_real_iterators(tmp_path_factory, labels):
    folder = tmp_path_factory.mktemp("it")
    (folder / "x.txt").write_text("".join("text %d\n" % i for i in range(len(labels))))
    names = ["neg", "neutral", "pos"]
    (folder / "y.txt").write_text("".join(names[label] + "\n" for label in labels))
    (folder / "r.txt").write_text("".join("%d 0.5\n" % label for label in labels))
    samples = list(text_problems.text2class_txt_iterator(
        str(folder / "x.txt"), str(folder / "y.txt"), class_strs=names))
    assert [s["label"] for s in samples] == labels
    reals = list(text_problems.text2real_txt_iterator(str(folder / "x.txt"),
                                                      str(folder / "r.txt")))
    assert [s["targets"] for s in reals] == [[float(label), 0.5] for label in labels]


def test_line_iterators(tmp_path):
    (tmp_path / "s.txt").write_text(" a b \nc\n")
    (tmp_path / "t.txt").write_text("x\ny\n")
    (tmp_path / "d.txt").write_text("p\nq\n")
    assert list(text_problems.txt_line_iterator(str(tmp_path / "s.txt"))) == ["a b", "c"]
    assert list(text_problems.text2text_distill_iterator(
        str(tmp_path / "s.txt"), str(tmp_path / "t.txt"), str(tmp_path / "d.txt")))[1] == {
        "inputs": "c", "targets": "y", "dist_targets": "q"}
    (tmp_path / "labels.txt").write_text("pos\nmaybe\n")
    with pytest.raises(ValueError, match="'maybe'"):
        list(text_problems.text2class_txt_iterator(str(tmp_path / "s.txt"),
                                                   str(tmp_path / "labels.txt"),
                                                   class_strs=["neg", "pos"]))
    encoded = list(text_problems.text2text_generate_encoded(
        iter([{"inputs": "1 2", "targets": "3"}]), text_encoder.TextEncoder(),
        inputs_prefix="7 "))
    assert encoded == [{"inputs": [9, 3, 4, 1], "targets": [5, 1]}]
