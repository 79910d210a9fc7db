"""Masked-LM pretraining on plain text: BERT-style segment pairs, masks drawn while reading.

    t2t-datagen --problem=masked_lm_tmpdir --tmp_dir=~/text --data_dir=~/mlm_data
    # reads ~/text/train.txt and ~/text/dev.txt (one sentence a line), writes the subword
    # vocabulary (ids 2, 3, 4 = [CLS], [SEP], [MASK]) and the example shards

Consecutive lines A, B of a file make one example (a blank line ends a document: no pair
spans it); a seeded share `random_next_fraction` of the examples get a random line of the
split as B instead. On disk, with A = "the cat" -> [7, 9] and B = "sat" -> [12]:

    inputs               [2, 7, 9, 3, 12, 3]      [CLS] A [SEP] B [SEP], no EOS
    input_type_ids       [0, 0, 0, 0, 1, 1]       0 up to the first [SEP], then 1
    next_sentence_label  [0]                      1 when B is the random line

Pairs longer than `max_seq_length` are cut round-robin (one token from each segment in
turn), as TF Hub's `bert_pack_inputs` does. Reading (`dataset`, `input_fn`) masks each
example: 15% of its A/B tokens (at least one) are picked; of those 80% become [MASK],
10% a random regular token and 10% stay. The model sees

    inputs   [2, 7, 4, 3, 12, 3]      position 2 masked
    targets  [0, 0, 9, 0, 0, 0]       the original id where masked, 0 (ignored) elsewhere

Masks are stateless functions of (`masking_seed`, epoch, the example's ids): the same
on every run, and new in each epoch of training (`input_fn` in TRAIN numbers the epochs).
"""
import os
import random
import zlib

import tensorflow as tf
from absl import logging

from t2t.core import errors
from t2t.core.modes import ModeKeys
from t2t.core.progress import Progress
from t2t.core import registry
from t2t.encoders import text_encoder
from t2t.evaluation.metrics import Metrics
from t2t.layers.modality_type import ModalityType
from t2t.problems import spaces
from t2t.problems import text2text

_TRAIN = ModeKeys.TRAIN

CLS, SEP, MASK = "[CLS]", "[SEP]", "[MASK]"
SPECIAL_TOKENS = (CLS, SEP, MASK)
PAD_ID = text_encoder.PAD_ID
CLS_ID = text_encoder.NUM_RESERVED_TOKENS          # 2
SEP_ID = CLS_ID + 1                                 # 3
MASK_ID = CLS_ID + 2                                # 4
FIRST_REGULAR_ID = text_encoder.NUM_RESERVED_TOKENS + len(SPECIAL_TOKENS)   # 5


def round_robin_lengths(lengths, budget):
    """How many tokens each segment keeps when trimmed round-robin to `budget` in total.

    Tokens are handed out one at a time to each segment in turn (first segment first),
    skipping exhausted segments, until the budget is spent:

        round_robin_lengths([10, 2], 6)   # [4, 2]
        round_robin_lengths([10, 10], 5)  # [3, 2]
        round_robin_lengths([3, 4], 20)   # [3, 4]
    """
    kept = [0] * len(lengths)
    budget = max(0, budget)
    while budget > 0:
        progressed = False
        for i, length in enumerate(lengths):
            if budget > 0 and kept[i] < length:
                kept[i] += 1
                budget -= 1
                progressed = True
        if not progressed:
            break
    return kept


def pack_segments(segments, max_seq_length):
    """[CLS] A [SEP] (B [SEP]) ids and type ids, segments trimmed round-robin to fit.

        pack_segments([[7, 9], [12]], 128)   # ([2, 7, 9, 3, 12, 3], [0, 0, 0, 0, 1, 1])
        pack_segments([[7, 9, 8], [12, 13]], 6)   # ([2, 7, 9, 3, 12, 3], [0, 0, 0, 0, 1, 1])
    """
    kept = round_robin_lengths([len(s) for s in segments], max_seq_length - len(segments) - 1)
    ids, type_ids = [CLS_ID], [0]
    for index, (segment, keep) in enumerate(zip(segments, kept)):
        ids.extend(list(segment[:keep]) + [SEP_ID])
        type_ids.extend([min(index, 1)] * (keep + 1))
    return ids, type_ids


def _seed_from_ids(ids, base_seed):
    """A stateless seed [2] from `base_seed` [2] and a fingerprint of the id sequence."""
    text = tf.strings.reduce_join(tf.strings.as_string(ids), separator=" ")
    fingerprint = tf.strings.to_hash_bucket_fast(text, 2**31 - 1)
    return tf.random.experimental.stateless_fold_in(base_seed, fingerprint)


def mask_ids(ids, seed, vocab_size, mask_rate=0.15, mask_token_fraction=0.8,
             random_token_fraction=0.1, first_maskable_id=FIRST_REGULAR_ID, mask_id=MASK_ID):
    """BERT masking of one id sequence; a pure function of `ids` and `seed`.

    Picks max(1, round(mask_rate * n)) of the n ids >= first_maskable_id (never PAD,
    EOS, [CLS], [SEP], [MASK]); each picked id becomes `mask_id` (probability
    mask_token_fraction), a uniform id in [first_maskable_id, vocab_size)
    (random_token_fraction) or stays.

        mask_ids(tf.constant([2, 7, 9, 3, 12, 3]), tf.constant([1, 2], tf.int64), 20)
        # (inputs [2, 7, 4, 3, 12, 3], targets [0, 0, 9, 0, 0, 0]) for some seed

    Args:
      ids: int [L].
      seed: int64 [2], as for `tf.random.stateless_uniform`.
      vocab_size: ids are < vocab_size.

    Returns:
      (inputs, targets), both [L] of ids.dtype: the masked ids, and the original id at
      each picked position with 0 elsewhere.
    """
    ids = tf.convert_to_tensor(ids)
    length = tf.shape(ids)[0]
    seeds = [tf.random.experimental.stateless_fold_in(seed, i) for i in range(3)]
    candidate = ids >= tf.cast(first_maskable_id, ids.dtype)
    num_candidates = tf.reduce_sum(tf.cast(candidate, tf.int32))
    num_to_mask = tf.cast(tf.floor(mask_rate * tf.cast(num_candidates, tf.float32) + 0.5),
                          tf.int32)
    num_to_mask = tf.minimum(tf.maximum(num_to_mask, 1), num_candidates)
    scores = tf.random.stateless_uniform([length], seeds[0])
    scores = tf.where(candidate, scores, 2.0)  # non-candidates sort last
    picked_positions = tf.argsort(scores)[:num_to_mask]
    picked = tf.scatter_nd(picked_positions[:, tf.newaxis],
                           tf.ones([num_to_mask], tf.bool), [length])
    choice = tf.random.stateless_uniform([length], seeds[1])
    random_ids = tf.random.stateless_uniform([length], seeds[2], minval=first_maskable_id,
                                             maxval=vocab_size, dtype=tf.int64)
    replacement = tf.where(choice < mask_token_fraction, tf.cast(mask_id, ids.dtype),
                           tf.where(choice < mask_token_fraction + random_token_fraction,
                                    tf.cast(random_ids, ids.dtype), ids))
    inputs = tf.where(picked, replacement, ids)
    targets = tf.where(picked, ids, tf.zeros_like(ids))
    return inputs, targets


class MaskedLmProblem(text2text.Text2TextProblem):
    """Masked-LM pretraining on sentence pairs; subclasses give `generate_lines`.

    Override `generate_lines(data_dir, tmp_dir, dataset_split)` to yield one sentence
    per string, in text order ("" ends a document). The subword vocabulary is built from
    the training lines with [CLS], [SEP], [MASK] reserved after PAD and EOS. A split's
    lines are held in memory while its pairs are made (random second segments are drawn
    from all of them).

        @registry.register_problem
        class MyMlm(MaskedLmProblem):
            def generate_lines(self, data_dir, tmp_dir, dataset_split):
                yield from ["The cat sat.", "It was tired.", "", "Next document."]
        # one pair per document with two lines or more: ("The cat sat.", "It was tired.")
    """

    # -- Subclass interface ----------------------------------------------------
    def generate_lines(self, data_dir, tmp_dir, dataset_split):
        """Yield the split's sentences in order; an empty string ends a document."""
        raise NotImplementedError("%s must define generate_lines" % type(self).__name__)

    @property
    def max_seq_length(self):
        """Longest example in ids, [CLS] and [SEP]s included."""
        return 128

    @property
    def random_next_fraction(self):
        """Share of examples whose second segment is a random line of the split."""
        return 0.5

    @property
    def mask_rate(self):
        return 0.15

    @property
    def mask_token_fraction(self):
        """Of the picked tokens, the share replaced by [MASK]."""
        return 0.8

    @property
    def random_token_fraction(self):
        """Of the picked tokens, the share replaced by a random token (the rest stay)."""
        return 0.1

    @property
    def masking_seed(self):
        return 1234

    @property
    def approx_vocab_size(self):
        return 2**13

    # -- Implementation --------------------------------------------------------
    @property
    def is_generate_per_split(self):
        return True

    @property
    def additional_reserved_tokens(self):
        return list(SPECIAL_TOKENS)

    @property
    def vocab_type(self):
        return text2text.VocabType.SUBWORD

    def max_length(self, model_hparams):
        return self.max_seq_length

    def eval_metrics(self):
        # "targets" hold ids at the masked positions only (0 elsewhere is ignored), so
        # these are the masked-token accuracy and log-likelihood.
        return [Metrics.ACC, Metrics.NEG_LOG_PERPLEXITY]

    def generate_text_for_vocab(self, data_dir, tmp_dir):
        lines = self.generate_lines(data_dir, tmp_dir, spaces.DatasetSplit.TRAIN)
        for count, line in enumerate(lines):
            if self.max_samples_for_vocab and count >= self.max_samples_for_vocab:
                return
            if line:
                yield line

    def _split_seed(self, dataset_split):
        seeds = getattr(self, "_split_seeds", None) or {}
        if dataset_split in seeds:
            return seeds[dataset_split]
        return zlib.crc32(("%s:%s" % (self.name, dataset_split)).encode("utf-8"))

    def generate_data(self, data_dir, tmp_dir, task_id=-1):
        # One random stream per split, drawn from the global one t2t-datagen seeds: the
        # same --random_seed gives the same pairs.
        self._split_seeds = {split["split"]: random.getrandbits(31)
                             for split in self.dataset_splits}
        super().generate_data(data_dir, tmp_dir, task_id)

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        """Yield {"first": A, "second": B, "random_next": bool} sentence pairs."""
        documents, current = [], []
        for line in self.generate_lines(data_dir, tmp_dir, dataset_split):
            line = line.strip()
            if line:
                current.append(line)
            elif current:
                documents.append(current)
                current = []
        if current:
            documents.append(current)
        all_lines = [line for document in documents for line in document]
        if not any(len(document) > 1 for document in documents):
            raise errors.UserError(
                "%s: the %s text has no two consecutive lines to pair; give at least two "
                "sentences, one a line" % (self.name, dataset_split))
        rng = random.Random(self._split_seed(dataset_split))
        position = 0
        for document in documents:
            for i in range(len(document) - 1):
                second, random_next = document[i + 1], False
                next_index = position + i + 1
                if len(all_lines) > 2 and rng.random() < self.random_next_fraction:
                    index = rng.randrange(len(all_lines) - 2)
                    # Skip the first line and its true successor.
                    for taken in sorted((position + i, next_index)):
                        if index >= taken:
                            index += 1
                    second, random_next = all_lines[index], True
                yield {"first": document[i], "second": second, "random_next": random_next}
            position += len(document)

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split):
        """{"inputs", "input_type_ids", "next_sentence_label"} id lists (see module doc)."""
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        for token in SPECIAL_TOKENS:
            expected = SPECIAL_TOKENS.index(token) + CLS_ID
            if encoder.all_subtoken_strings[expected] != token + "_":
                raise ValueError("vocabulary %s does not hold %s at id %d; delete it and rerun "
                                 "t2t-datagen" % (self.vocab_filename, token, expected))
        progress = Progress("%s %s pairs" % (self.name, dataset_split), unit="pairs")
        truncated = random_next = 0
        for sample in self.generate_samples(data_dir, tmp_dir, dataset_split):
            first, second = encoder.encode(sample["first"]), encoder.encode(sample["second"])
            ids, type_ids = pack_segments([first, second], self.max_seq_length)
            truncated += len(ids) < len(first) + len(second) + 3
            random_next += sample["random_next"]
            progress.update(1)
            yield {"inputs": ids, "input_type_ids": type_ids,
                   "next_sentence_label": [int(sample["random_next"])]}
        progress.done(truncated=truncated, random_next=random_next)

    def hparams(self, defaults, unused_model_hparams):
        p = defaults
        vocab_size = self._encoders["inputs"].vocab_size
        p.modality = {"inputs": ModalityType.SYMBOL, "targets": ModalityType.SYMBOL}
        p.vocab_size = {"inputs": vocab_size, "targets": vocab_size}

    def example_reading_spec(self):
        data_fields = {"inputs": tf.io.VarLenFeature(tf.int64),
                       "input_type_ids": tf.io.VarLenFeature(tf.int64),
                       "next_sentence_label": tf.io.FixedLenFeature([1], tf.int64)}
        return data_fields, None

    # -- Masking while reading -------------------------------------------------
    def mask_example(self, example, epoch=0):
        """Masked "inputs" and "targets" for one decoded example of this problem."""
        vocab_size = self._encoders["inputs"].vocab_size
        ids = example["inputs"]
        base_seed = tf.stack([tf.constant(self.masking_seed, tf.int64),
                              tf.cast(epoch, tf.int64)])
        example = dict(example)
        example["inputs"], example["targets"] = mask_ids(
            ids, _seed_from_ids(ids, base_seed), vocab_size, mask_rate=self.mask_rate,
            mask_token_fraction=self.mask_token_fraction,
            random_token_fraction=self.random_token_fraction)
        return example

    def dataset(self, mode, *args, new_masks_each_epoch=False, **kwargs):
        """`Problem.dataset`, masked (see the module doc).

        With new_masks_each_epoch the dataset repeats forever and epoch e gets masks
        seeded with e (`input_fn` sets it when it would repeat); otherwise one pass
        with the masks of epoch 0, the same on every read.
        """
        base = super().dataset(mode, *args, **kwargs)
        if not new_masks_each_epoch:
            return base.map(self.mask_example, num_parallel_calls=tf.data.AUTOTUNE)
        logging.info("%s: new masks in every epoch", self.name)
        return tf.data.Dataset.counter().flat_map(
            lambda epoch: base.map(lambda ex: self.mask_example(ex, epoch),
                                   num_parallel_calls=tf.data.AUTOTUNE))

    def input_fn(self, mode, hparams, data_dir=None, params=None, config=None,
                 force_repeat=False, prevent_repeat=False, dataset_kwargs=None):
        repeats = (force_repeat or mode == _TRAIN) and not prevent_repeat
        dataset_kwargs = dict(dataset_kwargs or {})
        dataset_kwargs.setdefault("new_masks_each_epoch", repeats)
        return super().input_fn(mode, hparams, data_dir=data_dir, params=params,
                                config=config, force_repeat=force_repeat,
                                prevent_repeat=prevent_repeat, dataset_kwargs=dataset_kwargs)


@registry.register_problem
class MaskedLmTmpdir(MaskedLmProblem):
    """Masked-LM pretraining on your own text: <tmp_dir>/train.txt and <tmp_dir>/dev.txt.

    One sentence a line; a blank line ends a document.
    """
    FILES = {spaces.DatasetSplit.TRAIN: "train.txt", spaces.DatasetSplit.EVAL: "dev.txt"}

    @property
    def dataset_splits(self):
        return [{"split": spaces.DatasetSplit.TRAIN, "shards": 10},
                {"split": spaces.DatasetSplit.EVAL, "shards": 1}]

    def generate_lines(self, data_dir, tmp_dir, dataset_split):
        del data_dir
        if not tmp_dir:
            raise errors.UserError("%s reads train.txt and dev.txt from --tmp_dir; pass "
                                   "--tmp_dir" % self.name)
        path = os.path.join(tmp_dir, self.FILES[dataset_split])
        if not tf.io.gfile.exists(path):
            raise errors.UserError("%s: %s is missing; put one sentence a line there (or "
                                   "pass the folder that holds it as --tmp_dir)"
                                   % (self.name, path))
        return text2text.txt_line_iterator(path)
