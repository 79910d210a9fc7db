"""Base classes for text Problems and their line iterators.

* `Text2TextProblem`: text -> text.       * `Text2SelfProblem`: text (language model).
* `Text2ClassProblem`: text -> class id.  * `Text2RealProblem`: text -> float(s).
* `QuestionAndContext2TextProblem`: question + context -> text.
* `ChoppedTextProblem`: long text files chopped into fixed-length LM examples.

A subclass yields raw strings; the Problem builds the vocabulary, encodes, appends
EOS, writes the shards and shuffles them:

    @registry.register_problem
    class MyEcho(Text2TextProblem):
        is_generate_per_split = False
        approx_vocab_size = 2**8
        def generate_samples(self, data_dir, tmp_dir, dataset_split):
            for word in ["hello world", "good bye"] * 50:
                yield {"inputs": word, "targets": word.upper()}

    MyEcho().generate_data("/d", "/tmp")
    # /d/vocab.my_echo.256.subwords, /d/my_echo-train-000{00..99}-of-00100,
    # /d/my_echo-dev-00000-of-00001

The registered problems that read a user's own files from --tmp_dir without a Python
class (`text2text_tmpdir`, `text2text_tmpdir_tsv`, ...) live in `text_problems_tmpdir`;
`t2t.problems.text_problems` (T2T's module path) exposes both.
"""
import itertools
import os

from absl import logging
import tensorflow as tf

from t2t.core import errors
from t2t.core.progress import Progress
from t2t.data import generator_utils
from t2t.encoders import escaping
from t2t.encoders import text_encoder
from t2t.encoders import text_lines
from t2t.layers.modality_type import ModalityType
from t2t.problems import preprocessing
from t2t.problems import problem
from t2t.problems import spaces


class VocabType:
    """Available text vocabularies."""
    CHARACTER = "character"
    SUBWORD = "subwords"
    TOKEN = "tokens"


class Text2TextProblem(problem.Problem):
    """Text to text. Subclasses override `generate_samples` and `is_generate_per_split`."""

    # -- Subclass interface ----------------------------------------------------
    @property
    def dataset_splits(self):
        """Splits to produce and the number of shards of each."""
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 100},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    @property
    def is_generate_per_split(self):
        """True: `generate_samples` is called once per split; False: once, and its
        samples are spread over all the splits' shards."""
        raise NotImplementedError(
            "%s must define is_generate_per_split (True or False)" % type(self).__name__)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """Yield {"inputs": str, "targets": str} for `dataset_split`."""
        raise NotImplementedError("%s must define generate_samples" % type(self).__name__)

    @property
    def vocab_type(self):
        """SUBWORD (built from the data), CHARACTER (bytes) or TOKEN (your file)."""
        return VocabType.SUBWORD

    @property
    def approx_vocab_size(self):
        """Target size of a SUBWORD vocabulary."""
        return 2**15

    @property
    def additional_reserved_tokens(self):
        """Tokens given ids 2, 3, ... after PAD and EOS (SUBWORD only)."""
        return []

    @property
    def oov_token(self):
        """Out-of-vocabulary token (TOKEN only)."""
        return None

    @property
    def max_samples_for_vocab(self):
        """How many training samples the SUBWORD vocab is built from (None: all)."""
        return None

    @property
    def packed_length(self):
        """If set, examples are packed offline into sequences of this length."""
        return None

    @property
    def packed_spacing(self):
        """Padding inserted between packed examples."""
        return 0

    @property
    def max_subtoken_length(self):
        """Longest subtoken when building a SUBWORD vocab (the build is quadratic in it)."""
        return 200

    @property
    def already_shuffled(self):
        """True if `generate_samples` output needs no shuffling."""
        return False

    @property
    def inputs_prefix(self):
        """Text put before every input before encoding."""
        return ""

    @property
    def targets_prefix(self):
        """Text put before every target before encoding."""
        return ""

    @property
    def use_vocab_from_other_problem(self):
        """A Text2TextProblem whose vocabulary this one uses, or None."""
        return None

    # -- Implementation --------------------------------------------------------
    @property
    def has_inputs(self):
        return True

    @property
    def batch_size_means_tokens(self):
        return True

    def max_length(self, model_hparams):
        return self.packed_length or super().max_length(model_hparams)

    @property
    def vocab_filename(self):
        """"vocab.<name>.<approx_vocab_size>.subwords" or "vocab.<name>.tokens"."""
        other_problem = self.use_vocab_from_other_problem
        if other_problem:
            return other_problem.vocab_filename
        if self.vocab_type == VocabType.SUBWORD:
            return "vocab.%s.%d.%s" % (self.dataset_filename(), self.approx_vocab_size,
                                       VocabType.SUBWORD)
        return "vocab.%s.%s" % (self.dataset_filename(), VocabType.TOKEN)

    def feature_encoders(self, data_dir):
        encoder = self.get_or_create_vocab(data_dir, None, force_get=True)
        encoders = {"targets": encoder}
        if self.has_inputs:
            encoders["inputs"] = encoder
        return encoders

    def _samples_for_vocab(self, data_dir, tmp_dir):
        """The first `max_samples_for_vocab` training samples (all if None)."""
        samples = self.generate_samples(data_dir, tmp_dir, spaces.DatasetSplit.TRAIN)
        return itertools.islice(samples, self.max_samples_for_vocab or None)

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        """The training texts the SUBWORD vocab is built from."""
        for sample in self._samples_for_vocab(data_dir, tmp_dir):
            if self.has_inputs:
                yield sample["inputs"]
            yield sample["targets"]

    def _vocab_path(self, data_dir):
        if not data_dir:
            raise errors.UserError("problem %s needs data_dir to find its vocabulary %s; pass "
                                   "data_dir (--data_dir)" % (self.name, self.vocab_filename))
        return os.path.join(data_dir, self.vocab_filename)

    def _text_for_vocab_with_progress(self, data_dir, tmp_dir):
        progress = Progress("vocab %s" % self.vocab_filename, unit="texts",
                            total=self.max_samples_for_vocab)
        for text in self.generate_text_for_vocab(data_dir, tmp_dir):
            progress.update(1, chars=len(text))
            yield text
        progress.done()

    def get_or_create_vocab(self, data_dir, tmp_dir, force_get=False):
        """The encoder; a SUBWORD vocab is built and written unless it exists or force_get."""
        if self.vocab_type == VocabType.CHARACTER:
            return text_encoder.ByteTextEncoder()
        if self.vocab_type == VocabType.SUBWORD:
            if force_get:
                vocab_path = self._vocab_path(data_dir)
                if not tf.io.gfile.exists(vocab_path):
                    raise errors.UserError(
                        "vocabulary %s of problem %s is missing; run t2t-datagen --problem=%s "
                        "--data_dir=%s first" % (vocab_path, self.name, self.name, data_dir))
                return text_encoder.SubwordTextEncoder(vocab_path)
            other_problem = self.use_vocab_from_other_problem
            if other_problem:
                return other_problem.get_or_create_vocab(data_dir, tmp_dir, force_get)
            self._vocab_path(data_dir)
            return generator_utils.get_or_generate_vocab_inner(
                data_dir, self.vocab_filename, self.approx_vocab_size,
                self._text_for_vocab_with_progress(data_dir, tmp_dir),
                max_subtoken_length=self.max_subtoken_length,
                reserved_tokens=(text_encoder.RESERVED_TOKENS +
                                 list(self.additional_reserved_tokens)))
        if self.vocab_type == VocabType.TOKEN:
            vocab_path = self._vocab_path(data_dir)
            if not tf.io.gfile.exists(vocab_path):
                raise errors.UserError(
                    "token vocabulary %s of problem %s is missing; write one token per line "
                    "there (TokenTextEncoder.store_to_file)" % (vocab_path, self.name))
            return text_encoder.TokenTextEncoder(vocab_path, replace_oov=self.oov_token)
        raise ValueError("problem %s has unknown vocab_type %r; use a VocabType constant" %
                         (self.name, self.vocab_type))

    def _pack_fn(self):
        """None, or a function packing a shard's serialized records (for shuffle_dataset)."""
        if not self.packed_length:
            return None

        def pack_records(records):
            examples = []
            for record in records:
                example = tf.train.Example.FromString(record)
                features = example.features.feature
                example_dict = {"targets": list(features["targets"].int64_list.value)}
                if self.has_inputs:
                    example_dict["inputs"] = list(features["inputs"].int64_list.value)
                examples.append(example_dict)
            packed = self._maybe_pack_examples(examples)
            return [generator_utils.to_example(ex).SerializeToString(deterministic=True)
                    for ex in packed]

        return pack_records

    def _maybe_pack_examples(self, generator):
        """Wrap `generator` with the offline packer if `packed_length` is set."""
        if not self.packed_length:
            return generator
        return generator_utils.pack_examples(
            generator, self.has_inputs, self.packed_length, spacing=self.packed_spacing,
            chop_long_sequences=not self.has_inputs)

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        """Samples with each side encoded and EOS appended: {"inputs": [ids.., 1], ...}."""
        generator = self.generate_samples(data_dir, tmp_dir, dataset_split)
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        return text2text_generate_encoded(generator, encoder, has_inputs=self.has_inputs,
                                          inputs_prefix=self.inputs_prefix,
                                          targets_prefix=self.targets_prefix)

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        """Write every split's shards (unshuffled names), then shuffle (and pack) them."""
        del task_id
        tf.io.gfile.makedirs(data_dir)
        filepath_fns = {
            spaces.DatasetSplit.TRAIN: self.training_filepaths,
            spaces.DatasetSplit.EVAL: self.dev_filepaths,
            spaces.DatasetSplit.TEST: self.test_filepaths,
        }
        split_paths = [(split["split"], filepath_fns[split["split"]](
            data_dir, split["shards"], shuffled=self.already_shuffled))
            for split in self.dataset_splits]
        all_paths = [path for _, paths in split_paths for path in paths]
        if self.is_generate_per_split:
            for split, paths in split_paths:
                generator_utils.generate_files(
                    self.generate_encoded_samples(data_dir, tmp_dir, split), paths)
        else:
            generator_utils.generate_files(
                self.generate_encoded_samples(data_dir, tmp_dir, spaces.DatasetSplit.TRAIN),
                all_paths)
        generator_utils.shuffle_dataset(all_paths, extra_fn=self._pack_fn())

    def hparams(self, defaults, unused_model_hparams):
        p = defaults
        p.stop_at_eos = True
        p.modality = {"targets": ModalityType.SYMBOL}
        p.vocab_size = {"targets": self._encoders["targets"].vocab_size}
        if self.has_inputs:
            p.modality["inputs"] = ModalityType.SYMBOL
            p.vocab_size["inputs"] = self._encoders["inputs"].vocab_size
        if self.vocab_type == VocabType.CHARACTER:
            p.loss_multiplier = 2.0
        if self.packed_length:
            names = ["targets_segmentation", "targets_position"]
            if self.has_inputs:
                names += ["inputs_segmentation", "inputs_position"]
            for name in names:
                p.modality[name] = ModalityType.IDENTITY
                p.vocab_size[name] = None

    def example_reading_spec(self):
        data_fields = {"targets": tf.io.VarLenFeature(tf.int64)}
        if self.has_inputs:
            data_fields["inputs"] = tf.io.VarLenFeature(tf.int64)
        if self.packed_length:
            prefixes = ["inputs", "targets"] if self.has_inputs else ["targets"]
            for prefix in prefixes:
                data_fields[prefix + "_segmentation"] = tf.io.VarLenFeature(tf.int64)
                data_fields[prefix + "_position"] = tf.io.VarLenFeature(tf.int64)
        return data_fields, None

    def eval_metrics(self):
        return super().eval_metrics() + [
            "approx_bleu_score", "rouge_2_fscore", "rouge_L_fscore"]


class QuestionAndContext2TextProblem(Text2TextProblem):
    """Question ("inputs") + "context" -> targets; the context shares the inputs' vocab."""
    QUESTION_SEPARATOR = "<EOQ>"
    QUESTION_SEPARATOR_ID = 2

    @property
    def additional_reserved_tokens(self):
        return [self.QUESTION_SEPARATOR]

    def feature_encoders(self, data_dir):
        encoders = super().feature_encoders(data_dir)
        encoders["context"] = encoders["inputs"]
        return encoders

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        for sample in self._samples_for_vocab(data_dir, tmp_dir):
            yield sample["inputs"]
            yield sample["context"]
            yield sample["targets"]

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        for sample in super().generate_encoded_samples(data_dir, tmp_dir, dataset_split):
            sample["context"] = encoder.encode(sample["context"]) + [text_encoder.EOS_ID]
            yield sample

    def hparams(self, defaults, unused_model_hparams):
        super().hparams(defaults, unused_model_hparams)
        defaults.modality["context"] = ModalityType.SYMBOL
        defaults.vocab_size["context"] = self._encoders["context"].vocab_size
        if self.packed_length:
            raise NotImplementedError("%s: QuestionAndContext2TextProblem cannot be packed; "
                                      "set packed_length to None" % self.name)

    def example_reading_spec(self):
        data_fields, decoders = super().example_reading_spec()
        data_fields["context"] = tf.io.VarLenFeature(tf.int64)
        return data_fields, decoders


class Text2SelfProblem(Text2TextProblem):
    """Language modelling: `generate_samples` yields {"targets": str} only."""

    @property
    def has_inputs(self):
        return False


class Text2ClassProblem(Text2TextProblem):
    """Text -> class: samples are {"inputs": str, "label": int in [0, num_classes)}.

    Targets are stored as a one-element list and read back as FixedLen([1]) int64.
    """

    @property
    def num_classes(self):
        raise NotImplementedError("%s must define num_classes" % type(self).__name__)

    def class_labels(self, data_dir):
        """Names of the classes: ["ID_0", "ID_1", ...] unless overridden."""
        del data_dir
        return ["ID_%d" % i for i in range(self.num_classes)]

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        for sample in self._samples_for_vocab(data_dir, tmp_dir):
            yield sample["inputs"]

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        # Samples first, as T2T: a generate_samples that is a plain function (not a
        # generator) may write a TOKEN vocabulary before it is read.
        samples = self.generate_samples(data_dir, tmp_dir, dataset_split)
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        for sample in samples:
            inputs = encoder.encode(sample["inputs"]) + [text_encoder.EOS_ID]
            yield {"inputs": inputs, "targets": [sample["label"]]}

    def feature_encoders(self, data_dir):
        encoder = self.get_or_create_vocab(data_dir, None, force_get=True)
        return {"inputs": encoder,
                "targets": text_encoder.ClassLabelEncoder(self.class_labels(data_dir))}

    def hparams(self, defaults, unused_model_hparams):
        p = defaults
        p.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.CLASS_LABEL}
        p.vocab_size = {"inputs": self._encoders["inputs"].vocab_size,
                        "targets": self.num_classes}

    def example_reading_spec(self):
        data_fields = {"inputs": tf.io.VarLenFeature(tf.int64),
                       "targets": tf.io.FixedLenFeature([1], tf.int64)}
        return data_fields, None


class TextConcat2ClassProblem(Text2ClassProblem):
    """Several input texts joined by CONCAT_TOKEN -> class (e.g. NLI pairs).

    Samples are {"inputs": [str, str, ...], "label": int}.
    """
    CONCAT_TOKEN = "$"

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        # T2T broke out of the inner loop only, so max_samples_for_vocab was ignored.
        for sample in self._samples_for_vocab(data_dir, tmp_dir):
            yield from sample["inputs"]

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        concat_id = encoder.encode(self.CONCAT_TOKEN)[0]
        for sample in self.generate_samples(data_dir, tmp_dir, dataset_split):
            inputs = []
            for index, text in enumerate(sample["inputs"]):
                inputs += encoder.encode(text)
                if index < len(sample["inputs"]) - 1:
                    inputs.append(concat_id)
            inputs.append(text_encoder.EOS_ID)
            yield {"inputs": inputs, "targets": [sample["label"]]}


class Text2RealProblem(Text2TextProblem):
    """Text -> `ntasks` real values: samples are {"inputs": str, "targets": [floats]}."""

    @property
    def ntasks(self):
        """Set to n > 1 for multitask regression."""
        return 1

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        for sample in self._samples_for_vocab(data_dir, tmp_dir):
            yield sample["inputs"]

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        for sample in self.generate_samples(data_dir, tmp_dir, dataset_split):
            inputs = encoder.encode(sample["inputs"]) + [text_encoder.EOS_ID]
            yield {"inputs": inputs, "targets": [float(x) for x in sample["targets"]]}

    def feature_encoders(self, data_dir):
        encoder = self.get_or_create_vocab(data_dir, None, force_get=True)
        return {"inputs": encoder, "targets": text_encoder.RealEncoder()}

    def hparams(self, defaults, unused_model_hparams):
        p = defaults
        p.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.REAL_L2_LOSS}
        p.vocab_size = {"inputs": self._encoders["inputs"].vocab_size, "targets": self.ntasks}
        p.target_space_id = spaces.SpaceID.REAL
        p.add_hparam("regression_targets", True)

    def max_length(self, model_hparams):
        return model_hparams.batch_size * self.ntasks

    def preprocess_example(self, example, mode, hparams):
        example = preprocessing.preprocess_example_common(example, mode, hparams)
        example["targets"] = tf.reshape(example["targets"], [1, 1, self.ntasks])
        return example

    def example_reading_spec(self):
        data_fields = {"inputs": tf.io.VarLenFeature(tf.int64),
                       "targets": tf.io.FixedLenFeature([self.ntasks], tf.float32)}
        return data_fields, None

    def eval_metrics(self):
        return ["rmse", "pearson"] if self.ntasks == 1 else ["rmse"]


# ----------------------------------------------------------------------------
# Iterators over text files
# ----------------------------------------------------------------------------
def txt_line_iterator(txt_path):
    """Each line of a UTF-8 text file, stripped: "a b\\r c\\n" -> "a b", "c".

    Lines end at "\\n", "\\r\\n" or "\\r"; a byte order mark is dropped; a byte that is
    not UTF-8 is a one-line UserError naming file, line and column (`text_lines`).
    """
    for line in text_lines.read_lines(txt_path):
        yield line.strip()


def text2text_txt_iterator(source_txt_path, target_txt_path):
    """{"inputs": line i of source, "targets": line i of target}."""
    for inputs, targets in zip(txt_line_iterator(source_txt_path),
                               txt_line_iterator(target_txt_path)):
        yield {"inputs": inputs, "targets": targets}


def text2text_distill_iterator(source_txt_path, target_txt_path, distill_txt_path):
    """{"inputs", "targets", "dist_targets"} from three parallel files."""
    for inputs, targets, dist_targets in zip(txt_line_iterator(source_txt_path),
                                             txt_line_iterator(target_txt_path),
                                             txt_line_iterator(distill_txt_path)):
        yield {"inputs": inputs, "targets": targets, "dist_targets": dist_targets}


def text2self_txt_iterator(txt_path):
    """{"targets": line} for each line."""
    for line in txt_line_iterator(txt_path):
        yield {"targets": line}


def text2class_txt_iterator(source_txt_path, label_txt_path, class_strs=None):
    """{"inputs": text, "label": int} from a text file and a label file.

    Labels are ints, or names listed in `class_strs` (["neg", "pos"]: "pos" -> 1).
    """
    class_ids = {name: i for i, name in enumerate(class_strs)} if class_strs else None
    for inputs, label in zip(txt_line_iterator(source_txt_path),
                             txt_line_iterator(label_txt_path)):
        label = label.strip()
        if class_ids is not None:
            if label not in class_ids:
                raise ValueError("label %r in %s is not one of %s" %
                                 (label, label_txt_path, class_strs))
            yield {"inputs": inputs, "label": class_ids[label]}
        else:
            yield {"inputs": inputs, "label": int(label)}


def text2real_txt_iterator(source_txt_path, target_txt_path):
    """{"inputs": text, "targets": [floats]}; target lines hold space-separated floats."""
    for inputs, targets in zip(txt_line_iterator(source_txt_path),
                               txt_line_iterator(target_txt_path)):
        yield {"inputs": inputs, "targets": [float(x) for x in targets.split()]}


def txt_line_sharded_iterator(txt_pattern):
    """The lines of every file matching a glob pattern, in sorted file order."""
    for txt_path in sorted(tf.io.gfile.glob(txt_pattern)):
        for line in txt_line_iterator(txt_path):
            yield line


# A TSV file whose bad lines (no tab, or more than one) are more than this fraction of its
# lines, and at least TSV_BAD_LINES_MIN of them, is refused: it is likely not "input<TAB>
# target" at all (another separator, a column more). Fewer are one warning line.
TSV_BAD_LINES_FRACTION = 0.01
TSV_BAD_LINES_MIN = 10
_TSV_LINES_NAMED = 5
_tsv_reported = set()


def _tsv_report(path, lines, kinds):
    """The one-line account of a TSV file's bad lines ("" when it has none).

    `kinds`: [(what, count, first line numbers)], e.g. [("no tab (skipped)", 2, [3, 50])]
    -> "f.tsv: 2 of 2000 lines have no tab (skipped; lines 3, 50)".
    """
    parts = []
    for what, count, numbers in kinds:
        if count:
            named = ", ".join(str(n) for n in numbers) + (", ..." if count > len(numbers)
                                                          else "")
            parts.append("%d%s %s %s; %s %s)" % (
                count, "" if parts else " of %d lines" % lines, "has" if count == 1 else "have",
                what, "line" if count == 1 else "lines", named))
    return "%s: %s" % (path, ", ".join(parts)) if parts else ""


def _tab_file_pairs(txt_path):
    """(inputs, targets) of each "input<TAB>target" line of one file, then its account:
    one warning line for a few bad lines, a UserError past the TSV_BAD_LINES_* limits."""
    lines = no_tab = extra = 0
    no_tab_at, extra_at = [], []
    for lines, line in enumerate(txt_line_iterator(txt_path), 1):
        if not line:
            continue
        if "\t" not in line:
            no_tab += 1
            if len(no_tab_at) < _TSV_LINES_NAMED:
                no_tab_at.append(lines)
            continue
        inputs, targets = line.split("\t", 1)
        if "\t" in targets:
            extra += 1
            if len(extra_at) < _TSV_LINES_NAMED:
                extra_at.append(lines)
        yield inputs.strip(), targets.strip()
    report = _tsv_report(txt_path, lines, [
        ("no tab (skipped", no_tab, no_tab_at),
        ("more than one tab (the target keeps the rest", extra, extra_at)])
    bad = no_tab + extra
    if bad >= TSV_BAD_LINES_MIN and bad > TSV_BAD_LINES_FRACTION * lines:
        raise errors.UserError("%s; more than %g%% of the lines are bad: make each line "
                               "input<TAB>target" % (report, 100 * TSV_BAD_LINES_FRACTION))
    if report and report not in _tsv_reported:  # once, though vocab and data both read it
        _tsv_reported.add(report)
        logging.warning(report)


def check_tsv_file(txt_path):
    """Read `txt_path` as `text2text_txt_tab_iterator` does, for its UserError or warning
    before anything is written."""
    for _ in _tab_file_pairs(txt_path):
        pass


def text2text_txt_tab_iterator(txt_path):
    """{"inputs", "targets"} from "input<TAB>target" lines; lines without a tab are skipped.

        "hallo\\thello\\n" -> {"inputs": "hallo", "targets": "hello"}
    A path ending in ".tsv*" is read as a glob of shards. A line with more tabs keeps
    them in its target (as T2T). Lines without a tab or with more than one are counted and
    reported in one warning line per file, at its end; a UserError when they are more than
    1% of its lines and at least 10.
    """
    paths = (sorted(tf.io.gfile.glob(txt_path)) if txt_path.endswith(".tsv*")
             else [txt_path])
    for path in paths:
        for inputs, targets in _tab_file_pairs(path):
            yield {"inputs": inputs, "targets": targets}


def text2text_generate_encoded(sample_generator, vocab, targets_vocab=None, has_inputs=True,
                               inputs_prefix="", targets_prefix=""):
    """Encode each sample's text with `vocab` and append EOS (1) to each side."""
    targets_vocab = targets_vocab or vocab
    for sample in sample_generator:
        if has_inputs:
            sample["inputs"] = vocab.encode(inputs_prefix + sample["inputs"])
            sample["inputs"].append(text_encoder.EOS_ID)
        sample["targets"] = targets_vocab.encode(targets_prefix + sample["targets"])
        sample["targets"].append(text_encoder.EOS_ID)
        yield sample


class ChoppedTextProblem(Text2SelfProblem):
    """Text files tokenized and chopped into `sequence_length`-token LM examples.

    Generation runs as `num_train_shards + num_dev_shards` tasks, one output shard
    each (`multiprocess_generate`).
    """

    def train_text_filepaths(self, tmp_dir):
        """Local paths of the training text files (may download them)."""
        raise NotImplementedError()

    def dev_text_filepaths(self, tmp_dir):
        """Local paths of the dev text files (may download them)."""
        raise NotImplementedError()

    @property
    def sequence_length(self):
        """Tokens per example."""
        raise NotImplementedError()

    def max_length(self, model_hparams):
        return model_hparams.split_to_length or self.sequence_length

    def text_filepaths_for_task(self, tmp_dir, task_id):
        """The text files task `task_id` reads: every num_shards-th file of its split."""
        if not 0 <= task_id < self.num_train_shards + self.num_dev_shards:
            raise ValueError("task_id %d is outside [0, %d)" %
                             (task_id, self.num_train_shards + self.num_dev_shards))
        if task_id < self.num_train_shards:
            return [f for i, f in enumerate(self.train_text_filepaths(tmp_dir))
                    if i % self.num_train_shards == task_id]
        return [f for i, f in enumerate(self.dev_text_filepaths(tmp_dir))
                if i % self.num_dev_shards == task_id - self.num_train_shards]

    def filepath_to_unicode_strings(self, filepath):
        """The text of a file as unicode strings (one string by default)."""
        with tf.io.gfile.GFile(filepath, "rb") as f:
            yield escaping.to_unicode_ignore_errors(f.read())

    def file_generator(self, filepaths, max_chars_per_file=None, max_chars_total=None):
        """Strings from the files, cut to at most the given numbers of characters."""
        chars_total = 0
        for filepath in filepaths:
            chars_this_file = 0
            logging.info("reading file %s", filepath)
            for text in self.filepath_to_unicode_strings(filepath):
                if max_chars_per_file and chars_this_file + len(text) > max_chars_per_file:
                    text = text[:max_chars_per_file - chars_this_file]
                if max_chars_total and chars_total + len(text) > max_chars_total:
                    text = text[:max_chars_total - chars_total]
                chars_total += len(text)
                chars_this_file += len(text)
                if text:
                    yield text
                if max_chars_total and chars_total >= max_chars_total:
                    return
                if max_chars_per_file and chars_this_file >= max_chars_per_file:
                    break

    def example_generator(self, encoder, tmp_dir, task_id):
        """{"targets": sequence_length ids} chopped from the task's files."""
        filepaths = self.text_filepaths_for_task(tmp_dir, task_id)
        max_chars_per_file = None
        if task_id >= self.num_train_shards and filepaths:
            # Dev data: limit its total size.
            max_chars_per_file = self.max_dev_chars // (self.num_dev_shards * len(filepaths))
        tokens = []
        for text in self.file_generator(filepaths, max_chars_per_file=max_chars_per_file):
            tokens.extend(encoder.encode(text))
            pos = 0
            while pos + self.sequence_length <= len(tokens):
                yield {"targets": tokens[pos:pos + self.sequence_length]}
                pos += self.sequence_length
            tokens = tokens[pos:]
        if self.remainder_policy == "pad":
            if tokens:
                yield {"targets": tokens + [0] * (self.sequence_length - len(tokens))}
        elif self.remainder_policy != "drop":
            raise ValueError("remainder_policy must be 'pad' or 'drop', not %r" %
                             self.remainder_policy)

    @property
    def remainder_policy(self):
        """What to do with the leftover tokens: "pad" or "drop"."""
        return "pad"

    def prepare_to_generate(self, data_dir, tmp_dir):
        """Build the vocab and fetch the files once, before the parallel tasks."""
        self.get_or_create_vocab(data_dir, tmp_dir)
        self.train_text_filepaths(tmp_dir)
        self.dev_text_filepaths(tmp_dir)

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        return self.file_generator(self.train_text_filepaths(tmp_dir),
                                   max_chars_total=self.max_chars_for_vocab)

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        """Write the shard of `task_id`; every task in turn when task_id is -1."""
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        task_ids = range(self.num_generate_tasks) if task_id < 0 else [task_id]
        for task in task_ids:
            logging.info("generate_data task_id=%d", task)
            if task < self.num_train_shards:
                out_file = self.training_filepaths(
                    data_dir, self.num_train_shards, shuffled=False)[task]
            else:
                out_file = self.dev_filepaths(
                    data_dir, self.num_dev_shards, shuffled=False)[task - self.num_train_shards]
            generator_utils.generate_files(
                self.example_generator(encoder, tmp_dir, task), [out_file])
            generator_utils.shuffle_dataset([out_file])

    @property
    def max_chars_for_vocab(self):
        """Characters of training text the vocab is built from."""
        return 10**7

    @property
    def num_train_shards(self):
        return self.dataset_splits[0]["shards"]

    @property
    def num_dev_shards(self):
        return self.dataset_splits[1]["shards"]

    @property
    def max_dev_chars(self):
        """Limit of the dev set's size in characters."""
        return 10**7

    @property
    def multiprocess_generate(self):
        return True

    @property
    def num_generate_tasks(self):
        return self.num_train_shards + self.num_dev_shards

    def eval_metrics(self):
        return ["accuracy", "neg_log_perplexity"]


class CharactersMixin:
    """The character-level variant of a problem: bytes instead of subwords, and T2T's task
    id for it (`CHARACTERS_TASK_ID`).

        class FooCharacters(text2text.CharactersMixin, Foo):
            CHARACTERS_TASK_ID = spaces.TaskID.EN_NLI
    """
    CHARACTERS_TASK_ID = None

    @property
    def vocab_type(self):
        return VocabType.CHARACTER

    def global_task_id(self):
        return self.CHARACTERS_TASK_ID
