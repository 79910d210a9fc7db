"""TyDi QA primary task problems: `tydiqa` (subwords) and `tydiqa_codepoints` (CANINE-style).

    t2t-datagen --problem=tydiqa_codepoints --data_dir=~/t2t_data --tmp_dir=~/tydi
    # reads (or downloads) ~/tydi/tydiqa-v1.0-{train,dev}.jsonl.gz; writes
    # tydiqa_codepoints-train-000NN-of-00016, tydiqa_codepoints-dev-00000-of-00001,
    # tydiqa_codepoints.dev-examples.jsonl (the decoder's list of dev examples) and
    # tydiqa_codepoints.summary.json; the log ends with lines like
    # "tydiqa train: 166,916 examples, 166,651 used, 389,521 windows (...); skipped 265 (...)"
    t2t-trainer --problem=tydiqa_codepoints --model=transformer_span \\
        --hparams_set=transformer_span_base --data_dir=~/t2t_data --output_dir=~/train
    t2t-decoder --problem=tydiqa_codepoints --model=transformer_span \\
        --hparams_set=transformer_span_base --data_dir=~/t2t_data --output_dir=~/train \\
        --decode_hparams="candidate_beam=30,max_answer_length=100" \\
        --decode_to_file=predictions.jsonl
    t2t-tydi-eval --gold_path=~/tydi/tydiqa-v1.0-dev.jsonl.gz \\
        --predictions_path=predictions.jsonl

Each training/dev record is one window (see `t2t.tydiqa.windows`): int64 features
`inputs`, `input_mask`, `segment_ids` [max_seq_length], `example_id` (64-bit),
`example_index`, `window_index`, `language_id`, `start_position`, `end_position`,
`answer_type`, and in dev `byte_start` / `byte_end` [max_seq_length]. The model sees
`targets` = [start, end, type] as labels; `example_id` never reaches it (T2T casts int64
features to int32) - the decoder maps `example_index` back to the 64-bit id.

Settings are class attributes (the reference's defaults); subclass and register to
change them, e.g. CANINE's `max_seq_length = 2048`, `doc_stride = 512`.
"""
import json
import os
import random

import tensorflow as tf
from absl import logging

from t2t.core import atomic_files
from t2t.core import download
from t2t.core import errors
from t2t.core.modes import ModeKeys
from t2t.core.progress import Progress
from t2t.core import registry
from t2t.data import generator_utils
from t2t.encoders import text_encoder
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem
from t2t.problems import spaces
from t2t.tydiqa import data as tydi_data
from t2t.tydiqa import pipeline
from t2t.tydiqa import postprocess
from t2t.tydiqa import tokenizers
from t2t.tydiqa import windows

URL_BASE = "https://storage.googleapis.com/tydiqa/v1.0/"
TRAIN_FILENAME = "tydiqa-v1.0-train.jsonl.gz"
DEV_FILENAME = "tydiqa-v1.0-dev.jsonl.gz"
_PREDICT = ModeKeys.PREDICT
_TRAIN = ModeKeys.TRAIN


class CodepointTextEncoder(text_encoder.TextEncoder):
    """Codepoints as ids (no reserved ids); the special ids decode to their names."""

    _NAMES = {tydi_data.CLS_CODEPOINT: "[CLS]", tydi_data.SEP_CODEPOINT: "[SEP]",
              tydi_data.Q_CODEPOINT: "[Q]"}

    def __init__(self):
        super().__init__(num_reserved_ids=0)

    def encode(self, s):
        return [ord(c) for c in s]

    def decode(self, ids, strip_extraneous=False):
        return "".join(self.decode_list(ids))

    def decode_list(self, ids):
        out = []
        for i in ids:
            i = int(i)
            if i == 0:
                continue
            if i in self._NAMES:
                out.append(self._NAMES[i])
            elif tydi_data.CANDIDATE_MARKER_BASE <= i < tydi_data.CANDIDATE_MARKER_BASE + \
                    tydi_data.MAX_CANDIDATE_MARKERS:
                out.append("[ContextId=%d]" % (i - tydi_data.CANDIDATE_MARKER_BASE))
            else:
                out.append(chr(i))
        return out

    @property
    def vocab_size(self):
        return tokenizers.CODEPOINT_VOCAB_SIZE


class TydiqaProblem(problem.Problem):
    """Shared by both problems: files, generation, reading and the decoder hook."""

    # Windowing (the mBERT baseline's defaults).
    max_seq_length = 512
    doc_stride = 128
    max_question_length = 64
    max_passages = 45
    include_unknowns = 0.1
    # Decoding defaults (decode_hparams candidate_beam / max_answer_length override them).
    candidate_beam = 30
    max_answer_length = 100
    # Files.
    train_url = URL_BASE + TRAIN_FILENAME
    dev_url = URL_BASE + DEV_FILENAME
    num_train_shards = 16
    num_dev_shards = 1
    # Generation: worker processes (None: every core) and an optional cap per split.
    num_processes = None
    max_examples = None

    tokenizer_kind = None  # "codepoints" or "subwords"

    # ------------------------------------------------------------------ settings
    def window_config(self):
        return windows.WindowConfig(self.max_seq_length, self.doc_stride,
                                    self.max_question_length, self.include_unknowns)

    def tokenizer_spec(self, data_dir):
        raise NotImplementedError()

    def examples_path(self, data_dir):
        """The dev examples (id, language, candidates) the decoder writes one line for."""
        return os.path.join(data_dir, "%s.dev-examples.jsonl" % self.dataset_filename())

    def summary_path(self, data_dir):
        return os.path.join(data_dir, "%s.summary.json" % self.dataset_filename())

    def _processes(self):
        return self.num_processes or problem.cpu_count()

    # ------------------------------------------------------------------ generation
    def source_files(self, tmp_dir):
        """(train path, dev path) in tmp_dir, downloaded from train_url / dev_url if absent.

        Offline, with a file missing, a UserError says at once which files to put where.
        """
        wanted = [(name, url) for name, url in ((TRAIN_FILENAME, self.train_url),
                                                (DEV_FILENAME, self.dev_url))
                  if not atomic_files.path_exists(os.path.join(tmp_dir, name))]
        for name, url in wanted:
            reason = download.unreachable_reason(url)
            if reason:
                raise errors.UserError(
                    "%s: %s is not in --tmp_dir=%s and %s cannot be downloaded (%s); put %s "
                    "there (from %s), or try the pipeline offline on a small synthetic set "
                    "written by t2t-tydi-synthetic --tmp_dir=%s" % (
                        self.name, name, tmp_dir, url, reason,
                        " and ".join(n for n, _ in wanted),
                        " and ".join(u for _, u in wanted), tmp_dir))
        return (download.maybe_download(tmp_dir, TRAIN_FILENAME, self.train_url),
                download.maybe_download(tmp_dir, DEV_FILENAME, self.dev_url))

    def prepare_vocab(self, data_dir, train_path):
        """Build what the tokenizer needs (a subword vocab) before the workers start."""

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        del task_id
        train_path, dev_path = self.source_files(tmp_dir)
        self.prepare_vocab(data_dir, train_path)
        spec = self.tokenizer_spec(data_dir)
        seed = random.getrandbits(31)  # datagen seeds `random` from --random_seed
        config = self.window_config()
        summaries = {}

        train_paths = self.training_filepaths(data_dir, self.num_train_shards, shuffled=False)
        train = pipeline.FeatureStream(
            train_path, pipeline.PipelineSpec(spec, config, self.max_passages, True, seed),
            num_processes=self._processes(), max_examples=self.max_examples, name="train",
            serialize=True)
        generator_utils.generate_files(train, train_paths)
        generator_utils.shuffle_dataset(train_paths, random_seed=seed)
        summaries["train"] = train.summary

        dev_paths = self.dev_filepaths(data_dir, self.num_dev_shards, shuffled=True)
        dev = pipeline.FeatureStream(
            dev_path, pipeline.PipelineSpec(spec, config, self.max_passages, False, seed),
            num_processes=self._processes(), max_examples=self.max_examples, name="dev",
            serialize=True)
        generator_utils.generate_files(dev, dev_paths)
        examples_path = self.examples_path(data_dir)
        if not dev.examples and not atomic_files.path_exists(examples_path):
            list(dev)  # The records existed already; only the examples list is missing.
        if dev.examples:
            with atomic_files.atomic_write(examples_path, "w") as handle:
                for info in dev.examples:
                    handle.write(json.dumps(info.to_json()) + "\n")
            summaries["dev"] = dev.summary
        if summaries["train"].examples or "dev" in summaries:
            with atomic_files.atomic_write(self.summary_path(data_dir), "w") as handle:
                json.dump({name: s.as_dict() for name, s in summaries.items()}, handle,
                          indent=1, sort_keys=True)
        for name, summary in summaries.items():
            if summary.examples:
                logging.info("%s %s", self.name, summary.line())

    # ------------------------------------------------------------------ reading
    def example_reading_spec(self):
        length = self.max_seq_length
        fields = {name: tf.io.FixedLenFeature([length], tf.int64)
                  for name in windows.SEQUENCE_FEATURES}
        for name in windows.EVAL_SEQUENCE_FEATURES:
            fields[name] = tf.io.FixedLenFeature([length], tf.int64,
                                                 default_value=[-1] * length)
        for name in windows.SCALAR_FEATURES:
            fields[name] = tf.io.FixedLenFeature([], tf.int64)
        return fields, None

    def preprocess_example(self, example, mode, hparams):
        example.pop("example_id", None)  # 64-bit; would be cast to int32 (see docstring)
        example.pop("batch_prediction_key", None)
        if mode != _PREDICT:
            example["targets"] = tf.stack([example["start_position"],
                                           example["end_position"], example["answer_type"]])
        if mode == _TRAIN:
            example.pop("byte_start", None)
            example.pop("byte_end", None)
        return example

    def eval_metrics(self):
        return []  # transformer_span reports the accuracy of each head itself

    @property
    def batch_size_means_tokens(self):
        return False

    def max_length(self, model_hparams):
        return self.max_seq_length

    # ------------------------------------------------------------------ decoding
    def read_examples(self, data_dir):
        path = self.examples_path(data_dir)
        if not atomic_files.path_exists(path):
            raise errors.UserError("%s does not exist; run t2t-datagen --problem=%s "
                                   "--data_dir=%s first" % (path, self.name, data_dir))
        with tf.io.gfile.GFile(path, "r") as handle:
            return [pipeline.ExampleInfo.from_json(json.loads(line)) for line in handle
                    if line.strip()]

    def decode_from_dataset(self, estimator, hparams, decode_hp, decode_to_file=None,
                            dataset_split=None, checkpoint_path=None):
        """t2t-decoder's dataset mode: one official-format prediction per dev example.

        Writes `decode_to_file` (default <model_dir>/decode/predictions.jsonl) atomically
        and returns its path.
        """
        if dataset_split not in (None, spaces.DatasetSplit.EVAL):
            raise errors.UserError("TyDi QA has only the dev split to decode; drop "
                                   "--eval_use_test_set")
        data_dir = hparams.get("data_dir")
        examples = self.read_examples(data_dir)
        config = postprocess.PostprocessConfig(
            int(decode_hp.get("candidate_beam", self.candidate_beam) or self.candidate_beam),
            int(decode_hp.get("max_answer_length", self.max_answer_length) or
                self.max_answer_length))
        if decode_hp.get("batch_size"):
            hparams.batch_size = decode_hp.batch_size
        input_fn = self.make_estimator_input_fn(_PREDICT, hparams, data_dir=data_dir)
        builder = postprocess.PredictionBuilder(examples, config)
        progress = Progress("decode %s" % self.name, unit="windows")
        for result in estimator.predict(input_fn, checkpoint_path=checkpoint_path):
            builder.add(result["example_index"], result["start_logits"], result["end_logits"],
                        result["answer_type_logits"], result["byte_start"], result["byte_end"])
            progress.update(1)
        predictions = builder.predictions()
        path = decode_to_file or os.path.join(estimator.model_dir, "decode",
                                              "predictions.jsonl")
        tf.io.gfile.makedirs(os.path.dirname(os.path.abspath(path)))
        with atomic_files.atomic_write(path, "w") as handle:
            for prediction in predictions:
                handle.write(json.dumps(prediction) + "\n")
        answered = sum(p["passage_answer_index"] >= 0 for p in predictions)
        progress.done(examples=len(predictions), answered=answered)
        logging.info("Wrote %d predictions (%d with an answer) to %s", len(predictions),
                     answered, path)
        return path


@registry.register_problem
class Tydiqa(TydiqaProblem):
    """TyDi QA with a subword vocabulary built from training questions and passages."""

    tokenizer_kind = tokenizers.SubwordTokenizer.kind
    approx_vocab_size = 2 ** 15
    vocab_max_examples = 20000  # training examples whose texts build the vocabulary
    max_subtoken_length = 20

    @property
    def vocab_filename(self):
        return "vocab.%s.%d.subwords" % (self.dataset_filename(), self.approx_vocab_size)

    def tokenizer_spec(self, data_dir):
        return tokenizers.TokenizerSpec(self.tokenizer_kind,
                                        os.path.join(data_dir, self.vocab_filename),
                                        self.max_passages)

    def prepare_vocab(self, data_dir, train_path):
        vocab_path = os.path.join(data_dir, self.vocab_filename)
        if atomic_files.path_exists(vocab_path):
            return

        def texts():
            for example in tydi_data.read_examples(train_path, self.vocab_max_examples):
                yield example.question
                for index in range(min(len(example.candidates), self.max_passages)):
                    candidate = example.candidate_bytes(index)
                    if candidate:
                        yield candidate.decode("utf-8", errors="replace")

        encoder = tokenizers.build_subword_encoder(texts(), self.approx_vocab_size,
                                                   self.max_passages,
                                                   self.max_subtoken_length)
        encoder.store_to_file(vocab_path)
        logging.info("%s: subword vocab of %d ids in %s", self.name, encoder.vocab_size,
                     vocab_path)

    def feature_encoders(self, data_dir):
        if not data_dir:
            return {}
        path = os.path.join(data_dir, self.vocab_filename)
        if not atomic_files.path_exists(path):
            raise errors.UserError("%s does not exist; run t2t-datagen --problem=%s "
                                   "--data_dir=%s first" % (path, self.name, data_dir))
        return {"inputs": text_encoder.SubwordTextEncoder(path)}

    def hparams(self, defaults, model_hparams):
        encoder = self.get_feature_encoders().get("inputs")
        if encoder is None:
            raise errors.UserError("problem %s needs --data_dir to find its subword vocab "
                                   "(%s)" % (self.name, self.vocab_filename))
        defaults.modality = {"inputs": ModalityType.SYMBOL}
        defaults.vocab_size = {"inputs": encoder.vocab_size}
        defaults.add_hparam("input_is_codepoints", False)


@registry.register_problem
class TydiqaCodepoints(TydiqaProblem):
    """TyDi QA CANINE-style: codepoint ids, private-use ids for the special symbols."""

    tokenizer_kind = tokenizers.CodepointTokenizer.kind

    def tokenizer_spec(self, data_dir):
        return tokenizers.TokenizerSpec(self.tokenizer_kind, max_passages=self.max_passages)

    def feature_encoders(self, data_dir):
        return {"inputs": CodepointTextEncoder()}

    def hparams(self, defaults, model_hparams):
        # No modality: the span model embeds raw codepoints with hashed embeddings.
        defaults.modality = {}
        defaults.vocab_size = {"inputs": tokenizers.CODEPOINT_VOCAB_SIZE}
        defaults.add_hparam("input_is_codepoints", True)
