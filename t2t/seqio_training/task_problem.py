"""A SeqIO Task or Mixture as the Problem a t2t model trains on.

`TaskProblem` acts as the `Problem` that trainer_lib, the Estimator and the models read:
problem hparams (modalities and vocab sizes from the task's output features), feature
encoders (the task's vocabularies), and input functions that run the task through a
feature converter and rename the converter's features to the ones t2t models know:

    problem = TaskProblem("copy_and_reverse", {"inputs": 32, "targets": 32}, pack=True)
    problem.get_hparams().vocab_size          # {"inputs": 259, "targets": 259}  (bytes)
    ds = problem.dataset(ModeKeys.TRAIN, hparams)
    # {"inputs": int32 [32], "inputs_segmentation": [32], "inputs_position": [32],
    #  "targets": [32], "targets_segmentation": [32], "targets_position": [32]}

Which converter (`converter_kind`):
- "encdec" (`EncDecFeatureConverter`, the default for tasks with inputs):
  encoder_input_tokens -> inputs, decoder_target_tokens -> targets, segment ids and
  positions -> `*_segmentation` / `*_position` (what the Transformer reads from T2T's
  packed problems; packed rows give each example its unpacked loss);
- "lm" (`LMFeatureConverter`, tasks without inputs): decoder_target_tokens -> targets;
- "prefix_lm" (`PrefixLMFeatureConverter`, a decoder-only model on a task with inputs):
  the concatenation -> targets, decoder_loss_weights -> targets_mask (no loss on the
  prefix), decoder_causal_attention is dropped (the prefix is attended causally).
The model shifts the targets itself, so decoder_input_tokens is not passed.

Decoding (PREDICT) a decoder-only model continues a prompt (`prompt_of`): a PrefixLM row's
inputs (with their EOS, as in training), or nothing for an LM row; the prompt goes in the
"inputs" feature, which the Transformer's fast decoding forces before it generates (T2T's
`partial_targets`), at most the targets length of new ids, up to EOS. Rows of a PREDICT
batch have prompts of one length (padding inside a prompt would be forced as ids).

Batches: `hparams.batch_size` counts tokens (as for T2T text problems): a batch holds
`max(1, batch_size // row_length)` rows; with `hparams.use_fixed_batch_size` it counts rows.
"""
import functools
from typing import Mapping, Optional

import tensorflow as tf

from t2t.core import errors
from t2t.core.modes import ModeKeys
from t2t.data import data_reader
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem as problem_lib
from t2t.problems import problem_hparams_schema
from t2t.problems import spaces
import t2t.seqio.dataset_providers as dataset_providers
import t2t.seqio.feature_converters as feature_converters
from t2t.seqio import sources

_TRAIN = ModeKeys.TRAIN
_PREDICT = ModeKeys.PREDICT

CONVERTER_KINDS = ("encdec", "lm", "prefix_lm")

# Converter feature -> t2t model feature, per converter kind.
_ENCDEC_NAMES = {"encoder_input_tokens": "inputs", "decoder_target_tokens": "targets",
                 "encoder_segment_ids": "inputs_segmentation",
                 "encoder_positions": "inputs_position",
                 "decoder_segment_ids": "targets_segmentation",
                 "decoder_positions": "targets_position"}
_LM_NAMES = {"decoder_target_tokens": "targets", "decoder_segment_ids": "targets_segmentation",
             "decoder_positions": "targets_position"}
_PREFIX_LM_NAMES = dict(_LM_NAMES, decoder_loss_weights="targets_mask")


def parse_feature_lengths(text: str) -> Mapping[str, int]:
    """"inputs=256,targets=128" -> {"inputs": 256, "targets": 128} (UserError if malformed)."""
    lengths = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        name, _, value = part.partition("=")
        try:
            length = int(value)
        except ValueError:
            length = 0
        if not name.strip() or length <= 0:
            raise errors.UserError("--task_feature_lengths=%r: expected FEATURE=LENGTH pairs "
                                   "with positive lengths, e.g. inputs=256,targets=128" % text)
        lengths[name.strip()] = length
    if not lengths:
        raise errors.UserError("--task_feature_lengths is required with --mixture_or_task_name, "
                               "e.g. --task_feature_lengths=inputs=256,targets=128")
    return lengths


def make_feature_converter(kind: str, pack: bool) -> feature_converters.FeatureConverter:
    """The seqio feature converter of a kind ("encdec", "lm" or "prefix_lm")."""
    if kind == "encdec":
        return feature_converters.EncDecFeatureConverter(pack=pack)
    if kind == "lm":
        return feature_converters.LMFeatureConverter(pack=pack)
    if kind == "prefix_lm":
        return feature_converters.PrefixLMFeatureConverter(pack=pack)
    raise ValueError("converter kind %r: expected one of %s" % (kind, ", ".join(CONVERTER_KINDS)))


def to_model_features(features, kind: str):
    """Rename a converter's features to t2t model features (see the module doc)."""
    names = {"encdec": _ENCDEC_NAMES, "lm": _LM_NAMES, "prefix_lm": _PREFIX_LM_NAMES}[kind]
    out = {}
    for name, value in features.items():
        if name in names:
            value = tf.cast(value, tf.float32 if names[name] == "targets_mask" else tf.int32)
            out[names[name]] = value
    return out


def prompt_of(features, kind: str):
    """The ids a decoder-only model continues when decoding an unpacked converter row.

        # PrefixLM row of inputs [7, 8, 1] and targets [3, 1]:
        #   decoder_target_tokens [7, 8, 1, 3, 1, 0], decoder_causal_attention [1, 1, 1, 1, 0, 0]
        prompt_of(row, "prefix_lm")    # [7, 8, 1]
        prompt_of(row, "lm")           # []  (an LM row has no prompt)
    """
    tokens = tf.cast(features["decoder_target_tokens"], tf.int32)
    if kind == "prefix_lm":
        # Causal attention covers the inputs and one position more.
        width = tf.reduce_sum(tf.cast(features["decoder_causal_attention"], tf.int32)) - 1
        return tokens[:tf.maximum(width, 0)]
    if kind == "lm":
        return tokens[:0]
    raise ValueError("prompt_of: converter kind %r has no prompt (encoder-decoder)" % kind)


def _decoder_only_predict_features(features, kind: str):
    """An unpacked decoder-only row -> {"inputs": its prompt, "targets": the rest}."""
    prompt = prompt_of(features, kind)
    tokens = tf.cast(features["decoder_target_tokens"], tf.int32)
    return {"inputs": prompt, "targets": tokens[tf.size(prompt):]}


def get_provider(mixture_or_task_name: str):
    """The registered Task or Mixture; an unknown name is a UserError naming close ones."""
    try:
        return dataset_providers.get_mixture_or_task(mixture_or_task_name)
    except ValueError as error:
        # Called from the programs and from Python alike: one hint that fits both.
        message = str(error).replace(" (import the module that registers them)", "")
        raise errors.UserError(
            "%s (import the module that registers it; the programs take it as --module_import "
            "or --t2t_usr_dir)" % message) from None


class VocabularyEncoder:
    """A seqio Vocabulary with the t2t text encoder interface the decoders use.

        enc = VocabularyEncoder(seqio.ByteVocabulary())
        enc.encode("hi")            # [107, 108]
        enc.decode([107, 108, 1])   # "hi"  (stops at EOS, as the vocabulary does)
    """

    def __init__(self, vocabulary):
        self.vocabulary = vocabulary

    @property
    def vocab_size(self):
        return self.vocabulary.vocab_size

    @property
    def num_reserved_ids(self):
        return 2

    def encode(self, text):
        return list(self.vocabulary.encode(text))

    def decode(self, ids, strip_extraneous=False):
        del strip_extraneous
        return self.vocabulary.decode([int(i) for i in ids])

    def decode_list(self, ids):
        return [self.vocabulary.decode([int(i)]) for i in ids]


class TaskProblem(problem_lib.Problem):
    """A registered SeqIO Task or Mixture, read through a feature converter (module doc)."""

    def __init__(self, mixture_or_task_name: str, task_feature_lengths: Mapping[str, int],
                 pack: bool = True, converter_kind: Optional[str] = None,
                 decoder_only: bool = False, train_split: str = "train",
                 eval_split: str = "validation", use_cached: bool = False,
                 seed: Optional[int] = None):
        super().__init__()
        self.provider = get_provider(mixture_or_task_name)
        self.name = mixture_or_task_name
        tasks = dataset_providers.get_subtasks(self.provider)
        features = dict(tasks[0].output_features)
        for task in tasks[1:]:
            if set(task.output_features) != set(features):
                raise errors.UserError(
                    "mixture %s: its tasks must have the same output features (%s has %s, "
                    "%s has %s)" % (self.name, tasks[0].name, sorted(features), task.name,
                                    sorted(task.output_features)))
        if "targets" not in features:
            raise errors.UserError("task %s has no 'targets' output feature; t2t models "
                                   "train on targets (and inputs)" % self.name)
        self.output_features = features
        task_has_inputs = "inputs" in features
        if converter_kind is None:
            converter_kind = ("prefix_lm" if decoder_only and task_has_inputs else
                              "encdec" if task_has_inputs else "lm")
        if converter_kind not in CONVERTER_KINDS:
            raise errors.UserError("converter %r: expected one of %s"
                                   % (converter_kind, ", ".join(CONVERTER_KINDS)))
        if converter_kind in ("encdec", "prefix_lm") and not task_has_inputs:
            raise errors.UserError("task %s has no 'inputs' feature: use a language model "
                                   "converter (lm)" % self.name)
        needed = ["inputs", "targets"] if task_has_inputs else ["targets"]
        missing = [k for k in needed if k not in task_feature_lengths]
        if missing:
            raise errors.UserError("--task_feature_lengths has no length for %s of task %s "
                                   "(e.g. --task_feature_lengths=inputs=256,targets=128)"
                                   % (", ".join(missing), self.name))
        self.task_feature_lengths = {k: int(task_feature_lengths[k]) for k in needed}
        self.converter_kind = converter_kind
        self.pack = pack
        self.train_split, self.eval_split = train_split, eval_split
        self.use_cached, self.seed = use_cached, seed

    # -------------------------------------------------------------- Problem interface
    @property
    def has_inputs(self):
        return self.converter_kind == "encdec"

    def feature_encoders(self, data_dir):
        del data_dir
        encoders = {"targets": VocabularyEncoder(self.output_features["targets"].vocabulary)}
        if "inputs" in self.output_features:
            encoders["inputs"] = VocabularyEncoder(self.output_features["inputs"].vocabulary)
        if not self.has_inputs:
            # Decoder-only: the model sees one sequence in the targets' vocabulary.
            encoders.pop("inputs", None)
        return encoders

    def hparams(self, defaults, model_hparams):
        del model_hparams
        p = defaults
        p.stop_at_eos = True
        p.modality = {"targets": ModalityType.SYMBOL}
        p.vocab_size = {"targets": self._encoders["targets"].vocab_size}
        if self.has_inputs:
            p.modality["inputs"] = ModalityType.SYMBOL
            p.vocab_size["inputs"] = self._encoders["inputs"].vocab_size
        if self.pack:
            names = ["targets_segmentation", "targets_position"]
            if self.has_inputs:
                names += ["inputs_segmentation", "inputs_position"]
            for name in names:
                p.modality[name] = ModalityType.IDENTITY
                p.vocab_size[name] = None

    @property
    def batch_size_means_tokens(self):
        return True

    def max_length(self, model_hparams):
        return self.model_feature_length()

    def model_feature_length(self):
        """The length of every row the converter gives (its longest model feature)."""
        converter = make_feature_converter(self.converter_kind, pack=False)
        return max(converter.get_model_feature_lengths(self.task_feature_lengths).values())

    def feature_converter(self, mode):
        """The converter of `mode`: packed only for training with pack=True."""
        return make_feature_converter(self.converter_kind, self.pack and mode == _TRAIN)

    def split_of(self, mode, dataset_split=None):
        if dataset_split:
            return {"train": self.train_split, "eval": self.eval_split, "dev": self.eval_split,
                    "test": "test"}.get(dataset_split, dataset_split)
        return self.train_split if mode == _TRAIN else self.eval_split

    def dataset(self, mode, data_dir=None, num_threads=None, output_buffer_size=None,
                shuffle_files=None, hparams=None, preprocess=True, dataset_split=None,
                shard=None, partition_id=0, num_partitions=1, shuffle_buffer_size=1024,
                max_records=-1):
        """Unbatched model features of `mode`'s split (train repeats and shuffles)."""
        del data_dir, num_threads, output_buffer_size, hparams, preprocess, shuffle_buffer_size
        is_training = mode == _TRAIN
        shuffle = is_training if shuffle_files is None else shuffle_files
        shard_info = None
        if num_partitions and num_partitions > 1:
            shard_info = sources.ShardInfo(partition_id, num_partitions)
        elif shard is not None:
            raise errors.UserError("decoding shards of a task: use --decode_shards=1")
        ds = dataset_providers.get_dataset(
            self.provider, self.task_feature_lengths, self.feature_converter(mode),
            dataset_split=self.split_of(mode, dataset_split), use_cached=self.use_cached,
            shuffle=shuffle, num_epochs=None if is_training else 1, shard_info=shard_info,
            seed=self.seed, verbose=False)
        if mode == _PREDICT and not self.has_inputs:
            features_fn = functools.partial(_decoder_only_predict_features,
                                            kind=self.converter_kind)
        else:
            features_fn = functools.partial(to_model_features, kind=self.converter_kind)
        ds = ds.map(features_fn, num_parallel_calls=tf.data.AUTOTUNE)
        if max_records and max_records > 0:
            ds = ds.take(max_records)
        return ds

    def rows_per_batch(self, hparams, params=None):
        if params and params.get("batch_size"):
            return int(params["batch_size"])
        if hparams.get("use_fixed_batch_size"):
            return max(1, int(hparams.batch_size))
        return max(1, int(hparams.batch_size) // self.model_feature_length())

    def input_fn(self, mode, hparams, data_dir=None, params=None, config=None,
                 force_repeat=False, prevent_repeat=False, dataset_kwargs=None):
        """Batched model features, shaped as t2t models take them ([B, L, 1, 1] ids)."""
        del data_dir, config
        kwargs = dict(dataset_kwargs or {})
        kwargs.pop("mode", None)
        ds = self.dataset(mode, **{k: v for k, v in kwargs.items()
                                   if k in ("dataset_split", "shard", "max_records",
                                            "partition_id", "num_partitions")})
        if force_repeat and not prevent_repeat and mode != _TRAIN:
            ds = ds.repeat()
        batch_size = self.rows_per_batch(hparams, params)
        decoder_only_predict = mode == _PREDICT and not self.has_inputs
        if decoder_only_predict:
            # Prompts of one length per batch (examples leave the split's order).
            ds = ds.group_by_window(
                key_func=lambda f: tf.cast(tf.size(f["inputs"]), tf.int64),
                reduce_func=lambda _, window: window.padded_batch(batch_size),
                window_size=batch_size)
        else:
            ds = ds.batch(batch_size, drop_remainder=mode == _TRAIN)
        p_hparams = self.get_hparams(hparams)
        targets_length = self.task_feature_lengths["targets"]

        def finish(features):
            features = data_reader.standardize_shapes(features)
            if mode == _PREDICT:
                features = dict(features)
                features["infer_targets"] = features.pop("targets")
                features.pop("targets_segmentation", None)
                features.pop("targets_position", None)
                features.pop("targets_mask", None)
                if decoder_only_predict:
                    features["decode_length"] = tf.constant(targets_length, tf.int32)
            features.update(problem_hparams_schema.problem_hparams_to_features(p_hparams))
            return features

        return ds.map(finish).prefetch(tf.data.AUTOTUNE)

    def data_files(self, data_dir, dataset_split=spaces.DatasetSplit.TRAIN, shard=None):
        """Tasks read their own sources; there are no t2t-datagen files to check."""
        del data_dir, dataset_split, shard
        return []

    def filepattern(self, data_dir, mode, shard=None):
        raise errors.UserError("%s is a SeqIO task or mixture: it has no t2t-datagen files"
                               % self.name)

    def eval_metrics(self):
        return ["accuracy", "accuracy_per_sequence", "neg_log_perplexity"]
