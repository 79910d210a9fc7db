"""Utilities for data generators: tf.Example files, sharding, shuffling, packing, vocabs.

The names and signatures are Tensor2Tensor 1.15.7's `generator_utils`, so ported code
keeps working after `tensor2tensor.data_generators` -> `t2t.problems`:

    paths = train_data_filenames("my_problem", "/data", 2)
    # -> ["/data/my_problem-train-00000-of-00002", "/data/my_problem-train-00001-of-00002"]
    generate_files(({"inputs": [4, 5, 1], "targets": [6, 1]} for _ in range(10)), paths)
    # -> 5 tf.train.Examples per file, written round-robin, renamed into place when complete
    read_records(paths[0])[0]  # -> serialized tf.train.Example bytes

Additions (not in T2T): `atomic_write` / `atomic_output_path` (write under a temporary
name, rename when complete), `random_seed` / `rng` for `shuffle_dataset`, and the safe
archive extractors `safe_extract_tar`, `safe_extract_zip`, `maybe_extract`.
Downloads and extraction live in `t2t.core.download`, re-exported here.
"""
import contextlib
import math
import numbers
import os
import random
import re
import tempfile
import time

import numpy as np
import tensorflow as tf
from absl import logging

from t2t.core.atomic_files import (  # noqa: F401  (re-exported API)
    INCOMPLETE_SUFFIX, atomic_output_path, atomic_write,
    is_remote_path, make_dirs, path_exists, remove_path, remove_stale_temp_files)
from t2t.core.download import (  # noqa: F401  (re-exported API)
    DownloadError, UnsafeArchiveError, gunzip_file, maybe_download,
    maybe_download_from_drive, maybe_extract, safe_extract_tar, safe_extract_zip)
from t2t.core.progress import Progress
from t2t.data.packing import (  # noqa: F401  (T2T exposed its packers here)
    INDEX_DTYPE, SequenceDatasetPacker, _pack_with_custom_ops, pack_dataset)
from t2t.encoders import text_encoder, text_lines
from t2t.data import shard_check

UNSHUFFLED_SUFFIX = "-unshuffled"
_SHARD_RE = re.compile(r"-\d{5}-of-\d{5}$")


# ---------------------------------------------------------------------------------------
# tf.train.Example


def _feature(key, value):
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (str, bytes, numbers.Number, np.generic)):
        value = [value]  # A scalar is a one-element list.
    value = list(value)
    if not value:
        raise ValueError("to_example: empty generated field %r; drop the feature or give it "
                         "at least one value" % (key,))
    first = value[0]
    try:
        if isinstance(first, (bool, numbers.Integral, np.integer, np.bool_)):
            # protobuf 7 rejects bools in an Int64List: True/False are written as 1/0.
            value = [int(v) if isinstance(v, (bool, np.bool_)) else v for v in value]
            return tf.train.Feature(int64_list=tf.train.Int64List(value=value))
        if isinstance(first, (numbers.Real, np.floating)):
            return tf.train.Feature(float_list=tf.train.FloatList(value=value))
        if isinstance(first, (str, bytes)):
            value = [v.encode("utf-8") if isinstance(v, str) else v for v in value]
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=value))
    except (TypeError, ValueError) as error:
        raise ValueError("to_example: feature %r mixes value types (%s); give one type per "
                         "feature" % (key, str(error).splitlines()[0]))
    raise ValueError("to_example: value for %r has unsupported type %s; use int, float, str "
                     "or bytes (or lists of one of them)" % (key, type(first).__name__))


def to_example(dictionary):
    """Build a tf.train.Example from {feature name: list of int / float / str / bytes}.

        to_example({"inputs": [4, 5, 1], "score": [0.5], "text": ["hi"]})
        # inputs -> int64_list [4, 5, 1]; score -> float_list [0.5]; text -> bytes_list [b"hi"]

    A scalar counts as a one-element list; numpy arrays and numpy scalars are accepted.
    """
    features = {key: _feature(key, value) for key, value in dictionary.items()}
    return tf.train.Example(features=tf.train.Features(feature=features))


# ---------------------------------------------------------------------------------------
# File names


def sharded_name(base_name, shard, total_shards):
    """`sharded_name("p-train", 3, 10)` -> `"p-train-00003-of-00010"`."""
    return "%s-%.5d-of-%.5d" % (base_name, shard, total_shards)


def shard_filepath(fname, num_shards):
    """`shard_filepath("p-dev", 2)` -> `["p-dev-00000-of-00002", "p-dev-00001-of-00002"]`."""
    return [sharded_name(fname, shard, num_shards) for shard in range(num_shards)]


def _data_filenames(output_name, output_dir, num_shards):
    return [os.path.join(output_dir, fname) for fname in shard_filepath(output_name, num_shards)]


def train_data_filenames(problem, output_dir, num_shards):
    """`train_data_filenames("p", "/d", 1)` -> `["/d/p-train-00000-of-00001"]`."""
    return _data_filenames(problem + "-train", output_dir, num_shards)


def dev_data_filenames(problem, output_dir, num_shards):
    return _data_filenames(problem + "-dev", output_dir, num_shards)


def test_data_filenames(problem, output_dir, num_shards):
    return _data_filenames(problem + "-test", output_dir, num_shards)


def combined_data_filenames(problem, output_dir, num_training_shards):
    """Train shards, then one dev and one test file (as T2T)."""
    return (train_data_filenames(problem, output_dir, num_training_shards)
            + dev_data_filenames(problem, output_dir, 1)
            + test_data_filenames(problem, output_dir, 1))


def _shuffled_name(path):
    """`/d/p-train-unshuffled-00000-of-00001` -> `/d/p-train-00000-of-00001`."""
    directory, base = os.path.split(path)
    return os.path.join(directory, base.replace(UNSHUFFLED_SUFFIX, ""))


def outputs_exist(filenames):
    """The first of `filenames` whose shuffled version exists, else None (as T2T)."""
    for filename in filenames:
        shuffled = _shuffled_name(filename)
        if path_exists(shuffled):
            return shuffled
    return None


def _all_outputs_done(filenames):
    # Every shard is there, either as written or already shuffled: a crash between the
    # renames of two shards (or during shuffling) must not count as "done".
    return all(path_exists(f) or path_exists(_shuffled_name(f)) for f in filenames)


def _files_description(filenames):
    base = os.path.basename(filenames[0])
    return "%s (%d file%s)" % (_SHARD_RE.sub("", base), len(filenames),
                               "" if len(filenames) == 1 else "s")


def _total_megabytes(filenames):
    return sum(os.path.getsize(f) for f in filenames if os.path.exists(f)) / 1e6


# ---------------------------------------------------------------------------------------
# Writing, reading and shuffling TFRecord files


# A limit on every generate_files call made inside `max_cases_scope` (t2t-datagen's
# --max_cases); problems call generate_files deep inside generate_data with no way to pass it.
_MAX_CASES_SCOPE = []


@contextlib.contextmanager
def max_cases_scope(max_cases):
    """Within the block, every `generate_files` call writes at most `max_cases` examples.

        with max_cases_scope(100):
            problem.generate_data(data_dir, tmp_dir)   # each split capped at 100 examples

    A call's own smaller `max_cases` wins; 0 or None means no limit.
    """
    _MAX_CASES_SCOPE.append(max_cases or 0)
    try:
        yield
    finally:
        _MAX_CASES_SCOPE.pop()


def _effective_max_cases(max_cases):
    limits = [m for m in [max_cases or 0] + _MAX_CASES_SCOPE if m]
    return min(limits) if limits else None


def generate_files(generator, output_filenames, max_cases=None, cycle_every_n=1):
    """Write the generator's dicts as tf.train.Examples, round-robin over the output files.

    Every file is written under a temporary name and renamed only once all of them are
    complete, so an interrupted run leaves no file under a final name and a rerun starts
    afresh. Skipped (and logged) when every output, or its shuffled version, exists.

        generate_files(iter([{"targets": [2, 1]}, {"targets": [3, 1]}, {"targets": [4, 1]}]),
                       ["/d/p-train-00000-of-00002", "/d/p-train-00001-of-00002"])
        # file 0 holds examples 1 and 3, file 1 holds example 2

    Args:
      generator: yields {feature: list of int/float/str} dicts (or serialized
        tf.train.Example bytes); `None`s are skipped.
      output_filenames: the shard paths.
      max_cases: stop after this many examples (None or 0: no limit).
      cycle_every_n: how many consecutive examples go to a shard before moving on.
    """
    if not output_filenames:
        raise ValueError("generate_files: output_filenames is empty; pass at least one path")
    if cycle_every_n < 1:
        raise ValueError("generate_files: cycle_every_n=%r must be >= 1" % (cycle_every_n,))
    if _all_outputs_done(output_filenames):
        logging.info("Skipping generator because output files exist: %s",
                     _files_description(output_filenames))
        return
    max_cases = _effective_max_cases(max_cases)
    remove_stale_temp_files(output_filenames)
    num_shards = len(output_filenames)
    progress = Progress("generate_files %s" % _files_description(output_filenames),
                        unit="examples", total=max_cases or None)
    count, shard = 0, 0
    shard_counts = [0] * num_shards
    with contextlib.ExitStack() as stack:
        # Exits run in reverse: writers close first, then every temp file is renamed
        # (or, on an exception, removed).
        temp_paths = [stack.enter_context(atomic_output_path(f)) for f in output_filenames]
        writers = [stack.enter_context(tf.io.TFRecordWriter(p)) for p in temp_paths]
        for case in generator:
            if case is None:
                continue
            # A case may come serialized already (bytes of a tf.train.Example). Deterministic:
            # map entries in key order (upb's order varies between processes).
            writers[shard].write(case if isinstance(case, bytes) else
                                 to_example(case).SerializeToString(deterministic=True))
            shard_counts[shard] += 1
            count += 1
            progress.update(1)
            if count % cycle_every_n == 0:
                shard = (shard + 1) % num_shards
            if max_cases and count >= max_cases:
                break  # Checked after writing, so no extra case is drawn from the generator.
    for path, shard_count in zip(output_filenames, shard_counts):
        shard_check.record_shard(path, shard_count)  # Readers check the shard against it.
    progress.done(files=num_shards, MB=_total_megabytes(output_filenames))


def generate_files_distributed(generator, output_name, output_dir, num_shards=1,
                               max_cases=None, task_id=0):
    """`generate_files` for one task of many: writes only shard `task_id`; returns its path.

        generate_files_distributed(gen, "p-train", "/d", num_shards=4, task_id=2)
        -> "/d/p-train-00002-of-00004"
    """
    if not 0 <= task_id < num_shards:
        raise ValueError("generate_files_distributed: task_id=%d must be in [0, %d)"
                         % (task_id, num_shards))
    output_file = os.path.join(output_dir, sharded_name(output_name, task_id, num_shards))
    generate_files(generator, [output_file], max_cases=max_cases)
    return output_file


def _record_iterator(filename, gzipped=False):
    # The C++ record reader is ~60x faster than iterating a TFRecordDataset eagerly in
    # Python; its deprecation notice is irrelevant here, hence silenced.
    from tensorflow.python.util import deprecation

    options = tf.io.TFRecordOptions(compression_type="GZIP") if gzipped else None
    with deprecation.silence():
        return tf.compat.v1.io.tf_record_iterator(filename, options=options)


def read_records(filename):
    """All serialized records of one TFRecord file, as a list of bytes."""
    return list(_record_iterator(filename))


def write_records(records, out_filename):
    """Write serialized records to `out_filename` (atomically); returns the count."""
    count = 0
    with atomic_output_path(out_filename) as tmp:
        with tf.io.TFRecordWriter(tmp) as writer:
            for record in records:
                writer.write(record)
                count += 1
    shard_check.record_shard(out_filename, count)
    return count


def _shuffle_single(fname, extra_fn=None, rng=None):
    """Shuffle one `-unshuffled` file into its final name, then delete it."""
    records = read_records(fname)
    (rng or random).shuffle(records)
    if extra_fn is not None:
        records = extra_fn(records)
    count = write_records(records, _shuffled_name(fname))
    remove_path(fname)
    shard_check.remove_record(fname)
    return count


def shuffle_dataset(filenames, extra_fn=None, random_seed=None, rng=None):
    """Shuffle each `*-unshuffled*` file in memory and write it without the suffix.

    `extra_fn(records) -> records` runs after the shuffle (e.g. packing). Every file gets
    its own seed: from `random_seed` and the file's name if given, else drawn in order from
    `rng` (a `random.Random`), else from the global `random` state as T2T did. A file whose
    shuffled output exists is skipped, so a resumed run writes the same bytes.

        shuffle_dataset(["/d/p-train-unshuffled-00000-of-00001"], random_seed=1)
        # /d/p-train-00000-of-00001 written, /d/p-train-unshuffled-00000-of-00001 removed
    """
    if random_seed is not None and rng is not None:
        raise ValueError("shuffle_dataset: pass random_seed or rng, not both")
    source = rng if rng is not None else random
    start = time.monotonic()
    shuffled_files, shuffled_records = 0, 0
    for fname in filenames:
        out_fname = _shuffled_name(fname)
        # Draw the seed before any skip so that later files get the same seed on a resume.
        if random_seed is not None:
            file_rng = random.Random("%s/%s" % (random_seed, os.path.basename(out_fname)))
        else:
            file_rng = random.Random(source.getrandbits(64))
        if out_fname == fname:
            logging.info("shuffle_dataset: %s has no %s suffix, leaving it as it is",
                         fname, UNSHUFFLED_SUFFIX)
            continue
        if path_exists(out_fname):
            remove_path(fname)  # A crash may have come between the write and the delete.
            shard_check.remove_record(fname)
            logging.info("shuffle_dataset: %s exists, skipping", out_fname)
            continue
        if not path_exists(fname):
            raise ValueError("shuffle_dataset: %s does not exist; run generate_files first"
                             % fname)
        shuffled_records += _shuffle_single(fname, extra_fn=extra_fn, rng=file_rng)
        shuffled_files += 1
    logging.info("shuffle_dataset done: {:,} files, {:,} records written, {:.1f} s".format(
        shuffled_files, shuffled_records, time.monotonic() - start))


def generate_dataset_and_shuffle(train_gen, train_paths, dev_gen, dev_paths, shuffle=True):
    """`generate_files` for train and dev, then (optionally) `shuffle_dataset` on both."""
    generate_files(train_gen, train_paths)
    generate_files(dev_gen, dev_paths)
    if shuffle:
        shuffle_dataset(train_paths + dev_paths)


# ---------------------------------------------------------------------------------------
# Offline packing


class SequencePacker:
    """Concatenate sequences, `spacing` zeros apart, numbering the segments from 1.

        packer = SequencePacker([5, 6, 1], spacing=2)
        packer.add([7, 1])
        packer.to_dict() -> {"targets":              [5, 6, 1, 0, 0, 7, 1],
                             "targets_segmentation": [1, 1, 1, 0, 0, 2, 2],
                             "targets_position":     [0, 1, 2, 0, 0, 0, 1]}
    """

    def __init__(self, first_sequence, spacing=2):
        self._spacing = spacing
        self._ids = list(first_sequence)
        self._segmentation = [1] * len(self._ids)
        self._position = list(range(len(self._ids)))
        # A counter, not "last segment + 1": after an empty sequence the last entry is
        # spacing (0), and T2T's rule would reuse segment 1.
        self._num_segments = 1

    def add(self, ids):
        ids = list(ids)
        gap = [0] * self._spacing
        self._num_segments += 1
        self._ids.extend(gap + ids)
        self._segmentation.extend(gap + [self._num_segments] * len(ids))
        self._position.extend(gap + list(range(len(ids))))

    def can_fit(self, ids, packed_length):
        return len(self._ids) + self._spacing + len(ids) <= packed_length

    def to_dict(self):
        # T2T also stored a dummy "inputs": [0] here; PAD is never stored (conventions).
        return {"targets": self._ids,
                "targets_segmentation": self._segmentation,
                "targets_position": self._position}


class SequencePairPacker:
    """Pack (inputs, targets) pairs: both sides are packed in step with the same segments."""

    def __init__(self, first_sequence_pair, spacing=2):
        self._inputs = SequencePacker(first_sequence_pair[0], spacing)
        self._targets = SequencePacker(first_sequence_pair[1], spacing)

    def add(self, pair):
        self._inputs.add(pair[0])
        self._targets.add(pair[1])

    def can_fit(self, pair, packed_length):
        return (self._inputs.can_fit(pair[0], packed_length)
                and self._targets.can_fit(pair[1], packed_length))

    def to_dict(self):
        packed = self._targets.to_dict()
        inputs = self._inputs.to_dict()
        packed["inputs"] = inputs["targets"]
        packed["inputs_segmentation"] = inputs["targets_segmentation"]
        packed["inputs_position"] = inputs["targets_position"]
        return packed


def pack_examples(examples, has_inputs, packed_length=256, spacing=2, queue_size=10,
                  chop_long_sequences=False):
    """Pack short examples into examples of up to `packed_length` ids (first fit).

    Each example goes into the first of up to `queue_size` open packed examples with room
    for it (plus `spacing` zeros); if none has room, the oldest is emitted when the queue
    is full and a new one is opened. A sequence longer than `packed_length` becomes a packed
    example of its own, or, with `chop_long_sequences` (targets only), is cut into
    `packed_length` pieces. Other features of the input examples are dropped.

        list(pack_examples([{"targets": [3, 1]}, {"targets": [4, 5, 1]}], False,
                           packed_length=8))
        -> [{"targets": [3, 1, 0, 0, 4, 5, 1], "targets_segmentation": [1, 1, 0, 0, 2, 2, 2],
             "targets_position": [0, 1, 0, 0, 0, 1, 2]}]

    With `has_inputs`, `inputs` is packed the same way, adding `inputs_segmentation` and
    `inputs_position`; a pair joins a packed example only if both sides fit.
    """
    if chop_long_sequences and has_inputs:
        raise ValueError("pack_examples: chop_long_sequences=True works only for targets-only "
                         "examples; pass has_inputs=False or chop_long_sequences=False")
    packer_class = SequencePairPacker if has_inputs else SequencePacker
    open_packs = []
    for example in examples:
        if has_inputs:
            item = (list(example["inputs"]), list(example["targets"]))
        else:
            item = list(example["targets"])
        if chop_long_sequences and len(item) > packed_length:
            num_pieces = len(item) // packed_length
            for piece in range(num_pieces):
                chunk = item[piece * packed_length:(piece + 1) * packed_length]
                yield packer_class(chunk, spacing).to_dict()
            item = item[num_pieces * packed_length:]
            if not item:
                continue  # T2T packed the empty remainder into an empty example.
        for pack in open_packs:
            if pack.can_fit(item, packed_length):
                pack.add(item)
                break
        else:
            if len(open_packs) == queue_size:
                yield open_packs.pop(0).to_dict()
            open_packs.append(packer_class(item, spacing))
    for pack in open_packs:
        yield pack.to_dict()


def random_deinterleave(text, separator_symbol="X"):
    """A fill-in-the-blanks pair from `text`: its words cut into runs at random points, the
    runs dealt alternately to two strings, each run announced by `separator_symbol`.

        random_deinterleave("The quick brown fox jumps over the lazy dog.")
        # e.g. ("X quick brown X the lazy X", "The X fox jumps over X dog.")

    The number of cuts is exp(uniform(0, log(words))), drawn from Python's `random` (as
    T2T); swapping the two strings gives another example of the same task. A text of one
    word (or none) comes back as (text, "").
    """
    words = text.strip().split(" ")
    if len(words) <= 1:
        return text, ""
    starts = {0}
    for _ in range(int(math.exp(random.uniform(0, math.log(len(words)))))):
        starts.add(random.randint(1, len(words) - 1))
    sides = ([], [])
    side = random.randint(0, 1)
    for index, word in enumerate(words):
        if index in starts:
            sides[side].append(separator_symbol)
            side = 1 - side
        sides[side].append(word)
    return " ".join(sides[0]), " ".join(sides[1])


# ---------------------------------------------------------------------------------------
# Reading examples back


def make_tmp_dir(suffix="", prefix="tmp", dir=None):  # noqa: A002  (T2T's argument name)
    """A new, empty temporary directory (inside `dir` if given); returns its path."""
    if dir is not None:
        make_dirs(dir)
    return tempfile.mkdtemp(suffix, prefix, dir)


def _rows(value, num_rows):
    """Split a batched parse result into per-example numpy arrays."""
    if isinstance(value, tf.SparseTensor):
        rows = value.indices.numpy()[:, 0]
        values = value.values.numpy()
        bounds = np.searchsorted(rows, np.arange(num_rows + 1))
        return [values[bounds[i]:bounds[i + 1]] for i in range(num_rows)]
    if isinstance(value, tf.RaggedTensor):
        return [value[i].numpy() for i in range(num_rows)]
    return list(value.numpy())


def _parse_batch(records, example_spec):
    parsed = tf.io.parse_example(tf.constant(records), example_spec)
    columns = {key: _rows(value, len(records)) for key, value in parsed.items()}
    for i in range(len(records)):
        yield {key: column[i] for key, column in columns.items()}


def tfrecord_iterator(filenames, gzipped=False, example_spec=None):
    """Yield the records of TFRecord files: serialized bytes, or dicts if `example_spec`.

    With `example_spec` ({name: tf.io.VarLenFeature / FixedLenFeature / ...}) each record
    is parsed; a VarLen feature comes back as a dense 1-D numpy array (not a sparse value).

        next(tfrecord_iterator(["/d/p-train-00000-of-00001"]))        -> b"\\n\\x1b\\n..."
        next(tfrecord_iterator(paths, example_spec={"targets": tf.io.VarLenFeature(tf.int64)}))
        -> {"targets": array([6, 1])}
    """
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    batch = []
    for filename in filenames:
        for record in _record_iterator(os.fspath(filename), gzipped=gzipped):
            if example_spec is None:
                yield record
                continue
            batch.append(record)
            if len(batch) == 1000:  # Parse in batches: one TF op call per record is slow.
                yield from _parse_batch(batch, example_spec)
                batch = []
    if batch:
        yield from _parse_batch(batch, example_spec)


def tfrecord_iterator_for_problem(problem, data_dir, dataset_split="train"):
    """Parsed examples of a Problem's files on disk, for one split ("train", "eval", ...)."""
    filenames = sorted(tf.io.gfile.glob(problem.filepattern(data_dir, mode=dataset_split)))
    if not filenames:
        raise ValueError("tfrecord_iterator_for_problem: no files match %s; run t2t-datagen "
                         "for %s first" % (problem.filepattern(data_dir, mode=dataset_split),
                                           getattr(problem, "name", problem)))
    example_spec = problem.example_reading_spec()[0]
    return tfrecord_iterator(filenames, example_spec=example_spec)


# ---------------------------------------------------------------------------------------
# Vocabularies


def get_or_generate_vocab_inner(data_dir, vocab_filename, vocab_size, generator,
                                max_subtoken_length=None, reserved_tokens=None):
    """Load `data_dir/vocab_filename`, or build it from the generator's strings and store it.

    With `data_dir` or `vocab_filename` None the vocab is built and not stored.

        vocab = get_or_generate_vocab_inner("/d", "vocab.p.8192.subwords", 8192,
                                            iter(["hello world", "hello there"]))
        # first call: builds, stores /d/vocab.p.8192.subwords; later calls: loads it
    """
    encoder_class = text_encoder.SubwordTextEncoder
    vocab_filepath = None
    if data_dir and vocab_filename:
        vocab_filepath = os.path.join(data_dir, vocab_filename)
        if path_exists(vocab_filepath):
            logging.info("Found vocab file: %s", vocab_filepath)
            return encoder_class(vocab_filepath)
    logging.info("Generating vocab file: %s", vocab_filepath)
    start = time.monotonic()
    vocab = encoder_class.build_from_generator(
        generator, vocab_size, max_subtoken_length=max_subtoken_length,
        reserved_tokens=reserved_tokens)
    if vocab_filepath:
        make_dirs(data_dir)
        with atomic_output_path(vocab_filepath) as tmp:
            vocab.store_to_file(tmp)
    logging.info("Generated vocab of size %d (target %d) in %.1f s%s", vocab.vocab_size,
                 vocab_size, time.monotonic() - start,
                 ", stored to %s" % vocab_filepath if vocab_filepath else "")
    return vocab


def _lines_within_budget(filepath, file_byte_budget):
    """T2T's sampling: spread the budget over the file by skipping lines in between.

    For a file of `size` bytes, every (size / budget / 2 + 1)-th line is taken (stripped)
    until `file_byte_budget` characters are collected.
    """
    budget = file_byte_budget
    skip_between = int(os.path.getsize(filepath) / file_byte_budget / 2)
    skipped = 0
    # Universal newlines; undecodable bytes replaced as T2T; "-sig": a BOM is no token.
    with open(filepath, encoding="utf-8-sig", errors="replace") as source_file:
        for line in source_file:
            if skipped < skip_between:
                skipped += 1
                continue
            if budget <= 0:
                break
            line = line.strip()
            budget -= len(line)
            skipped = 0
            yield line


def generate_lines_for_vocab(tmp_dir, sources, file_byte_budget=1e6):
    """Yield sample lines from the files of `sources`, downloading and extracting as needed.

    `sources` is a list of `[url, [file inside the archive, ...]]`, as T2T's translate
    problems define them; a `.gz` file inside the archive is gunzipped too.

        sources = [["http://host/corpus.tgz", ["corpus/train.en", "corpus/train.de"]]]
        next(generate_lines_for_vocab("/tmp/t2t", sources)) -> "first sampled line"
    """
    logging.info("Generating vocab from: %s", sources)
    for source in sources:
        url = source[0]
        filename = os.path.basename(url)
        compressed_file = maybe_download(tmp_dir, filename, url)
        for lang_file in source[1]:
            logging.info("Reading file: %s", lang_file)
            filepath = os.path.join(tmp_dir, lang_file)
            if not os.path.exists(filepath):
                maybe_extract(compressed_file, tmp_dir)
            if lang_file.endswith(".gz"):
                new_filepath = os.path.join(tmp_dir, lang_file[:-len(".gz")])
                gunzip_file(filepath, new_filepath)
                filepath = new_filepath
            if not os.path.exists(filepath):
                raise ValueError("generate_lines_for_vocab: %s is not in %s; check the file "
                                 "names listed for %s" % (lang_file, filename, url))
            yield from _lines_within_budget(filepath, file_byte_budget)


def get_or_generate_vocab(data_dir, tmp_dir, vocab_filename, vocab_size, sources,
                          file_byte_budget=1e6, max_subtoken_length=None):
    """Load or build a subword vocab from (a byte budget of) each file of `sources`.

        sources = [["http://host/corpus.tgz", ["corpus/train.en", "corpus/train.de"]]]
        get_or_generate_vocab("/d", "/tmp/t2t", "vocab.ende.8192", 8192, sources)
        # -> SubwordTextEncoder; /d/vocab.ende.8192 stored on the first call
    """
    vocab_generator = generate_lines_for_vocab(tmp_dir, sources, file_byte_budget)
    return get_or_generate_vocab_inner(data_dir, vocab_filename, vocab_size, vocab_generator,
                                       max_subtoken_length)


def get_or_generate_tabbed_vocab(data_dir, tmp_dir, source_filename, index, vocab_filename,
                                 vocab_size):
    r"""Load or build a vocab from column `index` (0 source, 1 target) of a tabbed file.

        # tmp_dir/pairs.tsv: "hello\thallo\n"
        get_or_generate_tabbed_vocab("/d", "/tmp", "pairs.tsv", 1, "vocab.de", 256)
        # builds from "hallo"
    """
    def generate():
        filepath = os.path.join(tmp_dir, source_filename)
        logging.info("Generating vocab from %s", filepath)
        for line in text_lines.read_lines(filepath):
            line = line.strip()
            if line and "\t" in line:
                yield line.split("\t", 1)[index].strip()

    return get_or_generate_vocab_inner(data_dir, vocab_filename, vocab_size, generate())


def get_or_generate_txt_vocab(data_dir, vocab_filename, vocab_size, filepatterns):
    """Load or build a vocab from text files with one example per line (globs allowed).

        get_or_generate_txt_vocab("/d", "vocab.txt.256", 256, "/tmp/corpus/*.txt")
    """
    if isinstance(filepatterns, str):
        filepatterns = [filepatterns]

    def generate():
        logging.info("Generating vocab from %s", filepatterns)
        for filepattern in filepatterns:
            # Sorted: glob order is file-system dependent, and the vocab should not be.
            for filename in sorted(tf.io.gfile.glob(filepattern)):
                for line in text_lines.read_lines(filename):
                    yield line.strip()

    return get_or_generate_vocab_inner(data_dir, vocab_filename, vocab_size, generate())
