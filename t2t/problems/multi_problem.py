"""Training one model on several text problems at once (T2T's `multi_problem`).

A MultiProblem lists its tasks in `task_list`; the first is the primary task (usually a
language model) whose vocabulary every task shares. Each example becomes one "targets"
row for a decoder-only model: `inputs <task id> targets` (or `<task id> targets` for a
task without inputs; a class label becomes one vocabulary id past the task ids). Task ids
are vocabulary ids just past the primary task's vocabulary.

    @registry.register_problem
    class LanguagemodelAndTranslate(multi_problem.MultiProblem):
        def __init__(self, was_reversed=False, was_copy=False):
            super().__init__(was_reversed, was_copy)
            self.task_list.append(MyLanguageModel())    # shares its vocabulary ...
            self.task_list.append(MyTranslation())      # ... via use_vocab_from_other_problem

        @property
        def vocab_type(self):
            return text_problems.VocabType.SUBWORD

Training draws each example from one task by the `multiproblem_mixing_schedule` hparam
("constant": the secondary tasks share `multiproblem_schedule_threshold` of the draws;
"exponential": that share rises from 0 over `multiproblem_schedule_max_examples` draws;
"pretrain": the primary task alone for that many draws, then the others), or by
`multiproblem_per_task_threshold` (relative weights, one per task). Evaluation reads each
task's examples in turn (or the second task's alone with `multiproblem_target_eval_only`),
with metrics per task; the loss adds each task's loss as T2T's `aggregate_task_losses`.
"""
import functools

import tensorflow as tf
from absl import logging

from t2t.core.hparam import HParams
from t2t.core.modes import ModeKeys
from t2t.data.tf1_datasets import tf1_dataset
from t2t.encoders import text_encoder
from t2t.evaluation import metrics
from t2t.layers import common_layers
from t2t.layers import losses as losses_lib
from t2t.layers import modalities
from t2t.layers.modality_type import ModalityType
from t2t.problems import problem
from t2t.problems import text2text


class MixingSchedule:
    """Available schedules for mixing datasets."""
    EXPONENTIAL = "exponential"
    CONSTANT = "constant"
    PRETRAIN = "pretrain"


def normalize_example_nlp(task, example, is_infer, vocab_type, vocab_offset, max_input_length,
                          max_target_length, fixed_train_length):
    """One task's example as a multi-problem row: {"targets", "task_id"} (and "inputs" in
    PREDICT, where the model continues `inputs <task id>`).

        # a translation example {"inputs": [5, 6, EOS], "targets": [7, EOS]}, task id 9:
        normalize_example_nlp(task, example, False, "subwords", 12, -1, -1, -1)
        # {"targets": [5, 6, 9, 7, EOS], "task_id": [9]}

    A class label c becomes the id vocab_offset + c (subwords) or the digit character
    (characters: labels 0-9).
    """
    if task.has_inputs:
        example["inputs"] = example["inputs"][:-1]  # the task id takes the EOS's place
    if hasattr(task, "class_labels"):
        if vocab_type == text2text.VocabType.CHARACTER:
            # The character encoder's id of the digit: ord("0") + 2 reserved ids = 50.
            example["targets"] = tf.math.floormod(example["targets"], 10) + 50
        elif vocab_type == text2text.VocabType.SUBWORD:
            example["targets"] = vocab_offset + example["targets"]
    elif task.has_inputs:
        if max_input_length > 0:
            example["inputs"] = example["inputs"][:max_input_length]
        # Beam decoding needs the whole target.
        if max_target_length > 0 and not is_infer:
            example["targets"] = example["targets"][:max_target_length]

    def constant_length(x, size):
        x = x[:size]
        return tf.reshape(tf.pad(x, [[0, size - tf.shape(x)[0]]]), [size])

    task_id = tf.constant([task.task_id], dtype=tf.int64)
    if task.has_inputs and is_infer:
        example["inputs"] = tf.concat([example["inputs"], task_id], axis=0)
    else:
        prefix = [example.pop("inputs"), task_id] if task.has_inputs else [task_id]
        example["targets"] = tf.concat(prefix + [example["targets"]], axis=0)
        if fixed_train_length > 0 and not is_infer:
            example["targets"] = constant_length(example["targets"], fixed_train_length)
    example["task_id"] = task_id
    return example


def flatten_zip_dataset(*args):
    """One example from each of n datasets (a zipped element) -> a dataset of the n."""
    flattened = tf.data.Dataset.from_tensors(args[0])
    for example in args[1:]:
        flattened = flattened.concatenate(tf.data.Dataset.from_tensors(example))
    return flattened


class MultiProblemEncoder:
    """The primary task's encoder, reading the ids past its vocabulary too: a task id
    decodes to nothing (it marks where a task's inputs end) and a class label id to the
    label's number. Everything else is the wrapped encoder's.

        encoder = MultiProblemEncoder(ByteTextEncoder(), num_tasks=2)   # ids 258, 259: tasks
        encoder.decode([100, 258, 101])     # "bc"
        encoder.decode([100, 259, 261])     # "b1": label 1 of a classification task
    """

    def __init__(self, encoder, num_tasks):
        self._encoder = encoder
        self._num_tasks = num_tasks

    def __getattr__(self, name):
        return getattr(self._encoder, name)

    def _text_ids(self, ids):
        size = self._encoder.vocab_size
        pieces, run = [], []
        for id_ in ids:
            id_ = int(id_)
            if id_ < size:
                run.append(id_)
                continue
            if run:
                pieces.append(run)
                run = []
            if id_ >= size + self._num_tasks:
                pieces.append(str(id_ - size - self._num_tasks))
        return pieces + ([run] if run else [])

    def decode(self, ids, strip_extraneous=False):
        return "".join(piece if isinstance(piece, str)
                       else self._encoder.decode(piece, strip_extraneous=strip_extraneous)
                       for piece in self._text_ids(ids))

    def decode_list(self, ids):
        # Labels as the wrapped encoder's tokens are: bytes for the byte encoder.
        as_token = ((lambda label: label.encode("ascii"))
                    if isinstance(self._encoder, text_encoder.ByteTextEncoder) else str)
        return [token for piece in self._text_ids(ids)
                for token in ([as_token(piece)] if isinstance(piece, str)
                              else self._encoder.decode_list(piece))]


class MultiProblem(problem.Problem):
    """Several problems trained as one decoder-only problem; see the module docstring."""

    _ADDED_EVAL_COUNT = 20000  # T2T's eval padding per task (t2t reads each task in turn)

    def __init__(self, was_reversed=False, was_copy=False):
        super().__init__(was_reversed, was_copy)
        self.task_list = []

    @property
    def vocab_type(self):
        return self.task_list[0].vocab_type

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        self._check_tasks()
        for task in self.task_list:
            task.generate_data(data_dir, tmp_dir, task_id)

    def _check_tasks(self):
        if len(self.task_list) < 2:
            raise ValueError("MultiProblem %s has %d task(s) in task_list; append two or more "
                             "problems in its __init__" % (self.name, len(self.task_list)))

    def feature_encoders(self, data_dir):
        """The primary task's targets encoder, for both features (decoding reads inputs)."""
        encoder = MultiProblemEncoder(self.task_list[0].feature_encoders(data_dir)["targets"],
                                      len(self.task_list))
        return {"inputs": encoder, "targets": encoder}

    def normalize_example(self, task, example, encoder, hparams, is_infer):
        """Normalize an example of `task` to a multi-problem row (`normalize_example_nlp`);
        override for non-text tasks."""
        vocab_offset = encoder.vocab_size + len(self.task_list)
        return normalize_example_nlp(
            task, example, is_infer, self.vocab_type, vocab_offset,
            hparams.multiproblem_max_input_length, hparams.multiproblem_max_target_length,
            hparams.multiproblem_fixed_train_length)

    def filepattern(self, data_dir, mode, shard=None):
        return [task.filepattern(data_dir, mode, shard) for task in self.task_list]

    def get_hparams(self, model_hparams=None):
        """The primary task's hparams with room in the targets vocabulary for the task ids
        and class labels (at least `multiproblem_vocab_size`)."""
        if self._hparams is not None:
            return self._hparams
        self._check_tasks()
        primary = self.task_list[0].get_hparams(model_hparams)
        values = dict(primary.values())
        values["vocab_size"] = dict(primary.vocab_size)
        values["modality"] = dict(primary.modality)
        encoder = primary.vocabulary["targets"]
        values["vocabulary"] = {"targets": MultiProblemEncoder(encoder, len(self.task_list))}
        hp = HParams(**values)
        vocab_size = encoder.vocab_size
        new_vocab_size = vocab_size + len(self.task_list) + self.get_max_num_classes()
        wanted = model_hparams.get("multiproblem_vocab_size", -1) if model_hparams else -1
        new_vocab_size = max(new_vocab_size, wanted)
        self.update_task_ids(vocab_size)
        logging.info("MultiProblem %s: vocabulary %d -> %d (task ids and labels)", self.name,
                     vocab_size, new_vocab_size)
        hp.vocab_size["targets"] = new_vocab_size
        hp.modality["targets"] = ModalityType.SYMBOL
        self._hparams = hp
        return hp

    def update_task_ids(self, encoder_vocab_size):
        """Task i gets the id encoder_vocab_size + i."""
        for index, task in enumerate(self.task_list):
            task.set_task_id(index + encoder_vocab_size)
            logging.info("Task %d (%s) has id %d.", index, task.name, task.task_id)

    def get_max_num_classes(self):
        """The most classes any classification task has (their labels share ids)."""
        return max([getattr(task, "num_classes", 0) for task in self.task_list] + [0])

    def eval_metrics(self):
        if any("summarize" in (task.name or "") for task in self.task_list):
            return [metrics.Metrics.ACC, metrics.Metrics.NEG_LOG_PERPLEXITY,
                    metrics.Metrics.ROUGE_2_F, metrics.Metrics.ROUGE_L_F]
        return [metrics.Metrics.ACC, metrics.Metrics.NEG_LOG_PERPLEXITY]

    def dataset(self, mode, data_dir=None, num_threads=None, output_buffer_size=None,
                shuffle_files=None, hparams=None, preprocess=True, dataset_split=None,
                shard=None, partition_id=0, num_partitions=1, shuffle_buffer_size=1024,
                max_records=-1):
        """The tasks' examples as multi-problem rows: mixed by the schedule in TRAIN (an
        endless dataset), each task's in turn otherwise. Arguments as `Problem.dataset`."""
        self._check_tasks()
        is_training = mode == ModeKeys.TRAIN
        is_infer = mode == ModeKeys.PREDICT
        encoder = self.task_list[0].feature_encoders(data_dir)["targets"]
        self.update_task_ids(encoder.vocab_size)
        datasets = []
        for task in self.task_list:
            task_dataset = task.dataset(
                mode=mode, data_dir=data_dir, num_threads=num_threads,
                output_buffer_size=output_buffer_size, shuffle_files=shuffle_files,
                hparams=hparams, preprocess=preprocess, dataset_split=dataset_split,
                shard=shard, partition_id=partition_id, num_partitions=num_partitions,
                shuffle_buffer_size=shuffle_buffer_size, max_records=max_records)
            if is_training:
                task_dataset = task_dataset.repeat()
            datasets.append(task_dataset.map(functools.partial(
                self.normalize_example, task, encoder=encoder, hparams=hparams,
                is_infer=is_infer)))
        datasets = _common_features(datasets)
        self.get_hparams(model_hparams=hparams)
        if is_training:
            return _choose(datasets, self._training_choices(hparams))
        if hparams.multiproblem_target_eval_only:
            return datasets[1]
        # Round robin until every task is read through (T2T zipped the tasks, each padded
        # with 20,000 all-zero examples so that the shorter ones did not cut the rest).
        round_robin = tf.data.Dataset.range(len(datasets)).repeat()
        return _choose(datasets, round_robin, stop_on_empty_dataset=False)

    def _training_choices(self, hparams):
        """An endless int64 dataset of task indices, one per training example drawn."""
        num_tasks = len(self.task_list)
        schedule = hparams.multiproblem_mixing_schedule
        if schedule not in (MixingSchedule.EXPONENTIAL, MixingSchedule.CONSTANT,
                            MixingSchedule.PRETRAIN):
            raise ValueError("unknown multiproblem_mixing_schedule %r; use %s, %s or %s" % (
                schedule, MixingSchedule.CONSTANT, MixingSchedule.EXPONENTIAL,
                MixingSchedule.PRETRAIN))
        thresholds = _cumulative_thresholds(hparams.multiproblem_per_task_threshold, num_tasks)
        threshold = hparams.multiproblem_schedule_threshold
        max_examples = hparams.multiproblem_schedule_max_examples
        logging.info("MultiProblem %s: %s mixing schedule, threshold %.2f", self.name,
                     schedule, threshold)

        def secondary_share(step):
            """The share of draws that go to the secondary tasks at this (1-based) draw."""
            if schedule == MixingSchedule.EXPONENTIAL:
                return common_layers.inverse_exp_decay(max_examples, min_value=1e-4,
                                                       step=tf.cast(step, tf.float32)) * threshold
            if schedule == MixingSchedule.PRETRAIN:
                return tf.where(step > tf.cast(max_examples, tf.int64), 1.0, 0.0)
            return tf.constant(threshold, tf.float32)

        def choose(step):
            draw = tf.random.uniform([], seed=1)
            if thresholds is not None:
                below = tf.cast(draw < tf.constant(thresholds), tf.int64)
                return tf.cast(num_tasks, tf.int64) - tf.reduce_sum(below)
            # Task 0 unless the draw falls in the secondary share, which the other tasks
            # split equally (T2T's sample_task).
            share = secondary_share(step)
            index = tf.constant(num_tasks - 1, tf.int64)
            for task_index in reversed(range(num_tasks - 1)):
                bound = share - task_index * share / (num_tasks - 1)
                index = tf.where(draw > bound, tf.constant(task_index, tf.int64), index)
            return index

        return tf.data.Dataset.range(1, 2 ** 62).map(choose)


def _cumulative_thresholds(per_task_threshold, num_tasks):
    """"3,1" -> [0.75, 1.0]; None when unset or when the count does not match the tasks."""
    if not per_task_threshold:
        return None
    weights = [float(t) for t in per_task_threshold.split(",")]
    if len(weights) != num_tasks:
        logging.warning("multiproblem_per_task_threshold has %d values for %d tasks; "
                        "ignoring it", len(weights), num_tasks)
        return None
    total = sum(weights)
    return [sum(weights[:i + 1]) / total for i in range(num_tasks)]


def _common_features(datasets):
    """Each dataset reduced to the features all of them have (so they can be mixed)."""
    common = set.intersection(*(set(d.element_spec) for d in datasets))
    return [d.map(lambda example: {k: v for k, v in example.items() if k in common})
            for d in datasets]


def _choose(datasets, choices, stop_on_empty_dataset=True):
    choose_from = getattr(tf.data.Dataset, "choose_from_datasets", None)
    if choose_from is None:  # TensorFlow 2.15 has it under experimental only
        choose_from = tf.data.experimental.choose_from_datasets
    return tf1_dataset(choose_from(datasets, choices,
                                   stop_on_empty_dataset=stop_on_empty_dataset))


# --------------------------------------------------------------------------- losses
def _loss_parts(hparams, problem_hparams, feature_name):
    vocab_size = problem_hparams.vocab_size[feature_name]
    if vocab_size is not None and hparams.get("vocab_divisor"):
        vocab_size += (-vocab_size) % hparams.vocab_divisor
    modality = problem_hparams.modality[feature_name]
    return vocab_size, hparams.loss.get(feature_name, modalities.get_loss(modality))


def aggregate_task_losses(hparams, problem_hparams, logits, feature_name, feature,
                          problem=None):
    """The multi-problem loss (numerator, denominator, [(summary name, value)]).

    Without `multiproblem_reweight_label_loss`, the sum of each task's language-model loss
    (`aggregate_task_lm_losses`). With it, the primary task's loss plus, for each other
    task, its inputs' loss weighted 1 - multiproblem_label_weight and its targets' (or
    label's) loss weighted multiproblem_label_weight, each task's loss averaged.
    `problem` is the MultiProblem (T2T read it off hparams.problem).
    """
    if problem is None:
        raise ValueError("aggregate_task_losses needs problem=the MultiProblem being trained")
    if not hparams.multiproblem_reweight_label_loss:
        return aggregate_task_lm_losses(hparams, problem_hparams, logits, feature_name, feature,
                                        problem=problem)
    vocab_size, loss = _loss_parts(hparams, problem_hparams, feature_name)
    multiplier = problem_hparams.loss_multiplier
    label_weight = hparams.multiproblem_label_weight
    primary = problem.task_list[0]
    num, den = loss(logits, feature, hparams, vocab_size, weights_fn=lambda x: (
        losses_lib.weights_multi_problem_all(x, primary.task_id)))
    loss_num = num / tf.maximum(1.0, den)
    summaries = [(primary.name + "_loss", loss_num)]
    # Each task's loss is already an average: its denominator counts 1 (0 when absent).
    loss_den = tf.minimum(1.0, den)
    for task in problem.task_list[1:]:
        task_id = task.task_id
        seq_num, seq_den = loss(
            logits, feature, hparams, vocab_size,
            weights_fn=lambda x, task_id=task_id: losses_lib.weights_multi_problem_input(
                x, task_id))
        seq_loss = seq_num * multiplier / tf.maximum(1.0, seq_den)
        summaries.append((task.name + "_seq_loss", seq_loss))
        part = "_label_loss" if hasattr(task, "num_classes") else "_target_loss"
        target_num, target_den = loss(
            logits, feature, hparams, vocab_size,
            weights_fn=lambda x, task_id=task_id: losses_lib.weights_multi_problem(x, task_id))
        target_loss = target_num * multiplier / tf.maximum(1.0, target_den)
        summaries.append((task.name + part, target_loss))
        task_loss = target_loss * label_weight + seq_loss * (1 - label_weight)
        summaries.append((task.name + "_loss", task_loss))
        loss_num += task_loss
        loss_den += tf.minimum(1.0, target_den)
    return loss_num, loss_den, summaries


def aggregate_task_lm_losses(hparams, problem_hparams, logits, feature_name, feature,
                             problem=None):
    """Each task's language-model loss over its whole rows, summed (numerator and
    denominator), with a summary per task."""
    if problem is None:
        raise ValueError("aggregate_task_lm_losses needs problem=the MultiProblem being "
                         "trained")
    vocab_size, loss = _loss_parts(hparams, problem_hparams, feature_name)
    loss_num, loss_den, summaries = 0.0, 0.0, []
    for task in problem.task_list:
        num, den = loss(
            logits, feature, hparams, vocab_size,
            weights_fn=lambda x, task_id=task.task_id: losses_lib.weights_multi_problem_all(
                x, task_id))
        loss_num += num
        loss_den += den
        summaries.append((task.name + "_loss", num / tf.maximum(1.0, den)))
    return loss_num, loss_den, summaries
